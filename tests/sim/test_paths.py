"""Monsters' path finders (server.sim.paths): kept between searches, they must
find exactly the path a new ``tcod.path.path2d`` finds."""

from __future__ import annotations

import numpy as np
import pytest
import tcod.path
from hypothesis import given, settings
from hypothesis import strategies as st

from server.sim import paths
from server.sim.paths import PathFinders
from server.sim.world import World


def _path2d_step(
    cost: np.ndarray, start: tuple[int, int], goal: tuple[int, int]
) -> tuple[int, int] | None:
    path = tcod.path.path2d(cost, start_points=[start], end_points=[goal], cardinal=2, diagonal=3)
    return None if len(path) < 2 else (int(path[1][0]), int(path[1][1]))


SHARED = PathFinders()
"""One set of finders for every example below, so that most searches reuse a
finder left by another search of the same shape."""


@st.composite
def searches(draw: st.DrawFn) -> tuple[np.ndarray, tuple[int, int], tuple[int, int]]:
    # Windows as the monsters crop them: at least PATH_MARGIN * 2 + 1 = 13 cells
    # a side away from the level's edges, fewer (down to 7) at an edge.
    h = draw(st.integers(7, 16))
    w = draw(st.integers(7, 16))
    cells = draw(st.lists(st.sampled_from([0, 1, 1, 1, 2, 9]), min_size=h * w, max_size=h * w))
    cost = np.array(cells, dtype=np.int32).reshape(h, w)
    start = (draw(st.integers(0, h - 1)), draw(st.integers(0, w - 1)))
    goal = (draw(st.integers(0, h - 1)), draw(st.integers(0, w - 1)))
    return cost, start, goal


@settings(max_examples=400, deadline=None)
@given(searches())
def test_a_kept_finder_finds_path2ds_path(
    search: tuple[np.ndarray, tuple[int, int], tuple[int, int]],
) -> None:
    cost, start, goal = search
    before = cost.copy()
    assert SHARED.first_step(cost, start, goal) == _path2d_step(cost, start, goal)
    whole = tcod.path.path2d(cost, start_points=[start], end_points=[goal], cardinal=2, diagonal=3)
    assert SHARED.path(cost, start, goal) == [(int(r), int(c)) for r, c in whole[1:]]
    assert np.array_equal(cost, before)  # the caller's costs are not changed


def test_an_unreachable_goal_after_a_reachable_one_of_the_same_shape() -> None:
    finders = PathFinders()
    open_room = np.ones((9, 9), dtype=np.int32)
    assert finders.first_step(open_room, (8, 8), (0, 0)) == (7, 7)
    walled = open_room.copy()
    walled[:, 4] = 0  # a wall from top to bottom between start and goal
    # What the last search left behind must not lead the start to the old goal.
    assert finders.first_step(walled, (8, 8), (0, 0)) is None
    assert finders.first_step(walled, (8, 8), (8, 8)) is None  # already there
    assert finders.first_step(walled, (8, 8), (0, 8)) == (7, 8)


def test_points_outside_the_window_are_refused() -> None:
    with pytest.raises(IndexError, match="outside the window"):
        PathFinders().first_step(np.ones((7, 7), dtype=np.int32), (0, 0), (7, 0))


def test_only_the_latest_shapes_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(paths, "KEPT_SHAPES", 3)
    finders = PathFinders()
    for side in range(7, 13):
        grid = np.ones((side, side), dtype=np.int32)
        assert finders.first_step(grid, (0, 0), (side - 1, side - 1)) == (1, 1)
    assert list(finders._finders) == [(10, 10), (11, 11), (12, 12)]


def test_the_kept_shapes_hold_at_most_kept_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 48: the least recently used shapes go until the rest hold at
    most KEPT_CELLS cells; a window larger than that alone is kept alone,
    and every search still finds path2d's path."""
    monkeypatch.setattr(paths, "KEPT_CELLS", 300)
    finders = PathFinders()
    for side in (7, 8, 9, 10, 11):  # 49 + 64 + 81 + 100 + 121 cells
        grid = np.ones((side, side), dtype=np.int32)
        assert finders.first_step(grid, (0, 0), (side - 1, side - 1)) == (1, 1)
    assert list(finders._finders) == [(10, 10), (11, 11)]  # (9, 9) too: 302 > 300
    assert finders.cells == 100 + 121
    assert finders.nbytes == finders.cells * 24
    big = np.ones((20, 20), dtype=np.int32)
    assert finders.first_step(big, (0, 0), (19, 19)) == (1, 1)
    assert list(finders._finders) == [(20, 20)] and finders.cells == 400
    assert finders.first_step(np.ones((9, 9), dtype=np.int32), (8, 8), (0, 0)) == (7, 7)
    assert list(finders._finders) == [(9, 9)] and finders.cells == 81


def test_monsters_walk_as_they_did_with_path2d() -> None:
    """Two worlds of one seed, one searching with new path2d calls: every
    actor ends in the same cell with the same health after a hundred ticks."""

    class Path2d(PathFinders):
        def path(
            self, cost: np.ndarray, start: tuple[int, int], goal: tuple[int, int]
        ) -> list[tuple[int, int]]:
            self.calls = getattr(self, "calls", 0) + 1
            found = tcod.path.path2d(
                cost, start_points=[start], end_points=[goal], cardinal=2, diagonal=3
            )
            return [(int(row), int(col)) for row, col in found[1:]]

    def run(reference: bool) -> tuple[list[tuple[int, int, int, int, int]], int]:
        world = World(11)
        if reference:
            world.paths = Path2d()
        for name in ("ann", "bob", "cat"):
            world.join(name)
        for _ in range(100):
            world.step()
        calls = getattr(world.paths, "calls", -1)
        return sorted((a.id, a.depth, a.x, a.y, a.hp) for a in world.actors.values()), calls

    kept, _ = run(False)
    reference, calls = run(True)
    assert calls > 0  # monsters did look for paths
    assert kept == reference
