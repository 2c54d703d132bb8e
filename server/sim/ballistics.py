"""The projectile path: which cells a thrown item or a bolt flies through.

Sources:

* ``seeds/002_92d18de83818e397.txt`` ("Targeting"): the i-th cell visited is
  ``Cell(i) = i + A * ((floor((A - 1) / 2) + i * (B - 1)) // (A - 1))`` in a
  rectangle whose longer side (A cells) runs from the shooter to the target;
  an obstacle stops the projectile in the previous cell; a wand's bolt
  continues along the same line past the target.
* ``reference/ballistica.md``: the original's choice of the long ("major")
  axis, its step signs, ties and edge cases.
* ``RULES.md``: a projectile visits exactly the cells of the seed's formula.

In coordinates: with ``dx = tx - ox``, ``dy = ty - oy``, the major axis is x
only when ``|dx| > |dy|`` (otherwise y, which makes exact diagonals pure
diagonal steps). With ``long = |major difference|`` and ``short = |minor
difference|``, the cell after ``i`` steps is ``i`` cells along the major axis
and ``(long // 2 + i * short) // long`` cells along the minor axis, each in
the direction of the target. Half-way points therefore round towards the
target's side, so a path and its reverse differ in general.

Only the cells a projectile enters are tested, never the two orthogonal
neighbours of a diagonal step, so a projectile slips diagonally between two
wall corners, as in the original.

API coordinates are ``(x, y)``; grids are indexed ``[y, x]``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["bolt_cell", "bolt_line", "bolt_path"]

Cell = tuple[int, int]


def _axes(origin: Cell, target: Cell) -> tuple[bool, int, int, int, int]:
    """Return (x is major, long, short, major sign, minor sign) for a line."""
    dx = target[0] - origin[0]
    dy = target[1] - origin[1]
    sx = 1 if dx > 0 else -1
    sy = 1 if dy > 0 else -1
    if abs(dx) > abs(dy):
        return True, abs(dx), abs(dy), sx, sy
    return False, abs(dy), abs(dx), sy, sx


def bolt_cell(origin: Cell, target: Cell, step: int) -> Cell:
    """The cell a projectile is in after ``step`` cells of flight.

    Source: seed 002's ``Cell(i)`` formula (``seeds/002_92d18de83818e397.txt``,
    "Targeting") written in coordinates, with the axis choice and step signs
    of ``reference/ballistica.md``. The major axis advances by exactly one per
    step; the minor axis offset is ``(long // 2 + step * short) // long``. The
    formula holds for any ``step >= 0``, including steps past the target (a
    bolt that continues), and ignores the map.

    Args:
        origin: Start cell ``(x, y)``.
        target: Aimed-at cell ``(x, y)``; must differ from ``origin``.
        step: Number of cells flown (``0`` is the origin).

    Returns:
        The cell ``(x, y)``; it may lie outside any map.

    Raises:
        ValueError: If ``origin == target`` (no direction) or ``step < 0``.
    """
    if origin == target:
        raise ValueError(f"origin and target are the same cell {origin}: no direction")
    if step < 0:
        raise ValueError(f"step must be >= 0, got {step}")
    x_major, long, short, major_sign, minor_sign = _axes(origin, target)
    major = major_sign * step
    minor = minor_sign * ((long // 2 + step * short) // long)
    if x_major:
        return origin[0] + major, origin[1] + minor
    return origin[0] + minor, origin[1] + major


def _check_cell(name: str, cell: Cell) -> Cell:
    if len(cell) != 2:
        raise ValueError(f"{name} must be an (x, y) pair, got {cell!r}")
    return int(cell[0]), int(cell[1])


def _line_array(
    origin: Cell, target: Cell, width: int, height: int, past_target: bool
) -> NDArray[np.int64]:
    """The in-map cells of the line as an int64[N, 2] array of (x, y)."""
    if width <= 0 or height <= 0:
        raise ValueError(f"map size must be positive, got {width}x{height}")
    origin = _check_cell("origin", origin)
    target = _check_cell("target", target)
    ox, oy = origin
    if not (0 <= ox < width and 0 <= oy < height):
        raise ValueError(f"origin {origin} is outside the {width}x{height} map")
    if origin == target:
        return np.empty((0, 2), dtype=np.int64)
    x_major, long, short, major_sign, minor_sign = _axes(origin, target)
    if past_target:
        # Steps until the major coordinate leaves the map; the minor one may
        # leave earlier, which the in-bounds mask below catches.
        start, size = (ox, width) if x_major else (oy, height)
        count = size - 1 - start if major_sign > 0 else start
    else:
        count = long
    steps = np.arange(1, count + 1, dtype=np.int64)
    major = (origin[0] if x_major else origin[1]) + major_sign * steps
    minor = (origin[1] if x_major else origin[0]) + minor_sign * (
        (long // 2 + steps * short) // long
    )
    xs, ys = (major, minor) if x_major else (minor, major)
    inside = (xs >= 0) & (xs < width) & (ys >= 0) & (ys < height)
    # Both coordinates move monotonically, so the in-map cells are a prefix.
    end = int(np.argmin(inside)) if not inside.all() else len(inside)
    return np.stack([xs[:end], ys[:end]], axis=1)


def bolt_line(
    origin: Cell, target: Cell, width: int, height: int, *, past_target: bool = False
) -> list[Cell]:
    """The cells of a projectile's line on an empty map, in flight order.

    Source: seed 002 ``Cell(i)`` (see :func:`bolt_cell`), for
    ``i = 1, 2, ...``; ``reference/ballistica.md`` for the continuation past
    the target.

    The origin is not included. With ``past_target=False`` the line ends at
    the target (it has exactly ``max(|dx|, |dy|)`` cells); with
    ``past_target=True`` it runs on along the same line until the map's edge.
    Either way it is cut at the map's edge, so a target outside the map
    gives the in-map part of the line (Underhall's decision; the original had
    a wall ring round every level instead). ``origin == target`` gives an
    empty line in both modes (Underhall's decision: no direction, so no
    flight; the original flew diagonally up-left when continuing).

    Args:
        origin: Start cell ``(x, y)``; must lie on the map.
        target: Aimed-at cell ``(x, y)``; may lie anywhere.
        width: Map width in cells (> 0).
        height: Map height in cells (> 0).
        past_target: True for a bolt that continues beyond the target.

    Returns:
        The cells ``(x, y)`` entered after leaving ``origin``, in order.

    Raises:
        ValueError: If the map size is not positive, a cell is not a pair, or
            ``origin`` is outside the map.
    """
    cells = _line_array(origin, target, width, height, past_target)
    return [(int(x), int(y)) for x, y in cells]


def bolt_path(
    origin: Cell,
    target: Cell,
    blocked: NDArray[np.bool_],
    *,
    past_target: bool = False,
) -> list[Cell]:
    """The cells a projectile enters after leaving ``origin``, in order.

    Source: seed 002 (the ``Cell(i)`` formula; "if there is an obstacle ...
    the projectile will stop in the previous cell"; a wand's bolt continues),
    ``reference/ballistica.md`` (edge cases), ``RULES.md`` (projectile path).

    The line is :func:`bolt_line` on a map of ``blocked``'s shape, cut just
    before its first blocked cell: the blocked cell is not included and the
    projectile rests in the last cell returned (or in ``origin`` if the list
    is empty). The origin's own cell is never tested (the shooter stands in
    it). Blocking means "stops before it" (walls, rock, closed doors as the
    world chooses); creatures and cells a projectile stops *on* are the
    caller's business, checked cell by cell as the projectile flies.

    With ``past_target=False`` the path ends at the target; with
    ``past_target=True`` it continues along the same line until blocked or
    the map's edge. ``origin == target`` gives an empty path in both modes
    (Underhall's decision: no direction).

    Args:
        origin: Start cell ``(x, y)``; must lie on the map.
        target: Aimed-at cell ``(x, y)``; may lie outside the map, in which
            case the path is cut at the edge.
        blocked: ``bool[H, W]`` indexed ``[y, x]``, True where a projectile
            cannot enter.
        past_target: True for a bolt that flies on beyond the target.

    Returns:
        The cells ``(x, y)`` entered, in flight order.

    Raises:
        ValueError: If ``blocked`` is not 2-D, has an empty side, a cell is not
            a pair, or ``origin`` is outside the map.
    """
    grid = np.asarray(blocked)
    if grid.ndim != 2:
        raise ValueError(f"blocked must be a 2-D [y, x] array, got shape {grid.shape}")
    height, width = grid.shape
    cells = _line_array(origin, target, width, height, past_target)
    hits = grid[cells[:, 1], cells[:, 0]].astype(bool)
    end = int(np.argmax(hits)) if hits.any() else len(hits)
    return [(int(x), int(y)) for x, y in cells[:end]]
