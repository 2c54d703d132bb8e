"""Damage types against monsters: terrain, resistance, side effects, terrain and floor items.

Each rule is a small pure function over the data of ``damage_types.toml``
(loaded by :mod:`server.content.damage`). Randomness comes only from a
caller-supplied ``numpy.random.Generator``. All "damage x fraction" products
are integers truncated toward zero, as the C original divides.

Sources:

* ``seeds/003_870af7f93e8e7619.txt`` -- the terrain table with its 1/4 dodge,
  the per-type "Terr" column, resistance fractions and the 3/14..3/16 rolls,
  side effects and their caps (notes a-L, final notes i-v), effects on terrain
  and on floor items.
* ``reference/angband_gf.md`` -- how Oangband's ``project_m()`` applies it:
  the dodge comes before the damage type is looked at; the terrain share is
  added before resistance; half shares truncate toward zero (-7/2 is -3);
  stun and confusion amounts are uniform in 1..N.

Draw order of :func:`apply_damage_type` (the determinism contract; these are
the only draws, in this order):

1. terrain dodge (:func:`terrain_dodges`): one ``rng.integers(den)`` with
   ``den`` the dodge fraction's denominator (4 for rubble and trees), only for
   a mobile monster on terrain with a dodge chance. A dodge ends here.
1a. a player's supercharge (:func:`boost_damage`): one ``rng.integers(den)``
   per ``boost`` row of the caster's role or of anyone, until one comes up.
1b. the armour save of rocks and shots: one ``rng.integers(200)`` when the
   type has ``armour_save`` and the target has defence; a save ends here.
1c. storm's surge: one ``rng.integers(den)`` when the type has a ``surge``
   and the target does not resist.
2. resistance (:func:`resist_damage`): one ``rng.integers(k)`` when the
   matching row lists ``k > 1`` equally likely fractions (the 3/14, 3/15,
   3/16 roll draws ``rng.integers(3)``; index 0 is 3/14). Skipped for types
   that deal no damage.
3. side effects (:func:`roll_side_effects`), in data order; for each effect
   that is not ruled out without a draw (immunity, resisted, damage too
   small, amount 0, unique vs polymorph, a missing ``only_flag``): one
   ``rng.integers(den)`` for a chance below 1, then the save's draws
   (``rng.integers(1, damage + 1)`` for the level save, ``rng.integers(1,
   polymorph_die + 1)`` for polymorph, ``rng.integers(1, max(1, dam - 10) +
   1)`` for the bolt's polymorph unless unique, ``rng.integers(1, top + 1)``
   then, if that did not resist and ``hold_chance`` > 0, ``rng.integers(den)``
   for the hold save, ``rng.integers(0, 3 dam + 1)`` for the heavy save unless
   the caster is a player), then the amount: ``rng.integers(1, n + 1)`` for
   uniform, ``rng.integers(2, n + 1)`` for from-two, one vectorised
   ``rng.integers(1, sides + 1, size=dice)`` for dice (none with 0 sides). A
   failed chance or a successful save ends that effect's draws.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

import numpy as np
from numpy.typing import NDArray

from server.content.damage import (
    AmountRoll,
    DamageTypeDef,
    DamageTypes,
    ResistRow,
    Save,
    SideEffect,
    SideEffectDef,
    TerrainShare,
    default_damage_types,
)
from server.content.schema import (
    DAMAGE_TYPES,
    HATED_ELEMENTS,
    ITEM_CATEGORIES,
    MONSTER_FLAGS,
    RESIST_MAX,
    RESIST_MIN,
    ItemDef,
    MonsterDef,
    Terrain,
)

__all__ = [
    "NOBODY",
    "Caster",
    "DamageOutcome",
    "SideEffect",
    "adjacent_water",
    "apply_damage_type",
    "boost_damage",
    "damage_monster",
    "deals_damage",
    "floor_item_damaged",
    "holy_light_fear",
    "item_proof",
    "resist_damage",
    "resistance_level",
    "roll_side_effects",
    "stack_status",
    "status_immunities",
    "terrain_adjust",
    "terrain_dodges",
    "terrain_effect",
]

_DATA: Final[DamageTypes] = default_damage_types()
_STACKING: Final = frozenset({SideEffect.STUN, SideEffect.CONFUSION, SideEffect.FEAR})


@dataclass(frozen=True, slots=True)
class DamageOutcome:
    """What one attack of a damage type did to one monster.

    Attributes:
        damage: Hit points lost (>= 0), after terrain and resistance.
        dodged: The monster ducked behind rubble or a tree; nothing happened.
        side_effects: ``(effect, amount)`` pairs in data order, caps applied;
            amounts are turns (stun, confusion, fear, sleep), cells (teleport,
            knock-back), energy points (drain) or 1 (polymorph, clone).
    """

    damage: int
    dodged: bool
    side_effects: tuple[tuple[SideEffect, int], ...]


def _times(value: int, frac: Fraction) -> int:
    """Return ``value * frac`` truncated toward zero (C integer division)."""
    product = value * frac.numerator
    quotient = abs(product) // frac.denominator
    return quotient if product >= 0 else -quotient


def _type(damage_type: str) -> DamageTypeDef:
    """The definition of ``damage_type``; KeyError if it is not in ``DAMAGE_TYPES``."""
    return _DATA[damage_type]


def deals_damage(damage_type: str) -> bool:
    """Whether ``damage_type`` hurts at all (False for sleep and the other
    side-effect-only types of seed 003, whose "damage" only sizes the effect).

    Raises:
        KeyError: Unknown damage type.
    """
    return _type(damage_type).deals_damage


def _check_damage(damage: int) -> int:
    if damage < 0:
        raise ValueError(f"damage must be >= 0, got {damage}")
    return int(damage)


def terrain_adjust(damage: int, damage_type: str, terrain: Terrain | int) -> int:
    """Return the damage after the terrain adjustment of the target's cell.

    Seed 003 terrain table: rubble and trees -1/4 for every type; water -1/2
    for fire and plasma, +1/3 for water; lava -1/3 for cold and water, +1/5
    for fire and plasma. The adjustment ``damage * fraction`` is truncated
    toward zero, then scaled by the type's "Terr" column: full adds it, half
    adds half of it (truncated toward zero, so -7 becomes -3), none ignores
    it (angband_gf.md section 2). Applied before resistance.

    Args:
        damage: Incoming damage, >= 0.
        damage_type: A ``DAMAGE_TYPES`` key.
        terrain: The terrain under the target.

    Raises:
        KeyError: Unknown damage type.
        ValueError: Negative damage or a value that is not a ``Terrain``.
    """
    damage = _check_damage(damage)
    index = _DATA.index[damage_type]
    t = Terrain(terrain)
    frac = Fraction(int(_DATA.adjust_num[t, index]), int(_DATA.adjust_den[t, index]))
    share = TerrainShare(int(_DATA.share[index]))
    return damage + _times(_times(damage, frac), Fraction(int(share), 2))


def terrain_dodges(rng: np.random.Generator, terrain: Terrain | int, *, mobile: bool) -> bool:
    """Return whether the target avoids the whole attack behind rubble or a tree.

    Seed 003, terrain note (a): a monster that can move has a 1/4 chance to
    avoid all damage on rubble or trees (angband_gf.md: before the damage
    type is looked at, so it also avoids sleep and every side effect).

    Draws one ``rng.integers(den)`` (``den`` = 4) only when ``mobile`` and the
    terrain has a dodge chance; Underhall's decision: no draw for immobile
    monsters (Oangband draws and ignores it).

    Raises:
        ValueError: ``terrain`` is not a ``Terrain`` value.
    """
    chance = _DATA.terrain[Terrain(terrain)].dodge
    if not mobile or chance == 0:
        return False
    return int(rng.integers(chance.denominator)) < chance.numerator


def resistance_level(damage_type: str, resist: Mapping[str, int]) -> int:
    """Return a monster's effective resistance level against ``damage_type``.

    The monster's own level for the type when it is non-zero; otherwise, for
    a type with ``implied_by`` (plasma), the number of those types it
    resists (level >= 1): seed 003 gives plasma 3/5..3/7 to a monster immune
    to fire or electricity and 3/11..3/13 to one immune to both.

    Args:
        damage_type: A ``DAMAGE_TYPES`` key.
        resist: The monster's levels by damage type (``MonsterDef.resist``).

    Raises:
        KeyError: Unknown damage type.
    """
    own = resist.get(damage_type, 0)
    implied = _type(damage_type).implied_by
    if own != 0 or not implied:
        return own
    return min(RESIST_MAX, sum(1 for other in implied if resist.get(other, 0) >= 1))


def status_immunities(resist: Mapping[str, int], flags: frozenset[str]) -> frozenset[SideEffect]:
    """Return the side effects a monster never suffers, whatever the damage type.

    Seed 003 final notes: iii, breathers of sound or force are never stunned;
    iv, NO_CONF or breathers of confusion or chaos are never confused; ii,
    uniques are never polymorphed; NO_SLEEP and NO_FEAR (notes B, I-K). The
    damage types and flags come from ``[status]``. :func:`roll_side_effects`
    applies the flag-based ones itself; pass the result as ``status_immune``
    for the ones that depend on other resistances.
    """
    status = _DATA.status
    immune = set(_flag_immunities(flags))
    if any(resist.get(t, 0) >= 1 for t in status.stun_immune):
        immune.add(SideEffect.STUN)
    if any(resist.get(t, 0) >= 1 for t in status.confusion_immune):
        immune.add(SideEffect.CONFUSION)
    return frozenset(immune)


def _flag_immunities(flags: frozenset[str]) -> frozenset[SideEffect]:
    """Effects ruled out by flags alone: ``[status] flag_immune``, and uniques vs polymorph."""
    immune = {effect for flag, effect in _DATA.status.flag_immune.items() if flag in flags}
    if "unique" in flags:
        immune.add(SideEffect.POLYMORPH)
    return frozenset(immune)


_NO_LEVELS: Final[Mapping[str, int]] = {}


def _matching_row(
    definition: DamageTypeDef,
    resist_level: int,
    flags: frozenset[str],
    others: Mapping[str, int] = _NO_LEVELS,
) -> ResistRow | None:
    """The first resistance row that matches, or None (the seed's if/else chain).

    A row with ``of`` reads the creature's level for that other type (ice is
    resisted by IM_COLD); an ``otherwise`` row matches everything left (the
    seed's "not UNDEAD" rows of the dispels).
    """
    for row in definition.resist:
        if row.otherwise:
            return row
        if row.flag:
            if row.flag in flags:
                return row
            continue
        level = others.get(row.of, 0) if row.of else resist_level
        if (row.level > 0 and level >= row.level) or (row.level < 0 and level <= row.level):
            return row
    return None


def _resisted(row: ResistRow | None, resist_level: int) -> bool:
    """Whether the creature "resists" for notes that say "if it does not resist":
    a positive level for the type, or a matching positive row of another type."""
    return resist_level >= 1 or (row is not None and bool(row.of) and row.level > 0)


def _check_target(resist_level: int, flags: frozenset[str]) -> None:
    if not RESIST_MIN <= resist_level <= RESIST_MAX:
        raise ValueError(f"resist_level must be in {RESIST_MIN}..{RESIST_MAX}, got {resist_level}")
    unknown = flags.difference(MONSTER_FLAGS)
    if unknown:
        raise ValueError(f"unknown monster flags {sorted(unknown)}")


def resist_damage(
    rng: np.random.Generator,
    damage: int,
    damage_type: str,
    *,
    resist_level: int,
    flags: frozenset[str],
    others: Mapping[str, int] = _NO_LEVELS,
) -> int:
    """Return the damage a monster takes after its resistance.

    Seed 003 "Resist?" / "R D" columns as rows of ``damage_types.toml``: the
    first row matching the resistance level or a monster flag gives the
    fraction taken (1/9 for the basic elements' immunity, the (e) roll 3/14,
    3/15, 3/16, (f) 3/11..3/13, (g) 3/5..3/7, 0 for immunity, 2/3 for evil vs
    nether, 3/2 for hurt-by); no match takes it all. The level mapping is
    documented at the top of the data file (Underhall's decision).

    Draws one ``rng.integers(k)`` when the row has ``k > 1`` fractions.

    Args:
        damage: Damage after the terrain adjustment, >= 0.
        damage_type: A ``DAMAGE_TYPES`` key.
        resist_level: The monster's level for this type, -3..3 (see
            :func:`resistance_level`).
        flags: The monster's flags (``MONSTER_FLAGS``).
        others: Its levels for other types, for rows ``of`` another type.

    Raises:
        KeyError: Unknown damage type.
        ValueError: Negative damage, a level out of range or an unknown flag.
    """
    damage = _check_damage(damage)
    _check_target(resist_level, flags)
    row = _matching_row(_type(damage_type), resist_level, flags, others)
    if row is None:
        return damage
    take = row.take[0] if len(row.take) == 1 else row.take[int(rng.integers(len(row.take)))]
    return _times(damage, take)


@dataclass(frozen=True, slots=True)
class Caster:
    """Who an attack comes from, for the notes that ask (seed 003 A-K, D, E, q).

    Attributes:
        level: The caster's level (the "player's level" of notes D and E).
        player: A player's attack (supercharges, note q's sure teleport).
        role: The player's NetHack role (``classes.toml`` ``role``), or "".
    """

    level: int = 0
    player: bool = False
    role: str = ""


NOBODY: Final = Caster()
"""No caster: a trap, terrain, a status."""


def roll_side_effects(
    rng: np.random.Generator,
    damage: int,
    damage_type: str,
    *,
    resist_level: int,
    flags: frozenset[str],
    level: int = 0,
    status_immune: frozenset[SideEffect] = frozenset(),
    others: Mapping[str, int] = _NO_LEVELS,
    max_health: int = 0,
    caster: Caster = NOBODY,
) -> tuple[tuple[SideEffect, int], ...]:
    """Return the side effects of one attack, caps applied (seed 003 notes a-L).

    ``damage`` is taken after the terrain adjustment and before resistance
    (angband_gf.md section 3). An effect needs damage above its ``above``,
    the flag ``only_flag`` when it names one (turning and banishing touch only
    undead or evil), and no resistance to ``unless_resists``. Its amount is
    ``cap`` when damage > ``cap_above`` (stun 32 if dam > 240), else ``base +
    damage // divisor``, then exact, uniform in 1..amount, uniform in
    2..amount, or ``base + dice d sides`` (sides fixed, or damage // divisor).
    Saves: the level save resists when level + bonus > 1d(damage), the bonus
    being the row's (or ``[status]``'s: 2, uniques 20; undead as set, e.g.
    +15 for confuse monster); the polymorph save of final note ii works when
    1d90 > level; the bolt's (note w) resists when level > 10 + 1d(dam - 10);
    the hold save (notes D, E) resists when 1d(level x scale) > twice the
    caster's level, else ``hold_chance`` of the time; the heavy save (note q)
    moves only a player's target or a creature whose maximum health is below
    1d[0..3 x dam]. Draw order: see the module docstring.

    Raises:
        KeyError: Unknown damage type.
        ValueError: Negative damage, a level out of range or an unknown flag.
    """
    damage = _check_damage(damage)
    _check_target(resist_level, flags)
    status = _DATA.status
    definition = _type(damage_type)
    immune = status_immune | _flag_immunities(flags)
    resisted = _resisted(_matching_row(definition, resist_level, flags, others), resist_level)
    out: list[tuple[SideEffect, int]] = []
    for fx in definition.side_effects:
        if fx.effect in immune or damage <= fx.above:
            continue
        if fx.only_flag and fx.only_flag not in flags:
            continue
        if fx.unless_resisted and resisted:
            continue
        if fx.unless_resists and others.get(fx.unless_resists, 0) >= 1:
            continue
        if fx.cap and damage > fx.cap_above:
            amount = fx.cap
        else:
            amount = fx.base + (damage // fx.divisor if fx.divisor and not fx.dice else 0)
        if amount <= 0 and fx.roll is not AmountRoll.DICE:
            continue
        if fx.chance < 1 and int(rng.integers(fx.chance.denominator)) >= fx.chance.numerator:
            continue
        if _saved(
            rng,
            fx,
            damage,
            flags,
            level,
            max_health,
            caster,
            status.save_bonus,
            status.save_bonus_unique,
            status.polymorph_die,
        ):
            continue
        if fx.roll is AmountRoll.UNIFORM:
            amount = int(rng.integers(1, amount + 1))
        elif fx.roll is AmountRoll.FROM_TWO:
            amount = int(rng.integers(2, max(2, amount) + 1))
        elif fx.roll is AmountRoll.DICE:
            sides = fx.sides or (damage // fx.divisor if fx.divisor else 0)
            if sides > 0:
                amount += int(rng.integers(1, sides + 1, size=fx.dice).sum())
        if amount > 0:
            out.append((fx.effect, amount))
    return tuple(out)


def _saved(
    rng: np.random.Generator,
    fx: SideEffectDef,
    damage: int,
    flags: frozenset[str],
    level: int,
    max_health: int,
    caster: Caster,
    bonus: int,
    bonus_unique: int,
    polymorph_die: int,
) -> bool:
    """Whether the creature escapes ``fx`` by its save (see :func:`roll_side_effects`)."""
    if fx.save is Save.LEVEL:
        if "unique" in flags:
            extra = fx.save_bonus_unique if fx.save_bonus_unique >= 0 else bonus_unique
        elif "undead" in flags and fx.save_bonus_undead >= 0:
            extra = fx.save_bonus_undead
        else:
            extra = fx.save_bonus if fx.save_bonus >= 0 else bonus
        return damage < 1 or level + extra > int(rng.integers(1, damage + 1))
    if fx.save is Save.POLYMORPH:
        return int(rng.integers(1, polymorph_die + 1)) <= level
    if fx.save is Save.POLY_BOLT:
        return "unique" in flags or level > 10 + int(rng.integers(1, max(1, damage - 10) + 1))
    if fx.save is Save.HOLD:
        top = max(1, int(level * fx.hold_scale))
        if int(rng.integers(1, top + 1)) > 2 * caster.level:
            return True
        chance = fx.hold_chance
        return chance > 0 and int(rng.integers(chance.denominator)) < chance.numerator
    if fx.save is Save.HEAVY:
        return not caster.player and max_health >= int(rng.integers(0, 3 * damage + 1))
    return False


HOLY_LIGHT: Final[Mapping[str, tuple[Fraction, Fraction, int, int, Fraction]]] = {
    "light_weak": (Fraction(1, 5), Fraction(1), 10, 3, Fraction(1, 2)),
    "light": (Fraction(1, 3), Fraction(3, 2), 15, 3, Fraction(3, 4)),
}
"""Seed 003 notes (M) and (N), per light type: the chance of an attempt, the
caster-level factor and the constant of the attempt's die, the fear dice and
their size as a share of the caster's level."""


