"""Tests for server.sim.damage: seed 003's damage types against monsters, terrain and items.

The expectation tables below are written from the seed (and angband_gf.md),
not read from the data file, so the data and the code are both checked.
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from server.content import DAMAGE_TYPES, RESIST_MAX, RESIST_MIN, ItemDef, MonsterDef, Terrain
from server.content.damage import default_damage_types
from server.sim.damage import (
    SideEffect,
    adjacent_water,
    apply_damage_type,
    damage_monster,
    floor_item_damaged,
    has_terrain_effect,
    item_proof,
    resist_damage,
    resistance_level,
    roll_side_effects,
    stack_status,
    status_immunities,
    terrain_adjust,
    terrain_dodges,
    terrain_effect,
)

NOTHING: frozenset[str] = frozenset()


def _within(hits: int, n: int, p: float) -> bool:
    """Binomial tolerance: |observed - p| <= 4.5 standard deviations."""
    return abs(hits / n - p) <= 4.5 * math.sqrt(p * (1 - p) / n)


# --- the seed's tables, written out independently ----------------------------------

# "Terr" column; blank cells inherit the row above (GF_MISSILE under GF_SHOT).
FULL = {"acid", "electricity", "fire", "cold", "plasma", "force", "water", "mana", "meteor",
        "magic_missile", "ice", "rock", "shot", "storm"}  # fmt: skip
HALF = {"poison", "light", "dark", "confusion", "sound", "shards", "inertia", "nether",
        "chaos", "holy", "death", "light_weak"}  # fmt: skip
NO_DAMAGE = {"sleep", "polymorph", "clone", "heal_monster", "speed", "slow", "confuse_monster",
             "hold", "hold_undead", "away_undead", "away_evil", "away_all", "turn_undead",
             "turn_evil", "turn_all"}  # fmt: skip
"""The OLD_*, HOLD, AWAY and TURN types: "no actual damage will be inflicted"."""
NONE = {"gravity", "nexus", "disenchantment", "time", "disintegration", "spirit", "kill_wall",
        "dispel_undead", "dispel_evil", "dispel_good", "dispel_demon", "dispel_dragon",
        "dispel_all", "dispel_small"} | NO_DAMAGE  # fmt: skip
ONLY_HURT = {"light_weak", "kill_wall"}
""""not HURT_LITE" / "not HURT_ROCK" resist entirely: only negative levels take it, in full."""
ONLY_FLAGGED = {"dispel_undead", "dispel_evil", "dispel_demon", "dispel_dragon"}
"""Dispels that spare everything without the flag (flagless creatures take 0)."""

FIRE_GROUP = {"fire", "plasma"}  # GF_FIRE, GF_HELLFIRE, GF_PLASMA
WATER_GROUP = {"water", "storm"}  # GF_WATER, GF_STORM
COLD_GROUP = {"cold", "ice", "water", "storm"}  # on lava: GF_COLD, GF_ICE, GF_WATER, GF_STORM


def seed_adjustment(terrain: Terrain, damage_type: str) -> Fraction:
    """Seed 003's terrain table."""
    if terrain in (Terrain.RUBBLE, Terrain.TREE):
        return Fraction(-1, 4)
    if terrain is Terrain.WATER:
        if damage_type in FIRE_GROUP:
            return Fraction(-1, 2)
        if damage_type in WATER_GROUP:
            return Fraction(1, 3)
    if terrain is Terrain.LAVA:
        if damage_type in COLD_GROUP:
            return Fraction(-1, 3)
        if damage_type in FIRE_GROUP:
            return Fraction(1, 5)
    return Fraction(0)


def expected_after_terrain(damage: int, damage_type: str, terrain: Terrain) -> int:
    adj = int(damage * seed_adjustment(terrain, damage_type))  # int() truncates toward 0
    if damage_type in HALF:
        adj = int(Fraction(adj, 2))
    elif damage_type in NONE:
        adj = 0
    return damage + adj


E = [Fraction(3, 14), Fraction(3, 15), Fraction(3, 16)]  # note (e)
F = [Fraction(3, 11), Fraction(3, 12), Fraction(3, 13)]  # note (f)
G = [Fraction(3, 5), Fraction(3, 6), Fraction(3, 7)]  # note (g)
IMMUNE_ELEMENT = [Fraction(1, 9)]  # IM_ACID, IM_ELEC, IM_FIRE, IM_COLD, IM_POIS
ZERO = [Fraction(0)]


