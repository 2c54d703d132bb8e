"""Thrown items: miss chance, range, energy cost, damage and the whole throw.

Each rule of seed 001's "Ranged combat" paragraphs
(``seeds/001_e9db5684e265e055.txt``) is a small pure function; ``RULES.md``
("thrown items") says that seed governs throwing. Randomness comes from a
caller-supplied ``numpy.random.Generator``; nothing here reads a clock.

This module is about numbers only. The flight itself belongs to the world: it
moves the item along :func:`server.sim.ballistics.bolt_path` with
``past_target=True``, a few cells per tick, for at most :func:`throw_range`
cells. Seed 001's "if it misses and has sufficient range, it may hit another
monster behind, with the same chances" has no formula of its own: on a miss
the item keeps flying, and the next creature it reaches within range gets its
own :func:`resolve_throw` with the same thrower and item (its melee miss
chance M may differ if the thrower's bane items or the race against that
creature's dodge say so). Energy is paid once per throw, not per creature.

Draw order of :func:`resolve_throw` (determinism contract; only these draws
are made, in this order):

1. miss test: one ``rng.random()``, always (even when the chance is 0 or 1);
   the throw misses iff it is ``< throw_miss_chance(...)``. A miss ends here.
2. damage roll (:func:`thrown_damage_roll`): one vectorised
   ``rng.integers(1, sides + 1, size=dice)`` call for an item with a power
   rating (or a cursed one without), or one ``rng.integers(1, 4)`` for an
   uncursed item without one.
3. critical: one ``rng.random() < CRITICAL_CHANCE``.
4. enchantment, only when the item is enchanted: one
   ``rng.integers(1, high + 1)`` call (:func:`thrown_enchant_roll`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from server.content.schema import DEFAULT_THROW_RANGE
from server.sim.combat import CRITICAL_CHANCE, AttackOutcome, roll_dice, scale_by_energy

__all__ = [
    "DEFAULT_THROW_RANGE",
    "THROW_MISS_BASE",
    "ThrowResult",
    "resolve_throw",
    "throw_damage_sides",
    "throw_dice",
    "throw_energy_cost",
    "throw_miss_chance",
    "throw_range",
    "thrown_damage_roll",
    "thrown_enchant_roll",
]

THROW_MISS_BASE = 0.4
"""The 40% added to the melee miss chance in the thrown miss formula (seed 001)."""

CURSED_THROW_ENERGY = 8
"""Energy a cursed item costs to throw, whatever its range (seed 001)."""

_RANGE_ENERGY_DISCOUNT = 2
"""Energy cost is the item's range minus this (seed 001)."""

_NEGATIVE_POWER_SIDES = 2
"""Die size used instead of a negative power rating (seed 001)."""

_UNRATED_DAMAGE = (1, 3)
"""Inclusive damage range of an uncursed item with no power rating (seed 001)."""


