"""Field of view, computed by python-tcod on the window around the viewer.

PERFORMANCE.md measured tcod's symmetric shadowcasting at ~4 µs per call on a
17×17 window versus 10–60 µs on a whole level, so the level is cropped to the
square of side ``2 * radius + 1`` around the viewer before calling tcod.
Symmetric shadowcasting also means: if A sees B, B sees A (within the same
radius), which the world relies on for monsters noticing players.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import tcod.constants
import tcod.map
from numpy.typing import NDArray

FOV_RADIUS = 8
"""Sight radius of players, in cells (Chebyshev window, circular cut-off)."""


@dataclass(frozen=True, slots=True)
class FieldOfView:
    """One viewer's field of view.

    Attributes:
        x0: Level x of the window's left column.
        y0: Level y of the window's top row.
        visible: ``bool[h, w]`` indexed ``[y - y0, x - x0]``; True where the
            cell is in view. Walls bounding a visible area are in view.
    """

    x0: int
    y0: int
    visible: NDArray[np.bool_]

    def contains(self, x: int, y: int) -> bool:
        """Return True if level cell ``(x, y)`` is in view."""
        h, w = self.visible.shape
        i, j = x - self.x0, y - self.y0
        return 0 <= i < w and 0 <= j < h and bool(self.visible[j, i])

    def slices(self) -> tuple[slice, slice]:
        """Return ``(rows, cols)`` slices selecting the window from a level array."""
        h, w = self.visible.shape
        return slice(self.y0, self.y0 + h), slice(self.x0, self.x0 + w)


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
    return FieldOfView(x0, y0, visible)
