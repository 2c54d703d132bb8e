"""Hostile clients against a real server on 127.0.0.1: ping floods, clients
that never read, silent clients, many connections and characters from one
address, token guessing, names that differ only by case. Each is cut off or
refused, logged, and an honest player plays on."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
import websockets

from protocol.version import PROTOCOL_VERSION
from server.cli import SERVE_DEFAULTS
from server.net import server as net_server
from server.net.guard import NetLimits
from tests.net.conftest import Started, join, recv, recv_until, send
from tests.net.rawws import OP_BINARY, OP_PING, HandshakeRefused, RawClient, frame
from tests.serverproc import server_process

PINGS = frame(OP_PING, b"p" * 125) * 2000  # 262 KB of the largest pings


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _hello(name: str, token: str | None = None) -> bytes:
    import msgpack  # type: ignore[import-untyped]

    hello: dict[str, Any] = {"t": "hello", "v": PROTOCOL_VERSION, "name": name}
    if token is not None:
        hello["token"] = token
    return frame(OP_BINARY, msgpack.packb(hello))


class Flooder(threading.Thread):
    """Send pings as fast as the socket takes them, never reading, until the
    server cuts the connection or ``seconds`` pass; ``cut`` says which."""

    def __init__(
        self, port: int, seconds: float, hello: bytes | None = None, reads: bool = False
    ) -> None:
        super().__init__(daemon=True)
        self.reads = reads
        self.port = port
        self.seconds = seconds
        self.hello = hello
        self.cut = False
        self.sent = 0

    def run(self) -> None:
        # Connects here, not in __init__: the server may run in the caller's loop.
        client = RawClient(self.port, rcvbuf=4096, timeout=self.seconds)
        deadline = time.monotonic() + self.seconds
        if self.reads:
            threading.Thread(target=self._drain, args=(client,), daemon=True).start()
        try:
            if self.hello is not None:
                client.send(self.hello)
            while time.monotonic() < deadline:
                client.send(PINGS)
                self.sent += len(PINGS)
        except OSError:  # reset, broken pipe, or a send that blocked past the deadline
            self.cut = time.monotonic() < deadline
        finally:
            client.close()

    @staticmethod
    def _drain(client: RawClient) -> None:
        try:
            while client.sock.recv(65536):
                pass
        except OSError:
            pass


async def _ping_rtt(ws: Any, ident: int) -> None:
    await send(ws, {"t": "ping", "id": ident})
    pong = await recv_until(ws, lambda m: m["t"] == "pong", timeout=5)
    assert pong["id"] == ident


@pytest.mark.parametrize("after_hello, reads", [(False, False), (True, False), (True, True)])
async def test_a_ping_flood_is_cut_and_bounded(
    tmp_path: Path, after_hello: bool, reads: bool
) -> None:
    """Websocket pings spend a budget: a client flooding them, before or after
    hello, reading its pongs or not, is closed; the server's memory stays
    bounded and an honest player's pings are answered throughout."""
    with server_process(tmp_path, seed=3) as (url, proc):
        honest = await websockets.connect(url, compression=None)
        await send(honest, {"t": "hello", "v": PROTOCOL_VERSION, "name": "honest"})
        await recv_until(honest, lambda m: m["t"] == "snap")
        before = _rss_mb(proc.pid)
        port = int(url.rsplit(":", 1)[1])
        flooder = Flooder(port, 12.0, _hello("flooder") if after_hello else None, reads)
        flooder.start()
        peak = before
        n = 0
        while flooder.is_alive():
            await _ping_rtt(honest, n)
            peak = max(peak, _rss_mb(proc.pid))
            n += 1
            await asyncio.sleep(0.05)
        assert flooder.cut, f"the flooder was never cut off ({flooder.sent} bytes sent)"
        await _ping_rtt(honest, 10_000)
        assert peak - before < 40, f"server RSS grew from {before:.0f} to {peak:.0f} MB"
        await honest.close()
    log = (tmp_path / "server.log").read_text()
    assert "too many control frames" in log and "Traceback" not in log


