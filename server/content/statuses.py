"""Strict loader for ``statuses.toml``: statuses, regeneration, hunger, freeze and spark numbers.

The file holds a top-level ``round_ticks``, the tables ``[regeneration]``,
``[hunger]``, ``[freeze]`` and ``[spark]``, and one ``[[status]]`` record per
:class:`StatusKind`, in enum order. Every field is documented at the top of the
file. Unknown, missing and duplicate keys, wrong types (a bool is never a
number), out-of-range values, unknown flags, damage types and status keys, an
asymmetric ``opposite`` and records out of enum order are all rejected with a
``ContentError`` naming the file, the record (or table) and the field.

Source: seed 001 (``001_e9db5684e265e055.txt``): status effects, regeneration,
the freeze and spark spells, elemental shields, nourishment and hunger rating.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any, Final

from server.content.checks import (
    REQUIRED,
    Invalid,
    Spec,
    Where,
    build_record,
    choice,
    identifier,
    int_pair,
    integer,
    name_list,
    read_toml,
    real,
    record_ident,
    require_top_level,
    text,
)
from server.content.loader import DATA_DIR
from server.content.schema import DAMAGE_TYPES, ContentError

__all__ = [
    "STATUS_FLAGS",
    "FreezeRules",
    "HungerRules",
    "RegenerationRules",
    "SparkRules",
    "StatusDef",
    "StatusKind",
    "StatusRules",
    "default_statuses",
    "load_statuses",
]

FILE_NAME: Final = "statuses.toml"


class StatusKind(IntEnum):
    """A status effect (seed 001); the values are sent on the wire and never change.

    New statuses are appended; ``statuses.toml`` holds one record per member,
    in this order.
    """

    FROZEN = 0
    ON_FIRE = 1
    POISONED = 2
    DISEASED = 3
    CONFUSED = 4
    STUNNED = 5
    AFRAID = 6
    ASLEEP = 7
    PARALYSED = 8
    HASTED = 9
    ENRAGED = 10
    STONESKIN = 11
    INVISIBLE = 12
    ENLIGHTENED = 13
    ACID_BURN = 14
    WEBBED = 15
    SLOWED = 16
    FIRE_SHIELD = 17
    ICE_SHIELD = 18
    ENERVATED = 19
    FATIGUE = 20
    AVATAR = 21


STATUS_FLAGS: Final[tuple[str, ...]] = (
    "prevents_action", "prevents_melee", "prevents_casting", "spells_fail",
    "prevents_regeneration", "prevents_hunger", "doubles_hunger", "ends_on_damage",
    "magnitude_is_damage", "unseen", "casts_any_known",
)  # fmt: skip
"""Flags a ``[[status]]`` record may carry (meanings in ``statuses.toml``)."""

STACKING: Final[tuple[str, ...]] = ("max", "add", "keep")
"""How re-applying an active status combines its rounds."""

MAGNITUDE_STACKING: Final[tuple[str, ...]] = ("max", "add")
"""How re-applying an active status combines its magnitude."""


@dataclass(frozen=True, slots=True)
class StatusDef:
    """One status (a ``[[status]]`` record; every field is documented in the file).

    Rounds and magnitudes are ints; ``damage_dice`` and ``retaliation_dice`` are
    ``(count, sides)``, ``(0, 0)`` for none; empty strings mean "none".
    """

    key: str
    name: str
    stacking: str
    max_rounds: int
    default_magnitude: int
    max_magnitude: int
    magnitude_stacking: str
    damage_base: int
    damage_dice: tuple[int, int]
    damage_type: str
    energy_drain: int
    delay_factor: float
    power_bonus: int
    defence_bonus: int
    accuracy_factor: float
    random_move_chance: float
    opposite: str
    replaces: tuple[str, ...]
    shield_removes: str
    retaliation_dice: tuple[int, int]
    flags: tuple[str, ...]

    @property
    def kind(self) -> StatusKind:
        """The ``StatusKind`` this record describes."""
        return StatusKind[self.key.upper()]

    @property
    def is_shield(self) -> bool:
        """True for an elemental shield (it retaliates against melee attackers)."""
        return self.retaliation_dice != (0, 0)


@dataclass(frozen=True, slots=True)
class RegenerationRules:
    """``[regeneration]``: world ticks per +1 health / energy, and the nourishment floor."""

    health_ticks: int
    energy_ticks: int
    min_nourishment: int


@dataclass(frozen=True, slots=True)
class HungerRules:
    """``[hunger]``: the food bar's numbers (each documented in the file)."""

    full: int
    start_nourishment: int
    start_rating: int
    interval_min: int
    interval_max: int
    base_amount: int
    low_fraction: float
    low_health_factor: int
    low_energy_factor: int
    status_factor: int
    fatigue_max: int
    drain_factor: int
    warmth_divisor: int
    modify_chance_monk: float
    modify_chance_other: float
    vegetarian_factor: float
    meat_factor: float
    meat_disease_max: int
    starve_health: int
    starve_energy: int
    rest_threshold: int
    rest_amount: int
    avatar_death_rating: int


