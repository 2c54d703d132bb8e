"""Tests for server.sim.rays: seed 000's ray diagrams, doors, digging, fireballs, beams.

Maps are drawn like the seed's diagrams: ``@`` is the firer and lower-case
letters are creatures (both stand on floor); ``markers`` returns where they are.
"""

from __future__ import annotations

import math
import textwrap
from collections import Counter
from collections.abc import Callable
from typing import cast

import numpy as np
import pytest

from server.content import Terrain
from server.sim.level import Level
from server.sim.rays import (
    RayHit,
    RayTarget,
    RayTrace,
    draw_beam_range,
    draw_dig_range,
    draw_ray_range,
    ray_floor_effect,
    trace_beam,
    trace_ray,
)

Cell = tuple[int, int]


def markers(text: str) -> tuple[Level, dict[str, Cell]]:
    """Build a level from a triple-quoted map whose ``@`` and letters stand on floor."""
    lines = textwrap.dedent(text[1:]).split("\n")
    found = {
        ch: (x, y)
        for y, line in enumerate(lines)
        for x, ch in enumerate(line)
        if ch == "@" or ch.islower()
    }
    plain = "".join("." if ch == "@" or ch.islower() else ch for ch in text)
    return Level.from_ascii(plain), found


class ScriptedRng:
    """Stands in for a Generator: returns scripted ``integers`` values and logs the calls."""

    def __init__(self, *values: int) -> None:
        self.values = list(values)
        self.calls: list[tuple[int, ...]] = []

    def integers(self, low: int, high: int | None = None) -> int:
        self.calls.append((low,) if high is None else (low, high))
        assert self.values, f"unexpected draw integers{self.calls[-1]}"
        return self.values.pop(0)

    def as_rng(self) -> np.random.Generator:
        return cast(np.random.Generator, self)


class Crowd:
    """Creatures by square, an ``occupant`` for the tracer, and a log of calls."""

    def __init__(self, placed: dict[Cell, RayTarget] | None = None) -> None:
        self.placed = dict(placed or {})
        self.asked: list[Cell] = []
        self.struck: list[int] = []
        self.rolled: list[int] = []

    def put(self, cell: Cell, ident: int, *, hits: bool = True, reflects: bool = False) -> None:
        def roll() -> bool:
            self.rolled.append(ident)
            return hits

        self.placed[cell] = RayTarget(ident, reflects, roll)

    def occupant(self, x: int, y: int) -> RayTarget | None:
        self.asked.append((x, y))
        return self.placed.get((x, y))

    def strike(self, target: RayTarget) -> None:
        self.struck.append(target.id)


def close_to(count: int, n: int, p: float) -> bool:
    """Whether ``count / n`` is within 4.5 binomial standard deviations of ``p``."""
    return abs(count / n - p) <= 4.5 * math.sqrt(p * (1 - p) / n)


def no_draws() -> np.random.Generator:
    return ScriptedRng().as_rng()


# --- seed 000: straight reflection -------------------------------------------------

STRAIGHT = """
    --------
    |...@..|
    --------
"""


def test_straight_bounce_goes_into_the_wall_and_back_without_a_draw() -> None:
    level, at = markers(STRAIGHT)
    x, y = at["@"]
    trace = trace_ray(level, (x, y), (-1, 0), no_draws(), range=7)
    assert trace.steps == [
        (3, y, -1, 0),
        (2, y, -1, 0),
        (1, y, -1, 0),
        (0, y, 1, 0),
        (1, y, 1, 0),
        (2, y, 1, 0),
    ]
    assert trace.bounces == [(0, y)]
    assert trace.end == (2, y) and trace.range_left == 0
    assert trace.cells == [(3, y), (2, y), (1, y), (0, y)]


