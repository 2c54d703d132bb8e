"""Strict loader for ``damage_types.toml``: damage types, resistance rows, terrain and item rules.

The file (documented field by field at its top) holds four parts: ``[status]``
(stacking of stun, confusion and fear), ``[haters]`` (item categories each
element destroys), ``[[terrain]]`` (damage adjustment and dodge per terrain)
and one ``[[damage_type]]`` record per entry of ``DAMAGE_TYPES``, in that
order. Everything is checked: unknown, missing and duplicate keys, wrong types
(a bool is never a number), bad fractions, unknown names and out-of-range
numbers raise ``ContentError`` naming the file, the record and the field.

Besides frozen definitions, the loader builds numpy lookup tables indexed
``[terrain, damage_type]`` so callers can adjust whole arrays at once.
Source of the numbers: seed 003 (``seeds/003_870af7f93e8e7619.txt``) and
``reference/angband_gf.md``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from server.content.checks import (
    KEY_RE,
    REQUIRED,
    Check,
    Invalid,
    Where,
    boolean,
    check_fields,
    choice,
    integer,
    list_of,
    read_toml,
    record_ident,
    require_top_level,
    text,
)
from server.content.schema import (
    DAMAGE_TYPES,
    ITEM_CATEGORIES,
    MONSTER_FLAGS,
    N_TERRAIN,
    RESIST_MAX,
    RESIST_MIN,
    ROLES,
    ContentError,
    Terrain,
)

DAMAGE_FILE: Final = Path(__file__).with_name("data") / "damage_types.toml"
"""The shipped damage-type data."""

N_DAMAGE_TYPES: Final = len(DAMAGE_TYPES)
"""Number of damage types; tables indexed by damage type have this length."""


class TerrainShare(IntEnum):
    """How much of the terrain adjustment a damage type takes, in halves (seed 003 "Terr")."""

    NONE = 0
    HALF = 1
    FULL = 2


class SideEffect(IntEnum):
    """A side effect of a damage type on a monster; values are sent on the wire."""

    STUN = 0
    CONFUSION = 1
    TELEPORT = 2
    KNOCK_BACK = 3
    SLOW = 4
    SLEEP = 5
    FEAR = 6
    POLYMORPH = 7
    HEAL = 8
    CLONE = 9
    DRAIN_ENERGY = 10
    HASTE = 11
    HOLD = 12


class AmountRoll(IntEnum):
    """How a side effect's amount is drawn: exactly, uniformly in ``1..amount``,
    as ``base + dice d sides`` (seed 003's 3d(dam / 5) + 1), or uniformly in
    ``2..amount`` (note p)."""

    FIXED = 0
    UNIFORM = 1
    DICE = 2
    FROM_TWO = 3


class Save(IntEnum):
    """Which saving throw a side effect allows (see ``StatusRules``)."""

    NONE = 0
    LEVEL = 1
    POLYMORPH = 2
    POLY_BOLT = 3
    HOLD = 4
    HEAVY = 5


@dataclass(frozen=True, slots=True)
class ResistRow:
    """One row of a resistance chain: ``level`` (non-zero) or ``flag`` (non-empty) matches."""

    level: int
    flag: str
    take: tuple[Fraction, ...]
    of: str = ""
    otherwise: bool = False


@dataclass(frozen=True, slots=True)
class SideEffectDef:
    """One side effect of a damage type (fields as in the data file)."""

    effect: SideEffect
    chance: Fraction
    above: int
    base: int
    divisor: int
    cap: int
    cap_above: int
    roll: AmountRoll
    unless_resisted: bool
    save: Save
    dice: int = 0
    sides: int = 0
    only_flag: str = ""
    unless_resists: str = ""
    save_bonus: int = -1
    save_bonus_unique: int = -1
    save_bonus_undead: int = -1
    hold_scale: Fraction = Fraction(1)
    hold_chance: Fraction = Fraction(0)


@dataclass(frozen=True, slots=True)
class BoostDef:
    """A chance that a player's attack does ``extra`` more (seed 003's class
    "supercharge", notes A-C, I-K); ``role`` "" is any player."""

    role: str
    chance: Fraction
    extra: Fraction


@dataclass(frozen=True, slots=True)
class SurgeDef:
    """Storm's note (n): unless resisted, ``chance`` of ``extra`` more damage."""

    chance: Fraction
    extra: Fraction


