"""Faults injected into real cluster processes: SIGKILL, SIGSTOP/SIGCONT and
SIGTERM of a worker; and global chat across workers and gateways."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import nats
import pytest
from nats.aio.msg import Msg

from client.connection import Connection
from client.model import GameModel
from protocol.messages import Chat, ChatOut
from server.cluster.bus import GATEWAY_SILENT_S, SILENT_S
from server.cluster.gateway import JOIN_TIMEOUT_S
from server.cluster.messages import Heartbeat, decode
from tests.cluster.procs import ClusterProcs, is_snap, plant, play_until, row_of, step

LEASE_S = 2.0
TAKEOVER_S = SILENT_S + LEASE_S + JOIN_TIMEOUT_S + 2.0
"""The stated bound: a gateway deems a silent worker dead after SILENT_S and
asks a worker it still hears to seat the player; the dead worker's lease is
gone LEASE_S after its last renewal, so one join may be forwarded to the
dead holder first and time out (JOIN_TIMEOUT_S); 2 s more for a loaded
machine. A stalled worker is never asked: it is no longer heard."""


async def test_sigkill_worker_is_taken_over(
    tmp_path: Path, nats_url: str, db: str, prefix: str
) -> None:
    plant(db, "Kay", "k", 1)
    with ClusterProcs(tmp_path, nats_url, db, prefix, LEASE_S) as cluster:
        cluster.worker("wa", "1")
        cluster.worker("wb")
        conn = await Connection.open(cluster.gateway("g1"), "Kay", token="k")
        model = GameModel(conn.welcome)
        try:
            await play_until(conn, model, is_snap(1))
            assert row_of(db, "Kay")[1] == 1
            cluster.signal("wa", signal.SIGKILL)
            killed = time.monotonic()
            await play_until(conn, model, is_snap(1), timeout=TAKEOVER_S)
            took = time.monotonic() - killed
            print(f"takeover after SIGKILL: {took:.2f} s (bound {TAKEOVER_S:.1f} s)")
            assert model.player_id == conn.welcome.id
            assert row_of(db, "Kay")[1] >= 2  # wb took charge under a later epoch
            assert "Kay joined on wb" in cluster.log("wb")
            await step(conn, model)  # and play goes on
        finally:
            await conn.close()


async def test_sigstop_then_sigcont_never_admits_twice(
    tmp_path: Path, nats_url: str, db: str, prefix: str
) -> None:
    plant(db, "Stu", "s", 1)
    with ClusterProcs(tmp_path, nats_url, db, prefix, LEASE_S) as cluster:
        cluster.worker("wa", "1")
        cluster.worker("wb")
        conn = await Connection.open(cluster.gateway("g1"), "Stu", token="s")
        model = GameModel(conn.welcome)
        nc = await nats.connect(nats_url)
        counts: dict[str, int] = {}

        async def heard(msg: Msg) -> None:
            counts[msg.subject.rsplit(".", 1)[1]] = decode(msg.data, Heartbeat).players

        try:
            await play_until(conn, model, is_snap(1))
            cluster.signal("wa", signal.SIGSTOP)
            await play_until(conn, model, is_snap(1), timeout=TAKEOVER_S)
            taken = row_of(db, "Stu")[1]
            assert taken >= 2  # wb took charge (a retried join may count twice)
            assert "Stu joined on wb" in cluster.log("wb")
            cluster.signal("wa", signal.SIGCONT)
            await nc.subscribe(f"{prefix}.hb.*", cb=heard)
            # wa wakes up thinking it holds Stu: it must drop it, write nothing.
            deadline = time.monotonic() + 10.0
            while "lost levels [1]" not in cluster.log("wa"):
                assert time.monotonic() < deadline, cluster.log("wa")
                await asyncio.sleep(0.1)
            await asyncio.sleep(2.5)  # a few heartbeats and checkpoints of wb
            assert counts == {"wa": 0, "wb": 1}
            await step(conn, model)
            await step(conn, model)
            await asyncio.sleep(1.5)  # wb's next checkpoint (every second here)
            record, epoch = row_of(db, "Stu")
            assert epoch == taken
            assert (record["x"], record["y"]) == model.position  # wb's write, not wa's
            assert "save refused" not in cluster.log("wb")
        finally:
            await nc.close()
            await conn.close()


async def test_sigterm_drains_a_worker_and_loses_nobody(
    tmp_path: Path, nats_url: str, db: str, prefix: str
) -> None:
    plant(db, "Tess", "t", 1)
    with ClusterProcs(tmp_path, nats_url, db, prefix, LEASE_S) as cluster:
        cluster.worker("wa", "1")
        cluster.worker("wb")
        conn = await Connection.open(cluster.gateway("g1"), "Tess", token="t")
        model = GameModel(conn.welcome)
        try:
            await play_until(conn, model, is_snap(1))
            await step(conn, model)
            await step(conn, model)
            here = model.position
            cluster.signal("wa", signal.SIGTERM)
            started = time.monotonic()
            assert await asyncio.to_thread(cluster.wait, "wa", 30.0) == 0
            print(f"drain took {time.monotonic() - started:.2f} s")
            await play_until(conn, model, is_snap(1))  # seated again, by wb
            assert model.position == here  # nothing lost, not even the last steps
            assert row_of(db, "Tess")[1] == 2
            assert "Tess joined on wb (epoch 2)" in cluster.log("wb")
            assert "drained: 1 players saved" in cluster.log("wa")
        finally:
            await conn.close()


async def test_global_chat_reaches_every_player_on_every_worker(
    tmp_path: Path, nats_url: str, db: str, prefix: str
) -> None:
    names = ["C0", "C1", "C2", "C3"]
    for i, n in enumerate(names):
        plant(db, n, n, 1 + i // 2)  # C0, C1 on depth 1 (wa); C2, C3 on depth 2 (wb)
    with ClusterProcs(tmp_path, nats_url, db, prefix, LEASE_S) as cluster:
        cluster.worker("wa", "1")
        cluster.worker("wb", "2")
        urls = [cluster.gateway("g1"), cluster.gateway("g2")]
        conns = [await Connection.open(urls[i % 2], n, token=n) for i, n in enumerate(names)]
        models = [GameModel(c.welcome) for c in conns]
        try:
            for c, m in zip(conns, models, strict=True):
                await play_until(c, m, is_snap())
            for c, n in zip(conns, names, strict=True):
                await c.send(Chat(text=f"hello from {n}", scope="global"))
            await conns[0].send(Chat(text="level line"))
            for c, m in zip(conns, models, strict=True):
                lines: list[tuple[str, str | None]] = []

                def done(msg: object, lines: list[tuple[str, str | None]] = lines) -> bool:
                    if isinstance(msg, ChatOut):
                        lines.append((msg.text, msg.scope))
                    return sum(s == "global" for _, s in lines) == len(names)

                await play_until(c, m, done)
                assert sorted(t for t, s in lines if s == "global") == sorted(
                    f"hello from {n}" for n in names
                )
            # The level line reached depth 1 only (C0 and C1), across gateways.
            for i, (c, m) in enumerate(zip(conns, models, strict=True)):
                got: list[str] = []

                def level(msg: object, got: list[str] = got) -> bool:
                    if isinstance(msg, ChatOut) and msg.scope == "level":
                        got.append(msg.text)
                    return bool(got)

                if i < 2:
                    await play_until(c, m, level)
                    assert got == ["level line"]
                else:
                    with pytest.raises(TimeoutError):
                        await play_until(c, m, level, timeout=1.0)
        finally:
            for c in conns:
                await c.close()


async def test_a_dead_gateways_players_are_saved_and_unseated(
    tmp_path: Path, nats_url: str, db: str, prefix: str
) -> None:
    plant(db, "Gus", "g", 1)
    with ClusterProcs(tmp_path, nats_url, db, prefix, LEASE_S) as cluster:
        cluster.worker("wa", "1")
        conn = await Connection.open(cluster.gateway("g1"), "Gus", token="g")
        model = GameModel(conn.welcome)
        nc = await nats.connect(nats_url)
        counts: list[int] = []

        async def heard(msg: Msg) -> None:
            counts.append(decode(msg.data, Heartbeat).players)

        try:
            await play_until(conn, model, is_snap(1))
            await step(conn, model)
            cluster.signal("g1", signal.SIGKILL)
            await nc.subscribe(f"{prefix}.hb.wa", cb=heard)
            deadline = time.monotonic() + GATEWAY_SILENT_S + 5.0
            while not counts or counts[-1] != 0:
                assert time.monotonic() < deadline, cluster.log("wa")
                await asyncio.sleep(0.2)
            await asyncio.sleep(0.5)  # its save
            record, epoch = row_of(db, "Gus")
            assert (record["x"], record["y"]) == model.position and epoch == 1
            assert "gateway g1 silent: Gus saved and unseated" in cluster.log("wa")
        finally:
            await nc.close()
            await conn.close()