def test_straight_bounce_hits_a_monster_twice_and_then_the_firer() -> None:
    level, at = markers("""
        --------
        |.m.@..|
        --------
    """)
    crowd = Crowd()
    crowd.put(at["m"], 7)
    crowd.put(at["@"], 1)
    trace = trace_ray(
        level, at["@"], (-1, 0), no_draws(), range=13, occupant=crowd.occupant, strike=crowd.strike
    )
    # 13 -> s(3) 12 -> s(2) hit 9 -> s(1) 8 -> s(0) bounce 6 -> s(1) 5 -> s(2) hit 2
    # -> s(3) 1 -> s(4) firer hit.
    assert [s[0] for s in trace.steps] == [3, 2, 1, 0, 1, 2, 3, 4]
    assert trace.hits == [RayHit(2, 1, 7, False), RayHit(2, 1, 7, False), RayHit(4, 1, 1, False)]
    assert crowd.struck == [7, 7, 1]
    assert crowd.asked[0] == (3, 1)  # the firer's own square is not entered first


def test_ray_hits_its_own_firer_after_a_straight_bounce() -> None:
    level, at = markers(STRAIGHT)
    crowd = Crowd()
    crowd.put(at["@"], 1)
    trace = trace_ray(
        level, at["@"], (-1, 0), no_draws(), range=9, occupant=crowd.occupant, strike=crowd.strike
    )
    assert trace.steps[-1] == (4, 1, 1, 0)
    assert trace.hits == [RayHit(4, 1, 1, False)] and crowd.struck == [1]


# --- seed 000: angled reflection -----------------------------------------------------

ANGLED = """
    ---------
    |.......|
    |..c....|
    |.......|
    |b......|
    |a......|
    |.......|
    |.......|
    |..@....|
    ---------
"""


def test_angled_bounce_misses_a_and_hits_b_then_c() -> None:
    level, at = markers(ANGLED)
    crowd = Crowd()
    for ident, name in enumerate("abc", start=10):
        crowd.put(at[name], ident)
    rng = ScriptedRng(5, 5)
    trace = trace_ray(
        level,
        at["@"],
        (-1, -1),
        rng.as_rng(),
        range=13,
        occupant=crowd.occupant,
        strike=crowd.strike,
    )
    # Into the wall beside a; side A (the wall below) is closed, side B (a's
    # square) is open: dx flips. The ray runs out on the top wall, whose bounce
    # still draws (nethack_ray.md section 5) but is not listed as a bounce.
    assert trace.steps == [
        (2, 7, -1, -1),
        (1, 6, -1, -1),
        (0, 5, 1, -1),
        (1, 4, 1, -1),
        (2, 3, 1, -1),
        (3, 2, 1, -1),
        (4, 1, 1, -1),
        (5, 0, 1, 1),
    ]
    assert [h.target_id for h in trace.hits] == [11, 12] and crowd.struck == [11, 12]
    assert at["a"] not in crowd.asked
    assert trace.bounces == [(0, 5)]
    assert rng.calls == [(20,), (20,)]


def test_angled_bounce_comes_straight_back_on_a_zero_draw() -> None:
    level, at = markers(ANGLED)
    crowd = Crowd()
    for ident, name in enumerate("abc@", start=10):
        crowd.put(at[name], ident)
    rng = ScriptedRng(0)
    trace = trace_ray(
        level,
        at["@"],
        (-1, -1),
        rng.as_rng(),
        range=7,
        occupant=crowd.occupant,
        strike=crowd.strike,
    )
    assert trace.steps == [
        (2, 7, -1, -1),
        (1, 6, -1, -1),
        (0, 5, 1, 1),
        (1, 6, 1, 1),
        (2, 7, 1, 1),
        (3, 8, 1, 1),
    ]
    assert crowd.struck == [13]
    assert rng.calls == [(20,)]


# --- seed 000: corners ---------------------------------------------------------------

CONCAVE = """
    ------
    |....|
    |....|
    |..@.|
    |....|
    ------
"""


def test_concave_corner_sends_the_ray_back_to_its_firer() -> None:
    level, at = markers(CONCAVE)
    crowd = Crowd()
    crowd.put(at["@"], 1)
    rng = ScriptedRng(9)
    trace = trace_ray(
        level,
        at["@"],
        (-1, -1),
        rng.as_rng(),
        range=7,
        occupant=crowd.occupant,
        strike=crowd.strike,
    )
    assert trace.steps == [
        (2, 2, -1, -1),
        (1, 1, -1, -1),
        (0, 0, 1, 1),
        (1, 1, 1, 1),
        (2, 2, 1, 1),
        (3, 3, 1, 1),
    ]
    assert crowd.struck == [1]
    assert rng.calls == [(20,)]  # the straight-back draw is made, no side draw