@dataclass(frozen=True, slots=True)
class TerrainEffectDef:
    """A terrain change a damage type may cause (``source`` is the data's ``from``)."""

    source: Terrain
    to: tuple[Terrain, ...]
    above: int
    low: int
    high: int
    high_per_water: int
    shift_per_water: int


@dataclass(frozen=True, slots=True)
class FloorItemRule:
    """Destruction of floor items of ``categories`` (the ``haters`` class)."""

    haters: str
    categories: tuple[str, ...]
    threshold: int
    ignore: bool


@dataclass(frozen=True, slots=True)
class DamageTypeDef:
    """Everything one damage type does (``[[damage_type]]`` record)."""

    key: str
    name: str
    gf: tuple[str, ...]
    terrain: TerrainShare
    deals_damage: bool
    implied_by: tuple[str, ...]
    resist: tuple[ResistRow, ...]
    side_effects: tuple[SideEffectDef, ...]
    terrain_effects: tuple[TerrainEffectDef, ...]
    floor_items: tuple[FloorItemRule, ...]
    boost: tuple[BoostDef, ...] = ()
    surge: SurgeDef | None = None
    armour_save: bool = False
    health_immune: bool = False


@dataclass(frozen=True, slots=True)
class TerrainAdjustDef:
    """Damage adjustment on one terrain; ``adjust`` entries replace ``all``."""

    terrain: Terrain
    dodge: Fraction
    all: Fraction
    adjust: Mapping[str, Fraction]

    def fraction(self, damage_type: str) -> Fraction:
        """The (unscaled) adjustment fraction for ``damage_type`` on this terrain."""
        return self.adjust.get(damage_type, self.all)


@dataclass(frozen=True, slots=True)
class StatusRules:
    """Stacking, immunities and saves shared by all side effects (``[status]``)."""

    max_turns: int
    restack: Fraction
    stun_immune: tuple[str, ...]
    confusion_immune: tuple[str, ...]
    flag_immune: Mapping[str, SideEffect]
    save_bonus: int
    save_bonus_unique: int
    polymorph_die: int


@dataclass(frozen=True, slots=True, eq=False)
class DamageTypes:
    """The loaded file plus its lookup tables (all arrays read-only).

    Attributes:
        types: One definition per ``DAMAGE_TYPES`` entry, in that order.
        index: Damage type key -> its index in ``types`` and table columns.
        status: The ``[status]`` rules.
        haters: Hater class -> item categories.
        terrain: One ``TerrainAdjustDef`` per ``Terrain``, indexed by value
            (zero adjustment and no dodge for terrain without a record).
        adjust_num, adjust_den: ``int32[N_TERRAIN, N_DAMAGE_TYPES]``, the
            unscaled adjustment fraction (before the type's terrain share).
        share: ``int8[N_DAMAGE_TYPES]``, the ``TerrainShare`` of each type.
        terrain_adjust: ``float64[N_TERRAIN, N_DAMAGE_TYPES]``, the effective
            adjustment ``num / den * share / 2`` for vectorised estimates (the
            exact rule truncates twice; see ``server.sim.damage``).
        dodge: ``float64[N_TERRAIN]``, the dodge chance of a mobile monster.
    """

    types: tuple[DamageTypeDef, ...]
    index: Mapping[str, int]
    status: StatusRules
    haters: Mapping[str, tuple[str, ...]]
    terrain: tuple[TerrainAdjustDef, ...]
    adjust_num: NDArray[np.int32]
    adjust_den: NDArray[np.int32]
    share: NDArray[np.int8]
    terrain_adjust: NDArray[np.float64]
    dodge: NDArray[np.float64]

    def __getitem__(self, key: str) -> DamageTypeDef:
        """The definition of damage type ``key``; raises KeyError if unknown."""
        return self.types[self.index[key]]


# --- value checks: each returns the converted value or raises Invalid ----------------