def ladder(one: list[Fraction], two: list[Fraction] | None = None,
           three: list[Fraction] | None = None) -> dict[int, list[Fraction]]:  # fmt: skip
    two = two or one
    return {1: one, 2: two, 3: three or two}


BREATHED = ("sound", "shards", "inertia", "gravity", "force", "nexus", "chaos",
            "disenchantment", "time")  # fmt: skip
"""Types whose only seed resistance is a BRTH_ / RES_ flag: roll (e)."""

# Positive levels, as decided in damage_types.toml's header.
POSITIVE: dict[str, dict[int, list[Fraction]]] = {
    **{k: ladder(IMMUNE_ELEMENT) for k in ("acid", "electricity", "fire", "cold", "poison")},
    "plasma": ladder(G, F, E),
    "light": ladder(E),
    "dark": ladder(G, E),
    "confusion": ladder(G, E),
    **{k: ladder(E) for k in BREATHED},
    "water": ladder(ZERO),
    "nether": ladder(E, E, ZERO),
    "death": ladder(ZERO),
    "ice": ladder(IMMUNE_ELEMENT),
    "storm": ladder(ZERO),
    "magic_missile": ladder(ZERO),  # seed 004: magic resistance stops it entirely
    **{
        k: {}
        for k in (
            "mana",
            "holy",
            "meteor",
            "disintegration",
            "rock",
            "shot",
            "spirit",
            "dispel_good",
            "dispel_all",
            "dispel_small",
        )
    },
    **{k: {} for k in NO_DAMAGE | ONLY_HURT | ONLY_FLAGGED},
}
# HURT_ (3/2) and Underhall's steeper levels.
VULNERABLE = {-1: [Fraction(3, 2)], -2: [Fraction(2)], -3: [Fraction(5, 2)]}


def test_expectation_table_covers_every_damage_type() -> None:
    assert set(POSITIVE) == set(DAMAGE_TYPES)
    assert FULL | HALF | NONE == set(DAMAGE_TYPES)
    assert not (FULL & HALF or FULL & NONE or HALF & NONE)


# --- every damage type x resistance level x terrain ---------------------------------


@pytest.mark.parametrize("damage_type", DAMAGE_TYPES)
def test_damage_for_every_level_and_terrain(damage_type: str) -> None:
    for level in range(RESIST_MIN, RESIST_MAX + 1):
        for terrain in Terrain:
            for damage in (90, 100):
                seed = 1000 * (level + 3) + 10 * terrain + damage % 7
                outcome = apply_damage_type(
                    np.random.default_rng(seed), damage, damage_type, terrain=terrain,
                    resist_level=level, flags=NOTHING, mobile=False,
                )  # fmt: skip
                assert not outcome.dodged
                if damage_type in NO_DAMAGE:  # no actual damage
                    assert outcome.damage == 0
                    continue
                adjusted = expected_after_terrain(damage, damage_type, terrain)
                twin = np.random.default_rng(seed)
                if damage_type == "storm" and level < 1 and twin.integers(6) == 0:
                    adjusted += adjusted // 2  # (n): 1/6 of the time 1/2 more
                takes = VULNERABLE.get(level) if level < 0 else POSITIVE[damage_type].get(level)
                if damage_type in ONLY_HURT:
                    takes = [Fraction(1)] if level < 0 else ZERO
                elif damage_type in ONLY_FLAGGED:
                    takes = ZERO
                if takes is None:
                    expected = adjusted
                else:
                    # Next draw (no dodge draw when immobile): the roll's index.
                    pick = int(twin.integers(len(takes))) if len(takes) > 1 else 0
                    expected = int(adjusted * takes[pick])
                assert outcome.damage == expected, (damage_type, level, terrain.name, damage)


# --- terrain adjustment --------------------------------------------------------------


