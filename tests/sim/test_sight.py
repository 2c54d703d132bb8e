"""Visible sets kept between ticks (issue 10): a player's :attr:`World.sees`
is rebuilt only when its field of view or the occupants of its cells in view
change, and :attr:`World.seen_by` follows."""

from __future__ import annotations

import numpy as np
import pytest

from server.sim.actors import Mind
from server.sim.fov import field_of_view, padded_mask
from server.sim.level import Level
from server.sim.world import World
from tests.sim.conftest import make_world, spawn

HALL = """
##############################
#<...........................#
#............................#
#............................#
##############################
"""


def test_a_still_player_keeps_its_set_until_an_occupant_in_view_changes() -> None:
    world = make_world(HALL)
    ann = world.join("ann")  # at the stairs, (1, 1)
    rat = spawn(world, "rat", 20, 2, Mind.ASLEEP)
    world.step()
    kept = world.sees[ann.id]
    assert kept == {ann.id} and rat.id not in world.seen_by
    world.move_actor(rat, 19, 2)  # out of view: nothing to rebuild
    world.step()
    assert world.sees[ann.id] is kept
    world.move_actor(rat, 7, 2)  # into view
    world.step()
    assert world.sees[ann.id] == {ann.id, rat.id} and world.seen_by[rat.id] == [ann.id]
    world.remove_monster(rat)
    world.step()
    assert world.sees[ann.id] == {ann.id} and rat.id not in world.seen_by


def test_seen_by_lists_watchers_in_id_order_and_drops_those_who_leave() -> None:
    world = make_world(HALL)
    rat = spawn(world, "rat", 6, 2, Mind.ASLEEP)
    players = [world.join(name) for name in ("ann", "bob", "cy")]
    world.step()
    assert world.seen_by[rat.id] == sorted(p.id for p in players)
    world.leave(players[1].id)
    world.step()
    assert world.seen_by[rat.id] == [players[0].id, players[2].id]
    players[0].hp = 0  # killed: sees nothing, watches nothing until it respawns
    world.after_harm(players[0], None, [])
    world.step()
    assert world.sees[players[0].id] == set() and world.seen_by[rat.id] == [players[2].id]


def test_becoming_visible_again_is_seen_without_anyone_moving() -> None:
    world = make_world(HALL)
    ann = world.join("ann")
    bob = world.join("bob")
    bob.abilities.add("invisible")
    world.step()
    assert bob.id not in world.sees[ann.id] and bob.id in world.sees[bob.id]
    bob.abilities.discard("invisible")  # nobody moved, no occupant changed
    world.step()
    assert bob.id in world.sees[ann.id]


@pytest.mark.parametrize(("x", "y"), [(0, 0), (3, 2), (10, 5), (19, 9)])
def test_padded_mask_is_the_field_of_view_on_the_full_window(x: int, y: int) -> None:
    level = Level(depth=1, terrain=np.full((10, 20), 2, dtype=np.uint8))  # all floor
    fov = field_of_view(level.transparent, x, y, 4)
    mask = padded_mask(fov, x, y, 4)
    assert mask.shape == (9, 9) and mask[4, 4]
    for j in range(9):
        for i in range(9):
            lx, ly = x - 4 + i, y - 4 + j
            assert mask[j, i] == fov.contains(lx, ly)
    with pytest.raises(ValueError):
        padded_mask(fov, x + 5, y, 4)


def test_a_world_without_players_has_no_visible_sets() -> None:
    world = World(3, populate=True)
    world.level(1)
    world.step()
    assert world.sees == {} and world.seen_by == {}


def test_a_monster_turning_invisible_in_place_leaves_only_the_sets_of_those_blind_to_it() -> None:
    world = make_world(HALL)
    ann = world.join("ann")
    bob = world.join("bob")
    rat = spawn(world, "rat", 6, 2, Mind.ASLEEP)
    world.step()
    assert rat.id in world.sees[ann.id] and rat.id in world.sees[bob.id]
    bob.abilities.add("see_invisible")
    rat.abilities.add("invisible")
    world.step()
    assert rat.id not in world.sees[ann.id] and rat.id in world.sees[bob.id]
    assert world.seen_by[rat.id] == [ann.id, bob.id]  # sight is symmetric; the cut is not
    bob.abilities.discard("see_invisible")  # nothing else changes
    world.step()
    assert rat.id not in world.sees[bob.id]
    ann.abilities.add("see_invisible")
    world.step()
    assert rat.id in world.sees[ann.id]
    rat.abilities.discard("invisible")
    world.step()
    assert rat.id in world.sees[ann.id] and rat.id in world.sees[bob.id]