_FRACTION_RE: Final = re.compile(r"[+-]?[0-9]+(?:/[0-9]+)?")
_GF_RE: Final = re.compile(r"GF_[A-Z_]+")
_TERRAIN_NAMES: Final = tuple(t.name.lower() for t in Terrain)
_EFFECT_NAMES: Final = tuple(e.name.lower() for e in SideEffect)
_SAVE_NAMES: Final = tuple(e.name.lower() for e in Save)
_ROLL_NAMES: Final = tuple(e.name.lower() for e in AmountRoll)


def _fraction(lo: Fraction, hi: Fraction, *, open_lo: bool = False) -> Check:
    """A fraction string ``"n/d"`` (or ``"n"``) in ``[lo, hi]`` (``(lo, hi]`` if ``open_lo``)."""
    want = f'a fraction string "n/d" in {"(" if open_lo else "["}{lo}, {hi}]'

    def check(value: Any) -> Fraction:
        if not isinstance(value, str) or not _FRACTION_RE.fullmatch(value):
            raise Invalid(f"must be {want}, got {value!r}")
        if "/" in value and int(value.split("/")[1]) == 0:
            raise Invalid(f"must be {want} with a non-zero denominator, got {value!r}")
        result = Fraction(value)
        if result < lo or result > hi or (open_lo and result == lo):
            raise Invalid(f"must be {want}, got {value!r}")
        return result

    return check


_DAMAGE_TYPE = choice(DAMAGE_TYPES, "damage type")
_TERRAIN = choice(_TERRAIN_NAMES, "terrain")
_ANY_FRACTION = _fraction(Fraction(-1), Fraction(1))
_PROBABILITY = _fraction(Fraction(0), Fraction(1))


def _gf(value: Any) -> str:
    if not isinstance(value, str) or not _GF_RE.fullmatch(value):
        raise Invalid(f"must be a GF_ name (GF_[A-Z_]+), got {value!r}")
    return value


def _resist_row(value: Any) -> ResistRow:
    raw = check_fields(value, {
        "level": (integer(RESIST_MIN, RESIST_MAX), 0),
        "flag": (choice(MONSTER_FLAGS, "monster flag"), ""),
        "of": (_DAMAGE_TYPE, ""),
        "otherwise": (boolean, False),
        "take": (list_of(_fraction(Fraction(0), Fraction(10)), nonempty=True), REQUIRED),
    })  # fmt: skip
    if raw["otherwise"]:
        if raw["level"] or raw["flag"] or raw["of"]:
            raise Invalid("an 'otherwise' row takes no 'level', 'flag' or 'of'", "otherwise")
        return ResistRow(**raw)
    if (raw["level"] == 0) == (raw["flag"] == ""):
        raise Invalid("a row needs exactly one of a non-zero 'level' or a 'flag'", "level")
    if raw["of"] and raw["flag"]:
        raise Invalid("'of' goes with a 'level', not a 'flag'", "of")
    return ResistRow(**raw)


def _side_effect(value: Any) -> SideEffectDef:
    raw = check_fields(value, {
        "effect": (choice(_EFFECT_NAMES, "side effect"), REQUIRED),
        "chance": (_fraction(Fraction(0), Fraction(1), open_lo=True), REQUIRED),
        "above": (integer(0), REQUIRED),
        "base": (integer(0), REQUIRED),
        "divisor": (integer(0), REQUIRED),
        "cap": (integer(0), REQUIRED),
        "cap_above": (integer(0), REQUIRED),
        "roll": (choice(_ROLL_NAMES, "roll"), REQUIRED),
        "unless_resisted": (boolean, REQUIRED),
        "save": (choice(_SAVE_NAMES, "save"), REQUIRED),
        "dice": (integer(0, 20), 0),
        "sides": (integer(0, 1000), 0),
        "only_flag": (choice(MONSTER_FLAGS, "monster flag"), ""),
        "unless_resists": (_DAMAGE_TYPE, ""),
        "save_bonus": (integer(0, 100), -1),
        "save_bonus_unique": (integer(0, 100), -1),
        "save_bonus_undead": (integer(0, 100), -1),
        "hold_scale": (_fraction(Fraction(0), Fraction(10), open_lo=True), Fraction(1)),
        "hold_chance": (_PROBABILITY, Fraction(0)),
    })  # fmt: skip
    if raw["base"] == 0 and raw["divisor"] == 0 and raw["sides"] == 0:
        raise Invalid("base and divisor are both 0, so the amount is always 0", "base")
    if (raw["roll"] == "dice") != (raw["dice"] > 0):
        raise Invalid("'dice' > 0 goes with roll = \"dice\", and only with it", "dice")
    if raw["sides"] and raw["divisor"]:
        raise Invalid("a die has fixed 'sides' or damage / 'divisor' sides, not both", "sides")
    raw["effect"] = SideEffect[raw["effect"].upper()]
    raw["roll"] = AmountRoll[raw["roll"].upper()]
    raw["save"] = Save[raw["save"].upper()]
    return SideEffectDef(**raw)