@pytest.mark.parametrize(
    ("damage", "damage_type", "terrain", "expected"),
    [
        (30, "poison", Terrain.RUBBLE, 27),  # -7, halved toward zero: -3 (not -4)
        (7, "poison", Terrain.RUBBLE, 7),  # -1, halved toward zero: 0
        (7, "fire", Terrain.WATER, 4),  # -7/2 -> -3
        (10, "cold", Terrain.LAVA, 7),  # -10/3 -> -3
        (9, "fire", Terrain.LAVA, 10),  # +9/5 -> +1
        (100, "water", Terrain.WATER, 133),  # +1/3
        (100, "light", Terrain.TREE, 88),  # -25, halved: -12
        (100, "gravity", Terrain.TREE, 100),  # Terr None
        (100, "fire", Terrain.FLOOR, 100),
        (0, "fire", Terrain.LAVA, 0),
    ],
)
def test_terrain_adjust_truncates_toward_zero(
    damage: int, damage_type: str, terrain: Terrain, expected: int
) -> None:
    assert terrain_adjust(damage, damage_type, terrain) == expected


def test_float_table_agrees_with_the_exact_rule() -> None:
    data = default_damage_types()
    for t in Terrain:
        for i, key in enumerate(DAMAGE_TYPES):
            exact = terrain_adjust(1000, key, t)
            assert abs(exact - 1000 * (1 + data.terrain_adjust[t, i])) <= 1


def test_bad_inputs_are_rejected() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(KeyError):
        terrain_adjust(10, "frost", Terrain.FLOOR)
    with pytest.raises(ValueError):
        terrain_adjust(-1, "fire", Terrain.FLOOR)
    with pytest.raises(ValueError):
        terrain_adjust(10, "fire", 99)
    with pytest.raises(ValueError):
        resist_damage(rng, 10, "fire", resist_level=4, flags=NOTHING)
    with pytest.raises(ValueError):
        resist_damage(rng, 10, "fire", resist_level=0, flags=frozenset({"orc"}))
    with pytest.raises(ValueError):
        terrain_effect(rng, "fire", 10, Terrain.WATER, adjacent_water=9)
    with pytest.raises(ValueError):
        floor_item_damaged(rng, "fire", 10, "gem", proof=NOTHING, artifact=False)


# --- dodging behind cover (terrain note a) ------------------------------------------


@pytest.mark.parametrize("terrain", [Terrain.RUBBLE, Terrain.TREE])
def test_mobile_monster_dodges_one_time_in_four(terrain: Terrain) -> None:
    rng = np.random.default_rng(11)
    n = 20_000
    hits = sum(terrain_dodges(rng, terrain, mobile=True) for _ in range(n))
    assert _within(hits, n, 1 / 4)


@pytest.mark.parametrize(("terrain", "mobile"), [(Terrain.RUBBLE, False), (Terrain.TREE, False),
                                                 (Terrain.FLOOR, True), (Terrain.WATER, True)])  # fmt: skip
def test_no_dodge_and_no_draw_when_not_applicable(terrain: Terrain, mobile: bool) -> None:
    rng = np.random.default_rng(3)
    assert not any(terrain_dodges(rng, terrain, mobile=mobile) for _ in range(200))
    assert rng.bit_generator.state == np.random.default_rng(3).bit_generator.state


def test_a_dodge_avoids_damage_and_every_side_effect() -> None:
    n = 8000
    rng = np.random.default_rng(5)
    dodged = 0
    for _ in range(n):
        out = apply_damage_type(rng, 200, "sound", terrain=Terrain.RUBBLE, resist_level=0,
                                flags=NOTHING, mobile=True)  # fmt: skip
        if out.dodged:
            dodged += 1
            assert out.damage == 0 and out.side_effects == ()
        else:
            assert out.damage == 175 and out.side_effects[0][0] is SideEffect.STUN
    assert _within(dodged, n, 1 / 4)


# --- resistance rolls and flags -------------------------------------------------------


@pytest.mark.parametrize(
    ("damage_type", "level", "outcomes"),
    [
        ("shards", 1, (21, 20, 18)),  # (e): 300/14, 300/15, 300/16 (angband_gf.md example)
        ("plasma", 2, (27, 25, 23)),  # (f)
        ("plasma", 1, (60, 50, 42)),  # (g)
    ],
)
def test_three_way_rolls_are_equally_likely(
    damage_type: str, level: int, outcomes: tuple[int, int, int]
) -> None:
    rng = np.random.default_rng(21)
    n = 30_000
    seen = Counter(resist_damage(rng, 100, damage_type, resist_level=level, flags=NOTHING)
                   for _ in range(n))  # fmt: skip
    assert set(seen) == set(outcomes)
    for value in outcomes:
        assert _within(seen[value], n, 1 / 3), (value, seen)


