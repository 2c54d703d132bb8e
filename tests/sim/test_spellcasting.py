"""Tests for server.sim.spellcasting: seed 004's success rate, costs, forgetting and bonuses."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest

from server.sim.spellcasting import (
    CastRefusal,
    apply_spell_damage_bonus,
    base_casting_chance,
    beam_spell_range,
    can_cast,
    can_refresh,
    casting_penalty,
    dig_spell_range,
    failed_cast_cost,
    forgotten_cast_effect,
    is_forgotten,
    ray_spell_damage_dice,
    ray_spell_range,
    roll_cast,
    skill_for_practice,
    spell_damage_bonus,
    spell_difficulty,
    spell_energy_cost,
    spell_hit_bonus,
    spell_level_adjustment,
    spell_nutrition_cost,
    spell_retention,
    spell_success_percent,
    train_skill,
)

# Seed 004's role table: name -> (base, emergency, shield, suit).
SEED_ROLES = {
    "Archeologist": (5, 0, 2, 10), "Barbarian": (14, 0, 0, 8), "Caveman": (12, 0, 1, 8),
    "Healer": (3, -3, 2, 10), "Knight": (8, -2, 0, 9), "Monk": (8, -2, 2, 20),
    "Priest": (3, -2, 2, 10), "Ranger": (9, 2, 1, 10), "Rogue": (8, 0, 1, 9),
    "Samurai": (10, 0, 0, 8), "Tourist": (5, 1, 2, 10), "Valkyrie": (10, -2, 0, 9),
    "Wizard": (1, 0, 3, 10),
}  # fmt: skip

# Seed 004 "Minimum spell failure rates": penalty -> (plain, large shield,
# large shield + special spell); rows <= -4 and >= 18 are given by rule below.
SEED_MIN_FAIL = {
    -3: (0, 51, 5), -2: (0, 54, 10), -1: (0, 57, 15), 0: (0, 60, 20), 1: (0, 63, 25),
    2: (0, 66, 30), 3: (0, 69, 35), 4: (0, 72, 40), 5: (0, 75, 45), 6: (0, 78, 50),
    7: (3, 81, 55), 8: (12, 84, 60), 9: (21, 87, 65), 10: (30, 90, 70), 11: (39, 93, 75),
    12: (48, 96, 80), 13: (57, 99, 85), 14: (66, 100, 90), 15: (75, 100, 95),
    16: (84, 100, 100), 17: (93, 100, 100),
}  # fmt: skip


def _seed_min_fail(penalty: int) -> tuple[int, int, int]:
    if penalty <= -4:
        return 0, max(0, 60 + 3 * penalty), 0
    if penalty >= 18:
        return 100, 100, 100
    return SEED_MIN_FAIL[penalty]


def _seed_penalty(
    role: str,
    suit: str,
    helm: bool,
    gloves: bool,
    boots: bool,
    emergency: bool,
    special: bool,
    shield: bool,
) -> int:
    """The penalty as seed 004's list states it (uncapped; the cap is >= 18 -> 100%)."""
    base, heal, shield_pen, suit_pen = SEED_ROLES[role]
    penalty = (
        base + {"none": 0, "metal": suit_pen, "metal+robe": suit_pen // 2, "robe": -suit_pen}[suit]
    )
    penalty += shield_pen * shield + 4 * helm + 6 * gloves + 2 * boots
    return penalty + heal * emergency - 4 * special


SUITS = {
    "none": (False, False),
    "metal": (True, False),
    "metal+robe": (True, True),
    "robe": (False, True),
}


@pytest.mark.parametrize("column", ["plain", "large", "large_special"])
def test_minimum_failure_table_for_every_penalty(column: str) -> None:
    """Seed 004's minimum failure table, from every role and armour that realises a penalty."""
    shield = "none" if column == "plain" else "large"
    special = column == "large_special"
    index = ("plain", "large", "large_special").index(column)
    seen: set[int] = set()
    flags = (False, True)
    for role, suit, helm, gloves, boots, emergency in itertools.product(
        SEED_ROLES, SUITS, flags, flags, flags, flags
    ):
        metal_suit, robe = SUITS[suit]
        penalty = _seed_penalty(
            role, suit, helm, gloves, boots, emergency, special, shield != "none"
        )
        success = spell_success_percent(
            role=role, stat=25, xl=30, skill=3, spell_level=1, emergency=emergency,
            special=special, shield=shield, metal_suit=metal_suit, robe=robe,
            metal_helm=helm, metal_gloves=gloves, metal_boots=boots,
        )  # fmt: skip
        assert 100 - success == _seed_min_fail(penalty)[index], (role, suit, penalty)
        seen.add(penalty)
    assert set(range(-3, 18)) <= seen  # every row of the table was realised


def test_success_clamps_chance_at_120() -> None:
    # stat 25 gives 137 + 20, clamped to 120: the same result as stat 19 (104 + 20).
    args: dict[str, Any] = {
        "role": "Wizard",
        "xl": 30,
        "skill": 3,
        "spell_level": 1,
        "metal_suit": True,
    }
    assert spell_success_percent(stat=25, **args) == spell_success_percent(stat=19, **args)
    assert spell_success_percent(stat=18, **args) < spell_success_percent(stat=19, **args)


# Seed 004 "Highest easy spell level": XL range -> (unskilled, basic, skilled, expert).
HIGHEST_EASY = {
    (1, 2): (1, 2, 4, 5),
    (3, 8): (1, 3, 4, 6),
    (9, 14): (2, 3, 5, 6),
    (15, 20): (2, 4, 5, 7),
    (21, 26): (3, 4, 6, 7),
    (27, 30): (3, 5, 6, 7),
}


def test_highest_easy_spell_level_table() -> None:
    for (low, high), levels in HIGHEST_EASY.items():
        for xl in range(low, high + 1):
            for skill, expected in enumerate(levels):
                easy = [lvl for lvl in range(1, 8) if spell_difficulty(lvl, skill, xl) <= 0]
                assert max(easy) == expected, (xl, skill)
                # A Wizard with Int 18 casts easy spells surely and difficult ones not.
                kwargs: dict[str, Any] = {"role": "Wizard", "stat": 18, "xl": xl, "skill": skill}
                assert spell_success_percent(spell_level=expected, **kwargs) == 100
                if expected < 7:
                    assert spell_success_percent(spell_level=expected + 1, **kwargs) < 100


@pytest.mark.parametrize(
    ("level", "skill", "xl"),
    [(2, 0, 9), (3, 0, 21), (4, 1, 15), (5, 1, 27), (5, 2, 9), (6, 2, 21), (7, 3, 15)],
)
def test_xl_for_large_improvement(level: int, skill: int, xl: int) -> None:
    # Seed 004's table: at this XL the spell turns from difficult (1) to easy (0).
    assert spell_difficulty(level, skill, xl - 1) == 1
    assert spell_difficulty(level, skill, xl) == 0
    kwargs: dict[str, Any] = {"role": "Wizard", "stat": 18, "skill": skill, "spell_level": level}
    before = spell_success_percent(xl=xl - 1, **kwargs)
    after = spell_success_percent(xl=xl, **kwargs)
    assert after == 100 and before <= 100 - 40


def test_seed_worked_numbers_of_the_formula() -> None:
    assert base_casting_chance(18) == 99  # "Int/Wis of 18 gives a 99% base success rate"
    assert spell_level_adjustment(1, 3) == -53  # "a difficulty of 1 gives a 53% penalty"
    assert spell_level_adjustment(9, 7) == -100  # "a difficulty of 9 gives a 100% penalty"
    assert spell_level_adjustment(-2, 1) == 20  # level 1: full 20% bonus at -2 ...
    assert spell_level_adjustment(-1, 1) < 20  # ... and not before
    best_level_7 = min(spell_difficulty(7, s, xl) for s in range(4) for xl in range(1, 31))
    assert best_level_7 == -5  # "A level 7 spell cannot achieve a better difficulty than -5"
    assert spell_level_adjustment(-5, 7) == 10  # "which gives a bonus of 10%"


def test_roles_that_reach_100_percent_without_a_robe() -> None:
    """Seed 004's role and attribute strategy paragraph, at the 120% chance."""

    def sure(role: str, **kwargs: Any) -> bool:
        return (
            spell_success_percent(role=role, stat=25, xl=30, skill=3, spell_level=1, **kwargs)
            == 100
        )

    plain = {r for r in SEED_ROLES if sure(r)}
    emergency = {r for r in SEED_ROLES if sure(r, emergency=True)}
    special = {r for r in SEED_ROLES if sure(r, special=True)}
    assert plain == {"Archeologist", "Healer", "Priest", "Tourist", "Wizard"}
    assert emergency - plain == {"Knight", "Monk"}
    assert special - plain - emergency == {"Ranger", "Samurai", "Rogue", "Valkyrie"}
    assert not any(sure(r, emergency=True, special=True) for r in ("Barbarian", "Caveman"))


def test_robed_monk_casts_difficult_spells_surely() -> None:
    # Seed 004: a robed high-level Monk casts difficult spells up to level 5
    # surely; level 6 needs 22 Wisdom.
    assert spell_difficulty(5, 1, 24) == 1
    assert (
        spell_success_percent(role="Monk", stat=18, xl=24, skill=1, spell_level=5, robe=True) == 100
    )
    assert spell_difficulty(6, 1, 30) > 0
    kwargs: dict[str, Any] = {"role": "Monk", "xl": 30, "skill": 1, "spell_level": 6, "robe": True}
    assert spell_success_percent(stat=18, **kwargs) < 100
    assert spell_success_percent(stat=22, **kwargs) == 100


def test_penalty_parts() -> None:
    assert casting_penalty("Wizard") == 1
    assert casting_penalty("wizard", metal_suit=True) == 11
    assert casting_penalty("Wizard", metal_suit=True, robe=True) == 6  # half of 10
    assert casting_penalty("Wizard", robe=True) == -9
    assert casting_penalty("Wizard", shield="small") == 4
    assert casting_penalty("Wizard", metal_helm=True, metal_gloves=True, metal_boots=True) == 13
    assert casting_penalty("Healer", emergency=True, special=True) == 3 - 3 - 4
    assert casting_penalty("Monk", metal_suit=True, metal_gloves=True, shield="large") == 20


def test_large_shield_quarters_and_special_halves() -> None:
    kwargs: dict[str, Any] = {"role": "Wizard", "stat": 18, "xl": 1, "skill": 0, "spell_level": 1}
    # Chance 99 + 15 = 114; any shield adds the Wizard's 3: P = 4.
    assert spell_success_percent(shield="small", **kwargs) == 100  # 114*16//15 - 4 = 117
    assert spell_success_percent(shield="large", **kwargs) == 25  # 28*16//15 - 4
    # Special spell: P = 0 and the chance is only halved: 57*20//15 - 0.
    assert spell_success_percent(shield="large", special=True, **kwargs) == 76


@pytest.mark.parametrize(
    "bad",
    [
        {"role": "Necromancer"},
        {"shield": "tower"},
        {"skill": 4},
        {"skill": -1},
        {"spell_level": 0},
        {"spell_level": 8},
        {"stat": 2},
        {"stat": 26},
        {"xl": 0},
    ],
)
def test_success_rejects_bad_arguments(bad: dict[str, object]) -> None:
    args: dict[str, Any] = {"role": "Wizard", "stat": 18, "xl": 1, "skill": 0, "spell_level": 1}
    args.update(bad)
    with pytest.raises(ValueError):
        spell_success_percent(**args)


def test_costs_worked_example() -> None:
    # Seed 004: a level 3 spell costs 15 energy and 30 nutrition; failing uses 7 energy.
    assert spell_energy_cost(3) == 15
    assert spell_nutrition_cost(3) == 30
    assert failed_cast_cost(3) == 7
    assert spell_nutrition_cost(3, detect_food=True) == 0
    assert [spell_energy_cost(n) for n in range(1, 8)] == [5, 10, 15, 20, 25, 30, 35]
    for bad in (0, 8):
        with pytest.raises(ValueError):
            spell_energy_cost(bad)


def test_can_cast_refusals_in_order() -> None:
    ok: dict[str, Any] = {
        "energy": 15,
        "cost": 15,
        "stunned": False,
        "strength": 4,
        "free_hand": True,
    }
    assert can_cast(**ok) is None
    assert can_cast(**{**ok, "energy": 14}) is CastRefusal.NOT_ENOUGH_ENERGY
    assert can_cast(**{**ok, "strength": 3}) is CastRefusal.TOO_WEAK
    assert can_cast(**{**ok, "free_hand": False}) is CastRefusal.NO_FREE_HAND
    everything: dict[str, Any] = {
        "energy": 0,
        "cost": 15,
        "stunned": True,
        "strength": 1,
        "free_hand": False,
    }
    assert can_cast(**everything) is CastRefusal.STUNNED
    # A forgotten spell backfires even for a weak, drained caster.
    weak = {**ok, "energy": 0, "strength": 1}
    assert can_cast(**weak, forgotten=True) is None


def _tolerance(p: float, n: int) -> float:
    return 4.5 * math.sqrt(p * (1 - p) / n)


def test_roll_cast_frequency_and_confusion() -> None:
    rng = np.random.default_rng(4)
    n, p = 20_000, 0.37
    hits = sum(roll_cast(rng, 37) for _ in range(n))
    assert abs(hits / n - p) <= _tolerance(p, n)
    state = rng.bit_generator.state
    assert not any(roll_cast(rng, 100, confused=True) for _ in range(100))
    assert rng.bit_generator.state == state  # a confused cast draws nothing
    assert all(roll_cast(rng, 100) for _ in range(100))
    assert not any(roll_cast(rng, 0) for _ in range(100))
    with pytest.raises(ValueError):
        roll_cast(rng, 101)


def test_forgetting_and_refreshing() -> None:
    assert spell_retention(100, 100) == 20_000
    assert spell_retention(0, 19_000) == 1_000 and can_refresh(1_000)
    assert spell_retention(0, 18_999) == 1_001 and not can_refresh(1_001)
    assert spell_retention(0, 20_000) == 0 and is_forgotten(0)
    assert spell_retention(0, 50_000) == 0
    assert not is_forgotten(1)
    with pytest.raises(ValueError):
        spell_retention(10, 9)


@pytest.mark.parametrize("level", [1, 3, 7])
def test_forgotten_cast_40_30_20_10(level: int) -> None:
    """Seed 004's backfire table, with durations D = 3 (level + 1)."""
    d = 3 * (level + 1)
    outcomes = {(d, 0): 0.4, (2 * d // 3, d // 3): 0.3, (d // 3, 2 * d // 3): 0.2, (0, d): 0.1}
    rng = np.random.default_rng(level)
    n = 10_000
    counts = dict.fromkeys(outcomes, 0)
    for _ in range(n):
        counts[forgotten_cast_effect(rng, level)] += 1  # KeyError for any other outcome
    for outcome, p in outcomes.items():
        assert abs(counts[outcome] / n - p) <= _tolerance(p, n), outcome


def test_skill_training() -> None:
    assert train_skill(0, 3) == 3
    practice = 0
    for _ in range(20):  # twenty level-1 casts reach Basic
        assert skill_for_practice(practice) == 0
        practice = train_skill(practice, 1)
    assert skill_for_practice(practice) == 1
    assert [skill_for_practice(p) for p in (79, 80, 179, 180, 10_000)] == [1, 2, 2, 3, 3]
    assert skill_for_practice(500, max_skill=1) == 1
    with pytest.raises(ValueError):
        train_skill(-1, 1)
    with pytest.raises(ValueError):
        train_skill(0, 8)


def test_spell_hit_bonus() -> None:
    # Skill: unskilled -4, basic 0, skilled +2, expert +3 (seed 004).
    assert [spell_hit_bonus(s, 10) for s in range(4)] == [-4, 0, 2, 3]
    # Dexterity: <4 -3, 4-5 -2, 6-7 -1, 8-13 0, >=14 dex - 14.
    dex = [3, 4, 5, 6, 7, 8, 13, 14, 18, 25]
    assert [spell_hit_bonus(1, d) for d in dex] == [-3, -2, -2, -1, -1, 0, 0, 0, 4, 11]


def test_spell_damage_bonus_table() -> None:
    cases = {
        (9, 30): -3,
        (13, 30): 0,
        (18, 4): 0,
        (18, 5): 1,
        (14, 20): 1,
        (19, 13): 2,
        (24, 30): 2,
        (25, 13): 2,
        (25, 14): 3,
    }
    for (intelligence, xl), bonus in cases.items():
        assert spell_damage_bonus(intelligence, xl) == bonus, (intelligence, xl)
    assert apply_spell_damage_bonus(10, 8, 1) == 7
    assert apply_spell_damage_bonus(2, 8, 1) == 1  # never below 1
    assert apply_spell_damage_bonus(10, 25, 14) == 13
    assert [ray_spell_damage_dice(xl) for xl in (1, 2, 3, 30)] == [1, 2, 2, 16]


def test_spell_ranges() -> None:
    rng = np.random.default_rng(9)
    for roll, low, high in (
        (beam_spell_range, 6, 13),
        (dig_spell_range, 8, 25),
        (ray_spell_range, 7, 13),
    ):
        seen = {roll(rng) for _ in range(2_000)}
        assert seen == set(range(low, high + 1))
