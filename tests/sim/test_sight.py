"""Visible sets kept between ticks (issue 10): a player's :attr:`World.sees`
is rebuilt only when its field of view or the occupants of its cells in view
change, and :attr:`World.seen_by` follows."""

from __future__ import annotations

import numpy as np
import pytest

from server.content.schema import Terrain
from server.sim import sight
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


@pytest.mark.parametrize("seed", [3, 11])
def test_cell_viewers_agree_with_every_field_of_view(seed: int) -> None:
    """:meth:`World.cell_viewers` answers, for all players and cells at once,
    what each player's ``fov.contains`` says of each cell, on a real level
    with walls, players scattered over its rooms, and one dead player."""
    world = World(seed)
    rng = np.random.default_rng(seed)
    level = world.level(1)
    players = [world.join(f"p{i}") for i in range(12)]
    for p in players:
        room = level.rooms[int(rng.integers(len(level.rooms)))]
        x, y = world.free_cell_near(1, room.x + room.w // 2, room.y + room.h // 2)
        world.move_actor(p, x, y)
    world.step()
    players[0].hp = 0
    world.after_harm(players[0], None, [])
    world.step()
    xs = rng.integers(0, level.width, 400).astype(np.intp)
    ys = rng.integers(0, level.height, 400).astype(np.intp)
    xs[:12] = [p.x for p in players]  # the players' own cells, seen at least by themselves
    ys[:12] = [p.y for p in players]
    got = set(zip(*(a.tolist() for a in world.cell_viewers(1, xs, ys)), strict=True))
    want = {
        (p.id, i)
        for p in players
        if p.alive and p.fov is not None
        for i in range(len(xs))
        if p.fov.contains(int(xs[i]), int(ys[i]))
    }
    assert got == want
    assert {(p.id, i) for i, p in enumerate(players) if p.alive} <= got
    assert not any(pid == players[0].id for pid, _ in got)
    assert world.cell_viewers(2, xs, ys)[0].size == 0  # nobody on depth 2


ROOMS = """
##############################
#<.........#.................#
#..........#.................#
#..........#.................#
##############################
"""


@pytest.mark.parametrize("through", ["world", "level"])
def test_a_field_of_view_kept_for_a_cell_is_made_again_after_terrain_near_it_changes(
    through: str,
) -> None:
    """Fields of view are kept per cell (:meth:`World._cached_fov`): one
    taken from a cell, then left, must not come back stale once a wall in
    its window opened while nobody stood there (changed through the world
    or straight on the level)."""
    world = make_world(ROOMS)
    ann = world.join("ann")
    world.move_actor(ann, 8, 2)
    world.step()
    before = ann.fov
    assert before is not None and not before.contains(14, 2)  # behind the wall
    world.move_actor(ann, 2, 2)  # away, the wall out of its window
    world.step()
    if through == "world":
        world.set_terrain(1, 11, 2, Terrain.FLOOR)
    else:
        world.level(1).set_terrain(11, 2, Terrain.FLOOR)
    world.step()
    world.move_actor(ann, 8, 2)  # back to the first cell
    world.step()
    fresh = field_of_view(world.level(1).transparent, 8, 2)
    after = ann.fov
    assert after is not None and after is not before and after.contains(14, 2)
    assert np.array_equal(after.visible, fresh.visible)


def test_players_on_one_cell_share_its_field_of_view_and_cannot_change_it() -> None:
    """Whoever stands on a cell gets the mask kept for it, read-only."""
    world = make_world(HALL)
    ann, bob = world.join("ann"), world.join("bob")
    world.move_actor(ann, 5, 2)
    world.step()
    kept = ann.fov
    world.move_actor(ann, 6, 2)
    world.move_actor(bob, 5, 2)
    world.step()
    assert kept is not None and bob.fov is not None
    assert bob.fov.visible is kept.visible and (bob.fov.x0, bob.fov.y0) == (kept.x0, kept.y0)
    assert not kept.visible.flags.writeable


def test_a_field_of_view_still_held_is_not_written_over_when_its_cell_is_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cached field of view dropped by a terrain change near its cell is
    not overwritten while someone still holds it (a view compares a player's
    new field of view with the one it last sent), however many new ones the
    level's cache makes afterwards; once nobody holds it, its row is used
    again."""
    monkeypatch.setattr(sight, "FOV_BLOCK", 16)  # small blocks: rows run out soon
    world = make_world(ROOMS)
    ann = world.join("ann")
    world.move_actor(ann, 8, 2)
    world.step()
    held = ann.fov
    assert held is not None
    cache = world._fov_cache[1]
    row = int(cache.rows[2 * cache.width + 8])
    bits = held.visible.copy()
    world.set_terrain(1, 11, 2, Terrain.FLOOR)  # the wall in its window opens
    world.step()
    assert ann.fov is not held and ann.fov is not None and ann.fov.contains(14, 2)
    for x in range(1, 29):  # fields of view from the cells of two rows, often dropped
        for y in (3, 1):
            world.move_actor(ann, x, y)
            world.step()
            world.set_terrain(1, 11, 3, Terrain.WALL if (x + y) % 2 else Terrain.FLOOR)
    assert np.array_equal(held.visible, bits) and not held.visible.flags.writeable
    assert row in cache._dropped and cache.views[row] is held.visible
    assert len(cache.views) <= 3 * 16  # not 56 rows: those nobody held were written again
    del held
    for x in range(1, 29):
        world.move_actor(ann, x, 2)
        world.step()
        world.set_terrain(1, 11, 3, Terrain.WALL if x % 2 else Terrain.FLOOR)
    assert row not in cache._dropped
