"""Real cluster processes for the tests: workers and gateways as subprocesses.

:class:`ClusterProcs` starts ``underhall worker`` and ``underhall gateway``
with a test's own prefix and database, waits for each to say it is ready,
and stops (or kills) them. Each process writes to its own log file in the
test's directory, shown when it fails to start.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Self

import psycopg
from websockets.asyncio.client import ClientConnection, connect

from client.connection import Connection
from client.model import GameModel
from protocol.codec import decode_server, encode_client
from protocol.messages import CommandName, Delta, Hello, ServerMessage, Snapshot
from protocol.version import PROTOCOL_VERSION
from server.sim.world import World
from server.store import hash_token, open_store, unpack_record
from tests.serverproc import underhall_command

READY_TIMEOUT_S = 30.0
SEED = 7


class ClusterProcs:
    """The processes of one test's cluster.

    Args:
        tmp: Directory for the logs.
        nats_url: The NATS server.
        db_url: The test's database (its seed is set to :data:`SEED`).
        prefix: The test's subject prefix.
        lease_s: The workers' lease time.
        save_interval_s: The workers' seconds between checkpoints.
    """

    def __init__(
        self,
        tmp: Path,
        nats_url: str,
        db_url: str,
        prefix: str,
        lease_s: float = 2.0,
        save_interval_s: float = 1.0,
    ) -> None:
        self.save_interval_s = save_interval_s
        self.tmp = tmp
        self.nats_url = nats_url
        self.db_url = db_url
        self.prefix = prefix
        self.lease_s = lease_s
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        store = open_store(db_url, lock=False)
        store.set_meta("seed", str(SEED))
        store.close()

    def _start(self, name: str, args: list[str], pattern: bytes) -> re.Match[bytes]:
        log_path = self.tmp / f"{name}.log"
        with log_path.open("wb") as log:
            proc = subprocess.Popen(
                [*underhall_command(), *args],
                cwd=self.tmp,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        self.procs[name] = proc
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            match = re.search(pattern, log_path.read_bytes())
            if match:
                return match
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not start:\n{log_path.read_text()}")
            time.sleep(0.05)

    def worker(self, name: str, levels: str = "", *, monsters: bool = False) -> None:
        """Start worker ``name`` claiming ``levels`` (e.g. ``"1,3"``); its
        levels have no monsters unless ``monsters``."""
        self._start(
            name,
            ["worker", "--nats", self.nats_url, "--db", self.db_url, "--id", name,
             "--prefix", self.prefix, "--levels", levels, "--lease", str(self.lease_s),
             "--save-interval", str(self.save_interval_s),
             *([] if monsters else ["--no-monsters"])],
            rb"worker \S+ ready",
        )  # fmt: skip

    def gateway(
        self,
        name: str,
        max_conns_per_addr: int = 0,
        admin_socket: Path | None = None,
        trusted_proxy: str | None = None,
        args: Sequence[str] = (),
    ) -> str:
        """Start gateway ``name`` on a free port; return its ``ws://`` URL.
        The per-address cap is off unless ``max_conns_per_addr`` is given
        (test clients come from loopback, which no cap applies to anyway:
        with ``trusted_proxy="127.0.0.1"`` they name their address in an
        ``X-Forwarded-For`` header); an admin socket is opened at
        ``admin_socket`` if given; ``args`` are more options."""
        admin = [] if admin_socket is None else ["--admin-socket", str(admin_socket)]
        proxy = [] if trusted_proxy is None else ["--trusted-proxy", trusted_proxy]
        match = self._start(
            name,
            ["gateway", "--nats", self.nats_url, "--port", "0", "--id", name,
             "--prefix", self.prefix, "--max-conns-per-addr", str(max_conns_per_addr),
             *admin, *proxy, *args],
            rb"listening on (ws://\S+)",
        )  # fmt: skip
        return match.group(1).decode()

    def signal(self, name: str, sig: signal.Signals) -> None:
        """Send ``sig`` to process ``name``."""
        self.procs[name].send_signal(sig)

    def wait(self, name: str, timeout: float) -> int:
        """Wait for process ``name`` to end; its exit status."""
        return self.procs[name].wait(timeout)

    def log(self, name: str) -> str:
        """What process ``name`` has written so far."""
        return (self.tmp / f"{name}.log").read_text(errors="replace")

    def close(self) -> None:
        """Stop every process still running (SIGTERM, then SIGKILL)."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def plant(db_url: str, name: str, token: str, depth: int, on: str = "down") -> dict[str, Any]:
    """Save a new character ``name`` standing on the down (``on="down"``) or
    up staircase of level ``depth`` of the :data:`SEED` world; its record."""
    from server.content import Terrain

    world = World(SEED, populate=False)
    level = world.level(depth)
    stairs = Terrain.STAIRS_DOWN if on == "down" else Terrain.STAIRS_UP
    ys, xs = (level.terrain == stairs).nonzero()
    actor = world.join(name)
    record = actor.to_record()
    record.update(depth=depth, x=int(xs[0]), y=int(ys[0]))
    store = open_store(db_url, lock=False)
    store.save_players([(name, hash_token(token), record, 0)])
    store.close()
    return record


