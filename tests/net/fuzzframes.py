"""Hostile frames for fuzzing a server, and a raw asyncio websocket client to send them.

Used by tests/net/test_fuzz.py (a few thousand frames of each kind) and
bench/fuzz.py (a million). Every frame is one of :data:`KINDS`; a kind says
what is wrong with it. The server must answer each with an ``error``, a
close code, or nothing, and never with a traceback in its log.

Frames go out in batches of at most :data:`BATCH` per connection (the
message burst), so the rate limiter passes them all to the decoder.
"""

from __future__ import annotations

import asyncio
import base64
import os
import struct
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgpack  # type: ignore[import-untyped]
import numpy as np

from protocol.limits import MAX_FRAME_BYTES, RATE_BURST
from protocol.version import PROTOCOL_VERSION
from tests.net.rawws import OP_BINARY, OP_CLOSE, OP_PING, OP_PONG, OP_TEXT, frame

KINDS: tuple[str, ...] = (
    "random", "truncated", "overlong", "shape", "nesting", "ext", "big", "hello", "early",
    "text",
)  # fmt: skip
"""Kinds of hostile frame:

- ``random``: random bytes.
- ``truncated``: a valid message cut short.
- ``overlong``: a valid message followed by more bytes, or a length prefix
  promising more than the frame holds.
- ``shape``: a map with a known ``t`` and wrong keys or values.
- ``nesting``: arrays or maps nested hundreds to thousands deep.
- ``ext``: msgpack extension types (timestamps, unknown codes) anywhere.
- ``big``: a frame over the size limit (one in ten up to ``big_max`` bytes, the others up
  to four times the limit); one per connection.
- ``hello``: an odd ``hello`` (wrong version, bad names, tokens, classes, extra keys); one per
  connection, before ``hello``.
- ``early``: game messages before ``hello``.
- ``text``: text frames, one in a hundred of them not UTF-8.
"""

ONE_PER_CONNECTION = frozenset({"big", "hello"})
"""Kinds whose frame ends (or seats) the connection: one per connection."""

PRE_HELLO = frozenset({"hello", "early"})
"""Kinds sent before ``hello``; the others go half before, half after."""

BATCH = RATE_BURST - 2
"""Frames sent per connection: with a ``hello`` and the marker ``ping``, the
rate limiter's burst, so none is dropped."""

VALID: tuple[dict[str, Any], ...] = (
    {"t": "cmd", "seq": 1, "c": "move", "d": [1, 0]},
    {"t": "cmd", "seq": 2, "c": "throw", "item": "a", "at": [3, 4]},
    {"t": "cmd", "seq": 3, "c": "cast", "spell": "spark", "d": [0, 1]},
    {"t": "chat", "text": "hello there"},
    {"t": "chat", "text": "psst", "to": "nobody"},
    {"t": "ping", "id": 9},
    {"t": "look", "id": 1},
    {"t": "hello", "v": PROTOCOL_VERSION, "name": "fuzz"},
)


def _pack(obj: object) -> bytes:
    data: bytes = msgpack.packb(obj, use_bin_type=True)
    return data


def _value(rng: np.random.Generator, depth: int = 0) -> Any:
    """A random msgpack value, nested a little."""
    pick = int(rng.integers(0, 12 if depth < 3 else 8))
    if pick == 0:
        return None
    if pick == 1:
        return bool(rng.integers(0, 2))
    if pick == 2:
        return int(rng.integers(-(2**63), 2**63 - 1, dtype=np.int64))
    if pick == 3:
        return float(rng.normal() * 1e6)
    if pick == 4:
        return "".join(chr(int(c)) for c in rng.integers(0x20, 0x2FFF, int(rng.integers(0, 12))))
    if pick == 5:
        return rng.bytes(int(rng.integers(0, 16)))
    if pick == 6:
        return str(rng.choice(["move", "wait", "a", "spark", "level", "global", "ann", ""]))
    if pick == 7:
        return int(rng.integers(-2, 3))
    if pick in (8, 9):
        return [_value(rng, depth + 1) for _ in range(int(rng.integers(0, 4)))]
    return {str(_value(rng, 3)): _value(rng, depth + 1) for _ in range(int(rng.integers(0, 4)))}


def _ext(rng: np.random.Generator) -> msgpack.ExtType | msgpack.Timestamp:
    if rng.integers(0, 3) == 0:
        return msgpack.Timestamp(int(rng.integers(0, 2**32)), int(rng.integers(0, 10**9)))
    return msgpack.ExtType(int(rng.integers(0, 128)), rng.bytes(int(rng.integers(0, 20))))