def test_concave_corner_always_returns() -> None:
    level, at = markers(CONCAVE)
    rng = np.random.default_rng(3)
    for _ in range(500):
        assert trace_ray(level, at["@"], (-1, -1), rng, range=4).steps[2] == (0, 0, 1, 1)


CONVEX = """
        ------
        |..a.|
        |....|
        |....|
    -----....|
    |........|
    |........|
    |b.....@.|
    ----------
"""


@pytest.mark.parametrize(
    ("script", "calls", "after", "victim"),
    [
        ((0,), [(20,)], (1, 1), "@"),
        ((4, 1), [(20,), (2,)], (1, -1), "a"),  # right: dx flips
        ((4, 0), [(20,), (2,)], (-1, 1), "b"),  # left: dy flips
    ],
)
def test_convex_corner_goes_back_right_or_left(
    script: tuple[int, ...], calls: list[tuple[int, ...]], after: Cell, victim: str
) -> None:
    level, at = markers(CONVEX)
    crowd = Crowd()
    for ident, name in enumerate("ab@", start=1):
        crowd.put(at[name], ident)
    rng = ScriptedRng(*script)
    trace = trace_ray(
        level,
        at["@"],
        (-1, -1),
        rng.as_rng(),
        range=7,
        occupant=crowd.occupant,
        strike=crowd.strike,
    )
    assert trace.steps[2] == (4, 4, *after)
    assert trace.bounces == [(4, 4)]
    assert trace.end == at[victim] and trace.hits[-1].target_id == "ab@".index(victim) + 1
    assert rng.calls == calls


def test_convex_corner_frequencies() -> None:
    level, at = markers(CONVEX)
    rng = np.random.default_rng(20240501)
    n = 12_000
    seen = Counter(trace_ray(level, at["@"], (-1, -1), rng, range=4).steps[2][2:] for _ in range(n))
    assert set(seen) <= {(1, 1), (1, -1), (-1, 1)}
    assert close_to(seen[(1, 1)], n, 1 / 20)
    assert close_to(seen[(1, -1)], n, 19 / 40)
    assert close_to(seen[(-1, 1)], n, 19 / 40)


FLAT = """
    ------------
    |..........|
    |..........|
    |..........|
    ------------
"""


def test_flat_wall_frequencies() -> None:
    level = Level.from_ascii(FLAT)
    rng = np.random.default_rng(77)
    n = 12_000
    seen = Counter(trace_ray(level, (6, 3), (-1, -1), rng, range=4).steps[2] for _ in range(n))
    assert set(seen) <= {(3, 0, 1, 1), (3, 0, -1, 1)}
    assert close_to(seen[(3, 0, 1, 1)], n, 1 / 20)
    assert close_to(seen[(3, 0, -1, 1)], n, 19 / 20)


def test_flat_wall_deflection_continues_from_the_wall_square() -> None:
    level = Level.from_ascii(FLAT)
    trace = trace_ray(level, (6, 3), (-1, -1), ScriptedRng(1).as_rng(), range=6)
    assert trace.steps == [
        (5, 2, -1, -1),
        (4, 1, -1, -1),
        (3, 0, -1, 1),
        (2, 1, -1, 1),
        (1, 2, -1, 1),
    ]


@pytest.mark.parametrize(
    ("beyond", "side", "after"),
    [
        ("|", ".", (-1, 1)),  # floor is room-like: deflects
        ("|", ":", (-1, 1)),  # so is rubble
        ("|", "~", (1, 1)),  # water is not room-like and the square beyond is a wall: back
        ("'", "~", (-1, 1)),  # ... but an open doorway beyond lets it deflect
        ("+", "~", (-1, 1)),  # ... and so does a closed door beyond (NetHack's ZAP_POS)
        ("|", "'", (1, 1)),  # a doorway with a wall beyond: back
        ("|", "=", (1, 1)),  # lava with a wall beyond: back
        (".", "+", (1, 1)),  # a closed door is never an open side
    ],
)
def test_side_square_needs_room_like_terrain_or_an_open_square_beyond(
    beyond: str, side: str, after: Cell
) -> None:
    level = Level.from_ascii(f"\n------\n{beyond}{side}...|\n|....|\n------\n")
    rng = ScriptedRng(3)
    trace = trace_ray(level, (3, 2), (-1, -1), rng.as_rng(), range=3)
    assert trace.steps[-1] == (1, 0, *after)
    assert rng.calls == [(20,)]


