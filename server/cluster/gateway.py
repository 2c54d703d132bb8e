"""A cluster gateway: the players' websockets, routed to the workers.

It speaks the client protocol unchanged (docs/protocol.md, version 10): a
client cannot tell a gateway from ``underhall serve``. It holds no game
state: on ``hello`` it asks the workers (``P.join``) to seat the player,
passes the ``welcome`` on, then forwards each checked client message to
the worker holding the player and writes the frames that worker publishes
for it. Pings are answered here; global and private chat go to every
gateway over ``P.chat``; level chat, commands and looks go to the worker.

Each player's route is ``(worker, epoch)``. A frame is written only if it
carries the route's epoch, so a late frame of a worker the player left is
dropped. During a hand-off (``moving``) and while a player is seated again
after its worker died or let it go (``lost``, or no heartbeat for
:data:`~server.cluster.bus.SILENT_S`), the client's messages wait in a
small buffer and go to the new worker once the ``route`` notice names it.

For the operator, the gateway's port also answers ``GET /metrics``
(:mod:`server.cluster.gateway_metrics`), and ``--admin-socket`` opens the
admin channel of ``underhall serve`` with the commands that make sense for
a gateway (:mod:`server.cluster.gateway_admin`). An operator's notice
travels on ``P.chat`` as a line from ``""`` with no scope, and every
gateway writes it as ``serve`` writes its notices. Every gateway, with an
admin socket or not, carries out the cluster-wide parts of the operators'
commands: it disconnects a player banned (``P.bans``) or kicked (``P.kick``)
through any gateway, holds a kicked name out, and answers ``P.who`` with its
players (:meth:`Gateway.gather` collects such answers).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import signal
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, TypeVar

import msgpack  # type: ignore[import-untyped]
import nats
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from websockets.asyncio.server import ServerConnection, serve
from websockets.http11 import Request, Response
from websockets.protocol import State
from websockets.server import ServerProtocol

from protocol.codec import encode_server
from protocol.errors import ErrorCode
from protocol.limits import (
    MAX_FRAME_BYTES,
)
from protocol.messages import Chat, ChatOut, Command, Error, Hello, Look, Watchers
from protocol.session import ServerSession
from server.cluster.bus import HEARTBEAT_S, LOBBY_EVERY_S, SILENT_S, Subjects
from server.cluster.gateway_metrics import GatewayMetrics
from server.cluster.messages import (
    ANSWER,
    BAN_NOTICE,
    TO_GATEWAY,
    Answer,
    Ban,
    ChatLine,
    Closed,
    Found,
    Frames,
    FromClient,
    GatewayBeat,
    Heartbeat,
    Inbound,
    JoinReply,
    JoinRequest,
    Kick,
    Leave,
    LobbyReport,
    Moving,
    PlayerRow,
    Present,
    Replaced,
    Resync,
    Route,
    Seek,
    ToWorker,
    decode,
    encode,
)
from server.cluster.watching import (
    WATCH_ASK_TIMEOUT_S,
    WATCH_NOTICE,
    WatchAnswer,
    WatchAsk,
    WatchCount,
    Watched,
    WatchEnd,
    watch_gateway_subject,
    watch_subject,
    watch_worker_subject,
)
from server.game.bans import BanList
from server.net.admin import KICK_TEXT
from server.net.front import Front, FrontOptions, Joining, client_of
from server.net.guard import (
    BINARY_HEADS,
    AddressBook,
    binary_head,
    buffered_output,
    guarded_connection_class,
    raise_open_file_limit,
    send_binary,
)
from server.net.metrics import TEXT_PLAIN, http_response, metrics_answer
from server.net.ratelimit import TokenBucket, chat_buckets
from server.net.watch import Spectator, spectator_welcome_map
from server.net.web import LobbyRow

log = logging.getLogger("underhall.gateway")

T = TypeVar("T")

JOIN_TIMEOUT_S = 4.0
"""Seconds one join request may take."""
LIVE_S = 2.5 * HEARTBEAT_S
"""A worker heard from within this many seconds is asked to seat joins."""
JOIN_PATIENCE_S = 30.0
"""Seconds a player may wait to be seated while no worker is heard from
(joins that find no holder are retried: a dead worker's lease takes up to
its lease time to expire)."""
JOIN_GIVE_UP_S = 120.0
"""Seconds a player may wait to be seated while workers are heard from: a
burst of joins queues rather than being refused (issue 43: 5,081 of 12,000
players joining at 1,200 a second were refused ``server_full`` by a
cluster with room)."""
BUFFER_LIMIT = 64
"""Client messages held per player while it moves; older ones are dropped."""
OUTBOX_LIMIT_BYTES = 256 * 1024
"""Socket write buffer above which a client gets no frames (and a snapshot later)."""
INBOUND_EVERY_S = 0.005
"""Seconds at least between two :class:`Inbound` messages of a gateway
carrying only clients' messages: a command waits at most this long to go to
its worker (a tick is 100 ms); a leave or a resync goes at once, with what
was queued before it."""
CLOSE_WAIT_S = 2.0
"""Seconds a stopping gateway waits for each closing handshake."""
GATHER_S = 0.5
"""Seconds :meth:`Gateway.gather` waits for the other gateways' answers (it
stops sooner once every gateway heard within :data:`LIVE_S` has answered)."""


@dataclass(eq=False, slots=True)
class Player:
    """One seated connection and its route."""

    ws: ServerConnection
    session: ServerSession
    name: str
    token: str
    actor_id: int
    worker: str
    epoch: int
    bucket: TokenBucket
    chat: TokenBucket
    global_chat: TokenBucket
    moving: bool = False
    rejoining: bool = False
    behind: bool = False
    buffer: deque[bytes] = field(default_factory=lambda: deque(maxlen=BUFFER_LIMIT))
    depth: int | None = None
    """The depth of the last snapshot written to the client (None before one)."""
    address: str = "?"
    """The client's ``host:port``."""
    transport: asyncio.WriteTransport = field(init=False)
    """``ws.transport`` (one connection's for its life), read per frame."""
    protocol: ServerProtocol = field(init=False)
    """``ws.protocol``, read per frame."""

    def __post_init__(self) -> None:
        self.transport = self.ws.transport
        self.protocol = self.ws.protocol


