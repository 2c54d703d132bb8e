"""Tests for server.sim.status: stacking, rounds, interactions, shields, freeze and spark."""

from __future__ import annotations

import numpy as np
import pytest

from server.content.statuses import default_statuses
from server.sim.commands import DIRECTIONS
from server.sim.status import (
    StatusChange,
    StatusEffect,
    Statuses,
    StatusKind,
    accuracy_factor,
    action_delay,
    can_act,
    can_cast,
    can_melee,
    casts_any_known,
    confused_direction,
    defence_bonus,
    elemental_shield,
    freeze_inflicts,
    frozen_rounds,
    is_unseen,
    power_bonus,
    regenerates,
    shield_damage_type,
    shield_retaliation,
    shield_touch,
    spark_burn_rounds,
    spells_fail,
)
from tests.sim.conftest import tally, with_statuses, within

K = StatusKind
C = StatusChange
RULES = default_statuses()


# --- the wire values --------------------------------------------------------------------


def test_status_kind_wire_values_never_change() -> None:
    assert [(k.name, k.value) for k in StatusKind] == [
        ("FROZEN", 0), ("ON_FIRE", 1), ("POISONED", 2), ("DISEASED", 3), ("CONFUSED", 4),
        ("STUNNED", 5), ("AFRAID", 6), ("ASLEEP", 7), ("PARALYSED", 8), ("HASTED", 9),
        ("ENRAGED", 10), ("STONESKIN", 11), ("INVISIBLE", 12), ("ENLIGHTENED", 13),
        ("ACID_BURN", 14), ("WEBBED", 15), ("SLOWED", 16), ("FIRE_SHIELD", 17),
        ("ICE_SHIELD", 18), ("ENERVATED", 19), ("FATIGUE", 20), ("AVATAR", 21),
    ]  # fmt: skip
    assert [(c.name, c.value) for c in StatusChange] == [
        ("APPLIED", 0), ("EXTENDED", 1), ("DAMAGE", 2), ("ENERGY_DRAIN", 3), ("EXPIRED", 4),
        ("REMOVED", 5),
    ]  # fmt: skip


# --- adding and stacking ----------------------------------------------------------------


def test_new_status_is_applied_and_capped() -> None:
    s = Statuses()
    assert s.add(K.CONFUSED, 4) == [StatusEffect(K.CONFUSED, C.APPLIED, 4)]
    assert s.has(K.CONFUSED) and s.rounds(K.CONFUSED) == 4
    cap = RULES.status(K.FROZEN).max_rounds
    assert s.add(K.FROZEN, cap + 50) == [StatusEffect(K.FROZEN, C.APPLIED, cap)]
    assert s.active() == (K.FROZEN, K.CONFUSED)
    assert len(s) == 2


def test_a_character_s_confusion_keeps_the_longer() -> None:
    """``add`` is the seed-001 status container of characters, whose stacking
    is Underhall's decision (statuses.toml). Monsters hit by seed 003 damage
    types stack as that seed says instead (``impose``, tested below and in
    tests/sim/test_play_seed_rules.py)."""
    assert RULES.status(K.CONFUSED).stacking == "max"
    s = Statuses()
    s.add(K.CONFUSED, 3)
    assert s.add(K.CONFUSED, 5) == [StatusEffect(K.CONFUSED, C.EXTENDED, 5)]
    assert s.add(K.CONFUSED, 2) == []
    assert s.rounds(K.CONFUSED) == 5


def test_impose_sets_the_counter_past_the_cap() -> None:
    """Seed 003's amounts (a sleep value of 350) are not cut by max_rounds."""
    s = Statuses()
    assert RULES.status(K.ASLEEP).max_rounds < 350
    assert s.impose(K.ASLEEP, 350) == [StatusEffect(K.ASLEEP, C.APPLIED, 350)]
    assert s.rounds(K.ASLEEP) == 350
    assert s.impose(K.ASLEEP, 350) == []
    assert s.impose(K.ASLEEP, 20) == [StatusEffect(K.ASLEEP, C.EXTENDED, 20)]
    assert s.impose(K.ASLEEP, 0) == []