def make_frame(kind: str, rng: np.random.Generator, big_max: int = 1 << 20) -> tuple[int, bytes]:
    """One hostile frame of ``kind``: ``(opcode, payload)``.

    Raises:
        KeyError: ``kind`` is not one of :data:`KINDS`.
    """
    valid = VALID[int(rng.integers(0, len(VALID)))]
    if kind == "random":
        return OP_BINARY, rng.bytes(int(rng.integers(0, 300)))
    if kind == "truncated":
        data = _pack(valid)
        return OP_BINARY, data[: int(rng.integers(0, len(data)))]
    if kind == "overlong":
        if rng.integers(0, 2):
            return OP_BINARY, _pack(valid) + rng.bytes(int(rng.integers(1, 40)))
        head = rng.choice([b"\xdb", b"\xc6", b"\xdd", b"\xdf"])  # str32, bin32, array32, map32
        return OP_BINARY, bytes(head) + struct.pack("!I", int(rng.integers(5, 2**32))) + b"x"
    if kind == "shape":
        obj = dict(valid)
        for _ in range(int(rng.integers(1, 4))):
            key = str(rng.choice([*obj.keys(), "extra", "scope", "to", "token", "class"]))
            obj[key] = _value(rng)
        return OP_BINARY, _pack(obj)
    if kind == "nesting":
        depth = int(rng.integers(100, MAX_FRAME_BYTES - 8))
        if rng.integers(0, 2):
            return OP_BINARY, b"\x91" * depth + b"\xc0"
        return OP_BINARY, b"\x81\xa1t" * (depth // 3) + b"\xc0"
    if kind == "ext":
        obj = dict(valid)
        key = str(rng.choice(list(obj.keys())))
        obj[key] = _ext(rng)
        return OP_BINARY, _pack(obj if rng.integers(0, 4) else _ext(rng))
    if kind == "big":
        top = big_max if rng.integers(0, 10) == 0 else min(big_max, 4 * MAX_FRAME_BYTES)
        size = int(rng.integers(MAX_FRAME_BYTES + 1, max(top, MAX_FRAME_BYTES + 1) + 1))
        return OP_BINARY, b"\x00" * size
    if kind == "hello":
        hello: dict[str, Any] = {
            "t": "hello",
            "v": PROTOCOL_VERSION,
            "name": f"fz{int(rng.integers(0, 10**6))}",
        }
        change = int(rng.integers(0, 8))
        if change == 0:
            hello["v"] = _value(rng)
        elif change == 1:
            hello["name"] = _value(rng)
        elif change == 2:
            hello["token"] = _value(rng)
        elif change == 3:
            hello["class"] = _value(rng)
        elif change == 4:
            hello[str(_value(rng, 3))] = _value(rng)
        elif change == 5:
            del hello[str(rng.choice(["v", "name"]))]
        elif change == 6:
            hello["name"] = str(rng.choice(["FUZZ", "fuzz", "Fuzz"]))  # a taken name, any case
            hello["token"] = "wrong"
        # change 7: a plain hello that creates a character (until the address's cap)
        return OP_BINARY, _pack(hello)
    if kind == "early":
        early = [v for v in VALID if v["t"] != "hello"]
        return OP_BINARY, _pack(early[int(rng.integers(0, len(early)))])
    if kind == "text":
        if rng.integers(0, 100) == 0:  # closes the connection (1007): rarely, or the batch is lost
            return OP_TEXT, _pack(valid) + b"\xff"  # never UTF-8
        return OP_TEXT, "".join(chr(int(c)) for c in rng.integers(0x20, 0xD7FF, 50)).encode()
    raise KeyError(kind)


class RawConnection:
    """A raw websocket client on asyncio streams: sends any frame, reads frames."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, port: int) -> RawConnection:
        """Connect to ``127.0.0.1:port`` and do the opening handshake.

        Raises:
            ConnectionError: The handshake was refused (the HTTP status line is the message).
        """
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            (
                f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        head = await reader.readuntil(b"\r\n\r\n")
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            writer.close()
            raise ConnectionError(head.split(b"\r\n", 1)[0].decode(errors="replace"))
        return cls(reader, writer)

    async def send(self, opcode: int, payload: bytes) -> None:
        """Send one frame (and wait for the socket to take it)."""
        self.writer.write(frame(opcode, payload))
        await self.writer.drain()

    async def recv(self) -> tuple[int, bytes]:
        """One frame from the server; answers its pings.

        Raises:
            asyncio.IncompleteReadError: The server closed the TCP connection.
        """
        while True:
            b0, b1 = await self.reader.readexactly(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", await self.reader.readexactly(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", await self.reader.readexactly(8))[0]
            payload = await self.reader.readexactly(n)
            if b0 & 0x0F == OP_PING:
                self.writer.write(frame(OP_PONG, payload))
                continue
            return b0 & 0x0F, payload

    def close(self) -> None:
        """Drop the connection."""
        self.writer.close()


@dataclass
class Tally:
    """Frames sent and what came back, by kind."""

    frames: Counter[str]
    outcomes: dict[str, Counter[str]]

    @classmethod
    def empty(cls) -> Tally:
        return cls(Counter(), {k: Counter() for k in KINDS})


async def _read_until_marker(
    conn: RawConnection, marker: int, into: Counter[str], timeout: float
) -> None:
    """Tally server answers until the pong ``marker``, a close, or ``timeout``."""
    try:
        async with asyncio.timeout(timeout):
            while True:
                opcode, payload = await conn.recv()
                if opcode == OP_CLOSE:
                    code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
                    into[f"closed {code}"] += 1
                    return
                if opcode != OP_BINARY:
                    into["odd frame"] += 1
                    continue
                msg = msgpack.unpackb(payload, raw=False, strict_map_key=False)
                if msg.get("t") == "pong" and msg.get("id") == marker:
                    return
                if msg.get("t") == "error":
                    into[f"error {msg['code']}"] += 1
                elif msg.get("t") == "welcome":
                    into["welcome"] += 1
    except (asyncio.IncompleteReadError, ConnectionError):
        into["dropped"] += 1
    except TimeoutError:
        into["no answer"] += 1


async def fuzz_connection(
    port: int,
    kind: str,
    rng: np.random.Generator,
    tally: Tally,
    hello: dict[str, Any] | None,
    big_max: int = 1 << 20,
    timeout: float = 10.0,
) -> None:
    """Open one connection, optionally say ``hello`` (as a resume), send one
    batch of ``kind`` frames, then a ping as a marker; tally what came back."""
    try:
        conn = await RawConnection.open(port)
    except (ConnectionError, OSError) as exc:
        tally.outcomes[kind][f"refused: {exc}"[:40]] += 1
        return
    try:
        if hello is not None:
            await conn.send(OP_BINARY, _pack(hello))
            while True:  # until the welcome (or a refusal)
                opcode, payload = await asyncio.wait_for(conn.recv(), timeout)
                if opcode != OP_BINARY or msgpack.unpackb(payload, strict_map_key=False).get(
                    "t"
                ) in ("welcome", "error"):
                    break
        count = 1 if kind in ONE_PER_CONNECTION else BATCH
        for _ in range(count):
            await conn.send(*make_frame(kind, rng, big_max))
            tally.frames[kind] += 1
        marker = int(rng.integers(10**6, 2**31))
        await conn.send(OP_BINARY, _pack({"t": "ping", "id": marker}))
        await _read_until_marker(conn, marker, tally.outcomes[kind], timeout)
    except (ConnectionError, asyncio.IncompleteReadError, TimeoutError):
        tally.outcomes[kind]["dropped"] += 1
    finally:
        conn.close()


async def fuzz(
    port: int,
    per_kind: int | Callable[[str], int],
    *,
    seed: int = 0,
    workers: int = 4,
    resume: list[dict[str, Any]] | None = None,
    big_max: int = 1 << 20,
    progress: Callable[[Tally], None] | None = None,
) -> Tally:
    """Send ``per_kind`` frames of every kind (a number, or a function of the
    kind) over ``workers`` concurrent connections at a time.

    Args:
        resume: ``hello`` maps (name and token of existing characters, one per
            worker) used to reach the playing state; without them every
            frame is sent before ``hello``.
    """
    tally = Tally.empty()
    rng = np.random.default_rng(seed)
    jobs: list[tuple[str, bool]] = []
    for kind in KINDS:
        n = per_kind(kind) if callable(per_kind) else per_kind
        size = 1 if kind in ONE_PER_CONNECTION else BATCH
        for i in range(max(1, -(-n // size))):
            jobs.append((kind, bool(resume) and kind not in PRE_HELLO and i % 2 == 1))
    order = rng.permutation(len(jobs))
    queue: asyncio.Queue[tuple[str, bool]] = asyncio.Queue()
    for j in order:
        queue.put_nowait(jobs[int(j)])

    async def work(w: int) -> None:
        wrng = np.random.default_rng([seed, w])
        done = 0
        while not queue.empty():
            kind, playing = queue.get_nowait()
            hello = resume[w % len(resume)] if playing and resume else None
            await fuzz_connection(port, kind, wrng, tally, hello, big_max)
            done += 1
            if progress is not None and w == 0 and done % 200 == 0:
                progress(tally)

    await asyncio.gather(*(work(w) for w in range(workers)))
    return tally