@dataclass(frozen=True, slots=True)
class FreezeRules:
    """``[freeze]``: the freeze spell's chance and quartic duration curve."""

    chance: float
    max_rounds: int
    exponent: int


@dataclass(frozen=True, slots=True)
class SparkRules:
    """``[spark]``: damage above ``threshold`` burns for ``damage // rounds_divisor`` rounds."""

    threshold: int
    rounds_divisor: int


@dataclass(frozen=True, slots=True)
class StatusRules:
    """Everything in ``statuses.toml``; ``statuses[kind]`` is the record of ``kind``."""

    round_ticks: int
    regeneration: RegenerationRules
    hunger: HungerRules
    freeze: FreezeRules
    spark: SparkRules
    statuses: tuple[StatusDef, ...]

    def status(self, kind: StatusKind) -> StatusDef:
        """Return the record of ``kind``."""
        return self.statuses[kind]


# --- value checks ---------------------------------------------------------------------


_dice = int_pair(
    "[count, sides], two ints >= 0, both 0 or both > 0",
    lambda count, sides: count >= 0 and sides >= 0 and (count == 0) == (sides == 0),
)
"""``[count, sides]``: two ints >= 0, ``[0, 0]`` meaning no dice."""


def _key_or_none(value: Any) -> str:
    if value == "":
        return ""
    return str(identifier(value))


def _damage_type(value: Any) -> str:
    if value == "":
        return ""
    if not isinstance(value, str) or value not in DAMAGE_TYPES:
        raise Invalid(f'must be "" or a damage type ({", ".join(DAMAGE_TYPES)}), got {value!r}')
    return value


_STATUS_SPEC: Final[Spec] = {
    "key": (identifier, REQUIRED),
    "name": (text, REQUIRED),
    "stacking": (choice(STACKING, "stacking rule"), REQUIRED),
    "max_rounds": (integer(1, 1000), REQUIRED),
    "default_magnitude": (integer(0), 0),
    "max_magnitude": (integer(0), 0),
    "magnitude_stacking": (choice(MAGNITUDE_STACKING, "stacking rule"), "max"),
    "damage_base": (integer(0), 0),
    "damage_dice": (_dice, (0, 0)),
    "damage_type": (_damage_type, ""),
    "energy_drain": (integer(0), 0),
    "delay_factor": (real(0.0, strict_lo=True), 1.0),
    "power_bonus": (integer(-100, 100), 0),
    "defence_bonus": (integer(-100, 100), 0),
    "accuracy_factor": (real(0.0, strict_lo=True), 1.0),
    "random_move_chance": (real(0.0, 1.0), 0.0),
    "opposite": (_key_or_none, ""),
    "replaces": (name_list(None, "status", unique=True), ()),
    "shield_removes": (_key_or_none, ""),
    "retaliation_dice": (_dice, (0, 0)),
    "flags": (name_list(STATUS_FLAGS, "flag", unique=True), ()),
}

_PROBABILITY = real(0.0, 1.0)