def test_add_stacking_sums_up_to_the_cap() -> None:
    sdef = RULES.status(K.DISEASED)
    assert sdef.stacking == "add"
    s = Statuses()
    s.add(K.DISEASED, 3)
    assert s.add(K.DISEASED, 4) == [StatusEffect(K.DISEASED, C.EXTENDED, 7)]
    s.add(K.DISEASED, sdef.max_rounds)
    assert s.rounds(K.DISEASED) == sdef.max_rounds
    assert s.add(K.DISEASED, 1) == []


def test_keep_stacking_cannot_renew_paralysis() -> None:
    assert RULES.status(K.PARALYSED).stacking == "keep"
    s = Statuses()
    s.add(K.PARALYSED, 3)
    assert s.add(K.PARALYSED, 8) == []
    assert s.rounds(K.PARALYSED) == 3


def test_magnitude_default_max_stacking_and_cap() -> None:
    s = Statuses()
    s.add(K.POISONED, 3)
    assert s.magnitude(K.POISONED) == RULES.status(K.POISONED).default_magnitude == 1
    s.add(K.POISONED, 1, magnitude=3)
    s.add(K.POISONED, 1, magnitude=2)
    assert (s.rounds(K.POISONED), s.magnitude(K.POISONED)) == (5, 3)
    assert s.magnitude(K.CONFUSED) == 0


def test_fatigue_magnitude_adds_up_to_16() -> None:
    s = Statuses()
    s.add(K.FATIGUE, 10, magnitude=10)
    assert s.add(K.FATIGUE, 10, magnitude=10) == [StatusEffect(K.FATIGUE, C.EXTENDED, 10)]
    assert s.magnitude(K.FATIGUE) == 16


def test_bad_rounds_and_magnitudes_are_refused() -> None:
    s = Statuses()
    assert s.add(K.DISEASED, 0) == [] and not s.has(K.DISEASED)
    with pytest.raises(ValueError):
        s.add(K.POISONED, -1)
    with pytest.raises(ValueError):
        s.add(K.POISONED, 3, magnitude=0)
    with pytest.raises(ValueError):
        s.add(K.CONFUSED, 3, magnitude=2)
    with pytest.raises(ValueError):
        s.reduce(K.POISONED, -1)


def test_remove_and_reduce() -> None:
    s = Statuses()
    s.add(K.POISONED, 10, magnitude=2)
    assert s.reduce(K.POISONED, 4) == [] and s.rounds(K.POISONED) == 6
    assert s.reduce(K.POISONED, 6) == [StatusEffect(K.POISONED, C.REMOVED)]
    assert not s.has(K.POISONED) and s.magnitude(K.POISONED) == 0
    assert s.reduce(K.POISONED, 1) == []
    s.add(K.STUNNED, 2)
    assert s.remove(K.STUNNED) and not s.remove(K.STUNNED)


def test_kinds_follows_every_change() -> None:
    """``kinds`` is a live view: it holds exactly the active kinds after an
    add, a reduce, a remove, a round and an expiry, and is false when none."""
    s = Statuses()
    view = s.kinds
    assert not view and set(view) == set()
    s.add(K.POISONED, 2, magnitude=1)
    s.add(K.STUNNED, 5)
    assert set(view) == {K.POISONED, K.STUNNED} and s.kinds is view
    s.reduce(K.STUNNED, 5)
    assert set(view) == {K.POISONED}
    rng = np.random.default_rng(3)
    s.tick(rng)
    s.tick(rng)  # the poison's second and last round
    assert not view and len(s) == 0
    s.impose(K.PARALYSED, 2)
    assert set(view) == {K.PARALYSED} and not can_act(s)
    s.remove(K.PARALYSED)
    assert not view and can_act(s) and can_melee(s)


