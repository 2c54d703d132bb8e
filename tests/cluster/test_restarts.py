"""A NATS server and a PostgreSQL server of the test's own, each stopped and
started again under a playing cluster: play pauses or goes on, and nothing
saved is lost."""

from __future__ import annotations

import asyncio
import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from client.connection import Connection
from client.model import GameModel
from protocol.messages import CommandName
from tests.cluster.procs import ClusterProcs, acked, is_snap, plant, play_until, row_of, step
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
            await play_until(conn, model, acked(conn, seq))
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
            await play_until(conn, model, acked(conn, seq))  # play goes on
        finally:
            await conn.close()


class OwnPostgres:
    """A PostgreSQL server of the test's own (``initdb`` in a temporary
    directory, trust authentication, 127.0.0.1 on a free port), run by
    ``pg_ctl``; as the ``postgres`` user (``runuser``) when the tests run as
    root, which PostgreSQL refuses."""

    def __init__(self) -> None:
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
        pg_ctl = found[-1] if found else shutil.which("pg_ctl")
        if pg_ctl is None:
            pytest.skip("PostgreSQL's server programs (pg_ctl, initdb) are not installed")
        self.bin = Path(pg_ctl).parent
        self.prefix: list[str] = []
        self.dir = Path(tempfile.mkdtemp(prefix="uh-pg-"))
        if os.geteuid() == 0:
            runuser = shutil.which("runuser")
            if runuser is None:
                pytest.skip("running as root without runuser: cannot start PostgreSQL")
            try:
                shutil.chown(self.dir, "postgres")
            except (LookupError, OSError) as exc:
                pytest.skip(f"running as root and cannot hand a directory to postgres: {exc}")
            self.prefix = [runuser, "-u", "postgres", "--"]
        self.port = _free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self._run("initdb", "-D", str(self.dir / "data"), "-A", "trust", "-U", "postgres",
                  "--no-sync")  # fmt: skip

    def _run(self, program: str, *args: str) -> None:
        subprocess.run(
            [*self.prefix, str(self.bin / program), *args],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
            cwd=self.dir,
        )

    def start(self) -> None:
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run("pg_ctl", "-D", str(self.dir / "data"), "-o", options,
                  "-l", str(self.dir / "log"), "-w", "start")  # fmt: skip

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.dir / "data"), "-m", "fast", "-w", "stop")

    def remove(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def own_pg() -> Iterator[OwnPostgres]:
    server = OwnPostgres()
    server.start()
    try:
        yield server
    finally:
        server.remove()


async def test_postgres_restart_pauses_saving_and_loses_nothing(
    tmp_path: Path, own_pg: OwnPostgres, nats_url: str, prefix: str
) -> None:
    db = own_pg.url
    plant(db, "Pia", "p", 1)  # also applies the migrations
    with ClusterProcs(tmp_path, nats_url, db, prefix, LEASE_S) as cluster:
        cluster.worker("wa", "1")
        conn = await Connection.open(cluster.gateway("g1"), "Pia", token="p")
        model = GameModel(conn.welcome)
        try:
            await play_until(conn, model, is_snap(1))
            await step(conn, model)
            await asyncio.sleep(1.5)  # a checkpoint (every second here)
            saved, epoch = row_of(db, "Pia")
            assert (saved["x"], saved["y"]) == model.position
            own_pg.stop()
            # The tick needs no database: play goes on while it is down.
            await step(conn, model)
            await step(conn, model)
            moved_to = model.position
            assert moved_to != (saved["x"], saved["y"])
            await asyncio.sleep(2.0)  # checkpoints fail meanwhile
            own_pg.start()
            await asyncio.sleep(3.0)  # the worker connects again; a checkpoint
            record, after = row_of(db, "Pia")
            assert (record["x"], record["y"]) == moved_to  # the steps made while down
            assert after == epoch  # still held by wa: nobody took it over
            assert "checkpoint failed" in cluster.log("wa")
            await step(conn, model)  # and play goes on
        finally:
            await conn.close()
