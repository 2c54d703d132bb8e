"""Strict loader for the rules data files (``terrain``, ``items``, ``monsters``, ``classes``).

Each file is TOML holding one array of tables (``[[terrain]]``, ``[[item]]``,
``[[monster]]``, ``[[class]]``). Every record is checked field by field:
unknown, duplicate and missing keys, wrong types (a bool is never accepted as
a number), out-of-range values, unknown flags, abilities, effects, roles,
damage types, categories and colours, fields that do not fit the record
(``charges`` on a sword, ``breath_dice`` without ``breath``, ...) and
references to items that do not exist are all rejected with a
``ContentError`` naming the file, the record and the field.

Spell keys (an item's ``spell``, a monster's ``spells``) are only checked
against the key pattern here; ``spells.toml`` is cross-checked elsewhere.
The generic checks (numbers, flags, specs, records, files) live in
``server.content.checks``, shared with the other loaders.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from server.content.checks import (
    KEY_RE,
    REQUIRED,
    Check,
    Invalid,
    Spec,
    Where,
    boolean,
    check_fields,
    choice,
    identifier,
    int_pair,
    integer,
    load_records,
    name_list,
    real,
    text,
)
from server.content.schema import (
    ABILITIES,
    COLOURS,
    DAMAGE_TYPES,
    EFFECT_RULES,
    EFFECTS,
    HATED_ELEMENTS,
    ITEM_CATEGORIES,
    MONSTER_FLAGS,
    RESIST_MAX,
    RESIST_MIN,
    ROLES,
    SHIELD_SIZES,
    Boosts,
    ClassDef,
    Content,
    ContentError,
    ItemDef,
    MonsterDef,
    Terrain,
    TerrainDef,
)

DATA_DIR: Final = Path(__file__).with_name("data")
"""Directory of the shipped data files."""

MAX_DEPTH: Final = 50
"""Deepest dungeon level a record may name in ``depth_min`` / ``depth_max``."""
MAX_DICE: Final = 50
"""Most dice a ``dice`` / ``breath_dice`` pair may roll."""
MAX_SIDES: Final = 100
"""Most sides a die of a ``dice`` / ``breath_dice`` pair may have."""
MAX_CHARGES: Final = 100
"""Most charges a wand or horn may be made with."""
ITEM_STAT_LIMIT: Final = 50
"""Bound on an item's ``power`` / ``defence`` in either direction (they may be negative)."""


# --- value checks of these files: each returns the converted value or raises Invalid -------


def _glyph(value: Any) -> str:
    if not isinstance(value, str) or len(value) != 1 or not value.isprintable():
        raise Invalid(f"must be one printable character, got {value!r}")
    return value


def _resist(value: Any) -> Mapping[str, int]:
    if not isinstance(value, dict):
        raise Invalid(f"must be a table of damage type = level, got {value!r}")
    level = integer(RESIST_MIN, RESIST_MAX)
    out: dict[str, int] = {}
    for damage_type, raw in value.items():
        if damage_type not in DAMAGE_TYPES:
            raise Invalid(f"unknown damage type {damage_type!r} (known: {', '.join(DAMAGE_TYPES)})")
        try:
            out[damage_type] = level(raw)
        except Invalid as exc:
            raise exc.under(damage_type) from None
    return MappingProxyType(out)


_dice = int_pair(
    f"a list [count, sides], count 1..{MAX_DICE}, sides 1..{MAX_SIDES}",
    lambda count, sides: 1 <= count <= MAX_DICE and 1 <= sides <= MAX_SIDES,
)
"""``[count, sides]``: count 1..MAX_DICE, sides 1..MAX_SIDES."""

_charges = int_pair(
    f"a list [lo, hi] with 0 <= lo <= hi and 1 <= hi <= {MAX_CHARGES}",
    lambda lo, hi: 0 <= lo <= hi and 1 <= hi <= MAX_CHARGES,
)
"""``[lo, hi]``: an inclusive range with 0 <= lo <= hi, 1 <= hi <= MAX_CHARGES."""


def _keys(what: str) -> Check:
    """A list of distinct lower-case identifiers (keys of another file, e.g. spells)."""

    def check(value: Any) -> tuple[str, ...]:
        if not isinstance(value, list):
            raise Invalid(f"must be a list of {what} keys, got {value!r}")
        for name in value:
            if not isinstance(name, str) or not KEY_RE.fullmatch(name):
                raise Invalid(
                    f"{what} key must be a lower-case identifier ([a-z][a-z0-9_]*), got {name!r}"
                )
        twice = [name for i, name in enumerate(value) if name in value[:i]]
        if twice:
            raise Invalid(f"lists the {what} {twice[0]!r} twice")
        return tuple(value)

    return check


