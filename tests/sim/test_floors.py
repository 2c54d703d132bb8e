"""The floor cap (issue 48): a level holds at most FLOOR_STACKS item stacks;
an item landing on a full floor makes the bottom stacks of the farthest
piles go, never an artifact and never the pile it landed on."""

from __future__ import annotations

import numpy as np
import pytest

from server.content import Terrain, default_content
from server.sim import floors
from server.sim.items import new_item
from server.sim.level import Level
from server.sim.world import World


def _level() -> Level:
    terrain = np.full((5, 9), Terrain.FLOOR, dtype=np.uint8)
    return Level(1, terrain)


def test_a_floor_under_its_cap_is_left_alone() -> None:
    level = _level()
    content = default_content()
    level.items = {(0, 0): [new_item(content.items["dart"])]}
    assert floors.sweep(level, content, 4, 2, cap=1) == []
    assert floors.floor_stacks(level) == 1


def test_the_farthest_piles_go_bottom_first() -> None:
    level = _level()
    content = default_content()
    dart, apple = content.items["dart"], content.items["apple"]
    level.items = {
        (8, 0): [new_item(dart), new_item(apple)],  # 4 from (4, 2)
        (0, 4): [new_item(apple)],  # 4 too, later in (y, x) order
        (5, 2): [new_item(dart)],  # 1
        (4, 2): [new_item(dart), new_item(apple)],  # where the item landed
    }
    taken = floors.sweep(level, content, 4, 2, cap=3)
    assert taken == [(8, 0, "dart"), (8, 0, "apple"), (0, 4, "apple")]
    assert (8, 0) not in level.items and (0, 4) not in level.items
    assert [i.key for i in level.items[(4, 2)]] == ["dart", "apple"]
    assert floors.floor_stacks(level) == 3


def test_artifacts_and_the_landing_pile_are_never_taken() -> None:
    content = default_content()
    artifact = next((i for i in content.items.values() if i.artifact), None)
    if artifact is None:
        pytest.skip("no artifact in the item data")
    level = _level()
    level.items = {(0, 0): [new_item(artifact)], (4, 2): [new_item(content.items["dart"])] * 2}
    assert floors.sweep(level, content, 4, 2, cap=1) == []
    assert floors.floor_stacks(level) == 3


def test_dropping_on_a_full_floor_sweeps_it(monkeypatch: pytest.MonkeyPatch) -> None:
    world = World(11)
    level = world.level(1)
    start = floors.floor_stacks(level)
    sweep = floors.sweep
    monkeypatch.setattr(
        floors, "sweep", lambda lv, content, x, y: sweep(lv, content, x, y, cap=start)
    )
    x, y = level.find(Terrain.FLOOR)[0]
    world.drop_item(1, x, y, new_item(world.content.items["apple"]))
    assert floors.floor_stacks(level) == start
    assert level.items[(x, y)][-1].key == "apple"
