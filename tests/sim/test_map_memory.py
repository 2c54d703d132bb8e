"""Map memory holds one grid as an array and the other depths compressed
(issue 48), and stays exact: a depth put away and taken back is the grid it
was, and records are the same as before."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from server.game.game import Game
from server.game.store import Store
from server.sim.actors import MEMORY_COMPRESSION, MapMemory, player_from_record
from server.sim.world import World


def grid(seed: int, shape: tuple[int, int] = (66, 198)) -> np.ndarray:
    """A grid like a player's: mostly unseen (255), some rooms of codes."""
    rng = np.random.default_rng(seed)
    out = np.full(shape, 255, dtype=np.uint8)
    for _ in range(6):
        y, x = int(rng.integers(0, shape[0] - 10)), int(rng.integers(0, shape[1] - 20))
        out[y : y + 10, x : x + 20] = rng.integers(0, 4, size=(10, 20), dtype=np.uint8)
    return out


def test_only_the_depth_asked_for_is_an_array_and_the_others_are_exact() -> None:
    memory = MapMemory()
    grids = {depth: grid(depth) for depth in (1, 2, 3)}
    for depth, g in grids.items():
        memory[depth] = g.copy()
    assert memory.live_depth == 3 and memory.depths() == [1, 2, 3] and len(memory) == 3
    assert memory.live_bytes == grids[3].nbytes
    assert memory.packed_bytes * 10 < 2 * grids[1].nbytes  # the two put away, tenfold smaller
    # A depth's put-away bytes are what a record saves.
    assert memory.packed(1) == ((66, 198), zlib.compress(grids[1].tobytes(), MEMORY_COMPRESSION))
    live = memory.get(1)
    assert live is not None and np.array_equal(live, grids[1]) and memory.live_depth == 1
    live[0, 0] = 7  # the world writes into the live grid
    assert memory.get(2) is not None and memory.live_depth == 2  # puts 1 away, with its write
    assert memory.peek(1)[0, 0] == 7 and memory.live_depth == 2
    copy = memory.items()[0][1]
    copy[0, 1] = 9  # a copy: changes nothing
    assert memory[1][0, 1] == grids[1][0, 1] and memory.live_depth == 1
    assert memory.get(4) is None and 4 not in memory and -1 not in memory
    assert memory.setdefault(4, grid(4)) is memory[4] and memory.live_depth == 4


def test_records_round_trip_and_bad_ones_are_refused() -> None:
    world = World(5)
    game = Game(world, Store(":memory:"))
    actor = world.actors[game.join("ann", None, None, object())[0].id]
    stairs = world.level(1).stairs_down
    assert stairs is not None
    world.move_actor(actor, *stairs)
    game.step()
    before = actor.memory.peek(1).copy()
    game.command(actor.id, 0, "down", None)
    for _ in range(actor.speed + 1):
        game.step()
    assert actor.depth == 2 and actor.memory.live_depth == 2 and actor.memory.packed(1)
    assert np.array_equal(actor.memory.peek(1), before)
    record = actor.to_record()
    back = player_from_record(99, record)
    assert back.memory.depths() == [1, 2] and back.memory.live_depth is None
    for depth in (1, 2):
        assert np.array_equal(back.memory[depth], actor.memory.peek(depth))
    assert back.to_record()["memory"] == record["memory"]
    shape, packed, _ = record["memory"]["1"]
    for bad in (packed[:-3], zlib.compress(b"\xff" * 10)):
        with pytest.raises(ValueError, match="map memory of depth 1"):
            player_from_record(99, dict(record, memory={"1": [shape, bad, "zlib"]}))
