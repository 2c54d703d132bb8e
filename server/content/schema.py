"""Definitions loaded from the rules data files, and the fixed vocabularies they use.

Everything here is plain data: frozen slotted dataclasses built by
:mod:`server.content.loader` from the TOML files in ``server/content/data``.
The field meanings, units and ranges are documented at the top of each data
file; this module repeats the shapes and the vocabularies the loader checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from types import MappingProxyType
from typing import Final


class Terrain(IntEnum):
    """Terrain of one cell; the values are sent on the wire and never change."""

    ROCK = 0
    WALL = 1
    FLOOR = 2
    DOOR_CLOSED = 3
    DOOR_OPEN = 4
    WATER = 5
    LAVA = 6
    RUBBLE = 7
    TREE = 8
    FOUNTAIN = 9
    ALTAR = 10
    STAIRS_UP = 11
    STAIRS_DOWN = 12


UNKNOWN: Final = 255
"""Wire value for a cell whose terrain the client does not know; never in a level."""

N_TERRAIN: Final = len(Terrain)
"""Number of terrain kinds; lookup tables indexed by ``Terrain`` have this length."""

DAMAGE_TYPES: Final[tuple[str, ...]] = (
    "acid", "electricity", "fire", "cold", "poison", "plasma", "light", "dark",
    "confusion", "sound", "shards", "inertia", "gravity", "force", "water",
    "nexus", "nether", "chaos", "disenchantment", "time", "mana", "holy",
    "meteor", "magic_missile", "sleep", "death", "disintegration",
)  # fmt: skip
"""Every damage type an attack can carry; its index is the column of resistance tables."""

RESIST_MIN: Final = -3
"""Lowest resistance level (most vulnerable)."""
RESIST_MAX: Final = 3
"""Highest resistance level (immune)."""

MONSTER_FLAGS: Final[tuple[str, ...]] = (
    "undead", "evil", "demon", "dragon", "animal", "unique", "immobile", "wallwalker",
)  # fmt: skip
"""Flags a monster record may carry."""

ITEM_CATEGORIES: Final[tuple[str, ...]] = (
    "food", "potion", "scroll", "weapon", "armour", "misc",
)  # fmt: skip
"""Categories an item record may have."""

COLOURS: Final[tuple[str, ...]] = (
    "black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
    "bright_black", "bright_red", "bright_green", "bright_yellow",
    "bright_blue", "bright_magenta", "bright_cyan", "bright_white",
)  # fmt: skip
"""Colour names the data may use (the 16 basic terminal colours, as blessed spells them)."""

_NO_RESIST: Final[Mapping[str, int]] = MappingProxyType({})


class ContentError(Exception):
    """A data file is missing, malformed or inconsistent.

    The message names the file, the record (its key, or ``#n`` counting
    records from 1 when the key itself is bad) and the field, e.g.
    ``monsters.toml: monster 'rat': field 'speed': must be an int in 1..20, got 0``.
    """


@dataclass(frozen=True, slots=True)
class TerrainDef:
    """How one kind of terrain looks and behaves (``terrain.toml``).

    Attributes:
        key: ``Terrain`` member name in lower case, e.g. ``"door_closed"``.
        name: Display name.
        glyph: One character drawn for the cell.
        colour: Colour name from ``COLOURS``.
        passable: Whether a walker may enter the cell.
        transparent: Whether sight passes through the cell.
    """

    key: str
    name: str
    glyph: str
    colour: str
    passable: bool
    transparent: bool

    @property
    def terrain(self) -> Terrain:
        """The ``Terrain`` member this record describes."""
        return Terrain[self.key.upper()]


@dataclass(frozen=True, slots=True)
class MonsterDef:
    """One kind of monster (``monsters.toml``; every field is documented there).

    ``resist`` maps a damage type to a level in ``RESIST_MIN..RESIST_MAX``;
    absent types are 0. Spawn weight is ``1 / rarity``. ``speed`` is in ticks
    per action (3 is normal, smaller is faster); ``sight`` is in cells.
    """

    key: str
    name: str
    glyph: str
    colour: str
    level: int
    health: int
    energy: int
    power: int
    defence: int
    courage: float
    accuracy: float
    dodge: float
    speed: int
    sight: int
    depth_min: int
    depth_max: int
    rarity: int
    xp: int
    flags: tuple[str, ...] = ()
    resist: Mapping[str, int] = field(default_factory=lambda: _NO_RESIST)

    def resistance(self, damage_type: str) -> int:
        """Return the resistance level against ``damage_type`` (0 if none).

        Raises:
            KeyError: ``damage_type`` is not in ``DAMAGE_TYPES``.
        """
        if damage_type not in DAMAGE_TYPES:
            raise KeyError(damage_type)
        return self.resist.get(damage_type, 0)


@dataclass(frozen=True, slots=True)
class Boosts:
    """Stat gains at each level-up of a player class (seed 001: level-up boosts)."""

    health: int
    energy: int
    power: int
    defence: int
    accuracy: float
    dodge: float


@dataclass(frozen=True, slots=True)
class ClassDef:
    """A player class (``classes.toml``): initial stats, level-up boosts, starting items.

    Seed 001 (``001_e9db5684e265e055.txt``): three classes plus a secret
    fourth (``hidden``); ``miss_chance`` is the melee miss chance M used by the
    thrown-item miss formula.
    """

    key: str
    name: str
    colour: str
    hidden: bool
    health: int
    energy: int
    power: int
    defence: int
    accuracy: float
    dodge: float
    speed: int
    strength: int
    miss_chance: float
    boosts: Boosts
    start_items: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ItemDef:
    """One kind of item (``items.toml``). Spawn weight is ``1 / rarity``."""

    key: str
    name: str
    glyph: str
    colour: str
    category: str
    weight: int
    nutrition: int
    depth_min: int
    depth_max: int
    rarity: int


@dataclass(frozen=True, slots=True)
class Content:
    """All rules data, as returned by ``load_content``.

    Attributes:
        terrain: One ``TerrainDef`` per ``Terrain``, indexed by its value.
        monsters: Monster definitions by key, in file order.
        classes: Player classes by key, in file order.
        items: Item definitions by key, in file order.
    """

    terrain: tuple[TerrainDef, ...]
    monsters: dict[str, MonsterDef]
    classes: dict[str, ClassDef]
    items: dict[str, ItemDef]
