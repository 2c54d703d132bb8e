"""Tests for server.sim.hunger: seed 001's nourishment and hunger rating."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from server.content.statuses import default_statuses
from server.sim.hunger import (
    EatResult,
    Nourishment,
    apply_hunger,
    can_eat,
    eat,
    exertion_fatigue,
    hunger_amount,
    hunger_due,
    hunger_interval,
    new_nourishment,
    quiet_round,
    reset_on_death,
    rest_bonus,
    starvation_drain,
    starving,
)
from server.sim.status import Statuses, StatusKind
from tests.sim.conftest import tally, with_statuses, within

HUNGER = default_statuses().hunger
ALWAYS = dataclasses.replace(HUNGER, modify_chance_monk=1.0, modify_chance_other=1.0)
NEVER = dataclasses.replace(HUNGER, modify_chance_monk=0.0, modify_chance_other=0.0)


def _amount(
    hp: int = 20,
    en: int = 20,
    statuses: Statuses | None = None,
    *,
    fatigue: int = 0,
    vibrant_warmth: bool = False,
    hunger_drain: bool = False,
) -> int:
    """Hunger amount for a character with max health and max energy 20."""
    return hunger_amount(
        hp=hp,
        max_hp=20,
        en=en,
        max_en=20,
        statuses=Statuses() if statuses is None else statuses,
        fatigue=fatigue,
        vibrant_warmth=vibrant_warmth,
        hunger_drain=hunger_drain,
    )


# --- the bar ----------------------------------------------------------------------------


def test_new_character_and_full_bar() -> None:
    state = new_nourishment()
    assert (state.nourishment, state.hunger) == (HUNGER.start_nourishment, HUNGER.start_rating)
    assert can_eat(state)
    assert can_eat(Nourishment(499, 0))
    assert not can_eat(Nourishment(500, 0))
    assert not can_eat(Nourishment(650, 0))


# --- when hunger strikes -----------------------------------------------------------------


def test_hunger_interval_is_uniform_on_5_to_15() -> None:
    rng = np.random.default_rng(31)
    n = 22_000
    counts = tally(lambda: hunger_interval(rng), n, 17)
    assert sum(counts[5:16]) == n
    assert all(within(counts[k], n, 1 / 11) for k in range(5, 16))


def test_hunger_due_fires_once_per_drawn_interval() -> None:
    rng, twin = np.random.default_rng(4), np.random.default_rng(4)
    state = new_nourishment()
    due_rounds = [r for r in range(1, 301) if hunger_due(rng, state)]
    expected, at = [], 0
    while True:
        at += hunger_interval(twin)
        if at > 300:
            break
        expected.append(at)
    assert due_rounds == expected
    gaps = np.diff([0, *due_rounds])
    assert gaps.min() >= 5 and gaps.max() <= 15


def test_quiet_round_is_hunger_due_on_the_rounds_it_takes() -> None:
    # The upkeep tries quiet_round first and calls hunger_due only when it
    # declines: the clock, the due rounds and the stream match hunger_due's.
    rng, twin = np.random.default_rng(9), np.random.default_rng(9)
    state, alone = new_nourishment(), new_nourishment()
    taken = 0
    for _ in range(400):
        if quiet_round(state):
            due = False
            taken += 1
        else:
            due = hunger_due(rng, state)
        assert due == hunger_due(twin, alone)
        assert state == alone
    assert rng.bit_generator.state == twin.bit_generator.state
    assert 250 < taken < 400  # most rounds are quiet (intervals are 5-15 rounds)


def test_quiet_round_declines_when_a_draw_or_a_decrease_is_due() -> None:
    for countdown in (0, 1):
        state = Nourishment(nourishment=300, hunger=50, countdown=countdown)
        assert not quiet_round(state)
        assert state.countdown == countdown


# --- how much --------------------------------------------------------------------------


def test_hunger_amount_doublings_in_the_seeds_order() -> None:
    assert _amount() == 1
    assert _amount(hp=9) == 2
    assert _amount(hp=10) == 1  # exactly 50% is not "less than 50%"
    assert _amount(en=9) == 2
    assert _amount(hp=9, en=9) == 4
    for kind in (
        StatusKind.DISEASED,
        StatusKind.POISONED,
        StatusKind.ENRAGED,
        StatusKind.ENERVATED,
        StatusKind.ACID_BURN,
    ):
        assert _amount(statuses=with_statuses(kind)) == 2
    assert _amount(statuses=with_statuses(StatusKind.POISONED, StatusKind.DISEASED)) == 2  # any one
    assert _amount(statuses=with_statuses(StatusKind.CONFUSED, StatusKind.HASTED)) == 1
    assert _amount(hp=9, en=9, statuses=with_statuses(StatusKind.ACID_BURN)) == 8


def test_fatigue_adds_up_to_16_for_the_maximum_of_24() -> None:
    assert _amount(fatigue=5) == 6
    worst = with_statuses(StatusKind.POISONED)
    assert _amount(hp=1, en=0, statuses=worst, fatigue=16) == 24
    assert _amount(hp=1, en=0, statuses=worst, fatigue=40) == 24
    assert _amount(hp=9, fatigue=3) == 5  # fatigue is added after the doubling


def test_vibrant_warmth_halves_and_hunger_drain_triples() -> None:
    worst = with_statuses(StatusKind.POISONED)
    assert _amount(hp=1, en=0, statuses=worst, fatigue=16, vibrant_warmth=True) == 12
    assert _amount(vibrant_warmth=True) == 1  # half of 1, rounded up
    assert _amount(hp=9, en=9, vibrant_warmth=True) == 2
    assert _amount(hunger_drain=True) == 3
    assert _amount(hp=9, en=9, statuses=worst, hunger_drain=True) == 24
    assert _amount(hunger_drain=True, vibrant_warmth=True) == 2  # 3 / 2 rounded up


def test_frozen_stops_hunger() -> None:
    frozen = with_statuses(StatusKind.FROZEN, StatusKind.POISONED)
    assert _amount(hp=1, en=0, statuses=frozen, fatigue=16, hunger_drain=True) == 0
    state = Nourishment(100, 3)
    assert apply_hunger(state, _amount(statuses=frozen)) == 0
    assert (state.nourishment, state.hunger) == (100, 3)


def test_zero_max_energy_is_never_low_and_bad_stats_are_refused() -> None:
    assert hunger_amount(hp=20, max_hp=20, en=0, max_en=0, statuses=Statuses()) == 1
    with pytest.raises(ValueError):
        hunger_amount(hp=5, max_hp=0, en=0, max_en=0, statuses=Statuses())
    with pytest.raises(ValueError):
        _amount(fatigue=-1)


def test_apply_hunger_takes_the_excess_from_nourishment() -> None:
    state = Nourishment(100, 10)
    assert apply_hunger(state, 4) == 0
    assert (state.nourishment, state.hunger) == (100, 6)
    assert apply_hunger(state, 6) == 0
    assert (state.nourishment, state.hunger) == (100, 0)
    assert apply_hunger(state, 24) == 24
    assert (state.nourishment, state.hunger) == (76, 0)
    state = Nourishment(3, 2)
    assert apply_hunger(state, 8) == 3
    assert (state.nourishment, state.hunger) == (0, 0)
    with pytest.raises(ValueError):
        apply_hunger(state, -1)


# --- eating ------------------------------------------------------------------------------


def test_eating_sets_the_rating_to_the_nutrition_even_from_150() -> None:
    state = Nourishment(200, 150)
    result = eat(
        np.random.default_rng(0), state, nutrition=25, vegetarian=True, is_monk=False, rules=NEVER
    )
    assert result == EatResult(25, 25, False, 0)
    assert (state.nourishment, state.hunger) == (225, 25)


def test_nourishment_is_not_capped_at_500() -> None:
    state = Nourishment(490, 0)
    eat(
        np.random.default_rng(0), state, nutrition=200, vegetarian=False, is_monk=False, rules=NEVER
    )
    assert state.nourishment == 690 and not can_eat(state)
    with pytest.raises(ValueError):
        eat(np.random.default_rng(0), state, nutrition=10, vegetarian=True, is_monk=False)
    with pytest.raises(ValueError):
        eat(
            np.random.default_rng(0),
            Nourishment(0, 0),
            nutrition=-1,
            vegetarian=True,
            is_monk=False,
        )


def test_modified_vegetarian_food_raises_the_rating_by_half() -> None:
    state = Nourishment(0, 0)
    result = eat(
        np.random.default_rng(0), state, nutrition=10, vegetarian=True, is_monk=True, rules=ALWAYS
    )
    assert result == EatResult(10, 15, True, 0)
    assert (state.nourishment, state.hunger) == (10, 15)


def test_modified_meat_halves_the_rating_and_may_bring_disease() -> None:
    rng, twin = np.random.default_rng(8), np.random.default_rng(8)
    state = Nourishment(0, 0)
    result = eat(rng, state, nutrition=10, vegetarian=False, is_monk=True, rules=ALWAYS)
    twin.random()
    assert result == EatResult(10, 5, True, int(twin.integers(0, 7)))
    assert (state.nourishment, state.hunger) == (10, 5)


def test_meat_disease_is_uniform_on_0_to_6() -> None:
    rng = np.random.default_rng(12)
    n = 14_000
    counts = tally(
        lambda: (
            eat(
                rng, Nourishment(0, 0), nutrition=10, vegetarian=False, is_monk=True, rules=ALWAYS
            ).disease_rounds
        ),
        n,
        8,
    )
    assert counts[7] == 0
    assert all(within(counts[k], n, 1 / 7) for k in range(7))


@pytest.mark.parametrize(("is_monk", "p"), [(True, 0.95), (False, 0.05)])
def test_modification_chance_is_95_percent_for_monks_5_for_others(is_monk: bool, p: float) -> None:
    rng = np.random.default_rng(13 + is_monk)
    n = 12_000
    veg = sum(
        eat(rng, Nourishment(0, 0), nutrition=10, vegetarian=True, is_monk=is_monk).hunger == 15
        for _ in range(n)
    )
    meat = [
        eat(rng, Nourishment(0, 0), nutrition=10, vegetarian=False, is_monk=is_monk)
        for _ in range(n)
    ]
    assert within(veg, n, p)
    assert within(sum(r.modified for r in meat), n, p)
    assert all(r.hunger == (5 if r.modified else 10) for r in meat)
    assert all(r.disease_rounds == 0 for r in meat if not r.modified)


# --- starving, resting, dying ---------------------------------------------------------


def test_starving_at_zero_nourishment_drains_health_and_energy() -> None:
    assert not starving(Nourishment(1, 0))
    assert starvation_drain(Nourishment(1, 0)) == (0, 0)
    assert starving(Nourishment(0, 5))
    health, energy = starvation_drain(Nourishment(0, 0))
    assert (health, energy) == (HUNGER.starve_health, HUNGER.starve_energy)
    assert health > 0 and energy > 0


def test_rest_raises_a_low_rating_slightly() -> None:
    low, step = HUNGER.rest_threshold, HUNGER.rest_amount
    assert 0 < step < low
    state = Nourishment(100, 0)
    assert rest_bonus(state) == step and state.hunger == step
    state = Nourishment(100, low - 1)
    assert rest_bonus(state) == 1 and state.hunger == low
    state = Nourishment(100, low)
    assert rest_bonus(state) == 0 and state.hunger == low
    state = Nourishment(100, 150)
    assert rest_bonus(state) == 0 and state.hunger == 150


def test_death_resets_the_bar_unless_avatar() -> None:
    state = Nourishment(40, 7, countdown=3)
    reset_on_death(state, avatar=True)
    assert (state.nourishment, state.hunger, state.countdown) == (
        40,
        7 + HUNGER.avatar_death_rating,
        0,
    )
    reset_on_death(state, avatar=False)
    assert (state.nourishment, state.hunger) == (HUNGER.start_nourishment, HUNGER.start_rating)


def test_exertion_past_the_energy_left_is_fatigue_up_to_16() -> None:
    # Seed 001: other actions "merely deduct energy and clip to zero", and
    # fatigue adds "up to 16" to the amount; the clipped part is the fatigue.
    assert exertion_fatigue(energy=1, cost=3) == 2
    assert exertion_fatigue(energy=5, cost=3) == 0
    assert exertion_fatigue(energy=0, cost=40) == 16
    # and it counts in the amount: base 1 + fatigue 2 at full health and energy
    amount = hunger_amount(hp=10, max_hp=10, en=10, max_en=10, statuses=Statuses(), fatigue=2)
    assert amount == 3