def test_single_fraction_rows_draw_nothing() -> None:
    rng = np.random.default_rng(8)
    assert resist_damage(rng, 100, "fire", resist_level=3, flags=NOTHING) == 11  # 100 / 9
    assert resist_damage(rng, 100, "fire", resist_level=-1, flags=NOTHING) == 150
    assert resist_damage(rng, 100, "mana", resist_level=3, flags=NOTHING) == 100
    assert rng.bit_generator.state == np.random.default_rng(8).bit_generator.state


@pytest.mark.parametrize(
    ("damage_type", "level", "flags", "expected"),
    [
        ("nether", 0, {"undead"}, 0),  # UNDEAD: 0
        ("nether", -1, {"undead", "evil"}, 0),  # the seed checks UNDEAD first
        ("nether", 0, {"evil"}, 66),  # EVIL: 2/3
        ("nether", -1, {"evil"}, 150),  # an explicit vulnerability outranks EVIL
        ("nether", 3, {"evil"}, 0),
        ("holy", 0, {"evil"}, 150),  # EVIL: 3/2
        ("holy", -2, {"evil", "undead"}, 200),
        ("holy", 0, {"animal"}, 100),
        ("death", 0, {"undead"}, 0),  # drain life: UNDEAD, DEMON
        ("death", 0, {"demon"}, 0),
        ("death", 0, {"dragon"}, 100),
        ("light", -1, set(), 150),  # HURT_LITE
    ],
)
def test_flag_rows(damage_type: str, level: int, flags: set[str], expected: int) -> None:
    rng = np.random.default_rng(0)
    assert resist_damage(rng, 100, damage_type, resist_level=level,
                         flags=frozenset(flags)) == expected  # fmt: skip


def test_evil_resistant_to_nether_rolls_e_and_no_conf_rolls_g() -> None:
    rng = np.random.default_rng(4)
    nether = {resist_damage(rng, 100, "nether", resist_level=1, flags=frozenset({"evil"}))
              for _ in range(300)}  # fmt: skip
    assert nether == {21, 20, 18}
    confusion = {resist_damage(rng, 100, "confusion", resist_level=0,
                               flags=frozenset({"no_confusion"})) for _ in range(300)}  # fmt: skip
    assert confusion == {60, 50, 42}


@pytest.mark.parametrize(
    ("resist", "expected"),
    [
        ({"fire": 3, "electricity": 1}, 2),  # both immunities: (f)
        ({"fire": 3}, 1),  # one: (g)
        ({"electricity": 2, "cold": 3}, 1),
        ({}, 0),
        ({"plasma": 3, "fire": 3}, 3),  # breathes plasma: (e)
        ({"plasma": -1, "fire": 3}, -1),  # an explicit level wins
    ],
)
def test_plasma_resistance_is_implied_by_fire_and_electricity(
    resist: dict[str, int], expected: int
) -> None:
    assert resistance_level("plasma", resist) == expected
    assert resistance_level("fire", {"fire": 2}) == 2


# --- side effects and caps --------------------------------------------------------


def _effects(seed: int, n: int, damage: int, damage_type: str, *, level: int = 0,
             resist_level: int = 0, flags: frozenset[str] = NOTHING,
             immune: frozenset[SideEffect] = frozenset()) -> list[dict[SideEffect, int]]:  # fmt: skip
    rng = np.random.default_rng(seed)
    return [dict(roll_side_effects(rng, damage, damage_type, resist_level=resist_level,
                                   flags=flags, level=level, status_immune=immune))
            for _ in range(n)]  # fmt: skip


@pytest.mark.parametrize(("damage", "top"), [(1000, 32), (241, 32), (240, 30), (100, 12)])
def test_electricity_stun_half_the_time_uniform_up_to_its_cap(damage: int, top: int) -> None:
    # (c): 1/2 chance, stunned 1d(dam / 8), 32 if dam > 240.
    rolls = _effects(1, 4000, damage, "electricity")
    stuns = [r[SideEffect.STUN] for r in rolls if SideEffect.STUN in r]
    assert _within(len(stuns), len(rolls), 1 / 2)
    assert set(stuns) == set(range(1, top + 1))