_BOOSTS_SPEC: Final[Spec] = {
    "health": (integer(0), REQUIRED),
    "energy": (integer(0), REQUIRED),
    "power": (integer(0), REQUIRED),
    "defence": (integer(0), REQUIRED),
    "accuracy": (real(0.0), REQUIRED),
    "dodge": (real(0.0), REQUIRED),
}


def _boosts(value: Any) -> Boosts:
    if not isinstance(value, dict):
        raise Invalid(f"must be a table ({', '.join(_BOOSTS_SPEC)}), got {value!r}")
    return Boosts(**check_fields(value, _BOOSTS_SPEC, "entry"))


# --- record specs: field name -> (check, default); REQUIRED marks no default -----

_DEPTH = integer(1, MAX_DEPTH)

_TERRAIN_SPEC: Final[Spec] = {
    "key": (identifier, REQUIRED),
    "name": (text, REQUIRED),
    "glyph": (_glyph, REQUIRED),
    "colour": (choice(COLOURS, "colour"), REQUIRED),
    "passable": (boolean, REQUIRED),
    "transparent": (boolean, REQUIRED),
}

_DAMAGE_TYPE = choice(DAMAGE_TYPES, "damage type")
_ITEM_STAT = integer(-ITEM_STAT_LIMIT, ITEM_STAT_LIMIT)

_ITEM_SPEC: Final[Spec] = {
    "key": (identifier, REQUIRED),
    "name": (text, REQUIRED),
    "glyph": (_glyph, REQUIRED),
    "colour": (choice(COLOURS, "colour"), REQUIRED),
    "category": (choice(ITEM_CATEGORIES, "category"), REQUIRED),
    "weight": (integer(0), REQUIRED),
    "nutrition": (integer(0), 0),
    "depth_min": (_DEPTH, REQUIRED),
    "depth_max": (_DEPTH, REQUIRED),
    "rarity": (integer(1), REQUIRED),
    "power": (_ITEM_STAT, None),
    "defence": (_ITEM_STAT, 0),
    "resist": (_resist, MappingProxyType({})),
    "enchant": (_DAMAGE_TYPE, None),
    "throw_range": (integer(1, 20), None),
    "fragile": (boolean, False),
    "vegetarian": (boolean, False),
    "rustproof": (boolean, False),
    "acidproof": (boolean, False),
    "cursed": (boolean, False),
    "blessed": (boolean, False),
    "metallic": (boolean, False),
    "artifact": (boolean, False),
    "required_strength": (integer(0, 50), 0),
    "accuracy": (real(0.0, 10.0, strict_lo=True), 1.0),
    "shield_size": (choice(SHIELD_SIZES, "shield size"), None),
    "charges": (_charges, None),
    "effect": (choice(EFFECTS, "known effect"), None),
    "damage_type": (_DAMAGE_TYPE, None),
    "dice": (_dice, None),
    "spell": (identifier, None),
    "hates": (name_list(HATED_ELEMENTS, "element", unique=True), None),
    "hunger_drain": (boolean, False),
    "bane": (choice(MONSTER_FLAGS, "monster flag"), None),
    "description": (text, ""),
}

_MONSTER_SPEC: Final[Spec] = {
    "key": (identifier, REQUIRED),
    "name": (text, REQUIRED),
    "glyph": (_glyph, REQUIRED),
    "colour": (choice(COLOURS, "colour"), REQUIRED),
    "level": (integer(0), REQUIRED),
    "health": (integer(1), REQUIRED),
    "energy": (integer(0), REQUIRED),
    "power": (integer(0), REQUIRED),
    "defence": (integer(0), REQUIRED),
    "courage": (real(0.0, 1.0), REQUIRED),
    "accuracy": (real(0.0, strict_lo=True), REQUIRED),
    "dodge": (real(0.0), REQUIRED),
    "speed": (integer(1, 20), REQUIRED),
    "sight": (integer(1, 20), REQUIRED),
    "depth_min": (_DEPTH, REQUIRED),
    "depth_max": (_DEPTH, REQUIRED),
    "rarity": (integer(1), REQUIRED),
    "xp": (integer(0), REQUIRED),
    "flags": (name_list(MONSTER_FLAGS, "flag", unique=True), ()),
    "resist": (_resist, MappingProxyType({})),
    "melee_type": (_DAMAGE_TYPE, None),
    "breath": (_DAMAGE_TYPE, None),
    "breath_dice": (_dice, None),
    "spells": (_keys("spell"), ()),
    "spell_power": (integer(1, 100), None),
    "abilities": (name_list(ABILITIES, "ability", unique=True), ()),
}