# --- a round ------------------------------------------------------------------------------


def test_poison_damages_each_round_then_expires() -> None:
    s = Statuses()
    s.add(K.POISONED, 3, magnitude=2)
    rng = np.random.default_rng(1)
    state = rng.bit_generator.state
    hit = StatusEffect(K.POISONED, C.DAMAGE, 2, "poison")
    assert s.tick(rng) == [hit]
    assert s.tick(rng) == [hit]
    assert s.tick(rng) == [hit, StatusEffect(K.POISONED, C.EXPIRED)]
    assert len(s) == 0 and s.tick(rng) == []
    assert rng.bit_generator.state == state  # fixed damage draws nothing


def test_disease_acid_and_enervation_each_round() -> None:
    s = Statuses()
    s.add(K.DISEASED, 2)
    s.add(K.ACID_BURN, 1)
    s.add(K.ENERVATED, 1)
    assert s.tick(np.random.default_rng(0)) == [
        StatusEffect(K.DISEASED, C.DAMAGE, 1, ""),
        StatusEffect(K.ACID_BURN, C.DAMAGE, 1, "acid"),
        StatusEffect(K.ACID_BURN, C.EXPIRED),
        StatusEffect(K.ENERVATED, C.ENERGY_DRAIN, 1),
        StatusEffect(K.ENERVATED, C.EXPIRED),
    ]
    assert s.rounds(K.DISEASED) == 1


def test_on_fire_rolls_1d4_fire_each_round_in_kind_order() -> None:
    s = Statuses()
    s.add(K.ON_FIRE, 3)
    s.add(K.POISONED, 3)
    rng, twin = np.random.default_rng(7), np.random.default_rng(7)
    for _ in range(3):
        damage = [e for e in s.tick(rng) if e.change == C.DAMAGE]
        expected = int(twin.integers(1, 5, size=1).sum())
        assert damage == [
            StatusEffect(K.ON_FIRE, C.DAMAGE, expected, "fire"),
            StatusEffect(K.POISONED, C.DAMAGE, 1, "poison"),
        ]
    assert not s.has(K.ON_FIRE)


def test_on_fire_damage_is_uniform_1_to_4() -> None:
    rng = np.random.default_rng(11)

    def burn() -> int:
        s = Statuses()
        s.add(K.ON_FIRE, 1)
        return s.tick(rng)[0].amount

    n = 12_000
    counts = tally(burn, n, 5)
    assert counts[0] == 0
    assert all(within(counts[k], n, 0.25) for k in range(1, 5))


# --- interactions -------------------------------------------------------------------------


def test_fire_thaws_frozen_and_is_spent() -> None:
    s = with_statuses(K.FROZEN)
    assert s.add(K.ON_FIRE, 4) == [StatusEffect(K.FROZEN, C.REMOVED)]
    assert not s.has(K.FROZEN) and not s.has(K.ON_FIRE)


def test_freezing_douses_fire_and_is_spent() -> None:
    s = with_statuses(K.ON_FIRE)
    assert s.add(K.FROZEN, 4) == [StatusEffect(K.ON_FIRE, C.REMOVED)]
    assert not s.has(K.FROZEN) and not s.has(K.ON_FIRE)


def test_haste_and_slow_cancel() -> None:
    s = with_statuses(K.HASTED)
    assert s.add(K.SLOWED, 4) == [StatusEffect(K.HASTED, C.REMOVED)]
    assert len(s) == 0


def test_one_elemental_shield_replaces_the_other() -> None:
    s = with_statuses(K.FIRE_SHIELD)
    assert s.add(K.ICE_SHIELD, 6) == [
        StatusEffect(K.FIRE_SHIELD, C.REMOVED),
        StatusEffect(K.ICE_SHIELD, C.APPLIED, 6),
    ]
    assert elemental_shield(s) == K.ICE_SHIELD
    assert elemental_shield(with_statuses(K.STONESKIN)) is None


