"""Checkpoints reuse the packed parts of a character record that did not
change (issue 10): over a few hundred ticks of random play — walking,
fighting monsters, throwing, zapping, using items, casting, taking stairs —
every record a checkpoint hands the writer unpacks to exactly what the
character's :meth:`~server.sim.actors.Actor.to_record` says at that tick."""

from __future__ import annotations

import numpy as np
import pytest

from server.game.game import Game
from server.game.store import Store
from server.sim.actors import player_from_record
from server.sim.world import World
from server.store import join_maps, map_pairs, pack_record, pack_value, unpack_record
from tests.game.randomplay import give_commands, seat_players


@pytest.mark.parametrize(("seed", "every"), [(33, 1), (4, 7), (5, 30)])
def test_checkpoint_records_equal_fresh_records(seed: int, every: int) -> None:
    world = World(seed)
    game = Game(world, Store(":memory:"))
    rng = np.random.default_rng(seed)
    ids = seat_players(game, 12, rng, scatter=seed % 2 == 1, invisible=2)
    seq = 0
    compared = steady_reused = memory_reused = 0
    steady_changes = memory_changes = 0
    last: dict[int, dict[str, object]] = {}
    for tick in range(300):
        seq, _ = give_commands(game, ids, rng, tick, seq)
        game.step()
        if tick % every:
            continue
        for pid in ids:
            seat = game.seats[pid]
            had_steady, had_memory = seat.steady_blob, seat.memory_blob
            record = unpack_record(game._character_blob(seat))
            fresh = world.actors[pid].to_record()
            assert record == fresh, f"player {pid}, tick {tick}"
            steady_reused += had_steady is not None
            memory_reused += had_memory is not None
            previous = last.get(pid)
            if previous is not None:
                steady_changes += any(
                    previous[k] != fresh[k] for k in world.actors[pid].steady_record()
                )
                memory_changes += previous["memory"] != fresh["memory"]
            last[pid] = fresh
            compared += 1
    assert compared == len(ids) * len(range(0, 300, every))
    # The cache was used, and the play changed what it caches often enough
    # for a stale part to have shown.
    assert steady_reused > compared // 8 and memory_reused > compared // 8
    assert steady_changes > 20 and memory_changes > 20


def test_joined_maps_pack_like_one_map() -> None:
    a = {f"k{i}": i for i in range(10)}
    b = {"x": [1, 2], "y": b"\x00" * 40}
    for first, second in ((a, b), (b, a), ({}, b), ({f"n{i}": i for i in range(20)}, a)):
        joined = join_maps(
            len(first) + len(second), map_pairs(pack_record(first)), map_pairs(pack_record(second))
        )
        assert joined == pack_record({**first, **second})
    with pytest.raises(ValueError):
        map_pairs(pack_value([1, 2]))


def test_map_memory_is_saved_compressed_and_old_records_still_load() -> None:
    world = World(7)
    game = Game(world, Store(":memory:"))
    pid = game.join("ann", None, None, object())[0].id
    for _ in range(3):
        game.step()
    actor = world.actors[pid]
    grid = actor.memory[actor.depth]
    assert (grid != 255).any() and (grid == 255).any()
    record = actor.to_record()
    shape, packed, coding = record["memory"][str(actor.depth)]
    assert coding == "zlib" and shape == list(grid.shape)
    assert len(packed) * 10 < grid.size  # compressed at least tenfold
    # A record saved before compression holds the raw grid.
    old = dict(record, memory={str(actor.depth): [shape, grid.tobytes()]})
    for saved in (record, old):
        back = player_from_record(99, saved)
        assert back.memory.keys() == actor.memory.keys()
        assert np.array_equal(back.memory[actor.depth], grid)
    with pytest.raises(ValueError, match="coded as"):
        player_from_record(99, dict(record, memory={"1": [shape, packed, "lz4"]}))
