"""The network shell: websockets, the tick clock, rate limits and outboxes.

Holds no game rule (STYLE.md). Each connection goes through the protocol's
session table; each tick the :class:`~server.game.game.Game` is stepped and
every player gets at most one frame per message, written with
``websockets.broadcast`` (no awaiting per client in the tick, PERFORMANCE.md).
A client whose socket buffer stays above ``OUTBOX_LIMIT_BYTES`` gets no
deltas — its next message is a snapshot — and is dropped after
``BEHIND_DROP_S`` seconds of that.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.server import Server as WsServer
from websockets.asyncio.server import ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed

from protocol.codec import decode_client, encode_server
from protocol.errors import ErrorCode, ProtocolError
from protocol.limits import FLOOD_FACTOR, HELLO_TIMEOUT_S, MAX_FRAME_BYTES, RATE_BURST, RATE_PER_S
from protocol.messages import Chat, Command, Error, Hello, Look, Ping, Pong, ServerMessage
from protocol.session import ServerSession
from protocol.version import check_version
from server.game.game import Game, GameError
from server.net.ratelimit import TokenBucket

log = logging.getLogger("underhall.net")

OUTBOX_LIMIT_BYTES = 256 * 1024
"""Socket write buffer above which a client is treated as behind."""
BEHIND_DROP_S = 10.0
"""Seconds a client may stay behind before it is disconnected."""
TICK_LOG_ENV = "UNDERHALL_TICK_LOG"
"""If this environment variable names a file, every tick appends one line to it:
``wall_clock_s tick duration_ms players`` (flushed about once a second; for bench/scale.py)."""


@dataclass(eq=False)
class Client:
    """One playing connection."""

    ws: ServerConnection
    actor_id: int
    session: ServerSession
    bucket: TokenBucket
    behind_since: float | None = None
    sent_bytes: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class TickStats:
    """Timing of recent ticks (ms), for the periodic log line."""

    durations: list[float] = field(default_factory=list)
    late: int = 0


class GameServer:
    """Serve one :class:`Game` over websockets.

    Args:
        game: The game to run.
        host: Interface to bind.
        port: TCP port (0 picks a free one; see :attr:`port` after start).
        tick_rate: Ticks per second.
    """

    def __init__(self, game: Game, host: str = "127.0.0.1", port: int = 8765,
                 tick_rate: int = 10) -> None:
        self.game = game
        self.host = host
        self.port = port
        self.tick_rate = tick_rate
        self.clients: dict[int, Client] = {}
        self.stats = TickStats()
        self._stop = asyncio.Event()
        self._ws_server: WsServer | None = None
        tick_log = os.environ.get(TICK_LOG_ENV)
        self._tick_log = open(tick_log, "a", encoding="ascii") if tick_log else None  # noqa: SIM115

    # ----------------------------------------------------------- lifecycle

    async def run(self, ready: asyncio.Future[int] | None = None,
                  install_signals: bool = True) -> None:
        """Serve until :meth:`stop` (or SIGINT, SIGTERM, SIGHUP); then save
        every character, tell the players and close their connections.

        Args:
            ready: Set to the bound port once listening.
            install_signals: Stop on SIGINT, SIGTERM and SIGHUP.
        """
        loop = asyncio.get_running_loop()
        if install_signals:  # SIGHUP: the terminal running the server closed
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                loop.add_signal_handler(sig, self._stop.set)
        async with serve(self._handle, self.host, self.port, compression=None,
                         max_size=MAX_FRAME_BYTES, ping_interval=20, ping_timeout=20,
                         close_timeout=2) as ws_server:
            self._ws_server = ws_server
            self.port = int(next(iter(ws_server.sockets)).getsockname()[1])
            if ready is not None and not ready.done():
                ready.set_result(self.port)
            tick_task = asyncio.create_task(self._tick_loop())
            await self._stop.wait()
            tick_task.cancel()
            try:
                await tick_task
            except asyncio.CancelledError:
                pass
            # Save first: closing handshakes with slow clients take time, and
            # the process may be killed while they run.
            self.game.save_all()
            log.info("stopping: %d players saved", len(self.game.seats))
            data = encode_server(Error(code=ErrorCode.SHUTDOWN.value,
                                       msg="the server is stopping", fatal=True))
            for client in list(self.clients.values()):
                self._send_raw(client, data)
            await asyncio.gather(*(c.ws.close(1001, "server shutdown")
                                   for c in list(self.clients.values())))
        log.info("stopped")

    def stop(self) -> None:
        """Ask :meth:`run` to finish."""
        self._stop.set()

    # ----------------------------------------------------------- ticking

    async def _tick_loop(self) -> None:
        loop = asyncio.get_running_loop()
        period = 1.0 / self.tick_rate
        next_t = loop.time()
        last_report = loop.time()
        tick_log = self._tick_log
        while True:
            next_t += period
            delay = next_t - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            else:
                self.stats.late += 1
                if delay < -5 * period:
                    next_t = loop.time()
                await asyncio.sleep(0)
            started = time.perf_counter()
            try:
                self._tick()
            except Exception:  # a bug in the rules must not take the server down
                log.exception("tick %d failed", self.game.world.tick)
            self.stats.durations.append((time.perf_counter() - started) * 1000.0)
            if tick_log is not None:
                tick_log.write(f"{time.time():.3f} {self.game.world.tick} "
                               f"{self.stats.durations[-1]:.3f} {len(self.clients)}\n")
                if self.game.world.tick % self.tick_rate == 0:
                    tick_log.flush()
            if loop.time() - last_report >= 60.0:
                last_report = loop.time()
                self._report()

    def _tick(self) -> None:
        now = time.monotonic()
        skip: set[int] = set()
        for aid, client in list(self.clients.items()):
            transport = client.ws.transport
            buffered = transport.get_write_buffer_size() if transport is not None else 0
            if buffered > OUTBOX_LIMIT_BYTES:
                skip.add(aid)
                if client.behind_since is None:
                    client.behind_since = now
                elif now - client.behind_since > BEHIND_DROP_S:
                    log.warning("dropping %s: behind for %.0f s", aid, now - client.behind_since)
                    if transport is not None:
                        transport.abort()
            else:
                client.behind_since = None
        for aid, msgs in self.game.step(skip).items():
            target = self.clients.get(aid)
            if target is None:
                continue
            for msg in msgs:
                self._send(target, msg)

    def _report(self) -> None:
        d = sorted(self.stats.durations)
        if d:
            log.info("players %d, tick %d, tick ms p50 %.2f p99 %.2f, late %d",
                     len(self.clients), self.game.world.tick, d[len(d) // 2],
                     d[min(len(d) - 1, int(len(d) * 0.99))], self.stats.late)
        self.stats = TickStats()

    # ----------------------------------------------------------- sending

    def _send(self, client: Client, msg: ServerMessage) -> None:
        self._send_raw(client, encode_server(msg))

    def _send_raw(self, client: Client, data: bytes) -> None:
        client.sent_bytes += len(data)
        broadcast([client.ws], data)

    # ----------------------------------------------------------- connections

    async def _fatal(self, ws: ServerConnection, code: str, detail: str) -> None:
        try:
            await ws.send(encode_server(Error(code=code, msg=detail, fatal=True)))
            await ws.close(1001 if code == ErrorCode.SHUTDOWN else 1008, code)
        except ConnectionClosed:
            pass

    async def _error(self, ws: ServerConnection, exc: ProtocolError) -> bool:
        """Report a protocol error; return True if the connection must end."""
        if exc.fatal:
            await self._fatal(ws, exc.code.value, exc.detail)
            return True
        broadcast([ws], encode_server(Error(code=exc.code.value, msg=exc.detail, fatal=False)))
        return False

    async def _await_hello(self, ws: ServerConnection, session: ServerSession) -> Hello | None:
        try:
            async with asyncio.timeout(HELLO_TIMEOUT_S):
                async for raw in ws:
                    try:
                        msg = session.receive(decode_client(raw))
                        if isinstance(msg, Hello):
                            check_version(msg.v)
                    except ProtocolError as exc:
                        if await self._error(ws, exc):
                            return None
                        continue
                    if isinstance(msg, Ping):
                        broadcast([ws], encode_server(Pong(id=msg.id, tick=self.game.world.tick)))
                    elif isinstance(msg, Hello):
                        return msg
        except TimeoutError:
            await self._fatal(ws, ErrorCode.TIMEOUT.value, "no hello in time")
        return None

    async def _handle(self, ws: ServerConnection) -> None:
        session = ServerSession()
        client: Client | None = None
        try:
            hello = await self._await_hello(ws, session)
            if hello is None:
                return
            try:
                welcome, replaced = self.game.join(hello.name, hello.token, hello.cls, session)
            except GameError as exc:
                await self._fatal(ws, exc.code, exc.detail)
                return
            old = self.clients.get(welcome.id)
            if replaced is not None and old is not None:
                broadcast([old.ws], encode_server(Error(
                    code="replaced", msg="this character connected from elsewhere", fatal=True)))
                old.extra["replaced"] = True
                asyncio.create_task(old.ws.close(1008, "replaced"))
            session.welcomed()
            client = Client(ws, welcome.id, session,
                            TokenBucket(RATE_PER_S, RATE_BURST, FLOOD_FACTOR, time.monotonic()))
            self.clients[welcome.id] = client
            await ws.send(encode_server(welcome))
            log.info("%s joined as actor %d%s", welcome.name, welcome.id,
                     " (resumed)" if welcome.resumed else "")
            async for raw in ws:
                if not await self._on_message(client, raw):
                    break
        except ConnectionClosed:
            pass
        finally:
            session.close()
            if client is not None:
                if self.clients.get(client.actor_id) is client:
                    del self.clients[client.actor_id]
                self.game.leave(client.actor_id, session)

    async def _on_message(self, client: Client, raw: bytes | str) -> bool:
        """Handle one frame of a playing client; return False to end the connection."""
        ws = client.ws
        if not client.bucket.allow(time.monotonic()):
            if client.bucket.flooding:
                await self._fatal(ws, ErrorCode.FLOOD.value, "too many messages")
                return False
            if client.bucket.dropped_in_window == 1:
                await self._error(ws, ProtocolError(ErrorCode.RATE_LIMITED,
                                                    f"over {RATE_PER_S} messages per second"))
            return True
        try:
            msg = client.session.receive(decode_client(raw))
        except ProtocolError as exc:
            return not await self._error(ws, exc)
        if isinstance(msg, Command):
            try:
                self.game.command(client.actor_id, msg.seq, msg.c.value, msg.d, item=msg.item,
                                  at=msg.at, spell=msg.spell, opt=msg.opt)
            except (ValueError, KeyError) as exc:
                await self._error(ws, ProtocolError(ErrorCode.BAD_FIELD, str(exc)))
        elif isinstance(msg, Chat):
            data = encode_server(self.game.chat(client.actor_id, msg.text))
            broadcast([c.ws for c in self.clients.values()], data)
        elif isinstance(msg, Ping):
            broadcast([ws], encode_server(Pong(id=msg.id, tick=self.game.world.tick)))
        elif isinstance(msg, Look):
            broadcast([ws], encode_server(self.game.look(client.actor_id, msg.id)))
        return True