def test_hit_rolls_and_bounce_draws_share_the_stream_in_path_order() -> None:
    level, at = markers(CONVEX)
    rng = ScriptedRng(500, 4, 1, 600)
    rolls = rng.as_rng()
    crowd = Crowd(
        {
            cell: RayTarget(i, False, lambda: int(rolls.integers(1000)) < 900)
            for i, cell in enumerate([(5, 5), (5, 3)])
        }
    )
    trace = trace_ray(
        level, at["@"], (-1, -1), rolls, range=9, occupant=crowd.occupant, strike=crowd.strike
    )
    assert rng.calls == [(1000,), (20,), (2,), (1000,)]
    assert crowd.struck == [0, 1] and trace.end == (5, 3)


# --- what stands on the path ---------------------------------------------------------

ROW = """
    ------------------
    |................|
    ------------------
"""


@pytest.mark.parametrize("hit_count", [0, 1, 2, 3, 4])
def test_each_damaging_hit_shortens_the_ray_by_two(hit_count: int) -> None:
    level = Level.from_ascii(ROW)
    crowd = Crowd()
    for i in range(hit_count):
        crowd.put((15 - i, 1), i)
    trace = trace_ray(
        level, (16, 1), (-1, 0), no_draws(), range=13, occupant=crowd.occupant, strike=crowd.strike
    )
    assert len(trace.steps) == 13 - 2 * hit_count
    assert crowd.struck == list(range(hit_count))


def test_misses_cost_no_range_and_every_square_gets_a_roll() -> None:
    level = Level.from_ascii(ROW)
    crowd = Crowd()
    for x in range(1, 17):
        crowd.put((x, 1), x, hits=False)
    trace = trace_ray(
        level, (16, 1), (-1, 0), no_draws(), range=10, occupant=crowd.occupant, strike=crowd.strike
    )
    assert len(trace.steps) == 10 and trace.hits == [] and crowd.struck == []
    assert crowd.rolled == list(range(15, 5, -1))


def test_reflection_reverses_the_ray_at_no_range_cost() -> None:
    level, at = markers("""
        --------
        |.r..@.|
        --------
    """)
    crowd = Crowd()
    crowd.put(at["r"], 5, reflects=True)
    crowd.put(at["@"], 1)
    trace = trace_ray(
        level, at["@"], (-1, 0), no_draws(), range=6, occupant=crowd.occupant, strike=crowd.strike
    )
    assert trace.steps == [
        (4, 1, -1, 0),
        (3, 1, -1, 0),
        (2, 1, 1, 0),
        (3, 1, 1, 0),
        (4, 1, 1, 0),
        (5, 1, 1, 0),
    ]
    assert trace.hits == [RayHit(2, 1, 5, True), RayHit(5, 1, 1, False)]
    assert crowd.struck == [1] and trace.bounces == []


def test_a_killed_target_is_not_hit_again() -> None:
    level, at = markers(STRAIGHT)
    crowd = Crowd()
    crowd.put((2, 1), 7)

    def kill(target: RayTarget) -> None:
        crowd.struck.append(target.id)
        del crowd.placed[(2, 1)]

    trace_ray(level, at["@"], (-1, 0), no_draws(), range=13, occupant=crowd.occupant, strike=kill)
    assert crowd.struck == [7]


def test_wall_walker_is_hit_in_the_wall_but_nothing_beyond_the_wall() -> None:
    level = Level.from_ascii("""
        -----------
        |...|.....|
        -----------
    """)
    crowd = Crowd()
    crowd.put((4, 1), 3)  # inside the wall
    crowd.put((3, 1), 4)  # beyond the wall, never reached
    trace = trace_ray(
        level, (7, 1), (-1, 0), no_draws(), range=8, occupant=crowd.occupant, strike=crowd.strike
    )
    assert trace.steps == [(6, 1, -1, 0), (5, 1, -1, 0), (4, 1, 1, 0), (5, 1, 1, 0), (6, 1, 1, 0)]
    assert crowd.struck == [3] and (3, 1) not in crowd.asked


