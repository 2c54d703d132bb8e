"""Typed readers for the records of ``me`` and ``info`` (docs/protocol.md).

Each ``from_*`` class method parses one wire value and returns None (or
defaults) for what does not have the documented shape, so a confused or newer
server cannot crash the client through them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

ITEM_CURSED = 1
ITEM_BLESSED = 2
ITEM_IDENTIFIED = 4

EQUIPMENT_SLOTS = ("weapon", "shield", "head", "body", "cloak", "hands", "feet", "book")
"""The ``slot`` names of ``me.inv`` (docs/protocol.md), in display order."""


def is_int(value: object) -> TypeGuard[int]:
    """An msgpack integer (``bool`` is not one)."""
    return type(value) is int


def is_number(value: object) -> TypeGuard[int | float]:
    """An msgpack integer or float (``bool`` is not one)."""
    return type(value) in (int, float)


@dataclass(frozen=True, slots=True)
class InvItem:
    """One ``me.inv`` entry: ``[letter, key, count, slot, charges, flags]``.

    ``slot`` is ``""`` when not equipped; ``charges`` is -1 when unknown or
    not applicable; ``flags`` bits: 1 cursed (known), 2 blessed (known), 4
    identified.
    """

    letter: str
    key: str
    count: int
    slot: str = ""
    charges: int = -1
    flags: int = 0

    @property
    def cursed(self) -> bool:
        return bool(self.flags & ITEM_CURSED)

    @property
    def blessed(self) -> bool:
        return bool(self.flags & ITEM_BLESSED)

    @property
    def identified(self) -> bool:
        return bool(self.flags & ITEM_IDENTIFIED)

    @classmethod
    def from_record(cls, record: object) -> InvItem | None:
        """Parse a wire entry; None if malformed. A version-1 entry (three
        elements) reads as unequipped, charges unknown."""
        if not isinstance(record, list) or len(record) < 3:
            return None
        letter, key, count = record[:3]
        if not (isinstance(letter, str) and isinstance(key, str) and is_int(count)):
            return None
        rest: list[Any] = list(record[3:6])
        slot, charges, flags = rest + ["", -1, 0][len(rest) :]
        if not (isinstance(slot, str) and is_int(charges) and is_int(flags)):
            return None
        return cls(letter, key, count, slot, charges, flags)


@dataclass(frozen=True, slots=True)
class KnownSpell:
    """One ``me.spells`` entry plus its ``welcome.spells`` row.

    ``fail_pct`` is the failure chance in percent, ``energy_cost`` in energy
    points; ``aim`` is ``"dir"``, ``"cell"`` or ``"self"`` (``"dir"`` when
    the table does not say).
    """

    letter: str
    key: str
    fail_pct: int
    energy_cost: int
    forgotten: bool
    name: str
    level: int
    school: str
    aim: str


def _int(about: Mapping[str, Any], key: str) -> int:
    value = about.get(key)
    return value if is_int(value) else 0


def _prob(about: Mapping[str, Any], key: str) -> float | None:
    value = about.get(key)
    return float(value) if is_number(value) and 0 <= value <= 1 else None


@dataclass(frozen=True, slots=True)
class InfoAbout:
    """The ``about`` map of an ``info`` answer (the look panel).

    Missing integers read as 0, missing probabilities and ``courage`` as None
    (``courage`` is absent for immobile monsters); the optional ``spells``
    (spell keys a monster casts) and ``breath`` (its breath's damage type)
    read as empty.
    """

    name: str = ""
    kind: str = ""
    kind_name: str = ""
    level: int = 0
    hp: int = 0
    max_hp: int = 0
    en: int = 0
    max_en: int = 0
    power: int = 0
    defence: int = 0
    courage: float | None = None
    resist: dict[str, int] = field(default_factory=dict)
    abilities: tuple[str, ...] = ()
    statuses: tuple[tuple[int, int], ...] = ()
    you_miss: float | None = None
    you_crit: float | None = None
    it_miss: float | None = None
    it_crit: float | None = None
    spells: tuple[str, ...] = ()
    breath: str = ""

    @classmethod
    def from_about(cls, about: Mapping[str, Any], kinds: Mapping[str, Any]) -> InfoAbout:
        """Parse ``info.about``; ``kinds`` (kind key -> ``[name, glyph, colour]``,
        from ``welcome.kinds``) names the kind."""
        name = about.get("name")
        kind = about.get("kind")
        kind = kind if isinstance(kind, str) else ""
        entry = kinds.get(kind)
        kind_name = (
            entry[0]
            if isinstance(entry, list) and entry and isinstance(entry[0], str)
            else kind.replace("_", " ")
        )
        courage = about.get("courage")
        resist = about.get("resist")
        abilities = about.get("abilities")
        sts = about.get("sts")
        spells = about.get("spells")
        breath = about.get("breath")
        return cls(
            name=name if isinstance(name, str) else "",
            kind=kind,
            kind_name=kind_name,
            level=_int(about, "level"), hp=_int(about, "hp"), max_hp=_int(about, "max_hp"),
            en=_int(about, "en"), max_en=_int(about, "max_en"),
            power=_int(about, "power"), defence=_int(about, "defence"),
            courage=float(courage) if is_number(courage) else None,
            resist={k: v for k, v in resist.items() if isinstance(k, str) and is_int(v) and v}
            if isinstance(resist, dict) else {},
            abilities=tuple(a for a in abilities if isinstance(a, str))
            if isinstance(abilities, list) else (),
            statuses=tuple((e[0], e[1]) for e in sts if isinstance(e, list) and len(e) >= 2
                           and is_int(e[0]) and is_int(e[1])) if isinstance(sts, list) else (),
            you_miss=_prob(about, "you_miss"), you_crit=_prob(about, "you_crit"),
            it_miss=_prob(about, "it_miss"), it_crit=_prob(about, "it_crit"),
            spells=tuple(k for k in spells if isinstance(k, str))
            if isinstance(spells, list) else (),
            breath=breath if isinstance(breath, str) else "",
        )  # fmt: skip
