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
"""

from __future__ import annotations

import functools
import math
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, TypeVar

from server.content.schema import (
    ABILITIES,
    COLOURS,
    DAMAGE_TYPES,
    EFFECT_RULES,
    EFFECTS,
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

_T = TypeVar("_T")
_Check = Callable[[Any], Any]
_KEY_RE: Final = re.compile(r"[a-z][a-z0-9_]*")


class _Invalid(Exception):
    """A value failed its check; ``sub`` names the entry inside a table field."""

    def __init__(self, message: str, sub: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.sub = sub


# --- value checks: each returns the converted value or raises _Invalid -------------


def _int(lo: int, hi: int | None = None) -> _Check:
    want = f"an int in {lo}..{hi}" if hi is not None else f"an int >= {lo}"

    def check(value: Any) -> int:
        if type(value) is not int or value < lo or (hi is not None and value > hi):
            raise _Invalid(f"must be {want}, got {value!r}")
        return value

    return check


def _float(lo: float, hi: float | None = None, *, strict_lo: bool = False) -> _Check:
    if hi is not None:
        want = f"a number in {lo}..{hi}" + (f" other than {lo}" if strict_lo else "")
    else:
        want = f"a number {'>' if strict_lo else '>='} {lo}"

    def check(value: Any) -> float:
        if type(value) not in (int, float) or not math.isfinite(value):
            raise _Invalid(f"must be {want}, got {value!r}")
        low_ok = value > lo if strict_lo else value >= lo
        if not low_ok or (hi is not None and value > hi):
            raise _Invalid(f"must be {want}, got {value!r}")
        return float(value)

    return check


def _bool(value: Any) -> bool:
    if type(value) is not bool:
        raise _Invalid(f"must be true or false, got {value!r}")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _Invalid(f"must be a non-empty string, got {value!r}")
    return value


def _key(value: Any) -> str:
    if not isinstance(value, str) or not _KEY_RE.fullmatch(value):
        raise _Invalid(f"must be a lower-case identifier ([a-z][a-z0-9_]*), got {value!r}")
    return value


def _glyph(value: Any) -> str:
    if not isinstance(value, str) or len(value) != 1 or not value.isprintable():
        raise _Invalid(f"must be one printable character, got {value!r}")
    return value


def _choice(options: tuple[str, ...], what: str) -> _Check:
    def check(value: Any) -> str:
        if not isinstance(value, str) or value not in options:
            raise _Invalid(f"must be a {what} ({', '.join(options)}), got {value!r}")
        return value

    return check


def _names(allowed: tuple[str, ...] | None, what: str, *, unique: bool) -> _Check:
    def check(value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _Invalid(f"must be a list of strings, got {value!r}")
        for name in value:
            if allowed is not None and name not in allowed:
                raise _Invalid(f"unknown {what} {name!r} (known: {', '.join(allowed)})")
        if unique:
            twice = [name for i, name in enumerate(value) if name in value[:i]]
            if twice:
                raise _Invalid(f"lists the {what} {twice[0]!r} twice")
        return tuple(value)

    return check


def _resist(value: Any) -> Mapping[str, int]:
    if not isinstance(value, dict):
        raise _Invalid(f"must be a table of damage type = level, got {value!r}")
    level = _int(RESIST_MIN, RESIST_MAX)
    out: dict[str, int] = {}
    for damage_type, raw in value.items():
        if damage_type not in DAMAGE_TYPES:
            raise _Invalid(
                f"unknown damage type {damage_type!r} (known: {', '.join(DAMAGE_TYPES)})"
            )
        try:
            out[damage_type] = level(raw)
        except _Invalid as exc:
            raise _Invalid(exc.message, damage_type) from None
    return MappingProxyType(out)


def _dice(value: Any) -> tuple[int, int]:
    """``[count, sides]``: count 1..MAX_DICE, sides 1..MAX_SIDES."""
    want = f"a list [count, sides], count 1..{MAX_DICE}, sides 1..{MAX_SIDES}"
    if (
        not isinstance(value, list)
        or len(value) != 2
        or any(type(v) is not int for v in value)
        or not 1 <= value[0] <= MAX_DICE
        or not 1 <= value[1] <= MAX_SIDES
    ):
        raise _Invalid(f"must be {want}, got {value!r}")
    return (value[0], value[1])


def _charges(value: Any) -> tuple[int, int]:
    """``[lo, hi]``: an inclusive range with 0 <= lo <= hi, 1 <= hi <= MAX_CHARGES."""
    want = f"a list [lo, hi] with 0 <= lo <= hi and 1 <= hi <= {MAX_CHARGES}"
    if (
        not isinstance(value, list)
        or len(value) != 2
        or any(type(v) is not int for v in value)
        or not 0 <= value[0] <= value[1]
        or not 1 <= value[1] <= MAX_CHARGES
    ):
        raise _Invalid(f"must be {want}, got {value!r}")
    return (value[0], value[1])


def _keys(what: str) -> _Check:
    """A list of distinct lower-case identifiers (keys of another file, e.g. spells)."""

    def check(value: Any) -> tuple[str, ...]:
        if not isinstance(value, list):
            raise _Invalid(f"must be a list of {what} keys, got {value!r}")
        for name in value:
            if not isinstance(name, str) or not _KEY_RE.fullmatch(name):
                raise _Invalid(
                    f"{what} key must be a lower-case identifier ([a-z][a-z0-9_]*), got {name!r}"
                )
        twice = [name for i, name in enumerate(value) if name in value[:i]]
        if twice:
            raise _Invalid(f"lists the {what} {twice[0]!r} twice")
        return tuple(value)

    return check


_BOOST_CHECKS: Final[dict[str, _Check]] = {
    "health": _int(0),
    "energy": _int(0),
    "power": _int(0),
    "defence": _int(0),
    "accuracy": _float(0.0),
    "dodge": _float(0.0),
}


def _boosts(value: Any) -> Boosts:
    if not isinstance(value, dict):
        raise _Invalid(f"must be a table ({', '.join(_BOOST_CHECKS)}), got {value!r}")
    for name in value:
        if name not in _BOOST_CHECKS:
            raise _Invalid(f"unknown entry (allowed: {', '.join(_BOOST_CHECKS)})", name)
    out: dict[str, Any] = {}
    for name, check in _BOOST_CHECKS.items():
        if name not in value:
            raise _Invalid("missing required entry", name)
        try:
            out[name] = check(value[name])
        except _Invalid as exc:
            raise _Invalid(exc.message, name) from None
    return Boosts(**out)


# --- record specs: field name -> (check, default); _REQUIRED marks no default -----

_REQUIRED: Final = object()
_Spec = dict[str, tuple[_Check, Any]]

_DEPTH = _int(1, MAX_DEPTH)

_TERRAIN_SPEC: Final[_Spec] = {
    "key": (_key, _REQUIRED),
    "name": (_text, _REQUIRED),
    "glyph": (_glyph, _REQUIRED),
    "colour": (_choice(COLOURS, "colour"), _REQUIRED),
    "passable": (_bool, _REQUIRED),
    "transparent": (_bool, _REQUIRED),
}

_DAMAGE_TYPE = _choice(DAMAGE_TYPES, "damage type")
_ITEM_STAT = _int(-ITEM_STAT_LIMIT, ITEM_STAT_LIMIT)

_ITEM_SPEC: Final[_Spec] = {
    "key": (_key, _REQUIRED),
    "name": (_text, _REQUIRED),
    "glyph": (_glyph, _REQUIRED),
    "colour": (_choice(COLOURS, "colour"), _REQUIRED),
    "category": (_choice(ITEM_CATEGORIES, "category"), _REQUIRED),
    "weight": (_int(0), _REQUIRED),
    "nutrition": (_int(0), 0),
    "depth_min": (_DEPTH, _REQUIRED),
    "depth_max": (_DEPTH, _REQUIRED),
    "rarity": (_int(1), _REQUIRED),
    "power": (_ITEM_STAT, None),
    "defence": (_ITEM_STAT, 0),
    "resist": (_resist, MappingProxyType({})),
    "enchant": (_DAMAGE_TYPE, None),
    "throw_range": (_int(1, 20), None),
    "fragile": (_bool, False),
    "vegetarian": (_bool, False),
    "rustproof": (_bool, False),
    "acidproof": (_bool, False),
    "cursed": (_bool, False),
    "blessed": (_bool, False),
    "metallic": (_bool, False),
    "artifact": (_bool, False),
    "required_strength": (_int(0, 50), 0),
    "accuracy": (_float(0.0, 10.0, strict_lo=True), 1.0),
    "shield_size": (_choice(SHIELD_SIZES, "shield size"), None),
    "charges": (_charges, None),
    "effect": (_choice(EFFECTS, "known effect"), None),
    "damage_type": (_DAMAGE_TYPE, None),
    "dice": (_dice, None),
    "spell": (_key, None),
    "description": (_text, ""),
}

_MONSTER_SPEC: Final[_Spec] = {
    "key": (_key, _REQUIRED),
    "name": (_text, _REQUIRED),
    "glyph": (_glyph, _REQUIRED),
    "colour": (_choice(COLOURS, "colour"), _REQUIRED),
    "level": (_int(0), _REQUIRED),
    "health": (_int(1), _REQUIRED),
    "energy": (_int(0), _REQUIRED),
    "power": (_int(0), _REQUIRED),
    "defence": (_int(0), _REQUIRED),
    "courage": (_float(0.0, 1.0), _REQUIRED),
    "accuracy": (_float(0.0, strict_lo=True), _REQUIRED),
    "dodge": (_float(0.0), _REQUIRED),
    "speed": (_int(1, 20), _REQUIRED),
    "sight": (_int(1, 20), _REQUIRED),
    "depth_min": (_DEPTH, _REQUIRED),
    "depth_max": (_DEPTH, _REQUIRED),
    "rarity": (_int(1), _REQUIRED),
    "xp": (_int(0), _REQUIRED),
    "flags": (_names(MONSTER_FLAGS, "flag", unique=True), ()),
    "resist": (_resist, MappingProxyType({})),
    "melee_type": (_DAMAGE_TYPE, None),
    "breath": (_DAMAGE_TYPE, None),
    "breath_dice": (_dice, None),
    "spells": (_keys("spell"), ()),
    "spell_power": (_int(1, 100), None),
    "abilities": (_names(ABILITIES, "ability", unique=True), ()),
}

_CLASS_SPEC: Final[_Spec] = {
    "key": (_key, _REQUIRED),
    "name": (_text, _REQUIRED),
    "colour": (_choice(COLOURS, "colour"), _REQUIRED),
    "hidden": (_bool, _REQUIRED),
    "health": (_int(1), _REQUIRED),
    "energy": (_int(0), _REQUIRED),
    "power": (_int(0), _REQUIRED),
    "defence": (_int(0), _REQUIRED),
    "accuracy": (_float(0.0, strict_lo=True), _REQUIRED),
    "dodge": (_float(0.0), _REQUIRED),
    "speed": (_int(1, 20), _REQUIRED),
    "strength": (_int(1, 50), _REQUIRED),
    "miss_chance": (_float(0.0, 1.0), _REQUIRED),
    "boosts": (_boosts, _REQUIRED),
    "start_items": (_names(None, "item", unique=False), _REQUIRED),
    "role": (_choice(ROLES, "role"), _REQUIRED),
    "casting_stat": (_int(3, 25), _REQUIRED),
    "abilities": (_names(ABILITIES, "ability", unique=True), ()),
    "sneak_attack": (_float(0.0, 10.0), 0.0),
    "special_choices": (_names(ABILITIES, "ability", unique=True), _REQUIRED),
}


@dataclass(frozen=True, slots=True)
class _Where:
    """Names a record in error messages: ``monsters.toml: monster 'rat'``."""

    file: str
    kind: str
    ident: str

    def fail(self, field: str, message: str) -> ContentError:
        return ContentError(f"{self.file}: {self.kind} {self.ident}: field {field!r}: {message}")


# --- rules across the fields of one record -------------------------------------------
# Each takes the record's name, the fields present in the file and the checked
# values, and raises the record's ContentError for a field that does not fit.

_Rules = Callable[[_Where, set[str], dict[str, Any]], None]

_NEEDS_EFFECT: Final = ("potion", "scroll", "wand", "horn")
_WEAPONS: Final = ("weapon", "thrown")


def _item_rules(where: _Where, present: set[str], v: dict[str, Any]) -> None:
    """Cross-field rules of ``items.toml`` (documented at the top of that file)."""
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
    if v["cursed"] and v["blessed"]:
        raise where.fail("blessed", "an item cannot be both cursed and blessed")
    _effect_rules(where, v)


def _effect_rules(where: _Where, v: dict[str, Any]) -> None:
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


def _monster_rules(where: _Where, present: set[str], v: dict[str, Any]) -> None:
    """Cross-field rules of ``monsters.toml``: breath and its dice, spells and their power."""
    if (v["breath"] is None) != (v["breath_dice"] is None):
        name = "breath_dice" if v["breath_dice"] is None else "breath"
        raise where.fail(name, "breath and breath_dice go together: give both or neither")
    if v["spell_power"] is not None and not v["spells"]:
        raise where.fail("spell_power", "only a monster with spells has a spell power")


def _class_rules(where: _Where, present: set[str], v: dict[str, Any]) -> None:
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


def _read_records(path: Path, kind: str) -> list[dict[str, Any]]:
    """Read ``path`` and return its ``[[kind]]`` tables, checking the top-level shape."""
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except OSError as exc:
        raise ContentError(f"{path.name}: cannot read: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ContentError(f"{path.name}: invalid TOML: {exc}") from exc
    for name in data:
        if name != kind:
            raise ContentError(
                f"{path.name}: unknown top-level key {name!r} (only [[{kind}]] tables allowed)"
            )
    records = data.get(kind, [])
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise ContentError(f"{path.name}: must hold [[{kind}]] tables")
    if not records:
        raise ContentError(f"{path.name}: has no [[{kind}]] records")
    return records


def _build(
    where: _Where,
    raw: dict[str, Any],
    spec: _Spec,
    cls: Callable[..., _T],
    rules: _Rules | None = None,
) -> _T:
    """Check every field of one record against ``spec`` (then ``rules``) and construct ``cls``."""
    for name in raw:
        if name not in spec:
            raise where.fail(name, f"unknown field (allowed: {', '.join(spec)})")
    values: dict[str, Any] = {}
    for name, (check, default) in spec.items():
        if name not in raw:
            if default is _REQUIRED:
                raise where.fail(name, "missing required field")
            values[name] = default
            continue
        try:
            values[name] = check(raw[name])
        except _Invalid as exc:
            raise where.fail(f"{name}.{exc.sub}" if exc.sub else name, exc.message) from None
    if "depth_max" in values and values["depth_max"] < values["depth_min"]:
        raise where.fail(
            "depth_max", f"must be >= depth_min ({values['depth_min']}), got {values['depth_max']}"
        )
    if rules is not None:
        rules(where, set(raw), values)
    return cls(**values)


def _load_file(
    path: Path, kind: str, spec: _Spec, cls: Callable[..., _T], rules: _Rules | None = None
) -> dict[str, _T]:
    """Load every ``[[kind]]`` record of ``path`` into a dict by key, in file order."""
    out: dict[str, _T] = {}
    first_index: dict[str, int] = {}
    for index, raw in enumerate(_read_records(path, kind), start=1):
        key = raw.get("key")
        valid = isinstance(key, str) and _KEY_RE.fullmatch(key) is not None
        where = _Where(path.name, kind, repr(key) if valid else f"#{index}")
        record = _build(where, raw, spec, cls, rules)
        record_key: str = raw["key"]  # checked by _build
        if record_key in out:
            raise where.fail(
                "key",
                f"duplicate key {record_key!r} (first used by record #{first_index[record_key]})",
            )
        out[record_key] = record
        first_index[record_key] = index
    return out


def _load_terrain(path: Path) -> tuple[TerrainDef, ...]:
    """Load ``terrain.toml``: exactly one record per ``Terrain``, in enum order."""
    records = _load_file(path, "terrain", _TERRAIN_SPEC, TerrainDef)
    for index, (record, expected) in enumerate(zip(records.values(), Terrain), start=1):
        if record.key != expected.name.lower():
            raise _Where(path.name, "terrain", repr(record.key)).fail(
                "key",
                f"record #{index} must be {expected.name.lower()!r} "
                "(one record per Terrain, in enum order)",
            )
    if len(records) > len(Terrain):
        extra = list(records)[len(Terrain)]
        raise _Where(path.name, "terrain", repr(extra)).fail(
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
    items = _load_file(folder / "items.toml", "item", _ITEM_SPEC, ItemDef, _item_rules)
    monsters = _load_file(
        folder / "monsters.toml", "monster", _MONSTER_SPEC, MonsterDef, _monster_rules
    )
    classes = _load_file(folder / "classes.toml", "class", _CLASS_SPEC, ClassDef, _class_rules)
    for cls in classes.values():
        for item_key in cls.start_items:
            if item_key not in items:
                raise _Where("classes.toml", "class", repr(cls.key)).fail(
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
