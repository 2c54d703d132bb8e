"""Melee combat formulas: the hit test, then the damage roll.

Each rule is a small pure function that names the seed or reference note it
implements. Randomness always comes from a caller-supplied
``numpy.random.Generator`` (the world's stream); nothing here reads a clock or
the ``random`` module, so a seed plus a command log replays every fight.

Sources:

* ``seeds/002_92d18de83818e397.txt`` -- accuracy/dodge race, magic doubling,
  weapon strength penalty, excess-strength damage, surprise attacks.
* ``reference/pd_combat.md`` -- the exact order of the hit-test draws and the
  closed form of its probability.
* ``seeds/001_e9db5684e265e055.txt`` ("Combat is pretty simple..."): damage
  dice, energy scaling, criticals, lucky hits, energy costs.
* ``RULES.md`` -- hit and damage are two stages; seed 001's flat 10% miss is
  replaced by the seed 002 race, its 10% critical stays.

Draw order of :func:`resolve_melee` (part of the determinism contract; the
draws listed are the only ones made, in this order):

1. hit test, unless a surprise attack: ``rng.random()`` for the attacker, then
   ``rng.random()`` for the defender (see :func:`roll_hit`). A miss ends here.
2. damage dice: one ``rng.integers(1, power + 1, size=dice)`` call
   (skipped when ``power <= 0``).
3. excess strength: one ``rng.integers(0, excess + 1)`` call (skipped when the
   attacker has no weapon requirement, ``required_strength == 0``, or no
   strength surplus over it).
4. critical roll: ``rng.random() < CRITICAL_CHANCE``.
5. only for a critical on a hit whose damage is 0: one
   ``rng.integers(1, 4)`` call for the lucky-hit damage.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

__all__ = [
    "CRITICAL_CHANCE",
    "LUCKY_DAMAGE",
    "AttackOutcome",
    "Combatant",
    "MeleeResult",
    "damage_dice",
    "energy_cost",
    "excess_strength_bonus",
    "hit_chance",
    "resolve_melee",
    "roll_dice",
    "roll_hit",
    "scale_by_energy",
    "weapon_accuracy",
]

CRITICAL_CHANCE = 0.1
"""Probability that a successful hit is a critical (seed 001): 10%."""

LUCKY_DAMAGE = (1, 3)
"""Inclusive damage range of a lucky hit (seed 001), in hit points."""

_STRENGTH_PENALTY_BASE = 1.5
"""Accuracy divisor per point of missing strength (seed 002)."""


class AttackOutcome(IntEnum):
    """How one attack ended; values are sent on the wire."""

    MISS = 0
    HIT = 1
    CRITICAL = 2
    LUCKY = 3


def _check_stat(name: str, value: float) -> None:
    """Reject a stat that is negative, NaN or infinite with a ValueError."""
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")


def _effective_accuracy(accuracy: float, magic: bool) -> float:
    return 2.0 * accuracy if magic else accuracy


def hit_chance(accuracy: float, dodge: float, *, magic: bool = False) -> float:
    """Exact probability that the hit test of :func:`roll_hit` succeeds.

    Source: seed 002 (accuracy/dodge race) and ``reference/pd_combat.md``
    (closed form). The attacker's roll is uniform on [0, A), the defender's on
    [0, D), and ties hit. With A the effective accuracy (doubled for magic):

    * D = 0: 1 (the defender's roll is always 0);
    * A = 0 < D: 0 (ignoring the measure-zero event of the defender rolling 0);
    * A >= D > 0: 1 - D / (2A);
    * A < D: A / (2D).

    Args:
        accuracy: Attacker accuracy (a unitless skill), after any weapon
            strength penalty (see :func:`weapon_accuracy`).
        dodge: Defender dodge (unitless skill).
        magic: True for magical attacks, whose accuracy roll is doubled.

    Returns:
        Probability in [0, 1].

    Raises:
        ValueError: If either stat is negative, NaN or infinite.
    """
    _check_stat("accuracy", accuracy)
    _check_stat("dodge", dodge)
    a = _effective_accuracy(accuracy, magic)
    if dodge == 0:
        return 1.0
    if a == 0:
        return 0.0
    if a >= dodge:
        return 1.0 - dodge / (2.0 * a)
    return a / (2.0 * dodge)


def roll_hit(
    rng: np.random.Generator, accuracy: float, dodge: float, *, magic: bool = False
) -> bool:
    """Perform the seed 002 hit test once.

    Source: seed 002 and ``reference/pd_combat.md`` (``Char.hit``).

    Draw order (determinism contract): exactly two ``rng.random()`` calls,
    always, even when a stat is 0 -- first the attacker's
    ``rng.random() * accuracy`` (doubled afterwards when ``magic``), then the
    defender's ``rng.random() * dodge``. The attack hits iff the attacker's
    value is >= the defender's. The success probability is
    :func:`hit_chance`.

    Args:
        rng: The world's random stream.
        accuracy: Attacker accuracy (unitless), after the weapon penalty.
        dodge: Defender dodge (unitless).
        magic: True for magical attacks (attacker's roll doubled).

    Returns:
        True on a hit.

    Raises:
        ValueError: If either stat is negative, NaN or infinite (no draw is
            made in that case).
    """
    _check_stat("accuracy", accuracy)
    _check_stat("dodge", dodge)
    acu = float(rng.random()) * accuracy
    if magic:
        acu *= 2.0
    defence_roll = float(rng.random()) * dodge
    return acu >= defence_roll


def weapon_accuracy(accuracy: float, required_strength: int, strength: int) -> float:
    """Apply seed 002's penalty for a weapon that is too heavy.

    Source: seed 002 ("accuracy is decreased when using weapons with a required
    strength higher than the hero's strength"). When the requirement exceeds
    the wielder's strength by k points, accuracy is divided by 1.5**k;
    otherwise it is returned unchanged. The result is not truncated (seed 002's
    worked example keeps 4.98).

    Example: accuracy 14 x weapon factor 1.2 = 16.8; requirement 18 with
    strength 15 gives 16.8 / 1.5**3 ~= 4.98.

    Args:
        accuracy: Accuracy including the weapon's own factor (unitless).
        required_strength: The weapon's strength requirement (0 = none).
        strength: The wielder's strength.

    Returns:
        The effective accuracy (unitless, >= 0).

    Raises:
        ValueError: If accuracy is negative, NaN or infinite.
    """
    _check_stat("accuracy", accuracy)
    shortfall = required_strength - strength
    if shortfall <= 0:
        return accuracy
    return accuracy / _STRENGTH_PENALTY_BASE**shortfall


def excess_strength_bonus(rng: np.random.Generator, strength: int, required_strength: int) -> int:
    """Roll the extra damage for strength above a weapon's requirement.

    Source: seed 002 ("extra random damage 0 to heroStrength - weaponStrength")
    and ``reference/pd_combat.md`` (``IntRange(0, s)``, inclusive).

    Draw order: one ``rng.integers(0, excess + 1)`` call when
    ``strength > required_strength``; no draw otherwise.

    Args:
        rng: The world's random stream.
        strength: The wielder's strength.
        required_strength: The weapon's strength requirement.

    Returns:
        Bonus damage in hit points, uniform on 0..(strength - required_strength)
        inclusive, or 0 when there is no surplus.
    """
    excess = strength - required_strength
    if excess <= 0:
        return 0
    return int(rng.integers(0, excess + 1))


def damage_dice(level: int) -> int:
    """Number of damage dice for an attacker of the given level.

    Source: seed 001 (half the level rounded down, plus one; a level 3 monster
    with power 8 rolls 2d8).

    Args:
        level: Attacker level (>= 0).

    Returns:
        Dice count, ``level // 2 + 1`` (>= 1).

    Raises:
        ValueError: If level is negative.
    """
    if level < 0:
        raise ValueError(f"level must be >= 0, got {level}")
    return level // 2 + 1


def roll_dice(rng: np.random.Generator, count: int, sides: int) -> int:
    """Roll ``count`` dice of ``sides`` faces (``count``d``sides``) and sum them.

    Source: seed 001's damage dice notation (e.g. 2d8).

    Draw order: what a single vectorised ``rng.integers(1, sides + 1,
    size=count)`` call draws; no draw when ``count <= 0`` or ``sides <= 0``.
    Up to :data:`SCALAR_DICE` dice are drawn by that many scalar calls, which
    take the same values from the stream and leave it in the same state
    (numpy's bounded integers draw die by die either way) at less cost.

    Args:
        rng: The world's random stream.
        count: Number of dice.
        sides: Faces per die (each die is uniform on 1..sides).

    Returns:
        The total, in hit points for a damage roll; 0 when either argument is
        <= 0.
    """
    if count <= 0 or sides <= 0:
        return 0
    if count <= SCALAR_DICE:
        draw = rng.integers
        total = int(draw(1, sides + 1))
        for _ in range(count - 1):
            total += int(draw(1, sides + 1))
        return total
    return sum(rng.integers(1, sides + 1, size=count).tolist())  # cheaper than ndarray.sum


SCALAR_DICE = 3
"""Up to this many dice, :func:`roll_dice` makes one scalar call per die: a
scalar call costs about 1.4 µs, the vectorised one about 4.7 µs whatever the
count."""


def scale_by_energy(damage: int, energy: int, max_energy: int) -> int:
    """Adjust a damage roll for the attacker's current energy.

    Source: seed 001: ``d x (0.6 + 0.8 e / E)``, used only when it raises the
    damage; at zero energy the damage is instead ``d x 0.9`` rounded up.

    Rounding (Underhall's decision, seed 001 is silent): the scaled value is
    rounded down, computed exactly in integers as
    ``floor(d (3E + 4e) / (5E))``, so no float error can flip a boundary
    (d = 10 at e = E gives exactly 14). Zero energy uses the exact
    ``ceil(9 d / 10)`` and applies even though it lowers the damage. Energy
    above the maximum is not clamped. An actor without an energy pool
    (``max_energy <= 0``) deals its damage unchanged.

    Args:
        damage: Unscaled damage roll, in hit points.
        energy: Current energy (>= 0).
        max_energy: Maximum energy; <= 0 means no energy pool.

    Returns:
        Adjusted damage in hit points.

    Raises:
        ValueError: If energy is negative.
    """
    if energy < 0:
        raise ValueError(f"energy must be >= 0, got {energy}")
    if max_energy <= 0:
        return damage
    if energy == 0:
        return -((-9 * damage) // 10)
    scaled = (damage * (3 * max_energy + 4 * energy)) // (5 * max_energy)
    return max(damage, scaled)


def energy_cost(outcome: AttackOutcome, attacker_level: int, victim_level: int) -> int:
    """Energy the attacker spends on an attack with this outcome.

    Source: seed 001. Misses, criticals and lucky hits cost
    ``|attacker_level - victim_level| + 1``; a lucky hit costs three times
    that; against a lower-level victim the cost is halved. Plain hits are free.

    Rounding (Underhall's decision): the two adjustments stack by applying the
    x3 first and then halving with integer floor division, which equals the
    floor of the exact product (``floor(3/2 x base)``). The result is never
    below 0 (in fact a halved cost is always >= 1, since the level difference
    is then >= 1).

    Args:
        outcome: How the attack ended.
        attacker_level: Attacker level.
        victim_level: Victim level.

    Returns:
        Energy cost (>= 0), in energy points.
    """
    if outcome == AttackOutcome.HIT:
        return 0
    cost = abs(attacker_level - victim_level) + 1
    if outcome == AttackOutcome.LUCKY:
        cost *= 3
    if victim_level < attacker_level:
        cost //= 2
    return max(cost, 0)


@dataclass(frozen=True, slots=True)
class Combatant:
    """The combat stats of one side of a melee exchange.

    Attributes:
        level: Character level (>= 0); sets the number of damage dice.
        accuracy: Accuracy (unitless, >= 0), including the weapon's factor but
            not its strength penalty (applied in :func:`resolve_melee`).
        dodge: Dodge (unitless, >= 0).
        power: Die size for damage, including equipment; <= 0 rolls nothing.
        defence: Defence rating subtracted from damage taken (hit points; may
            be negative, e.g. cursed armour).
        energy: Current energy (>= 0).
        max_energy: Maximum energy (>= 0; 0 = no energy pool).
        strength: Strength (>= 0).
        required_strength: Strength required by the wielded weapon (>= 0;
            0 = no weapon requirement, which also means no excess-strength
            damage: seed 002 grants that bonus only for a wielded weapon, so
            an unarmed actor with strength 10 does not get 0..10 extra).

    Raises:
        ValueError: On construction, naming the first out-of-range field.
    """

    level: int
    accuracy: float
    dodge: float
    power: int
    defence: int
    energy: int
    max_energy: int
    strength: int = 10
    required_strength: int = 0

    def __post_init__(self) -> None:
        # One comparison chain for the usual case (two made per melee attack);
        # NaN fails the float tests, infinity the upper bounds.
        if (
            0 <= self.accuracy < math.inf
            and 0 <= self.dodge < math.inf
            and self.level >= 0
            and self.energy >= 0
            and self.max_energy >= 0
            and self.strength >= 0
            and self.required_strength >= 0
        ):
            return
        _check_stat("accuracy", self.accuracy)
        _check_stat("dodge", self.dodge)
        for name in ("level", "energy", "max_energy", "strength", "required_strength"):
            value = getattr(self, name)
            if value < 0:
                raise ValueError(f"{name} must be >= 0, got {value}")


@dataclass(frozen=True, slots=True)
class MeleeResult:
    """The outcome of one melee attack.

    Attributes:
        outcome: Miss, hit, critical or lucky hit.
        damage: Damage dealt to the defender, in hit points (>= 0).
        energy_cost: Energy the attacker spends, in energy points (>= 0).
        surprise: True if this was a surprise attack (no hit test).
    """

    outcome: AttackOutcome
    damage: int
    energy_cost: int
    surprise: bool


def resolve_melee(
    rng: np.random.Generator,
    attacker: Combatant,
    defender: Combatant,
    *,
    surprise: bool = False,
    magic: bool = False,
) -> MeleeResult:
    """Resolve one melee attack: the hit test, then the damage roll.

    Sources: ``RULES.md`` (two stages), seed 002 (hit test, strength penalty
    and bonus, surprise attacks always hit), seed 001 (dice, energy scaling,
    defence, critical, lucky hit, energy cost).

    Stage 1, unless ``surprise``: :func:`roll_hit` with the attacker's
    accuracy after :func:`weapon_accuracy` against the defender's dodge.
    Stage 2, on a hit: ``damage_dice(level)`` d ``power`` plus
    :func:`excess_strength_bonus` (only when the attacker has a weapon
    requirement, ``required_strength > 0``), scaled by :func:`scale_by_energy`, minus the
    defender's defence (floored at 0); then the critical roll. A critical
    doubles the damage, unless the damage is 0, in which case it is a lucky
    hit dealing 1..3 with no further adjustment.

    Draw order (determinism contract): hit test (2 floats, skipped on a
    surprise attack), dice (1 vectorised call, skipped if power <= 0), excess
    strength (1 call, skipped without a requirement or a surplus), critical (1 float), lucky
    damage (1 call, only on a lucky hit). A miss makes no further draw.

    Args:
        rng: The world's random stream.
        attacker: The attacking side.
        defender: The defending side.
        surprise: True for a surprise attack (defender asleep, paralysed,
            wandering, or the attacker just came into view): it always hits.
        magic: True if the attack is magical (attacker's hit roll doubled).

    Returns:
        The outcome, damage dealt, attacker's energy cost and surprise flag.
    """
    if not surprise:
        accuracy = weapon_accuracy(attacker.accuracy, attacker.required_strength, attacker.strength)
        if not roll_hit(rng, accuracy, defender.dodge, magic=magic):
            cost = energy_cost(AttackOutcome.MISS, attacker.level, defender.level)
            return MeleeResult(AttackOutcome.MISS, 0, cost, surprise)

    damage = roll_dice(rng, damage_dice(attacker.level), attacker.power)
    if attacker.required_strength > 0:
        damage += excess_strength_bonus(rng, attacker.strength, attacker.required_strength)
    damage = scale_by_energy(damage, attacker.energy, attacker.max_energy)
    damage = max(damage - defender.defence, 0)

    outcome = AttackOutcome.HIT
    if float(rng.random()) < CRITICAL_CHANCE:
        if damage == 0:
            outcome = AttackOutcome.LUCKY
            low, high = LUCKY_DAMAGE
            damage = int(rng.integers(low, high + 1))
        else:
            outcome = AttackOutcome.CRITICAL
            damage *= 2

    cost = energy_cost(outcome, attacker.level, defender.level)
    return MeleeResult(outcome, damage, cost, surprise)
