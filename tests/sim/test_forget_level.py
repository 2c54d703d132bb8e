"""World.forget_level: a level no longer run here is dropped whole and, on
its next use, generated afresh with its saved state laid over it."""

from __future__ import annotations

import numpy as np
import pytest

from server.content import Terrain
from server.sim.world import World


def test_a_forgotten_level_comes_back_from_its_saved_state() -> None:
    world = World(11)
    level = world.level(3)
    monsters = [a.id for a in world.actors.values() if a.depth == 3]
    assert monsters
    x, y = level.find(Terrain.FLOOR)[0]
    world.set_terrain(3, x, y, Terrain.WALL)
    changed = world.level_record(3)
    world.forget_level(3)
    assert 3 not in world.levels
    assert not any(m in world.actors for m in monsters)
    world.forget_level(3)  # not generated: nothing to do
    # Run again from nothing saved: the generated level, not the changed copy.
    fresh = world.level(3)
    assert fresh.terrain_at(x, y) == Terrain.FLOOR
    assert any(a.depth == 3 for a in world.actors.values())  # restocked
    # Run again from what was saved: the change is there.
    world.forget_level(3)
    world.saved_levels[3] = changed
    again = world.level(3)
    assert np.array_equal(
        again.terrain, np.frombuffer(changed["terrain"], np.uint8).reshape(changed["shape"])
    )


def test_a_level_with_a_player_on_it_is_not_forgotten() -> None:
    world = World(11)
    ann = world.join("ann")
    world.step()
    with pytest.raises(ValueError, match="players are on depth 1"):
        world.forget_level(1)
    assert 1 in world.levels and ann.id in world.actors
    world.leave(ann.id)
    world.forget_level(1)
    world.step()  # a tick after the level went is sound
    assert 1 not in world.levels
