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
    "ice", "rock", "shot", "storm", "light_weak", "spirit", "polymorph", "clone",
    "heal_monster", "speed", "slow", "confuse_monster", "hold", "hold_undead",
    "kill_wall", "away_undead", "away_evil", "away_all", "turn_undead", "turn_evil",
    "turn_all", "dispel_undead", "dispel_evil", "dispel_good", "dispel_demon",
    "dispel_dragon", "dispel_all", "dispel_small",
)  # fmt: skip
"""Every damage type an attack can carry; its index is the column of resistance tables."""

RESIST_MIN: Final = -3
"""Lowest resistance level (most vulnerable)."""
RESIST_MAX: Final = 3
"""Highest resistance level (immune)."""

MONSTER_FLAGS: Final[tuple[str, ...]] = (
    "undead", "evil", "demon", "dragon", "animal", "unique", "immobile", "wallwalker",
    "flying", "no_sleep", "no_confusion", "no_fear",
)  # fmt: skip
"""Flags a monster record may carry: what the monster *is* (``monsters.toml`` explains each)."""

ABILITIES: Final[tuple[str, ...]] = (
    "reflection", "regenerate", "poison_touch", "disease_touch", "paralysing_touch",
    "energy_drain", "sneak_attack", "martial_arts", "marksman", "vibrant_warmth",
    "meditation", "see_invisible", "invisible", "holy_light", "fury",
)  # fmt: skip
"""Special abilities a monster or player may have (seed 001's passive abilities).

``reflection``: rays and bolts that hit it turn back, at no range cost (seed 000);
``regenerate``: regains health every turn, even while fighting;
``poison_touch`` / ``disease_touch`` / ``paralysing_touch``: a melee hit that
does damage also poisons / sickens / paralyses; ``energy_drain``: such a hit
also drains energy; ``sneak_attack``: surprise attacks deal extra damage (a
class's ``sneak_attack`` bonus); ``martial_arts``: fights well unarmed;
``marksman``: halves the thrown-item miss chance (seed 001); ``vibrant_warmth``:
halves the hunger rate (seed 001); ``meditation``: energy regenerates faster;
``see_invisible``: sees invisible creatures; ``invisible``: cannot be seen
without ``see_invisible``; ``holy_light``: seed 003's holy-light specialty, the
bearer's light may frighten undead, evil and light-hurt monsters (notes M, N);
``fury``: seed 002's Furious Berserker, melee damage x1.5 (rounded down) while
below half health.
"""

ROLES: Final[tuple[str, ...]] = (
    "Archeologist", "Barbarian", "Caveman", "Healer", "Knight", "Monk", "Priest",
    "Rogue", "Ranger", "Samurai", "Tourist", "Valkyrie", "Wizard",
)  # fmt: skip
"""NetHack roles whose spell-casting profile a class uses (seed 004, spell_success.md)."""

ITEM_CATEGORIES: Final[tuple[str, ...]] = (
    "food", "potion", "scroll", "spellbook", "weapon", "thrown", "armour", "shield",
    "robe", "helmet", "gloves", "boots", "wand", "horn", "misc",
)  # fmt: skip
"""Categories an item record may have."""

HATED_ELEMENTS: Final[tuple[str, ...]] = ("acid", "electricity", "fire", "cold")
"""Elements an item can hate on the floor (seed 003's acid, electricity, fire and
cold haters; ``items.toml`` ``hates``, ``damage_types.toml`` ``[haters]``)."""

SLOTS: Final[tuple[str, ...]] = (
    "weapon", "shield", "head", "body", "cloak", "hands", "feet", "book",
)  # fmt: skip
"""Equipment slots, in display order."""

SLOT_OF_CATEGORY: Final[Mapping[str, str]] = MappingProxyType({
    "weapon": "weapon", "armour": "body", "robe": "cloak", "shield": "shield",
    "helmet": "head", "gloves": "hands", "boots": "feet", "spellbook": "book",
})  # fmt: skip
"""The slot an item of each equippable category goes in; other categories have none."""

SHIELD_SIZES: Final[tuple[str, ...]] = ("small", "large")
"""Shield sizes: a large shield hampers casting more (seed 004, spell_success.md step 3)."""

DEFAULT_THROW_RANGE: Final = 4
"""Throwing range of an item whose ``throw_range`` is None, in cells (seed 001)."""


@dataclass(frozen=True, slots=True)
class EffectRule:
    """Where an effect key may appear and which fields it needs (``items.toml``).

    Attributes:
        categories: Item categories that may carry the effect.
        damage_type: The item must name a ``damage_type`` (else must not).
        dice: The item must give ``dice`` (else must not).
        spell: The item must name a ``spell`` (else must not, spellbooks aside).
    """

    categories: tuple[str, ...]
    damage_type: bool = False
    dice: bool = False
    spell: bool = False


_ZAP: Final = ("wand", "horn")

