"""A cluster gateway: the players' websockets, routed to the workers.

It speaks the client protocol unchanged (docs/protocol.md, version 3): a
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
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import signal
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import nats
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from websockets.asyncio.server import ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from protocol.codec import decode_client, encode_server
from protocol.errors import ErrorCode, ProtocolError
from protocol.limits import (
    HELLO_TIMEOUT_S,
    MAX_FRAME_BYTES,
)
from protocol.messages import Chat, ChatOut, Error, Hello, Ping, Pong
from protocol.session import ServerSession
from protocol.version import check_version
from server.cluster.bus import HEARTBEAT_S, SILENT_S, Subjects, pack, unpack
from server.net.guard import (
    AddressBook,
    GuardedConnection,
    NetLimits,
    buffered_output,
    guarded_connection_class,
    raise_open_file_limit,
)
from server.net.metrics import http_response
from server.net.ratelimit import TokenBucket, chat_buckets, message_bucket

log = logging.getLogger("underhall.gateway")

JOIN_TIMEOUT_S = 4.0
"""Seconds one join request may take."""
LIVE_S = 2.5 * HEARTBEAT_S
"""A worker heard from within this many seconds is asked to seat joins."""
JOIN_PATIENCE_S = 30.0
"""Seconds a player may wait to be seated (joins that find no holder are
retried: a dead worker's lease takes up to its lease time to expire)."""
BUFFER_LIMIT = 64
"""Client messages held per player while it moves; older ones are dropped."""
OUTBOX_LIMIT_BYTES = 256 * 1024
"""Socket write buffer above which a client gets no frames (and a snapshot later)."""


@dataclass(eq=False)
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
    frames: int = 0
    sent_bytes: int = 0


class Gateway:
    """Serve players over websockets for a cluster of workers.

    Args:
        nats_url: The NATS server.
        gateway_id: This gateway's id (letters, digits, ``-`` and ``_``).
        host: Interface to bind.
        port: TCP port (0 picks a free one: see :attr:`port` once ready).
        prefix: The cluster's subject prefix.
        limits: The caps ``underhall serve`` puts on connections (per
            address, open files, control frames, buffered output, keepalive;
            :class:`~server.net.guard.NetLimits`); the per-character ones
            are the workers' business.

    Besides websockets, the port answers ``GET /healthz`` (``ok`` while the
    process runs) and ``GET /readyz`` (``ready`` while a worker has been heard
    within :data:`LIVE_S`, else 503), for a load balancer or an orchestrator.
    """

    def __init__(
        self,
        nats_url: str,
        *,
        gateway_id: str,
        host: str = "127.0.0.1",
        port: int = 8765,
        prefix: str = "uh",
        limits: NetLimits | None = None,
    ) -> None:
        self.limits = limits or NetLimits()
        self.book: AddressBook | None = None
        self.nats_url = nats_url
        self.id = gateway_id
        self.host = host
        self.port = port
        self.subjects = Subjects(prefix)
        self.players: dict[int, Player] = {}
        self.heartbeats: dict[str, float] = {}
        """Worker id -> ``time.monotonic()`` of its last heartbeat."""
        self.tick = 0
        self.handoffs = 0
        self.frames = 0
        """Frames written to clients since start."""
        self.frame_bytes = 0
        self._stop = asyncio.Event()
        self.nc: NatsClient

    async def run(
        self, ready: asyncio.Future[int] | None = None, install_signals: bool = True
    ) -> None:
        """Serve until SIGTERM/SIGINT or :meth:`stop`; players are then told
        the gateway stops (their characters stay with the workers until the
        workers see them leave).

        Raises:
            nats.errors.Error: NATS cannot be reached.
        """
        self.nc = await nats.connect(
            self.nats_url, name=f"gateway {self.id}", max_reconnect_attempts=-1
        )
        await self.nc.subscribe(self.subjects.gateway(self.id), cb=self._on_worker)
        await self.nc.subscribe(self.subjects.chat, cb=self._on_chat)
        await self.nc.subscribe(self.subjects.heartbeats, cb=self._on_heartbeat)
        if install_signals:
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, self.stop)
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
            broadcast([p.ws for p in self.players.values()], data)
            for p in list(self.players.values()):
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(p.ws.close(1001, "gateway shutdown"), 2.0)
        log.info(
            "stats: frames %d, frame bytes %d, route changes %d",
            self.frames,
            self.frame_bytes,
            self.handoffs,
        )
        with contextlib.suppress(Exception):  # NATS may be gone: do not hang
            await asyncio.wait_for(self.nc.drain(), 5.0)

    def stop(self) -> None:
        """Ask :meth:`run` to finish."""
        self._stop.set()

    def _process_request(self, ws: ServerConnection, request: Request) -> Response | None:
        """Answer the health checks, and the handshake of a connection the
        address book refused with its HTTP error; let the others through."""
        if request.path in ("/healthz", "/readyz"):
            ok = request.path == "/healthz" or bool(self._live_workers(set()))
            text = ("ok" if request.path == "/healthz" else "ready") if ok else "no worker"
            return http_response(ws, 200 if ok else 503, "text/plain; charset=utf-8",
                                 f"{text}\n".encode())  # fmt: skip
        if isinstance(ws, GuardedConnection) and ws.refusal is not None:
            status, why = ws.refusal
            return ws.respond(status, why)
        return None

    # ----------------------------------------------------------- from workers

    async def _on_worker(self, msg: Msg) -> None:
        try:
            kind, *rest = unpack(msg.data)
        except (ValueError, TypeError):
            return
        if kind == "f":
            self._frames(rest[0])
        elif kind == "route":
            aid, worker, epoch = rest
            p = self.players.get(aid)
            if p is None:  # joining (the answer is on its way), or it left while moving
                self._spawn(self._orphan(aid, str(worker), int(epoch)))
                return
            if epoch < p.epoch:
                return
            if p.worker != worker:
                self.handoffs += 1
            p.worker, p.epoch = str(worker), int(epoch)
            p.moving = p.rejoining = False
            while p.buffer:
                await self._to_worker(p.worker, ["m", aid, p.epoch, p.buffer.popleft()])
        elif kind == "moving":
            aid, epoch = rest
            p = self.players.get(aid)
            if p is not None and p.epoch == epoch:
                p.moving = True
        elif kind == "lost":
            aid, epoch = rest
            p = self.players.get(aid)
            if p is not None and p.epoch == epoch and not p.rejoining:
                self._rejoin(p)

    async def _orphan(self, aid: int, worker: str, epoch: int) -> None:
        """A route notice for a player not seated here: if it is still not
        seated (under that epoch or a later one) after a join's patience, it
        left while moving; tell its new holder, which saves it."""
        await asyncio.sleep(JOIN_TIMEOUT_S + 1.0)
        p = self.players.get(aid)
        if p is None or p.epoch < epoch:
            await self._to_worker(worker, ["leave", aid, epoch])

    def _frames(self, entries: list[list[Any]]) -> None:
        for aid, epoch, data in entries:
            p = self.players.get(aid)
            if p is None or p.epoch != epoch:
                continue  # gone, or a late frame from a worker it left
            buffered = buffered_output(p.ws)
            if buffered is None:
                continue  # cut off (not reading at all: the guard's output cap)
            if buffered > OUTBOX_LIMIT_BYTES:
                p.behind = True
                continue
            if p.behind:  # caught up: what it missed needs a snapshot
                p.behind = False
                self._spawn(self._to_worker(p.worker, ["resync", aid, p.epoch]))
                continue
            p.frames += 1
            p.sent_bytes += len(data)
            self.frames += 1
            self.frame_bytes += len(data)
            broadcast([p.ws], data)

    async def _on_chat(self, msg: Msg) -> None:
        sender, text, scope, to, tick = unpack(msg.data)
        out = encode_server(
            ChatOut(sender=sender, text=text, tick=tick, scope=scope, to=to)
            if scope == "private"
            else ChatOut(sender=sender, text=text, tick=tick, scope=scope)
        )
        if scope == "private":
            names = {str(sender).lower(), str(to).lower()}
            targets = [p.ws for p in self.players.values() if p.name.lower() in names]
        else:
            targets = [p.ws for p in self.players.values()]
        broadcast(targets, out)

    async def _on_heartbeat(self, msg: Msg) -> None:
        worker = msg.subject.rsplit(".", 1)[1]
        self.heartbeats[worker] = time.monotonic()
        with contextlib.suppress(ValueError, TypeError):
            self.tick = max(self.tick, int(unpack(msg.data)[0]))

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
                        self.subjects.gateway_heartbeat(self.id), pack([len(self.players)])
                    )
            now = time.monotonic()
            for p in list(self.players.values()):
                # A worker not heard of yet is given SILENT_S from now.
                last = self.heartbeats.setdefault(p.worker, now)
                if not p.rejoining and now - last > SILENT_S:
                    log.warning("worker %s silent: seating %s again", p.worker, p.name)
                    self._rejoin(p)

    # ----------------------------------------------------------- to workers

    async def _to_worker(self, worker: str, message: list[Any]) -> None:
        with contextlib.suppress(Exception):
            await self.nc.publish(self.subjects.inbox(worker), pack(message))

    def _spawn(self, coro: Any) -> None:
        asyncio.ensure_future(coro)

    def _live_workers(self, avoid: set[str]) -> list[str]:
        """Workers heard within :data:`LIVE_S`, less ``avoid``."""
        now = time.monotonic()
        return sorted(w for w, t in self.heartbeats.items() if now - t <= LIVE_S and w not in avoid)

    async def _join(self, hello: Hello, token: str | None) -> dict[str, Any]:
        """Ask the workers to seat ``hello``'s player; retried while the
        answer says so, for at most :data:`JOIN_PATIENCE_S`.

        Each try goes to one worker heard from within :data:`LIVE_S` (a
        random one, so joins spread), not to the shared join queue: a worker
        that is stalled but still connected (SIGSTOP, a long pause) keeps
        its place in a queue group and would swallow its share of joins
        until NATS gives up on it. A worker that did not answer, or answered
        that it is draining, is not asked again by this join. Only when no
        worker has been heard (a gateway just started) does the try use
        the queue.
        """
        request = pack(
            {
                "name": hello.name,
                "token": token,
                "cls": hello.cls,
                "gw": self.id,
                "nonce": secrets.token_hex(8),  # a retry is the same join
            }
        )
        deadline = time.monotonic() + JOIN_PATIENCE_S
        delay = 0.2
        avoid: set[str] = set()
        while True:
            live = self._live_workers(avoid)
            target = secrets.choice(live) if live else None
            subject = self.subjects.join if target is None else self.subjects.join_at(target)
            try:
                reply = await self.nc.request(subject, request, timeout=JOIN_TIMEOUT_S)
                answer: dict[str, Any] = unpack(reply.data)
            except Exception as exc:  # noqa: BLE001 - no worker answered: retry
                answer = {"ok": False, "code": "retry", "detail": repr(exc), "retry": True}
                if target is not None:
                    avoid.add(target)
            if target is not None and answer.get("detail") == "draining":
                avoid.add(target)
            if answer.get("ok") or not answer.get("retry") or time.monotonic() > deadline:
                return answer
            await asyncio.sleep(delay)
            delay = min(1.0, delay * 1.5)

    def _rejoin(self, p: Player) -> None:
        p.rejoining = True
        p.moving = True
        self._spawn(self._rejoin_task(p))

    async def _rejoin_task(self, p: Player) -> None:
        hello = Hello(v=3, name=p.name, token=p.token)
        answer = await self._join(hello, p.token)
        if self.players.get(p.actor_id) is not p:
            return
        if not answer.get("ok"):
            log.warning("could not seat %s again: %s", p.name, answer.get("detail"))
            broadcast(
                [p.ws],
                encode_server(
                    Error(code=ErrorCode.SHUTDOWN.value, msg="your world is gone", fatal=True)
                ),
            )
            await p.ws.close(1011, "no worker")
            return
        # The route notice (sent before the answer) normally switched it already.
        if int(answer["epoch"]) >= p.epoch:
            p.worker, p.epoch = str(answer["worker"]), int(answer["epoch"])
            p.moving = p.rejoining = False
            while p.buffer:
                await self._to_worker(p.worker, ["m", p.actor_id, p.epoch, p.buffer.popleft()])

    # ----------------------------------------------------------- connections

    async def _handle(self, ws: ServerConnection) -> None:
        session = ServerSession()
        now = time.monotonic()
        bucket = message_bucket(now)
        player: Player | None = None
        try:
            hello = await self._await_hello(ws, session, bucket)
            if hello is None:
                return
            answer = await self._join(hello, hello.token)
            if not answer.get("ok"):
                code = str(answer.get("code") or "server_full")
                if code == "retry":
                    code = ErrorCode.SERVER_FULL.value
                broadcast(
                    [ws],
                    encode_server(Error(code=code, msg=str(answer.get("detail", "")), fatal=True)),
                )
                await ws.close(1008, code)
                return
            welcome_bytes: bytes = answer["welcome"]
            welcome = unpack(welcome_bytes)
            aid = int(answer["actor"])
            old = self.players.get(aid)
            if old is not None:  # the same character connected again here
                broadcast(
                    [old.ws],
                    encode_server(
                        Error(
                            code="replaced",
                            msg="this character connected from elsewhere",
                            fatal=True,
                        )
                    ),
                )
                self._spawn(old.ws.close(1008, "replaced"))
            player = Player(
                ws,
                session,
                str(welcome.get("name", hello.name)),
                str(welcome.get("token") or hello.token or ""),
                aid,
                str(answer["worker"]),
                int(answer["epoch"]),
                bucket,
                *chat_buckets(now),
            )
            if old is not None and old.epoch > player.epoch:
                player.epoch = old.epoch
            self.players[aid] = player
            session.welcomed()
            broadcast([ws], welcome_bytes)
            # Frames the worker sent before the answer arrived were dropped:
            # the first one the client gets must be a snapshot.
            await self._to_worker(player.worker, ["resync", aid, player.epoch])
            async for raw in ws:
                if not await self._message(player, raw):
                    break
        except ConnectionClosed:
            pass
        finally:
            session.close()
            if player is not None and self.players.get(player.actor_id) is player:
                del self.players[player.actor_id]
                await self._to_worker(player.worker, ["leave", player.actor_id, player.epoch])

    async def _await_hello(
        self, ws: ServerConnection, session: ServerSession, bucket: TokenBucket
    ) -> Hello | None:
        try:
            async with asyncio.timeout(HELLO_TIMEOUT_S):
                async for raw in ws:
                    if not bucket.allow(time.monotonic()):
                        if bucket.flooding:
                            return None
                        continue
                    try:
                        msg = session.receive(decode_client(raw))
                        if isinstance(msg, Hello):
                            check_version(msg.v)
                    except ProtocolError as exc:
                        broadcast([ws], encode_server(_error(exc)))
                        if exc.fatal:
                            await ws.close(1008, exc.code.value)
                            return None
                        continue
                    if isinstance(msg, Ping):
                        broadcast([ws], encode_server(Pong(id=msg.id, tick=self.tick)))
                    elif isinstance(msg, Hello):
                        return msg
        except TimeoutError:
            broadcast(
                [ws],
                encode_server(
                    Error(code=ErrorCode.TIMEOUT.value, msg="no hello in time", fatal=True)
                ),
            )
            await ws.close(1008, ErrorCode.TIMEOUT.value)
        return None

    async def _message(self, p: Player, raw: bytes | str) -> bool:
        """Handle one message of a seated client; False to end the connection."""
        now = time.monotonic()
        if not p.bucket.allow(now):
            if p.bucket.flooding:
                broadcast(
                    [p.ws],
                    encode_server(
                        Error(code=ErrorCode.FLOOD.value, msg="too many messages", fatal=True)
                    ),
                )
                await p.ws.close(1008, ErrorCode.FLOOD.value)
                return False
            return True
        try:
            msg = p.session.receive(decode_client(raw))
        except ProtocolError as exc:
            broadcast([p.ws], encode_server(_error(exc)))
            if exc.fatal:
                await p.ws.close(1008, exc.code.value)
                return False
            return True
        if isinstance(msg, Ping):
            broadcast([p.ws], encode_server(Pong(id=msg.id, tick=self.tick)))
            return True
        if isinstance(msg, Chat):
            if not p.chat.allow(now):
                return True
            if msg.to is not None or msg.scope == "global":
                if msg.to is None and not p.global_chat.allow(now):
                    return True
                scope = "private" if msg.to is not None else "global"
                await self.nc.publish(
                    self.subjects.chat, pack([p.name, msg.text, scope, msg.to, self.tick])
                )
                return True
        data = raw if isinstance(raw, bytes) else raw.encode()
        if p.moving:
            p.buffer.append(data)
        else:
            await self._to_worker(p.worker, ["m", p.actor_id, p.epoch, data])
        return True


def _error(exc: ProtocolError) -> Error:
    return Error(code=exc.code.value, msg=exc.detail, fatal=exc.fatal)
