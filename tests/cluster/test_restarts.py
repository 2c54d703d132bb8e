"""A NATS server of the test's own, stopped and started again under a
playing cluster: play pauses, then goes on, and nothing saved is lost."""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from client.connection import Connection
from client.model import GameModel
from protocol.messages import CommandName
from tests.cluster.procs import ClusterProcs, acked, is_snap, plant, play_until, row_of
from tests.pgdb import empty_pg

LEASE_S = 2.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class OwnNats:
    """``nats-server -js`` on a free port of 127.0.0.1, its store in ``tmp``."""

    def __init__(self, tmp: Path) -> None:
        exe = shutil.which("nats-server") or "/usr/sbin/nats-server"
        if not Path(exe).exists():
            pytest.skip("nats-server is not installed: cannot restart a NATS of our own")
        self.cmd = [exe, "-js", "-a", "127.0.0.1", "-p", str(_free_port()), "-sd", str(tmp)]
        self.url = f"nats://127.0.0.1:{self.cmd[5]}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", int(self.cmd[5]))) == 0:
                    return
            time.sleep(0.05)
        raise RuntimeError("nats-server did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


@pytest.fixture
def own_nats(tmp_path: Path) -> Iterator[OwnNats]:
    server = OwnNats(tmp_path / "js")
    server.start()
    try:
        yield server
    finally:
        server.stop()


async def test_nats_restart_pauses_play_and_loses_nothing_saved(
    tmp_path: Path, own_nats: OwnNats, request: pytest.FixtureRequest
) -> None:
    db = empty_pg(request.getfixturevalue("pg_database"))
    plant(db, "Nat", "n", 1)
    with ClusterProcs(tmp_path, own_nats.url, db, "uhr", LEASE_S) as cluster:
        cluster.worker("wa", "1")
        cluster.worker("wb")
        conn = await Connection.open(cluster.gateway("g1"), "Nat", token="n")
        model = GameModel(conn.welcome)
        try:
            await play_until(conn, model, is_snap(1))
            seq = await conn.command(CommandName.WAIT)
            await play_until(conn, model, acked(seq))
            await asyncio.sleep(1.5)  # a checkpoint (every second here)
            saved, epoch = row_of(db, "Nat")
            assert (saved["x"], saved["y"]) == model.position
            own_nats.stop()
            await asyncio.sleep(2.0)
            own_nats.start()
            # The worker let the level go (no renewals), the gateway seats
            # the player again: a snapshot, at the saved cell.
            await play_until(conn, model, is_snap(1), timeout=30.0)
            assert model.position == (saved["x"], saved["y"])
            assert row_of(db, "Nat")[1] > epoch
            seq = await conn.command(CommandName.WAIT)
            await play_until(conn, model, acked(seq))  # play goes on
        finally:
            await conn.close()