def test_solid_rock_bounces_without_asking_who_is_there() -> None:
    level = Level.from_ascii(" .....")
    crowd = Crowd()
    crowd.put((0, 0), 9)
    trace = trace_ray(
        level, (4, 0), (-1, 0), no_draws(), range=6, occupant=crowd.occupant, strike=crowd.strike
    )
    assert trace.steps[3] == (0, 0, 1, 0) and trace.bounces == [(0, 0)]
    assert (0, 0) not in crowd.asked and trace.hits == []


def test_the_edge_of_the_level_bounces_like_rock() -> None:
    level = Level.from_ascii(".....")
    trace = trace_ray(level, (2, 0), (-1, 0), no_draws(), range=5)
    assert trace.steps == [(1, 0, -1, 0), (0, 0, -1, 0), (-1, 0, 1, 0), (0, 0, 1, 0)]
    assert trace.cells == [(1, 0), (0, 0)] and trace.end == (0, 0)


# --- doors and terrain ----------------------------------------------------------------

DOOR = """
    ---------
    |...+...|
    ---------
"""


@pytest.mark.parametrize(
    ("kind", "destroyed"),
    [
        ("fire", True),
        ("cold", True),
        ("electricity", True),
        ("disintegration", True),
        ("magic_missile", False),
        ("sleep", False),
        ("death", False),
        ("poison", False),
        ("acid", False),
    ],
)
def test_a_closed_door_halts_the_ray(kind: str, destroyed: bool) -> None:
    level = Level.from_ascii(DOOR)
    before = level.terrain.copy()
    crowd = Crowd()
    crowd.put((2, 1), 8)
    trace = trace_ray(
        level,
        (7, 1),
        (-1, 0),
        no_draws(),
        kind=kind,
        range=13,
        occupant=crowd.occupant,
        strike=crowd.strike,
    )
    assert trace.steps == [(6, 1, -1, 0), (5, 1, -1, 0), (4, 1, -1, 0)]
    assert trace.stopped_by_door and trace.bounces == [] and trace.range_left == 0
    assert trace.end == (4, 1) and crowd.struck == []
    assert trace.terrain_changes == ([(4, 1, Terrain.FLOOR)] if destroyed else [])
    assert np.array_equal(level.terrain, before) and level.changed == []


@pytest.mark.parametrize(
    ("kind", "char", "length", "becomes"),
    [
        ("fire", "~", 4, Terrain.FLOOR),  # -3, water boils away
        ("fire", "{", 6, None),  # -1, the fountain stays
        ("cold", "~", 4, Terrain.FLOOR),  # -3, water freezes
        ("cold", "=", 4, Terrain.FLOOR),  # -3, lava freezes
        ("fire", "=", 7, None),
        ("cold", "{", 7, None),
        ("electricity", "~", 7, None),
        ("magic_missile", "=", 7, None),
    ],
)
def test_terrain_on_the_way_shortens_the_ray(
    kind: str, char: str, length: int, becomes: Terrain | None
) -> None:
    level = Level.from_ascii(f"\n|.......{char}...|\n")
    trace = trace_ray(level, (10, 0), (-1, 0), no_draws(), kind=kind, range=7)
    assert len(trace.steps) == length
    assert trace.terrain_changes == ([] if becomes is None else [(8, 0, becomes)])
    assert level.terrain_at(8, 0) is not Terrain.FLOOR


def test_a_later_pass_of_the_ray_sees_the_water_it_boiled() -> None:
    level = Level.from_ascii("\n|.~....|\n")
    trace = trace_ray(level, (5, 0), (-1, 0), no_draws(), kind="fire", range=13)
    # 13 -> s4 12 -> s3 11 -> s2 water 7 -> s1 6 -> wall 4 -> s1 3 -> s2 (floor now) 2 -> s3 1
    # -> s4 0.
    assert [s[0] for s in trace.steps] == [4, 3, 2, 1, 0, 1, 2, 3, 4]
    assert trace.terrain_changes == [(2, 0, Terrain.FLOOR)]
    assert trace.burn_cells == [(4, 0), (3, 0), (2, 0), (1, 0)]
    assert level.terrain_at(2, 0) is Terrain.WATER