def _terrain_effect(value: Any) -> TerrainEffectDef:
    raw = check_fields(value, {
        "from": (_TERRAIN, REQUIRED),
        "to": (list_of(_TERRAIN, nonempty=True), REQUIRED),
        "above": (integer(0), REQUIRED),
        "low": (integer(0), REQUIRED),
        "high": (integer(0), REQUIRED),
        "high_per_water": (integer(0), REQUIRED),
        "shift_per_water": (integer(-10_000, 10_000), REQUIRED),
    })  # fmt: skip
    if raw["high"] < raw["low"]:
        raise Invalid(f"must be >= low ({raw['low']}), got {raw['high']}", "high")
    return TerrainEffectDef(
        source=Terrain[raw.pop("from").upper()],
        to=tuple(Terrain[t.upper()] for t in raw.pop("to")),
        **raw,
    )


def _floor_rule(haters: Mapping[str, tuple[str, ...]]) -> Check:
    def check(value: Any) -> FloorItemRule:
        raw = check_fields(value, {
            "haters": (choice(tuple(haters), "[haters] name"), REQUIRED),
            "threshold": (integer(0), REQUIRED),
            "ignore": (boolean, REQUIRED),
        })  # fmt: skip
        if raw["ignore"] and raw["haters"] not in DAMAGE_TYPES:
            raise Invalid(f"no ignore flag for {raw['haters']!r} (not a damage type)", "ignore")
        return FloorItemRule(categories=haters[raw["haters"]], **raw)

    return check


def _boost(value: Any) -> BoostDef:
    raw = check_fields(value, {
        "role": (choice(("", *ROLES), "role"), REQUIRED),
        "chance": (_fraction(Fraction(0), Fraction(1), open_lo=True), REQUIRED),
        "extra": (_fraction(Fraction(0), Fraction(10), open_lo=True), REQUIRED),
    })  # fmt: skip
    return BoostDef(**raw)


def _surge(value: Any) -> SurgeDef:
    raw = check_fields(value, {
        "chance": (_fraction(Fraction(0), Fraction(1), open_lo=True), REQUIRED),
        "extra": (_fraction(Fraction(0), Fraction(10), open_lo=True), REQUIRED),
    })  # fmt: skip
    return SurgeDef(**raw)


def _check_chain(rows: tuple[ResistRow, ...]) -> None:
    """Reject resistance rows that can never match because an earlier row wins."""
    flags: set[str] = set()
    last_pos, last_neg = RESIST_MAX + 1, RESIST_MIN - 1
    for number, row in enumerate(rows, start=1):
        if row.otherwise:
            if number != len(rows):
                raise Invalid("an 'otherwise' row must come last", f"[{number}].otherwise")
            continue
        if row.of:
            continue
        if row.flag:
            if row.flag in flags:
                raise Invalid(f"flag {row.flag!r} already has a row", f"[{number}].flag")
            flags.add(row.flag)
        elif row.level > 0:
            if row.level >= last_pos:
                raise Invalid(f"level {row.level} is hidden by an earlier row", f"[{number}].level")
            last_pos = row.level
        else:
            if row.level <= last_neg:
                raise Invalid(f"level {row.level} is hidden by an earlier row", f"[{number}].level")
            last_neg = row.level


