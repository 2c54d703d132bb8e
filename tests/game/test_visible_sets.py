"""The world's kept visible sets against a recomputation from scratch (issue
10): :attr:`World.sees` and :attr:`World.seen_by` are rebuilt only for players
whose field of view or whose cells in view changed; over a few hundred ticks
of random play (walking, throwing, zapping, stairs, monsters hunting and
dying, players turning invisible, leaving and joining) they must equal
what a straightforward pass over every player computes every tick."""

from __future__ import annotations

import numpy as np
import pytest

from server.content.statuses import StatusKind
from server.game.game import Game
from server.game.store import Store
from server.sim.actors import Actor
from server.sim.fov import FOV_RADIUS, field_of_view
from server.sim.monsters import visible_players
from server.sim.world import World
from tests.game.randomplay import give_commands, seat_players


def reference_sight(world: World) -> tuple[dict[int, set[int]], dict[int, list[int]]]:
    """``sees`` and ``seen_by`` as the world defines them, from scratch: every
    living player's field of view computed anew, the actors on its visible
    cells, invisible ones cut unless the player sees invisible."""
    unseen = {aid for aid, a in world.actors.items() if a.alive and a.unseen}
    sees: dict[int, set[int]] = {}
    seen_by: dict[int, list[int]] = {}
    for pid in sorted(world.actors):
        actor = world.actors[pid]
        if not actor.is_player:
            continue
        if not actor.alive:
            sees[pid] = set()
            continue
        level = world.levels[actor.depth]
        fov = field_of_view(level.transparent, actor.x, actor.y, FOV_RADIUS)
        rows, cols = fov.slices()
        ids = world.occupancy(actor.depth)[rows, cols][fov.visible]
        visible = {int(a) for a in ids if a >= 0}
        for aid in sorted(visible):
            if not world.actors[aid].is_player:
                seen_by.setdefault(aid, []).append(pid)
        if not actor.sees_invisible():
            visible -= unseen - {pid}
        sees[pid] = visible
    return sees, seen_by


def reference_visible_players(
    world: World, seen_by: dict[int, list[int]], monster: Actor
) -> list[Actor]:
    """The players ``monster`` can see, from a recomputed ``seen_by``: alive,
    on its level, within its sight, visible to it; nearest first, then by id."""
    found = []
    for pid in seen_by.get(monster.id, []):
        player = world.actors[pid]
        d = max(abs(player.x - monster.x), abs(player.y - monster.y))
        near = player.alive and player.depth == monster.depth and d <= monster.sight
        if near and (not player.unseen or monster.sees_invisible()):
            found.append((d, pid))
    return [world.actors[pid] for _, pid in sorted(found)]


@pytest.mark.parametrize(("seed", "scatter"), [(9, False), (8, True), (13, True)])
def test_kept_visible_sets_equal_a_recomputation(seed: int, scatter: bool) -> None:
    world = World(seed)
    game = Game(world, Store(":memory:"))
    rng = np.random.default_rng(seed)
    ids = seat_players(game, 14, rng, scatter=scatter, invisible=2)
    seq = 0
    kept = rebuilt = monsters_seen = 0
    for tick in range(300):
        seq, _ = give_commands(game, ids, rng, tick, seq)
        if tick % 37 == 5:  # a status makes someone invisible for a while
            pid = ids[int(rng.integers(len(ids)))]
            world.add_status(world.actors[pid], StatusKind.INVISIBLE, 15, [])
        if tick % 53 == 7:  # a monster turns invisible; a player learns to see it
            mons = sorted(a.id for a in world.actors.values() if not a.is_player)
            if mons:
                world.actors[mons[int(rng.integers(len(mons)))]].abilities.add("invisible")
            world.actors[ids[tick % len(ids)]].abilities.add("see_invisible")
        if tick == 120:  # one leaves (its entries in seen_by must go), another joins
            gone = ids.pop(3)
            game.leave(gone, game.seats[gone].session)
            ids.append(game.join("late", None, None, object())[0].id)
        before = {pid: world.sees.get(pid) for pid in ids}
        game.step()
        sees, seen_by = reference_sight(world)
        assert {pid: world.sees[pid] for pid in sees} == sees, f"tick {tick}"
        assert world.seen_by == seen_by, f"tick {tick}"
        for mid in seen_by:
            monster = world.actors[mid]
            expected = reference_visible_players(world, seen_by, monster)
            assert visible_players(world, monster) == expected, f"tick {tick}"
        for pid in ids:
            actor = world.actors[pid]
            if actor.alive and actor.fov is not None:
                fresh = field_of_view(world.levels[actor.depth].transparent, actor.x, actor.y)
                assert (actor.fov.x0, actor.fov.y0) == (fresh.x0, fresh.y0)
                assert np.array_equal(actor.fov.visible, fresh.visible), f"tick {tick}"
            if world.sees[pid] is before[pid]:
                kept += 1
            else:
                rebuilt += 1
        monsters_seen += len(seen_by)
    # Both paths ran: sets kept as they were and sets replaced; monsters were seen.
    assert kept > 500 and rebuilt > 100 and monsters_seen > 0


