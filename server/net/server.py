"""The network shell: websockets, the tick clock, rate limits and outboxes.

Holds no game rule (STYLE.md). Each connection goes through the protocol's
session table; each tick the :class:`~server.game.game.Game` is stepped and
every player gets at most one frame per message, written straight to its
transport (:func:`~server.net.guard.send_binary`; no awaiting per client in
the tick, PERFORMANCE.md). A client whose socket buffer is above
``OUTBOX_LIMIT_BYTES`` when it has a message gets no deltas — its next
message is a snapshot — and is dropped after ``BEHIND_DROP_S`` seconds of
that. The limits of :mod:`server.net.guard` (control frames, buffered
output, per-address caps) apply to every connection from its first byte,
before and after ``hello``.

Joining while ticks run late (issue 10): connections wait in a listen
backlog of ``ACCEPT_BACKLOG``; a :class:`~server.net.acceptor.BulkAcceptor`
takes every waiting one at once (uvloop's own accept takes one per turn of
the event loop); and between two late ticks the loop turns several times,
on for longer while connections are arriving, so the steps of a join
(accept, opening handshake, ``hello``, ``welcome``) do not each wait a tick.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import signal
import ssl
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from websockets.asyncio.server import Server as WsServer
from websockets.asyncio.server import ServerConnection, broadcast, serve
from websockets.http11 import Request, Response
from websockets.server import ServerProtocol

from protocol.codec import encode_server
from protocol.errors import ErrorCode, ProtocolError
from protocol.limits import MAX_FRAME_BYTES
from protocol.messages import (
    Chat,
    ChatOut,
    Command,
    Error,
    Look,
    ServerMessage,
    Snapshot,
    Watchers,
)
from protocol.session import ServerSession
from server.game.game import Game, GameError
from server.game.keeper import LevelKeeper
from server.game.wire import REASONS
from server.net import collector
from server.net.acceptor import BulkAcceptor
from server.net.front import CLOSE_TIMEOUT_S, Front, FrontOptions, Joining, client_of
from server.net.guard import (
    AddressBook,
    GuardedConnection,
    NetLimits,
    buffered_output,
    guarded_connection_class,
    raise_open_file_limit,
    send_binary,
)
from server.net.metrics import Metrics
from server.net.ratelimit import TokenBucket, chat_buckets
from server.net.watch import Spectator, spectator_welcome
from server.net.web import LobbyRow

log = logging.getLogger("underhall.net")

OUTBOX_LIMIT_BYTES = 256 * 1024
"""Socket write buffer above which a client is treated as behind."""
BEHIND_DROP_S = 10.0
"""Seconds a client may stay behind before it is disconnected."""
DRAIN_S = 10.0
"""Default seconds from SIGTERM (or ``admin shutdown``) to the last connection closed."""
CLOSE_RESERVE_S = 3.0
"""Seconds of a drain kept for the final save and the closing handshakes."""
OPEN_TIMEOUT_S = 10.0
"""Seconds the opening handshake (and TLS's) may take from the accept."""
ACCEPT_BACKLOG = 4096
"""Connections the kernel may hold for the server before it accepts them
(``listen`` backlog; Linux caps it at ``net.core.somaxconn``). While a tick
runs nothing is accepted: with the default of 100, a burst of arrivals
during a long tick overflowed the queue, and each overflowed client waited
for its TCP retransmission (1 s, then 2, 4, 8 ...) before it could join."""
LATE_TURNS = 16
"""Event-loop turns the tick loop yields between two ticks when it runs late
(fewer if they take more than ``LATE_TURNS_SHARE`` of a tick period). Each
turn reads the sockets and runs what is ready; a join takes a dozen or more
turns (accept, the opening handshake's futures, ``hello``, ``welcome``), so
with a single turn between back-to-back ticks a join took as many ticks."""
LATE_TURNS_SHARE = 0.2
"""Share of a tick period the turns between two late ticks may take in all."""
ACCEPT_SHARE = 0.5
"""Share of a tick period the turns between two late ticks may take while
connections are being accepted: each turn advances their opening handshakes
by a step, so a burst of arrivals gets in within a few ticks (the ticks of
those running meanwhile are that much later)."""


def _over_cap(ws: ServerConnection) -> bool:
    return isinstance(ws, GuardedConnection) and ws.over_cap()


TICK_LOG_ENV = "UNDERHALL_TICK_LOG"
"""If this environment variable names a file, every tick appends one line to it:
``wall_clock_s tick duration_ms players gc_pause_ms step_ms write_ms skipped``
(the longest garbage collection since the line before; the game's step, and
the writing of its messages, encoding included; the players whose message
was not built or not written because their client was behind; flushed about
once a second; for bench/scale.py)."""


@dataclass(eq=False)
class Client:
    """One playing connection."""

    ws: ServerConnection
    actor_id: int
    session: ServerSession
    bucket: TokenBucket
    chat: TokenBucket
    global_chat: TokenBucket
    behind_since: float | None = None
    sent_bytes: int = 0
    actions: int = 0
    """Commands this connection sent (the lobby's ``turns``)."""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class TickStats:
    """Timing of recent ticks (ms), for the periodic log line."""

    durations: list[float] = field(default_factory=list)
    late: int = 0


class GameServer(Front):
    """Serve one :class:`Game` over websockets.

    Args:
        game: The game to run.
        host: Interface to bind.
        port: TCP port (0 picks a free one; see :attr:`port` after start).
        tick_rate: Ticks per second.
        ssl_context: Serve ``wss://`` with this context (None: plain ``ws://``).
        drain_s: Seconds a drain may take from its start to the last close.
        metrics_port: Also serve ``/metrics``, ``/healthz`` and ``/readyz``
            on this port (0 picks one; see :attr:`metrics_port` once ready).
        admin_socket: Path of the admin Unix socket (None: no admin socket).
        limits: Per-connection and per-address limits (defaults: :class:`NetLimits`).
    """

    metrics: Metrics

    def __init__(
        self,
        game: Game,
        host: str = "127.0.0.1",
        port: int = 8765,
        tick_rate: int = 10,
        *,
        ssl_context: ssl.SSLContext | None = None,
        drain_s: float = DRAIN_S,
        metrics_port: int | None = None,
        admin_socket: Path | None = None,
        limits: NetLimits | None = None,
    ) -> None:
        super().__init__(FrontOptions(host, port, limits, admin_socket))
        self.game = game
        self.tick_rate = tick_rate
        self.ssl_context = ssl_context
        self.drain_s = drain_s
        self.metrics_port = metrics_port
        self.clients: dict[int, Client] = {}
        self._behind: set[int] = set()
        """Players whose clients were behind or cut off at their last write
        (see :meth:`_still_behind`)."""
        self.stats = TickStats()
        self.metrics = Metrics(self)
        game.hooks = self.metrics
        self._ticking = False
        self._reserve = CLOSE_RESERVE_S
        self._drain_started = 0.0
        self._hurry = asyncio.Event()
        self._ws_server: WsServer | None = None
        self._pauses: collector.PauseWatch | None = None
        self.pacer = collector.Pacer()
        """Runs the collector between ticks (:mod:`server.net.collector`)."""
        self.keeper = LevelKeeper(game.world, game.saver)
        """Puts away the levels nobody has been on for a while (issue 48)."""
        tick_log = os.environ.get(TICK_LOG_ENV)
        self._tick_log = open(tick_log, "a", encoding="ascii") if tick_log else None  # noqa: SIM115

    @property
    def ready(self) -> bool:
        """Whether joins are accepted: ticking and not draining (``/readyz``)."""
        return self._ticking and not self.draining

    @property
    def clients_behind(self) -> int:
        """Clients behind at their last write, whose deltas are skipped until
        they catch up (``underhall_clients_behind``)."""
        return len(self._behind)

    # ----------------------------------------------------------- lifecycle

    async def run(
        self, ready: asyncio.Future[int] | None = None, install_signals: bool = True
    ) -> None:
        """Serve until :meth:`stop` or :meth:`drain` (SIGINT and SIGTERM drain, a
        second one or SIGHUP stops at once); then save every character, tell
        the players and close their connections.

        Args:
            ready: Set to the bound port once listening.
            install_signals: Stop on SIGINT, SIGTERM and SIGHUP.
        """
        loop = asyncio.get_running_loop()
        if install_signals:  # SIGHUP: the terminal running the server closed
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, self._on_signal)
            loop.add_signal_handler(signal.SIGHUP, self.stop)
        self._pauses = pauses = collector.PauseWatch(
            lambda generation, seconds: self.metrics.observe(
                "gc_pause_seconds", seconds, str(generation)
            )
        )
        fd_limit = raise_open_file_limit()
        self.book = AddressBook(self.limits, fd_limit)
        log.info(
            "open-file limit %d: at most %d connections, %d per address, "
            "%d new characters per address per hour",
            fd_limit,
            self.book.max_total,
            self.limits.max_conns_per_addr,
            self.limits.new_chars_per_hour,
        )
        conn_class = guarded_connection_class(self.book)
        async with contextlib.AsyncExitStack() as stack:
            ws_server = await stack.enter_async_context(
                serve(
                    self._handle,
                    self.host,
                    self.port,
                    compression=None,
                    max_size=MAX_FRAME_BYTES,
                    ping_interval=self.limits.keepalive_interval_s,
                    ping_timeout=self.limits.keepalive_timeout_s,
                    close_timeout=CLOSE_TIMEOUT_S,
                    open_timeout=OPEN_TIMEOUT_S,
                    backlog=ACCEPT_BACKLOG,
                    ssl=self.ssl_context,
                    create_connection=conn_class,
                    process_request=self._process_request,
                )
            )
            self._ws_server = ws_server
            self.port = int(next(iter(ws_server.sockets)).getsockname()[1])
            acceptor = BulkAcceptor(
                ws_server.sockets,
                functools.partial(self._new_connection, conn_class, ws_server),
                ssl_context=self.ssl_context,
                ssl_timeout_s=OPEN_TIMEOUT_S,
            )
            stack.callback(acceptor.close)
            if self.metrics_port is not None:
                http_server = await stack.enter_async_context(
                    serve(
                        self._handle,
                        self.host,
                        self.metrics_port,
                        process_request=self.metrics.process_http_only,
                    )
                )
                self.metrics_port = int(next(iter(http_server.sockets)).getsockname()[1])
            if self.admin_socket is not None:
                from server.net.admin import AdminServer, ServeOperator

                await stack.enter_async_context(AdminServer(ServeOperator(self), self.admin_socket))
            tick_task = asyncio.create_task(self._tick_loop())
            self._ticking = True
            if ready is not None and not ready.done():
                ready.set_result(self.port)
            await self._stop.wait()
            await self._drain_grace()
            tick_task.cancel()
            try:
                await tick_task
            except asyncio.CancelledError:
                pass
            # Save first: closing handshakes with slow clients take time, and
            # the process may be killed while they run.
            self._save_all()
            log.info(
                "stopping: %d players saved",
                len(self.game.seats),
                extra={"event": "saved", "players": len(self.game.seats)},
            )
            data = encode_server(
                Error(code=ErrorCode.SHUTDOWN.value, msg="the server is stopping", fatal=True)
            )
            for client in list(self.clients.values()):
                self._send_raw(client, data)
            closing = [c.ws for c in list(self.clients.values())]
            for spectators in list(self.audience.by_actor.values()):
                for spectator in spectators:
                    send_binary(spectator.ws, data)
                    closing.append(spectator.ws)
            left = (
                max(0.5, self._drain_started + self._grace + self._reserve - time.monotonic())
                if self._drain_started
                else 2.5
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    asyncio.gather(*(self._close(ws, 1001, "server shutdown") for ws in closing)),
                    left,
                )
            for ws in closing:  # slow closing handshakes are cut short
                if ws.transport is not None and not ws.transport.is_closing():
                    ws.transport.abort()
        pauses.close()
        log.info("stopped", extra={"event": "stopped"})

    def stop(self) -> None:
        """Ask :meth:`run` to finish now: no grace period for the players."""
        self.draining = True
        self.metrics.gauge("draining", 1)
        self._hurry.set()
        self._stop.set()

    def drain(self, grace_s: float | None = None) -> float:
        """Begin a graceful stop; :meth:`run` then returns within the drain time.

        Joins are refused (``shutdown``) and ``/readyz`` fails from now; the
        players are told how long they have, their characters are saved, play
        goes on for the grace period, then everything is saved again and
        every connection closed. With nobody playing, there is no grace.

        Args:
            grace_s: Seconds of play left to the players; None for
                ``drain_s`` minus the time kept for saving and closing.

        Returns:
            The grace period in seconds (that of a drain already under way).
        """
        if self.draining:
            return self._grace
        self._reserve = reserve = min(CLOSE_RESERVE_S, self.drain_s / 2)
        grace = max(0.0, self.drain_s - reserve) if grace_s is None else max(0.0, grace_s)
        self._grace = grace if self.game.seats else 0.0
        self._drain_started = time.monotonic()
        self.draining = True
        self.metrics.gauge("draining", 1)
        self._stop.set()
        return self._grace

    def _on_signal(self) -> None:
        """First SIGTERM or SIGINT: drain; a second one: stop now."""
        if self.draining:
            self.stop()
        else:
            self.drain()

    async def _drain_grace(self) -> None:
        grace = 0.0 if self._hurry.is_set() else self._grace
        log.info(
            "draining: %d players, %.0f s of grace",
            len(self.game.seats),
            grace,
            extra={"event": "drain", "players": len(self.game.seats), "grace_s": grace},
        )
        if grace <= 0:
            return
        self._save_all()  # in case the process is killed during the grace period
        self.notice(f"The server stops in {grace:.0f} s. Your character is saved.")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._hurry.wait(), grace)

    def _save_all(self) -> None:
        try:
            self.game.save_all()
        except Exception:  # counted as a database error; closing goes on
            log.exception("saving every character failed", extra={"event": "save_failed"})

    # ----------------------------------------------------------- operators

    def notice(self, text: str) -> int:
        """Send every player a server notice (a ``chat`` from ``""``); return how many."""
        data = encode_server(ChatOut(sender="", text=text, tick=self.game.world.tick))
        for client in list(self.clients.values()):
            self._send_raw(client, data)
        return len(self.clients)

    def disconnect(self, name: str, code: str, text: str) -> bool:
        """Close the connection of the player called ``name`` with a fatal error.

        Returns:
            False if nobody of that name is playing.
        """
        seat = self.game.by_name.get(name.lower())
        client = self.clients.get(seat.actor_id) if seat is not None else None
        if client is None:
            return False
        self._send_raw(client, encode_server(Error(code=code, msg=text, fatal=True)))
        client.extra["closed_by"] = code
        asyncio.create_task(client.ws.close(1008, code))
        return True

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
                await self._turn_between_late_ticks(period)
            started = time.perf_counter()
            step_s = write_s = 0.0
            skipped = 0
            try:
                with collector.held():  # a collection due waits for the tick's end
                    step_s, write_s, skipped = self._tick()
            except Exception:  # a bug in the rules must not take the server down
                log.exception("tick %d failed", self.game.world.tick)
            took = time.perf_counter() - started
            # the tick's containers are freed; closed connections may not be
            self.pacer.after_tick(len(self.clients), self.book.lost)
            self.stats.durations.append(took * 1000.0)
            self.metrics.tick(took, delay <= 0)
            if tick_log is not None:
                tick_log.write(
                    f"{time.time():.3f} {self.game.world.tick} "
                    f"{took * 1000.0:.3f} {len(self.clients)} "
                    f"{self._worst_pause_ms():.3f} {step_s * 1000.0:.3f} {write_s * 1000.0:.3f} "
                    f"{skipped}\n"
                )
                if self.game.world.tick % self.tick_rate == 0:
                    tick_log.flush()
            if loop.time() - last_report >= 60.0:
                last_report = loop.time()
                self._report()
                self.book.prune(time.monotonic())

    async def _turn_between_late_ticks(self, period: float) -> None:
        """Let the event loop turn between two ticks that run late: at least
        ``LATE_TURNS`` times (or for ``LATE_TURNS_SHARE`` of ``period``), and
        on while turns accept connections, for at most ``ACCEPT_SHARE`` of
        ``period`` in all. The tick itself is not reordered: commands that
        arrive meanwhile are queued for it as they would be anyway."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        book = self.book
        seen = book.accepted
        turns = last_accept = 0
        while True:
            await asyncio.sleep(0)
            turns += 1
            if book.accepted != seen:
                seen, last_accept = book.accepted, turns
            spent = loop.time() - start
            # A connection accepted in one turn is counted in the next.
            accepting = turns - last_accept <= 1
            enough = turns >= LATE_TURNS or spent > LATE_TURNS_SHARE * period
            if enough and (not accepting or spent > ACCEPT_SHARE * period):
                return

    def _tick(self) -> tuple[float, float, int]:
        """Step the game and write the players' messages as they are built,
        a batch at a time, the players who acted this tick first
        (:meth:`Game.step`); return the seconds spent in the step and in the
        writing (encoding and sending), and how many players' messages were
        not built or not written because their client was behind (for the
        tick log and ``underhall_frames_skipped_total``).

        The output buffer is read when a client has a message to write
        (:meth:`_deliver`), not for every client before the step: with
        thousands of clients, most of whom get nothing on a given tick, the
        pass over all of them cost about 6 ms a tick (issue 10). Only the
        clients already behind are looked at before the step
        (:meth:`_still_behind`), so that nothing is built for them.
        """
        now = time.monotonic()
        skip = self._still_behind(now)
        clients = self.clients
        deliver = self._deliver
        clock = time.perf_counter
        writing = 0.0
        held = 0  # messages built but not written: their client fell behind

        def send(batch: list[tuple[int, ServerMessage]]) -> None:
            nonlocal writing, held
            t0 = clock()
            for aid, msg in batch:
                client = clients.get(aid)
                if client is None:
                    continue
                try:
                    if not deliver(client, msg, now):
                        held += 1
                except Exception:  # a message that cannot be written is a bug:
                    log.exception("tick %d: message for %d not written", self.game.world.tick, aid)
                    self.game.resync(aid)  # its view counted it sent: start afresh
            writing += clock() - t0

        started = clock()
        self.game.step(skip, send)
        self.keeper.after_tick()
        skipped = len(skip) + held
        if skipped:
            self.metrics.skipped(skipped)
        return clock() - started - writing, writing, skipped

    def _still_behind(self, now: float) -> set[int]:
        """The players whose clients were behind (or cut off) at their last
        write and still are: nothing is built for them this tick, and their
        next message will be a snapshot. A client behind for more than
        ``BEHIND_DROP_S`` is disconnected; one that caught up (its buffer at
        or under ``OUTBOX_LIMIT_BYTES``) is no longer behind."""
        skip: set[int] = set()
        for aid in list(self._behind):
            client = self.clients.get(aid)
            if client is None:
                self._behind.discard(aid)
                continue
            buffered = buffered_output(client.ws)  # one read of the buffer
            if buffered is not None and buffered <= OUTBOX_LIMIT_BYTES:
                client.behind_since = None
                self._behind.discard(aid)
                continue
            skip.add(aid)
            since = client.behind_since  # set by _deliver when it fell behind
            if buffered is not None and since is not None and now - since > BEHIND_DROP_S:
                log.warning("dropping %s: behind for %.0f s", aid, now - since)
                self.metrics.count("slow_dropped")
                transport = client.ws.transport
                if transport is not None:
                    transport.abort()
        return skip

    def _deliver(self, client: Client, msg: ServerMessage, now: float) -> bool:
        """Write one of the tick's messages to ``client`` unless it is cut off
        or behind (output buffered over ``OUTBOX_LIMIT_BYTES``). A message
        not written makes the player's next one a snapshot, and the client
        is counted behind from ``now``; return False then."""
        buffered = buffered_output(client.ws)  # one read of the buffer
        if buffered is None or buffered > OUTBOX_LIMIT_BYTES:
            if client.behind_since is None:
                client.behind_since = now
            self._behind.add(client.actor_id)
            self.game.resync(client.actor_id)
            return False
        refused = getattr(msg, "rej", None)
        if refused:
            self.metrics.rejected(REASONS[code] for code in refused[1::2])
        data = encode_server(msg)
        self._write(client, data)
        aid = client.actor_id
        audience = self._audience
        if (
            audience is not None
            and aid in audience.by_actor
            and audience.forward(aid, data, type(msg) is Snapshot)
        ):
            self.game.resync(aid)  # a spectator waits for a snapshot
        return True

    def _worst_pause_ms(self) -> float:
        return 0.0 if self._pauses is None else self._pauses.take_worst() * 1000.0

    def _report(self) -> None:
        d = sorted(self.stats.durations)
        if d:
            log.info(
                "players %d, tick %d, tick ms p50 %.2f p99 %.2f, late %d",
                len(self.clients),
                self.game.world.tick,
                d[len(d) // 2],
                d[min(len(d) - 1, int(len(d) * 0.99))],
                self.stats.late,
            )
        self.stats = TickStats()

    # ----------------------------------------------------------- sending

    def _send_raw(self, client: Client, data: bytes) -> None:
        if _over_cap(client.ws):
            return
        self._write(client, data)

    def _write(self, client: Client, data: bytes) -> None:
        client.sent_bytes += len(data)
        self.metrics.sent(len(data))
        send_binary(client.ws, data)
        if self.recorder is not None:
            self._record(client.ws, self.game.world.tick, data)

    # ----------------------------------------------------------- connections

    def _new_connection(
        self, conn_class: type[GuardedConnection], ws_server: WsServer
    ) -> ServerConnection:
        """One connection of ``ws_server``, as the protocol factory ``serve``
        builds for it makes them (same sans-I/O protocol limits, same
        connection class and timeouts), for :class:`BulkAcceptor`."""
        return conn_class(
            ServerProtocol(max_size=MAX_FRAME_BYTES),
            ws_server,
            ping_interval=self.limits.keepalive_interval_s,
            ping_timeout=self.limits.keepalive_timeout_s,
            close_timeout=CLOSE_TIMEOUT_S,
        )

    # ----------------------------------------------------------- the link

    def current_tick(self) -> int:
        return int(self.game.world.tick)

    def players_online(self) -> int:
        return len(self.game.seats)

    def _answer_http(self, ws: ServerConnection, request: Request) -> Response | None:
        return self.metrics.process_request(ws, request)

    async def _seat(self, ws: ServerConnection, joining: Joining) -> Client | None:
        hello, session = joining.hello, joining.session
        try:
            welcome, replaced = self.game.join(
                hello.name, hello.token, hello.cls, session, may_create=joining.may_create
            )
        except GameError as exc:
            await self._join_refused(ws, joining, exc.code, exc.detail)
            return None
        old = self.clients.get(welcome.id)
        if replaced is not None and old is not None:
            old.extra["replaced"] = True
            self._replace(old.ws)
        session.welcomed()
        client = Client(ws, welcome.id, session, joining.bucket, *chat_buckets(time.monotonic()))
        self.clients[welcome.id] = client
        self._behind.discard(welcome.id)  # a new connection starts caught up
        self._send_raw(client, encode_server(welcome))
        if self.recorder is not None:  # its game's recording begins, with no token in it
            blank = encode_server(replace(welcome, token=""))
            self.recorder.begin(ws, welcome.name, blank, self.game.world.tick)
        self.audience.refusing.discard(welcome.id)  # a new connection lets them watch
        if self.audience.count(welcome.id):
            self._send_raw(client, encode_server(Watchers(self.audience.count(welcome.id))))
        self._joined(
            ws, joining, welcome.name, welcome.id, welcome.resumed, self._depth(welcome.id)
        )
        return client

    async def _unseat(self, client: Client) -> None:
        if self.clients.get(client.actor_id) is client:
            del self.clients[client.actor_id]
            # Gone, so no longer behind: the gauge must not count it until
            # the next tick's pass finds it missing.
            self._behind.discard(client.actor_id)
        seat = self.game.seats.get(client.actor_id)
        if seat is not None and seat.session is client.session:
            self.metrics.count("leaves")
            where = client_of(client.ws)
            log.info(
                "%s left",
                seat.name,
                extra={
                    "event": "leave",
                    "player": seat.name,
                    "actor": client.actor_id,
                    "address": where,
                    "depth": self._depth(client.actor_id),
                    "code": client.extra.get("closed_by"),
                },
            )
        self.game.leave(client.actor_id, client.session)
        if self.recorder is not None:
            self.recorder.end(client.ws)
        if self.clients.get(client.actor_id) is None:  # not replaced by a new connection
            self.audience.refusing.discard(client.actor_id)
        if client.actor_id not in self.game.seats:
            self._end_spectators(
                client.actor_id, ErrorCode.GONE, "the player you watched left the game"
            )

    def _depth(self, actor_id: int) -> int | None:
        actor = self.game.world.actors.get(actor_id)
        return None if actor is None else int(actor.depth)

    def _route(self, client: Client, msg: Command | Look | Chat, raw: bytes | str) -> None:
        """Carry out a playing client's command, look or chat line in the game."""
        if isinstance(msg, Command):
            client.actions += 1
            try:
                self.game.carry_out(client.actor_id, msg)
                self.metrics.command(msg.c._value_)  # .value: an Enum property, 0.2 us
            except (ValueError, KeyError) as exc:
                self._error_now(client.ws, ProtocolError(ErrorCode.BAD_FIELD, str(exc)))
        elif isinstance(msg, Chat):
            self._chat(client, msg)
        else:
            self._reply(client.ws, self.game.look(client.actor_id, msg.id))

    # ----------------------------------------------------------- spectators

    async def _watch(self, spectator: Spectator) -> bool:
        seat = self.game.by_name.get(spectator.watched.lower())
        client = self.clients.get(seat.actor_id) if seat is not None else None
        ws = spectator.ws
        if seat is None or client is None:
            text = f"nobody called {spectator.watched} is playing"
            await self._refuse(ws, spectator.name, ErrorCode.NOT_PLAYING.value, text)
            return False
        if seat.actor_id in self.audience.refusing:
            text = f"{seat.name} does not want to be watched"
            await self._refuse(ws, spectator.name, ErrorCode.NOT_WATCHABLE.value, text)
            return False
        spectator.actor_id, spectator.watched = seat.actor_id, seat.name
        spectator.session.watching()
        self._reply(ws, spectator_welcome(self.game.welcome(seat, None, False)))
        spectator.asked = True
        self.audience.add(spectator)
        self.game.resync(seat.actor_id)  # its next frame, a snapshot, starts the spectator
        self._tell_count(seat.actor_id)
        return True

    def _unwatch(self, spectator: Spectator) -> None:
        if self.audience.remove(spectator) is not None:
            self._tell_count(spectator.actor_id)

    def _tell_count(self, actor_id: int) -> None:
        """Tell player ``actor_id`` how many watch it now (``watchers``)."""
        client = self.clients.get(actor_id)
        if client is not None:
            self._send_raw(client, encode_server(Watchers(self.audience.count(actor_id))))

    def _tell_watchers(self, seated: Client) -> None:
        self._tell_count(seated.actor_id)

    def _watch_line(self, speaker: Client | Spectator, text: str) -> None:
        """A line of ``speaker`` (a player or one of its spectators) to the
        player's watch scope, encoded once for all."""
        seat = self.game.seats.get(speaker.actor_id)
        if seat is None:
            return  # the player left: its spectators are being closed
        sender = speaker.name if isinstance(speaker, Spectator) else seat.name
        out = ChatOut(sender, text, self.game.world.tick, scope="watch", to=seat.name)
        player = self.clients.get(speaker.actor_id)
        targets = [s.ws for s in self.audience.by_actor.get(speaker.actor_id, ())]
        if player is not None:
            targets.append(player.ws)
        data = encode_server(out)
        broadcast([ws for ws in targets if not _over_cap(ws)], data)
        if player is not None and self.recorder is not None and not _over_cap(player.ws):
            self._record(player.ws, self.game.world.tick, data)

    def lobby_players(self) -> tuple[int, list[LobbyRow]]:
        """Every seated player's lobby row (``/lobby.json``)."""
        rows = []
        actors = self.game.world.actors
        for actor_id, client in self.clients.items():
            actor = actors.get(actor_id)
            if actor is not None:
                rows.append(
                    LobbyRow(actor.name, actor.cls or "", actor.level, actor.depth, client.actions)
                )
        return len(self.clients), rows

    def _chat(self, client: Client, msg: Chat) -> None:
        """Send a chat line to its scope (within the player's chat rates);
        the line is encoded once for all its recipients."""
        hearers, out = self.game.chat(client.actor_id, msg.text, msg.scope, msg.to)
        data = encode_server(out)
        targets = [
            c.ws for a in hearers if (c := self.clients.get(a)) is not None and not _over_cap(c.ws)
        ]
        broadcast(targets, data)
        if self.recorder is not None:
            tick = self.game.world.tick
            for ws in targets:
                self._record(ws, tick, data)
