"""Running, travel and auto-explore: which step the client takes next.

Three ways of moving many cells with one key, as roguelike players expect
(NetHack's run and travel, DCSS's auto-explore):

- **run** (Shift + a direction, or ``G`` then a direction): keep going that
  way; follow a corridor round its bends; stop at a fork, on entering a room
  from a corridor, next to something new (a door, stairs, an altar, a
  fountain, an item), when the way ahead is blocked and before it would
  enter a cell it has already been through (a loop);
- **travel** (``_``, then a cell chosen with the aiming cursor): walk the
  shortest known way there;
- **explore** (``A``): walk to the nearest known walkable cell next to
  unknown ones, again and again, until nothing reachable is left unknown.

All three stop when a monster that was not in view comes into view, when the
character is hurt, when it cannot move, and (the UI's part) when something
is logged or a key is pressed. Each step is one ordinary ``move`` command:
:class:`Walk` only decides the next direction from the client's model, the
server stays authoritative. Paths are found by python-tcod
(:func:`tcod.path.path2d`, costs 2 straight and 3 diagonal as the server's
monsters use) on the client's map memory: remembered walkable cells, closed
doors included (moving into one opens it), lava and monsters in view
excluded. Grids are ``[y, x]``; cells and directions are ``(x, y)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt
import tcod.path

from client.keymap import Cell, Direction
from client.model import UNKNOWN, GameModel

__all__ = [
    "FEATURES",
    "Step",
    "Walk",
    "frontier",
    "path_to",
    "walkable",
]

WalkKind = Literal["run", "travel", "explore"]

OPENS_ON_MOVE = frozenset({"door_closed"})
"""Terrain keys a move opens rather than enters (walkable for paths)."""
AVOIDED = frozenset({"lava"})
"""Terrain keys a path never enters (the server refuses the step)."""
FEATURES = frozenset({"door_closed", "door_open", "stairs_up", "stairs_down", "altar", "fountain"})
"""Terrain keys a run stops beside when one comes newly next to the character."""

STUCK_STEPS = 3
"""Steps in a row without moving after which a walk gives up."""

_NEIGHBOURS: tuple[Direction, ...] = (
    (-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1),
)  # fmt: skip


def _keys_lut(model: GameModel, keys: frozenset[str]) -> npt.NDArray[np.bool_]:
    """``bool[256]``: terrain codes whose key is in ``keys``."""
    lut = np.zeros(256, dtype=np.bool_)
    for code, entry in enumerate(model.terrain_table[:UNKNOWN]):
        if isinstance(entry, list) and entry and entry[0] in keys:
            lut[code] = True
    return lut


def walkable(model: GameModel) -> npt.NDArray[np.bool_]:
    """``bool[H, W]``: remembered cells a walk may step into (see the module docstring)."""
    known = model.known
    grid: npt.NDArray[np.bool_] = (model.passable() | _keys_lut(model, OPENS_ON_MOVE)[known]) & ~(
        _keys_lut(model, AVOIDED)[known]
    )
    return grid


def frontier(model: GameModel) -> npt.NDArray[np.bool_]:
    """``bool[H, W]``: walkable remembered cells with at least one unknown neighbour
    (the map's edge does not count as unknown)."""
    unknown = model.known == UNKNOWN
    padded = np.pad(unknown, 1, constant_values=False)
    h, w = unknown.shape
    near = np.zeros_like(unknown)
    for dx, dy in _NEIGHBOURS:
        near |= padded[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w]
    grid: npt.NDArray[np.bool_] = walkable(model) & near
    return grid


def _others(model: GameModel) -> set[Cell]:
    return {(a.x, a.y) for a in model.actors.values() if not a.is_self and a.id != model.player_id}


def path_to(model: GameModel, start: Cell, goals: list[Cell]) -> list[Cell]:
    """The shortest known way from ``start`` to the nearest of ``goals``.

    Args:
        model: The client's model (its map memory and the actors in view).
        start: Own cell ``(x, y)``.
        goals: Cells ``(x, y)`` on the map; a goal need not be walkable (the
            path then ends beside it).

    Returns:
        The cells entered, in order, ``start`` excluded; ``[]`` when no goal
        can be reached or ``start`` is one of them.
    """
    h, w = model.height, model.width
    goals = [g for g in goals if 0 <= g[0] < w and 0 <= g[1] < h]
    if not goals or not (0 <= start[0] < w and 0 <= start[1] < h):
        return []
    cost = walkable(model).astype(np.int32)
    for x, y in _others(model):
        if 0 <= x < w and 0 <= y < h:
            cost[y, x] = 0
    ends = [(y, x) for x, y in goals]
    found = tcod.path.path2d(
        cost, start_points=[(start[1], start[0])], end_points=ends, cardinal=2, diagonal=3
    )
    cells = [(int(x), int(y)) for y, x in found[1:]]
    if cells and not cost[cells[-1][1], cells[-1][0]]:
        cells.pop()  # a goal in a wall or under a monster: stop beside it
    return cells


@dataclass(frozen=True, slots=True)
class Step:
    """What a walk does next: move in ``direction``, or stop (``direction``
    None) saying ``why`` (``""`` when there is nothing to say, e.g. arrived)."""

    direction: Direction | None
    why: str = ""


@dataclass(slots=True)
class Walk:
    """One run, travel or exploration in progress.

    Create it with the model as it is when the key is pressed, then call
    :meth:`next_step` after each answered step.

    Attributes:
        kind: ``"run"``, ``"travel"`` or ``"explore"``.
        direction: a run's current direction.
        goal: a travel's target cell.
    """

    kind: WalkKind
    direction: Direction | None = None
    goal: Cell | None = None
    _seen: set[int] = field(default_factory=set)
    _hp: int = 0
    _last: Cell | None = None
    _stuck: int = 0
    _near: frozenset[Cell] = frozenset()
    _corridor: bool = False
    _visited: set[Cell] = field(default_factory=set)
    _steps: int = 0

    def start(self, model: GameModel) -> Walk:
        """Remember what is in view now (only newcomers stop the walk)."""
        self._seen = {a.id for a in model.actors.values() if not a.is_player and not a.is_self}
        self._hp = _hp(model)
        pos = model.position
        if pos is not None:
            self._near = self._features_near(model, pos)
            self._corridor = self._in_corridor(model, pos)
        return self

    def next_step(self, model: GameModel) -> Step:
        """The next step, or why the walk stops."""
        pos = model.position
        if pos is None or model.me.get("dead"):
            return Step(None)
        hp = _hp(model)
        if hp < self._hp:
            return Step(None, "You stop: you are hurt.")
        self._hp = hp
        newcomer = next(
            (
                a
                for a in sorted(model.actors.values(), key=lambda a: a.id)
                if not a.is_player and not a.is_self and a.id not in self._seen
            ),
            None,
        )
        if newcomer is not None:
            return Step(None, f"You stop: {model.display_name(newcomer)} comes into view.")
        if pos == self._last:
            self._stuck += 1
            if self._stuck >= STUCK_STEPS:
                return Step(None, "You stop: something is in the way.")
        else:
            self._stuck = 0
        self._last = pos
        self._visited.add(pos)
        first = self._steps == 0
        self._steps += 1
        if self.kind == "run":
            return self._run(model, pos, first)
        if self.kind == "travel":
            return self._travel(model, pos)
        return self._explore(model, pos)

    # the three kinds ----------------------------------------------------------

    def _travel(self, model: GameModel, pos: Cell) -> Step:
        if self.goal is None or pos == self.goal:
            return Step(None)
        path = path_to(model, pos, [self.goal])
        if not path:
            if max(abs(self.goal[0] - pos[0]), abs(self.goal[1] - pos[1])) <= 1:
                return Step(None)  # beside an unwalkable goal: as near as it gets
            return Step(None, "You know no way there.")
        return Step(_towards(pos, path[0]))

    def _explore(self, model: GameModel, pos: Cell) -> Step:
        edge = frontier(model)
        for x, y in self._visited:
            edge[y, x] = False
        ys, xs = np.nonzero(edge)
        path = path_to(model, pos, [(int(x), int(y)) for x, y in zip(xs, ys, strict=True)])
        if not path:
            return Step(None, "Nothing left to explore that you can reach.")
        return Step(_towards(pos, path[0]))

    def _run(self, model: GameModel, pos: Cell, first: bool) -> Step:
        d = self.direction
        if d is None:
            return Step(None)
        grid = walkable(model)
        others = _others(model)

        def free(cell: Cell) -> bool:
            x, y = cell
            return (
                0 <= x < model.width
                and 0 <= y < model.height
                and bool(grid[y, x])
                and cell not in others
                and cell not in self._visited  # a run never goes round a loop twice
            )

        near = self._features_near(model, pos)
        corridor = self._in_corridor(model, pos)
        was_corridor, self._corridor = self._corridor, corridor
        news, self._near = near - self._near, near
        ahead = (pos[0] + d[0], pos[1] + d[1])
        if first:
            return Step(d if free(ahead) else None)
        if news or model.objs.get(pos):
            return Step(None)  # something new beside us, or an item underfoot
        if was_corridor and not corridor:
            return Step(None)  # a corridor opens into a room or forks
        if free(ahead):
            return Step(d)
        if not corridor:
            return Step(None)
        back = (pos[0] - d[0], pos[1] - d[1])
        turns = [
            c
            for c in ((pos[0] + dx, pos[1] + dy) for dx, dy in _NEIGHBOURS)
            if free(c) and c != back
        ]
        if len(turns) > 1:  # a cell beside the one we came from is no way on
            turns = [c for c in turns if max(abs(c[0] - back[0]), abs(c[1] - back[1])) > 1]
        if len(turns) != 1:
            return Step(None)
        self.direction = _towards(pos, turns[0])
        return Step(self.direction)

    # helpers -----------------------------------------------------------------

    @staticmethod
    def _in_corridor(model: GameModel, pos: Cell) -> bool:
        """Whether ``pos`` lies in a corridor: no 2 x 2 block of walkable cells
        holds it (a room's cells all lie in one) and at most two of its
        straight neighbours are walkable (three or four make a fork)."""
        grid = walkable(model)
        x, y = pos
        h, w = grid.shape

        def at(cx: int, cy: int) -> bool:
            return 0 <= cx < w and 0 <= cy < h and bool(grid[cy, cx])

        for bx in (x - 1, x):
            for by in (y - 1, y):
                if at(bx, by) and at(bx + 1, by) and at(bx, by + 1) and at(bx + 1, by + 1):
                    return False
        return sum(at(x + dx, y + dy) for dx, dy in ((0, -1), (-1, 0), (1, 0), (0, 1))) <= 2

    @staticmethod
    def _features_near(model: GameModel, pos: Cell) -> frozenset[Cell]:
        """Cells next to ``pos`` holding a feature (FEATURES) or an item."""
        lut = _keys_lut(model, FEATURES)
        out = set()
        for dx, dy in _NEIGHBOURS:
            x, y = pos[0] + dx, pos[1] + dy
            if (
                0 <= x < model.width
                and 0 <= y < model.height
                and (lut[model.known[y, x]] or (x, y) in model.objs)
            ):
                out.add((x, y))
        return frozenset(out)


def _towards(pos: Cell, cell: Cell) -> Direction:
    return (int(np.sign(cell[0] - pos[0])), int(np.sign(cell[1] - pos[1])))


def _hp(model: GameModel) -> int:
    hp = model.me.get("hp")
    return hp if isinstance(hp, int) and not isinstance(hp, bool) else 0