async def test_the_hello_timeout_closes_a_connection_with_a_full_buffer(
    start_server: Started, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even with no control-frame budget and no output cap, a client that never
    says hello and never reads is closed by the hello timeout: the close does
    not wait for its write buffer to drain."""
    monkeypatch.setattr(net_server, "HELLO_TIMEOUT_S", 0.5)
    server = await start_server(
        populate=False,
        limits=NetLimits(control_per_s=1e9, control_burst=10**9, output_cap_bytes=1 << 40),
    )
    flooder = Flooder(server.port, 8.0)
    flooder.start()
    await asyncio.to_thread(flooder.join)
    assert flooder.cut, "the connection outlived the hello timeout"


async def test_output_over_the_cap_closes_the_connection(start_server: Started) -> None:
    server = await start_server(
        populate=False,
        limits=NetLimits(control_per_s=1e9, control_burst=10**9, output_cap_bytes=256 * 1024),
    )
    good, _, _ = await join(server, "good")
    flooder = Flooder(server.port, 8.0)
    flooder.start()
    await asyncio.to_thread(flooder.join)
    assert flooder.cut
    await _ping_rtt(good, 1)


async def test_a_silent_character_leaves_after_the_keepalive(tmp_path: Path) -> None:
    """A client that stops answering (as if frozen with SIGSTOP) loses its
    character within keepalive interval + timeout, both ``serve`` options."""
    with server_process(
        tmp_path, seed=3, args=["--keepalive-interval", "0.5", "--keepalive-timeout", "0.5"]
    ) as (url, _proc):
        watcher = await websockets.connect(url, compression=None)
        await send(watcher, {"t": "hello", "v": PROTOCOL_VERSION, "name": "watcher"})
        await recv_until(watcher, lambda m: m["t"] == "snap")
        frozen = RawClient(int(url.rsplit(":", 1)[1]))
        frozen.send(_hello("frozen"))  # joins, then never reads or answers again
        await recv_until(watcher, lambda m: ["join", "frozen"] in m.get("ev", []))
        # The watcher answers pings (its library does) and so stays.
        await recv_until(watcher, lambda m: ["leave", "frozen"] in m.get("ev", []), timeout=4)
        await _ping_rtt(watcher, 3)
        frozen.close()
        await watcher.close()


async def test_connections_per_address_are_capped(tmp_path: Path) -> None:
    with server_process(tmp_path, args=["--max-conns-per-addr", "3"]) as (url, _proc):
        port = int(url.rsplit(":", 1)[1])
        held = [RawClient(port) for _ in range(3)]
        with pytest.raises(HandshakeRefused) as info:
            RawClient(port)
        assert info.value.status == 429 and "too many connections" in info.value.body
        held.pop().close()
        await asyncio.sleep(0.3)
        ws = await websockets.connect(url, compression=None)  # room again
        await send(ws, {"t": "hello", "v": PROTOCOL_VERSION, "name": "fits"})
        assert (await recv(ws))["t"] == "welcome"
        await ws.close()
        for client in held:
            client.close()
    log = (tmp_path / "server.log").read_text()
    assert re.search(r"refused 127\.0\.0\.1: connections cap", log), log


async def test_new_characters_per_address_are_capped(tmp_path: Path) -> None:
    with server_process(tmp_path, args=["--new-chars-per-hour", "2"]) as (url, _proc):
        tokens = {}
        for name in ("one", "two"):
            ws = await websockets.connect(url, compression=None)
            await send(ws, {"t": "hello", "v": PROTOCOL_VERSION, "name": name})
            tokens[name] = (await recv(ws))["token"]
            await ws.close()
        ws = await websockets.connect(url, compression=None)
        await send(ws, {"t": "hello", "v": PROTOCOL_VERSION, "name": "three"})
        err = await recv(ws)
        assert (err["code"], err["fatal"]) == ("limited", True)
        ws = await websockets.connect(url, compression=None)  # resuming is still allowed
        await send(ws, {"t": "hello", "v": PROTOCOL_VERSION, "name": "one", "token": tokens["one"]})
        assert (await recv(ws))["resumed"] is True
        await ws.close()
    assert "new characters cap" in (tmp_path / "server.log").read_text()


async def _hello_answer(server_url: str, name: str, token: str | None = None) -> dict[str, Any]:
    ws = await websockets.connect(server_url, compression=None)
    hello: dict[str, Any] = {"t": "hello", "v": PROTOCOL_VERSION, "name": name}
    if token is not None:
        hello["token"] = token
    await send(ws, hello)
    answer = await recv(ws)
    await ws.close()
    return answer


async def test_failed_tokens_are_throttled_per_name_and_per_address(tmp_path: Path) -> None:
    with server_process(
        tmp_path, args=["--token-failures-per-name", "3", "--token-failures-per-addr", "5"]
    ) as (url, _proc):
        token = (await _hello_answer(url, "victim"))["token"]
        codes = [(await _hello_answer(url, "victim", f"guess{n}"))["code"] for n in range(4)]
        assert codes == ["name_taken"] * 3 + ["limited"]
        # Throttled: the right token waits too, so guessing learns nothing.
        assert (await _hello_answer(url, "victim", token))["code"] == "limited"
        # Per address: two more failures on another name reach the address's 5.
        await _hello_answer(url, "other")
        codes = [(await _hello_answer(url, "other", f"guess{n}"))["code"] for n in range(3)]
        assert codes == ["name_taken", "name_taken", "limited"]
        assert (await _hello_answer(url, "newcomer"))["code"] == "limited"
    log = (tmp_path / "server.log").read_text()
    assert "token failures cap" in log


async def test_names_are_one_character_whatever_their_case(start_server: Started) -> None:
    """``Victim`` and ``VICTIM`` are the same character; a taken name is refused
    with the same words whether its owner is online or not; the character keeps
    its spelling."""
    server = await start_server(populate=False)
    owner, welcome, _ = await join(server, "Victim")
    online = await _hello_answer(f"ws://127.0.0.1:{server.port}", "VICTIM")
    await owner.close()
    await asyncio.sleep(0.3)
    offline = await _hello_answer(f"ws://127.0.0.1:{server.port}", "VICTIM")
    assert online["code"] == offline["code"] == "name_taken"
    assert online["msg"] == offline["msg"]
    _, back, _ = await join(server, "victim", welcome["token"])
    assert back["resumed"] and back["name"] == "Victim"


async def test_the_open_file_limit_leaves_room(tmp_path: Path) -> None:
    """With a low hard open-file limit, the server raises its soft limit, then
    refuses connections with HTTP 503 before running out of files; once some
    close, newcomers get in."""
    prefix = ["prlimit", "--nofile=100:160", "--"]
    with server_process(tmp_path, args=["--max-conns-per-addr", "0"], prefix=prefix) as (
        url,
        _proc,
    ):
        port = int(url.rsplit(":", 1)[1])
        held: list[RawClient] = []
        refused: HandshakeRefused | None = None
        for _ in range(200):
            try:
                held.append(RawClient(port))
            except HandshakeRefused as exc:
                refused = exc
                break
        assert refused is not None and refused.status == 503, len(held)
        assert "connection limit" in refused.body
        for client in held[:10]:
            client.close()
        await asyncio.sleep(0.3)
        ws = await websockets.connect(url, compression=None)
        await send(ws, {"t": "hello", "v": PROTOCOL_VERSION, "name": "late"})
        assert (await recv(ws))["t"] == "welcome"
        await ws.close()
        for client in held[10:]:
            client.close()
    log = (tmp_path / "server.log").read_text()
    assert "open-file limit 160" in log and "open files cap" in log
    assert "Too many open files" not in log


def test_serve_defaults_are_the_limits_defaults() -> None:
    limits = NetLimits()
    names = {
        "keepalive_interval": "keepalive_interval_s",
        "keepalive_timeout": "keepalive_timeout_s",
    }
    known = {f.name for f in fields(NetLimits)}
    for key, value in SERVE_DEFAULTS.items():
        attr = names.get(key, key)
        if attr in known:
            assert getattr(limits, attr) == value, key
