"""The one front: what a player's connection meets before and around the game.

``underhall serve`` (:class:`~server.net.server.GameServer`) and a cluster
gateway (:class:`~server.cluster.gateway.Gateway`) are two :class:`Front`
s. Everything a player can see of the network layer is written here once,
so the two answer alike (STYLE.md, "one front, one host"):

- the connection's life: the protocol's session table, ``hello`` within
  ``HELLO_TIMEOUT_S``, pings, the message rate (``rate_limited`` once per
  window, then ``flood`` and a close), protocol errors and their close codes;
- joins: refused while draining (``shutdown``), the failed-token throttle
  (``limited``, never for an address that did not guess: the owner's right
  token always gets in), the new-characters cap, a character connected again
  replacing its old connection (``replaced``), refusals counted and logged;
- chat rates (``rate_limited`` for lines over a player's chat or global rate);
- spectators (protocol 12, :mod:`server.net.watch`): a ``hello`` with
  ``watch`` admitted or refused (``shutdown``, ``not_playing``), their
  session ``watching`` (a ``cmd`` or ``look`` refused ``spectator``), the
  watch scope's chat lines and their rates, a player's ``spectators``
  switch, and their closing (``gone``, ``not_watchable``);
- the opening handshake: the client's address read from a trusted proxy's
  header, HTTP paths, and the address book's refusals (HTTP 429 or 503).

What differs is the link to the host, which a subclass supplies: the game in
the same process for ``serve``, the workers over NATS for a gateway
(:meth:`Front._seat`, :meth:`Front._serve`, :meth:`Front._unseat`).

Holds no game rule. Times are ``time.monotonic()`` seconds.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any, Protocol

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.protocol import State

from protocol.codec import decode_client, encode_server
from protocol.errors import ErrorCode, ProtocolError
from protocol.limits import (
    CHAT_RATE_PER_S,
    GLOBAL_CHAT_RATE_PER_S,
    HELLO_TIMEOUT_S,
    RATE_PER_S,
)
from protocol.messages import (
    Chat,
    Command,
    Error,
    Hello,
    Look,
    Ping,
    Pong,
    ServerMessage,
    Spectators,
)
from protocol.session import ServerSession
from protocol.version import check_version
from server.game.recordings import Recorder
from server.net.guard import AddressBook, GuardedConnection, NetLimits, send_binary
from server.net.logs import address
from server.net.metrics import FrontMetrics
from server.net.ratelimit import TokenBucket, chat_buckets, message_bucket
from server.net.watch import Audience, Spectator
from server.net.web import HostRule, LobbyRow, WebSite, is_upgrade, origin_refused

log = logging.getLogger("underhall.net")

CLOSE_TIMEOUT_S = 2.0
"""Seconds a closing handshake may take before the transport is aborted."""
REPLACED_TEXT = "this character connected from elsewhere"
"""The text of the ``replaced`` error sent to a character's old connection."""


@dataclass(frozen=True, slots=True)
class Joining:
    """A ``hello`` the front lets through to the host, with its connection's state.

    Attributes:
        hello: The client's ``hello``.
        session: The connection's protocol session.
        bucket: The connection's message rate.
        address: The client's IP address (a trusted proxy's client's).
        may_create: Whether this join may create a new character
            (the address is under its new-characters cap).
    """

    hello: Hello
    session: ServerSession
    bucket: TokenBucket
    address: str
    may_create: bool


class Seated(Protocol):
    """A seated player's connection as the front uses it (``serve``'s
    ``Client``, a gateway's ``Player``)."""

    @property
    def ws(self) -> ServerConnection: ...

    @property
    def session(self) -> ServerSession: ...

    @property
    def bucket(self) -> TokenBucket: ...

    @property
    def chat(self) -> TokenBucket: ...

    @property
    def global_chat(self) -> TokenBucket: ...