_CLASS_SPEC: Final[Spec] = {
    "key": (identifier, REQUIRED),
    "name": (text, REQUIRED),
    "colour": (choice(COLOURS, "colour"), REQUIRED),
    "hidden": (boolean, REQUIRED),
    "health": (integer(1), REQUIRED),
    "energy": (integer(0), REQUIRED),
    "power": (integer(0), REQUIRED),
    "defence": (integer(0), REQUIRED),
    "accuracy": (real(0.0, strict_lo=True), REQUIRED),
    "dodge": (real(0.0), REQUIRED),
    "speed": (integer(1, 20), REQUIRED),
    "strength": (integer(1, 50), REQUIRED),
    "miss_chance": (real(0.0, 1.0), REQUIRED),
    "boosts": (_boosts, REQUIRED),
    "start_items": (name_list(None, "item", unique=False), REQUIRED),
    "role": (choice(ROLES, "role"), REQUIRED),
    "casting_stat": (integer(3, 25), REQUIRED),
    "abilities": (name_list(ABILITIES, "ability", unique=True), ()),
    "sneak_attack": (real(0.0, 10.0), 0.0),
    "special_choices": (name_list(ABILITIES, "ability", unique=True), REQUIRED),
}


# --- rules across the fields of one record -------------------------------------------
# Each takes the record's name, the fields present in the file and the checked
# values, and raises the record's ContentError for a field that does not fit.

_NEEDS_EFFECT: Final = ("potion", "scroll", "wand", "horn")
_WEAPONS: Final = ("weapon", "thrown")


def _depth_rules(where: Where, v: dict[str, Any]) -> None:
    """``depth_max`` is not above ``depth_min`` (items and monsters; checked before their rules)."""
    if v["depth_max"] < v["depth_min"]:
        raise where.fail(
            "depth_max", f"must be >= depth_min ({v['depth_min']}), got {v['depth_max']}"
        )


def _item_rules(where: Where, present: set[str], v: dict[str, Any]) -> None:
    """Cross-field rules of ``items.toml`` (documented at the top of that file)."""
    _depth_rules(where, v)
    category: str = v["category"]
    if category == "food" and v["nutrition"] < 1:
        raise where.fail("nutrition", f"must be > 0 for food, got {v['nutrition']}")
    if category != "food" and v["nutrition"] != 0:
        raise where.fail("nutrition", f"must be 0 unless category is food ({category!r})")
    if v["vegetarian"] and category != "food":
        raise where.fail("vegetarian", f"only food may be vegetarian (category {category!r})")
    if (category == "shield") != (v["shield_size"] is not None):
        what = "required for a shield" if category == "shield" else "only shields have a size"
        raise where.fail("shield_size", f"{what} (category {category!r})")
    if (category in ("wand", "horn")) != (v["charges"] is not None):
        wand = category in ("wand", "horn")
        what = "required for a wand or horn" if wand else "only wands and horns have charges"
        raise where.fail("charges", f"{what} (category {category!r})")
    for name in ("accuracy", "required_strength", "enchant"):
        if name in present and category not in _WEAPONS:
            raise where.fail(
                name, f"only weapons and thrown weapons have it (category {category!r})"
            )
    if v["enchant"] is not None and (v["power"] is None or v["power"] < 1):
        raise where.fail(
            "enchant", "needs a power >= 1 (the enchantment roll is 1..ceil(power / 2), seed 001)"
        )
    if v["hunger_drain"] and category != "weapon":
        raise where.fail(
            "hunger_drain", f"only wielded weapons drain hunger (category {category!r})"
        )
    if v["cursed"] and v["blessed"]:
        raise where.fail("blessed", "an item cannot be both cursed and blessed")
    _effect_rules(where, v)


