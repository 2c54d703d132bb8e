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
from server.content.schema import Terrain, TerrainDef


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

FLIES_OVER: Final = (Terrain.WATER, Terrain.LAVA)
"""Terrain a ``flying`` monster crosses as if it were floor (seed 003: FEAT_LAVA
hurts walkers; monsters.toml: flying "crosses water and lava")."""
WALKS_THROUGH: Final = (Terrain.ROCK, Terrain.WALL, Terrain.DOOR_CLOSED)
"""Terrain a ``wallwalker`` passes through (seed 003's PASS_WALL, the xorn and the
umber hulk; monsters.toml: wallwalker "moves through rock and walls")."""


def walkable_table(passable: NDArray[np.bool_], flags: frozenset[str]) -> NDArray[np.bool_]:
    """Return ``bool[N_TERRAIN]``: the terrain a creature with ``flags`` may enter.

    A walker enters what ``passable`` allows; ``flying`` adds ``FLIES_OVER``,
    ``wallwalker`` adds ``WALKS_THROUGH``. The level's outer border stays shut
    to everyone (callers mask it: :func:`walkable_cells`).

    Args:
        passable: ``bool[N_TERRAIN]``, the walkers' table (``PASSABLE``).
        flags: The creature's monster flags (``MONSTER_FLAGS``).
    """
    table = passable.copy()
    if "flying" in flags:
        table[list(FLIES_OVER)] = True
    if "wallwalker" in flags:
        table[list(WALKS_THROUGH)] = True
    table.flags.writeable = False
    return table


MOVE_FLAGS: Final = frozenset({"flying", "wallwalker"})
"""The monster flags that change where a creature may go."""

_TABLES: Final = {
    key: walkable_table(PASSABLE, key)
    for key in (
        frozenset(),
        frozenset({"flying"}),
        frozenset({"wallwalker"}),
        frozenset({"flying", "wallwalker"}),
    )
}


def walkable_for(flags: frozenset[str]) -> NDArray[np.bool_]:
    """The shipped ``bool[N_TERRAIN]`` of :func:`walkable_table` for ``flags``."""
    return _TABLES[flags & MOVE_FLAGS]


def walkable_cells(
    terrain: NDArray[np.uint8], passable: NDArray[np.bool_], flags: frozenset[str]
) -> NDArray[np.bool_]:
    """``bool[h, w]``: the cells of ``terrain`` (a window ``uint8[h, w]`` of a
    level, with ``passable`` its walkers' ``bool[h, w]``) a creature with
    ``flags`` may enter. Walkers get ``passable`` itself (no copy); anyone
    else gets it widened by :func:`walkable_for` (border masking is the
    caller's: a wallwalker must not leave the level's rock rim)."""
    if not flags & MOVE_FLAGS:
        return passable
    return passable | walkable_for(flags)[terrain]