def test_rage_cures_fear() -> None:
    s = with_statuses(K.AFRAID)
    assert not can_melee(s)
    s.add(K.ENRAGED, 5)
    assert not s.has(K.AFRAID) and can_melee(s)


def test_damage_wakes_the_sleeper_only() -> None:
    s = with_statuses(K.ASLEEP, K.PARALYSED)
    assert s.on_damaged() == [StatusEffect(K.ASLEEP, C.REMOVED)]
    assert s.has(K.PARALYSED)


# --- what statuses allow --------------------------------------------------------------


@pytest.mark.parametrize("kind", [K.ASLEEP, K.PARALYSED, K.FROZEN, K.WEBBED])
def test_helpless_statuses_prevent_acting(kind: StatusKind) -> None:
    s = with_statuses(kind)
    assert not can_act(s) and not can_melee(s) and not can_cast(s)


def test_statuses_that_leave_the_actor_free_to_act() -> None:
    free = {K.ASLEEP, K.PARALYSED, K.FROZEN, K.WEBBED}
    for kind in StatusKind:
        assert can_act(with_statuses(kind)) is (kind not in free)
    assert can_act(Statuses()) and can_melee(Statuses()) and can_cast(Statuses())


def test_fear_stun_confusion_enlightenment_invisibility() -> None:
    afraid, stunned = with_statuses(K.AFRAID), with_statuses(K.STUNNED)
    confused = with_statuses(K.CONFUSED)
    assert can_act(afraid) and not can_melee(afraid) and can_cast(afraid)
    assert can_melee(stunned) and not can_cast(stunned)
    assert can_cast(confused) and spells_fail(confused) and not spells_fail(stunned)
    assert casts_any_known(with_statuses(K.ENLIGHTENED)) and not casts_any_known(confused)
    assert is_unseen(with_statuses(K.INVISIBLE)) and not is_unseen(confused)


def test_haste_halves_and_slow_doubles_the_action_delay() -> None:
    assert action_delay(Statuses(), 3) == 3
    assert action_delay(with_statuses(K.HASTED), 4) == 2
    assert action_delay(with_statuses(K.HASTED), 3) == 2  # 1.5 rounded up
    assert action_delay(with_statuses(K.HASTED), 1) == 1
    assert action_delay(with_statuses(K.SLOWED), 3) == 6
    with pytest.raises(ValueError):
        action_delay(Statuses(), 0)


def test_stoneskin_rage_and_stun_adjust_stats() -> None:
    stone, rage = RULES.status(K.STONESKIN), RULES.status(K.ENRAGED)
    assert stone.defence_bonus > 0 and rage.power_bonus > 0
    both = with_statuses(K.STONESKIN, K.ENRAGED)
    assert defence_bonus(both) == stone.defence_bonus
    assert power_bonus(both) == rage.power_bonus
    assert defence_bonus(Statuses()) == power_bonus(Statuses()) == 0
    assert accuracy_factor(Statuses()) == 1.0
    assert 0.0 < accuracy_factor(with_statuses(K.STUNNED)) < 1.0


# --- confusion ------------------------------------------------------------------------


def test_unconfused_moves_go_where_intended_without_a_draw() -> None:
    rng = np.random.default_rng(3)
    state = rng.bit_generator.state
    assert confused_direction(rng, (1, 0), with_statuses(K.STUNNED)) == (1, 0)
    assert rng.bit_generator.state == state
    with pytest.raises(ValueError):
        confused_direction(rng, (2, 0), Statuses())


def test_confused_moves_go_astray_with_probability_7p_over_8() -> None:
    p = RULES.status(K.CONFUSED).random_move_chance
    assert p == 0.5
    rng = np.random.default_rng(5)
    s = with_statuses(K.CONFUSED)
    n = 16_000
    intended = (0, -1)
    counts = dict.fromkeys(DIRECTIONS, 0)
    for _ in range(n):
        counts[confused_direction(rng, intended, s)] += 1
    assert within(n - counts[intended], n, 7 * p / 8)
    assert all(within(counts[d], n, p / 8) for d in DIRECTIONS if d != intended)