def throw_miss_chance(melee_miss: float, level: int, *, marksman: bool = False) -> float:
    """Probability that a thrown item misses its target.

    Source: seed 001 ("Ranged combat"): ``(M + 40%) / (1 + 0.5 L)``, halved
    with the marksman special ability; ``RULES.md`` (thrown items).

    Underhall's decision on rounding: ``0.5 L`` is half the level rounded
    down, ``L // 2``, the seed's own convention for "half the level" (damage
    dice). Only this reading fits both of the seed's examples with M = 10%:
    level 0 gives 1 in 2 and level 5 gives ``0.5 / (1 + 2)`` = 1 in 6 (the
    unrounded ``0.5 / 3.5`` would be 1 in 7). The result is capped at 1.

    Args:
        melee_miss: The thrower's melee miss chance M in [0, 1] (the class's
            ``miss_chance``; 10% usually, 5% for a monk; bane items lower it).
        level: The thrower's level L (>= 0).
        marksman: True if the thrower has the marksman special ability.

    Returns:
        The miss probability in [0, 1].

    Raises:
        ValueError: If ``melee_miss`` is outside [0, 1] or NaN, or ``level < 0``.
    """
    if not 0.0 <= melee_miss <= 1.0:
        raise ValueError(f"melee_miss must be in [0, 1], got {melee_miss!r}")
    if level < 0:
        raise ValueError(f"level must be >= 0, got {level}")
    chance = min((melee_miss + THROW_MISS_BASE) / (1 + level // 2), 1.0)
    return chance / 2 if marksman else chance


def throw_range(item_range: int | None) -> int:
    """How many cells an item can be thrown.

    Source: seed 001 ("Items with no specified range can be thrown 4 tiles").

    Args:
        item_range: The item's throwing range in cells, or None if it names
            none.

    Returns:
        The range in cells (``DEFAULT_THROW_RANGE`` when None).

    Raises:
        ValueError: If ``item_range`` is negative.
    """
    if item_range is None:
        return DEFAULT_THROW_RANGE
    if item_range < 0:
        raise ValueError(f"item_range must be >= 0, got {item_range}")
    return item_range


def throw_energy_cost(range_: int, *, cursed: bool) -> int:
    """Energy spent on one throw.

    Source: seed 001 ("Throwing an item consumes energy equal to the item's
    range minus 2. If the item is cursed though, the range is ignored and it
    consumes 8 energy"). The range is the item's (:func:`throw_range`), not
    the distance actually flown. Never below 0. As in melee, a thrower short
    of energy may still throw; the caller clips its energy at 0.

    Args:
        range_: The item's throwing range in cells (>= 0).
        cursed: True if the item is cursed.

    Returns:
        Energy cost in energy points (>= 0).

    Raises:
        ValueError: If ``range_`` is negative.
    """
    if range_ < 0:
        raise ValueError(f"range_ must be >= 0, got {range_}")
    if cursed:
        return CURSED_THROW_ENERGY
    return max(range_ - _RANGE_ENERGY_DISCOUNT, 0)


def throw_dice(thrower_level: int) -> int:
    """Number of damage dice for a thrown item with a power rating.

    Source: seed 001 ("half the level is the number of dice").

    Underhall's decision: half the level rounded down (as for melee dice), but
    at least one die, so a level 0 or 1 thrower still does damage.

    Args:
        thrower_level: The thrower's level (>= 0).

    Returns:
        ``max(1, thrower_level // 2)``.

    Raises:
        ValueError: If the level is negative.
    """
    if thrower_level < 0:
        raise ValueError(f"thrower_level must be >= 0, got {thrower_level}")
    return max(1, thrower_level // 2)


def throw_damage_sides(item_power: int | None, *, cursed: bool) -> int | None:
    """Signed die size for a thrown item's damage roll, or None for 1-3.

    Source: seed 001: "For items with a negative rating, it's calculated as
    if they have a power of 2. Cursed items are exempt from this; they will
    use the negative rating and do negative damage, though if they have no
    power rating at all they'll still use 2", and "If the item lacks a power
    rating, the damage is in the range 1-3".

    Underhall's reading, keeping both sentences: an uncursed item without a
    rating does 1-3 (None here); a cursed item without one rolls power 2. A
    rating of 0 counts as "no rating". A negative result means the dice are
    of ``-sides`` faces and their total is negated.

    Args:
        item_power: The item's power rating, or None.
        cursed: True if the item is cursed.

    Returns:
        The die size (negative for a cursed negative rating), or None when
        the damage is the flat 1-3 roll.
    """
    if item_power is None or item_power == 0:
        return _NEGATIVE_POWER_SIDES if cursed else None
    if item_power < 0 and not cursed:
        return _NEGATIVE_POWER_SIDES
    return item_power


def thrown_damage_roll(
    rng: np.random.Generator,
    *,
    thrower_level: int,
    item_power: int | None,
    cursed: bool,
    energy: int,
    max_energy: int,
) -> int:
    """Roll a thrown item's damage before the victim's defence.

    Source: seed 001: ``(L/2)d(power)`` for an item with a power rating (the
    thrower's own power does not count), 1-3 without one and without any
    level adjustment, negative ratings as in :func:`throw_damage_sides`, then
    "adjusted for the thrower's energy as in melee combat"
    (:func:`server.sim.combat.scale_by_energy`).

    Dice: :func:`throw_dice`. A cursed negative rating rolls that many dice of
    ``|power|`` faces and negates the total; energy scaling is then applied
    to the signed value as in melee, keeping whichever is larger, i.e. closer
    to zero (Underhall's decision: energy never strengthens a curse).

    Draw order: one ``rng.integers(1, sides + 1, size=dice)`` call for a rated
    item (or a cursed unrated one), else one ``rng.integers(1, 4)`` call.

    Args:
        rng: The world's random stream.
        thrower_level: The thrower's level (>= 0).
        item_power: The item's power rating, or None.
        cursed: True if the item is cursed.
        energy: The thrower's current energy (>= 0), before paying for the throw.
        max_energy: The thrower's maximum energy (<= 0: no energy pool).

    Returns:
        The damage in hit points; negative only for a cursed negative rating.

    Raises:
        ValueError: If the level or the energy is negative.
    """
    dice = throw_dice(thrower_level)
    if energy < 0:
        raise ValueError(f"energy must be >= 0, got {energy}")
    sides = throw_damage_sides(item_power, cursed=cursed)
    if sides is None:
        low, high = _UNRATED_DAMAGE
        damage = int(rng.integers(low, high + 1))
    elif sides < 0:
        damage = -roll_dice(rng, dice, -sides)
    else:
        damage = roll_dice(rng, dice, sides)
    return scale_by_energy(damage, energy, max_energy)


def thrown_enchant_roll(
    rng: np.random.Generator,
    item_power: int | None,
    *,
    cursed: bool,
    adjust: Callable[[int], int] | None = None,
    blessed_vs_undead: bool = False,
    victim_level: int = 0,
) -> int:
    """Roll the extra damage of an enchanted thrown item.

    Source: seed 001 (melee: "A number between one and half the weapon's
    power (rounded up) is rolled, then adjusted for the victim's elemental
    resistances. If the enchantment is blessed and the victim is undead, the
    victim's level is added to this roll"; throwing: "This works exactly as
    with melee weapons").

    Underhall's decisions: the power is the die size of the damage roll
    (:func:`throw_damage_sides`, made positive; 2 for an unrated item), the
    upper bound is at least 1, and the undead bonus is added after the
    resistance step (holy damage is not elemental).

    Draw order: one ``rng.integers(1, high + 1)`` call.

    Args:
        rng: The world's random stream.
        item_power: The item's power rating, or None.
        cursed: True if the item is cursed.
        adjust: The victim's resistance to the enchantment's damage type,
            mapping raw to adjusted damage; None leaves the roll unchanged.
        blessed_vs_undead: True if the enchantment is blessed and the victim
            is undead.
        victim_level: The victim's level (>= 0), added for ``blessed_vs_undead``.

    Returns:
        Enchantment damage in hit points.
    """
    sides = throw_damage_sides(item_power, cursed=cursed)
    power = _NEGATIVE_POWER_SIDES if sides is None else abs(sides)
    high = max(1, math.ceil(power / 2))
    damage = int(rng.integers(1, high + 1))
    if adjust is not None:
        damage = adjust(damage)
    if blessed_vs_undead:
        damage += victim_level
    return damage


@dataclass(frozen=True, slots=True)
class ThrowResult:
    """The outcome of one thrown item against one creature.

    Attributes:
        outcome: ``MISS``, ``HIT`` or ``CRITICAL`` (``LUCKY`` is not used:
            seed 001 turns a zero-damage critical throw into 1 damage, not
            into a melee lucky hit).
        damage: Damage from the item itself, in hit points (negative heals,
            from a cursed item with a negative rating; 0 on a miss).
        enchant_damage: Damage from the item's enchantment (0 if none or on
            a miss), in hit points.
        energy_cost: Energy the thrower spends, in energy points (>= 0).
    """

    outcome: AttackOutcome
    damage: int
    enchant_damage: int
    energy_cost: int


def resolve_throw(
    rng: np.random.Generator,
    *,
    melee_miss: float,
    thrower_level: int,
    item_power: int | None,
    item_range: int | None,
    cursed: bool,
    energy: int,
    max_energy: int,
    victim_defence: int,
    marksman: bool = False,
    enchanted: bool = False,
    adjust: Callable[[int], int] | None = None,
    blessed_vs_undead: bool = False,
    victim_level: int = 0,
    surprise: bool = False,
) -> ThrowResult:
    """Resolve one thrown item against one creature in its path.

    Source: seed 001 ("Ranged combat") and ``RULES.md`` (thrown items).
    Steps: the miss test (:func:`throw_miss_chance`); the damage roll
    (:func:`thrown_damage_roll`); minus the victim's defence, floored at 0
    for positive damage; the critical roll (``CRITICAL_CHANCE``, as in
    melee): double damage, or 1 damage if it would have been 0; then the
    enchantment roll (:func:`thrown_enchant_roll`) when ``enchanted``.

    Underhall's decision for negative (cursed) damage: defence is not
    subtracted (armour softens harm, it does not amplify a curse's healing);
    a critical still doubles it.

    Draw order: see the module docstring (miss float, damage dice, critical
    float, enchantment integer; a miss makes only the first draw). Energy
    (:func:`throw_energy_cost` of :func:`throw_range`) is charged on a miss
    too.

    Args:
        rng: The world's random stream.
        melee_miss: The thrower's melee miss chance M in [0, 1].
        thrower_level: The thrower's level (>= 0).
        item_power: The item's power rating, or None.
        item_range: The item's throwing range in cells, or None for the default.
        cursed: True if the item is cursed.
        energy: The thrower's current energy (>= 0), before this throw.
        max_energy: The thrower's maximum energy (<= 0: no energy pool).
        victim_defence: The victim's defence rating (may be negative).
        marksman: True if the thrower has the marksman ability.
        enchanted: True if the item carries an enchantment.
        adjust: The victim's resistance step for the enchantment's damage type.
        blessed_vs_undead: True if the enchantment is blessed and the victim
            is undead.
        victim_level: The victim's level, for the blessed bonus.
        surprise: A surprise attack (RULES.md, seed 002: the victim is asleep,
            paralysed or wandering, or the thrower just came into its view):
            it always hits, and the miss draw is not made.

    Returns:
        The outcome, item damage, enchantment damage and energy cost.

    Raises:
        ValueError: On an out-of-range argument (before any draw).
    """
    chance = throw_miss_chance(melee_miss, thrower_level, marksman=marksman)
    cost = throw_energy_cost(throw_range(item_range), cursed=cursed)
    if energy < 0:
        raise ValueError(f"energy must be >= 0, got {energy}")
    if not surprise and float(rng.random()) < chance:
        return ThrowResult(AttackOutcome.MISS, 0, 0, cost)

    damage = thrown_damage_roll(
        rng,
        thrower_level=thrower_level,
        item_power=item_power,
        cursed=cursed,
        energy=energy,
        max_energy=max_energy,
    )
    if damage >= 0:
        damage = max(damage - victim_defence, 0)

    outcome = AttackOutcome.HIT
    if float(rng.random()) < CRITICAL_CHANCE:
        outcome = AttackOutcome.CRITICAL
        damage = 1 if damage == 0 else 2 * damage

    enchant = 0
    if enchanted:
        enchant = thrown_enchant_roll(
            rng,
            item_power,
            cursed=cursed,
            adjust=adjust,
            blessed_vs_undead=blessed_vs_undead,
            victim_level=victim_level,
        )
    return ThrowResult(outcome, damage, enchant, cost)
