"""Tests for server.sim.combat: worked examples, exact forms, statistics.

Statistical tests use a fixed seed and a tolerance of Z standard deviations of
the binomial (or chi-square) distribution, so a correct implementation fails a
given check with probability of order 1e-5 and, being seeded, never flakes.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import sys
from collections import Counter
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.sim import combat
from server.sim.combat import (
    CRITICAL_CHANCE,
    LUCKY_DAMAGE,
    AttackOutcome,
    Combatant,
    MeleeResult,
    damage_dice,
    energy_cost,
    excess_strength_bonus,
    hit_chance,
    resolve_melee,
    roll_dice,
    roll_hit,
    scale_by_energy,
    weapon_accuracy,
)
from tests.sim.conftest import Z, binomial_tolerance, imported_roots


def chi_square_bound(df: int, z: float = Z) -> float:
    """Upper z-sigma quantile of chi-square(df), Wilson-Hilferty approximation."""
    k = 2.0 / (9.0 * df)
    return df * (1.0 - k + z * math.sqrt(k)) ** 3


def chi_square(observed: dict[int, int], expected: dict[int, Fraction], n: int) -> float:
    return sum(
        (observed.get(v, 0) - n * float(p)) ** 2 / (n * float(p)) for v, p in expected.items()
    )


def check_frequencies(observed: dict[int, int], expected: dict[int, Fraction], n: int) -> None:
    """Every outcome within its binomial bound, no unexpected outcome, chi-square bound."""
    assert set(observed) <= set(expected)
    for value, p in expected.items():
        p_hat = observed.get(value, 0) / n
        assert abs(p_hat - float(p)) <= binomial_tolerance(float(p), n), value
    assert chi_square(observed, expected, n) <= chi_square_bound(len(expected) - 1)


BASE = Combatant(level=0, accuracy=10.0, dodge=5.0, power=6, defence=0, energy=0, max_energy=0)


def make(**overrides: Any) -> Combatant:
    return dataclasses.replace(BASE, **overrides)


# --- hit test -----------------------------------------------------------------


def test_worked_example_berserker_vs_gnoll_scout() -> None:
    # Seed 002: level 5 Berserker, accuracy 14 x war hammer 1.2 = 16.8, vs dodge 4.
    assert hit_chance(14 * 1.2, 4) == pytest.approx(1 - 4 / 33.6, rel=1e-12)


def test_worked_example_strength_penalty() -> None:
    # Seed 002: requirement 18, strength 15 -> 14 x (1.2 / 1.5**3) ~= 4.98.
    accuracy = weapon_accuracy(14 * 1.2, required_strength=18, strength=15)
    assert accuracy == pytest.approx(14 * 1.2 / 1.5**3, rel=1e-12)
    assert round(accuracy, 2) == 4.98


@pytest.mark.parametrize(("required", "strength"), [(0, 10), (15, 15), (12, 18)])
def test_weapon_accuracy_unchanged_without_shortfall(required: int, strength: int) -> None:
    assert weapon_accuracy(16.8, required, strength) == 16.8


def test_weapon_accuracy_rejects_negative() -> None:
    with pytest.raises(ValueError):
        weapon_accuracy(-1.0, 10, 10)


@given(
    st.floats(0, 1e6, allow_nan=False),
    st.integers(0, 30),
    st.integers(0, 30),
)
def test_weapon_accuracy_penalty_property(accuracy: float, required: int, strength: int) -> None:
    result = weapon_accuracy(accuracy, required, strength)
    assert 0 <= result <= accuracy
    shortfall = max(required - strength, 0)
    assert result == pytest.approx(accuracy / 1.5**shortfall, rel=1e-12)


@pytest.mark.parametrize(
    ("accuracy", "dodge", "expected"),
    [
        (0.0, 0.0, 1.0),
        (5.0, 0.0, 1.0),
        (0.0, 5.0, 0.0),
        (5.0, 5.0, 0.5),
        (10.0, 5.0, 0.75),
        (5.0, 10.0, 0.25),
        (1.0, 4.0, 0.125),
    ],
)
def test_hit_chance_closed_form_cases(accuracy: float, dodge: float, expected: float) -> None:
    assert hit_chance(accuracy, dodge) == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize(
    ("accuracy", "dodge"),
    [(16.8, 4.0), (4.98, 4.0), (3.0, 7.0), (5.0, 5.0), (1.0, 9.0), (20.0, 0.5)],
)
def test_hit_chance_against_grid_enumeration(accuracy: float, dodge: float) -> None:
    # Both rolls on an n-point midpoint grid; count the pairs with acu >= def.
    # For each attacker point the counted fraction is within 1/(2n) of the exact
    # min(a, D)/D, and averaging that piecewise-linear function with the midpoint
    # rule is exact except in the one cell holding the kink (error <= 1/n), so
    # |grid - exact| <= 2/n.
    n = 4000
    grid = (np.arange(n) + 0.5) / n
    acu = grid * accuracy
    dfn = grid * dodge
    hits = np.searchsorted(dfn, acu, side="right").sum()
    assert abs(hits / n**2 - hit_chance(accuracy, dodge)) <= 2.0 / n


@pytest.mark.parametrize(
    ("accuracy", "dodge", "plain", "magic"),
    [
        # seed 002 / pd_combat.md: A < D gives A / 2D, A >= D gives 1 - D / 2A;
        # magic doubles the attacker's roll, so A becomes 2A
        (3.0, 7.0, Fraction(3, 14), Fraction(6, 14)),
        (4.0, 4.0, Fraction(1, 2), Fraction(3, 4)),
        (16.8, 4.0, 1 - Fraction(4, 2) / Fraction(168, 10), 1 - Fraction(4, 2) / Fraction(336, 10)),
        (0.0, 2.0, Fraction(0), Fraction(0)),
    ],
)
def test_hit_chance_magic_doubles_accuracy(
    accuracy: float, dodge: float, plain: Fraction, magic: Fraction
) -> None:
    assert hit_chance(accuracy, dodge) == pytest.approx(float(plain), abs=1e-12)
    assert hit_chance(accuracy, dodge, magic=True) == pytest.approx(float(magic), abs=1e-12)


@pytest.mark.parametrize(
    ("accuracy", "dodge"), [(-1.0, 1.0), (1.0, -0.5), (math.nan, 1.0), (1.0, math.inf)]
)
def test_hit_test_rejects_bad_stats(accuracy: float, dodge: float) -> None:
    with pytest.raises(ValueError):
        hit_chance(accuracy, dodge)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError):
        roll_hit(rng, accuracy, dodge)


stats = st.floats(0, 1e6, allow_nan=False, allow_infinity=False)


@given(stats, stats, st.booleans())
def test_hit_chance_is_a_probability(accuracy: float, dodge: float, magic: bool) -> None:
    assert 0.0 <= hit_chance(accuracy, dodge, magic=magic) <= 1.0


@given(stats, stats, stats)
def test_hit_chance_monotone(a: float, b: float, other: float) -> None:
    low, high = sorted((a, b))
    assert hit_chance(low, other) <= hit_chance(high, other)
    assert hit_chance(other, low) >= hit_chance(other, high)


@given(
    st.floats(1e-6, 1e6, allow_nan=False, allow_infinity=False),
    st.floats(1e-6, 1e6, allow_nan=False, allow_infinity=False),
)
def test_hit_chance_complement_symmetry(a: float, d: float) -> None:
    # Ties have probability 0 for continuous rolls, so P(X >= Y) + P(Y >= X) = 1.
    assert hit_chance(a, d) + hit_chance(d, a) == pytest.approx(1.0, abs=1e-12)


def test_roll_hit_draw_order() -> None:
    # Attacker's float first, then the defender's; exactly two draws always.
    for seed in range(200):
        for accuracy, dodge, magic in [(3.0, 7.0, False), (7.0, 3.0, False), (3.0, 5.0, True)]:
            rng = np.random.default_rng(seed)
            twin = np.random.default_rng(seed)
            u_att, u_def = twin.random(), twin.random()
            expected = u_att * accuracy * (2 if magic else 1) >= u_def * dodge
            assert roll_hit(rng, accuracy, dodge, magic=magic) == expected
            assert rng.bit_generator.state == twin.bit_generator.state


def test_roll_hit_zero_stats_still_draw_twice() -> None:
    rng = np.random.default_rng(5)
    twin = np.random.default_rng(5)
    assert roll_hit(rng, 3.0, 0.0) is True
    twin.random(2)
    assert rng.bit_generator.state == twin.bit_generator.state


@pytest.mark.parametrize(
    ("accuracy", "dodge", "magic"),
    [
        (16.8, 4.0, False),
        (4.98, 4.0, False),
        (3.0, 7.0, False),
        (2.0, 3.0, True),
        (5.0, 5.0, False),
    ],
)
def test_roll_hit_frequency_matches_hit_chance(accuracy: float, dodge: float, magic: bool) -> None:
    n = 20_000
    rng = np.random.default_rng(20_240_601)
    hits = sum(roll_hit(rng, accuracy, dodge, magic=magic) for _ in range(n))
    p = hit_chance(accuracy, dodge, magic=magic)
    assert abs(hits / n - p) <= binomial_tolerance(p, n)


# --- damage roll ----------------------------------------------------------------


@pytest.mark.parametrize(("level", "dice"), [(0, 1), (1, 1), (2, 2), (3, 2), (4, 3), (9, 5)])
def test_damage_dice(level: int, dice: int) -> None:
    assert damage_dice(level) == dice


def test_damage_dice_rejects_negative_level() -> None:
    with pytest.raises(ValueError):
        damage_dice(-1)


def two_d_eight() -> dict[int, Fraction]:
    counts = Counter(a + b for a, b in itertools.product(range(1, 9), repeat=2))
    return {total: Fraction(c, 64) for total, c in counts.items()}


def test_worked_example_level_3_power_8_is_2d8_exact() -> None:
    # Seed 001: a level 3 monster with power 8 does 2d8.
    assert damage_dice(3) == 2
    pmf = two_d_eight()
    assert set(pmf) == set(range(2, 17))
    assert all(p == Fraction(8 - abs(total - 9), 64) for total, p in pmf.items())
    assert sum(pmf.values()) == 1


def test_2d8_distribution_statistically() -> None:
    n = 64_000
    rng = np.random.default_rng(8)
    observed = Counter(roll_dice(rng, damage_dice(3), 8) for _ in range(n))
    assert min(observed) >= 2 and max(observed) <= 16
    check_frequencies(observed, two_d_eight(), n)


def test_roll_dice_single_vectorised_draw() -> None:
    rng = np.random.default_rng(3)
    twin = np.random.default_rng(3)
    assert roll_dice(rng, 5, 6) == int(twin.integers(1, 7, size=5).sum())
    assert rng.bit_generator.state == twin.bit_generator.state


@pytest.mark.parametrize("count", [1, 2, 3, 4])
@pytest.mark.parametrize("sides", [1, 2, 3, 6, 8, 20, 100, 2**31, 2**32, 2**33])
def test_roll_dice_draws_what_the_vectorised_call_draws(count: int, sides: int) -> None:
    # A few dice take scalar calls; the stream must not notice, floats drawn
    # in between included.
    for seed in range(50):
        rng = np.random.default_rng(seed)
        twin = np.random.default_rng(seed)
        got, want = [], []
        for _ in range(5):
            got.append(roll_dice(rng, count, sides))
            want.append(sum(twin.integers(1, sides + 1, size=count).tolist()))
            assert rng.random() == twin.random()
        assert got == want
        assert rng.bit_generator.state == twin.bit_generator.state


@pytest.mark.parametrize(("count", "sides"), [(0, 6), (-2, 6), (3, 0), (3, -4)])
def test_roll_dice_degenerate_is_zero_without_draw(count: int, sides: int) -> None:
    rng = np.random.default_rng(1)
    before = rng.bit_generator.state
    assert roll_dice(rng, count, sides) == 0
    assert rng.bit_generator.state == before


def test_roll_dice_one_sided() -> None:
    assert roll_dice(np.random.default_rng(0), 4, 1) == 4


def test_excess_strength_bonus_uniform() -> None:
    n = 60_000
    rng = np.random.default_rng(17)
    observed = Counter(excess_strength_bonus(rng, 15, 10) for _ in range(n))
    check_frequencies(observed, {v: Fraction(1, 6) for v in range(6)}, n)


@pytest.mark.parametrize(("strength", "required"), [(10, 10), (10, 14), (0, 0)])
def test_excess_strength_bonus_none_without_surplus(strength: int, required: int) -> None:
    rng = np.random.default_rng(2)
    before = rng.bit_generator.state
    assert excess_strength_bonus(rng, strength, required) == 0
    assert rng.bit_generator.state == before


@pytest.mark.parametrize(
    ("damage", "energy", "max_energy", "expected"),
    [
        (10, 10, 10, 14),  # full energy: x1.4 exactly
        (10, 5, 10, 10),  # half energy: x1.0 -> unchanged
        (10, 1, 10, 10),  # would lower damage -> unchanged
        (10, 7, 10, 11),  # 11.6 rounded down
        (10, 35, 40, 13),  # exact 13; naive float arithmetic gives 12.999...
        (13, 9, 13, 15),  # exact 15; naive float arithmetic gives 14.999...
        (7, 0, 10, 7),  # zero energy: ceil(6.3)
        (10, 0, 10, 9),  # zero energy: lowers damage regardless
        (11, 0, 10, 10),  # ceil(9.9)
        (1, 0, 10, 1),
        (0, 0, 10, 0),
        (0, 10, 10, 0),
        (10, 0, 0, 10),  # no energy pool
        (10, 5, 0, 10),
        (10, 20, 10, 22),  # energy above the maximum is not clamped: x2.2
    ],
)
def test_scale_by_energy_cases(damage: int, energy: int, max_energy: int, expected: int) -> None:
    assert scale_by_energy(damage, energy, max_energy) == expected


def test_scale_by_energy_rejects_negative_energy() -> None:
    with pytest.raises(ValueError):
        scale_by_energy(10, -1, 10)


@given(st.integers(0, 10_000), st.integers(1, 1_000), st.data())
def test_scale_by_energy_matches_exact_fractions(
    damage: int, max_energy: int, data: st.DataObject
) -> None:
    energy = data.draw(st.integers(0, max_energy))
    result = scale_by_energy(damage, energy, max_energy)
    if energy == 0:
        assert result == math.ceil(Fraction(9, 10) * damage)
    else:
        factor = Fraction(3, 5) + Fraction(4, 5) * Fraction(energy, max_energy)
        assert result == max(damage, math.floor(damage * factor))
        assert result >= damage


# --- energy cost ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("outcome", "attacker", "victim", "cost"),
    [
        (AttackOutcome.HIT, 1, 9, 0),
        (AttackOutcome.HIT, 9, 1, 0),
        (AttackOutcome.MISS, 3, 3, 1),
        (AttackOutcome.MISS, 1, 4, 4),  # victim higher: |diff| + 1
        (AttackOutcome.MISS, 5, 2, 2),  # victim lower: 4 // 2
        (AttackOutcome.MISS, 6, 2, 2),  # 5 // 2, floor
        (AttackOutcome.CRITICAL, 2, 2, 1),
        (AttackOutcome.CRITICAL, 4, 1, 2),
        (AttackOutcome.LUCKY, 2, 2, 3),
        (AttackOutcome.LUCKY, 1, 3, 9),
        (AttackOutcome.LUCKY, 3, 2, 3),  # 3 x 2 = 6, halved
        (AttackOutcome.LUCKY, 4, 2, 4),  # 3 x 3 = 9, halved and floored (not 3 x (3 // 2))
    ],
)
def test_energy_cost_table(outcome: AttackOutcome, attacker: int, victim: int, cost: int) -> None:
    assert energy_cost(outcome, attacker, victim) == cost


@given(st.sampled_from(AttackOutcome), st.integers(0, 100), st.integers(0, 100))
def test_energy_cost_properties(outcome: AttackOutcome, attacker: int, victim: int) -> None:
    cost = energy_cost(outcome, attacker, victim)
    assert cost >= 0
    if outcome == AttackOutcome.HIT:
        assert cost == 0
    else:
        assert cost >= 1
    assert energy_cost(AttackOutcome.LUCKY, attacker, victim) >= energy_cost(
        AttackOutcome.MISS, attacker, victim
    )


# --- resolve_melee --------------------------------------------------------------


def _seed_energy_cost(outcome: AttackOutcome, attacker: int, victim: int) -> int:
    """Seed 001 in its own words: misses, criticals and lucky hits cost the level
    difference + 1, a lucky hit three times that, halved against a lower level."""
    if outcome == AttackOutcome.HIT:
        return 0
    cost = abs(attacker - victim) + 1
    cost *= 3 if outcome == AttackOutcome.LUCKY else 1
    return cost // 2 if victim < attacker else cost


def reference_melee(
    rng: np.random.Generator, att: Combatant, dfn: Combatant, surprise: bool, magic: bool
) -> MeleeResult:
    """The seeds' words, restated with plain arithmetic (no function of the
    module under test), drawing in the order the module documents: seed 002's
    race (accuracy / 1.5^(req - str) for a heavy weapon, magic doubling the
    attacker's draw), seed 001's (L // 2 + 1) d power, seed 002's excess
    strength 0..(str - req), seed 001's energy factor 0.6 + 0.8 e / E used only
    when it raises the damage (0.9 rounded up at no energy), defence, the 10%
    critical, a lucky 1-3 on a 0-damage critical."""
    if not surprise:
        acu = att.accuracy
        if att.required_strength > att.strength:
            acu = acu / 1.5 ** (att.required_strength - att.strength)
        u_att = rng.random() * acu * (2 if magic else 1)
        u_def = rng.random() * dfn.dodge
        if u_att < u_def:
            cost = _seed_energy_cost(AttackOutcome.MISS, att.level, dfn.level)
            return MeleeResult(AttackOutcome.MISS, 0, cost, surprise)
    damage = 0
    if att.power > 0:
        damage = int(rng.integers(1, att.power + 1, size=att.level // 2 + 1).sum())
    if 0 < att.required_strength < att.strength:
        damage += int(rng.integers(0, att.strength - att.required_strength + 1))
    if att.max_energy > 0:
        if att.energy == 0:
            damage = math.ceil(Fraction(9 * damage, 10))
        else:
            factor = Fraction(6, 10) + Fraction(8, 10) * Fraction(att.energy, att.max_energy)
            damage = max(damage, math.floor(damage * factor))
    damage = max(damage - dfn.defence, 0)
    outcome = AttackOutcome.HIT
    if rng.random() < 0.1:
        if damage == 0:
            outcome, damage = AttackOutcome.LUCKY, int(rng.integers(1, 4))
        else:
            outcome, damage = AttackOutcome.CRITICAL, damage * 2
    return MeleeResult(outcome, damage, _seed_energy_cost(outcome, att.level, dfn.level), surprise)


combatants = st.builds(
    Combatant,
    level=st.integers(0, 12),
    accuracy=st.floats(0, 30, allow_nan=False),
    dodge=st.floats(0, 30, allow_nan=False),
    power=st.integers(-2, 12),
    defence=st.integers(-2, 20),
    energy=st.integers(0, 20),
    max_energy=st.integers(0, 20),
    strength=st.integers(0, 20),
    required_strength=st.integers(0, 20),
)


@given(combatants, combatants, st.booleans(), st.booleans(), st.integers(0, 2**32))
def test_resolve_melee_agrees_with_the_seeds_words(
    att: Combatant, dfn: Combatant, surprise: bool, magic: bool, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    twin = np.random.default_rng(seed)
    result = resolve_melee(rng, att, dfn, surprise=surprise, magic=magic)
    assert result == reference_melee(twin, att, dfn, surprise, magic)
    assert rng.bit_generator.state == twin.bit_generator.state
    assert result.damage >= 0 and result.energy_cost >= 0
    assert result.surprise is surprise


def test_surprise_never_misses_and_skips_hit_draw() -> None:
    att = make(accuracy=0.0, power=8, level=3)
    dfn = make(dodge=1000.0)
    for seed in range(500):
        rng = np.random.default_rng(seed)
        twin = np.random.default_rng(seed)
        result = resolve_melee(rng, att, dfn, surprise=True)
        assert result.outcome != AttackOutcome.MISS
        assert result.surprise
        # First draw is the damage dice, not a hit-test float.
        dice = int(twin.integers(1, 9, size=2).sum())
        critical = twin.random() < CRITICAL_CHANCE
        assert result.damage == (2 * dice if critical else dice)
        assert rng.bit_generator.state == twin.bit_generator.state


def test_miss_costs_energy_and_stops_drawing() -> None:
    att = make(level=5, accuracy=0.0)
    dfn = make(level=2, dodge=10.0)
    rng = np.random.default_rng(9)
    twin = np.random.default_rng(9)
    assert resolve_melee(rng, att, dfn) == MeleeResult(AttackOutcome.MISS, 0, 2, False)
    twin.random(2)
    assert rng.bit_generator.state == twin.bit_generator.state


def test_no_weapon_requirement_gives_no_excess_strength() -> None:
    # Strength 18 with no weapon requirement: damage is exactly the dice.
    att = make(power=1, level=0, strength=18, required_strength=0)
    dfn = make(defence=0)
    for seed in range(200):
        result = resolve_melee(np.random.default_rng(seed), att, dfn, surprise=True)
        assert result.damage in (1, 2)


def test_resolve_melee_worked_example_range() -> None:
    att = make(level=3, power=8)
    dfn = make(defence=0)
    rng = np.random.default_rng(77)
    for _ in range(2000):
        result = resolve_melee(rng, att, dfn, surprise=True)
        if result.outcome == AttackOutcome.HIT:
            assert 2 <= result.damage <= 16
        else:
            assert result.outcome == AttackOutcome.CRITICAL
            assert result.damage % 2 == 0 and 4 <= result.damage <= 32


def test_critical_rate() -> None:
    n = 20_000
    rng = np.random.default_rng(101)
    att = make(level=2, power=6)
    dfn = make(defence=0)
    outcomes = Counter(resolve_melee(rng, att, dfn, surprise=True).outcome for _ in range(n))
    assert set(outcomes) <= {AttackOutcome.HIT, AttackOutcome.CRITICAL}
    p_hat = outcomes[AttackOutcome.CRITICAL] / n
    assert abs(p_hat - CRITICAL_CHANCE) <= binomial_tolerance(CRITICAL_CHANCE, n)


def test_lucky_hits_rate_and_damage() -> None:
    n = 40_000
    rng = np.random.default_rng(202)
    att = make(level=1, power=4)
    dfn = make(defence=100)  # every hit is absorbed, so every critical is lucky
    results = [resolve_melee(rng, att, dfn, surprise=True) for _ in range(n)]
    lucky = [r.damage for r in results if r.outcome == AttackOutcome.LUCKY]
    assert all(r.damage == 0 for r in results if r.outcome == AttackOutcome.HIT), (
        "absorbed hits deal 0"
    )
    assert abs(len(lucky) / n - CRITICAL_CHANCE) <= binomial_tolerance(CRITICAL_CHANCE, n)
    low, high = LUCKY_DAMAGE
    expected = {v: Fraction(1, high - low + 1) for v in range(low, high + 1)}
    check_frequencies(Counter(lucky), expected, len(lucky))


def test_resolve_melee_deterministic() -> None:
    att = make(
        level=4, accuracy=9.0, power=7, energy=3, max_energy=10, strength=14, required_strength=12
    )
    dfn = make(level=3, dodge=6.0, defence=2)

    def run(seed: int) -> list[MeleeResult]:
        rng = np.random.default_rng(seed)
        return [resolve_melee(rng, att, dfn, surprise=i % 7 == 0) for i in range(300)]

    assert run(42) == run(42)
    assert run(42) != run(43)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("dodge", -1.0),
        ("dodge", math.nan),
        ("level", -1),
        ("energy", -3),
        ("max_energy", -1),
        ("accuracy", math.nan),
        ("accuracy", math.inf),
        ("strength", -1),
        ("required_strength", -1),
    ],
)
def test_combatant_validation(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=f"^{field} must be"):
        make(**{field: value})


def test_combatant_allows_zero_accuracy_and_dodge() -> None:
    assert make(accuracy=0.0, dodge=0.0).accuracy == 0.0


# --- purity -------------------------------------------------------------------


def test_combat_imports_only_numpy_and_stdlib() -> None:
    roots = imported_roots(combat)
    assert roots.isdisjoint({"random", "time", "asyncio", "os"})
    assert roots <= sys.stdlib_module_names | {"numpy"}