def test_electricity_stun_needs_eleven_damage_and_no_resistance() -> None:
    assert all(not r for r in _effects(2, 300, 10, "electricity"))
    assert {r.get(SideEffect.STUN) for r in _effects(2, 300, 11, "electricity")} == {None, 1}
    assert all(not r for r in _effects(2, 300, 500, "electricity", resist_level=1))


def test_sound_and_force_stun_caps_and_breather_immunity() -> None:
    sound = [r[SideEffect.STUN] for r in _effects(3, 2000, 1000, "sound")]
    assert set(sound) == set(range(1, 31))  # (i): max 30
    force = _effects(3, 2000, 1000, "force")
    assert {r[SideEffect.STUN] for r in force} == set(range(1, 21))  # (k): max 20
    assert {r[SideEffect.KNOCK_BACK] for r in force} == {3 + 1000 // 20}  # (l)
    breather = status_immunities({"force": 1}, NOTHING)
    assert SideEffect.STUN in breather
    assert all(not r for r in _effects(3, 100, 1000, "sound", immune=breather))
    # A force breather is not thrust away, and (with its immunity) not stunned.
    assert all(not r for r in _effects(3, 100, 1000, "force", resist_level=1, immune=breather))
    assert all(SideEffect.KNOCK_BACK not in r for r in _effects(3, 100, 1000, "force",
                                                                   resist_level=1))  # fmt: skip


def test_confusion_cap_threshold_and_immunities() -> None:
    assert all(not r for r in _effects(4, 100, 15, "confusion"))  # 15 / 16 = 0
    assert {r[SideEffect.CONFUSION] for r in _effects(4, 100, 16, "confusion")} == {1}
    big = {r[SideEffect.CONFUSION] for r in _effects(4, 2000, 1000, "confusion")}
    assert big == set(range(1, 16))  # (h): max 15
    no_conf = frozenset({"no_confusion"})
    assert all(not r for r in _effects(4, 100, 1000, "confusion", flags=no_conf))
    chaos_breather = status_immunities({"chaos": 1}, NOTHING)
    assert all(not r for r in _effects(4, 100, 1000, "confusion", immune=chaos_breather))


def test_teleports() -> None:
    assert _effects(5, 1, 77, "gravity") == [{SideEffect.TELEPORT: 10}]  # (j)
    assert _effects(5, 1, 77, "gravity", resist_level=1) == [{}]
    assert _effects(5, 1, 50, "nexus") == [{SideEffect.TELEPORT: 2 + 50 // 5}]  # (s)
    assert _effects(5, 1, 50, "nexus", resist_level=2) == [{}]


def test_chaos_polymorphs_by_the_level_save_and_never_a_unique() -> None:
    rolls = _effects(6, 6000, 100, "chaos", level=30)
    polymorphs = sum(SideEffect.POLYMORPH in r for r in rolls)
    assert _within(polymorphs, len(rolls), 60 / 90)  # 1d90 > 30
    assert all(SideEffect.CONFUSION in r for r in rolls)  # dam / 12 = 8 >= 1
    unique = _effects(6, 300, 100, "chaos", level=1, flags=frozenset({"unique"}))
    assert all(SideEffect.POLYMORPH not in r for r in unique)
    assert all(SideEffect.POLYMORPH not in r for r in _effects(6, 300, 100, "chaos", level=90))
    assert all(SideEffect.POLYMORPH not in r for r in _effects(6, 300, 100, "chaos",
                                                                 resist_level=1))  # fmt: skip


@pytest.mark.parametrize(("flags", "p_sleep"), [(NOTHING, 44 / 50),
                                                (frozenset({"unique"}), 26 / 50)])  # fmt: skip
def test_sleep_level_save(flags: frozenset[str], p_sleep: float) -> None:
    # (B): resists when level + 2 (+ 20 for uniques) > 1d(damage); level 5, power 50.
    rolls = _effects(7, 6000, 50, "sleep", level=5, flags=flags)
    asleep = [r[SideEffect.SLEEP] for r in rolls if r]
    assert set(asleep) == {350}
    assert _within(len(asleep), len(rolls), p_sleep)


def test_sleep_deals_no_damage_and_spares_no_sleep_monsters() -> None:
    rng = np.random.default_rng(9)
    out = apply_damage_type(rng, 500, "sleep", terrain=Terrain.FLOOR, resist_level=0,
                            flags=NOTHING, mobile=True)  # fmt: skip
    assert out.damage == 0 and out.side_effects == ((SideEffect.SLEEP, 350),)
    assert all(not r for r in _effects(9, 200, 500, "sleep", flags=frozenset({"no_sleep"})))
    assert all(not r for r in _effects(9, 200, 500, "sleep", resist_level=1))
    assert all(not r for r in _effects(9, 20, 0, "sleep"))


def test_disenchantment_drains_energy_unless_resisted() -> None:
    assert _effects(10, 1, 100, "disenchantment") == [{SideEffect.DRAIN_ENERGY: 20}]
    assert _effects(10, 1, 100, "disenchantment", resist_level=1) == [{}]


def test_side_effects_use_damage_after_terrain() -> None:
    rng = np.random.default_rng(12)
    out = apply_damage_type(rng, 100, "force", terrain=Terrain.LAVA, resist_level=0,
                            flags=NOTHING, mobile=True)  # fmt: skip
    assert dict(out.side_effects)[SideEffect.KNOCK_BACK] == 3 + 100 // 20
    out = apply_damage_type(rng, 100, "nexus", terrain=Terrain.TREE, resist_level=0,
                            flags=NOTHING, mobile=False)  # fmt: skip
    assert out.side_effects == ((SideEffect.TELEPORT, 2 + 100 // 5),)  # Terr None: 100
    out = apply_damage_type(rng, 100, "gravity", terrain=Terrain.FLOOR, resist_level=0,
                            flags=NOTHING, mobile=True)  # fmt: skip
    assert out.damage == 100 and out.side_effects == ((SideEffect.TELEPORT, 10),)


@pytest.mark.parametrize(
    ("effect", "current", "amount", "expected"),
    [
        (SideEffect.STUN, 0, 10, 10),  # not stunned: the full amount
        (SideEffect.STUN, 10, 11, 15),  # stunned: half of the new amount
        (SideEffect.CONFUSION, 195, 20, 200),  # never above 200
        (SideEffect.STUN, 0, 500, 200),
        (SideEffect.FEAR, 10, 20, 30),  # fear adds in full
        (SideEffect.FEAR, 190, 20, 200),
    ],
)
def test_stack_status(effect: SideEffect, current: int, amount: int, expected: int) -> None:
    assert stack_status(effect, current, amount) == expected


def test_stack_status_rejects_effects_without_a_counter() -> None:
    with pytest.raises(ValueError):
        stack_status(SideEffect.TELEPORT, 0, 5)


def _monster(**overrides: object) -> MonsterDef:
    fields: dict[str, object] = {
        "key": "m", "name": "m", "glyph": "m", "colour": "red", "level": 10, "health": 50,
        "energy": 0, "power": 4, "defence": 0, "courage": 0.0, "accuracy": 30.0,
        "dodge": 4.0, "speed": 3, "sight": 8, "depth_min": 1, "depth_max": 5, "rarity": 1,
        "xp": 10,
    }  # fmt: skip
    fields.update(overrides)
    return MonsterDef(**fields)  # type: ignore[arg-type]


def test_damage_monster_wires_resistances_flags_and_immobility() -> None:
    # Immune to fire and electricity (plasma level 2: 3/11..3/13), immobile on rubble.
    mold = _monster(flags=("immobile",), resist={"fire": 3, "electricity": 1})
    for seed in range(12):
        out = damage_monster(np.random.default_rng(seed), 100, "plasma", mold,
                             terrain=Terrain.RUBBLE)  # fmt: skip
        pick = int(np.random.default_rng(seed).integers(3))  # no dodge draw: immobile
        assert out.damage == int(75 * F[pick]) and not out.dodged
    breather = _monster(resist={"sound": 2})
    out = damage_monster(np.random.default_rng(0), 300, "sound", breather, terrain=Terrain.FLOOR)
    assert out.side_effects == ()  # sound breathers are never stunned


# --- effects on terrain -------------------------------------------------------------


def _changes(seed: int, n: int, damage_type: str, damage: int, terrain: Terrain,
             k: int = 0) -> Counter[Terrain | None]:  # fmt: skip
    rng = np.random.default_rng(seed)
    return Counter(terrain_effect(rng, damage_type, damage, terrain, adjacent_water=k)
                   for _ in range(n))  # fmt: skip


def test_cold_solidifies_lava() -> None:
    assert _changes(1, 300, "cold", 301, Terrain.LAVA) == {None: 300}  # needs > 1d[301..1200]
    sure = _changes(1, 6000, "cold", 1201, Terrain.LAVA)
    assert set(sure) == {Terrain.FLOOR, Terrain.RUBBLE}
    assert _within(sure[Terrain.FLOOR], 6000, 1 / 3)
    some = _changes(1, 6000, "cold", 750, Terrain.LAVA)
    assert _within(6000 - some[None], 6000, (750 - 301) / 900)
    assert _changes(1, 10, "cold", 5000, Terrain.FLOOR) == {None: 10}


def test_fire_melts_boils_and_burns() -> None:
    assert _changes(2, 100, "fire", 2401, Terrain.FLOOR) == {Terrain.LAVA: 100}
    assert _changes(2, 100, "plasma", 2401, Terrain.RUBBLE) == {Terrain.LAVA: 100}
    big = _changes(2, 6000, "fire", 1000, Terrain.FLOOR)
    assert _within(big[Terrain.LAVA], 6000, (1000 - 601) / 1800)
    assert _changes(2, 100, "fire", 801, Terrain.WATER) == {Terrain.FLOOR: 100}
    boil = _changes(2, 6000, "fire", 500, Terrain.WATER, k=8)  # 1d[201..824]
    assert _within(boil[Terrain.FLOOR], 6000, (500 - 201) / 624)
    assert _changes(2, 100, "fire", 501, Terrain.TREE) == {Terrain.FLOOR: 100}
    assert _changes(2, 100, "fire", 101, Terrain.TREE) == {None: 100}
    assert _changes(2, 10, "cold", 5000, Terrain.TREE) == {None: 10}


def test_water_floods_floor() -> None:
    for k in (0, 3, 8):
        assert _changes(3, 200, "water", 500, Terrain.FLOOR, k) == {Terrain.WATER: 200}
    assert _changes(3, 200, "water", 60, Terrain.FLOOR, 8) == {None: 200}  # needs > 60
    assert _changes(3, 200, "water", 61, Terrain.FLOOR, 0) == {None: 200}  # 100 + 1d[0..399]
    flood = _changes(3, 8000, "water", 61, Terrain.FLOOR, 8)  # 61 > 1d[100..499] - 160
    assert _within(flood[Terrain.WATER], 8000, 121 / 400)


def test_disintegration_clears_cover() -> None:
    rng = np.random.default_rng(0)
    assert terrain_effect(rng, "disintegration", 1, Terrain.RUBBLE) is Terrain.FLOOR
    assert terrain_effect(rng, "disintegration", 1, Terrain.TREE) is Terrain.FLOOR
    assert terrain_effect(rng, "disintegration", 0, Terrain.TREE) is None
    assert terrain_effect(rng, "disintegration", 99, Terrain.WALL) is None


@pytest.mark.parametrize("damage_type", sorted(DAMAGE_TYPES))
def test_has_terrain_effect_names_exactly_the_terrains_that_can_change(damage_type: str) -> None:
    """Where it says no, the full rule changes nothing and draws nothing even
    for the largest damage and any water around; where it says yes, enough
    damage does change the cell."""
    for terrain in Terrain:
        rng = np.random.default_rng(7)
        state = rng.bit_generator.state
        outcomes = {terrain_effect(rng, damage_type, 10**6, terrain, adjacent_water=k)
                    for k in (0, 8)}  # fmt: skip
        if has_terrain_effect(damage_type, terrain):
            assert outcomes != {None}, (damage_type, terrain)
        else:
            assert outcomes == {None}, (damage_type, terrain)
            assert rng.bit_generator.state == state, (damage_type, terrain)
    with pytest.raises(KeyError):
        has_terrain_effect("frost", Terrain.FLOOR)


def test_adjacent_water_counts_the_eight_neighbours() -> None:
    grid = np.full((4, 4), Terrain.FLOOR, dtype=np.uint8)
    grid[0, 0] = grid[0, 1] = grid[1, 1] = grid[2, 2] = grid[3, 3] = Terrain.WATER
    assert adjacent_water(grid, 1, 1) == 3  # itself not counted
    assert adjacent_water(grid, 0, 0) == 2  # corner: only in-grid cells
    assert adjacent_water(grid, 3, 0) == 0


# --- effects on floor items ------------------------------------------------------------


def _destroyed(seed: int, n: int, damage_type: str, damage: int, category: str,
               proof: frozenset[str] = NOTHING, artifact: bool = False) -> int:  # fmt: skip
    rng = np.random.default_rng(seed)
    return sum(floor_item_damaged(rng, damage_type, damage, category, proof=proof,
                                  artifact=artifact) for _ in range(n))  # fmt: skip


def test_haters_and_thresholds() -> None:
    assert _within(_destroyed(1, 8000, "fire", 40, "scroll"), 8000, 39 / 40)  # > 1d40
    assert _within(_destroyed(1, 8000, "acid", 25, "weapon"), 8000, 24 / 50)  # > 1d50
    assert _destroyed(1, 500, "fire", 1, "scroll") == 0
    assert _destroyed(1, 200, "cold", 41, "potion") == 200
    assert _destroyed(1, 200, "electricity", 41, "wand") == 200
    assert _destroyed(1, 200, "fire", 1000, "potion") == 0  # not a fire hater
    assert _destroyed(1, 200, "holy", 1000, "scroll") == 0  # no floor rule


def test_ignore_flags_and_artifacts() -> None:
    fireproof = frozenset({"fire"})
    assert _destroyed(2, 200, "fire", 1000, "scroll", fireproof) == 0
    assert _destroyed(2, 200, "fire", 1000, "scroll", artifact=True) == 0
    assert _destroyed(2, 200, "mana", 1, "food") == 200  # all objects, no threshold
    assert _destroyed(2, 200, "mana", 1000, "food", frozenset({"acid"}), artifact=True) == 0
    # Plasma: fire and electricity haters, each with its own flag.
    assert _destroyed(2, 200, "plasma", 41, "scroll", fireproof) == 0
    assert _destroyed(2, 200, "plasma", 41, "wand", fireproof) == 200
    # Meteor: fire and cold haters without a threshold.
    assert _destroyed(2, 50, "meteor", 1, "potion") == 50
    assert _destroyed(2, 50, "meteor", 1, "potion", frozenset({"cold"})) == 0


def test_item_proof() -> None:
    base: dict[str, object] = {
        "key": "x", "name": "x", "glyph": ")", "colour": "white", "category": "weapon",
        "weight": 10, "nutrition": 0, "depth_min": 1, "depth_max": 5, "rarity": 1,
    }  # fmt: skip
    sword = ItemDef(**base, metallic=True, acidproof=True)  # type: ignore[arg-type]
    club = ItemDef(**base)  # type: ignore[arg-type]
    # Metal is no longer a fire ignore flag: seed 003 burns hafted weapons,
    # metal or not; a sword is spared because it is not a fire hater at all.
    assert item_proof(sword) == {"acid"}
    assert item_proof(club) == frozenset()


def test_an_item_s_own_hates_list_replaces_its_category_s() -> None:
    rng = np.random.default_rng(3)
    sword, flask = ("acid",), ("cold",)
    for _ in range(50):
        assert not floor_item_damaged(
            rng, "fire", 1000, "weapon", proof=NOTHING, artifact=False, hates=sword
        )
        assert floor_item_damaged(rng, "fire", 1000, "weapon", proof=NOTHING, artifact=False)
        assert floor_item_damaged(
            rng, "cold", 1000, "thrown", proof=NOTHING, artifact=False, hates=flask
        )
        assert not floor_item_damaged(rng, "cold", 1000, "thrown", proof=NOTHING, artifact=False)
    # Mana ("all objects") ignores the list; holy orb takes only cursed objects.
    assert floor_item_damaged(rng, "mana", 1, "thrown", proof=NOTHING, artifact=False, hates=())
    assert floor_item_damaged(rng, "holy", 1, "weapon", proof=NOTHING, artifact=False, cursed=True)
    assert not floor_item_damaged(rng, "holy", 1, "weapon", proof=NOTHING, artifact=False)
    assert not floor_item_damaged(
        rng, "holy", 1, "weapon", proof=NOTHING, artifact=True, cursed=True
    )
