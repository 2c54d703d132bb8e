"""End to end: a real client through a gateway, down the stairs to a level
held by another worker, and on playing there."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import psycopg

from client.connection import Connection
from client.model import GameModel
from protocol.messages import CommandName, ServerMessage, Snapshot
from tests.cluster.procs import ClusterProcs, acked, plant, play_until


def _epoch(db: str, name: str) -> int:
    with psycopg.connect(db) as conn:
        row = conn.execute("SELECT epoch FROM players WHERE name = %s", (name,)).fetchone()
    assert row is not None
    return int(row[0])


def _is_snap(depth: int) -> Callable[[ServerMessage], bool]:
    return lambda m: isinstance(m, Snapshot) and m.depth == depth


async def test_stairs_hand_off_to_another_worker(
    tmp_path: Path, nats_url: str, db: str, prefix: str
) -> None:
    plant(db, "Walker", "secret", 1, on="down")
    with ClusterProcs(tmp_path, nats_url, db, prefix) as cluster:
        cluster.worker("wa", "1")
        cluster.worker("wb", "2")
        url = cluster.gateway("g1")
        conn = await Connection.open(url, "Walker", token="secret")
        try:
            model = GameModel(conn.welcome)
            me = conn.welcome.id
            await play_until(conn, model, _is_snap(1))
            assert _epoch(db, "Walker") == 1  # wa took charge
            # The gateway asks for a snapshot once it has seated the player (the
            # worker's first frames may come before its answer): a second one of
            # depth 1 may follow the first. A command's ack comes after it.
            seq = await conn.command(CommandName.WAIT)
            await play_until(conn, model, acked(conn, seq))
            start = model.position
            await conn.command(CommandName.DOWN)
            seen = await play_until(conn, model, _is_snap(2))
            # One ordinary level change: a single snapshot, of the new level,
            # with the same player id the welcome gave.
            assert sum(isinstance(m, Snapshot) for m in seen) == 1
            assert model.depth == 2 and model.player_id == me
            assert [a.id for a in model.actors.values() if a.is_self] == [me]
            assert _epoch(db, "Walker") == 2  # handed to wb under the next epoch
            # Play goes on on depth 2: a command is acknowledged by wb's frames.
            seq = await conn.command(CommandName.WAIT)
            await play_until(conn, model, acked(conn, seq))
            assert model.depth == 2
            # And back up: one more hand-off, to wa, arriving on the down stairs.
            await conn.command(CommandName.UP)
            await play_until(conn, model, _is_snap(1))
            assert _epoch(db, "Walker") == 3
            assert model.position == start
        finally:
            await conn.close()
        assert "Walker joined on wa (epoch 1)" in cluster.log("wa")
        logs = cluster.log("wa") + cluster.log("wb") + cluster.log("g1")
        assert "Traceback" not in logs and "lost levels" not in logs