def client_of(ws: ServerConnection) -> str:
    """The client's address for logs and ``admin who``: ``host:port`` of the
    TCP peer, or the address a trusted proxy named (no port)."""
    if isinstance(ws, GuardedConnection) and ws.forwarded_from is not None:
        return ws.address
    return address(ws.remote_address)


def ip_of(ws: ServerConnection) -> str:
    """The client's IP address as the address book counts it."""
    return ws.address if isinstance(ws, GuardedConnection) else "?"


@dataclass(frozen=True, slots=True)
class FrontOptions:
    """What every front is given alike, ``serve``'s and each gateway's.

    Attributes:
        host: The interface the game port listens on.
        port: The game port (0 picks one).
        limits: The caps and rates (None: :class:`NetLimits`' defaults).
        admin_socket: Where the operators' Unix socket is made, or None.
    """

    host: str = "127.0.0.1"
    port: int = 8765
    limits: NetLimits | None = None
    admin_socket: Path | None = None


class Front:
    """The connection handling shared by ``serve`` and the gateway.

    A subclass calls ``Front.__init__``, sets :attr:`metrics`, and
    implements the link to its host: :meth:`current_tick`,
    :meth:`players_online`, :meth:`_seat`, :meth:`_route` and :meth:`_unseat`;
    for spectators (protocol 12), :meth:`_watch`, :meth:`_unwatch`,
    :meth:`_let_watch` and :meth:`_watch_line`, and it forwards each frame
    it writes to a player to that player's spectators
    (:meth:`Audience.forward <server.net.watch.Audience.forward>`).

    Args:
        options: Where it listens and what it allows.
    """

    limits: NetLimits
    book: AddressBook
    metrics: FrontMetrics
    draining: bool
    stopping_text = "the server is stopping"
    """The ``shutdown`` refusal's text while draining."""
    recorder: Recorder | None = None
    """Records every player's game (issue 45) from its ``welcome`` on, keyed
    by its connection: the frames written to it, the welcome with its token
    blanked (set by the composition root; None: no recordings)."""
    web: WebSite | None = None
    """The web client and lobby answered on this port (set by the composition
    root before serving; None: no page, only the game and the operators' paths)."""
    _hosts: HostRule | None = None
    """The ``Host`` headers a browser's request may carry (:meth:`host_rule`)."""

    def __init__(self, options: FrontOptions) -> None:
        self.host = options.host
        self.port = options.port
        self.limits = options.limits or NetLimits()
        self.book = AddressBook(self.limits, 1 << 20)
        self.admin_socket = options.admin_socket
        self.draining = False
        """Whether a drain (or stop) has begun: joins are refused."""
        self._grace = 0.0
        self._stop = asyncio.Event()

    # ----------------------------------------------------------- the link

    def current_tick(self) -> int:
        """The world's tick, for ``pong``."""
        raise NotImplementedError

    def players_online(self) -> int:
        """Players seated through this front."""
        raise NotImplementedError

    async def _seat(self, ws: ServerConnection, joining: Joining) -> Seated | None:
        """Seat the joining player with the host and send its ``welcome``;
        return the seated connection's record, or None when the join was
        refused (see :meth:`_join_refused`) and the connection closed."""
        raise NotImplementedError

    def _route(self, seated: Any, msg: Command | Look | Chat, raw: bytes | str) -> None:
        """Pass a seated player's command, look or chat line (within its chat
        rates) to the host, never waiting; ``raw`` is the message as sent."""
        raise NotImplementedError

    async def _unseat(self, seated: Any) -> None:
        """The seated player's connection ended: tell the host."""
        raise NotImplementedError

    def _answer_http(self, ws: ServerConnection, request: Request) -> Response | None:
        """An answer to a plain HTTP request (``/metrics`` and the like), or None."""
        return None

    def _refused_connection(self, status: HTTPStatus) -> None:
        """Count a handshake the address book refused (HTTP ``status``)."""

    def lobby_players(self) -> tuple[int, list[LobbyRow]] | None:
        """The players seated through this front and their lobby rows, for
        ``/lobby.json``; None where the host cannot list them."""
        return None

    # ----------------------------------------------------------- a connection

    async def _serve(self, seated: Seated) -> None:
        """Handle a seated player's messages until its connection ends.

        From now on each whole message is handled as its frame is parsed
        (:attr:`GuardedConnection.on_message <server.net.guard.GuardedConnection.on_message>`:
        no assembler, no task switch, issue 10's lean receive path); the
        loop below only empties what arrived with the ``hello``, then waits
        for the close.
        """
        ws = seated.ws
        if isinstance(ws, GuardedConnection):
            ws.on_message = lambda raw: self._message_now(seated, raw)
        async for raw in ws:
            if not self._message_now(seated, raw):
                break

    def _message_now(self, seated: Seated, raw: bytes | str) -> bool:
        """Handle one message of a seated player at once (never waiting):
        its rate, its decoding and the session's table, pings, chat rates;
        the rest goes to :meth:`_route`. False when the connection must end
        (its closing is then under way).

        A command, most of what arrives, is routed before any other type is
        asked about (issue 44; ``bench/receive.py`` times this path)."""
        ws = seated.ws
        bucket = seated.bucket
        if not bucket.allow(time.monotonic()):
            if self._dropped_now(ws, bucket):
                self._end(seated, ErrorCode.FLOOD.value)
                return False
            return True
        try:
            msg = seated.session.receive(decode_client(raw))
        except ProtocolError as exc:
            if self._error_now(ws, exc):
                self._end(seated, exc.code.value)
                return False
            return True
        if type(msg) is Command:
            self._route(seated, msg, raw)
        elif isinstance(msg, Ping):
            self._reply(ws, Pong(id=msg.id, tick=self.current_tick()))
        elif isinstance(msg, Spectators):
            self._let_watch(seated, msg.allow)
        elif isinstance(msg, Chat) and (
            isinstance(seated, Spectator) or msg.scope == "watch" and msg.to is None
        ):
            if self._watch_chat_allowed(seated, msg) and self._chat_allowed(
                ws, seated.chat, seated.global_chat, msg
            ):
                self._watch_line(seated, msg.text)
        elif (
            isinstance(msg, Look)
            or isinstance(msg, Chat)
            and self._chat_allowed(ws, seated.chat, seated.global_chat, msg)
        ):
            self._route(seated, msg, raw)
        return True

    # ----------------------------------------------------------- spectators

    _audience: Audience | None = None

    @property
    def audience(self) -> Audience:
        """The spectators watching through this front (protocol 12)."""
        if self._audience is None:
            self._audience = Audience()
        return self._audience

    async def _admit_spectator(
        self, ws: ServerConnection, hello: Hello, session: ServerSession, bucket: TokenBucket
    ) -> Spectator | None:
        """Whether a spectator's ``hello`` may watch, and its record: None when
        refused (then closed): ``shutdown`` while draining, ``not_playing``
        for a spectator named as the player it would watch, and what
        :meth:`_watch` refuses."""
        watch = str(hello.watch)
        if self.draining:
            await self._refuse(ws, hello.name, ErrorCode.SHUTDOWN.value, self.stopping_text)
            return None
        if hello.name.lower() == watch.lower():
            text = "a spectator's name must not be that of the player it watches"
            await self._refuse(ws, hello.name, ErrorCode.NOT_PLAYING.value, text)
            return None
        chat, global_chat = chat_buckets(time.monotonic())
        spectator = Spectator(
            ws, session, bucket, chat, global_chat, name=hello.name, watched=watch, actor_id=-1
        )
        if not await self._watch(spectator):
            return None
        log.info(
            "%s watches %s",
            hello.name,
            spectator.watched,
            extra={
                "event": "watch",
                "player": spectator.watched,
                "spectator": hello.name,
                "address": client_of(ws),
            },
        )
        return spectator

    async def _watch(self, spectator: Spectator) -> bool:
        """Find the player ``spectator.watched`` names (any case), send the
        spectator its ``welcome`` (:func:`~server.net.watch.spectator_welcome`;
        its session then ``watching``), add it to :attr:`audience` waiting for
        the player's next snapshot, and ask the host for one; fill in the
        spectator's ``actor_id`` and ``watched`` (the player's spelling).
        False when refused (``not_playing``, ``not_watchable``; closed
        before this returns)."""
        raise NotImplementedError

    def _unwatch(self, spectator: Spectator) -> None:
        """A spectator's connection ended: take it out of :attr:`audience`
        (the player is told how many watch now)."""
        raise NotImplementedError

    def _let_watch(self, seated: Any, allow: bool) -> None:
        """A player lets spectators watch it, or not (``spectators``): those
        watching it are closed with ``not_watchable`` when not
        (:meth:`_end_watching`); the player is answered with ``watchers``
        (:meth:`_tell_watchers`)."""
        aid = seated.actor_id
        if allow:
            self.audience.refusing.discard(aid)
        else:
            self.audience.refusing.add(aid)
            text = "the player you watched does not want to be watched"
            self._end_watching(seated, ErrorCode.NOT_WATCHABLE, text)
        self._tell_watchers(seated)

    def _end_watching(self, seated: Any, code: ErrorCode, text: str) -> None:
        """Close every spectator of the player of ``seated`` with the fatal
        error ``code`` (here; a gateway also asks the others)."""
        self._end_spectators(seated.actor_id, code, text)

    def _tell_watchers(self, seated: Any) -> None:
        """Tell the player of ``seated`` how many watch it now (``watchers``)."""
        raise NotImplementedError

    def _watch_line(self, speaker: Any, text: str) -> None:
        """A chat line in a player's watch scope, said by the player or one
        of its spectators (within their chat rates): to the player and every
        spectator of it, as a ``chat`` with ``scope`` ``"watch"`` and ``to``
        the player's name."""
        raise NotImplementedError

    def _watch_chat_allowed(self, seated: Seated, msg: Chat) -> bool:
        """Whether a chat line may go to a watch scope: a spectator's line
        with ``to`` or ``scope`` ``"global"`` is refused with ``spectator``
        (non-fatal)."""
        if isinstance(seated, Spectator) and (msg.to is not None or msg.scope == "global"):
            text = "a spectator chats only with the player it watches and its spectators"
            self._error_now(seated.ws, ProtocolError(ErrorCode.SPECTATOR, text))
            return False
        return True

    def _end_spectators(self, actor_id: int, code: ErrorCode, text: str) -> int:
        """Close every spectator of player ``actor_id`` here with the fatal
        error ``code`` (``gone``, ``not_watchable``); how many."""
        ended = self.audience.take(actor_id)
        for spectator in ended:
            self._reply(spectator.ws, Error(code=code.value, msg=text, fatal=True))
            self._end(spectator, code.value)
        return len(ended)

    def _end(self, seated: Seated, code: str) -> None:
        """Stop handling a seated player's messages and close its connection."""
        ws = seated.ws
        if isinstance(ws, GuardedConnection):
            ws.on_message = None
        self._close_soon(ws, 1008, code)

    async def _handle(self, ws: ServerConnection) -> None:
        """One connection from its opening handshake to its close."""
        session = ServerSession()
        seated: Seated | None = None
        where = client_of(ws)
        self.metrics.gauge_by("connections", 1)
        log.debug("connection open from %s", where, extra={"event": "open", "address": where})
        try:
            bucket = message_bucket(time.monotonic())
            hello = await self._await_hello(ws, session, bucket)
            if hello is None:
                return
            if hello.watch is not None:
                seated = await self._admit_spectator(ws, hello, session, bucket)
                if seated is not None:
                    await self._serve(seated)
                return
            joining = await self._admit_join(ws, hello, session, bucket)
            if joining is None:
                return
            seated = await self._seat(ws, joining)
            if seated is None:
                return
            await self._serve(seated)
        except ConnectionClosed:
            pass
        finally:
            session.close()
            self.metrics.gauge_by("connections", -1)
            if isinstance(seated, Spectator):
                self._unwatch(seated)
            elif seated is not None:
                await self._unseat(seated)
            log.debug(
                "connection closed from %s", where, extra={"event": "close", "address": where}
            )

    def host_rule(self) -> HostRule:
        """The ``Host`` headers a browser's request may carry (DNS rebinding):
        :meth:`HostRule.of <server.net.web.HostRule.of>` this front's bind
        address and its limits' allowed origins and hosts, made once."""
        if self._hosts is None:
            limits = self.limits
            self._hosts = HostRule.of(self.host, limits.allowed_origins, limits.allowed_hosts)
        return self._hosts

    def _process_request(self, ws: ServerConnection, request: Request) -> Response | None:
        """The opening handshake's hook: read a trusted proxy's forwarded
        address; answer HTTP paths; answer a connection the address book
        refused with its HTTP error; refuse a browser's websocket from an
        origin not allowed (HTTP 403, :func:`~server.net.web.origin_refused`);
        refuse a browser's websocket and the web client's paths with a
        ``Host`` not allowed (HTTP 403, :meth:`host_rule`: DNS rebinding),
        unless a trusted proxy forwarded the request; answer the web
        client's paths (:class:`~server.net.web.WebSite`); let the others
        through."""
        if isinstance(ws, GuardedConnection):
            ws.forwarded(request.headers)
        answer = self._answer_http(ws, request)
        if answer is not None:
            return answer
        if isinstance(ws, GuardedConnection) and ws.refusal is not None:
            status, text = ws.refusal
            self._refused_connection(status)
            return ws.respond(status, text)
        headers = request.headers
        upgrade = is_upgrade(headers)
        why = origin_refused(headers, self.limits.allowed_origins) if upgrade else None
        # The Host of a browser's websocket (it has an Origin) and of the
        # web client's paths; what a trusted proxy forwarded (it says for
        # whom) is the proxy's to judge, by the names it serves.
        judged = "Origin" in headers if upgrade else self.web is not None
        if why is None and judged:
            proxied = (
                isinstance(ws, GuardedConnection)
                and ws.forwarded_from is not None
                and ("Forwarded" in headers or "X-Forwarded-For" in headers)
            )
            why = None if proxied else self.host_rule().refused(headers)
        if why is not None:
            log.info("refused %s: %s", client_of(ws), why, extra={"event": "origin"})
            return ws.respond(HTTPStatus.FORBIDDEN, why + "\n")
        if not upgrade and self.web is not None:
            return self.web.answer(ws, request, self.lobby_players)
        return None

    # ----------------------------------------------------------- sending

    def _send(self, ws: ServerConnection, data: bytes) -> None:
        """Write one encoded message to ``ws`` now (skipped if it is not
        open), counted in :attr:`metrics`."""
        self.metrics.sent(len(data))
        send_binary(ws, data)
        if self.recorder is not None:
            self._record(ws, self.current_tick(), data)

    def _record(self, ws: ServerConnection, tick: int, data: bytes) -> None:
        """Add ``data``, just written to ``ws`` at ``tick``, to its game's
        recording (:attr:`recorder`, which must be set), if it was written:
        a connection no longer open was skipped, and so is its frame here."""
        if ws.protocol.state is State.OPEN:
            self.recorder.frame(ws, tick, data)  # type: ignore[union-attr]

    def _reply(self, ws: ServerConnection, msg: ServerMessage) -> None:
        self._send(ws, encode_server(msg))

    async def _close(self, ws: ServerConnection, code: int, reason: str) -> None:
        """Close ``ws``; abort its transport if that cannot finish within
        ``CLOSE_TIMEOUT_S`` (e.g. a full write buffer the client does not read)."""
        try:
            async with asyncio.timeout(CLOSE_TIMEOUT_S):
                await ws.close(code, reason)
        except (TimeoutError, ConnectionClosed):
            pass
        if ws.state is not State.CLOSED and ws.transport is not None:
            ws.transport.abort()

    def _close_soon(self, ws: ServerConnection, code: int, reason: str) -> None:
        asyncio.get_running_loop().create_task(self._close(ws, code, reason))

    async def _fatal(self, ws: ServerConnection, code: str, detail: str) -> None:
        """Send a fatal ``error`` (never waiting on the client) and close:
        1001 for ``shutdown``, else 1008."""
        self._reply(ws, Error(code=code, msg=detail, fatal=True))
        await self._close(ws, 1001 if code == ErrorCode.SHUTDOWN else 1008, code)

    def _replace(self, old: ServerConnection) -> None:
        """Close a character's old connection: it connected again elsewhere."""
        self._reply(old, Error(code="replaced", msg=REPLACED_TEXT, fatal=True))
        self._close_soon(old, 1008, "replaced")

    # ----------------------------------------------------------- errors

    async def _error(self, ws: ServerConnection, exc: ProtocolError) -> bool:
        """Report a protocol error; return True if the connection must end
        (it is then closed before this returns)."""
        if exc.fatal:
            self._count_error(ws, exc)
            await self._fatal(ws, exc.code.value, exc.detail)
            return True
        return self._error_now(ws, exc)

    def _error_now(self, ws: ServerConnection, exc: ProtocolError) -> bool:
        """Report a protocol error without waiting; return True if the
        connection must end (its closing is then under way)."""
        self._count_error(ws, exc)
        self._reply(ws, Error(code=exc.code.value, msg=exc.detail, fatal=exc.fatal))
        if exc.fatal:
            self._close_soon(ws, 1008, exc.code.value)
        return exc.fatal

    def _count_error(self, ws: ServerConnection, exc: ProtocolError) -> None:
        self.metrics.count("protocol_errors", exc.code.value)
        log.debug(
            "protocol error %s: %s",
            exc.code.value,
            exc.detail,
            extra={"event": "protocol_error", "code": exc.code.value, "address": client_of(ws)},
        )

    # ----------------------------------------------------------- rates

    def _admit_now(self, ws: ServerConnection, bucket: TokenBucket) -> bool | None:
        """Spend a token for one incoming message: True to handle it, False to
        drop it (the first dropped in a window is answered ``rate_limited``),
        None when the connection floods: it is told so (``flood``, fatal) and
        the caller must end it."""
        if bucket.allow(time.monotonic()):
            return True
        return None if self._dropped_now(ws, bucket) else False

    def _dropped_now(self, ws: ServerConnection, bucket: TokenBucket) -> bool:
        """A message ``bucket`` had no token for is dropped: the first dropped
        in a window is answered ``rate_limited``; True when the connection
        floods: it is told so (``flood``, fatal) and the caller must end it."""
        if bucket.flooding:
            exc = ProtocolError(ErrorCode.FLOOD, "too many messages")
            self._count_error(ws, exc)
            self._reply(ws, Error(code=exc.code.value, msg=exc.detail, fatal=True))
            return True
        if bucket.dropped_in_window == 1:
            self._error_now(
                ws, ProtocolError(ErrorCode.RATE_LIMITED, f"over {RATE_PER_S} messages per second")
            )
        return False

    def _chat_allowed(
        self, ws: ServerConnection, chat: TokenBucket, global_chat: TokenBucket, msg: Chat
    ) -> bool:
        """Whether a chat line is within its sender's chat rates (every line
        spends from ``chat``; a global line spends from ``global_chat`` too);
        the first line dropped in a window is answered ``rate_limited``."""
        now = time.monotonic()
        bucket, rate, what = chat, CHAT_RATE_PER_S, ""
        ok = chat.allow(now)
        if ok and msg.to is None and msg.scope == "global":
            bucket, rate, what = global_chat, GLOBAL_CHAT_RATE_PER_S, "global "
            ok = global_chat.allow(now)
        if not ok and bucket.dropped_in_window == 1:
            self._error_now(
                ws,
                ProtocolError(ErrorCode.RATE_LIMITED, f"{what}chat over {rate:g} lines per second"),
            )
        return ok

    # ----------------------------------------------------------- hello and join

    async def _await_hello(
        self, ws: ServerConnection, session: ServerSession, bucket: TokenBucket
    ) -> Hello | None:
        """The connection's ``hello``, answering pings and protocol errors
        meanwhile; None when the connection ended (closed before this returns)."""
        try:
            async with asyncio.timeout(HELLO_TIMEOUT_S):
                async for raw in ws:
                    admitted = self._admit_now(ws, bucket)
                    if admitted is None:
                        await self._close(ws, 1008, ErrorCode.FLOOD.value)
                        return None
                    if not admitted:
                        continue
                    try:
                        msg = session.receive(decode_client(raw))
                        if isinstance(msg, Hello):
                            check_version(msg.v)
                    except ProtocolError as exc:
                        if await self._error(ws, exc):
                            return None
                        continue
                    if isinstance(msg, Ping):
                        self._reply(ws, Pong(id=msg.id, tick=self.current_tick()))
                    elif isinstance(msg, Hello):
                        return msg
        except TimeoutError:
            await self._error(ws, ProtocolError(ErrorCode.TIMEOUT, "no hello in time"))
        return None

    async def _admit_join(
        self, ws: ServerConnection, hello: Hello, session: ServerSession, bucket: TokenBucket
    ) -> Joining | None:
        """Whether ``hello`` may go to the host: None when refused (then
        closed): ``shutdown`` while draining, ``limited`` for an address
        throttled for failed tokens (:meth:`AddressBook.token_blocked`)."""
        if self.draining:
            await self._refuse(ws, hello.name, ErrorCode.SHUTDOWN.value, self.stopping_text)
            return None
        addr = ip_of(ws)
        now = time.monotonic()
        blocked = self.book.token_blocked(addr, hello.name, now)
        if blocked is not None:
            self.book.refused(
                addr, "token failures", f"too many for this {blocked} (joining as {hello.name!r})"
            )
            await self._refuse(
                ws,
                hello.name,
                ErrorCode.LIMITED.value,
                "too many failed token attempts from your address; wait a minute",
            )
            return None
        return Joining(hello, session, bucket, addr, self.book.may_create(addr, now))

    async def _join_refused(
        self, ws: ServerConnection, joining: Joining, code: str, detail: str
    ) -> None:
        """The host refused the join (``code``, ``detail``): count a wrong
        token against the throttle, log a new-characters cap, tell the client
        and close."""
        if code == ErrorCode.NAME_TAKEN:
            self.book.token_failed(joining.address, joining.hello.name, time.monotonic())
        elif code == ErrorCode.LIMITED:
            self.book.refused(
                joining.address,
                "new characters",
                f"{self.limits.new_chars_per_hour} in the last hour",
            )
        await self._refuse(ws, joining.hello.name, code, detail)

    def _joined(
        self,
        ws: ServerConnection,
        joining: Joining,
        name: str,
        actor_id: int,
        resumed: bool,
        depth: int | None,
    ) -> None:
        """Count and log a join the host accepted."""
        if not resumed:
            self.book.record_created(joining.address, time.monotonic())
        self.metrics.count("joins", "resumed" if resumed else "new")
        where = client_of(ws)
        log.info(
            "%s joined as actor %d%s",
            name,
            actor_id,
            " (resumed)" if resumed else "",
            extra={
                "event": "join",
                "player": name,
                "actor": actor_id,
                "address": where,
                "resumed": resumed,
                "depth": depth,
            },
        )

    async def _refuse(self, ws: ServerConnection, name: str | None, code: str, text: str) -> None:
        """Refuse a join: count it, log it, send the fatal ``error`` and close."""
        self.metrics.count("refusals", code)
        where = client_of(ws)
        log.info(
            "refused %s from %s: %s",
            name,
            where,
            code,
            extra={"event": "refuse", "player": name, "address": where, "code": code},
        )
        await self._fatal(ws, code, text)
