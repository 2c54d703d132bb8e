"""Accepting every waiting connection at once, not one per turn of the event loop.

libuv (under uvloop) accepts one connection each time the event loop turns
(libuv 1.45 stopped accepting in a loop). The game server's tick runs
synchronously; when ticks run back to back the loop turns only a few times
between two of them, so a burst of arrivals was accepted a handful per tick
and waited in the kernel's queue for tens of seconds. :class:`BulkAcceptor`
watches a second descriptor of each listening socket and, whenever it is
readable, accepts every waiting connection (up to ``batch``), handing each
to the loop with ``connect_accepted_socket`` and the protocol factory the
websockets server itself uses. The loop's own accept goes on beside it:
whichever takes a connection, it is served the same way.

Holds no game rule.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import socket
import ssl
from collections.abc import Callable, Iterable
from typing import Any

log = logging.getLogger("underhall.net")

ACCEPT_BATCH = 1024
"""Most connections accepted in one go (then the loop turns once more)."""
PAUSE_S = 0.1
"""Seconds accepting pauses after the process ran out of file descriptors."""


class BulkAcceptor:
    """Accept all waiting connections of listening sockets whenever they are readable.

    Args:
        listeners: The server's listening sockets (only their descriptors
            are used: each is duplicated, the originals stay the server's).
        factory: Makes the protocol of one connection (as ``create_server``'s).
        ssl_context: Wrap each connection in TLS (server side), or None.
        ssl_timeout_s: Seconds the TLS handshake and shutdown may take.
        batch: Most connections accepted per readiness.

    Call :meth:`close` when the server stops listening.
    """

    def __init__(
        self,
        listeners: Iterable[Any],
        factory: Callable[[], asyncio.Protocol],
        *,
        ssl_context: ssl.SSLContext | None = None,
        ssl_timeout_s: float | None = None,
        batch: int = ACCEPT_BATCH,
    ) -> None:
        self.loop = asyncio.get_running_loop()
        self.factory = factory
        self.ssl_context = ssl_context
        self.ssl_timeout_s = ssl_timeout_s
        self.batch = batch
        self.accepted = 0
        """Connections this acceptor took (the loop's own accept not counted)."""
        self._socks: list[socket.socket] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        for listener in listeners:
            sock = socket.socket(fileno=os.dup(listener.fileno()))
            sock.setblocking(False)
            self._socks.append(sock)
            self._watch(sock)

    def _watch(self, sock: socket.socket) -> None:
        if sock.fileno() >= 0:
            self.loop.add_reader(sock.fileno(), self._accept, sock)

    def _accept(self, sock: socket.socket) -> None:
        for _ in range(self.batch):
            try:
                conn, _ = sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue
            except OSError as exc:
                if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    # Out of descriptors: leave the rest queued for a while
                    # (the loop's own accept handles this case its own way).
                    log.warning("accepting paused: %s", exc)
                    self.loop.remove_reader(sock.fileno())
                    self.loop.call_later(PAUSE_S, self._watch, sock)
                    return
                raise
            conn.setblocking(False)
            self.accepted += 1
            task = self.loop.create_task(self._serve(conn))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _serve(self, conn: socket.socket) -> None:
        try:
            if self.ssl_context is None:
                await self.loop.connect_accepted_socket(self.factory, conn)
            else:
                await self.loop.connect_accepted_socket(
                    self.factory,
                    conn,
                    ssl=self.ssl_context,
                    ssl_handshake_timeout=self.ssl_timeout_s,
                    ssl_shutdown_timeout=self.ssl_timeout_s,
                )
        except Exception as exc:  # noqa: BLE001 -- the peer went away or failed TLS
            log.debug("accepted connection failed to start: %s", exc)
            conn.close()

    def close(self) -> None:
        """Stop accepting (the listening sockets themselves stay open)."""
        for sock in self._socks:
            with contextlib.suppress(ValueError, OSError):
                self.loop.remove_reader(sock.fileno())
            sock.close()
        self._socks.clear()
        for task in list(self._tasks):
            task.cancel()
