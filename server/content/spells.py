"""Spell and casting-role definitions and their strict loader (``spells.toml``, ``roles.toml``).

``spells.toml`` holds one ``[[spell]]`` record per spell: the seed 001
families (``seeds/001_e9db5684e265e055.txt``) and NetHack's flying attack
spells (``seeds/004_e3510b876b951af2.txt``, ``reference/nethack_ray.md``).
``roles.toml`` holds one ``[[role]]`` record per casting profile, the 13
roles of seed 004's spell-failure table (``reference/spell_success.md``).

Every field is documented at the top of its data file. The loader rejects
unknown, duplicate and missing fields, duplicate keys, wrong types, bad
ranges, unknown schools, effects, damage types, statuses, targeting modes and
upgrade rules, parameters an effect does not use, and a role's special spell
naming a spell that does not exist, with a ``ContentError`` naming the file,
the record and the field. Behaviour lives in ``server.sim.spells`` and
``server.sim.spellcasting``; this module only checks and holds the numbers.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from server.content.checks import (
    REQUIRED,
    Check,
    Invalid,
    Spec,
    Where,
    boolean,
    choice,
    identifier,
    integer,
    load_records,
    real,
    text,
)
from server.content.loader import DATA_DIR
from server.content.schema import DAMAGE_TYPES, Content

__all__ = [
    "CASTING_STATS",
    "EFFECTS",
    "EFFECT_PARAMETERS",
    "MAX_SPELL_LEVEL",
    "SCHOOLS",
    "SPELL_STATUSES",
    "TARGETING",
    "UPGRADE_RULES",
    "RoleDef",
    "SpellData",
    "SpellDef",
    "default_spells",
    "load_spells",
]

MAX_SPELL_LEVEL: Final = 7
"""Highest spell level (NetHack's spell levels run 1..7; seed 004)."""

SCHOOLS: Final[tuple[str, ...]] = (
    "attack", "healing", "divination", "enchantment", "clerical", "escape", "matter",
)  # fmt: skip
"""NetHack's spell schools; each school is one casting skill (seed 004)."""

EFFECTS: Final[tuple[str, ...]] = (
    "bolt", "line", "ball", "tongue", "status_target", "cloud", "heal", "cure",
    "buff", "scry", "chain", "web", "remove_curse", "beam", "ray", "ray_explode", "dig",
)  # fmt: skip
"""Effect keys the simulation knows; ``spells.toml`` documents what each one does."""

TARGETING: Final[tuple[str, ...]] = ("direction", "target", "self", "item")
"""How the caster aims: a direction, a visible cell, oneself, or an inventory item."""

UPGRADE_RULES: Final[tuple[str, ...]] = ("double", "halve_cost")
"""What an altar upgrade does (seed 001): double the numbers, or halve the energy cost."""

SPELL_STATUSES: Final[tuple[str, ...]] = (
    "none", "frozen", "on_fire", "poisoned", "diseased", "confused", "asleep",
    "hasted", "enraged", "stoneskin", "invisible", "acid_burn", "webbed",
    "fire_shield", "ice_shield", "enervated",
)  # fmt: skip
"""Statuses a spell may inflict, add or cure (keys of ``statuses.toml``), or ``"none"``."""

CASTING_STATS: Final[tuple[str, ...]] = ("int", "wis")
"""A role's casting stat: intelligence or wisdom (seed 004)."""

# Per effect: the numeric parameters it uses (each must be > 0), and whether it
# deals damage (True: damage_type required; False: must be "none"; None: either,
# but a damage type or a status is required). Parameters not listed must be 0.
_NUMERIC: Final = ("dice", "power", "radius", "attenuation", "spread", "chain")
EFFECT_PARAMETERS: Final[Mapping[str, tuple[frozenset[str], bool | None]]] = MappingProxyType(
    {
        "bolt": (frozenset({"dice", "power"}), True),
        "line": (frozenset({"dice", "power"}), True),
        "ball": (frozenset({"dice", "power", "radius", "attenuation"}), True),
        "tongue": (frozenset({"dice", "power", "spread"}), None),
        "status_target": (frozenset({"dice", "power"}), None),
        "cloud": (frozenset({"power", "radius"}), None),
        "heal": (frozenset({"power"}), False),
        "cure": (frozenset({"power"}), False),
        "buff": (frozenset({"power"}), False),
        "scry": (frozenset({"power"}), False),
        "chain": (frozenset({"power", "chain", "radius"}), True),
        "web": (frozenset({"power"}), False),
        "remove_curse": (frozenset(), False),
        "beam": (frozenset({"dice", "power"}), True),
        "ray": (frozenset({"dice", "power"}), True),
        "ray_explode": (frozenset({"dice", "power"}), True),
        "dig": (frozenset(), False),
    }
)
"""Effect key -> (numeric fields it uses, whether it deals damage)."""

# Effects whose record must name a status, and effects that may not name one.
_STATUS_REQUIRED: Final = frozenset({"status_target", "cloud", "cure", "buff", "web"})
_STATUS_FORBIDDEN: Final = frozenset(
    {"line", "ball", "heal", "scry", "chain", "remove_curse", "beam", "ray_explode", "dig"}
)
_RANGE_ROLLED: Final = frozenset({"beam", "ray", "ray_explode", "dig"})
_MAX_RANGE: Final = 99
_MAX_POWER: Final = 1000


@dataclass(frozen=True, slots=True)
class SpellDef:
    """One spell (``spells.toml``; every field is documented there).

    ``dice`` is None for NetHack's level-scaled rolls (``XL // 2 + 1`` dice);
    ``range`` is None for unlimited range; ``range_min`` equals ``range``
    unless the range is rolled (beams, rays, dig). ``upgraded`` is never read
    from the file: ``server.sim.spells.upgrade`` sets it.
    """

    key: str
    name: str
    level: int
    school: str
    effect: str
    damage_type: str
    status: str
    dice: int | None
    power: int
    range: int | None
    range_min: int | None
    radius: int
    attenuation: float
    spread: int
    chain: int
    emergency: bool
    targeting: str
    upgrade: str
    upgraded: bool = False


@dataclass(frozen=True, slots=True)
class RoleDef:
    """One casting profile: a row of seed 004's spell-failure table (``roles.toml``)."""

    key: str
    name: str
    base: int
    emergency: int
    shield: int
    suit: int
    stat: str
    special_spell: str
    special_key: str
    special_bonus: int


@dataclass(frozen=True, slots=True)
class SpellData:
    """All spells and casting roles, as returned by :func:`load_spells`.

    Attributes:
        spells: Spell definitions by key, in file order (read-only).
        roles: Casting roles by key, in file order (read-only).
    """

    spells: Mapping[str, SpellDef]
    roles: Mapping[str, RoleDef]

    def spell(self, key: str) -> SpellDef:
        """Return the spell called ``key``.

        Raises:
            KeyError: No such spell.
        """
        return self.spells[key]

    def role(self, name: str) -> RoleDef:
        """Return a role by key (``"wizard"``) or seed 004 name (``"Wizard"``).

        Raises:
            KeyError: No such role.
        """
        found = self.roles.get(name.lower())
        if found is None:
            raise KeyError(name)
        return found


# --- field checks ---------------------------------------------------------------------


def _int_or_word(hi: int, word: str) -> Check:
    """An int in ``0..hi``, or ``word`` (returned as None)."""

    def check(value: Any) -> int | None:
        if value == word:
            return None
        if type(value) is not int or not 0 <= value <= hi:
            raise Invalid(f'must be an int in 0..{hi} or "{word}", got {value!r}')
        return value

    return check


_dice = _int_or_word(100, "level")
_range = _int_or_word(_MAX_RANGE, "unlimited")


_SPELL_SPEC: Final[Spec] = {
    "key": (identifier, REQUIRED),
    "name": (text, REQUIRED),
    "level": (integer(1, MAX_SPELL_LEVEL), REQUIRED),
    "school": (choice(SCHOOLS, "school"), REQUIRED),
    "effect": (choice(EFFECTS, "effect"), REQUIRED),
    "damage_type": (choice(("none", *DAMAGE_TYPES), "damage type"), REQUIRED),
    "status": (choice(SPELL_STATUSES, "status"), "none"),
    "dice": (_dice, 0),
    "power": (integer(0, _MAX_POWER), REQUIRED),
    "range": (_range, REQUIRED),
    "range_min": (integer(0, _MAX_RANGE), None),
    "radius": (integer(0, 50), 0),
    "attenuation": (real(0.0, 10.0), 0.0),
    "spread": (integer(0, 50), 0),
    "chain": (integer(0, 50), 0),
    "emergency": (boolean, REQUIRED),
    "targeting": (choice(TARGETING, "targeting"), REQUIRED),
    "upgrade": (choice(UPGRADE_RULES, "upgrade rule"), REQUIRED),
}

_ROLE_SPEC: Final[Spec] = {
    "key": (identifier, REQUIRED),
    "name": (text, REQUIRED),
    "base": (integer(0, 20), REQUIRED),
    "emergency": (integer(-10, 10), REQUIRED),
    "shield": (integer(0, 10), REQUIRED),
    "suit": (integer(0, 30), REQUIRED),
    "stat": (choice(CASTING_STATS, "casting stat"), REQUIRED),
    "special_spell": (text, REQUIRED),
    "special_key": (identifier, ""),
    "special_bonus": (integer(-10, 0), REQUIRED),
}


# --- cross-field checks ---------------------------------------------------------------


def _check_parameters(where: Where, spell: SpellDef) -> None:
    """Each numeric parameter the effect uses is > 0; every other one is 0."""
    uses, _ = EFFECT_PARAMETERS[spell.effect]
    for name in _NUMERIC:
        value = getattr(spell, name)
        if name in uses:
            if value is not None and value <= 0:
                raise where.fail(name, f"must be > 0 for effect {spell.effect!r}, got {value!r}")
        elif value != 0:
            shown = '"level"' if value is None else repr(value)
            raise where.fail(
                name, f"is not used by effect {spell.effect!r} and must be 0 or absent, got {shown}"
            )


def _check_kind(where: Where, spell: SpellDef) -> None:
    """Damage type and status agree with the effect."""
    _, damaging = EFFECT_PARAMETERS[spell.effect]
    if damaging is True and spell.damage_type == "none":
        raise where.fail("damage_type", f"effect {spell.effect!r} deals damage; name its type")
    if damaging is False and spell.damage_type != "none":
        raise where.fail("damage_type", f'effect {spell.effect!r} deals no damage; must be "none"')
    if damaging is None and spell.damage_type == "none" and spell.status == "none":
        raise where.fail(
            "damage_type", f"effect {spell.effect!r} needs a damage type, a status or both"
        )
    if spell.effect in _STATUS_REQUIRED and spell.status == "none":
        raise where.fail("status", f"effect {spell.effect!r} needs a status")
    if spell.effect in _STATUS_FORBIDDEN and spell.status != "none":
        raise where.fail("status", f'effect {spell.effect!r} takes no status; must be "none"')


def _check_range(where: Where, spell: SpellDef) -> SpellDef:
    """Range agrees with targeting; fill ``range_min`` (defaults to ``range``)."""
    if spell.targeting in ("self", "item"):
        if spell.range != 0:
            raise where.fail("range", f"must be 0 for targeting {spell.targeting!r}")
    elif spell.range == 0:
        raise where.fail("range", f'must be >= 1 or "unlimited" for targeting {spell.targeting!r}')
    if spell.effect in _RANGE_ROLLED:
        if spell.targeting != "direction":
            raise where.fail("targeting", f'effect {spell.effect!r} needs "direction"')
        if spell.range is None:
            raise where.fail("range", f"effect {spell.effect!r} needs a finite range")
        low = spell.range if spell.range_min is None else spell.range_min
        if not 1 <= low <= spell.range:
            raise where.fail("range_min", f"must be in 1..range ({spell.range}), got {low}")
        return dataclasses.replace(spell, range_min=low)
    if spell.range_min is not None:
        raise where.fail(
            "range_min", f"only rolled-range effects ({', '.join(sorted(_RANGE_ROLLED))}) take one"
        )
    return dataclasses.replace(spell, range_min=spell.range)


def _load_spell_file(path: Path) -> dict[str, SpellDef]:
    records = load_records(path, "spell", _SPELL_SPEC, SpellDef)
    out: dict[str, SpellDef] = {}
    for key, spell in records.items():
        where = Where(path.name, "spell", repr(key))
        _check_parameters(where, spell)
        _check_kind(where, spell)
        out[key] = _check_range(where, spell)
    return out


def _load_role_file(path: Path, spells: Mapping[str, SpellDef]) -> dict[str, RoleDef]:
    roles = load_records(path, "role", _ROLE_SPEC, RoleDef)
    for key, role in roles.items():
        where = Where(path.name, "role", repr(key))
        if role.name.lower() != key:
            raise where.fail(
                "name", f"must be the key capitalised (lower-case {key!r}), got {role.name!r}"
            )
        if role.special_key and role.special_key not in spells:
            raise where.fail(
                "special_key", f"unknown spell {role.special_key!r} (not in spells.toml)"
            )
    return roles


def load_spells(directory: Path | None = None) -> SpellData:
    """Load and cross-check ``spells.toml`` and ``roles.toml``.

    Args:
        directory: Folder holding both files; the shipped data when None.

    Returns:
        The checked spells and roles.

    Raises:
        ContentError: A file is missing or not TOML, or a record breaks a rule
            documented at the top of its file; the message names the file, the
            record and the field.
    """
    folder = DATA_DIR if directory is None else directory
    spells = _load_spell_file(folder / "spells.toml")
    roles = _load_role_file(folder / "roles.toml", spells)
    return SpellData(spells=MappingProxyType(spells), roles=MappingProxyType(roles))


@functools.cache
def default_spells() -> SpellData:
    """Return the shipped spells and roles, loaded once and shared.

    Raises:
        ContentError: The shipped data is invalid (a packaging bug).
    """
    return load_spells()


def check_spell_references(content: Content, data: SpellData) -> None:
    """Check that the rules data names only spells and roles that exist.

    ``monsters.toml`` ``spells``, ``items.toml`` ``spell`` and ``classes.toml``
    ``role`` are loaded before the spells (each file on its own); this ties
    them together, as the strict loaders do within one file.

    Raises:
        ContentError: A dangling reference, naming the file, record and field.
    """
    for monster in content.monsters.values():
        for key in monster.spells:
            if key not in data.spells:
                raise Where("monsters.toml", "monster", repr(monster.key)).fail(
                    "spells", f"unknown spell {key!r} (not in spells.toml)"
                )
    for item in content.items.values():
        if item.spell is not None and item.spell not in data.spells:
            raise Where("items.toml", "item", repr(item.key)).fail(
                "spell", f"unknown spell {item.spell!r} (not in spells.toml)"
            )
    for cls in content.classes.values():
        if cls.role.lower() not in data.roles:
            raise Where("classes.toml", "class", repr(cls.key)).fail(
                "role", f"unknown role {cls.role!r} (not in roles.toml)"
            )