def test_only_fire_lists_squares_to_burn() -> None:
    level = Level.from_ascii(ROW)
    assert trace_ray(level, (5, 1), (1, 0), no_draws(), kind="cold", range=3).burn_cells == []
    fire = trace_ray(level, (5, 1), (1, 0), no_draws(), kind="fire", range=3)
    assert fire.burn_cells == [(6, 1), (7, 1), (8, 1)] and fire.range_left == 0


def test_floor_effect_table() -> None:
    assert ray_floor_effect("fire", Terrain.FLOOR).range_change == 0
    assert ray_floor_effect("fire", Terrain.WATER).range_change == -3
    assert ray_floor_effect("fire", Terrain.FOUNTAIN).becomes is None
    assert ray_floor_effect("sleep", Terrain.DOOR_CLOSED).halts


# --- digging and fireballs ------------------------------------------------------------

DIG = """
    ########################
    #...#   +.T.:..........#
    ########################
"""


def test_digging_cuts_through_everything_to_full_range() -> None:
    level = Level.from_ascii(DIG)
    before = level.terrain.copy()
    crowd = Crowd()
    crowd.put((6, 1), 1)
    trace = trace_ray(
        level,
        (1, 1),
        (1, 0),
        no_draws(),
        range=15,
        digging=True,
        occupant=crowd.occupant,
        strike=crowd.strike,
    )
    assert [s[:2] for s in trace.steps] == [(x, 1) for x in range(2, 17)]
    assert trace.terrain_changes == [(x, 1, Terrain.FLOOR) for x in (4, 5, 6, 7, 8, 10, 12)]
    assert trace.bounces == [] and trace.hits == [] and crowd.asked == []
    assert np.array_equal(level.terrain, before)


def test_digging_stops_before_the_outer_boundary() -> None:
    level = Level.from_ascii(DIG)
    trace = trace_ray(level, (1, 1), (1, 0), no_draws(), range=40, digging=True)
    assert trace.end == (22, 1) and (23, 1, Terrain.FLOOR) not in trace.terrain_changes
    assert trace_ray(level, (1, 1), (0, -1), no_draws(), range=9, digging=True).steps == []


def test_fireball_explodes_before_a_wall_without_bouncing() -> None:
    level = Level.from_ascii(ROW)
    trace = trace_ray(level, (5, 1), (-1, 0), no_draws(), kind="fire", range=13, fireball=True)
    assert [s[0] for s in trace.steps] == [4, 3, 2, 1]
    assert trace.end == (1, 1) and trace.bounces == [] and not trace.stopped_by_door
    diagonal = trace_ray(level, (5, 1), (-1, -1), no_draws(), kind="fire", range=13, fireball=True)
    assert diagonal.steps == [] and diagonal.end == (5, 1)


def test_fireball_explodes_on_the_first_creature_without_a_hit_roll() -> None:
    level = Level.from_ascii(ROW)

    def no_roll() -> bool:
        raise AssertionError("a fireball makes no hit roll")

    crowd = Crowd({(3, 1): RayTarget(4, False, no_roll)})
    trace = trace_ray(
        level,
        (6, 1),
        (-1, 0),
        no_draws(),
        kind="fire",
        range=13,
        fireball=True,
        occupant=crowd.occupant,
        strike=crowd.strike,
    )
    assert trace.end == (3, 1) and trace.steps[-1][:2] == (3, 1)
    assert trace.hits == [] and crowd.struck == []


def test_fireball_explodes_in_front_of_a_door_and_leaves_it() -> None:
    level = Level.from_ascii(DOOR)
    trace = trace_ray(level, (7, 1), (-1, 0), no_draws(), kind="fire", range=13, fireball=True)
    assert trace.end == (5, 1) and trace.stopped_by_door and trace.terrain_changes == []


# --- beams ----------------------------------------------------------------------------


def test_beam_stops_before_a_wall_or_door() -> None:
    trace = trace_beam(Level.from_ascii(ROW), (5, 1), (-1, 0), no_draws(), range=13)
    assert trace.steps == [(x, 1, -1, 0) for x in (4, 3, 2, 1)] and trace.end == (1, 1)
    door = trace_beam(Level.from_ascii(DOOR), (7, 1), (-1, 0), no_draws(), range=13)
    assert door.end == (5, 1) and door.stopped_by_door and door.bounces == []


