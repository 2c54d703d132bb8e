"""The fast per-player views against a straightforward reference (issue 10):
over a few hundred ticks of random play — walking, throwing, zapping, using
items, casting, taking stairs, invisible players among them — every player
gets exactly the messages the reference view builds from scratch."""

from __future__ import annotations

import numpy as np
import pytest

from protocol.codec import decode_server, encode_server
from protocol.messages import Snapshot
from server.game.game import Game
from server.game.store import Store
from server.sim.world import World
from tests.game.randomplay import give_commands, seat_players
from tests.game.reference_view import ReferenceView


@pytest.mark.parametrize(("seed", "scatter"), [(33, False), (33, True), (4, False), (5, True)])
def test_fast_views_send_what_the_reference_sends(seed: int, scatter: bool) -> None:
    world = World(seed)
    game = Game(world, Store(":memory:"))
    rng = np.random.default_rng(seed)
    ids = seat_players(game, 12, rng, scatter=scatter, invisible=2)
    refs = {pid: ReferenceView(pid) for pid in ids}
    seq = 0
    compared = deltas = 0
    for tick in range(300):
        seq, _ = give_commands(game, ids, rng, tick, seq)
        out = game.step()
        index = game._last_index
        assert index is not None
        for pid in ids:
            fast = out.get(pid, [])
            snapshot = any(isinstance(m, Snapshot) for m in fast)
            ref = refs[pid].messages(game, index, snapshot)
            assert [decode_server(encode_server(m)) for m in fast] == [
                decode_server(encode_server(m)) for m in ref
            ], f"player {pid}, tick {tick}"
            compared += 1
            deltas += sum(1 for m in fast if not isinstance(m, Snapshot))
    assert compared == 300 * len(ids) and deltas > 1000
