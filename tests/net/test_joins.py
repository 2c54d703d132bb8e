"""Joining while the server is busy (issue 10, item 4), over real sockets on 127.0.0.1.

The tick is made slow by wrapping the server's tick (``GameServer._tick``,
which runs ``Game.step``; a compiled ``Game`` takes no patching) in a sleep,
so every tick runs late and back to back, as on a saturated server. Every wait is
bounded; speed itself is measured by ``bench/joins.py``, not here.
"""

from __future__ import annotations

import asyncio
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from protocol.version import PROTOCOL_VERSION
from server.game.game import Game
from server.game.index import PRESENCE_PER_TICK
from server.game.store import Store
from server.net.guard import NetLimits
from server.net.server import GameServer
from server.sim.world import World
from tests.net.conftest import Started, connect, join, recv, recv_until, send

OPEN = NetLimits(max_conns_per_addr=0, new_chars_per_hour=0)
"""Every test client comes from 127.0.0.1: no per-address caps."""


def slow_steps(server: GameServer, seconds: float) -> list[float]:
    """Make each of the server's ticks take at least ``seconds`` (the loop is
    blocked meanwhile); return the list each tick's start time is appended to."""
    real: Callable[..., Any] = server._tick
    starts: list[float] = []

    def tick(*args: Any, **kwargs: Any) -> Any:
        starts.append(time.monotonic())
        time.sleep(seconds)
        return real(*args, **kwargs)

    server._tick = tick  # type: ignore[method-assign]
    return starts


async def _join_one(server: GameServer, name: str) -> int:
    """Join as ``name`` (welcome, then a snap), leave; return the actor id."""
    ws, welcome, _ = await join(server, name)
    await ws.close()
    return int(welcome["id"])


async def test_a_burst_of_joins_all_get_welcome_then_snap(start_server: Started) -> None:
    server = await start_server(populate=False, limits=OPEN)
    names = [f"b{i}" for i in range(120)]

    async def first_two(name: str) -> list[Any]:
        ws = await connect(server)
        await send(ws, {"t": "hello", "v": PROTOCOL_VERSION, "name": name})
        got = [await recv(ws, 20.0), await recv(ws, 20.0)]
        await ws.close()
        return got

    results = await asyncio.wait_for(asyncio.gather(*(first_two(n) for n in names)), 60)
    for name, (welcome, snap) in zip(names, results, strict=True):
        assert welcome["t"] == "welcome" and welcome["name"] == name
        assert snap["t"] == "snap" and snap["tick"] >= welcome["tick"]
    assert len({w["id"] for w, _ in results}) == len(names)


