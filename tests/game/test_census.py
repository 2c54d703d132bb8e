"""The census of what a game holds (server.game.census, issue 48): bytes
are counted once per buffer, and each level's parts add up to its total."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from server.game.census import held_bytes, level_census, world_census
from server.sim.world import World


@dataclass(slots=True)
class _Holder:
    grid: np.ndarray
    windows: np.ndarray
    rows: list[np.ndarray]
    blob: bytes
    name: str = "ann"
    counts: dict[int, tuple[int, int]] = field(default_factory=dict)


def test_a_buffer_is_counted_once_however_many_views_share_it() -> None:
    grid = np.zeros((40, 50), dtype=np.int32)  # 8,000 bytes
    holder = _Holder(
        grid=grid,
        windows=sliding_window_view(grid, (5, 5)),  # a view 625 times as large
        rows=[grid[i] for i in range(10)],
        blob=b"x" * 1000,
        counts={1: (2, 3)},
    )
    held = held_bytes(holder)
    assert grid.nbytes + 1000 < held < grid.nbytes + 1000 + 4000
    # a second look sharing what was seen adds only the objects, no buffer
    seen: set[int] = set()
    first = held_bytes(grid, seen)
    assert first == sys.getsizeof(grid)
    assert held_bytes(grid[1:], seen) < 200


def test_each_level_names_what_it_holds_and_the_parts_add_up() -> None:
    world = World(3)
    for name in ("ann", "bob"):
        world.join(name)
    for _ in range(5):
        world.step()
    world.level(2)  # nobody on it
    levels = {entry["depth"]: entry for entry in level_census(world)}
    played, bare = levels[1]["bytes"], levels[2]["bytes"]
    for held in (played, bare):
        assert held["total"] == sum(v for k, v in held.items() if k != "total")
        height, width = world.levels[1].terrain.shape
        assert held["occupancy"] >= height * width * 4  # int32 per cell
        assert held["terrain"] >= height * width  # uint8 per cell
    assert levels[1]["fov_cells"] > 0 and played["fov_cache"] > 0 and played["sight"] > 0
    assert bare["fov_cache"] == 0 and levels[2]["players"] == 0
    assert levels[2]["monsters"] > 0 and bare["monsters"] > 100 * levels[2]["monsters"]
    census = world_census(world)
    assert census["path_finder_bytes"] == world.paths.nbytes
    assert census["player_bytes"] > 0 and census["view_set_bytes"] > 0
