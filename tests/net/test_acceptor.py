"""BulkAcceptor on real sockets: every waiting connection at once, TLS, closing."""

from __future__ import annotations

import asyncio
import socket
import ssl
import time

import pytest

from server.net.acceptor import BulkAcceptor
from tests.net.test_tls import Certs, certs

__all__ = ["certs"]  # the fixture, shared with test_tls


class Echo(asyncio.Protocol):
    """Counts connections made; echoes what it receives."""

    made = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        Echo.made += 1
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        assert isinstance(self.transport, asyncio.Transport)
        self.transport.write(data)


def _listener() -> socket.socket:
    return socket.create_server(("127.0.0.1", 0), backlog=4096)


async def _queued_then_taken(n: int) -> tuple[int, int]:
    """Queue ``n`` connections while the loop is blocked; return how many the
    acceptor took in its first turns, and how many protocols were made."""
    listener = _listener()
    Echo.made = 0
    acceptor = BulkAcceptor([listener], Echo)
    port = listener.getsockname()[1]
    socks = []
    for _ in range(n):  # the loop is blocked meanwhile: nothing is accepted
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        socks.append(s)
    time.sleep(0.2)  # noqa: ASYNC251 -- the loop stays blocked while they queue
    for _ in range(3):
        await asyncio.sleep(0)
    taken, made = acceptor.accepted, Echo.made
    acceptor.close()
    for s in socks:
        s.close()
    listener.close()
    return taken, made


def test_every_waiting_connection_is_taken_in_one_go_under_uvloop() -> None:
    uvloop = pytest.importorskip("uvloop")
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        taken, made = runner.run(_queued_then_taken(300))
    assert taken == 300
    assert made == 300


async def test_tls_connections_are_wrapped(certs: Certs) -> None:
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(certs.cert, certs.key)
    listener = _listener()
    acceptor = BulkAcceptor([listener], Echo, ssl_context=server_ctx, ssl_timeout_s=5.0)
    client_ctx = ssl.create_default_context(cafile=str(certs.ca))
    port = listener.getsockname()[1]
    reader, writer = await asyncio.wait_for(
        asyncio.open_connection("127.0.0.1", port, ssl=client_ctx, server_hostname="localhost"),
        10,
    )
    writer.write(b"over tls")
    assert await asyncio.wait_for(reader.readexactly(8), 10) == b"over tls"
    writer.close()
    acceptor.close()
    listener.close()


async def test_after_close_nothing_more_is_accepted() -> None:
    listener = _listener()
    acceptor = BulkAcceptor([listener], Echo)
    port = listener.getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"x")
    assert await asyncio.wait_for(reader.readexactly(1), 10) == b"x"
    acceptor.close()
    before = acceptor.accepted
    late = socket.create_connection(("127.0.0.1", port))  # queued by the kernel
    for _ in range(5):
        await asyncio.sleep(0.01)
    assert acceptor.accepted == before
    late.close()
    writer.close()
    listener.close()
