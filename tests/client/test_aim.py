"""client.aim: the seed-002 targeting path, and agreement with the server's copy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from client.aim import bolt_cell, bolt_path
from server.sim.ballistics import bolt_path as server_bolt_path


def open_map(w: int, h: int) -> np.ndarray:
    return np.zeros((h, w), dtype=bool)


def test_seed_worked_example() -> None:
    # seeds/002: a 16 x 9 rectangle, cells numbered x + 16 y from the shooter
    # at 0 to the target at 143; Cell(1) = 17, Cell(14) = 126, Cell(15) = 143.
    path = bolt_path((0, 0), (15, 8), open_map(16, 9))
    numbers = [x + 16 * y for x, y in path]
    assert len(path) == 15
    assert numbers[0] == 17 and numbers[13] == 126 and numbers[14] == 143
    # the whole path from the seed's "intuitive" rule: start at 7, add 8 per
    # step, take a row step whenever the sum reaches 15
    err, y, expected = 7, 0, []
    for x in range(1, 16):
        err += 8
        if err >= 15:
            err -= 15
            y += 1
        expected.append(x + 16 * y)
    assert numbers == expected


def test_paths_are_not_symmetric() -> None:
    # reference/ballistica.md, "Ties and rounding"
    grid = open_map(20, 20)
    assert bolt_path((10, 10), (14, 12), grid) == [(11, 11), (12, 11), (13, 12), (14, 12)]
    assert bolt_path((14, 12), (10, 10), grid) == [(13, 11), (12, 11), (11, 10), (10, 10)]


def test_diagonals_and_straight_lines() -> None:
    grid = open_map(10, 10)
    assert bolt_path((1, 1), (4, 4), grid) == [(2, 2), (3, 3), (4, 4)]
    assert bolt_path((4, 4), (1, 7), grid) == [(3, 5), (2, 6), (1, 7)]
    assert bolt_path((5, 5), (5, 2), grid) == [(5, 4), (5, 3), (5, 2)]
    assert bolt_path((5, 5), (8, 5), grid) == [(6, 5), (7, 5), (8, 5)]
    assert bolt_path((5, 5), (5, 5), grid) == []
    assert bolt_path((5, 5), (5, 5), grid, past_target=True) == []


def test_stops_before_a_blocked_cell_and_continues_past_the_target() -> None:
    grid = open_map(10, 3)
    grid[1, 6] = True
    assert bolt_path((1, 1), (3, 1), grid) == [(2, 1), (3, 1)]
    assert bolt_path((1, 1), (3, 1), grid, past_target=True) == [(2, 1), (3, 1), (4, 1), (5, 1)]
    assert bolt_path((1, 1), (9, 1), grid) == [(2, 1), (3, 1), (4, 1), (5, 1)]
    # the origin's own cell is never tested
    grid[1, 1] = True
    assert bolt_path((1, 1), (2, 1), grid) == [(2, 1)]
    # a bolt runs to the edge of the map; a target off the map is cut there
    free = open_map(6, 3)
    assert bolt_path((1, 1), (2, 1), free, past_target=True) == [(2, 1), (3, 1), (4, 1), (5, 1)]
    assert bolt_path((1, 1), (20, 1), free) == [(2, 1), (3, 1), (4, 1), (5, 1)]


def test_slips_between_diagonal_corners() -> None:
    grid = open_map(4, 4)
    grid[1, 2] = grid[2, 1] = True
    assert bolt_path((1, 1), (2, 2), grid) == [(2, 2)]


def test_bolt_cell() -> None:
    assert bolt_cell((0, 0), (15, 8), 1) == (1, 1)
    assert bolt_cell((0, 0), (15, 8), 30) == (30, 16)  # past the target, same line
    with pytest.raises(ValueError):
        bolt_cell((1, 1), (1, 1), 1)
    with pytest.raises(ValueError):
        bolt_cell((1, 1), (2, 1), -1)


@pytest.mark.parametrize(
    ("origin", "blocked"),
    [
        ((5, 0), open_map(4, 4)),
        ((-1, 0), open_map(4, 4)),
        ((0, 0), np.zeros(4, dtype=bool)),
        ((0, 0), np.zeros((0, 3), dtype=bool)),
        ((0, 0, 0), open_map(4, 4)),
    ],
)
def test_bad_arguments(origin: tuple[int, ...], blocked: np.ndarray) -> None:
    with pytest.raises(ValueError):
        bolt_path(origin, (1, 1), blocked)


def test_agrees_with_the_server_on_random_maps() -> None:
    """2,500 random shots (origins, targets on and off the map, walls, both
    modes) give exactly the server's cells."""
    rng = np.random.default_rng(2024)
    cases = 0
    for _ in range(2500):
        w, h = int(rng.integers(1, 40)), int(rng.integers(1, 30))
        density = float(rng.choice([0.0, 0.05, 0.2, 0.5]))
        blocked = rng.random((h, w)) < density
        origin = (int(rng.integers(0, w)), int(rng.integers(0, h)))
        if rng.random() < 0.2:  # sometimes a target off the map
            target = (int(rng.integers(-10, w + 10)), int(rng.integers(-10, h + 10)))
        else:
            target = (int(rng.integers(0, w)), int(rng.integers(0, h)))
        past = bool(rng.random() < 0.5)
        mine = bolt_path(origin, target, blocked, past_target=past)
        theirs = server_bolt_path(origin, target, blocked, past_target=past)
        assert mine == theirs, (w, h, origin, target, past)
        cases += 1
    assert cases == 2500


def test_the_documented_code_agrees() -> None:
    """docs/protocol.md's Python for the targeting path gives client.aim's cells."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text()
    section = doc[doc.index("## The targeting path") :]
    code = section[section.index("```python") + len("```python") :]
    code = code[: code.index("```")]
    namespace: dict[str, Any] = {}
    exec(code, namespace)  # noqa: S102 -- our own document's example
    documented = namespace["path"]
    rng = np.random.default_rng(7)
    for _ in range(500):
        w, h = int(rng.integers(1, 25)), int(rng.integers(1, 25))
        blocked = rng.random((h, w)) < 0.15
        origin = (int(rng.integers(0, w)), int(rng.integers(0, h)))
        target = (int(rng.integers(-5, w + 5)), int(rng.integers(-5, h + 5)))
        past = bool(rng.random() < 0.5)
        assert documented(origin, target, blocked.tolist(), past) == bolt_path(
            origin, target, blocked, past_target=past
        )
