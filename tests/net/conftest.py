"""A real Underhall server on 127.0.0.1 for network tests, run in the test's loop."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
import websockets
from prometheus_client.parser import text_string_to_metric_families
from websockets.asyncio.client import ClientConnection

from protocol.version import PROTOCOL_VERSION
from server.game.game import Game
from server.game.store import Store
from server.net.guard import NetLimits
from server.net.server import GameServer
from server.sim.world import World
from tests.rawwire import read_frame

Started = Callable[..., Coroutine[Any, Any, GameServer]]


@pytest.fixture
async def start_server(tmp_path: Path) -> AsyncIterator[Started]:
    running: list[tuple[GameServer, asyncio.Task[None], Store]] = []

    async def start(
        seed: int = 1,
        tick_rate: int = 20,
        db: Path | None = None,
        populate: bool = True,
        limits: NetLimits | None = None,
    ) -> GameServer:
        store = Store(db or tmp_path / "world.db")
        game = Game(World(seed, populate=populate), store, tick_rate=tick_rate)
        server = GameServer(game, "127.0.0.1", 0, tick_rate, limits=limits)
        ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(server.run(ready, install_signals=False))
        await asyncio.wait_for(ready, 5)
        running.append((server, task, store))
        return server

    yield start
    for server, task, store in running:
        server.stop()
        await asyncio.wait_for(task, 10)
        store.close()


async def stop(server: GameServer) -> None:
    """Stop a server started by the fixture and wait for it to save."""
    server.stop()
    while server._ws_server is not None and server._ws_server.is_serving():
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.1)
    server.game.store.close()  # release the database's lock for the next server


def url(server: GameServer) -> str:
    return f"ws://127.0.0.1:{server.port}"


async def connect(server: GameServer) -> ClientConnection:
    return await websockets.connect(url(server), compression=None)


async def send(ws: ClientConnection, obj: Any) -> None:
    await ws.send(msgpack.packb(obj, use_bin_type=True))


async def recv(ws: ClientConnection, timeout: float = 5.0) -> dict[str, Any]:
    """The next frame as a client reads it (:class:`tests.rawwire.RawReader`):
    ``"t"`` on deltas too, ``ack`` and the ``seq`` of each ``rej`` whole."""
    data = await asyncio.wait_for(ws.recv(), timeout)
    assert isinstance(data, bytes)
    return read_frame(ws, data)


async def recv_until(
    ws: ClientConnection, pred: Callable[[dict[str, Any]], bool], timeout: float = 5.0
) -> dict[str, Any]:
    """Receive until a message matches ``pred``; fail after ``timeout`` seconds."""
    async with asyncio.timeout(timeout):
        while True:
            msg = await recv(ws, timeout)
            if pred(msg):
                return msg


async def join(
    server: GameServer,
    name: str,
    token: str | None = None,
) -> tuple[ClientConnection, dict[str, Any], dict[str, Any]]:
    """Connect and join; return the socket, the welcome and the first snapshot."""
    ws = await connect(server)
    hello: dict[str, Any] = {"t": "hello", "v": PROTOCOL_VERSION, "name": name}
    if token:
        hello["token"] = token
    await send(ws, hello)
    welcome = await recv(ws)
    assert welcome["t"] == "welcome", welcome
    snap = await recv_until(ws, lambda m: m["t"] == "snap")
    return ws, welcome, snap


async def http_get(port: int, path: str) -> tuple[int, str, str]:
    """``(status, content type, body)`` of a plain HTTP GET on 127.0.0.1 (in a thread)."""

    def get() -> tuple[int, str, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
                return resp.status, resp.headers["Content-Type"], resp.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers["Content-Type"], exc.read().decode()

    return await asyncio.to_thread(get)


async def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of ``/metrics``, by name and sorted labels."""
    status, kind, body = await http_get(port, "/metrics")
    assert status == 200 and kind.startswith("text/plain; version=0.0.4"), (status, kind)
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(body)
        for s in family.samples
    }


def total(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str) -> float:
    """Sum of a metric over all its labels (0 when absent)."""
    return sum(v for (n, _), v in samples.items() if n == name)