def reference_memory(
    world: World, before: dict[int, dict[int, np.ndarray]], pid: int
) -> tuple[list[int], np.ndarray]:
    """What player ``pid``'s map memory of its depth must be after a step,
    from its memory before (``before[pid]``, by depth; all unseen if the
    depth is new to it) and a field of view computed anew: the cells in
    view hold the terrain, and those that differed before are its fresh
    tiles, ``[x, y, code, ...]`` row by row."""
    actor = world.actors[pid]
    level = world.levels[actor.depth]
    old = before[pid].get(actor.depth)
    memory = np.full(level.terrain.shape, 255, np.uint8) if old is None else old.copy()
    fov = field_of_view(level.transparent, actor.x, actor.y, FOV_RADIUS)
    rows, cols = fov.slices()
    window = level.terrain[rows, cols]
    fresh = (memory[rows, cols] != window) & fov.visible
    ys, xs = np.nonzero(fresh)
    tiles = [
        v
        for j, i in zip(ys.tolist(), xs.tolist(), strict=True)
        for v in (fov.x0 + i, fov.y0 + j, int(window[j, i]))
    ]
    memory[rows, cols][fresh] = window[fresh]
    return tiles, memory


@pytest.mark.parametrize(("seed", "scatter"), [(9, False), (21, True)])
def test_fields_of_view_and_map_memory_made_for_a_level_at_once_equal_one_by_one(
    seed: int, scatter: bool
) -> None:
    """The fields of view and map memory of a level's players who moved are
    made together (:meth:`World._new_fovs`); over random play, with doors
    opened and closed, stairs taken and a cache too small for the level
    (so that it is copied and starts afresh), every living player's field of
    view, memory and fresh tiles equal a computation for it alone."""
    world = World(seed)
    game = Game(world, Store(":memory:"))
    rng = np.random.default_rng(seed)
    ids = seat_players(game, 16, rng, scatter=scatter)
    for cache in world._fov_cache.values():
        cache.limit = 40
    seq = 0
    told = 0
    for tick in range(260):
        seq, _ = give_commands(game, ids, rng, tick, seq)
        if tick % 11 == 3:  # a door near someone opens or closes
            actor = world.actors[ids[tick % len(ids)]]
            world.set_terrain(
                actor.depth,
                actor.x,
                actor.y + 1,
                world.levels[actor.depth].terrain[actor.y + 1, actor.x],
            )
        before = {
            pid: {
                d: world.actors[pid].memory.peek(d).copy()
                for d in world.actors[pid].memory.depths()
            }
            for pid in ids
        }
        game.step()
        for cache in world._fov_cache.values():
            cache.limit = min(cache.limit, 40)
        for pid in ids:
            actor = world.actors[pid]
            if not actor.alive or actor.fov is None:
                continue
            fresh = field_of_view(world.levels[actor.depth].transparent, actor.x, actor.y)
            assert (actor.fov.x0, actor.fov.y0) == (fresh.x0, fresh.y0)
            assert np.array_equal(actor.fov.visible, fresh.visible), f"tick {tick}"
            assert not actor.fov.visible.flags.writeable
            tiles, memory = reference_memory(world, before, pid)
            assert actor.seen_tiles[: len(tiles)] == tiles, f"player {pid}, tick {tick}"
            assert np.array_equal(actor.memory.peek(actor.depth), memory), f"tick {tick}"
            told += bool(tiles)
    assert told > 100