def holy_light_fear(
    rng: np.random.Generator,
    damage_type: str,
    caster_level: int,
    level: int,
    flags: frozenset[str],
    light_level: int,
) -> int:
    """Rounds of fear from the holy-light specialty's light, or 0 (seed 003 M, N).

    Only for an undead, evil or light-hurt (light level <= -1) monster. Weak
    light (M): 1/5 of the time an attempt, which frightens when 1d(caster
    level + 10) >= the monster's level + 2 (+ 20 for a unique), for
    3d(caster level / 2) + 1 rounds; light (N): 1/3, 1d(3/2 caster level +
    15), 3d(3/4 caster level) + 1. "Even if it normally cannot be
    frightened": NO_FEAR does not protect. Other types: 0, no draws.

    Draws: one ``rng.integers(den)`` for the attempt; if made, one
    ``rng.integers(1, top + 1)``; if it frightens, one vectorised 3-dice roll
    (none when the die has 0 sides).
    """
    rule = HOLY_LIGHT.get(damage_type)
    if rule is None or not ({"undead", "evil"} & flags or light_level <= -1):
        return 0
    chance, factor, constant, dice, share = rule
    if int(rng.integers(chance.denominator)) >= chance.numerator:
        return 0
    top = max(1, int(caster_level * factor) + constant)
    need = level + (20 if "unique" in flags else 2)
    if int(rng.integers(1, top + 1)) < need:
        return 0
    sides = int(caster_level * share)
    roll = int(rng.integers(1, sides + 1, size=dice).sum()) if sides > 0 else 0
    return roll + 1