JOIN_SCRIPT = """
import asyncio, sys
import msgpack, websockets

async def main(url, names):
    for name in names.split(","):
        print("go", flush=True)
        async with websockets.connect(url, compression=None) as ws:
            await ws.send(msgpack.packb({"t": "hello", "v": int(sys.argv[3]), "name": name}))
            kinds = [msgpack.unpackb(await ws.recv())["t"] for _ in range(2)]
        print("got", *kinds, flush=True)

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def test_joins_during_slow_ticks_are_answered_within_a_few_ticks(tmp_path: Path) -> None:
    """With ticks running late back to back, the loop still turns a few times
    between two of them, so a join (accept, handshake, hello, welcome) is
    not stretched over one tick per step. The server runs on uvloop; the
    client is another process, as a remote one would be."""
    uvloop = pytest.importorskip("uvloop")
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        spans = runner.run(_ticks_per_join(tmp_path, 4))
    # Ticks begun from the connect to the first snap, which the first tick
    # after the welcome builds; with one turn per late tick it took 6.
    assert min(spans) <= 4, spans


async def _ticks_per_join(tmp_path: Path, joins: int) -> list[int]:
    """Ticks begun during each of ``joins`` joins made one after another by
    another process while the server's ticks run late."""
    store = Store(tmp_path / "world.db")
    server = GameServer(Game(World(1, populate=False), store, tick_rate=20), port=0, limits=OPEN)
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[int] = loop.create_future()
    task = asyncio.create_task(server.run(ready, install_signals=False))
    try:
        await asyncio.wait_for(ready, 5)
        starts = slow_steps(server, 0.15)
        while len(starts) < 3:  # ticks are running late from here on
            await asyncio.sleep(0.01)
        names = ",".join(f"j{i}" for i in range(joins))
        cmd = [sys.executable, "-c", JOIN_SCRIPT, f"ws://127.0.0.1:{server.port}", names]
        proc = subprocess.Popen(  # noqa: ASYNC220 -- read by a thread, not the loop
            [*cmd, str(PROTOCOL_VERSION)], stdout=subprocess.PIPE, text=True
        )
        assert proc.stdout is not None
        stamps: list[tuple[str, float]] = []

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                stamps.append((line.strip(), time.monotonic()))

        reader = threading.Thread(target=read)
        reader.start()
        await loop.run_in_executor(None, reader.join, 60)
        proc.wait(10)
        goes = [t for line, t in stamps if line == "go"]
        gots = [(line, t) for line, t in stamps if line.startswith("got")]
        assert [line for line, _ in gots] == ["got welcome snap"] * joins
        return [
            sum(1 for s in starts if go <= s <= got)
            for go, (_, got) in zip(goes, gots, strict=True)
        ]
    finally:
        server.stop()
        await asyncio.wait_for(task, 10)
        store.close()


async def test_connections_arriving_during_a_long_tick_are_queued_not_dropped(
    start_server: Started,
) -> None:
    """300 connections opened while one tick blocks the loop all complete their
    TCP handshake (the accept backlog holds them), then all join."""
    server = await start_server(populate=False, limits=OPEN)
    real = server._tick
    inside, done = threading.Event(), threading.Event()
    n = 300

    def blocking_step(*args: Any, **kwargs: Any) -> Any:
        if not done.is_set():
            inside.set()
            done.wait(20)
        return real(*args, **kwargs)

    server._tick = blocking_step  # type: ignore[method-assign]
    socks: list[socket.socket] = []
    connected: list[int] = []

    def open_many() -> None:
        inside.wait(10)
        for _ in range(n):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", server.port))
            socks.append(s)
        # The kernel answers a connect at once when the accept queue has room;
        # a SYN dropped for a full queue is sent again only after a second.
        pending = set(socks)
        end = time.monotonic() + 0.5
        while pending and time.monotonic() < end:
            _, writable, _ = select.select([], list(pending), [], 0.05)
            for s in writable:
                pending.discard(s)
                if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                    connected.append(s.fileno())
        done.set()

    opener = threading.Thread(target=open_many)
    opener.start()
    await asyncio.get_running_loop().run_in_executor(None, opener.join, 30)
    for s in socks:
        s.close()
    assert len(connected) == n
    # The server goes on ticking and serving after the queued ones are gone.
    names = [f"q{i}" for i in range(5)]
    ids = await asyncio.wait_for(asyncio.gather(*(_join_one(server, m) for m in names)), 30)
    assert len(set(ids)) == len(names)


async def test_leaving_while_the_join_is_pending_leaves_no_seat_and_loses_nothing(
    start_server: Started,
) -> None:
    server = await start_server(populate=False, limits=OPEN)
    ws, welcome, _ = await join(server, "ann")
    token = welcome["token"]
    await send(ws, {"t": "cmd", "seq": 1, "c": "move", "d": [1, 0]})
    await recv_until(ws, lambda m: m.get("ack") == 1)
    actor = server.game.world.actors[welcome["id"]]
    place = (actor.depth, actor.x, actor.y)
    await ws.close()
    while server.game.seats:
        await asyncio.sleep(0.02)
    slow_steps(server, 0.2)
    # Say hello and hang up at once, during slow ticks: the join may or may
    # not be done when the close is seen.
    for _ in range(3):
        gone = await connect(server)
        await send(gone, {"t": "hello", "v": PROTOCOL_VERSION, "name": "ann", "token": token})
        gone.transport.abort()
    async with asyncio.timeout(10):
        while server.game.seats or server.clients:
            await asyncio.sleep(0.05)
    back, again, _ = await asyncio.wait_for(join(server, "ann", token), 30)
    assert again["resumed"] and again["name"] == "ann"
    actor = server.game.world.actors[again["id"]]
    assert (actor.depth, actor.x, actor.y) == place
    assert list(server.game.seats) == [again["id"]]
    await back.close()