_REGENERATION_SPEC: Final[Spec] = {
    "health_ticks": (integer(1), REQUIRED),
    "energy_ticks": (integer(1), REQUIRED),
    "min_nourishment": (integer(0), REQUIRED),
}

_HUNGER_SPEC: Final[Spec] = {
    "full": (integer(1), REQUIRED),
    "start_nourishment": (integer(0), REQUIRED),
    "start_rating": (integer(0), REQUIRED),
    "interval_min": (integer(1), REQUIRED),
    "interval_max": (integer(1), REQUIRED),
    "base_amount": (integer(1), REQUIRED),
    "low_fraction": (_PROBABILITY, REQUIRED),
    "low_health_factor": (integer(1), REQUIRED),
    "low_energy_factor": (integer(1), REQUIRED),
    "status_factor": (integer(1), REQUIRED),
    "fatigue_max": (integer(0), REQUIRED),
    "drain_factor": (integer(1), REQUIRED),
    "warmth_divisor": (integer(1), REQUIRED),
    "modify_chance_monk": (_PROBABILITY, REQUIRED),
    "modify_chance_other": (_PROBABILITY, REQUIRED),
    "vegetarian_factor": (real(0.0, strict_lo=True), REQUIRED),
    "meat_factor": (real(0.0, strict_lo=True), REQUIRED),
    "meat_disease_max": (integer(0), REQUIRED),
    "starve_health": (integer(0), REQUIRED),
    "starve_energy": (integer(0), REQUIRED),
    "rest_threshold": (integer(0), REQUIRED),
    "rest_amount": (integer(0), REQUIRED),
    "avatar_death_rating": (integer(0), REQUIRED),
}

_FREEZE_SPEC: Final[Spec] = {
    "chance": (_PROBABILITY, REQUIRED),
    "max_rounds": (integer(1), REQUIRED),
    "exponent": (integer(1), REQUIRED),
}

_SPARK_SPEC: Final[Spec] = {
    "threshold": (integer(0), REQUIRED),
    "rounds_divisor": (integer(1), REQUIRED),
}

_TABLES: Final[dict[str, Spec]] = {
    "regeneration": _REGENERATION_SPEC,
    "hunger": _HUNGER_SPEC,
    "freeze": _FREEZE_SPEC,
    "spark": _SPARK_SPEC,
}
_TOP_LEVEL: Final = ("round_ticks", *_TABLES, "status")


# --- record and file checks -----------------------------------------------------------


def _check_status(where: Where, record: StatusDef) -> None:
    """Checks inside one ``[[status]]`` record."""
    if record.default_magnitude > record.max_magnitude:
        raise where.fail(
            "default_magnitude",
            f"must be <= max_magnitude ({record.max_magnitude}), got {record.default_magnitude}",
        )
    if record.max_magnitude > 0 and record.default_magnitude == 0:
        raise where.fail("default_magnitude", "must be >= 1 for a status with a magnitude")
    if "magnitude_is_damage" in record.flags and record.max_magnitude == 0:
        raise where.fail("flags", "magnitude_is_damage needs max_magnitude >= 1")
    if record.is_shield and not record.damage_type:
        raise where.fail("damage_type", "an elemental shield (retaliation_dice) needs one")
    if record.shield_removes and not record.is_shield:
        raise where.fail("shield_removes", "only an elemental shield (retaliation_dice) may")


def _check_references(records: dict[str, StatusDef]) -> None:
    """Cross-record checks: every named status exists; ``opposite`` is symmetric."""
    for key, record in records.items():
        where = Where(FILE_NAME, "status", repr(key))
        for field, names in (
            ("opposite", (record.opposite,) if record.opposite else ()),
            ("replaces", record.replaces),
            ("shield_removes", (record.shield_removes,) if record.shield_removes else ()),
        ):
            for name in names:
                if name not in records:
                    raise where.fail(field, f"unknown status {name!r}")
                if name == key:
                    raise where.fail(field, "must name another status, not itself")
        if record.opposite and records[record.opposite].opposite != key:
            raise where.fail(
                "opposite",
                f"{record.opposite!r} must name {key!r} as its opposite too "
                f"(it names {records[record.opposite].opposite!r})",
            )