def _effect_rules(where: Where, v: dict[str, Any]) -> None:
    """The ``effect`` of an item and the ``damage_type`` / ``dice`` / ``spell`` it needs."""
    category: str = v["category"]
    effect: str | None = v["effect"]
    if effect is None:
        if category in _NEEDS_EFFECT:
            raise where.fail("effect", f"required for category {category!r}")
        for name in ("damage_type", "dice"):
            if v[name] is not None:
                raise where.fail(name, "only an item with an effect that needs it has one")
        if v["spell"] is not None and category != "spellbook":
            raise where.fail("spell", "only a learn_spell effect or a spellbook holds a spell")
        return
    rule = EFFECT_RULES[effect]
    if category not in rule.categories:
        raise where.fail(
            "effect", f"{effect!r} is only for {', '.join(rule.categories)} (category {category!r})"
        )
    for name, needed in (
        ("damage_type", rule.damage_type),
        ("dice", rule.dice),
        ("spell", rule.spell),
    ):
        if needed and v[name] is None:
            raise where.fail(name, f"required by effect {effect!r}")
        if not needed and v[name] is not None:
            raise where.fail(name, f"not used by effect {effect!r}")
    if effect == "splash" and not v["fragile"]:
        raise where.fail("fragile", "must be true for effect 'splash' (it acts by shattering)")


def _monster_rules(where: Where, present: set[str], v: dict[str, Any]) -> None:
    """Cross-field rules of ``monsters.toml``: depths, breath and its dice, spells and power."""
    _depth_rules(where, v)
    if (v["breath"] is None) != (v["breath_dice"] is None):
        name = "breath_dice" if v["breath_dice"] is None else "breath"
        raise where.fail(name, "breath and breath_dice go together: give both or neither")
    if v["spell_power"] is not None and not v["spells"]:
        raise where.fail("spell_power", "only a monster with spells has a spell power")


def _class_rules(where: Where, present: set[str], v: dict[str, Any]) -> None:
    """Cross-field rules of ``classes.toml``: the level-five menu and the sneak attack."""
    choices: tuple[str, ...] = v["special_choices"]
    already = [a for a in choices if a in v["abilities"]]
    if already:
        raise where.fail(
            "special_choices", f"offers an ability the class starts with: {', '.join(already)}"
        )
    sneaky = "sneak_attack" in v["abilities"] or "sneak_attack" in choices
    if sneaky != (v["sneak_attack"] > 0):
        raise where.fail(
            "sneak_attack",
            "must be > 0 exactly when the class has or may take the sneak_attack ability",
        )


def _load_terrain(path: Path) -> tuple[TerrainDef, ...]:
    """Load ``terrain.toml``: exactly one record per ``Terrain``, in enum order."""
    records = load_records(path, "terrain", _TERRAIN_SPEC, TerrainDef)
    for index, (record, expected) in enumerate(zip(records.values(), Terrain), start=1):
        if record.key != expected.name.lower():
            raise Where(path.name, "terrain", repr(record.key)).fail(
                "key",
                f"record #{index} must be {expected.name.lower()!r} "
                "(one record per Terrain, in enum order)",
            )
    if len(records) > len(Terrain):
        extra = list(records)[len(Terrain)]
        raise Where(path.name, "terrain", repr(extra)).fail(
            "key", f"no such Terrain (expected {len(Terrain)} records, one per Terrain)"
        )
    if len(records) < len(Terrain):
        missing = [t.name.lower() for t in Terrain][len(records) :]
        raise ContentError(
            f"{path.name}: expected {len(Terrain)} [[terrain]] records (one per Terrain, "
            f"in enum order), got {len(records)}; missing {', '.join(missing)}"
        )
    return tuple(records.values())


def load_content(directory: Path | None = None) -> Content:
    """Load and cross-check all rules data files.

    Args:
        directory: Folder holding ``terrain.toml``, ``items.toml``,
            ``monsters.toml`` and ``classes.toml``; the shipped data when None.

    Returns:
        The checked ``Content``.

    Raises:
        ContentError: A file is missing or not TOML, or a record breaks a rule
            documented at the top of its file; the message names the file,
            the record and the field.
    """
    folder = DATA_DIR if directory is None else directory
    terrain = _load_terrain(folder / "terrain.toml")
    items = load_records(folder / "items.toml", "item", _ITEM_SPEC, ItemDef, _item_rules)
    monsters = load_records(
        folder / "monsters.toml", "monster", _MONSTER_SPEC, MonsterDef, _monster_rules
    )
    classes = load_records(folder / "classes.toml", "class", _CLASS_SPEC, ClassDef, _class_rules)
    for cls in classes.values():
        for item_key in cls.start_items:
            if item_key not in items:
                raise Where("classes.toml", "class", repr(cls.key)).fail(
                    "start_items", f"unknown item {item_key!r} (not in items.toml)"
                )
    return Content(terrain=terrain, monsters=monsters, classes=classes, items=items)


@functools.cache
def default_content() -> Content:
    """Return the shipped content, loaded once and shared.

    Raises:
        ContentError: The shipped data is invalid (a packaging bug).
    """
    return load_content()
