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
from server.net import front as net_front
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
    monkeypatch.setattr(net_front, "HELLO_TIMEOUT_S", 0.5)
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


PROXY = ["--trusted-proxy", "127.0.0.1"]
"""``serve`` options for a reverse proxy on this machine: every test client
connects from 127.0.0.1 and says whose connection it carries in a header."""


def _via(chain: str) -> dict[str, str]:
    """The header a proxy adds for a client (``chain``: the addresses, the
    client's own last)."""
    return {"X-Forwarded-For": chain}


async def _connect(
    url: str, via: str | None = None, source: str | None = None
) -> websockets.ClientConnection:
    """A client connection through the proxy for ``via``, or straight from
    the loopback address ``source`` (default 127.0.0.1)."""
    return await websockets.connect(
        url,
        compression=None,
        additional_headers=_via(via) if via is not None else None,
        local_addr=(source, 0) if source is not None else None,
    )


async def _hello_answer(
    server_url: str,
    name: str,
    token: str | None = None,
    *,
    via: str | None = None,
    source: str | None = None,
) -> dict[str, Any]:
    ws = await _connect(server_url, via, source)
    hello: dict[str, Any] = {"t": "hello", "v": PROTOCOL_VERSION, "name": name}
    if token is not None:
        hello["token"] = token
    await send(ws, hello)
    answer = await recv(ws)
    await ws.close()
    return answer


async def test_connections_per_address_are_capped_behind_a_proxy(tmp_path: Path) -> None:
    """Behind a trusted proxy each client's own address is capped, not the
    proxy's; what a client writes into the header itself is not believed."""
    with server_process(tmp_path, args=["--max-conns-per-addr", "3", *PROXY]) as (url, _proc):
        port = int(url.rsplit(":", 1)[1])
        held = [RawClient(port, headers=_via("203.0.113.7")) for _ in range(3)]
        with pytest.raises(HandshakeRefused) as info:
            RawClient(port, headers=_via("203.0.113.7"))
        assert info.value.status == 429 and "too many connections" in info.value.body
        # The client wrote an address of its own before the proxy's entry:
        # the proxy's entry (the rightmost untrusted one) is the client's.
        with pytest.raises(HandshakeRefused):
            RawClient(port, headers=_via("198.51.100.1, 203.0.113.7"))
        others = [RawClient(port, headers=_via("203.0.113.8")) for _ in range(3)]
        held.pop().close()
        await asyncio.sleep(0.3)
        ws = await _connect(url, via="203.0.113.7")  # room again
        await send(ws, {"t": "hello", "v": PROTOCOL_VERSION, "name": "fits"})
        assert (await recv(ws))["t"] == "welcome"
        await ws.close()
        for client in held + others:
            client.close()
    log = (tmp_path / "server.log").read_text()
    assert re.search(r"refused 203\.0\.113\.7: connections cap", log), log
    assert "203.0.113.8: connections cap" not in log
    assert re.search(r"fits joined as actor \d+", log), log


async def test_loopback_is_the_operators_own_and_not_capped(tmp_path: Path) -> None:
    """Connections from loopback that no trusted proxy forwards (the
    operator's bots and tools) are under no per-address cap, and a header
    from such a client changes nothing."""
    args = ["--max-conns-per-addr", "2", "--new-chars-per-hour", "2"]
    with server_process(tmp_path, args=args) as (url, _proc):
        port = int(url.rsplit(":", 1)[1])
        held = [RawClient(port) for _ in range(4)]
        held += [RawClient(port, headers=_via("203.0.113.7")) for _ in range(3)]
        names = [f"bot{n}" for n in range(5)]
        answers = [await _hello_answer(url, name) for name in names]
        assert [a["t"] for a in answers] == ["welcome"] * 5, answers
        for client in held:
            client.close()
    assert "cap" not in (tmp_path / "server.log").read_text()


async def test_new_characters_per_address_are_capped(tmp_path: Path) -> None:
    args = ["--new-chars-per-hour", "2", *PROXY]
    with server_process(tmp_path, args=args) as (url, _proc):
        tokens = {}
        for name in ("one", "two"):
            tokens[name] = (await _hello_answer(url, name, via="203.0.113.7"))["token"]
        err = await _hello_answer(url, "three", via="203.0.113.7")
        assert (err["code"], err["fatal"]) == ("limited", True)
        # Resuming is still allowed, and another address may create.
        back = await _hello_answer(url, "one", tokens["one"], via="203.0.113.7")
        assert back["resumed"] is True
        assert (await _hello_answer(url, "three", via="203.0.113.8"))["t"] == "welcome"
    assert "new characters cap" in (tmp_path / "server.log").read_text()


async def test_wrong_tokens_are_throttled_and_the_owner_still_gets_in(tmp_path: Path) -> None:
    """50 wrong guesses from one address: the first 10 (the default per name)
    are checked, the rest refused unchecked (``limited``); the owner, from
    its own address, joins at once with the right token, and an address that
    did not guess is still checked."""
    with server_process(tmp_path) as (url, _proc):
        token = (await _hello_answer(url, "victim", source="127.0.0.2"))["token"]
        codes = [
            (await _hello_answer(url, "victim", f"guess{n}", source="127.0.0.1"))["code"]
            for n in range(50)
        ]
        per_name = int(str(SERVE_DEFAULTS["token_failures_per_name"]))
        assert codes == ["name_taken"] * per_name + ["limited"] * (50 - per_name)
        owner = await _hello_answer(url, "victim", token, source="127.0.0.2")
        assert owner["t"] == "welcome" and owner["resumed"] is True
        other = await _hello_answer(url, "victim", "guess", source="127.0.0.3")
        assert other["code"] == "name_taken"
        # The guesser is not let in by the right token either while throttled:
        # its answers say nothing about its guesses.
        again = await _hello_answer(url, "victim", token, source="127.0.0.1")
        assert again["code"] == "limited"
    assert "token failures cap" in (tmp_path / "server.log").read_text()


async def test_an_address_that_guesses_at_many_names_is_throttled(tmp_path: Path) -> None:
    args = ["--token-failures-per-name", "3", "--token-failures-per-addr", "5"]
    with server_process(tmp_path, args=args) as (url, _proc):
        await _hello_answer(url, "victim", source="127.0.0.2")
        await _hello_answer(url, "other", source="127.0.0.2")
        codes = [(await _hello_answer(url, "victim", f"g{n}"))["code"] for n in range(4)]
        assert codes == ["name_taken"] * 3 + ["limited"]
        codes = [(await _hello_answer(url, "other", f"g{n}"))["code"] for n in range(3)]
        assert codes == ["name_taken", "name_taken", "limited"]
        # The address is throttled for every join; another address is not.
        assert (await _hello_answer(url, "newcomer"))["code"] == "limited"
        assert (await _hello_answer(url, "newcomer", source="127.0.0.4"))["t"] == "welcome"


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
