"""send_binary: frames written straight to the transport, read back by a
real websockets client over 127.0.0.1."""

from __future__ import annotations

import asyncio

from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve

from server.net.guard import send_binary

# Each length form of RFC 6455's frame header, at and around its edges.
SIZES = [0, 1, 125, 126, 127, 65535, 65536, 70_000]


def _payload(n: int) -> bytes:
    return bytes((i * 7 + n) % 256 for i in range(n))


async def test_every_length_form_arrives_intact_and_a_closed_connection_is_skipped() -> None:
    done = asyncio.Event()
    closed: list[ServerConnection] = []

    async def handler(ws: ServerConnection) -> None:
        for n in SIZES:
            send_binary(ws, _payload(n))
        await ws.send("text still works after raw frames")
        await ws.wait_closed()
        send_binary(ws, b"after close")  # skipped, nothing raised
        closed.append(ws)
        done.set()

    async with serve(handler, "127.0.0.1", 0, compression=None) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        async with connect(f"ws://127.0.0.1:{port}", compression=None, max_size=None) as client:
            got = [await client.recv() for _ in SIZES]
            assert got == [_payload(n) for n in SIZES]
            assert await client.recv() == "text still works after raw frames"
        await asyncio.wait_for(done.wait(), 5)
    assert closed and closed[0].protocol.state.name == "CLOSED"


async def test_a_connection_with_compression_goes_through_websockets() -> None:
    async def handler(ws: ServerConnection) -> None:
        assert ws.protocol.extensions  # permessage-deflate was negotiated
        send_binary(ws, _payload(300))
        await ws.wait_closed()

    async with serve(handler, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        async with connect(f"ws://127.0.0.1:{port}") as client:
            assert await client.recv() == _payload(300)
