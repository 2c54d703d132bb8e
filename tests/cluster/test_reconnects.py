"""Reconnects in the middle of things: a player who drops its connection just
after taking the stairs (a hand-off in flight) or just after a step, and
comes back through the other gateway, loses nothing: what the database holds
at the end is what one process makes of the moves that took effect."""

from __future__ import annotations

import asyncio
from pathlib import Path

from client.connection import Connection
from client.model import GameModel
from protocol.messages import CommandName
from server.sim.actors import player_from_record
from tests.cluster.procs import SEED, ClusterProcs, acked, is_snap, plant, play_until, row_of
from tests.cluster.replay import digest, replay
from tests.cluster.trips import _step_toward, _target

ROUNDS = 36
"""Stair trips, each ended by a dropped connection."""


async def _open(url: str) -> tuple[Connection, GameModel]:
    conn = await Connection.open(url, "Rho", token="tok", open_timeout=30.0)
    model = GameModel(conn.welcome)
    await play_until(conn, model, is_snap())
    return conn, model


async def test_dropping_the_connection_mid_hand_off_or_mid_step_loses_nothing(
    tmp_path: Path, nats_url: str, db: str, prefix: str
) -> None:
    planted = plant(db, "Rho", "tok", 1, on="down")
    moves: list[tuple[str, tuple[int, int] | None]] = []
    with ClusterProcs(tmp_path, nats_url, db, prefix) as cluster:
        cluster.worker("wa", "1")
        cluster.worker("wb", "2")
        urls = [cluster.gateway("g1"), cluster.gateway("g2")]
        conn, model = await _open(urls[0])
        ids = {conn.welcome.id}
        trips = 0
        for round_ in range(ROUNDS):
            terrain, command = _target(model, 1)
            # Walk to the staircase, each step acknowledged.
            while True:
                pos = model.position
                assert pos is not None
                if int(model.known[pos[1], pos[0]]) == int(terrain):
                    break
                d = _step_toward(model, terrain)
                assert d is not None
                seq = await conn.command(CommandName.MOVE, d)
                await play_until(conn, model, acked(conn, seq))
                if model.position != pos:
                    moves.append(("move", d))
            if round_ % 3 == 2:
                # A step off the stairs and back, the second one dropped at once.
                d = _step_toward(model, terrain) or (1, 0)
                before = model.position
                assert before is not None
                await conn.command(CommandName.MOVE, d)
                await conn.close()
                conn, model = await _open(urls[(round_ + 1) % 2])
                ids.add(conn.welcome.id)
                if model.position != before:
                    assert model.position == (before[0] + d[0], before[1] + d[1])
                    moves.append(("move", d))
                continue
            depth = model.depth
            await conn.command(command)
            # Dropped at once (the command may never run), or somewhere in the
            # hand-off: the tick is 100 ms, the hand-off a few tens of ms more.
            await asyncio.sleep(0.004 * round_)
            await conn.close()
            conn, model = await _open(urls[(round_ + 1) % 2])
            ids.add(conn.welcome.id)
            if model.depth != depth:
                moves.append((command.value, None))
                trips += 1
        final = (model.depth, model.position)
        await conn.close()
        await asyncio.sleep(1.0)  # the leave is saved
        logs = "".join(cluster.log(n) for n in ("wa", "wb", "g1", "g2"))
    assert "Traceback" not in logs
    assert trips >= 3, trips  # some hand-offs did happen
    assert len(ids) == 1
    record, _ = row_of(db, "Rho")
    assert (record["depth"], (record["x"], record["y"])) == final
    assert digest(player_from_record(next(iter(ids)), record)) == digest(
        replay(SEED, planted, moves)
    )
