"""Field of view, computed by python-tcod on the window around the viewer.

PERFORMANCE.md measured tcod's symmetric shadowcasting at ~4 µs per call on a
17×17 window versus 10–60 µs on a whole level, so the level is cropped to the
square of side ``2 * radius + 1`` around the viewer before calling tcod.
Symmetric shadowcasting also means: if A sees B, B sees A (within the same
radius), which the world relies on for monsters noticing players.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import tcod.constants
import tcod.map
from numpy.typing import NDArray

FOV_RADIUS = 8
"""Sight radius of players, in cells (Chebyshev window, circular cut-off)."""


class FieldOfView:
    """One viewer's field of view; read-only once made.

    Attributes:
        x0: Level x of the window's left column.
        y0: Level y of the window's top row.
        visible: ``bool[h, w]`` indexed ``[y - y0, x - x0]``; True where the
            cell is in view. Walls bounding a visible area are in view.

    A plain class rather than a frozen dataclass: the world makes one each
    time a player moves (:meth:`server.sim.world.World._new_fovs`), and a
    dataclass's ``__init__`` is generated Python even in the compiled build
    (``object.__setattr__`` per field, and the byte copy made at once): 0.47
    µs a call from Python, where this class takes 0.13. Two are equal only
    if they are the same object.
    """

    __slots__ = ("_bits", "_h", "_w", "visible", "x0", "y0")

    x0: Final[int]
    y0: Final[int]
    visible: Final[NDArray[np.bool_]]

    def __init__(self, x0: int, y0: int, visible: NDArray[np.bool_]) -> None:
        self.x0 = x0
        self.y0 = y0
        self.visible = visible
        h, w = visible.shape
        self._h: int = h
        self._w: int = w
        self._bits: bytes | None = None
        """``visible`` row by row, one byte a cell (1 in view), made at the
        first :meth:`contains`: several times cheaper to read for one cell
        than the array."""

    def __repr__(self) -> str:
        return f"FieldOfView(x0={self.x0}, y0={self.y0}, {self._h}x{self._w})"

    def contains(self, x: int, y: int) -> bool:
        """Return True if level cell ``(x, y)`` is in view."""
        i, j = x - self.x0, y - self.y0
        if not (0 <= i < self._w and 0 <= j < self._h):
            return False
        bits = self._bits
        if bits is None:
            bits = self._bits = self.visible.tobytes()
        return bits[j * self._w + i] == 1

    def slices(self) -> tuple[slice, slice]:
        """Return ``(rows, cols)`` slices selecting the window from a level array."""
        return slice(self.y0, self.y0 + self._h), slice(self.x0, self.x0 + self._w)


def field_of_view(
    transparent: NDArray[np.bool_], x: int, y: int, radius: int = FOV_RADIUS
) -> FieldOfView:
    """Compute what a viewer at ``(x, y)`` sees.

    Args:
        transparent: ``bool[H, W]`` indexed ``[y, x]``; True where light passes.
        x: Viewer column, ``0 <= x < W``.
        y: Viewer row, ``0 <= y < H``.
        radius: Sight radius in cells (>= 0).

    Returns:
        The field of view over the window clipped to the level.

    Raises:
        IndexError: If ``(x, y)`` is outside the level.
    """
    height, width = transparent.shape
    if not (0 <= x < width and 0 <= y < height):
        raise IndexError(f"viewer ({x}, {y}) outside level {width}x{height}")
    x0, y0 = max(0, x - radius), max(0, y - radius)
    x1, y1 = min(width, x + radius + 1), min(height, y + radius + 1)
    window = transparent[y0:y1, x0:x1]
    visible = tcod.map.compute_fov(
        window,
        (y - y0, x - x0),
        radius=radius,
        light_walls=True,
        algorithm=tcod.constants.FOV_SYMMETRIC_SHADOWCAST,
    )
    # tcod returns a view of a structured array whose dtype (with its own
    # fields dict and tuples) it builds per call; a plain copy keeps neither
    # alive, nor the other two fields' bytes.
    return FieldOfView(x0, y0, np.array(visible, dtype=np.bool_))


def padded_mask(fov: FieldOfView, x: int, y: int, radius: int = FOV_RADIUS) -> NDArray[np.bool_]:
    """The field of view of a viewer at ``(x, y)`` on the full square window.

    Args:
        fov: The viewer's field of view (its window clipped to the level).
        x: Viewer column, the window's centre.
        y: Viewer row.
        radius: The radius ``fov`` was computed with.

    Returns:
        ``bool[2 * radius + 1, 2 * radius + 1]`` indexed ``[y - (y0 - radius),
        x - (x0 - radius)]``: ``fov.visible`` where the window lies on the
        level, False where it hangs over the level's edge.

    Raises:
        ValueError: ``fov`` does not fit the window centred on ``(x, y)``.
    """
    side = 2 * radius + 1
    h, w = fov.visible.shape
    oy, ox = fov.y0 - (y - radius), fov.x0 - (x - radius)
    if oy < 0 or ox < 0 or oy + h > side or ox + w > side:
        raise ValueError(f"field of view at ({fov.x0}, {fov.y0}) is not centred on ({x}, {y})")
    mask = np.zeros((side, side), dtype=np.bool_)
    mask[oy : oy + h, ox : ox + w] = fov.visible
    return mask