def boost_damage(rng: np.random.Generator, damage: int, damage_type: str, caster: Caster) -> int:
    """A player's attack supercharged by its class (seed 003 notes A-C, I-K).

    The type's ``boost`` rows are tried in order, those of the caster's role
    and those for anyone (role ""); the first whose chance comes up adds
    ``extra`` of the damage (truncated) and ends it: a Wizard's sleep 1/3 of
    the time does 1/2 more, else 1/6 of the time 1/3 more. Only players.

    Draws: one ``rng.integers(den)`` per row tried.
    """
    if not caster.player:
        return damage
    for row in _type(damage_type).boost:
        if row.role and row.role != caster.role:
            continue
        if int(rng.integers(row.chance.denominator)) < row.chance.numerator:
            return damage + _times(damage, row.extra)
    return damage


def apply_damage_type(
    rng: np.random.Generator,
    damage: int,
    damage_type: str,
    *,
    terrain: Terrain | int,
    resist_level: int,
    flags: frozenset[str],
    mobile: bool,
    level: int = 0,
    status_immune: frozenset[SideEffect] = frozenset(),
    others: Mapping[str, int] = _NO_LEVELS,
    defence: int = 0,
    health: int = 0,
    max_health: int = 0,
    caster: Caster = NOBODY,
) -> DamageOutcome:
    """Resolve one attack of ``damage_type`` against one monster (seed 003).

    In order: the rubble/tree dodge, the terrain adjustment, a player's
    class supercharge (:func:`boost_damage`), the armour save of rocks and
    shots (note b: ``defence`` / 200 of the time nothing happens), storm's
    surge (note n: unless resisted, 1/6 of the time 1/2 more, which also
    sizes its stun and confusion), resistance, the dispel-small immunity
    (note L: ``health`` >= damage), then side effects on the adjusted damage;
    a type that deals no damage (sleep) only has its side effects. Draw
    order: see the module docstring.

    Args:
        damage: Incoming damage at the target's cell, >= 0.
        damage_type: A ``DAMAGE_TYPES`` key.
        terrain: Terrain under the target.
        resist_level: Its level for this type, -3..3 (:func:`resistance_level`).
        flags: Its ``MONSTER_FLAGS``.
        mobile: Whether it can move (may duck behind cover).
        level: Its level, for the saves.
        status_immune: Effects it never suffers (:func:`status_immunities`).
        others: Its levels for every type (rows ``of`` another type, note q).
        defence: Its defence, Underhall's armour class for note (b).
        health, max_health: Its health now and at most (notes L and q).
        caster: Who attacks (supercharges, the hold save, note q).

    Raises:
        KeyError: Unknown damage type.
        ValueError: Negative damage, bad terrain, level out of range, unknown flag.
    """
    damage = _check_damage(damage)
    _check_target(resist_level, flags)
    if terrain_dodges(rng, terrain, mobile=mobile):
        return DamageOutcome(0, True, ())
    definition = _type(damage_type)
    adjusted = terrain_adjust(damage, damage_type, terrain)
    adjusted = boost_damage(rng, adjusted, damage_type, caster)
    if definition.armour_save and defence > 0 and int(rng.integers(200)) < defence:
        return DamageOutcome(0, False, ())
    surge = definition.surge
    if (
        surge is not None
        and not _resisted(_matching_row(definition, resist_level, flags, others), resist_level)
        and int(rng.integers(surge.chance.denominator)) < surge.chance.numerator
    ):
        adjusted += _times(adjusted, surge.extra)
    taken = 0
    if definition.deals_damage:
        taken = resist_damage(
            rng, adjusted, damage_type, resist_level=resist_level, flags=flags, others=others
        )
        if definition.health_immune and health >= adjusted:
            taken = 0
    effects = roll_side_effects(
        rng, adjusted, damage_type, resist_level=resist_level, flags=flags, level=level,
        status_immune=status_immune, others=others, max_health=max_health, caster=caster,
    )  # fmt: skip
    return DamageOutcome(taken, False, effects)


