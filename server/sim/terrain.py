"""Terrain lookup tables built from the rules data (``terrain.toml``).

Each table is a read-only numpy array indexed by ``Terrain`` value, so
indexing it with a level's ``uint8[H, W]`` terrain array gives a per-cell
array of the same shape: ``PASSABLE[level.terrain]`` is ``bool[H, W]``.
"""

from __future__ import annotations

from typing import Final

import numpy as np
from numpy.typing import NDArray

from server.content.loader import default_content
from server.content.schema import TerrainDef


def _table(defs: tuple[TerrainDef, ...], attribute: str) -> NDArray[np.bool_]:
    """Return a read-only ``bool[N_TERRAIN]`` of one boolean attribute per terrain."""
    table = np.array([bool(getattr(d, attribute)) for d in defs], dtype=np.bool_)
    table.flags.writeable = False
    return table


def passable_table(defs: tuple[TerrainDef, ...]) -> NDArray[np.bool_]:
    """Return ``bool[N_TERRAIN]``: whether a walker may enter each terrain.

    Args:
        defs: One definition per ``Terrain``, in enum order (``Content.terrain``).
    """
    return _table(defs, "passable")


def transparent_table(defs: tuple[TerrainDef, ...]) -> NDArray[np.bool_]:
    """Return ``bool[N_TERRAIN]``: whether sight passes through each terrain.

    Args:
        defs: One definition per ``Terrain``, in enum order (``Content.terrain``).
    """
    return _table(defs, "transparent")


PASSABLE: Final = passable_table(default_content().terrain)
"""``bool[N_TERRAIN]``: walkable terrain, from the shipped ``terrain.toml``."""

TRANSPARENT: Final = transparent_table(default_content().terrain)
"""``bool[N_TERRAIN]``: terrain that does not block sight, from the shipped ``terrain.toml``."""
