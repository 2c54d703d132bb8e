"""A player may keep one actor id from world to world (the cluster's workers)."""

from __future__ import annotations

import pytest

from server.sim.world import World


def test_monster_ids_start_at_first_id_and_players_keep_given_ids() -> None:
    world = World(3, first_id=1000)
    ann = world.join("Ann", actor_id=7)
    assert ann.id == 7 and world.actors[7] is ann
    monsters = [a for a in world.actors.values() if not a.is_player]
    assert monsters and min(a.id for a in monsters) >= 1000
    bob = world.join("Bob")
    assert bob.id >= 1000 and bob.id not in {a.id for a in monsters}


def test_a_record_joins_another_world_under_the_same_id() -> None:
    first, second = World(3, first_id=1000), World(3, first_id=1 << 30)
    ann = first.join("Ann", actor_id=42)
    record = first.leave(ann.id)
    again = second.join("Ann", record=record, actor_id=42)
    assert again.id == 42 and (again.depth, again.x, again.y) == (ann.depth, ann.x, ann.y)


def test_a_taken_id_is_refused() -> None:
    world = World(3, first_id=1000)
    world.join("Ann", actor_id=5)
    with pytest.raises(ValueError, match="taken"):
        world.join("Bob", actor_id=5)
    assert [a.name for a in world.actors.values() if a.is_player] == ["Ann"]