def damage_monster(
    rng: np.random.Generator,
    damage: int,
    damage_type: str,
    monster: MonsterDef,
    *,
    terrain: Terrain | int,
    mobile: bool = True,
) -> DamageOutcome:
    """Resolve one attack against a monster of kind ``monster`` (seed 003).

    :func:`apply_damage_type` with the monster's effective resistance
    (:func:`resistance_level`), flags, level and status immunities. ``mobile``
    is False for an ``immobile`` monster whatever is passed (Underhall's
    decision: a held or sleeping monster may also be passed as not mobile).
    Same draws and exceptions as :func:`apply_damage_type`.
    """
    flags = frozenset(monster.flags)
    return apply_damage_type(
        rng, damage, damage_type, terrain=terrain,
        resist_level=resistance_level(damage_type, monster.resist), flags=flags,
        mobile=mobile and "immobile" not in flags, level=monster.level,
        status_immune=status_immunities(monster.resist, flags),
    )  # fmt: skip


def stack_status(effect: SideEffect, current: int, amount: int) -> int:
    """Return a monster's new stun, confusion or fear counter after a new dose.

    Seed 003 final notes iii-v: a stun or confusion on a monster without it
    sets the counter; on one that has it, adds half the new amount
    (truncated); fear always adds. The result never exceeds 200 turns.

    Raises:
        ValueError: ``effect`` is not stun, confusion or fear, or a negative count.
    """
    if effect not in _STACKING:
        raise ValueError(f"{effect.name} has no turn counter to stack")
    if current < 0 or amount < 0:
        raise ValueError(f"counters must be >= 0, got {current}, {amount}")
    status = _DATA.status
    if effect is not SideEffect.FEAR and current > 0:
        amount = _times(amount, status.restack)
    return min(status.max_turns, current + amount)


