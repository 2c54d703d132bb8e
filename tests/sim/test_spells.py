"""Tests for server.sim.spells: seed 001's spell families, their numbers and shapes."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pytest

from server.content.spells import EFFECTS, default_spells
from server.sim.spells import (
    IMPLEMENTED_EFFECTS,
    area_damage_by_ring,
    ball_cells,
    cast_energy_cost,
    cloud_rounds,
    elemental_damage,
    failed_energy_cost,
    heal_amount,
    item_curse_difficulty,
    lightning_chain_dice,
    line_cells,
    remove_curse,
    spell_amount,
    status_rounds,
    tongue_cells,
    upgrade,
    web_hit_points,
)


def _tolerance(p: float, n: int) -> float:
    return 4.5 * math.sqrt(p * (1 - p) / n)


def _picture(width: int, height: int, marks: dict[tuple[int, int], str]) -> str:
    rows = [["."] * width for _ in range(height)]
    for (x, y), glyph in marks.items():
        rows[y][x] = glyph
    return "\n".join("".join(r) for r in rows)


def _lines(*rows: str) -> str:
    return "\n".join(rows)


def _shape(
    width: int, height: int, origin: tuple[int, int], cells: Iterable[tuple[int, int]]
) -> str:
    marks = dict.fromkeys(cells, "*")
    marks[origin] = "@"
    return _picture(width, height, marks)


class _Dice:
    """A stand-in random stream whose ``integers`` calls return given values in order."""

    def __init__(self, *rolls: list[int]) -> None:
        self.rolls = [list(r) for r in rolls]

    def integers(self, low: int, high: int, size: int | None = None) -> Any:
        """Each given list is one roll: its dice come either as one array
        call (``size``) or as one scalar call per die (``size`` None), as
        :func:`~server.sim.combat.roll_dice` draws them; a roll is used up
        before the next begins."""
        if size is None:
            values = self.rolls[0]
            value = values.pop(0)
            if not values:
                self.rolls.pop(0)
            assert low <= value < high
            return value
        values = self.rolls.pop(0)
        assert all(low <= v < high for v in values)
        assert size == len(values)
        return np.array(values)


# --- damage rolls ------------------------------------------------------------------


def test_elemental_damage_is_two_dice_of_power() -> None:
    rng = np.random.default_rng(1)
    n = 20_000
    rolls = [elemental_damage(rng, 8) for _ in range(n)]  # spark: 2d8
    assert min(rolls) == 2 and max(rolls) == 16
    for total, ways in ((2, 1), (9, 8), (12, 5)):
        p = ways / 64
        assert abs(rolls.count(total) / n - p) <= _tolerance(p, n), total


def test_fireball_rings() -> None:
    # Seed 001: d, then each ring the previous times 0.8 rounded down, r < radius 3.
    assert area_damage_by_ring(10, 0.8, 3) == [10, 8, 6]
    assert area_damage_by_ring(25, 0.8, 3) == [25, 20, 16]
    assert area_damage_by_ring(5, 0.8, 3) == [5, 4, 3]
    assert area_damage_by_ring(11, 0.8, 3) == [11, 8, 6]  # step by step, not 11 x 0.64 = 7
    for d in range(201):  # exact arithmetic: no float error at integer boundaries
        assert area_damage_by_ring(d, 0.8, 2)[1] == d * 4 // 5
        assert area_damage_by_ring(d, 0.4, 2)[1] == d * 2 // 5


def test_shockwave_and_upgraded_fireball_rings() -> None:
    assert area_damage_by_ring(20, 0.4, 5) == [20, 8, 3, 1, 0]
    assert area_damage_by_ring(32, 0.4, 5) == [32, 12, 4, 1, 0]
    # Upgraded fireball: attenuation 1.6, radius 6 -- farther monsters take more.
    assert area_damage_by_ring(10, 1.6, 6) == [10, 16, 25, 40, 64, 102]
    with pytest.raises(ValueError):
        area_damage_by_ring(10, 0.0, 3)
    with pytest.raises(ValueError):
        area_damage_by_ring(10, 0.8, 0)


def test_ball_cells_are_chebyshev_rings() -> None:
    rings = ball_cells((3, 3), 3)
    assert [len(r) for r in rings] == [1, 8, 16]
    marks = {cell: str(r) for r, ring in enumerate(rings) for cell in ring}
    assert _picture(7, 7, marks) == _lines(
        ".......",
        ".22222.",
        ".21112.",
        ".21012.",
        ".21112.",
        ".22222.",
        ".......",
    )
    assert ball_cells((0, 0), 1) == [[(0, 0)]]
    with pytest.raises(ValueError):
        ball_cells((0, 0), 0)


# --- shapes ---------------------------------------------------------------------------


def test_curse_tongue_orthogonal() -> None:
    # Curse: range 2, spread 1 -- a stem of two cells and a bar across its end.
    east = tongue_cells((1, 2), (1, 0), 2, 1)
    assert east == [(2, 2), (3, 2), (3, 1), (3, 3)]
    assert _shape(6, 5, (1, 2), east) == _lines(
        "......",
        "...*..",
        ".@**..",
        "...*..",
        "......",
    )
    north = tongue_cells((2, 4), (0, -1), 3, 2)
    assert _shape(5, 5, (2, 4), north) == _lines(
        ".....",
        "*****",
        "..*..",
        "..*..",
        "..@..",
    )


def test_curse_tongue_diagonal() -> None:
    # South-east: stem along the diagonal, bar along the other diagonal.
    cells = tongue_cells((0, 0), (1, 1), 2, 1)
    assert len(cells) == 4
    assert _shape(4, 4, (0, 0), cells) == _lines(
        "@...",
        ".*.*",
        "..*.",
        ".*..",
    )


def test_tongue_without_spread_is_a_line() -> None:
    assert tongue_cells((0, 0), (1, 0), 3, 0) == line_cells((0, 0), (1, 0), 3)
    with pytest.raises(ValueError):
        tongue_cells((0, 0), (0, 0), 2, 1)
    with pytest.raises(ValueError):
        tongue_cells((0, 0), (2, 0), 2, 1)
    with pytest.raises(ValueError):
        tongue_cells((0, 0), (1, 0), 2, -1)


def test_ice_shards_line() -> None:
    shards = default_spells().spell("ice_shards")
    assert shards.range is not None
    cells = line_cells((0, 1), (1, 0), shards.range)
    assert _shape(8, 3, (0, 1), cells) == _lines(
        "........",
        "@******.",
        "........",
    )
    assert line_cells((5, 5), (-1, -1), 2) == [(4, 4), (3, 3)]
    with pytest.raises(ValueError):
        line_cells((0, 0), (1, 0), 0)


# --- statuses and amounts -----------------------------------------------------------------


def _uniform_check(draw: Any, values: range, n: int = 10_000) -> None:
    counts = dict.fromkeys(values, 0)
    for _ in range(n):
        counts[draw()] += 1  # KeyError for a value out of range
    p = 1 / len(values)
    for value, count in counts.items():
        assert abs(count / n - p) <= _tolerance(p, n), value


def test_confusion_rounds_1d10() -> None:
    rng = np.random.default_rng(2)
    confusion = default_spells().spell("confusion")
    assert confusion.dice is not None
    _uniform_check(lambda: status_rounds(rng, confusion.dice, confusion.power), range(1, 11))


def test_poison_cloud_rounds_4_to_8() -> None:
    rng = np.random.default_rng(3)
    _uniform_check(
        lambda: cloud_rounds(rng, default_spells().spell("poison_cloud").power), range(4, 9)
    )


def test_plague_rounds_2d7() -> None:
    rng = np.random.default_rng(5)
    n = 20_000
    rolls = [status_rounds(rng, 2, 7) for _ in range(n)]
    assert min(rolls) == 2 and max(rolls) == 14
    p = 7 / 49  # P(2d7 == 8)
    assert abs(rolls.count(8) / n - p) <= _tolerance(p, n)
    with pytest.raises(ValueError):
        status_rounds(rng, 0, 7)


def test_heal_amounts() -> None:
    # Heal wounds p = 26: 26 + L // 13.
    assert [heal_amount(26, level) for level in (1, 12, 13, 25, 26)] == [26, 26, 27, 27, 28]
    # Odd powers round the half up: purge poison 13 -> divisor 7; haste 7 -> 4.
    assert [heal_amount(13, level) for level in (6, 7, 14)] == [13, 14, 15]
    assert [heal_amount(7, level) for level in (3, 4, 8)] == [7, 8, 9]
    # Scrying 15 omits the half: 15 + L // 15 (the halved form would give 15 + L // 8).
    assert [heal_amount(15, level, scrying=True) for level in (14, 15, 30)] == [15, 16, 17]
    assert heal_amount(15, 8) == 16
    book = default_spells()
    assert spell_amount(book.spell("scrying"), 15) == 16
    assert spell_amount(book.spell("heal_wounds"), 13) == 27
    assert spell_amount(book.spell("haste"), 4) == 8
    with pytest.raises(ValueError):
        spell_amount(book.spell("spark"), 1)
    with pytest.raises(ValueError):
        heal_amount(0, 1)


# --- lightning, webs, curses -----------------------------------------------------------


def test_lightning_chain_dice() -> None:
    bolt = default_spells().spell("lightning_bolt")
    assert (bolt.power, lightning_chain_dice(bolt.chain)) == (10, [3, 2, 1])
    assert lightning_chain_dice(1) == [1]
    assert lightning_chain_dice(upgrade(bolt).chain) == [6, 5, 4, 3, 2, 1]
    with pytest.raises(ValueError):
        lightning_chain_dice(0)


def test_web_hit_points() -> None:
    rng = np.random.default_rng(6)
    n = 20_000
    hp = [web_hit_points(rng, 10) for _ in range(n)]
    assert 6 <= min(hp) and max(hp) <= 40
    mean = 5 * 3.5 + 5.5
    sd = math.sqrt(5 * 35 / 12 + 99 / 12)
    assert abs(sum(hp) / n - mean) <= 4.5 * sd / math.sqrt(n)
    assert web_hit_points(_Dice([1, 1, 1, 1, 1], [1]), 10) == 6  # type: ignore[arg-type]
    assert web_hit_points(_Dice([6, 6, 6, 6, 6], [10]), 10) == 40  # type: ignore[arg-type]


def test_item_curse_difficulty() -> None:
    assert item_curse_difficulty(3, 1, 4, []) == 4  # range 4 counts 0
    assert item_curse_difficulty(3, 1, 2, []) == 2  # shorter ranges count negative
    assert item_curse_difficulty(3, 1, 6, [1, 2]) == 9
    assert item_curse_difficulty(-2, 0, 4, []) == -2


def _curse(level: int, difficulty: int, upgraded: bool, *rolls: list[int]) -> tuple[bool, int]:
    dice = _Dice(*rolls)
    result = remove_curse(dice, level, difficulty, upgraded=upgraded)  # type: ignore[arg-type]
    assert not dice.rolls  # every prepared roll was used, no more
    return result


def test_remove_curse_rule_cases() -> None:
    # L = level + 1 dice of d6; success if the result exceeds the difficulty ...
    assert _curse(2, 17, False, [6, 6, 6]) == (True, 0)
    # ... or equals L (all ones), however hard the curse.
    assert _curse(2, 50, False, [1, 1, 1]) == (True, 0)
    assert _curse(0, 9, False, [1]) == (True, 0)
    # Equal to the difficulty is a failure; k = 0 gives no backlash and no draw.
    assert _curse(2, 18, False, [6, 6, 6]) == (False, 0)
    # Failure by k = 5: backlash floor(2d5 / 3).
    assert _curse(2, 10, False, [1, 2, 2], [5, 4]) == (False, 3)
    assert _curse(2, 10, False, [1, 2, 2], [1, 1]) == (False, 0)
    # k = 1: 2d1 = 2, so never any backlash.
    assert _curse(2, 6, False, [1, 2, 2], [1, 1]) == (False, 0)
    # Upgraded: the roll doubles; the doubled result no longer equals L.
    assert _curse(2, 10, True, [2, 2, 2]) == (True, 0)
    assert _curse(2, 10, True, [1, 1, 1], [4, 4]) == (False, 2)


def test_remove_curse_probability() -> None:
    # Level 1 (L = 2) against difficulty 7: P(2d6 > 7) + P(2d6 == 2) = 15/36 + 1/36.
    rng = np.random.default_rng(7)
    n, p = 20_000, 16 / 36
    wins = sum(remove_curse(rng, 1, 7, upgraded=False)[0] for _ in range(n))
    assert abs(wins / n - p) <= _tolerance(p, n)
    with pytest.raises(ValueError):
        remove_curse(rng, -1, 7, upgraded=False)


# --- upgrades and costs ---------------------------------------------------------------


def test_upgrade_doubles_numbers() -> None:
    fireball = default_spells().spell("fireball")
    up = upgrade(fireball)
    assert (up.power, up.radius, up.attenuation, up.range) == (20, 6, 1.6, 16)
    assert up.dice == fireball.dice == 2 and up.level == fireball.level and up.upgraded
    assert cast_energy_cost(up) == cast_energy_cost(fireball) == 20
    curse = upgrade(default_spells().spell("curse"))
    assert (curse.power, curse.range, curse.spread) == (24, 4, 2)
    glob = upgrade(default_spells().spell("acid_glob"))
    assert glob.range is None  # unlimited stays unlimited
    ray = upgrade(default_spells().spell("magic_missile"))
    assert (ray.range_min, ray.range, ray.dice) == (14, 26, None)
    with pytest.raises(ValueError):
        upgrade(up)


def test_upgrade_halves_cost_of_the_few() -> None:
    haste = default_spells().spell("haste")
    up = upgrade(haste)
    assert dataclasses.replace(up, upgraded=False) == haste  # numbers unchanged
    assert (cast_energy_cost(haste), cast_energy_cost(up)) == (15, 7)
    assert (failed_energy_cost(haste), failed_energy_cost(up)) == (7, 3)


def test_every_effect_has_rules() -> None:
    assert frozenset(EFFECTS) == IMPLEMENTED_EFFECTS
