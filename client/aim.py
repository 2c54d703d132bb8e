"""The targeting path, for previews: which cells a thrown item or a bolt enters.

The client's own copy of the rule in docs/protocol.md, "The targeting path"
(seed ``002_92d18de83818e397.txt``'s ``Cell(i)`` formula with the edge cases
of ``reference/ballistica.md``). The server owns the real flight; this module
only lets the terminal client draw the path before the player fires. It has
the same contract as the server's ``bolt_path`` and a test compares the two on
many random maps, but it imports nothing from the server (STYLE.md: the
client renders what the server says and never reaches into the simulation).

The rule: from ``origin`` to ``target`` with ``dx = tx - ox``, ``dy = ty -
oy``, the long (major) axis is x only when ``|dx| > |dy|`` (so an exact
diagonal has y as its major axis, which gives pure diagonal steps). With
``long`` and ``short`` the absolute differences along the major and minor
axes, the cell after ``i`` steps lies ``i`` cells along the major axis and
``(long // 2 + i * short) // long`` cells along the minor one, each towards
the target (a zero difference steps by -1, which never matters because its
offset stays 0). API cells are ``(x, y)``; grids are ``[y, x]``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ["bolt_cell", "bolt_path"]

Cell = tuple[int, int]


def _pair(name: str, cell: Sequence[int]) -> Cell:
    if len(cell) != 2:
        raise ValueError(f"{name} must be an (x, y) pair, got {cell!r}")
    return int(cell[0]), int(cell[1])


def bolt_cell(origin: Cell, target: Cell, step: int) -> Cell:
    """The cell a projectile aimed from ``origin`` at ``target`` is in after ``step`` cells.

    Seed 002's ``Cell(i)`` in coordinates (see the module docstring); it holds
    for steps past the target too and ignores any map.

    Args:
        origin: start cell ``(x, y)``.
        target: aimed-at cell ``(x, y)``, different from ``origin``.
        step: cells flown, ``>= 0`` (0 is ``origin``).

    Returns:
        The cell ``(x, y)``; it may lie off the map.

    Raises:
        ValueError: ``origin == target`` (no direction) or ``step < 0``.
    """
    ox, oy = origin
    tx, ty = target
    if (ox, oy) == (tx, ty):
        raise ValueError(f"origin and target are the same cell {origin}: no direction")
    if step < 0:
        raise ValueError(f"step must be >= 0, got {step}")
    dx, dy = tx - ox, ty - oy
    sx = 1 if dx > 0 else -1
    sy = 1 if dy > 0 else -1
    if abs(dx) > abs(dy):
        long, short = abs(dx), abs(dy)
        return ox + sx * step, oy + sy * ((long // 2 + step * short) // long)
    long, short = abs(dy), abs(dx)
    return ox + sx * ((long // 2 + step * short) // long), oy + sy * step


def bolt_path(
    origin: Sequence[int],
    target: Sequence[int],
    blocked: NDArray[np.bool_],
    *,
    past_target: bool = False,
) -> list[Cell]:
    """The cells a projectile enters after leaving ``origin``, in flight order.

    The path follows :func:`bolt_cell` for ``i = 1, 2, ...`` and stops in the
    last cell before the first blocked one (the blocked cell is not included;
    ``origin`` itself is never tested) and at the map's edge. With
    ``past_target=False`` it ends at the target, so an unobstructed path has
    ``max(|dx|, |dy|)`` cells; with ``past_target=True`` (a wand's bolt) it
    runs on along the same line. ``origin == target`` gives ``[]``.

    Args:
        origin: start cell ``(x, y)``, on the map.
        target: aimed-at cell ``(x, y)``; may be off the map (the path is then
            cut at the edge).
        blocked: ``bool[H, W]`` indexed ``[y, x]``: cells a projectile cannot
            enter (for a preview: the known map's non-passable cells).
        past_target: continue beyond the target.

    Returns:
        The cells ``(x, y)`` entered.

    Raises:
        ValueError: ``blocked`` is not 2-D or has an empty side, a cell is not
            a pair, or ``origin`` is off the map.
    """
    grid = np.asarray(blocked)
    if grid.ndim != 2:
        raise ValueError(f"blocked must be a 2-D [y, x] array, got shape {grid.shape}")
    height, width = grid.shape
    if width <= 0 or height <= 0:
        raise ValueError(f"map size must be positive, got {width}x{height}")
    start = _pair("origin", origin)
    aim = _pair("target", target)
    if not (0 <= start[0] < width and 0 <= start[1] < height):
        raise ValueError(f"origin {start} is outside the {width}x{height} map")
    if start == aim:
        return []
    last = max(abs(aim[0] - start[0]), abs(aim[1] - start[1]))
    path: list[Cell] = []
    step = 1
    while past_target or step <= last:
        x, y = bolt_cell(start, aim, step)
        if not (0 <= x < width and 0 <= y < height) or grid[y, x]:
            break
        path.append((x, y))
        step += 1
    return path