def _damage_type(haters: Mapping[str, tuple[str, ...]], value: Any) -> DamageTypeDef:
    raw = check_fields(value, {
        "key": (_DAMAGE_TYPE, REQUIRED),
        "name": (text, REQUIRED),
        "gf": (list_of(_gf, unique=True, nonempty=True), REQUIRED),
        "terrain": (choice(("full", "half", "none"), "terrain share"), REQUIRED),
        "deals_damage": (boolean, REQUIRED),
        "implied_by": (list_of(_DAMAGE_TYPE, unique=True), ()),
        "resist": (list_of(_resist_row), ()),
        "side_effects": (list_of(_side_effect), ()),
        "terrain_effects": (list_of(_terrain_effect), ()),
        "floor_items": (list_of(_floor_rule(haters)), ()),
        "boost": (list_of(_boost), ()),
        "surge": (_surge, None),
        "armour_save": (boolean, False),
        "health_immune": (boolean, False),
    })  # fmt: skip
    try:
        _check_chain(raw["resist"])
    except Invalid as exc:
        raise exc.under("resist") from None
    if raw["key"] in raw["implied_by"]:
        raise Invalid("a damage type cannot imply itself", "implied_by")
    sources = [fx.source for fx in raw["terrain_effects"]]
    for number, source in enumerate(sources, start=1):
        if source in sources[: number - 1]:
            raise Invalid(
                f"second row from {source.name.lower()!r}", f"terrain_effects[{number}].from"
            )
    raw["terrain"] = TerrainShare[raw["terrain"].upper()]
    return DamageTypeDef(**raw)


# --- the file ----------------------------------------------------------------------

_TOP: Final = ("status", "haters", "terrain", "damage_type")


def _records(file: str, data: dict[str, Any], kind: str) -> list[Any]:
    records = data[kind]
    if not isinstance(records, list) or not records:
        raise ContentError(f"{file}: must hold [[{kind}]] tables")
    return records


def _flag_immune(value: Any) -> Mapping[str, SideEffect]:
    if not isinstance(value, dict):
        raise Invalid(f"must be a table of monster flag = side effect, got {value!r}")
    out: dict[str, SideEffect] = {}
    for flag, effect in value.items():
        try:
            choice(MONSTER_FLAGS, "monster flag")(flag)
            out[flag] = SideEffect[choice(_EFFECT_NAMES, "side effect")(effect).upper()]
        except Invalid as exc:
            raise exc.under(flag) from None
    return MappingProxyType(out)


def _load_status(file: str, raw: Any) -> StatusRules:
    try:
        return StatusRules(**check_fields(raw, {
            "max_turns": (integer(1), REQUIRED),
            "restack": (_PROBABILITY, REQUIRED),
            "stun_immune": (list_of(_DAMAGE_TYPE, unique=True), REQUIRED),
            "confusion_immune": (list_of(_DAMAGE_TYPE, unique=True), REQUIRED),
            "flag_immune": (_flag_immune, REQUIRED),
            "save_bonus": (integer(0), REQUIRED),
            "save_bonus_unique": (integer(0), REQUIRED),
            "polymorph_die": (integer(1), REQUIRED),
        }))  # fmt: skip
    except Invalid as exc:
        raise Where(file, "status").reject(exc) from None


def _load_haters(file: str, raw: Any) -> Mapping[str, tuple[str, ...]]:
    if not isinstance(raw, dict):
        raise ContentError(f"{file}: haters: must be a table, got {raw!r}")
    check = list_of(choice(ITEM_CATEGORIES, "item category"), unique=True)
    out: dict[str, tuple[str, ...]] = {}
    for name, categories in raw.items():
        try:
            if not KEY_RE.fullmatch(name):
                raise Invalid(f"must be a lower-case identifier, got {name!r}")
            out[name] = check(categories)
        except Invalid as exc:
            raise Where(file, "haters").reject(exc.under(name)) from None
    return MappingProxyType(out)


def _adjust_table(value: Any) -> Mapping[str, Fraction]:
    if not isinstance(value, dict):
        raise Invalid(f"must be a table of damage type = fraction, got {value!r}")
    out: dict[str, Fraction] = {}
    for name, raw in value.items():
        try:
            out[_DAMAGE_TYPE(name)] = _ANY_FRACTION(raw)
        except Invalid as exc:
            raise exc.under(name) from None
    return MappingProxyType(out)


