"""Tests for server.sim.ballistics: seed 002's targeting formula, exactly."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.sim import ballistics
from server.sim.ballistics import bolt_cell, bolt_line, bolt_path
from tests.sim.conftest import imported_roots


def open_map(width: int, height: int) -> np.ndarray:
    return np.zeros((height, width), dtype=bool)


# --- the seed's worked example ------------------------------------------------


def seed_number(cell: tuple[int, int], columns: int = 16) -> int:
    """Seed 002 numbers the rectangle's cells row by row along the long axis."""
    x, y = cell
    return x + columns * y


def test_seed_worked_example_16_by_9() -> None:
    # Seed 002: shooter in cell 0 = (0, 0), target cell 143 = (15, 8) of a
    # 16-column x 9-row rectangle. Cell(1) = 17, Cell(14) = 126, Cell(15) = 143.
    path = bolt_path((0, 0), (15, 8), open_map(16, 9))
    assert len(path) == 15  # cells 1..15; cell 0 is the shooter's own
    assert seed_number(path[0]) == 17
    assert seed_number(path[13]) == 126
    assert seed_number(path[14]) == 143


def test_seed_formula_for_every_cell_of_the_example() -> None:
    # Cell(i) = i + A * (((A - 1) // 2 + i * (B - 1)) // (A - 1)), A = 16, B = 9.
    path = bolt_path((0, 0), (15, 8), open_map(16, 9))
    expected = [i + 16 * ((15 // 2 + i * 8) // 15) for i in range(1, 16)]
    assert [seed_number(c) for c in path] == expected


def test_seed_continuation_past_the_target() -> None:
    # Seed 002: "We can continue and reach rows 10 and bigger. This shows how
    # the projectile continues in the case of a wand." On a 40 x 40 map the
    # bolt keeps following Cell(i) for i > 15; its row sequence from the seed's
    # walk-through reaches row 9 (y = 8) at i = 15 and row 10 (y = 9) at i = 16.
    columns = 40
    path = bolt_path((0, 0), (15, 8), open_map(columns, 40), past_target=True)
    expected = [(i, (7 + 8 * i) // 15) for i in range(1, columns)]
    assert path == expected
    assert path[14] == (15, 8)  # the target, cell 143
    assert path[15] == (16, 9)  # the seed's "(row 10)"


def test_mirrored_example_is_mirrored_when_no_tie() -> None:
    # With A - 1 = 15 odd there is no half-way tie, so mirroring the example in
    # the x axis mirrors the path (the seed's table "by flipping").
    path = bolt_path((15, 0), (0, 8), open_map(16, 9))
    assert path == [(15 - i, (7 + 8 * i) // 15) for i in range(1, 16)]


# --- asymmetry ----------------------------------------------------------------


def test_path_is_not_its_own_reverse_short_case() -> None:
    # (0, 0) -> (2, 1): long = 2, short = 1, error starts at 2 // 2 = 1.
    # Step 1: minor offset (1 + 1) // 2 = 1 -> (1, 1).  Step 2: (1 + 2) // 2 = 1 -> (2, 1).
    # (2, 1) -> (0, 0): both signs -1, step 1: offset 1 -> (1, 0); step 2: (0, 0).
    grid = open_map(3, 2)
    assert bolt_path((0, 0), (2, 1), grid) == [(1, 1), (2, 1)]
    assert bolt_path((2, 1), (0, 0), grid) == [(1, 0), (0, 0)]


def test_path_is_not_its_own_reverse_reference_case() -> None:
    # (10, 10) -> (14, 12): long 4, short 2, start 2; offsets (2 + 2i) // 4 for
    # i = 1..4 are 1, 1, 2, 2 -> (11,11) (12,11) (13,12) (14,12).
    # Reverse: offsets are the same 1, 1, 2, 2 but subtracted from (14, 12):
    # (13,11) (12,11) (11,10) (10,10).
    grid = open_map(20, 20)
    forward = bolt_path((10, 10), (14, 12), grid)
    backward = bolt_path((14, 12), (10, 10), grid)
    assert forward == [(11, 11), (12, 11), (13, 12), (14, 12)]
    assert backward == [(13, 11), (12, 11), (11, 10), (10, 10)]
    assert forward[:-1] != list(reversed(backward[:-1]))


def test_y_major_half_way_rounds_towards_target() -> None:
    # (5, 5) -> (6, 7): |dy| = 2 > |dx| = 1, so y is major; start 1,
    # step 1 offset (1 + 1) // 2 = 1 -> (6, 6); step 2 -> (6, 7).
    # Reverse (6, 7) -> (5, 5): step 1 -> (5, 6); step 2 -> (5, 5).
    grid = open_map(10, 10)
    assert bolt_path((5, 5), (6, 7), grid) == [(6, 6), (6, 7)]
    assert bolt_path((6, 7), (5, 5), grid) == [(5, 6), (5, 5)]


# --- straight lines -------------------------------------------------------------


@pytest.mark.parametrize(("sx", "sy"), [(1, 1), (1, -1), (-1, 1), (-1, -1)])
def test_pure_diagonals(sx: int, sy: int) -> None:
    grid = open_map(11, 11)
    path = bolt_path((5, 5), (5 + 4 * sx, 5 + 4 * sy), grid)
    assert path == [(5 + i * sx, 5 + i * sy) for i in range(1, 5)]


@pytest.mark.parametrize(("dx", "dy"), [(1, 0), (-1, 0), (0, 1), (0, -1)])
def test_orthogonal_lines(dx: int, dy: int) -> None:
    grid = open_map(11, 11)
    path = bolt_path((5, 5), (5 + 3 * dx, 5 + 3 * dy), grid)
    assert path == [(5 + i * dx, 5 + i * dy) for i in range(1, 4)]


@pytest.mark.parametrize(("dx", "dy"), [(1, 0), (-1, 0), (0, 1), (0, -1)])
def test_orthogonal_past_target_runs_to_the_edge(dx: int, dy: int) -> None:
    grid = open_map(11, 11)
    path = bolt_path((5, 5), (5 + dx, 5 + dy), grid, past_target=True)
    assert path == [(5 + i * dx, 5 + i * dy) for i in range(1, 6)]


# --- obstacles and the edge -----------------------------------------------------


def test_stops_before_a_blocked_cell() -> None:
    grid = open_map(16, 9)
    grid[7, 14] = True  # Cell(14) = 126 = (14, 7)
    path = bolt_path((0, 0), (15, 8), grid)
    assert path == [(i, (7 + 8 * i) // 15) for i in range(1, 14)]
    assert path[-1] == (13, 7)  # Cell(13) = 13 + 16 * (111 // 15)


def test_blocked_target_is_not_entered() -> None:
    grid = open_map(5, 1)
    grid[0, 4] = True
    assert bolt_path((0, 0), (4, 0), grid) == [(1, 0), (2, 0), (3, 0)]


def test_blocked_next_cell_gives_empty_path() -> None:
    grid = open_map(5, 5)
    grid[2, 3] = True
    assert bolt_path((2, 2), (4, 2), grid) == []
    assert bolt_path((2, 2), (4, 2), grid, past_target=True) == []


def test_blocked_origin_is_not_tested() -> None:
    grid = open_map(5, 1)
    grid[0, 0] = True
    assert bolt_path((0, 0), (2, 0), grid) == [(1, 0), (2, 0)]


def test_cell_beside_the_line_does_not_block() -> None:
    grid = open_map(16, 9)
    grid[0, 1] = True  # beside Cell(1) = (1, 1)
    grid[1, 0] = True  # both orthogonal neighbours of the first diagonal step
    path = bolt_path((0, 0), (15, 8), grid)
    assert len(path) == 15


def test_past_target_continues_to_the_edge() -> None:
    grid = open_map(10, 6)
    path = bolt_path((1, 1), (3, 2), grid, past_target=True)
    # long 2, short 1, start 1: offsets (1 + i) // 2 = 1,1,2,2,3,3,... on x 2..9.
    expected = [(1 + i, 1 + (1 + i) // 2) for i in range(1, 9)]
    assert path == expected
    assert path[-1] == (9, 5)


def test_past_target_stops_at_the_minor_edge_first() -> None:
    # Steep enough that y leaves the map before x does: 10 x 4 map.
    grid = open_map(10, 4)
    path = bolt_path((0, 0), (3, 2), grid, past_target=True)
    # long 3, short 2, start 1: offsets (1 + 2i) // 3 = 1, 1, 2, 3, 3, 4 ...
    assert path == [(1, 1), (2, 1), (3, 2), (4, 3), (5, 3)]


def test_past_target_stops_before_a_blocked_cell_behind_the_target() -> None:
    grid = open_map(10, 1)
    grid[0, 6] = True
    assert bolt_path((0, 0), (2, 0), grid, past_target=True) == [(i, 0) for i in range(1, 6)]


def test_target_outside_the_map_is_cut_at_the_edge() -> None:
    grid = open_map(5, 5)
    assert bolt_path((2, 2), (8, 2), grid) == [(3, 2), (4, 2)]


def test_origin_equals_target_is_empty() -> None:
    grid = open_map(5, 5)
    assert bolt_path((2, 2), (2, 2), grid) == []
    assert bolt_path((2, 2), (2, 2), grid, past_target=True) == []
    assert bolt_line((2, 2), (2, 2), 5, 5, past_target=True) == []


def test_origin_on_edge_heading_out_is_empty() -> None:
    assert bolt_path((4, 2), (5, 2), open_map(5, 5), past_target=True) == []


def test_bolt_line_matches_bolt_path_on_open_map() -> None:
    assert bolt_line((0, 0), (15, 8), 16, 9) == bolt_path((0, 0), (15, 8), open_map(16, 9))


# --- validation ---------------------------------------------------------------


@pytest.mark.parametrize("origin", [(-1, 0), (0, -1), (5, 0), (0, 5)])
def test_origin_outside_the_map_raises(origin: tuple[int, int]) -> None:
    with pytest.raises(ValueError, match="outside"):
        bolt_path(origin, (2, 2), open_map(5, 5))


@pytest.mark.parametrize("shape", [(5,), (2, 3, 4), ()])
def test_non_2d_blocked_raises(shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match="2-D"):
        bolt_path((0, 0), (1, 0), np.zeros(shape, dtype=bool))


def test_bad_map_size_raises() -> None:
    with pytest.raises(ValueError):
        bolt_line((0, 0), (1, 0), 0, 5)


def test_bolt_cell_raises_on_no_direction_or_negative_step() -> None:
    with pytest.raises(ValueError):
        bolt_cell((1, 1), (1, 1), 1)
    with pytest.raises(ValueError):
        bolt_cell((1, 1), (2, 1), -1)


def test_bolt_cell_step_zero_is_origin() -> None:
    assert bolt_cell((3, 4), (9, 1), 0) == (3, 4)


# --- properties ---------------------------------------------------------------

SIZE = 24
coords = st.integers(0, SIZE - 1)
cells = st.tuples(coords, coords)


@given(cells, cells, st.booleans())
def test_steps_are_king_moves_and_long_axis_advances_by_one(
    origin: tuple[int, int], target: tuple[int, int], past: bool
) -> None:
    path = bolt_path(origin, target, open_map(SIZE, SIZE), past_target=past)
    dx, dy = target[0] - origin[0], target[1] - origin[1]
    x_major = abs(dx) > abs(dy)
    previous = origin
    for i, cell in enumerate(path, start=1):
        step_x, step_y = cell[0] - previous[0], cell[1] - previous[1]
        assert max(abs(step_x), abs(step_y)) == 1  # an 8-neighbour
        major, minor = (step_x, step_y) if x_major else (step_y, step_x)
        assert abs(major) == 1  # the long axis moves every cell
        minor_delta = dy if x_major else dx
        assert minor * minor_delta >= 0  # the short axis never moves away from the target
        major_total = (cell[0] - origin[0]) if x_major else (cell[1] - origin[1])
        assert abs(major_total) == i
        previous = cell


@given(cells, cells)
def test_open_path_ends_at_target_with_chebyshev_length(
    origin: tuple[int, int], target: tuple[int, int]
) -> None:
    path = bolt_path(origin, target, open_map(SIZE, SIZE))
    distance = max(abs(target[0] - origin[0]), abs(target[1] - origin[1]))
    assert len(path) == distance
    if distance:
        assert path[-1] == target


@given(cells, cells)
def test_matches_the_seed_formula_cell_by_cell(
    origin: tuple[int, int], target: tuple[int, int]
) -> None:
    # Independent restatement of Cell(i) in a rectangle: A - 1 = long distance,
    # B - 1 = short distance, the minor offset is ((A-1)//2 + i(B-1)) // (A-1).
    dx, dy = target[0] - origin[0], target[1] - origin[1]
    long, short = max(abs(dx), abs(dy)), min(abs(dx), abs(dy))
    path = bolt_path(origin, target, open_map(SIZE, SIZE), past_target=True)
    for i, (x, y) in enumerate(path, start=1):
        offset = (long // 2 + i * short) // long
        if abs(dx) > abs(dy):
            assert (abs(x - origin[0]), abs(y - origin[1])) == (i, offset)
        else:
            assert (abs(x - origin[0]), abs(y - origin[1])) == (offset, i)
        assert bolt_cell(origin, target, i) == (x, y)


@given(cells, cells, st.integers(0, 2**32 - 1))
def test_obstacles_cut_the_open_line(
    origin: tuple[int, int], target: tuple[int, int], seed: int
) -> None:
    rng = np.random.default_rng(seed)
    grid = rng.random((SIZE, SIZE)) < 0.2
    line = bolt_line(origin, target, SIZE, SIZE, past_target=True)
    path = bolt_path(origin, target, grid, past_target=True)
    assert path == line[: len(path)]
    assert not any(grid[y, x] for x, y in path)
    if len(path) < len(line):
        x, y = line[len(path)]
        assert grid[y, x]


@given(cells, cells)
def test_past_target_extends_the_plain_path(
    origin: tuple[int, int], target: tuple[int, int]
) -> None:
    grid = open_map(SIZE, SIZE)
    plain = bolt_path(origin, target, grid)
    longer = bolt_path(origin, target, grid, past_target=True)
    assert longer[: len(plain)] == plain
    if longer:
        x, y = longer[-1]
        nxt = bolt_cell(origin, target, len(longer) + 1)
        assert not (0 <= nxt[0] < SIZE and 0 <= nxt[1] < SIZE)
        assert 0 <= x < SIZE and 0 <= y < SIZE


# --- purity -------------------------------------------------------------------


def test_ballistics_imports_only_numpy_and_stdlib() -> None:
    roots = imported_roots(ballistics)
    assert roots.isdisjoint({"random", "time", "asyncio", "os"})
    assert roots <= sys.stdlib_module_names | {"numpy"}