def adjacent_water(terrain: NDArray[np.uint8], x: int, y: int) -> int:
    """Return the number of water cells among the 8 neighbours of ``(x, y)``.

    The ``k`` of seed 003's terrain effects. ``terrain`` is ``uint8[H, W]``
    indexed ``[y, x]``; cells outside the grid count as not water.
    """
    window = terrain[max(0, y - 1) : y + 2, max(0, x - 1) : x + 2]
    own = int(terrain[y, x] == Terrain.WATER)
    return int(np.count_nonzero(window == Terrain.WATER)) - own


def has_terrain_effect(damage_type: str, terrain: Terrain | int) -> bool:
    """Whether seed 003 gives ``damage_type`` any effect on ``terrain`` (see
    :func:`terrain_effect`); when False, :func:`terrain_effect` returns None
    and draws nothing, so a caller may skip it and the count of adjacent water.

    Raises:
        KeyError: Unknown damage type.
        ValueError: Bad terrain.
    """
    source = Terrain(terrain)
    return any(fx.source is source for fx in _type(damage_type).terrain_effects)


def terrain_effect(
    rng: np.random.Generator,
    damage_type: str,
    damage: int,
    terrain: Terrain | int,
    *,
    adjacent_water: int = 0,
) -> Terrain | None:
    """Return the terrain a cell becomes under an attack, or None if it stays.

    Seed 003 "Effects on Terrain": cold solidifies lava when damage >
    1d[301..1200] (1/3 floor, else rubble); fire and plasma turn floor and
    rubble to lava above 1d[601..2400], water to floor above 1d[201..800+3k],
    forest to floor above 1d[101..500]; water floods floor when damage > 60
    and > 100 - 20k + 1d[0..399]. Disintegration clears rubble and trees
    (Underhall's decision). ``k`` is ``adjacent_water``.

    Draws: nothing unless a rule exists for this terrain and damage > its
    ``above``; then one ``rng.integers(low, high' + 1)`` (none when the range
    is one value), and on success one ``rng.integers(len(to))`` when ``to``
    has several entries.

    Raises:
        KeyError: Unknown damage type.
        ValueError: Negative damage, bad terrain, ``adjacent_water`` not in 0..8.
    """
    damage = _check_damage(damage)
    source = Terrain(terrain)
    if not 0 <= adjacent_water <= 8:
        raise ValueError(f"adjacent_water must be in 0..8, got {adjacent_water}")
    for fx in _type(damage_type).terrain_effects:
        if fx.source is not source:
            continue
        if damage <= fx.above:
            return None
        high = fx.high + fx.high_per_water * adjacent_water
        roll = fx.low if high == fx.low else int(rng.integers(fx.low, high + 1))
        if damage <= roll + fx.shift_per_water * adjacent_water:
            return None
        return fx.to[0] if len(fx.to) == 1 else fx.to[int(rng.integers(len(fx.to)))]
    return None