async def test_joins_during_slow_ticks_reach_everyone_in_order(start_server: Started) -> None:
    """Each of many clients joining while ticks are slow gets welcome first,
    then a snap, then deltas; the players already in are told of the joins,
    at most ``PRESENCE_PER_TICK`` a tick and none twice."""
    count = 40
    server = await start_server(populate=False, limits=OPEN)
    watcher, _, _ = await join(server, "watcher")
    slow_steps(server, 0.1)
    told: list[str] = []
    per_frame: list[int] = []
    done = asyncio.Event()

    async def watch() -> None:
        while True:  # until the newcomers are in and nothing came for a second
            try:
                msg = await recv(watcher, 1.0 if done.is_set() else 30)
            except TimeoutError:
                if done.is_set():
                    return
                raise
            joins = [e[1] for e in msg.get("ev", []) if e[0] == "join"]
            told.extend(joins)
            per_frame.append(len(joins))

    async def newcomer(name: str) -> list[str]:
        ws = await connect(server)
        await send(ws, {"t": "hello", "v": PROTOCOL_VERSION, "name": name})
        kinds = [(await recv(ws, 30))["t"] for _ in range(3)]
        return kinds

    watching = asyncio.create_task(watch())
    orders = await asyncio.wait_for(asyncio.gather(*(newcomer(f"n{i}") for i in range(count))), 60)
    done.set()
    await asyncio.wait_for(watching, 30)
    assert all(kinds[:2] == ["welcome", "snap"] for kinds in orders), orders
    assert all(kinds[2] in ("delta", "snap") for kinds in orders), orders
    assert len(told) == len(set(told)) and set(told) <= {f"n{i}" for i in range(count)}
    assert max(per_frame) <= PRESENCE_PER_TICK
    assert len(told) >= PRESENCE_PER_TICK


def test_connections_queued_during_slow_ticks_are_accepted_between_two_ticks(
    tmp_path: Path,
) -> None:
    """uvloop (libuv) accepts one connection per turn of the event loop;
    between two late ticks the server goes on turning while connections are
    accepted, so 200 waiting ones are taken in a tick or two, not ~16 a tick."""
    uvloop = pytest.importorskip("uvloop")
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        ticks = runner.run(_accept_burst(tmp_path, 200))
    assert ticks <= 3, ticks


async def _accept_burst(tmp_path: Path, n: int) -> int:
    """Ticks begun while ``n`` connections queued during slow ticks were accepted."""
    store = Store(tmp_path / "world.db")
    server = GameServer(Game(World(1, populate=False), store, tick_rate=20), port=0, limits=OPEN)
    ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(server.run(ready, install_signals=False))
    try:
        await asyncio.wait_for(ready, 5)
        starts = slow_steps(server, 0.1)
        while len(starts) < 3:  # ticks are running late from here on
            await asyncio.sleep(0.01)
        socks: list[socket.socket] = []

        def open_many() -> None:
            for _ in range(n):
                s = socket.socket()
                s.setblocking(False)
                s.connect_ex(("127.0.0.1", server.port))
                socks.append(s)

        base, ticks_before = server.book.accepted, len(starts)
        await asyncio.get_running_loop().run_in_executor(None, open_many)
        async with asyncio.timeout(60):
            while server.book.accepted - base < n:
                await asyncio.sleep(0.01)
        for s in socks:
            s.close()
        return len(starts) - ticks_before
    finally:
        server.stop()
        await asyncio.wait_for(task, 10)
        store.close()
