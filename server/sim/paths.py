"""Monsters' path finding: python-tcod's A*, with its graphs kept between calls.

``tcod.path.path2d`` builds a new graph and path finder on every call, which
costs about 60 µs of Python before the search itself (about 110 µs a call in
all on a 15×20 window). A monster walking towards its target asks for a path
every step, in a window cropped around it and its goal, and windows of the
same shape come back tick after tick. :class:`PathFinders` keeps one cost
array, graph and path finder per window shape, writes the new costs into the
array in place and clears the finder, and so gives the same path as
``path2d`` (same graph, same search from a cleared frontier) for about 43 µs
when the shape was kept. Each kept shape holds six ``int32`` values per
cell (24 bytes: a few kB for a hunter's window), and the shapes kept hold
at most :data:`KEPT_CELLS` cells between them (3.1 MB), however large the
windows (issue 48: 128 shapes of a one-process game's windows held 7 MB).
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import tcod.path
from numpy.typing import NDArray

CARDINAL_COST = 2
"""Cost of a cardinal step (relative to a diagonal's)."""
DIAGONAL_COST = 3
"""Cost of a diagonal step: a little more than a cardinal one, so paths
prefer straight lines among equally short ones."""
_UNREACHED = np.iinfo(np.int32).max
KEPT_SHAPES = 128
"""Window shapes whose graph is kept (the least recently used goes first)."""
KEPT_CELLS = 131_072
"""Cells of all the kept shapes together (the least recently used go first
until the rest fit). In a one-process game of 100 walking players on five
levels (``bench/levelmem.py``) 82.2% of searches found their shape kept with
only :data:`KEPT_SHAPES` bounding them, holding up to 329,000 cells, and
81.4% with this bound too."""


class _Finder:
    """A cost array of one shape, with a graph and a path finder over it."""

    def __init__(self, shape: tuple[int, int]) -> None:
        self.cost = np.zeros(shape, dtype=np.int32)
        # The graph refers to ``cost``'s memory: costs are written into it in place.
        graph = tcod.path.SimpleGraph(
            cost=self.cost, cardinal=CARDINAL_COST, diagonal=DIAGONAL_COST
        )
        self.finder = tcod.path.Pathfinder(graph)
        self.home = self.finder.traversal.copy()
        """The finder's traversal array as new: every cell pointing at itself."""
        self.cells = shape[0] * shape[1]


class PathFinders:
    """Graphs and path finders by window shape, reused between searches.

    The result of :meth:`first_step` depends only on its arguments, never on
    what was searched before, so keeping finders changes no game.
    """

    def __init__(self) -> None:
        self._finders: OrderedDict[tuple[int, int], _Finder] = OrderedDict()
        self.cells = 0
        """Cells of the kept shapes together (at most :data:`KEPT_CELLS`,
        but for one larger window, kept alone)."""

    @property
    def nbytes(self) -> int:
        """Bytes of the kept shapes' arrays (the cost, the finder's distance
        and traversal, the traversal as new; not python-tcod's own small
        objects): 24 a cell."""
        return sum(
            f.cost.nbytes + f.finder.distance.nbytes + f.finder.traversal.nbytes + f.home.nbytes
            for f in self._finders.values()
        )

    def first_step(
        self, cost: NDArray[np.integer], start: tuple[int, int], goal: tuple[int, int]
    ) -> tuple[int, int] | None:
        """The first step of :meth:`path`: ``(row, col)`` of the next cell,
        or None when ``goal`` cannot be reached or is ``start``.

        Raises:
            IndexError: ``start`` or ``goal`` lies outside the window.
        """
        path = self.path(cost, start, goal)
        return path[0] if path else None

    def path(
        self, cost: NDArray[np.integer], start: tuple[int, int], goal: tuple[int, int]
    ) -> list[tuple[int, int]]:
        """The cheapest path from ``start`` to ``goal``, ``start`` left out.

        What ``tcod.path.path2d(cost, start_points=[start],
        end_points=[goal], cardinal=2, diagonal=3)`` gives after its first
        point: moves into a cell cost its value times the step's cost, cells
        of 0 or less are walls, ``start`` itself counts as open.

        Args:
            cost: ``int[H, W]`` cost of entering each cell of the window,
                indexed ``[y, x]``; not changed.
            start: ``(row, col)`` in the window where the path begins.
            goal: ``(row, col)`` in the window where it ends.

        Returns:
            ``(row, col)`` of each cell to walk through, in order, ending at
            ``goal``; empty when ``goal`` cannot be reached or is ``start``.

        Raises:
            IndexError: ``start`` or ``goal`` lies outside the window.
        """
        shape = (int(cost.shape[0]), int(cost.shape[1]))
        for row, col in (start, goal):
            if not (0 <= row < shape[0] and 0 <= col < shape[1]):
                raise IndexError(f"point {(row, col)!r} is outside the window {shape!r}")
        finders = self._finders
        found = finders.get(shape)
        if found is None:
            found = finders[shape] = _Finder(shape)
            self.cells += found.cells
            while len(finders) > 1 and (len(finders) > KEPT_SHAPES or self.cells > KEPT_CELLS):
                self.cells -= finders.popitem(last=False)[1].cells
        else:
            finders.move_to_end(shape)
        np.copyto(found.cost, cost)
        found.cost[start] = 1  # as path2d: the start is always reachable
        finder = found.finder
        # Back to the state of a new finder: what Pathfinder.clear does, without
        # building the traversal array anew (about half of a search's cost).
        finder.distance[...] = _UNREACHED
        np.copyto(finder.traversal, found.home)
        finder.rebuild_frontier()
        finder.add_root(goal)
        path = finder.path_from(start)
        return [(int(row), int(col)) for row, col in path[1:].tolist()]