EFFECT_RULES: Final[Mapping[str, EffectRule]] = MappingProxyType({
    # wands and horns (seed 000 rays, seed 004 beams)
    "ray": EffectRule(_ZAP, damage_type=True, dice=True),
    "beam": EffectRule(_ZAP, damage_type=True, dice=True),
    "dig": EffectRule(_ZAP),
    # a digging ray whose damage type strikes the creatures on its path (seed 003's
    # KILL_WALL: stone to mud hurts only what is made of rock)
    "stone_to_mud": EffectRule(("wand",), damage_type=True, dice=True),
    "bolt": EffectRule(("wand",), spell=True),
    # potions (quaffed, or shattered on whoever they hit when thrown)
    "heal": EffectRule(("potion",), dice=True),
    "energy": EffectRule(("potion",), dice=True),
    "cure_poison": EffectRule(("potion",)),
    "cure_disease": EffectRule(("potion",)),
    "harm": EffectRule(("potion",), damage_type=True, dice=True),
    "confuse": EffectRule(("potion",)),
    "enlighten": EffectRule(("potion",)),
    "avatar": EffectRule(("potion",)),
    # scrolls
    "remove_curse": EffectRule(("scroll",)),
    "enchant": EffectRule(("scroll",)),
    "enchant_armour": EffectRule(("scroll",)),
    "teleport": EffectRule(("scroll",)),
    "map": EffectRule(("scroll",)),
    # every creature the reader sees takes dice of the damage type (Angband's
    # line-of-sight scrolls and prayers: banishment, dispel, turn undead)
    "burst": EffectRule(("scroll",), damage_type=True, dice=True),
    # both: cast the spell held and learn it (seed 001)
    "learn_spell": EffectRule(("potion", "scroll"), spell=True),
    # fragile thrown things
    "splash": EffectRule(("thrown",), damage_type=True, dice=True),
})  # fmt: skip
"""Effect keys (what using an item does) and their rules; documented in ``items.toml``."""

EFFECTS: Final[tuple[str, ...]] = tuple(EFFECT_RULES)
"""Every effect key an item may name, in ``EFFECT_RULES`` order."""

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

    ``melee_type`` is the damage type its melee attack carries (None: plain
    physical); ``breath`` the damage type of a breath weapon fired as a ray
    (seed 000) rolling ``breath_dice`` = ``(count, sides)``, both None for a
    monster that does not breathe; ``spells`` the spell keys it casts (from
    ``spells.toml``), with ``spell_power`` in place of each spell's own power
    (None: the spell's power as cast by a player); ``abilities`` keys from
    ``ABILITIES``.
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
    melee_type: str | None = None
    breath: str | None = None
    breath_dice: tuple[int, int] | None = None
    spells: tuple[str, ...] = ()
    spell_power: int | None = None
    abilities: tuple[str, ...] = ()

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

    ``role`` (one of ``ROLES``) and ``casting_stat`` (its Int or Wis) feed
    seed 004's spell success (``spell_success.md``). ``abilities`` are the
    starting abilities (``ABILITIES``); ``sneak_attack`` is the surprise-attack
    bonus: damage is multiplied by ``1 + sneak_attack`` (0: no bonus).
    ``special_choices`` are the abilities this class may take at every fifth
    level, in menu order, besides the boosts to health, energy, power,
    defence or a resistance that every class is offered (seed 001). The
    loader requires ``role``, ``casting_stat`` and ``special_choices``; the
    defaults serve hand-built test definitions.
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
    role: str = "Valkyrie"
    casting_stat: int = 10
    abilities: tuple[str, ...] = ()
    sneak_attack: float = 0.0
    special_choices: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ItemDef:
    """One kind of item (``items.toml``; every field is documented there).

    Spawn weight is ``1 / rarity``. Seed 001's attributes: ``power`` (None:
    no power rating; may be negative), ``defence``, ``resist`` (bonus levels
    by damage type), ``enchant`` (damage type of a weapon's enchantment
    roll), ``nutrition``, ``throw_range`` (None: ``DEFAULT_THROW_RANGE``),
    and the properties ``fragile``, ``vegetarian``, ``rustproof``,
    ``acidproof``, ``cursed``, ``blessed``, ``metallic``, ``artifact``.
    ``required_strength`` (0: none) and ``accuracy`` (a factor) are seed
    002's weapon numbers. ``shield_size`` is ``"small"`` or ``"large"`` for
    shields; ``charges`` the inclusive ``(lo, hi)`` range a wand or horn is
    made with; ``effect`` a key of ``EFFECT_RULES`` with its ``damage_type``,
    ``dice`` = ``(count, sides)`` and ``spell`` as that rule requires.
    ``hates`` (seed 003's finer item classes) names the elements that destroy
    the item on the floor when its category's default is wrong for it
    (swords and hard armour spared by fire, oil flasks hating cold); None
    keeps the category's default. ``hunger_drain``: a weapon that, wielded,
    triples its wielder's hunger rate (seed 001). ``bane`` (a monster flag):
    equipped, it lowers its bearer's miss chance M against such creatures.
    """

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
    power: int | None = None
    defence: int = 0
    resist: Mapping[str, int] = field(default_factory=lambda: _NO_RESIST)
    enchant: str | None = None
    throw_range: int | None = None
    fragile: bool = False
    vegetarian: bool = False
    rustproof: bool = False
    acidproof: bool = False
    cursed: bool = False
    blessed: bool = False
    metallic: bool = False
    artifact: bool = False
    required_strength: int = 0
    accuracy: float = 1.0
    shield_size: str | None = None
    charges: tuple[int, int] | None = None
    effect: str | None = None
    damage_type: str | None = None
    dice: tuple[int, int] | None = None
    spell: str | None = None
    hates: tuple[str, ...] | None = None
    hunger_drain: bool = False
    bane: str | None = None
    description: str = ""

    @property
    def slot(self) -> str | None:
        """The equipment slot (one of ``SLOTS``) the item goes in, or None (derived
        from ``category`` by ``SLOT_OF_CATEGORY``)."""
        return SLOT_OF_CATEGORY.get(self.category)

    @property
    def throw_distance(self) -> int:
        """Throwing range in cells: ``throw_range``, or ``DEFAULT_THROW_RANGE`` (seed 001)."""
        return DEFAULT_THROW_RANGE if self.throw_range is None else self.throw_range


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
