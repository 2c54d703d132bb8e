"""Tests for server.sim.throwing: seed 001's ranged combat rules.

Statistical checks use a fixed seed and a tolerance of Z standard deviations
(binomial for frequencies, the standard error for means), so a correct
implementation fails with probability of order 1e-5 and, being seeded, never
flakes.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.sim.combat import CRITICAL_CHANCE, AttackOutcome
from server.sim.throwing import (
    DEFAULT_THROW_RANGE,
    ThrowResult,
    resolve_throw,
    throw_damage_sides,
    throw_dice,
    throw_energy_cost,
    throw_miss_chance,
    throw_range,
    thrown_damage_roll,
    thrown_enchant_roll,
)
from tests.sim.conftest import Z, binomial_tolerance


def check_uniform(observed: Counter[int], values: range, n: int) -> None:
    assert set(observed) <= set(values)
    p = 1 / len(values)
    for v in values:
        assert abs(observed[v] / n - p) <= binomial_tolerance(p, n), v


BASE: dict[str, Any] = {
    "melee_miss": 0.1,
    "thrower_level": 0,
    "item_power": 4,
    "item_range": None,
    "cursed": False,
    "energy": 0,
    "max_energy": 0,
    "victim_defence": 0,
}


def throw(rng: np.random.Generator, **overrides: Any) -> ThrowResult:
    return resolve_throw(rng, **{**BASE, **overrides})


def roll(rng: np.random.Generator, **overrides: Any) -> int:
    args: dict[str, Any] = {
        "thrower_level": 0,
        "item_power": 4,
        "cursed": False,
        "energy": 0,
        "max_energy": 0,
    }
    return thrown_damage_roll(rng, **{**args, **overrides})


# --- miss chance ----------------------------------------------------------------


def test_seed_example_level_0_is_one_in_two() -> None:
    # Seed 001: "at level 0 the chance is 1 in 2" with the usual M = 10%.
    assert throw_miss_chance(0.1, 0) == 1 / 2


def test_seed_example_level_5_is_one_in_six() -> None:
    # Seed 001: "at level 5 it's 1 in 6": (10% + 40%) / (1 + 5 // 2) = 0.5 / 3.
    assert throw_miss_chance(0.1, 5) == 1 / 6


def test_marksman_halves_the_chance() -> None:
    assert throw_miss_chance(0.1, 0, marksman=True) == 1 / 4
    assert throw_miss_chance(0.1, 5, marksman=True) == 1 / 12


def test_monk_melee_miss() -> None:
    # Seed 001: a monk's M is 5%, so at level 0 the chance is 45%.
    assert throw_miss_chance(0.05, 0) == pytest.approx(0.45, abs=1e-15)


@pytest.mark.parametrize(
    ("level", "divisor"), [(0, 1), (1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (10, 6), (11, 6)]
)
def test_miss_chance_divisor_is_one_plus_half_level_rounded_down(level: int, divisor: int) -> None:
    assert throw_miss_chance(0.2, level) == pytest.approx(0.6 / divisor, rel=1e-15)


def test_miss_chance_is_capped_at_one() -> None:
    assert throw_miss_chance(0.9, 0) == 1.0
    assert throw_miss_chance(0.9, 0, marksman=True) == 0.5


@given(st.floats(0, 1), st.integers(0, 60), st.booleans())
def test_miss_chance_is_a_probability_falling_with_level(
    melee_miss: float, level: int, marksman: bool
) -> None:
    chance = throw_miss_chance(melee_miss, level, marksman=marksman)
    assert 0 < chance <= 1
    assert throw_miss_chance(melee_miss, level + 2, marksman=marksman) < chance


@pytest.mark.parametrize(("melee_miss", "level"), [(-0.1, 0), (1.5, 0), (math.nan, 0), (0.1, -1)])
def test_miss_chance_rejects_bad_input(melee_miss: float, level: int) -> None:
    with pytest.raises(ValueError):
        throw_miss_chance(melee_miss, level)


# --- range and energy -------------------------------------------------------------


def test_default_range_is_4() -> None:
    assert throw_range(None) == DEFAULT_THROW_RANGE == 4
    assert throw_range(2) == 2
    assert throw_range(7) == 7
    with pytest.raises(ValueError):
        throw_range(-1)


@pytest.mark.parametrize(("range_", "cost"), [(4, 2), (6, 4), (3, 1), (2, 0), (1, 0), (0, 0)])
def test_energy_cost_is_range_minus_2(range_: int, cost: int) -> None:
    assert throw_energy_cost(range_, cursed=False) == cost


@pytest.mark.parametrize("range_", [0, 1, 4, 10])
def test_cursed_energy_cost_is_8(range_: int) -> None:
    assert throw_energy_cost(range_, cursed=True) == 8


def test_energy_cost_rejects_negative_range() -> None:
    with pytest.raises(ValueError):
        throw_energy_cost(-1, cursed=False)


def test_resolve_throw_charges_energy_on_hit_and_miss() -> None:
    rng = np.random.default_rng(3)
    costs = {throw(rng, item_range=None).energy_cost for _ in range(50)}
    assert costs == {2}
    assert throw(rng, item_range=2, cursed=True).energy_cost == 8
    missed = throw(rng, melee_miss=1.0, item_range=6)
    assert missed == ThrowResult(AttackOutcome.MISS, 0, 0, 4)


# --- damage roll ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("level", "dice"), [(0, 1), (1, 1), (2, 1), (3, 1), (4, 2), (5, 2), (10, 5)]
)
def test_throw_dice_half_level_at_least_one(level: int, dice: int) -> None:
    assert throw_dice(level) == dice


def test_throw_dice_rejects_negative_level() -> None:
    with pytest.raises(ValueError):
        throw_dice(-1)


@pytest.mark.parametrize(
    ("power", "cursed", "sides"),
    [
        (6, False, 6),
        (6, True, 6),
        (-3, False, 2),  # seed 001: a negative rating counts as power 2
        (-3, True, -3),  # ... unless cursed: negative damage
        (None, False, None),  # no rating: 1-3
        (0, False, None),
        (None, True, 2),  # seed 001: cursed without a rating "still use 2"
    ],
)
def test_damage_sides(power: int | None, cursed: bool, sides: int | None) -> None:
    assert throw_damage_sides(power, cursed=cursed) == sides


@pytest.mark.parametrize(("level", "power"), [(0, 6), (1, 10), (6, 4), (10, 8), (20, 3)])
def test_damage_distribution_mean_and_range(level: int, power: int) -> None:
    # N dice of S faces: mean N (S + 1) / 2, variance N (S^2 - 1) / 12.
    n = 20_000
    dice = max(1, level // 2)
    rng = np.random.default_rng(1000 * level + power)
    rolls = np.array([roll(rng, thrower_level=level, item_power=power) for _ in range(n)])
    mean = dice * (power + 1) / 2
    std_error = math.sqrt(dice * (power * power - 1) / 12 / n)
    assert abs(rolls.mean() - mean) <= Z * std_error
    assert rolls.min() >= dice and rolls.max() <= dice * power
    if dice <= 3:  # extremes have probability >= 1/1000: all are seen
        assert rolls.min() == dice and rolls.max() == dice * power


@pytest.mark.parametrize("level", [0, 7, 30])
def test_unrated_item_does_1_to_3_whatever_the_level(level: int) -> None:
    n = 12_000
    rng = np.random.default_rng(55 + level)
    rolls = Counter(roll(rng, thrower_level=level, item_power=None) for _ in range(n))
    check_uniform(rolls, range(1, 4), n)


def test_negative_rating_rolls_power_2() -> None:
    # Level 6, rating -5: 3d2, so 3..6 with probabilities 1/8, 3/8, 3/8, 1/8.
    n = 16_000
    rng = np.random.default_rng(8)
    rolls = Counter(roll(rng, thrower_level=6, item_power=-5) for _ in range(n))
    expected = {3: Fraction(1, 8), 4: Fraction(3, 8), 5: Fraction(3, 8), 6: Fraction(1, 8)}
    assert set(rolls) <= set(expected)
    for value, p in expected.items():
        assert abs(rolls[value] / n - float(p)) <= binomial_tolerance(float(p), n)


def test_cursed_negative_rating_does_negative_damage() -> None:
    # Level 4, cursed rating -4: -(2d4), so -8..-2, mean -5.
    n = 16_000
    rng = np.random.default_rng(9)
    rolls = np.array([roll(rng, thrower_level=4, item_power=-4, cursed=True) for _ in range(n)])
    assert rolls.min() == -8 and rolls.max() == -2
    assert abs(rolls.mean() + 5) <= Z * math.sqrt(2 * 15 / 12 / n)


def test_cursed_unrated_item_rolls_power_2() -> None:
    rng = np.random.default_rng(10)
    rolls = {roll(rng, thrower_level=4, item_power=None, cursed=True) for _ in range(500)}
    assert rolls == {2, 3, 4}  # 2d2


@pytest.mark.parametrize(
    ("energy", "max_energy", "factor"),
    [(10, 10, Fraction(7, 5)), (5, 10, Fraction(1)), (0, 10, None), (3, 0, Fraction(1))],
)
def test_damage_is_scaled_by_energy_as_in_melee(
    energy: int, max_energy: int, factor: Fraction | None
) -> None:
    # Seed 001: d x (0.6 + 0.8 e / E) when it raises the damage (full energy:
    # x1.4; half: x1.0); at zero energy ceil(0.9 d). Same seed, same dice.
    for seed in range(100):
        raw = roll(np.random.default_rng(seed), thrower_level=6, item_power=6)
        scaled = roll(
            np.random.default_rng(seed),
            thrower_level=6,
            item_power=6,
            energy=energy,
            max_energy=max_energy,
        )
        if factor is None:
            assert scaled == math.ceil(Fraction(9, 10) * raw)
        else:
            assert scaled == max(raw, math.floor(factor * raw))


def test_damage_roll_rejects_negative_energy() -> None:
    with pytest.raises(ValueError):
        roll(np.random.default_rng(0), energy=-1)


# --- resolve_throw ------------------------------------------------------------------


@pytest.mark.parametrize(("level", "expected"), [(0, 1 / 2), (5, 1 / 6)])
def test_resolve_throw_miss_frequency(level: int, expected: float) -> None:
    n = 20_000
    rng = np.random.default_rng(4_000 + level)
    misses = sum(throw(rng, thrower_level=level).outcome == AttackOutcome.MISS for _ in range(n))
    assert abs(misses / n - expected) <= binomial_tolerance(expected, n)


def test_resolve_throw_marksman_miss_frequency() -> None:
    n = 20_000
    rng = np.random.default_rng(77)
    misses = sum(
        throw(rng, thrower_level=2, marksman=True).outcome == AttackOutcome.MISS for _ in range(n)
    )
    expected = 0.5 / 2 / 2  # (0.1 + 0.4) / (1 + 1), halved
    assert abs(misses / n - expected) <= binomial_tolerance(expected, n)


def test_critical_is_10_percent_of_hits_and_doubles() -> None:
    # Power 1: every die shows 1, so a level 10 hit does exactly 5 - defence 2.
    n = 20_000
    rng = np.random.default_rng(31)
    results = [throw(rng, thrower_level=10, item_power=1, victim_defence=2) for _ in range(n)]
    hits = [r for r in results if r.outcome != AttackOutcome.MISS]
    crits = [r for r in hits if r.outcome == AttackOutcome.CRITICAL]
    assert {r.damage for r in hits if r.outcome == AttackOutcome.HIT} == {3}
    assert {r.damage for r in crits} == {6}
    p_hat = len(crits) / len(hits)
    assert abs(p_hat - CRITICAL_CHANCE) <= binomial_tolerance(CRITICAL_CHANCE, len(hits))


def test_zero_damage_critical_deals_1() -> None:
    # Seed 001: "if you score a critical hit where the damage would have been
    # 0, you deal 1 damage instead".
    rng = np.random.default_rng(32)
    results = [
        throw(rng, melee_miss=0.0, thrower_level=40, victim_defence=100) for _ in range(3000)
    ]
    assert {r.damage for r in results if r.outcome == AttackOutcome.HIT} == {0}
    assert {r.damage for r in results if r.outcome == AttackOutcome.CRITICAL} == {1}
    assert all(r.outcome != AttackOutcome.LUCKY for r in results)


def test_defence_is_subtracted_and_floored() -> None:
    rng = np.random.default_rng(33)
    for _ in range(500):
        result = throw(rng, thrower_level=0, item_power=6, victim_defence=4)
        if result.outcome == AttackOutcome.HIT:
            assert 0 <= result.damage <= 2


def test_negative_defence_adds_damage() -> None:
    rng = np.random.default_rng(34)
    damages = {
        r.damage
        for r in (throw(rng, item_power=1, victim_defence=-2) for _ in range(300))
        if r.outcome == AttackOutcome.HIT
    }
    assert damages == {3}


def test_cursed_negative_damage_ignores_defence_and_doubles_on_critical() -> None:
    # Cursed rating -1 at level 0: exactly -1 (one die of one face, negated).
    rng = np.random.default_rng(35)
    results = [
        throw(rng, item_power=-1, cursed=True, victim_defence=5, melee_miss=0.0)
        for _ in range(2000)
    ]
    assert {r.damage for r in results if r.outcome == AttackOutcome.HIT} == {-1}
    assert {r.damage for r in results if r.outcome == AttackOutcome.CRITICAL} == {-2}
    assert all(r.energy_cost == 8 for r in results)


# --- enchantment ------------------------------------------------------------------


def test_enchant_roll_one_to_half_power_rounded_up() -> None:
    for power, high in [(6, 3), (7, 4), (1, 1), (2, 1), (None, 1), (-5, 1)]:
        n = 6_000
        rng = np.random.default_rng(60 + (power or 0))
        rolls = Counter(thrown_enchant_roll(rng, power, cursed=False) for _ in range(n))
        check_uniform(rolls, range(1, high + 1), n)


def test_enchant_roll_cursed_negative_uses_magnitude() -> None:
    rng = np.random.default_rng(61)
    rolls = {thrown_enchant_roll(rng, -6, cursed=True) for _ in range(500)}
    assert rolls == {1, 2, 3}


def test_enchant_resistance_then_blessed_undead_bonus() -> None:
    def halve(d: int) -> int:
        return d // 2

    for seed in range(200):
        raw = thrown_enchant_roll(np.random.default_rng(seed), 8, cursed=False)
        adjusted = thrown_enchant_roll(
            np.random.default_rng(seed),
            8,
            cursed=False,
            adjust=halve,
            blessed_vs_undead=True,
            victim_level=7,
        )
        assert adjusted == raw // 2 + 7


def test_resolve_throw_enchantment_only_on_hits() -> None:
    rng = np.random.default_rng(62)
    results = [throw(rng, item_power=6, enchanted=True) for _ in range(2000)]
    assert {r.enchant_damage for r in results if r.outcome == AttackOutcome.MISS} == {0}
    assert {r.enchant_damage for r in results if r.outcome != AttackOutcome.MISS} == {1, 2, 3}
    plain = [throw(rng, item_power=6, melee_miss=0.0) for _ in range(200)]
    assert {r.enchant_damage for r in plain} == {0}


def test_resolve_throw_passes_adjust_and_undead_bonus() -> None:
    seen: list[int] = []

    def adjust(d: int) -> int:
        seen.append(d)
        return 10 * d

    rng = np.random.default_rng(63)
    results = [
        throw(
            rng,
            item_power=4,
            enchanted=True,
            adjust=adjust,
            blessed_vs_undead=True,
            victim_level=3,
        )
        for _ in range(400)
    ]
    hits = [r for r in results if r.outcome != AttackOutcome.MISS]
    assert len(seen) == len(hits)
    assert {r.enchant_damage for r in hits} == {13, 23}


# --- draw order -------------------------------------------------------------------


def reference_throw(rng: np.random.Generator, args: dict[str, Any]) -> ThrowResult:
    """Independent restatement of the documented draw order, with raw draws."""
    level = args["thrower_level"]
    miss = (args["melee_miss"] + 0.4) / (1 + level // 2)
    miss = min(miss, 1.0) / (2 if args["marksman"] else 1)
    range_ = 4 if args["item_range"] is None else args["item_range"]
    cost = 8 if args["cursed"] else max(range_ - 2, 0)
    if rng.random() < miss:
        return ThrowResult(AttackOutcome.MISS, 0, 0, cost)
    power, cursed = args["item_power"], args["cursed"]
    dice = max(1, level // 2)
    if not power:
        sides = 2 if cursed else None
    else:
        sides = 2 if power < 0 and not cursed else power
    if sides is None:
        damage = int(rng.integers(1, 4))
    else:
        damage = int(rng.integers(1, abs(sides) + 1, size=dice).sum()) * (1 if sides > 0 else -1)
    e, big_e = args["energy"], args["max_energy"]
    if big_e > 0:
        if e == 0:
            damage = math.ceil(Fraction(9, 10) * damage)
        else:
            damage = max(damage, math.floor(Fraction(damage * (3 * big_e + 4 * e), 5 * big_e)))
    if damage >= 0:
        damage = max(damage - args["victim_defence"], 0)
    outcome = AttackOutcome.HIT
    if rng.random() < 0.1:
        outcome = AttackOutcome.CRITICAL
        damage = 1 if damage == 0 else 2 * damage
    enchant = 0
    if args["enchanted"]:
        high = max(1, math.ceil(abs(sides or 2) / 2))
        enchant = int(rng.integers(1, high + 1))
    return ThrowResult(outcome, damage, enchant, cost)


throw_args = st.fixed_dictionaries(
    {
        "melee_miss": st.sampled_from([0.0, 0.05, 0.1, 0.3]),
        "thrower_level": st.integers(0, 20),
        "item_power": st.one_of(st.none(), st.integers(-6, 12)),
        "item_range": st.one_of(st.none(), st.integers(0, 8)),
        "cursed": st.booleans(),
        "energy": st.integers(0, 20),
        "max_energy": st.integers(0, 20),
        "victim_defence": st.integers(-3, 10),
        "marksman": st.booleans(),
        "enchanted": st.booleans(),
    }
)


@given(throw_args, st.integers(0, 2**32))
def test_resolve_throw_follows_documented_draw_order(args: dict[str, Any], seed: int) -> None:
    rng = np.random.default_rng(seed)
    twin = np.random.default_rng(seed)
    assert resolve_throw(rng, **args) == reference_throw(twin, args)
    assert rng.bit_generator.state == twin.bit_generator.state


def test_miss_makes_exactly_one_draw() -> None:
    rng = np.random.default_rng(64)
    twin = np.random.default_rng(64)
    assert throw(rng, melee_miss=1.0).outcome == AttackOutcome.MISS
    twin.random()
    assert rng.bit_generator.state == twin.bit_generator.state


def test_validation_happens_before_any_draw() -> None:
    bad: list[Callable[[np.random.Generator], object]] = [
        lambda r: throw(r, melee_miss=2.0),
        lambda r: throw(r, thrower_level=-1),
        lambda r: throw(r, energy=-1),
        lambda r: throw(r, item_range=-1),
    ]
    for call in bad:
        rng = np.random.default_rng(65)
        before = rng.bit_generator.state
        with pytest.raises(ValueError):
            call(rng)
        assert rng.bit_generator.state == before


def test_resolve_throw_deterministic() -> None:
    def run(seed: int) -> list[ThrowResult]:
        rng = np.random.default_rng(seed)
        return [throw(rng, thrower_level=i % 9, enchanted=i % 3 == 0) for i in range(300)]

    assert run(42) == run(42)
    assert run(42) != run(43)


# --- purity -------------------------------------------------------------------