RECV_TIMEOUT_S = 15.0


async def play_until(
    conn: Connection,
    model: GameModel,
    done: Callable[[ServerMessage], bool],
    timeout: float = RECV_TIMEOUT_S,
) -> list[ServerMessage]:
    """Apply messages to ``model`` until ``done(message)``; all read, in order.

    Raises:
        TimeoutError: Not within ``timeout`` seconds.
    """
    seen: list[ServerMessage] = []
    async with asyncio.timeout(timeout):
        while True:
            msg = await conn.recv()
            model.apply(msg)
            seen.append(msg)
            if done(msg):
                return seen


def is_snap(depth: int | None = None) -> Callable[[ServerMessage], bool]:
    """A test for :func:`play_until`: a snapshot (of level ``depth``)."""
    return lambda m: isinstance(m, Snapshot) and (depth is None or m.depth == depth)


def acked(conn: Connection, seq: int) -> Callable[[ServerMessage], bool]:
    """A test for :func:`play_until`: a frame acknowledging command ``seq``
    (the connection keeps the whole ``ack``; a delta's is a step)."""
    return lambda m: isinstance(m, Delta | Snapshot) and m.ack is not None and conn.ack >= seq


def row_of(db_url: str, name: str) -> tuple[dict[str, Any], int]:
    """The saved record and epoch of character ``name``."""
    with psycopg.connect(db_url) as conn:
        row = conn.execute("SELECT record, epoch FROM players WHERE name = %s", (name,)).fetchone()
    assert row is not None
    return unpack_record(bytes(row[0])), int(row[1])


async def step(conn: Connection, model: GameModel) -> None:
    """Walk one step to some free neighbouring cell (or wait), acknowledged."""
    pos = model.position
    assert pos is not None
    for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1)):
        x, y = pos[0] + dx, pos[1] + dy
        if model.passable()[y, x] and not any((a.x, a.y) == (x, y) for a in model.actors.values()):
            seq = await conn.command(CommandName.MOVE, (dx, dy))
            break
    else:
        seq = await conn.command(CommandName.WAIT)
    await play_until(conn, model, acked(conn, seq))


async def admin_request(path: Path, **req: Any) -> dict[str, Any]:
    """One request over an admin socket, as ``underhall admin`` sends it; the answer."""
    reader, writer = await asyncio.open_unix_connection(str(path))
    writer.write(json.dumps(req).encode() + b"\n")
    line = await asyncio.wait_for(reader.readline(), 15)
    writer.close()
    await writer.wait_closed()
    answer: dict[str, Any] = json.loads(line)
    return answer


async def raw_hello(
    url: str, name: str, token: str | None = None
) -> tuple[ClientConnection, ServerMessage]:
    """A raw websocket (its close code is wanted) that said ``hello`` as
    ``name``; the first message answered (a welcome, or an error)."""
    ws = await connect(url, compression=None)
    await ws.send(encode_client(Hello(PROTOCOL_VERSION, name, token)))
    data = await asyncio.wait_for(ws.recv(), 10)
    assert isinstance(data, bytes)
    return ws, decode_server(data)


async def recv_until(
    ws: ClientConnection, done: Callable[[ServerMessage], bool], timeout: float = 10.0
) -> ServerMessage:
    """Read the raw websocket ``ws`` until a message passes ``done``; that message."""
    async with asyncio.timeout(timeout):
        while True:
            data = await ws.recv()
            assert isinstance(data, bytes)
            msg = decode_server(data)
            if done(msg):
                return msg
