"""Nourishment and hunger rating: seed 001's food bar.

Source: ``seeds/001_e9db5684e265e055.txt`` ("Your food bar combines two
numbers..." to "...your health and energy will not regenerate over time").
The numbers are in the ``[hunger]`` table of
``server/content/data/statuses.toml``.

Two numbers: *nourishment* (the bar; eating is refused at ``full`` = 500 or
more) and the *hunger rating* (the shaded part; eating sets it to the food's
nutrition). Every 5–15 rounds the rating drops by :func:`hunger_amount`; what
would take it below zero comes off nourishment instead. At nourishment 0 the
character starves: health and energy drain each hunger interval.

Time: one *turn* is a status round (see :mod:`server.sim.status`): the world
calls :func:`hunger_due` once per round per player, and on a due round
computes :func:`hunger_amount`, applies it with :func:`apply_hunger` and, if
:func:`starving`, :func:`starvation_drain`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from server.content.statuses import HungerRules, default_statuses
from server.sim.status import Statuses, doubles_hunger, hunger_paused

__all__ = [
    "EatResult",
    "Nourishment",
    "apply_hunger",
    "can_eat",
    "eat",
    "exertion_fatigue",
    "hunger_amount",
    "hunger_due",
    "hunger_interval",
    "new_nourishment",
    "quiet_round",
    "reset_on_death",
    "rest_bonus",
    "starvation_drain",
    "starving",
]


def _rules(rules: HungerRules | None) -> HungerRules:
    return default_statuses().hunger if rules is None else rules


@dataclass(slots=True)
class Nourishment:
    """One character's food bar. Mutable; owned by the player's actor.

    Attributes:
        nourishment: The bar, >= 0 (not capped: eating past 500 is allowed
            once, then refused).
        hunger: The hunger rating, >= 0.
        countdown: Rounds left until the next hunger decrease; 0 means a new
            interval is drawn on the next :func:`hunger_due`.
    """

    nourishment: int
    hunger: int
    countdown: int = 0


@dataclass(frozen=True, slots=True)
class EatResult:
    """What eating did.

    Attributes:
        nourishment_gained: Added to nourishment (the food's nutrition).
        hunger: The new hunger rating.
        modified: True when the 95% (monk) / 5% (others) modification hit.
        disease_rounds: Rounds of disease the caller must add (0..6, only for
            modified meat; 0 means none).
    """

    nourishment_gained: int
    hunger: int
    modified: bool
    disease_rounds: int


def new_nourishment(rules: HungerRules | None = None) -> Nourishment:
    """A new character's food bar: ``start_nourishment`` (300) and ``start_rating`` (50).

    Underhall's decision: the seed gives no starting values.
    """
    r = _rules(rules)
    return Nourishment(nourishment=r.start_nourishment, hunger=r.start_rating)


def can_eat(state: Nourishment, rules: HungerRules | None = None) -> bool:
    """False when the bar is full: nourishment 500 or more (seed 001)."""
    return state.nourishment < _rules(rules).full


def hunger_interval(rng: np.random.Generator, rules: HungerRules | None = None) -> int:
    """Rounds until the next hunger decrease: uniform on 5..15 (seed 001 "every 5-15 turns").

    Draw order: one ``rng.integers(5, 16)``.
    """
    r = _rules(rules)
    return int(rng.integers(r.interval_min, r.interval_max + 1))


def hunger_due(
    rng: np.random.Generator, state: Nourishment, rules: HungerRules | None = None
) -> bool:
    """Advance the hunger clock by one round; True on the round the rating decreases.

    When no interval is running (``countdown == 0``) a new one is drawn with
    :func:`hunger_interval`; the decrease falls on its last round, so
    consecutive decreases are 5..15 rounds apart. The clock runs while
    frozen; :func:`hunger_amount` is then 0.

    Draw order: one :func:`hunger_interval` draw on the round an interval
    starts; none otherwise.
    """
    if state.countdown <= 0:
        state.countdown = hunger_interval(rng, rules)
    state.countdown -= 1
    return state.countdown == 0


def quiet_round(state: Nourishment) -> bool:
    """Advance the hunger clock by one round if this round is sure to be
    quiet; return whether it was.

    A round is quiet when the running interval has more than one round left:
    :func:`hunger_due` would then draw nothing and return False, and this
    does the same countdown step for less. On any other round it changes
    nothing and returns False, and the caller goes the full way
    (:func:`hunger_due`).
    """
    if state.countdown > 1:
        state.countdown -= 1
        return True
    return False


def hunger_amount(
    *,
    hp: int,
    max_hp: int,
    en: int,
    max_en: int,
    statuses: Statuses,
    fatigue: int = 0,
    vibrant_warmth: bool = False,
    hunger_drain: bool = False,
    rules: HungerRules | None = None,
) -> int:
    """How much one hunger decrease takes (seed 001).

    In the seed's order: base 1; doubled if health is below 50%; doubled again
    if energy is below 50%; doubled again with any of disease, poison, rage,
    enervation or acid burn; plus fatigue (clamped to 0..16) — so at most
    8 + 16 = 24 without items. Then a hunger-draining weapon triples it and
    vibrant warmth halves it, rounding up (Underhall's decision: triple first
    and round up last, so warmth never stops hunger). Frozen: 0.

    Args:
        hp, max_hp: Health now and at most (max_hp >= 1).
        en, max_en: Energy now and at most; max_en 0 never counts as low.
        statuses: The character's statuses.
        fatigue: Fatigue level, e.g. ``statuses.magnitude(StatusKind.FATIGUE)``;
            values above 16 count as 16.
        vibrant_warmth: The character has the vibrant warmth item ability.
        hunger_drain: The character wields a hunger-draining weapon.
        rules: The ``[hunger]`` numbers; the shipped ones when None.

    Returns:
        The decrease, in hunger points (>= 0).

    Raises:
        ValueError: If max_hp < 1, or fatigue, hp, en or max_en is negative.
    """
    r = _rules(rules)
    if max_hp < 1 or min(hp, en, max_en, fatigue) < 0:
        raise ValueError(
            f"bad stats: hp={hp} max_hp={max_hp} en={en} max_en={max_en} fatigue={fatigue}"
        )
    if hunger_paused(statuses):
        return 0
    amount = r.base_amount
    if hp < r.low_fraction * max_hp:
        amount *= r.low_health_factor
    if en < r.low_fraction * max_en:
        amount *= r.low_energy_factor
    if doubles_hunger(statuses):
        amount *= r.status_factor
    amount += min(fatigue, r.fatigue_max)
    if hunger_drain:
        amount *= r.drain_factor
    if vibrant_warmth:
        amount = -(-amount // r.warmth_divisor)
    return amount


def apply_hunger(state: Nourishment, amount: int) -> int:
    """Lower the hunger rating by ``amount``; the excess below zero comes off nourishment.

    Seed 001: "If this would bring your hunger rating below zero, the excess
    is deducted from nourishment instead." Nourishment stops at 0 (then the
    character is :func:`starving`). Frozen characters get ``amount`` 0 from
    :func:`hunger_amount`, so nothing changes.

    Returns:
        Nourishment lost.

    Raises:
        ValueError: If amount is negative.
    """
    if amount < 0:
        raise ValueError(f"amount must be >= 0, got {amount}")
    excess = amount - state.hunger
    if excess <= 0:
        state.hunger -= amount
        return 0
    state.hunger = 0
    lost = min(excess, state.nourishment)
    state.nourishment -= lost
    return lost


def eat(
    rng: np.random.Generator,
    state: Nourishment,
    *,
    nutrition: int,
    vegetarian: bool,
    is_monk: bool,
    rules: HungerRules | None = None,
) -> EatResult:
    """Eat food of ``nutrition`` (seed 001).

    Nourishment rises by ``nutrition`` (not capped at 500); the hunger rating
    becomes ``nutrition`` (even if it was higher). Then with 95% chance for a
    monk, 5% for anyone else, the rating is modified: vegetarian food gives
    ``floor(nutrition × 1.5)`` (10 -> 15), meat ``floor(nutrition × 0.5)``
    (10 -> 5) plus 0..6 rounds of disease (uniform; 0 is no disease).
    Rounding down is Underhall's decision.

    Draw order: one ``rng.random()`` for the modification; for modified meat
    only, one ``rng.integers(0, 7)`` for the disease rounds.

    Args:
        rng: The world's random stream.
        state: The eater's food bar (changed in place).
        nutrition: The food's nutrition (>= 0).
        vegetarian: True for vegetarian food, False for meat.
        is_monk: True if the eater is a monk.
        rules: The ``[hunger]`` numbers; the shipped ones when None.

    Returns:
        What happened; the caller adds ``disease_rounds`` of DISEASED.

    Raises:
        ValueError: If nutrition is negative, or the bar is full (check
            :func:`can_eat` first; a full bar is a rejected command, not a meal).
    """
    r = _rules(rules)
    if nutrition < 0:
        raise ValueError(f"nutrition must be >= 0, got {nutrition}")
    if not can_eat(state, r):
        raise ValueError(f"cannot eat: nourishment {state.nourishment} >= {r.full}")
    state.nourishment += nutrition
    chance = r.modify_chance_monk if is_monk else r.modify_chance_other
    modified = bool(rng.random() < chance)
    disease = 0
    if not modified:
        state.hunger = nutrition
    elif vegetarian:
        state.hunger = math.floor(nutrition * r.vegetarian_factor)
    else:
        state.hunger = math.floor(nutrition * r.meat_factor)
        disease = int(rng.integers(0, r.meat_disease_max + 1))
    return EatResult(nutrition, state.hunger, modified, disease)


def starving(state: Nourishment) -> bool:
    """True at nourishment 0: health and energy drain (seed 001)."""
    return state.nourishment <= 0


def starvation_drain(state: Nourishment, rules: HungerRules | None = None) -> tuple[int, int]:
    """``(health, energy)`` lost on a hunger interval while starving, else ``(0, 0)``.

    Seed 001 says only that they "drain"; 1 health and 1 energy per interval
    (``starve_health``, ``starve_energy``) is Underhall's decision. Health
    reaching 0 kills.
    """
    if not starving(state):
        return (0, 0)
    r = _rules(rules)
    return (r.starve_health, r.starve_energy)


def exertion_fatigue(energy: int, cost: int, fatigue_max: int = 16) -> int:
    """Fatigue an action leaves when it costs more energy than is left.

    Seed 001: actions other than spells "merely deduct energy and clip to
    zero", and "fatigue increases [the hunger amount] additively by up to
    16", without saying where fatigue comes from. Underhall's decision: the
    energy an action could not be paid with (the part clipped away) is the
    fatigue it adds, at most ``fatigue_max``.

    Args:
        energy: Energy before the action, >= 0.
        cost: The action's energy cost, >= 0.
        fatigue_max: The ``[hunger]`` cap (16).

    Returns:
        ``min(fatigue_max, max(0, cost - energy))``; e.g. a melee swing
        costing 3 with 1 energy left adds 2.
    """
    return min(fatigue_max, max(0, cost - energy))


def rest_bonus(state: Nourishment, rules: HungerRules | None = None) -> int:
    """After a completed rest (not woken by a monster) a low hunger rating rises slightly.

    Seed 001 gives no numbers; Underhall's: a rating below ``rest_threshold``
    (25) rises by ``rest_amount`` (5), but not above the threshold.

    Returns:
        The rise (0 when the rating was not low).
    """
    r = _rules(rules)
    if state.hunger >= r.rest_threshold:
        return 0
    gain = min(r.rest_amount, r.rest_threshold - state.hunger)
    state.hunger += gain
    return gain


def reset_on_death(state: Nourishment, *, avatar: bool, rules: HungerRules | None = None) -> None:
    """The food bar after dying (a respawn).

    Seed 001: with the avatar status "dying does not reset your nourishment,
    though it does increase your hunger rating". Without it the bar resets
    to a new character's; with it nourishment is kept and the rating rises
    by ``avatar_death_rating`` (50, Underhall's number). The interval
    restarts either way.
    """
    r = _rules(rules)
    if avatar:
        state.hunger += r.avatar_death_rating
    else:
        state.nourishment = r.start_nourishment
        state.hunger = r.start_rating
    state.countdown = 0
