"""The lean receive path (issue 10): a playing client's whole data frames are
parsed by :meth:`GuardedConnection._take_messages` instead of websockets'
parser, and anything else is left to websockets from the frame it starts
at. Over a real connection, with the bytes cut and mixed as a network may
deliver them, every message must be handled once and in order, and control
frames, fragments, bad frames and closes must behave as before."""

from __future__ import annotations

import asyncio
import os
import struct
from typing import Any

import msgpack  # type: ignore[import-untyped]

from protocol.version import PROTOCOL_VERSION
from tests.net.conftest import Started
from tests.net.fuzzframes import RawConnection
from tests.net.rawws import OP_BINARY, OP_CLOSE, OP_CONT, OP_PING, OP_PONG, OP_TEXT, frame


def masked(opcode: int, payload: bytes, *, fin: bool = True, mask: bool = True) -> bytes:
    """One client frame with a random mask key (or none, which RFC 6455 forbids)."""
    return frame(opcode, payload, fin=fin, key=os.urandom(4) if mask else None)


def ping(n: int) -> bytes:
    return masked(OP_BINARY, msgpack.packb({"t": "ping", "id": n}))


class Raw:
    """A joined raw connection (:class:`RawConnection`) that sends bytes as
    it is told and reads the server's answers."""

    def __init__(self, conn: RawConnection) -> None:
        self.conn = conn

    @classmethod
    async def join(cls, port: int, name: str) -> Raw:
        raw = cls(await RawConnection.open(port))
        hello = {"t": "hello", "v": PROTOCOL_VERSION, "name": name}
        await raw.send(masked(OP_BINARY, msgpack.packb(hello)))
        assert (await raw.message())["t"] == "welcome"
        return raw

    async def send(self, data: bytes) -> None:
        self.conn.writer.write(data)
        await self.conn.writer.drain()

    async def frame(self, timeout: float = 5.0) -> tuple[int, bytes]:
        async with asyncio.timeout(timeout):
            return await self.conn.recv()

    async def message(self, timeout: float = 5.0) -> dict[str, Any]:
        """The next binary message (ticks' deltas included)."""
        while True:
            op, data = await self.frame(timeout)
            if op == OP_BINARY:
                out = msgpack.unpackb(data, raw=False, strict_map_key=False)
                assert isinstance(out, dict)
                out.setdefault("t", "delta")  # a delta carries no "t" (protocol 10)
                return out

    async def replies(self, count: int, timeout: float = 5.0) -> list[tuple[str, Any]]:
        """The next ``count`` answers other than deltas and snapshots:
        ``("pong", id)``, ``("error", code)`` or ``("control", opcode)``."""
        out: list[tuple[str, Any]] = []
        while len(out) < count:
            op, data = await self.frame(timeout)
            if op != OP_BINARY:
                out.append(("control", op))
                continue
            msg = msgpack.unpackb(data, raw=False, strict_map_key=False)
            if msg.get("t") == "pong":
                out.append(("pong", msg["id"]))
            elif msg.get("t") == "error":
                out.append(("error", msg["code"]))
        return out

    def close(self) -> None:
        self.conn.writer.close()


async def test_messages_cut_and_mixed_anyhow_are_each_handled_once_in_order(
    start_server: Started,
) -> None:
    server = await start_server(populate=False)
    raw = await Raw.join(server.port, "ann")
    # Several whole frames in one write, one with a 16-bit length.
    big = masked(OP_BINARY, msgpack.packb({"t": "ping", "id": 3, "pad": "x" * 300}))
    await raw.send(ping(1) + ping(2) + big)
    assert await raw.replies(3) == [("pong", 1), ("pong", 2), ("error", "bad_field")]
    # A frame cut in two writes, the rest arriving with the next frame.
    stream = ping(4) + ping(5) + ping(6)
    cut = len(ping(4)) + 3
    await raw.send(stream[:cut])
    await asyncio.sleep(0.05)
    await raw.send(stream[cut:])
    assert await raw.replies(3) == [("pong", 4), ("pong", 5), ("pong", 6)]
    # A control frame between data frames: websockets answers it, and the
    # data frame behind it is still handled, after it.
    await raw.send(ping(7) + masked(OP_PING, b"hi") + ping(8))
    assert await raw.replies(3) == [("pong", 7), ("control", OP_PONG), ("pong", 8)]
    # A text frame is refused as always; the next binary frame is handled.
    await raw.send(masked(OP_TEXT, b"hello") + ping(9))
    assert await raw.replies(2) == [("error", "bad_message"), ("pong", 9)]
    # A fragmented message goes to websockets (and the fast path stays off).
    whole = msgpack.packb({"t": "ping", "id": 10})
    await raw.send(masked(OP_BINARY, whole[:3], fin=False) + masked(OP_CONT, whole[3:]) + ping(11))
    assert await raw.replies(2) == [("pong", 10), ("pong", 11)]
    raw.close()


async def test_an_unmasked_frame_still_closes_the_connection_with_a_protocol_error(
    start_server: Started,
) -> None:
    server = await start_server(populate=False)
    raw = await Raw.join(server.port, "bob")
    await raw.send(ping(1) + masked(OP_BINARY, msgpack.packb({"t": "ping", "id": 2}), mask=False))
    assert await raw.replies(1) == [("pong", 1)]
    while True:  # deltas may come first; then the close frame, code 1002
        op, data = await raw.frame()
        if op == OP_CLOSE:
            assert struct.unpack("!H", data[:2])[0] == 1002
            break
    raw.close()
    other = await Raw.join(server.port, "cy")  # the server plays on
    await other.send(ping(5))
    assert await other.replies(1) == [("pong", 5)]
    other.close()
