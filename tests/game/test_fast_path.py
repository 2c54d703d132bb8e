"""The fast per-player views against a straightforward reference (issue 10):
over a few hundred ticks of random play — walking, throwing, zapping, using
items, casting, taking stairs, invisible players among them — every player
gets exactly the messages the reference view builds from scratch."""

from __future__ import annotations

import numpy as np
import pytest

from protocol.codec import decode_server, encode_server
from protocol.messages import ServerMessage, Snapshot
from server.game.game import Game
from server.game.index import PRESENCE_PER_TICK, TickIndex
from server.game.store import Store
from server.sim.events import Joined
from server.sim.world import World
from tests.game.randomplay import give_commands, seat_players
from tests.game.reference_view import ReferenceView


def _same_as_reference(
    game: Game,
    index: TickIndex,
    out: dict[int, list[ServerMessage]],
    ref: ReferenceView,
    pid: int,
    tick: int,
) -> list[ServerMessage]:
    """Assert that player ``pid``'s messages of this tick (from ``out``) are,
    on the wire, those the reference view builds; return them."""
    fast = out.get(pid, [])
    snapshot = any(isinstance(m, Snapshot) for m in fast)
    expected = ref.messages(game, index, snapshot)
    assert [decode_server(encode_server(m)) for m in fast] == [
        decode_server(encode_server(m)) for m in expected
    ], f"player {pid}, tick {tick}"
    return fast


@pytest.mark.parametrize(("seed", "scatter"), [(33, False), (33, True), (4, False), (5, True)])
def test_fast_views_send_what_the_reference_sends(seed: int, scatter: bool) -> None:
    world = World(seed)
    game = Game(world, Store(":memory:"))
    game.keep_index = True  # the tests look into each tick's index
    rng = np.random.default_rng(seed)
    ids = seat_players(game, 12, rng, scatter=scatter, invisible=2)
    refs = {pid: ReferenceView(pid) for pid in ids}
    seq = 0
    compared = deltas = steps = moves = backs = 0
    for tick in range(300):
        seq, _ = give_commands(game, ids, rng, tick, seq)
        out = game.step()
        index = game.last_index
        assert index is not None
        for pid in ids:
            fast = _same_as_reference(game, index, out, refs[pid], pid, tick)
            compared += 1
            deltas += sum(1 for m in fast if not isinstance(m, Snapshot))
            steps += sum(len(getattr(m, "st", None) or []) for m in fast)
            moves += sum(len(getattr(m, "mv", None) or []) // 3 for m in fast)
            backs += sum(len(getattr(m, "back", None) or []) // 3 for m in fast)
    assert compared == 300 * len(ids) and deltas > 1000
    assert steps > 500, steps  # protocol 7's st compared too (mv: a test in test_views)
    # protocol 8's back compared too: 2, 11, 268 and 54 actors in these four
    # games (in the first, most that come back into view were killed and
    # have respawned since: a whole add)
    assert backs > 0, backs


def test_joins_and_leaves_during_play_reach_every_view_as_the_reference_says() -> None:
    """Players join and leave in bursts while others fight and walk: every
    player's events (the tick's first joins and leaves merged with what it
    saw) are exactly the reference's, its own join left out."""
    world = World(33)
    game = Game(world, Store(":memory:"))
    game.keep_index = True  # the tests look into each tick's index
    rng = np.random.default_rng(33)
    ids = seat_players(game, 10, rng, scatter=False)
    refs = {pid: ReferenceView(pid) for pid in ids}
    sessions: dict[int, object] = {}
    seq = 0
    shared = merged = 0
    for tick in range(160):
        seq, _ = give_commands(game, ids, rng, tick, seq)
        if tick % 7 == 3:  # a burst of arrivals, some of whom leave at once
            for k in range(int(rng.integers(1, 6))):
                session = object()
                welcome, _ = game.join(f"n{tick}x{k}", None, "warrior", session)
                ids.append(welcome.id)
                refs[welcome.id] = ReferenceView(welcome.id)
                sessions[welcome.id] = session
        if tick % 5 == 4 and len(sessions) > 2:
            for pid in list(sessions)[: int(rng.integers(1, 3))]:
                game.leave(pid, sessions.pop(pid))
                ids.remove(pid)
                del refs[pid]
        out = game.step()
        index = game.last_index
        assert index is not None
        for pid in ids:
            fast = _same_as_reference(game, index, out, refs[pid], pid, tick)
            told = [
                ["join" if isinstance(e, Joined) else "leave", e.name]
                for _, e in index.shared
                if e.actor != pid
            ][:PRESENCE_PER_TICK]
            for m in fast:
                ev = getattr(m, "ev", None) or []
                assert [e for e in ev if e[0] in ("join", "leave")] == told, (pid, tick)
                kinds = {e[0] for e in ev}
                shared += bool(kinds & {"join", "leave"})
                merged += bool(kinds & {"join", "leave"}) and bool(kinds - {"join", "leave"})
    assert shared > 100 and merged > 0, (shared, merged)