# --- regeneration ---------------------------------------------------------------------


def _regen(
    statuses: Statuses, *, attacked: bool = False, missed: bool = False, nourishment: int = 300
) -> bool:
    return regenerates(
        statuses, attacked_this_turn=attacked, missed=missed, nourishment=nourishment
    )


def test_regeneration_rules() -> None:
    fine = Statuses()
    assert _regen(fine)
    assert not _regen(fine, attacked=True)
    assert _regen(fine, attacked=True, missed=True)
    assert not _regen(with_statuses(K.FROZEN))
    assert not _regen(with_statuses(K.ON_FIRE))
    assert not _regen(with_statuses(K.ON_FIRE), attacked=True, missed=True)
    assert _regen(with_statuses(K.POISONED, K.ENRAGED, K.DISEASED))
    assert _regen(fine, nourishment=25)
    assert not _regen(fine, nourishment=24)
    regen = fine.rules.regeneration
    assert regen.energy_ticks < regen.health_ticks


# --- elemental shields ----------------------------------------------------------------


def test_fire_shield_thaws_a_frozen_attacker() -> None:
    attacker = with_statuses(K.FROZEN)
    assert shield_touch(attacker, K.FIRE_SHIELD) == [StatusEffect(K.FROZEN, C.REMOVED)]
    assert not attacker.has(K.FROZEN)
    assert shield_touch(attacker, K.FIRE_SHIELD) == []


def test_ice_shield_douses_a_burning_attacker() -> None:
    attacker = with_statuses(K.ON_FIRE)
    assert shield_touch(attacker, K.FIRE_SHIELD) == [] and attacker.has(K.ON_FIRE)
    assert shield_touch(attacker, K.ICE_SHIELD) == [StatusEffect(K.ON_FIRE, C.REMOVED)]
    assert not attacker.has(K.ON_FIRE)


def test_shield_retaliation_is_2d4_of_the_shields_element() -> None:
    assert shield_damage_type(K.FIRE_SHIELD) == "fire"
    assert shield_damage_type(K.ICE_SHIELD) == "cold"
    rng = np.random.default_rng(9)
    n = 16_000
    counts = tally(lambda: shield_retaliation(rng, K.ICE_SHIELD), n, 9)
    assert counts[0] == counts[1] == 0
    for total in range(2, 9):
        assert within(counts[total], n, (4 - abs(total - 5)) / 16)
    with pytest.raises(ValueError):
        shield_retaliation(rng, K.STONESKIN)
    with pytest.raises(ValueError):
        shield_touch(Statuses(), K.HASTED)


# --- freeze and spark -----------------------------------------------------------------


def test_freeze_inflicts_frozen_40_percent_of_the_time() -> None:
    rng = np.random.default_rng(21)
    n = 20_000
    assert within(sum(freeze_inflicts(rng) for _ in range(n)), n, 0.4)


def test_frozen_rounds_follow_the_quartic_curve_up_to_6() -> None:
    rng = np.random.default_rng(22)
    n = 20_000
    counts = tally(lambda: frozen_rounds(rng), n, 8)
    assert counts[0] == counts[7] == 0
    for k in range(1, 7):
        # rounds <= k  <=>  6 u^4 < k  <=>  u < (k/6)^(1/4)
        p = (k / 6) ** 0.25 - ((k - 1) / 6) ** 0.25
        assert within(counts[k], n, p), (k, counts[k], p)


def test_spark_sets_on_fire_above_20_for_a_sixth_of_the_damage() -> None:
    assert [spark_burn_rounds(d) for d in (0, 12, 20, 21, 23, 24, 32)] == [0, 0, 0, 3, 3, 4, 5]