def item_proof(item: ItemDef) -> frozenset[str]:
    """Return the elements an item ignores on the floor (its seed 003 IGNORE flags).

    ``acidproof`` ignores acid. Whether fire harms an item at all is the
    item's class (its category, or its own ``hates``), not an ignore flag:
    seed 003 spares swords and hard armour from fire but burns hafted
    weapons and polearms, metal or not.
    """
    return frozenset({"acid"}) if item.acidproof else frozenset()


def floor_item_damaged(
    rng: np.random.Generator,
    damage_type: str,
    damage: int,
    item_category: str,
    *,
    proof: frozenset[str],
    artifact: bool,
    hates: tuple[str, ...] | None = None,
    cursed: bool = False,
) -> bool:
    """Return whether an item lying on the floor is destroyed by an attack.

    Seed 003 "Effects on Objects": each rule of the type whose haters include
    the item destroys it when damage > 1d(threshold), or always without a
    threshold, unless the rule honours an ignore flag the item has (``proof``
    names the elements it ignores, e.g. ``{"acid"}``). An item in several
    classes is tested against each. Artifacts are always spared. An item
    belongs to an element's haters by its category, unless ``hates`` (the
    item's own list, ``items.toml``) names the elements it hates instead; the
    "all" rule (mana) takes every category, the "cursed" rule (holy orb)
    only ``cursed`` objects.

    Draws: one ``rng.integers(1, threshold + 1)`` per rule tried that has a
    threshold, stopping at the first that destroys the item.

    Raises:
        KeyError: Unknown damage type.
        ValueError: Negative damage, unknown category or unknown ``proof`` element.
    """
    damage = _check_damage(damage)
    if item_category not in ITEM_CATEGORIES:
        raise ValueError(f"unknown item category {item_category!r}")
    if not proof.issubset(DAMAGE_TYPES):
        raise ValueError(f"unknown elements in proof: {sorted(proof.difference(DAMAGE_TYPES))}")
    definition = _type(damage_type)
    if artifact:
        return False
    for rule in definition.floor_items:
        if not _hater(rule.haters, rule.categories, item_category, hates, cursed):
            continue
        if rule.ignore and rule.haters in proof:
            continue
        if rule.threshold == 0 or damage > int(rng.integers(1, rule.threshold + 1)):
            return True
    return False


def _hater(
    haters: str,
    categories: tuple[str, ...],
    category: str,
    hates: tuple[str, ...] | None,
    cursed: bool,
) -> bool:
    """Whether an item is among a floor rule's ``haters`` (see :func:`floor_item_damaged`)."""
    if haters == "cursed":
        return cursed and category in categories
    if hates is not None and haters in HATED_ELEMENTS:
        return haters in hates
    return category in categories