def _load_terrain(file: str, records: list[Any]) -> tuple[TerrainAdjustDef, ...]:
    found: dict[Terrain, TerrainAdjustDef] = {}
    for number, raw in enumerate(records, start=1):
        where = Where(file, "terrain", record_ident(raw, number))
        try:
            fields = check_fields(raw, {
                "key": (_TERRAIN, REQUIRED),
                "dodge": (_PROBABILITY, REQUIRED),
                "all": (_ANY_FRACTION, REQUIRED),
                "adjust": (_adjust_table, REQUIRED),
            })  # fmt: skip
        except Invalid as exc:
            raise where.reject(exc) from None
        terrain = Terrain[fields.pop("key").upper()]
        if terrain in found:
            raise where.fail("key", "duplicate terrain record")
        found[terrain] = TerrainAdjustDef(terrain=terrain, **fields)
    none: Mapping[str, Fraction] = MappingProxyType({})
    return tuple(found.get(t, TerrainAdjustDef(t, Fraction(0), Fraction(0), none)) for t in Terrain)


def _load_types(
    file: str, records: list[Any], haters: Mapping[str, tuple[str, ...]]
) -> tuple[DamageTypeDef, ...]:
    out: list[DamageTypeDef] = []
    first: dict[str, int] = {}
    for number, raw in enumerate(records, start=1):
        where = Where(file, "damage_type", record_ident(raw, number))
        try:
            record = _damage_type(haters, raw)
        except Invalid as exc:
            raise where.reject(exc) from None
        if record.key in first:
            raise where.fail(
                "key", f"duplicate key {record.key!r} (first used by record #{first[record.key]})"
            )
        first[record.key] = number
        expected = DAMAGE_TYPES[number - 1] if number <= N_DAMAGE_TYPES else None
        if record.key != expected:
            raise where.fail(
                "key",
                f"record #{number} must be {expected!r} (one record per damage type, "
                "in DAMAGE_TYPES order)",
            )
        out.append(record)
    if len(out) < N_DAMAGE_TYPES:
        missing = ", ".join(DAMAGE_TYPES[len(out) :])
        raise ContentError(
            f"{file}: expected {N_DAMAGE_TYPES} [[damage_type]] records (one per damage type, "
            f"in DAMAGE_TYPES order), got {len(out)}; missing {missing}"
        )
    return tuple(out)


def _frozen(array: NDArray[Any]) -> NDArray[Any]:
    array.flags.writeable = False
    return array


def load_damage_types(path: Path | None = None) -> DamageTypes:
    """Load and check ``damage_types.toml``.

    Args:
        path: The file to read; the shipped ``data/damage_types.toml`` when None.

    Returns:
        The checked definitions and their lookup tables.

    Raises:
        ContentError: The file is missing or not TOML, or breaks a rule
            documented at its top; the message names the file, the record
            and the field.
    """
    path = DAMAGE_FILE if path is None else path
    file = path.name
    data = read_toml(path, file)
    require_top_level(file, data, _TOP, "table")
    status = _load_status(file, data["status"])
    haters = _load_haters(file, data["haters"])
    terrain = _load_terrain(file, _records(file, data, "terrain"))
    types = _load_types(file, _records(file, data, "damage_type"), haters)

    num = np.zeros((N_TERRAIN, N_DAMAGE_TYPES), dtype=np.int32)
    den = np.ones((N_TERRAIN, N_DAMAGE_TYPES), dtype=np.int32)
    for t, adjust in enumerate(terrain):
        for d, key in enumerate(DAMAGE_TYPES):
            frac = adjust.fraction(key)
            num[t, d], den[t, d] = frac.numerator, frac.denominator
    share = np.array([int(dt.terrain) for dt in types], dtype=np.int8)
    effective = num / den * (share / 2.0)[np.newaxis, :] + 0.0  # + 0.0: no -0.0
    dodge = np.array([float(adjust.dodge) for adjust in terrain], dtype=np.float64)
    return DamageTypes(
        types=types,
        index=MappingProxyType({key: i for i, key in enumerate(DAMAGE_TYPES)}),
        status=status,
        haters=haters,
        terrain=terrain,
        adjust_num=_frozen(num),
        adjust_den=_frozen(den),
        share=_frozen(share),
        terrain_adjust=_frozen(effective.astype(np.float64)),
        dodge=_frozen(dodge),
    )


@functools.cache
def default_damage_types() -> DamageTypes:
    """Return the shipped damage types, loaded once and shared.

    Raises:
        ContentError: The shipped data is invalid (a packaging bug).
    """
    return load_damage_types()
