"""Join and leave notices (docs/protocol.md, events): every other player is
told, at most ``PRESENCE_PER_TICK`` of them per tick, the first in tick order."""

from __future__ import annotations

from typing import Any

from protocol.messages import Delta, ServerMessage, Snapshot
from server.game.game import Game
from server.game.index import PRESENCE_PER_TICK
from server.game.store import Store
from server.sim.world import World


def _notices(msgs: list[ServerMessage]) -> list[list[Any]]:
    out = []
    for m in msgs:
        assert isinstance(m, (Delta, Snapshot))
        out += [e for e in (m.ev or []) if e[0] in ("join", "leave")]
    return out


def test_a_burst_of_arrivals_tells_each_player_the_first_few() -> None:
    game = Game(World(3), Store(":memory:"))
    watcher = game.join("watcher", None, None, object())[0].id
    game.step()
    names = [f"n{i}" for i in range(PRESENCE_PER_TICK + 5)]
    ids = [game.join(n, None, None, object())[0].id for n in names]
    out = game.step()
    assert _notices(out[watcher]) == [["join", n] for n in names[:PRESENCE_PER_TICK]]
    # A newcomer among the first is not told of itself, and still hears of
    # as many others: the first ones in order, skipping its own.
    first = ids[0]
    others = [n for n in names if n != names[0]][:PRESENCE_PER_TICK]
    assert _notices(out[first]) == [["join", n] for n in others]
    assert not _notices(game.step().get(watcher, []))
    # A quiet tick with a single departure tells everyone of it.
    game.leave(ids[-1], game.seats[ids[-1]].session)
    out = game.step()
    assert _notices(out[watcher]) == [["leave", names[-1]]]
    assert _notices(out[first]) == [["leave", names[-1]]]