class Gateway(Front):
    """Serve players over websockets for a cluster of workers.

    Args:
        nats_url: The NATS server.
        gateway_id: This gateway's id (letters, digits, ``-`` and ``_``).
        front: Where it listens (port 0 picks a free one: see :attr:`port`
            once ready), the caps ``underhall serve`` puts on connections
            (per address, open files, control frames, buffered output,
            keepalive; the per-character ones are the workers' business) and
            the admin socket (:class:`~server.cluster.gateway_admin.GatewayOperator`).
            None: :class:`~server.net.front.FrontOptions`' defaults.
        prefix: The cluster's subject prefix.
        max_players: Players this gateway seats at most (None: no cap); a
            join beyond is refused ``server_full``, as by ``serve
            --max-players``, unless it replaces a connection of the same
            character here.

    Besides websockets, the port answers ``GET /healthz`` (``ok`` while the
    process runs), ``GET /readyz`` (``ready`` while a worker has been heard
    within :data:`LIVE_S` and no drain has begun, else 503), for a load
    balancer or an orchestrator, and ``GET /metrics`` (the Prometheus text
    format, :class:`~server.cluster.gateway_metrics.GatewayMetrics`).
    """

    metrics: GatewayMetrics
    stopping_text = "the gateway is stopping"

    def __init__(
        self,
        nats_url: str,
        *,
        gateway_id: str,
        front: FrontOptions | None = None,
        prefix: str = "uh",
        max_players: int | None = None,
    ) -> None:
        super().__init__(front or FrontOptions())
        self.max_players = max_players
        self.nats_url = nats_url
        self.id = gateway_id
        self.subjects = Subjects(prefix)
        self.players: dict[int, Player] = {}
        self.heartbeats: dict[str, float] = {}
        """Worker id -> ``time.monotonic()`` of its last heartbeat."""
        self.gateway_beats: dict[str, float] = {}
        """Other gateways' ids -> ``time.monotonic()`` of their last heartbeat."""
        self.lobby_reports: dict[str, tuple[float, LobbyReport]] = {}
        """Worker id -> when its latest lobby report came (``time.monotonic()``),
        and the report (:meth:`lobby_players`)."""
        self.tick = 0
        self.handoffs = 0
        self.dropped = {"stale": 0, "behind": 0, "cut": 0}
        """Workers' frames not written, by reason: ``stale`` (the player left,
        or an old epoch), ``behind`` (the client is not reading), ``cut``
        (over the guard's output cap)."""
        self._routes: dict[int, tuple[str, int]] = {}
        """Actor id -> (worker, epoch) of the latest route notice for a player
        not seated here yet: a join's answer may arrive after the player
        already moved on (a reconnect during a hand-off), and the seat then
        takes the newer route instead of waiting for frames that never come."""
        self._outbox: dict[str, list[ToWorker]] = {}
        """Worker id -> messages for it queued in this turn of the event loop."""
        self._flush_soon = False
        """Whether :meth:`_flush_outbox` runs at the end of this turn of the loop."""
        self._flush_later: asyncio.TimerHandle | None = None
        self._flushed_at = 0.0
        """The event loop's time of the last :class:`Inbound` sent."""
        self.holds = BanList()
        """Names kicked through any gateway's admin socket, kept out of this
        gateway for :data:`~server.game.bans.KICK_HOLD_S` (in memory only;
        the bans are the workers' to check)."""
        self.metrics = GatewayMetrics(self)
        self.nc: NatsClient

    async def run(
        self, ready: asyncio.Future[int] | None = None, install_signals: bool = True
    ) -> None:
        """Serve until SIGTERM/SIGINT, :meth:`stop` or the end of a
        :meth:`drain`; players are then told the gateway stops (their
        characters stay with the workers until the workers see them leave).

        Args:
            ready: Set to the port once the gateway listens.
            install_signals: Stop on SIGTERM and SIGINT.

        Raises:
            OSError: The admin socket or the port cannot be bound.
            nats.errors.Error: NATS cannot be reached.
        """
        async with contextlib.AsyncExitStack() as stack:
            if self.admin_socket is not None:
                from server.cluster.gateway_admin import GatewayOperator
                from server.net.admin import AdminServer

                await stack.enter_async_context(
                    AdminServer(GatewayOperator(self), self.admin_socket)
                )
            await self._run(ready, install_signals)

    async def _run(self, ready: asyncio.Future[int] | None, install_signals: bool) -> None:
        self.nc = await nats.connect(
            self.nats_url, name=f"gateway {self.id}", max_reconnect_attempts=-1
        )
        await self.nc.subscribe(self.subjects.gateway(self.id), cb=self._on_worker)
        await self.nc.subscribe(self.subjects.chat, cb=self._on_chat)
        await self.nc.subscribe(self.subjects.heartbeats, cb=self._on_heartbeat)
        await self.nc.subscribe(self.subjects.gateway_heartbeats, cb=self._on_gateway_beat)
        await self.nc.subscribe(self.subjects.bans, cb=self._on_bans)
        await self.nc.subscribe(self.subjects.kick, cb=self._on_kick)
        await self.nc.subscribe(self.subjects.who, cb=self._on_who)
        await self.nc.subscribe(self.subjects.seek, cb=self._on_seek)
        prefix = self.subjects.prefix
        await self.nc.subscribe(watch_subject(prefix), cb=self._on_watch_ask)
        await self.nc.subscribe(watch_gateway_subject(prefix, self.id), cb=self._on_watch_notice)
        await self.nc.subscribe(self.subjects.lobby_reports, cb=self._on_lobby_report)
        if install_signals:
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, self.stop)
        # Heard at once: other gateways wait for the answers of those they hear.
        await self.nc.publish(self.subjects.gateway_heartbeat(self.id), encode(GatewayBeat(0)))
        watch = asyncio.create_task(self._watch_workers())
        self.book = AddressBook(self.limits, raise_open_file_limit())
        async with serve(
            self._handle,
            self.host,
            self.port,
            compression=None,
            max_size=MAX_FRAME_BYTES,
            close_timeout=2.0,
            ping_interval=self.limits.keepalive_interval_s,
            ping_timeout=self.limits.keepalive_timeout_s,
            create_connection=guarded_connection_class(self.book),
            process_request=self._process_request,
        ) as server:
            self.port = int(next(iter(server.sockets)).getsockname()[1])
            log.info("gateway %s listening on ws://%s:%d", self.id, self.host, self.port)
            if ready is not None and not ready.done():
                ready.set_result(self.port)
            await self._stop.wait()
            watch.cancel()
            data = encode_server(
                Error(code=ErrorCode.SHUTDOWN.value, msg="the gateway is stopping", fatal=True)
            )
            spectators = [s.ws for each in self.audience.by_actor.values() for s in each]
            self._send_all([p.ws for p in self.players.values()] + spectators, data)
            for ws in spectators + [p.ws for p in self.players.values()]:  # not "gone"
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(ws.close(1001, "gateway shutdown"), CLOSE_WAIT_S)
        log.info(
            "stats: frames %d, frame bytes %d, route changes %d",
            self.metrics.frames_sent,
            self.metrics.bytes_sent,
            self.handoffs,
        )
        with contextlib.suppress(Exception):  # NATS may be gone: do not hang
            await asyncio.wait_for(self.nc.drain(), 5.0)

    def stop(self) -> None:
        """Ask :meth:`run` to finish now (no grace for the players)."""
        self.draining = True
        self._stop.set()

    def drain(self, grace_s: float | None = None) -> float:
        """Begin a graceful stop; :meth:`run` finishes when the grace is over.

        From now on joins are refused (``shutdown``) and ``/readyz`` answers
        503. With a grace period, every player of this gateway gets a notice
        saying how long is left, and plays on meanwhile; then it goes as
        after :meth:`stop`. The characters stay with the workers, so a
        gateway has nothing to save: with nobody playing, or no grace, it
        stops at once.

        Args:
            grace_s: Seconds of play left to the players (None: none).

        Returns:
            The grace period in seconds (that of a drain already under way).
        """
        if self.draining:
            return self._grace
        self.draining = True
        grace = max(0.0, grace_s or 0.0) if self.players else 0.0
        self._grace = grace
        if grace <= 0:
            self.stop()
            return 0.0
        notice = f"This gateway stops in {grace:.0f} s. Your character is kept: connect again."
        self._send_all(
            [p.ws for p in self.players.values()],
            encode_server(ChatOut(sender="", text=notice, tick=self.tick)),
        )
        asyncio.get_running_loop().call_later(grace, self.stop)
        log.info("draining: %d players, %.0f s of grace", len(self.players), grace)
        return grace

    @property
    def ready(self) -> bool:
        """Whether joins are accepted: a worker heard within :data:`LIVE_S`, no drain."""
        return not self.draining and bool(self.live_workers())

    def _answer_http(self, ws: ServerConnection, request: Request) -> Response | None:
        """Answer the health checks and the metrics; query strings are
        ignored (``/metrics?x`` is ``/metrics``)."""
        path = request.path.split("?", 1)[0]
        if path == "/metrics":
            return http_response(ws, *metrics_answer(self.metrics.registry))
        if path == "/healthz":
            return http_response(ws, 200, TEXT_PLAIN, b"ok\n")
        if path == "/readyz":
            if self.ready:
                return http_response(ws, 200, TEXT_PLAIN, b"ready\n")
            why = b"draining\n" if self.draining else b"no worker\n"
            return http_response(ws, 503, TEXT_PLAIN, why)
        return None

    def _refused_connection(self, status: HTTPStatus) -> None:
        self.metrics.count("refused", REFUSAL_REASONS.get(status, str(int(status))))

    # ----------------------------------------------------------- operators

    def live_workers(self) -> list[str]:
        """Ids of the workers heard within :data:`LIVE_S`, sorted."""
        return self._live_workers(set())

    def live_gateways(self) -> list[str]:
        """Ids of the gateways heard within :data:`LIVE_S` (this one included), sorted."""
        now = time.monotonic()
        heard = {g for g, t in self.gateway_beats.items() if now - t <= LIVE_S}
        return sorted(heard | {self.id})

    def disconnect(self, name: str, code: str, text: str) -> int:
        """Close the connections of the players called ``name`` (any case)
        seated here, as ``underhall serve`` does: the fatal error ``code``
        with ``text``, then close code 1008 with ``code`` as the reason.

        Returns:
            How many connections were closed (0: nobody of that name here).
        """
        found = [p for p in self.players.values() if p.name.lower() == name.lower()]
        data = encode_server(Error(code=code, msg=text, fatal=True))
        for p in found:
            self._send(p.ws, data)
            self._close_soon(p.ws, 1008, code)
        return len(found)

    def kick(self, name: str) -> int:
        """Hold ``name`` (any case) out of this gateway and disconnect it here.

        The name is refused (``kicked``) for
        :data:`~server.game.bans.KICK_HOLD_S` seconds whether or not it is
        seated here (a kick goes to every gateway: the player may come back
        through any); a player of that name here gets the fatal error
        ``kicked`` and close code 1008, as from ``underhall serve``.

        Returns:
            How many connections were closed here.
        """
        self.holds.kick(name)
        return self.disconnect(name, ErrorCode.KICKED.value, KICK_TEXT)

    def who_here(self) -> list[PlayerRow]:
        """The players seated through this gateway, by name: ``name``,
        ``actor``, ``worker``, ``epoch``, ``depth`` (of the last snapshot sent;
        None before one), ``address``, ``state`` (``playing``, ``moving``
        during a hand-off, ``reseating`` after its worker was lost)."""
        return [
            PlayerRow(
                name=p.name,
                actor=p.actor_id,
                worker=p.worker,
                epoch=p.epoch,
                depth=p.depth,
                address=p.address,
                state="reseating" if p.rejoining else "moving" if p.moving else "playing",
            )
            for p in sorted(self.players.values(), key=lambda p: (p.name.lower(), p.actor_id))
        ]

    async def gather(
        self, send: Callable[[str], Awaitable[T]], wait_s: float = GATHER_S
    ) -> tuple[T, dict[str, Answer]]:
        """Ask every gateway something and collect their answers.

        ``send(inbox)`` publishes (or requests) with ``inbox`` as the reply
        subject; each gateway answers there with an
        :data:`~server.cluster.messages.Answer` naming itself.
        Answers are collected from when ``send`` returns for at most
        ``wait_s`` seconds, or until every gateway of :meth:`live_gateways`
        (this one included) has answered.

        Returns:
            What ``send`` returned, and the answers by gateway id.

        Raises:
            Whatever ``send`` raises (NATS errors); nothing is then gathered.
        """
        answers: dict[str, Answer] = {}
        heard = asyncio.Event()

        async def take(msg: Msg) -> None:
            with contextlib.suppress(ValueError):
                answer = ANSWER.decode(msg.data)
                answers[answer.gateway] = answer
                heard.set()

        inbox = self.nc.new_inbox()
        sub = await self.nc.subscribe(inbox, cb=take)
        try:
            result = await send(inbox)
            deadline = time.monotonic() + wait_s
            while not set(self.live_gateways()) <= answers.keys():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                heard.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(heard.wait(), left)
        finally:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        return result, answers

    async def _answer(self, msg: Msg, answer: Answer) -> None:
        """Answer a gathered question (:meth:`gather`)."""
        if msg.reply:
            with contextlib.suppress(Exception):
                await self.nc.publish(msg.reply, encode(answer))

    async def _on_bans(self, msg: Msg) -> None:
        """The cluster's bans changed (a worker wrote them): a banned player
        here is disconnected as ``serve`` disconnects one (``banned``, with
        the reason); an unban lifts a kick hold of the name, as in ``serve``."""
        try:
            notice = BAN_NOTICE.decode(msg.data)
        except ValueError:
            return
        closed = 0
        if isinstance(notice, Ban):
            reason = notice.reason
            closed = self.disconnect(
                notice.name, ErrorCode.BANNED.value, "banned" + (f": {reason}" if reason else "")
            )
            if closed:
                log.info("%s banned: disconnected", notice.name)
        else:
            self.holds.unban(notice.name)
        await self._answer(msg, Closed(self.id, closed))

    async def _on_kick(self, msg: Msg) -> None:
        """An operator kicked a name through some gateway: hold it out here too."""
        try:
            name = decode(msg.data, Kick).name
        except ValueError:
            return
        closed = self.kick(name)
        if closed:
            log.info("%s kicked: disconnected", name)
        await self._answer(msg, Closed(self.id, closed))

    async def _on_who(self, msg: Msg) -> None:
        """An operator asks who plays: this gateway's players."""
        await self._answer(msg, Present(self.id, self.who_here(), self.draining))

    async def _on_seek(self, msg: Msg) -> None:
        """Someone sends a private line: the name as this gateway's player of
        that name spells it, or None."""
        try:
            name = decode(msg.data, Seek).name
        except ValueError:
            return
        await self._answer(msg, Found(self.id, self._spelling(name)))

    def _spelling(self, name: str) -> str | None:
        key = name.lower()
        return next((p.name for p in self.players.values() if p.name.lower() == key), None)

    async def _private(self, p: Player, text: str, to: str) -> None:
        """Send a private line from ``p`` to the player called ``to`` on any
        gateway, as ``serve`` does: when nobody of that name plays, only ``p``
        hears so, in a notice (the line goes nowhere)."""
        found = self._spelling(to)
        if found is None:
            _, answers = await self.gather(
                lambda inbox: self.nc.publish(self.subjects.seek, encode(Seek(to)), reply=inbox)
            )
            found = next(
                (a.spelling for a in answers.values() if isinstance(a, Found) and a.spelling),
                None,
            )
        if self.players.get(p.actor_id) is not p:
            return  # the sender left meanwhile
        if found is None:
            notice = ChatOut(sender="", text=f"nobody called {to} is playing", tick=self.tick)
            self._reply(p.ws, notice)
            return
        line = ChatLine(p.name, text, "private", found, self.tick)
        await self.nc.publish(self.subjects.chat, encode(line))

    async def _on_gateway_beat(self, msg: Msg) -> None:
        gateway = msg.subject.rsplit(".", 1)[1]
        if gateway != self.id:
            self.gateway_beats[gateway] = time.monotonic()

    async def notice(self, text: str) -> None:
        """Send an operator notice to every player of every gateway of the cluster.

        It goes on the cluster's chat subject; each gateway writes it to its
        players as ``serve`` writes a broadcast (a ``chat`` from ``""``
        without a scope). Returns once NATS has it.

        Raises:
            nats.errors.Error: NATS did not take it within 2 s (it may not
                have been sent).
        """
        await self.nc.publish(self.subjects.chat, encode(ChatLine("", text, None, None, self.tick)))
        await self.nc.flush(timeout=2)

    def _send_all(self, targets: list[ServerConnection], data: bytes) -> None:
        """Write ``data`` to each of ``targets`` (those still open), counted."""
        for ws in targets:
            send_binary(ws, data)
        self.metrics.sent(len(data), len(targets))
        if self.recorder is not None:
            for ws in targets:
                self._record(ws, self.tick, data)

    # ----------------------------------------------------------- from workers

    async def _on_worker(self, msg: Msg) -> None:
        try:
            event = TO_GATEWAY.decode(msg.data)
        except ValueError:
            return
        if isinstance(event, Frames):
            self._frames(event.entries)
        elif isinstance(event, Route):
            aid, epoch = event.actor, event.epoch
            p = self.players.get(aid)
            if p is None:  # joining (the answer is on its way), or it left while moving
                known = self._routes.get(aid)
                if known is None or known[1] < epoch:
                    self._routes[aid] = (event.worker, epoch)
                self._spawn(self._orphan(aid, event.worker, epoch))
                return
            if epoch < p.epoch:
                return
            if p.worker != event.worker:
                self.handoffs += 1
            moved = (p.worker, p.epoch) != (event.worker, epoch)
            p.worker, p.epoch = event.worker, epoch
            p.moving = p.rejoining = False
            self._flush_buffer(p)
            if moved and aid in self._watch_counts:
                self._send_watched(p, resync=True)
        elif isinstance(event, Moving):
            p = self.players.get(event.actor)
            if p is not None and p.epoch == event.epoch:
                p.moving = True
        elif isinstance(event, Replaced):
            p = self.players.get(event.actor)
            if p is not None and p.epoch == event.epoch:
                del self.players[event.actor]  # its close must not tell the worker it left
                self._replace(p.ws)
                self._player_gone(p, "the player you watched connected again elsewhere")
        else:
            p = self.players.get(event.actor)
            if p is not None and p.epoch == event.epoch and not p.rejoining:
                self._rejoin(p, "lost")

    def _flush_buffer(self, p: Player) -> None:
        """Send the messages ``p`` sent while it moved to its worker now."""
        while p.buffer:
            self._to_worker(p.worker, FromClient(p.actor_id, p.epoch, p.buffer.popleft()))

    async def _orphan(self, aid: int, worker: str, epoch: int) -> None:
        """A route notice for a player not seated here: if it is still not
        seated (under that epoch or a later one) after a join's patience, it
        left while moving; tell its new holder, which saves it."""
        await asyncio.sleep(JOIN_TIMEOUT_S + 1.0)
        if self._routes.get(aid) == (worker, epoch):
            del self._routes[aid]
        p = self.players.get(aid)
        if p is None or p.epoch < epoch:
            self.metrics.count("orphans")
            self._to_worker(worker, Leave(aid, epoch))

    def _frames(self, entries: list[tuple[int, int, bytes]]) -> None:
        """Write a batch's frames to their players' sockets, in order.

        The common case (the player is here under that epoch, its client
        reads, its connection is open) costs a dict lookup, a look at the
        transport and one write of the frame's header and payload, as
        :func:`~server.net.guard.send_binary` writes them; anything else
        takes :meth:`_not_written`."""
        players = self.players
        heads = BINARY_HEADS
        limit = OUTBOX_LIMIT_BYTES
        stale = sent = size = 0
        watched = self._audience.by_actor if self._audience is not None else None
        recorder = self.recorder
        for aid, epoch, data in entries:
            p = players.get(aid)
            if p is None or p.epoch != epoch:
                if watched and aid in watched and p is None:
                    self._to_spectators(aid, epoch, data)  # of a player held elsewhere
                    continue
                stale += 1
                continue  # gone, or a late frame from a worker it left
            transport = p.transport
            if p.behind or transport.get_write_buffer_size() > limit or transport.is_closing():
                self._not_written(p)
                continue
            if p.protocol.state is not State.OPEN:
                continue  # closing: its end is under way
            n = len(data)
            if data.startswith(SNAP_MARK, 1):
                p.depth = snapshot_depth(data)
            elif p.depth is None:
                # Seated, but no snapshot written yet: the worker's first one
                # came before its answer to the join and was dropped, and the
                # one asked for at the seat (Resync) is on its way; a delta
                # before it would not apply.
                stale += 1
                continue
            transport.write(heads[n] + data if n < 126 else binary_head(n) + data)
            sent += 1
            size += n
            if recorder is not None:
                recorder.frame(p.ws, self.tick, data)
            if watched and aid in watched:
                self._to_spectators(aid, epoch, data, p)
        if stale:
            self.dropped["stale"] += stale
        self.metrics.frames_sent += sent
        self.metrics.bytes_sent += size

    def _not_written(self, p: Player) -> None:
        """A frame for ``p`` is not written: its connection is cut off (over
        the guard's output cap, which aborts it here) or closing, or its
        client is behind (output buffered over :data:`OUTBOX_LIMIT_BYTES`);
        a client that caught up gets a snapshot next (this frame is dropped,
        and its worker asked for one)."""
        buffered = buffered_output(p.ws)
        if buffered is None:
            self.dropped["cut"] += 1  # not reading at all: the guard's output cap
        elif buffered > OUTBOX_LIMIT_BYTES:
            self.dropped["behind"] += 1
            p.behind = True
        elif p.behind:  # caught up: what it missed needs a snapshot
            self.dropped["behind"] += 1
            p.behind = False
            self._to_worker(p.worker, Resync(p.actor_id, p.epoch))
        # else closing: its end is under way

    async def _on_chat(self, msg: Msg) -> None:
        """A line on the cluster's chat subject: global or private, or an
        operator's notice (sender ``""``, no scope)."""
        try:
            line = decode(msg.data, ChatLine)
        except ValueError:
            return
        sender, text, scope, to, tick = line.sender, line.text, line.scope, line.to, line.tick
        out = encode_server(
            ChatOut(sender=sender, text=text, tick=tick, scope=scope, to=to)
            if scope in ("private", "watch")
            else ChatOut(sender=sender, text=text, tick=tick, scope=scope)
        )
        if scope == "private":
            names = {str(sender).lower(), str(to).lower()}
            targets = [p.ws for p in self.players.values() if p.name.lower() in names]
        elif scope == "watch":
            watched = str(to).lower()
            targets = [p.ws for p in self.players.values() if p.name.lower() == watched]
            targets += [
                s.ws
                for spectators in self.audience.by_actor.values()
                for s in spectators
                if s.watched.lower() == watched
            ]
        else:
            targets = [p.ws for p in self.players.values()]
        kind = "notice" if scope is None else str(scope)
        self.metrics.count("chat_lines", kind)
        self.metrics.count("chat_deliveries", kind, by=len(targets))
        self._send_all(targets, out)

    async def _on_lobby_report(self, msg: Msg) -> None:
        worker = msg.subject.rsplit(".", 1)[1]
        with contextlib.suppress(ValueError):
            self.lobby_reports[worker] = (time.monotonic(), decode(msg.data, LobbyReport))

    def lobby_players(self) -> tuple[int, list[LobbyRow]]:
        """Who plays in the whole cluster, for ``/lobby.json``: the players
        of the workers' latest lobby reports (those heard within
        :data:`~server.cluster.bus.LOBBY_EVERY_S` + :data:`SILENT_S`; older
        ones are forgotten), counted and listed. A player in two reports (a
        hand-off between them) is listed once, as the newer report has it."""
        now = time.monotonic()
        online = 0
        rows: dict[str, LobbyRow] = {}
        for worker, (heard, report) in sorted(self.lobby_reports.items(), key=lambda w: w[1][0]):
            if now - heard > LOBBY_EVERY_S + SILENT_S:
                del self.lobby_reports[worker]
                continue
            online += report.online
            for p in report.players:
                rows[p.name.lower()] = LobbyRow(p.name, p.cls, p.level, p.depth, p.turns)
        return online, list(rows.values())

    async def _on_heartbeat(self, msg: Msg) -> None:
        worker = msg.subject.rsplit(".", 1)[1]
        self.heartbeats[worker] = time.monotonic()
        with contextlib.suppress(ValueError):
            self.tick = max(self.tick, decode(msg.data, Heartbeat).tick)

    async def _watch_workers(self) -> None:
        """Seat again, elsewhere, the players of a worker that fell silent;
        say that this gateway lives."""
        beat = 0.0
        while True:
            await asyncio.sleep(0.5)
            if time.monotonic() - beat >= HEARTBEAT_S:
                beat = time.monotonic()
                with contextlib.suppress(Exception):
                    await self.nc.publish(
                        self.subjects.gateway_heartbeat(self.id),
                        encode(GatewayBeat(len(self.players))),
                    )
            self._end_orphaned_spectators()
            now = time.monotonic()
            for p in list(self.players.values()):
                # A worker not heard of yet is given SILENT_S from now.
                last = self.heartbeats.setdefault(p.worker, now)
                if not p.rejoining and now - last > SILENT_S:
                    log.warning("worker %s silent: seating %s again", p.worker, p.name)
                    self._rejoin(p, "silent")

    # ----------------------------------------------------------- to workers

    def _to_worker(self, worker: str, message: ToWorker) -> None:
        """Queue ``message`` for ``worker``. What is queued for one worker
        goes in one :class:`Inbound` (one NATS message and one socket write
        for many players' messages), in order, at the end of this turn of
        the event loop; a client's message (:class:`FromClient`) alone waits
        until :data:`INBOUND_EVERY_S` after the last one if that is later.
        Each client message published on its own made the NATS client's
        writes about 40% of a gateway's CPU; one message per turn of the
        loop still meant about one per command when players' commands
        arrive spread out, as they do."""
        box = self._outbox.get(worker)
        if box is None:
            box = self._outbox[worker] = []
        box.append(message)
        if self._flush_soon:
            return
        loop = asyncio.get_running_loop()
        wait = 0.0
        if isinstance(message, FromClient):
            wait = self._flushed_at + INBOUND_EVERY_S - loop.time()
        if wait <= 0:
            self._flush_soon = True
            loop.call_soon(self._flush_outbox)
        elif self._flush_later is None:
            self._flush_later = loop.call_later(wait, self._flush_outbox)

    def _flush_outbox(self) -> None:
        self._flush_soon = False
        if self._flush_later is not None:
            self._flush_later.cancel()
            self._flush_later = None
        if not self._outbox:
            return
        self._flushed_at = asyncio.get_running_loop().time()
        out, self._outbox = self._outbox, {}
        for worker, events in out.items():
            self._spawn(self._publish(self.subjects.inbox(worker), encode(Inbound(events))))

    async def _publish(self, subject: str, data: bytes) -> None:
        with contextlib.suppress(Exception):  # NATS gone: the heartbeats tell
            await self.nc.publish(subject, data)

    def _spawn(self, coro: Any) -> None:
        asyncio.ensure_future(coro)

    def _live_workers(self, avoid: set[str]) -> list[str]:
        """Workers heard within :data:`LIVE_S`, less ``avoid``."""
        now = time.monotonic()
        return sorted(w for w, t in self.heartbeats.items() if now - t <= LIVE_S and w not in avoid)

    async def _join(self, hello: Hello, token: str | None, *, create: bool = True) -> JoinReply:
        """Ask the workers to seat ``hello``'s player; retried while the
        answer says so: for at most :data:`JOIN_PATIENCE_S` while no worker
        is heard from, and while workers are, for at most
        :data:`JOIN_GIVE_UP_S` (a busy cluster makes a burst of joins wait,
        it does not refuse them). With ``create`` False, a name with no
        character is refused (``limited``: the address's new-characters cap)
        instead of created.

        Each try goes to one worker heard from within :data:`LIVE_S` (a
        random one, so joins spread), not to the shared join queue: a worker
        that is stalled but still connected (SIGSTOP, a long pause) keeps
        its place in a queue group and would swallow its share of joins
        until NATS gives up on it. A worker that did not answer in
        :data:`JOIN_TIMEOUT_S` is asked again by this join only once every
        live worker has failed to (busy is not dead: a dead one stops
        beating and leaves the live ones by itself); one that answered that
        it drains is not asked again. Only when no worker has been heard (a
        gateway just started) does the try use the queue.
        """
        request = encode(
            JoinRequest(
                name=hello.name,
                token=token,
                cls=hello.cls,
                gw=self.id,
                nonce=secrets.token_hex(8),  # a retry is the same join
                create=create,
            )
        )
        started = time.monotonic()
        delay = 0.2
        slow: set[str] = set()
        draining: set[str] = set()
        while True:
            live = self._live_workers(draining)
            if live and set(live) <= slow:
                slow.clear()  # every live worker is slow: all are asked again
            live = [w for w in live if w not in slow]
            target = secrets.choice(live) if live else None
            subject = self.subjects.join if target is None else self.subjects.join_at(target)
            try:
                reply = await self.nc.request(subject, request, timeout=JOIN_TIMEOUT_S)
                answer = decode(reply.data, JoinReply)
            except Exception as exc:  # noqa: BLE001 - no worker answered: retry
                answer = JoinReply(ok=False, code="retry", detail=repr(exc), retry=True)
                if target is not None:
                    slow.add(target)
            if target is not None and answer.draining:
                draining.add(target)
            waited = time.monotonic() - started
            patience = JOIN_GIVE_UP_S if self._live_workers(draining) else JOIN_PATIENCE_S
            if answer.ok or not answer.retry or waited > patience:
                return answer
            await asyncio.sleep(delay)
            delay = min(1.0, delay * 1.5)

    def _rejoin(self, p: Player, cause: str) -> None:
        """Seat ``p`` again; ``cause`` is ``lost`` (its worker let it go) or
        ``silent`` (its worker fell silent)."""
        self.metrics.count("reseats", cause)
        p.rejoining = True
        p.moving = True
        self._spawn(self._rejoin_task(p))

    async def _rejoin_task(self, p: Player) -> None:
        hello = Hello(v=3, name=p.name, token=p.token)
        answer = await self._join(hello, p.token)
        if self.players.get(p.actor_id) is not p:
            return
        if answer.code == ErrorCode.BANNED.value:  # banned meanwhile
            error = Error(code=ErrorCode.BANNED.value, msg=answer.detail, fatal=True)
            self._send(p.ws, encode_server(error))
            await self._close(p.ws, 1008, ErrorCode.BANNED.value)
            return
        if not answer.ok:
            log.warning("could not seat %s again: %s", p.name, answer.detail)
            self.metrics.count("reseat_failures")
            self._reply(
                p.ws, Error(code=ErrorCode.SHUTDOWN.value, msg="your world is gone", fatal=True)
            )
            await self._close(p.ws, 1011, "no worker")
            return
        # The route notice (sent before the answer) normally switched it already.
        if answer.epoch >= p.epoch:
            p.worker, p.epoch = answer.worker, answer.epoch
            p.moving = p.rejoining = False
            self._flush_buffer(p)

    # ----------------------------------------------------------- connections

    def current_tick(self) -> int:
        return self.tick

    def players_online(self) -> int:
        return len(self.players)

    async def _handle(self, ws: ServerConnection) -> None:
        self.metrics.count("accepted")
        await super()._handle(ws)

    async def _admit_join(
        self, ws: ServerConnection, hello: Hello, session: ServerSession, bucket: TokenBucket
    ) -> Joining | None:
        joining = await super()._admit_join(ws, hello, session, bucket)
        if joining is None:
            return None
        held = self.holds.refusal(hello.name)  # kicked through some gateway
        if held is not None:
            await self._refuse(ws, hello.name, *held)
            return None
        cap = self.max_players
        if cap is not None and len(self.players) >= cap and self._spelling(hello.name) is None:
            text = f"the gateway holds {cap} players"
            await self._refuse(ws, hello.name, ErrorCode.SERVER_FULL.value, text)
            return None
        return joining

    async def _seat(self, ws: ServerConnection, joining: Joining) -> Player | None:
        hello = joining.hello
        answer = await self._join(hello, hello.token, create=joining.may_create)
        if not answer.ok:
            code = answer.code or ErrorCode.SERVER_FULL.value
            if code == "retry":
                code = ErrorCode.SERVER_FULL.value
            await self._join_refused(ws, joining, code, answer.detail)
            return None
        welcome_bytes = answer.welcome
        welcome = msgpack.unpackb(welcome_bytes, raw=False)  # the client's own message
        aid = answer.actor
        old = self.players.get(aid)
        if old is not None:  # the same character connected again here
            self._replace(old.ws)
        player = Player(
            ws,
            joining.session,
            str(welcome.get("name", hello.name)),
            str(welcome.get("token") or hello.token or ""),
            aid,
            answer.worker,
            answer.epoch,
            joining.bucket,
            *chat_buckets(time.monotonic()),
            address=client_of(ws),
        )
        if old is not None and old.epoch > player.epoch:
            player.epoch = old.epoch
        routed = self._routes.pop(aid, None)
        if routed is not None and routed[1] > player.epoch:
            # It moved on before this answer arrived (a hand-off raced the
            # join): its holder is the one that routed it last.
            player.worker, player.epoch = routed
        self.players[aid] = player
        joining.session.welcomed()
        self._send(ws, welcome_bytes)
        if self.recorder is not None:  # its game's recording begins, with no token in it
            blank = msgpack.packb({**welcome, "token": ""}, use_bin_type=True)
            self.recorder.begin(ws, player.name, blank, self.tick)
        if self._welcome_template is None:
            self._welcome_template = welcome
        self.audience.refusing.discard(aid)  # a new connection lets them watch
        if self._watchers_of(aid):
            self._tell_watchers(player)
        self._joined(ws, joining, player.name, aid, bool(welcome.get("resumed")), None)
        # Frames the worker sent before the answer arrived were dropped:
        # the first one the client gets must be a snapshot.
        self._to_worker(player.worker, Resync(aid, player.epoch))
        return player

    async def _unseat(self, player: Player) -> None:
        if self.recorder is not None:
            self.recorder.end(player.ws)
        if self.players.get(player.actor_id) is player:
            del self.players[player.actor_id]
            self.metrics.count("leaves")
            self._to_worker(player.worker, Leave(player.actor_id, player.epoch))
            self._player_gone(player, "the player you watched left the game")

    def _route(self, p: Player, msg: Command | Look | Chat, raw: bytes | str) -> None:
        """Send a seated client's command, look or level chat line to its
        worker (held while it moves); global and private lines go to every
        gateway."""
        if isinstance(msg, Chat):
            if msg.to is not None:
                self._spawn(self._private(p, msg.text, msg.to))
                return
            if msg.scope == "global":
                line = ChatLine(p.name, msg.text, "global", None, self.tick)
                self._spawn(self._publish(self.subjects.chat, encode(line)))
                return
            self.metrics.route("chat")
        elif isinstance(msg, Command):
            self.metrics.route("cmd")
            self.metrics.command(msg.c.value)
        else:
            self.metrics.route("look")
        data = raw if isinstance(raw, bytes) else raw.encode()
        if p.moving:
            if len(p.buffer) == BUFFER_LIMIT:
                self.metrics.count("overflows")  # the oldest goes
            p.buffer.append(data)
        else:
            self._to_worker(p.worker, FromClient(p.actor_id, p.epoch, data))

    # ----------------------------------------------------------- spectators

    _welcome_template: dict[str, Any] | None = None
    """The first ``welcome`` a worker sent a player here (decoded): a
    spectator's is made from it, with the watched player's id and name (the
    tables are the same for every player of the cluster)."""
    _watch_counts_made: dict[int, dict[str, int]] | None = None

    @property
    def _watch_counts(self) -> dict[int, dict[str, int]]:
        """Actor id of a player held here -> the other gateways that hold
        spectators of it, and how many each."""
        if self._watch_counts_made is None:
            self._watch_counts_made = {}
        return self._watch_counts_made

    def _watchers_of(self, aid: int) -> int:
        """How many watch player ``aid`` (held here), through every gateway."""
        return self.audience.count(aid) + sum(self._watch_counts.get(aid, {}).values())

    def _tell_watchers(self, p: Player) -> None:
        """Tell player ``p`` how many watch it now (``watchers``)."""
        self._reply(p.ws, Watchers(self._watchers_of(p.actor_id)))

    def _send_watched(self, p: Player, resync: bool) -> None:
        """Tell ``p``'s worker which other gateways get its frames; with
        ``resync``, ask it for a snapshot too (a spectator waits for one)."""
        gateways = sorted(self._watch_counts.get(p.actor_id, {}))
        watched = Watched(p.actor_id, p.epoch, gateways)
        subject = watch_worker_subject(self.subjects.prefix, p.worker)
        self._spawn(self._publish(subject, encode(watched)))
        if resync:
            self._to_worker(p.worker, Resync(p.actor_id, p.epoch))

    def _notify(self, gateway: str, notice: WatchCount | WatchEnd) -> None:
        subject = watch_gateway_subject(self.subjects.prefix, gateway)
        self._spawn(self._publish(subject, encode(notice)))

    def _by_name(self, name: str) -> Player | None:
        key = name.lower()
        return next((p for p in self.players.values() if p.name.lower() == key), None)

    def _spectator_welcome(self, p: Player) -> bytes | None:
        """The encoded ``welcome`` of a spectator of ``p`` (None before any
        welcome came here, which cannot be once ``p`` is seated)."""
        template = self._welcome_template
        if template is None:
            return None
        welcome = spectator_welcome_map(template, p.actor_id, p.name, self.tick)
        data: bytes = msgpack.packb(welcome, use_bin_type=True)
        return data

    async def _watch(self, spectator: Spectator) -> bool:
        p = self._by_name(spectator.watched)
        ws = spectator.ws
        if p is not None:  # held here
            welcome = self._spectator_welcome(p)  # None cannot be: p brought one
            refused = p.actor_id in self.audience.refusing or welcome is None
            answer = WatchAnswer(
                ok=not refused,
                code=ErrorCode.NOT_WATCHABLE.value,
                detail=f"{p.name} does not want to be watched",
                actor=p.actor_id,
                welcome=welcome or b"",
            )
        else:
            ask = encode(WatchAsk(spectator.watched, self.id))
            try:
                reply = await self.nc.request(
                    watch_subject(self.subjects.prefix), ask, timeout=WATCH_ASK_TIMEOUT_S
                )
                answer = decode(reply.data, WatchAnswer)
            except Exception:  # noqa: BLE001 - nobody answered: nobody of that name plays
                answer = WatchAnswer(
                    ok=False,
                    code=ErrorCode.NOT_PLAYING.value,
                    detail=f"nobody called {spectator.watched} is playing",
                )
        if not answer.ok:
            await self._refuse(ws, spectator.name, answer.code, answer.detail)
            return False
        if ws.state is not State.OPEN:
            if answer.holder:  # counted there: not here after all
                self._notify(
                    answer.holder,
                    WatchCount(answer.actor, self.id, self.audience.count(answer.actor)),
                )
            return False
        spectator.actor_id = answer.actor
        spectator.holder = answer.holder
        welcome = msgpack.unpackb(answer.welcome, raw=False)
        spectator.watched = str(welcome.get("name", spectator.watched))
        spectator.session.watching()
        spectator.asked = True
        self._send(ws, answer.welcome)
        self.audience.add(spectator)
        if p is not None:
            self._to_worker(p.worker, Resync(p.actor_id, p.epoch))
            self._tell_watchers(p)
        return True

    def _unwatch(self, spectator: Spectator) -> None:
        aid = spectator.actor_id
        if self.audience.remove(spectator) is None:
            return
        if spectator.holder:
            self._notify(spectator.holder, WatchCount(aid, self.id, self.audience.count(aid)))
            return
        p = self.players.get(aid)
        if p is not None:
            self._tell_watchers(p)

    def _player_gone(self, p: Player, text: str) -> None:
        """Player ``p`` is no longer held here: close its spectators here and
        on the other gateways (``gone``)."""
        self.audience.refusing.discard(p.actor_id)
        self._end_watching(p, ErrorCode.GONE, text)

    def _end_watching(self, p: Player, code: ErrorCode, text: str) -> None:
        """Close every spectator of ``p``, here and on the other gateways,
        with the fatal error ``code``; its worker sends its frames to this
        gateway alone again."""
        self._end_spectators(p.actor_id, code, text)
        remote = self._watch_counts.pop(p.actor_id, None)
        if remote:
            for gateway in remote:
                self._notify(gateway, WatchEnd(p.actor_id, code.value, text))
            self._send_watched(p, resync=False)

    def _watch_line(self, speaker: Player | Spectator, text: str) -> None:
        """A line to a watch scope goes to every gateway (``P.chat``): each
        writes it to the player and the spectators it holds."""
        if isinstance(speaker, Spectator):
            sender, watched = speaker.name, speaker.watched
        else:
            sender = watched = speaker.name
        line = ChatLine(sender, text, "watch", watched, self.tick)
        self._spawn(self._publish(self.subjects.chat, encode(line)))

    def _to_spectators(self, aid: int, epoch: int, data: bytes, p: Player | None = None) -> None:
        """Write a frame of player ``aid`` to its spectators here; when one
        waits for a snapshot, ask the player's worker (through the player's
        gateway, if it is another) for one."""
        if not self.audience.forward(aid, data, data.startswith(SNAP_MARK, 1), epoch):
            return
        if p is not None:
            self._to_worker(p.worker, Resync(aid, p.epoch))
            return
        for s in self.audience.by_actor.get(aid, ())[:1]:
            notice = WatchCount(aid, self.id, self.audience.count(aid), resync=True)
            self._notify(s.holder, notice)

    async def _on_watch_ask(self, msg: Msg) -> None:
        """A spectator on some gateway would watch a player: if this gateway
        holds it, answer (and count the spectator); else stay silent."""
        try:
            ask = decode(msg.data, WatchAsk)
        except ValueError:
            return
        p = self._by_name(ask.name)
        if p is None or ask.gateway == self.id or not msg.reply:
            return
        welcome = self._spectator_welcome(p)
        if p.actor_id in self.audience.refusing or welcome is None:
            answer = WatchAnswer(
                ok=False,
                code=ErrorCode.NOT_WATCHABLE.value,
                detail=f"{p.name} does not want to be watched",
            )
        else:
            counts = self._watch_counts.setdefault(p.actor_id, {})
            counts[ask.gateway] = counts.get(ask.gateway, 0) + 1
            answer = WatchAnswer(ok=True, actor=p.actor_id, holder=self.id, welcome=welcome)
            self._send_watched(p, resync=True)
            self._tell_watchers(p)
        with contextlib.suppress(Exception):
            await self.nc.publish(msg.reply, encode(answer))

    async def _on_watch_notice(self, msg: Msg) -> None:
        """How many spectators another gateway holds of a player held here;
        or (as a spectators' gateway) that a watched player is gone."""
        try:
            notice = WATCH_NOTICE.decode(msg.data)
        except ValueError:
            return
        if isinstance(notice, WatchEnd):
            try:
                code = ErrorCode(notice.code)
            except ValueError:
                code = ErrorCode.GONE
            self._end_spectators(notice.actor, code, notice.text)
            return
        p = self.players.get(notice.actor)
        if p is None:
            if notice.count:  # gone: that gateway's spectators must go too
                self._notify(
                    notice.gateway,
                    WatchEnd(
                        notice.actor, ErrorCode.GONE.value, "the player you watched left the game"
                    ),
                )
            return
        counts = self._watch_counts.setdefault(notice.actor, {})
        before = self._watchers_of(notice.actor)
        changed = (notice.count > 0) != (notice.gateway in counts)
        if notice.count:
            counts[notice.gateway] = notice.count
        else:
            counts.pop(notice.gateway, None)
        if not counts:
            del self._watch_counts[notice.actor]
        if changed or notice.resync:
            self._send_watched(p, resync=notice.resync)
        if self._watchers_of(notice.actor) != before:
            self._tell_watchers(p)

    def _end_orphaned_spectators(self) -> None:
        """Close the spectators whose player's gateway fell silent (``gone``)."""
        if self._audience is None or not self._audience.by_actor:
            return
        live = set(self.live_gateways())
        for aid, spectators in list(self._audience.by_actor.items()):
            holder = spectators[0].holder
            if holder and holder not in live:
                self._end_spectators(aid, ErrorCode.GONE, "the player you watched is gone")