def _load_status_records(raw: Any) -> tuple[StatusDef, ...]:
    if not isinstance(raw, list) or not all(isinstance(r, dict) for r in raw):
        raise ContentError(f"{FILE_NAME}: 'status' must hold [[status]] tables")
    records: dict[str, StatusDef] = {}
    for index, entry in enumerate(raw, start=1):
        where = Where(FILE_NAME, "status", record_ident(entry, index))
        record: StatusDef = build_record(where, entry, _STATUS_SPEC, StatusDef)
        if record.key in records:
            raise where.fail("key", f"duplicate key {record.key!r}")
        if index > len(StatusKind):
            raise where.fail(
                "key", f"no such StatusKind (expected {len(StatusKind)} records, one per kind)"
            )
        expected = StatusKind(index - 1).name.lower()
        if record.key != expected:
            raise where.fail(
                "key",
                f"record #{index} must be {expected!r} (one record per StatusKind, in enum order)",
            )
        _check_status(where, record)
        records[record.key] = record
    if len(records) < len(StatusKind):
        missing = [k.name.lower() for k in StatusKind][len(records) :]
        raise ContentError(
            f"{FILE_NAME}: expected {len(StatusKind)} [[status]] records (one per StatusKind, "
            f"in enum order), got {len(records)}; missing {', '.join(missing)}"
        )
    _check_references(records)
    return tuple(records.values())


def _load_table(data: dict[str, Any], name: str, cls: Any) -> Any:
    raw = data[name]
    if not isinstance(raw, dict):
        raise ContentError(f"{FILE_NAME}: [{name}] must be a table, got {raw!r}")
    return build_record(Where(FILE_NAME, "table", f"[{name}]"), raw, _TABLES[name], cls)


def _parse(data: dict[str, Any]) -> StatusRules:
    require_top_level(FILE_NAME, data, _TOP_LEVEL, "key")
    try:
        round_ticks = integer(1, 20)(data["round_ticks"])
    except Invalid as exc:
        raise ContentError(f"{FILE_NAME}: field 'round_ticks': {exc.message}") from None
    regeneration: RegenerationRules = _load_table(data, "regeneration", RegenerationRules)
    if regeneration.energy_ticks >= regeneration.health_ticks:
        raise Where(FILE_NAME, "table", "[regeneration]").fail(
            "energy_ticks",
            "must be < health_ticks (seed 001: energy regenerates faster than health), "
            f"got {regeneration.energy_ticks} >= {regeneration.health_ticks}",
        )
    hunger: HungerRules = _load_table(data, "hunger", HungerRules)
    where = Where(FILE_NAME, "table", "[hunger]")
    if hunger.interval_max < hunger.interval_min:
        raise where.fail(
            "interval_max",
            f"must be >= interval_min ({hunger.interval_min}), got {hunger.interval_max}",
        )
    if hunger.start_nourishment > hunger.full:
        raise where.fail(
            "start_nourishment", f"must be <= full ({hunger.full}), got {hunger.start_nourishment}"
        )
    return StatusRules(
        round_ticks=round_ticks,
        regeneration=regeneration,
        hunger=hunger,
        freeze=_load_table(data, "freeze", FreezeRules),
        spark=_load_table(data, "spark", SparkRules),
        statuses=_load_status_records(data["status"]),
    )


def load_statuses(path: Path | None = None) -> StatusRules:
    """Load and check ``statuses.toml``.

    Args:
        path: The file to read; the shipped ``statuses.toml`` when None.

    Returns:
        The checked rules; ``rules.statuses[kind]`` is the record of each
        ``StatusKind``.

    Raises:
        ContentError: The file is missing or not TOML, or breaks a rule
            documented at its top; the message names the file, the record or
            table, and the field.
    """
    return _parse(read_toml(DATA_DIR / FILE_NAME if path is None else path, FILE_NAME))


@functools.cache
def default_statuses() -> StatusRules:
    """Return the shipped status rules, loaded once and shared.

    Raises:
        ContentError: The shipped data is invalid (a packaging bug).
    """
    return load_statuses()