def test_beam_stops_at_the_first_creature_it_hits() -> None:
    level = Level.from_ascii(ROW)
    crowd = Crowd()
    crowd.put((12, 1), 1, hits=False)
    crowd.put((10, 1), 2, reflects=True)
    crowd.put((8, 1), 3)
    trace = trace_beam(
        level, (14, 1), (-1, 0), no_draws(), range=13, occupant=crowd.occupant, strike=crowd.strike
    )
    assert trace.end == (10, 1) and trace.hits == [RayHit(10, 1, 2, False)]
    assert crowd.struck == [2] and crowd.rolled == [1, 2]


# --- ranges, draws, errors ------------------------------------------------------------


def test_range_draws_come_first_with_the_documented_bounds() -> None:
    level = Level.from_ascii(ROW)
    rng = ScriptedRng(9)
    assert trace_ray(level, (16, 1), (-1, 0), rng.as_rng()).initial_range == 9
    dig = ScriptedRng(8)
    assert len(trace_ray(level, (16, 1), (-1, 0), dig.as_rng(), digging=True).steps) == 8
    beam = ScriptedRng(6)
    assert len(trace_beam(level, (16, 1), (-1, 0), beam.as_rng()).steps) == 6
    assert (rng.calls, dig.calls, beam.calls) == ([(7, 14)], [(8, 26)], [(6, 14)])


LONG = "\n|" + "." * 30 + "|\n"


@pytest.mark.parametrize(
    ("trace", "low", "high"),
    [
        (lambda lv, r: trace_ray(lv, (1, 0), (1, 0), r), 7, 13),
        (lambda lv, r: trace_beam(lv, (1, 0), (1, 0), r), 6, 13),
        (lambda lv, r: trace_ray(lv, (1, 0), (1, 0), r, digging=True), 8, 25),
    ],
)
def test_drawn_ranges_are_uniform(
    trace: Callable[[Level, np.random.Generator], RayTrace], low: int, high: int
) -> None:
    level = Level.from_ascii(LONG)
    rng = np.random.default_rng(high)
    n = 10_000
    seen = Counter(len(trace(level, rng).steps) for _ in range(n))
    assert set(seen) == set(range(low, high + 1))
    p = 1 / (high - low + 1)
    assert all(close_to(seen[k], n, p) for k in seen)


def test_range_draw_functions() -> None:
    rng = np.random.default_rng(5)
    for draw, low, high in (
        (draw_ray_range, 7, 13),
        (draw_beam_range, 6, 13),
        (draw_dig_range, 8, 25),
    ):
        n = 20_000
        seen = Counter(draw(rng) for _ in range(n))
        assert set(seen) == set(range(low, high + 1))
        assert all(close_to(seen[k], n, 1 / (high - low + 1)) for k in seen)


def test_same_seed_same_trace() -> None:
    level, at = markers(CONVEX)
    one = trace_ray(level, at["@"], (-1, -1), np.random.default_rng(8))
    two = trace_ray(level, at["@"], (-1, -1), np.random.default_rng(8))
    assert one == two


@pytest.mark.parametrize(
    "call",
    [
        lambda lv: trace_ray(lv, (1, 1), (0, 0), no_draws(), range=3),
        lambda lv: trace_ray(lv, (1, 1), (2, 0), no_draws(), range=3),
        lambda lv: trace_ray(lv, (40, 1), (1, 0), no_draws(), range=3),
        lambda lv: trace_ray(lv, (1, 1), (1, 0), no_draws(), range=-1),
        lambda lv: trace_ray(lv, (1, 1), (1, 0), no_draws(), range=3, kind="lightning"),
        lambda lv: trace_ray(lv, (1, 1), (1, 0), no_draws(), range=3, digging=True, fireball=True),
        lambda lv: trace_beam(lv, (1, 1), (0, 0), no_draws(), range=3),
    ],
)
def test_bad_arguments_are_rejected(call: Callable[[Level], RayTrace]) -> None:
    with pytest.raises(ValueError):
        call(Level.from_ascii(ROW))