REFUSAL_REASONS = {
    HTTPStatus.TOO_MANY_REQUESTS: "per_address",
    HTTPStatus.SERVICE_UNAVAILABLE: "open_files",
}
"""The reason label of ``underhall_gateway_connections_refused_total`` for
each HTTP status :meth:`~server.net.guard.AddressBook.opened` refuses with."""

SNAP_MARK = b"\xa1t\xa4snap"
"""What follows the map header of an encoded ``snap`` (``"t": "snap"`` first)."""


def snapshot_depth(frame: bytes) -> int | None:
    """The ``depth`` of an encoded ``snap`` frame (docs/protocol.md), or None
    for any other frame or one that does not decode.

    Reads only the map's keys up to ``depth`` (the third), not the map itself.
    """
    unpacker = msgpack.Unpacker(raw=False)
    unpacker.feed(frame)
    try:
        keys = unpacker.read_map_header()
        seen: dict[str, Any] = {}
        for _ in range(keys):
            key = unpacker.unpack()
            if key not in ("t", "depth"):
                unpacker.skip()
                continue
            seen[key] = unpacker.unpack()
            if len(seen) == 2:
                break
    except Exception:  # noqa: BLE001 - a frame we cannot read has no depth for us
        return None
    depth = seen.get("depth")
    if seen.get("t") != "snap" or not isinstance(depth, int) or isinstance(depth, bool):
        return None
    return depth
