"""The client's websocket connection to an Underhall server.

A thin asyncio shell around :mod:`protocol`: :class:`Connection` moves
msgpack frames and turns them into messages; it keeps no game state (that is
:class:`client.model.GameModel`). Also a small store for the resume tokens
the server hands out in ``welcome``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import ssl
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed as _WSConnectionClosed
from websockets.exceptions import WebSocketException

from protocol.codec import decode_server, encode_client
from protocol.errors import ErrorCode, ProtocolError
from protocol.limits import MAX_SEQ
from protocol.messages import (
    ClientMessage,
    Command,
    CommandName,
    Delta,
    Error,
    Hello,
    Reject,
    ServerMessage,
    Snapshot,
    Welcome,
    unpack_rejects,
)
from protocol.version import PROTOCOL_VERSION

MAX_RECEIVE_BYTES = 2**20
"""Largest frame accepted from a server (a snapshot of a big level fits)."""

SENT_AT_LIMIT = 1024
"""Send times kept in :attr:`Connection.sent_at`; the oldest are dropped beyond."""


def _pair(what: str, value: Sequence[int] | None) -> tuple[int, int] | None:
    """Two numbers as an int pair; None stays None.

    Raises:
        ValueError: ``value`` does not hold exactly two numbers.
    """
    if value is None:
        return None
    if len(value) != 2:
        raise ValueError(f"a {what} is a pair, not {value!r}")
    return (int(value[0]), int(value[1]))


class ConnectionClosed(Exception):
    """The connection is closed, or could not be opened.

    Attributes:
        reason: why, for a human: the server's fatal error, the close reason,
            or "cannot reach ...".
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


async def _connect(
    url: str, open_timeout: float, ca: str | os.PathLike[str] | None = None
) -> ClientConnection:
    """Open the websocket (no ``hello`` yet); a ``wss://`` URL's certificate
    is verified (against ``ca`` too, when given).

    Raises:
        ConnectionClosed: "cannot reach URL: why", the cause chained.
    """
    try:
        return await connect(
            url,
            compression=None,
            max_size=MAX_RECEIVE_BYTES,
            open_timeout=open_timeout,
            ssl=client_ssl(url, ca),
        )
    except (OSError, TimeoutError, WebSocketException, EOFError, ValueError) as exc:
        raise ConnectionClosed(f"cannot reach {url}: {str(exc) or type(exc).__name__}") from exc


async def probe(
    url: str, *, timeout: float = 5.0, ca: str | os.PathLike[str] | None = None
) -> None:
    """Check that a websocket server answers at ``url``: open and close at once.

    Raises:
        ConnectionClosed: it cannot be reached (as :meth:`Connection.open`).
    """
    ws = await _connect(url, timeout, ca)
    with contextlib.suppress(Exception):
        async with asyncio.timeout(timeout):
            await ws.close()


class Connection:
    """One session with a server, from ``hello`` on.

    Create with :meth:`open`. Only one task may call :meth:`recv` at a time;
    sending from another task is fine.

    Attributes:
        welcome: the server's ``welcome``.
        sent_at: ``time.perf_counter()`` at which each command ``seq`` was
            sent; callers may pop entries once acknowledged. Bounded to
            :data:`SENT_AT_LIMIT` entries, oldest dropped first.
        bytes_received: payload bytes received, ``welcome`` included.
        messages_received: frames received, ``welcome`` included.
        ack: the ``seq`` of the last command the server acknowledged, as of
            the last frame :meth:`recv` read (−1 before any): a ``snap``
            gives it whole, a delta as the step from the one before
            (protocol 10), and each refusal's ``seq`` counts back from it.
    """

    welcome: Welcome

    def __init__(self, ws: ClientConnection, url: str) -> None:
        """Wrap an open websocket; use :meth:`open` instead."""
        self._ws = ws
        self._url = url
        self._next_seq = 0
        self._fatal: str | None = None
        self._pending: deque[ServerMessage] = deque()
        self.sent_at: dict[int, float] = {}
        self.bytes_received = 0
        self.messages_received = 0
        self.ack = -1

    @classmethod
    async def open(
        cls,
        url: str,
        name: str,
        *,
        cls_key: str | None = None,
        token: str | None = None,
        open_timeout: float = 5.0,
        ca: str | os.PathLike[str] | None = None,
        watch: str | None = None,
    ) -> Connection:
        """Connect, say ``hello`` and wait for ``welcome``.

        Args:
            url: ``ws://host:port/``.
            name: player name (1-16 of ``A-Z a-z 0-9 _ -``).
            cls_key: class of a new character (a key of ``welcome.classes``);
                None for the server's default.
            token: resume token from an earlier ``welcome`` for this name.
            open_timeout: seconds allowed for the handshake, and again for
                the ``welcome``.
            ca: for ``wss://``, a PEM file of the authority to trust instead
                of the system's (a private authority or a self-signed
                certificate); default ``$UNDERHALL_CA`` if set. The server's
                certificate and host name are always verified.
            watch: a player's name: watch that player as a spectator called
                ``name`` instead of playing (protocol 12; ``cls_key`` and
                ``token`` must then be None).

        Returns:
            The connection; the server's ``snap`` is the next :meth:`recv`.

        Raises:
            ConnectionClosed: the server cannot be reached ("cannot reach
                ...", a certificate that does not verify included), refused the ``hello`` (the reason is its error's code
                and text), sent something undecodable, or did not answer in
                time. The websocket is closed.
        """
        ws = await _connect(url, open_timeout, ca)
        conn = cls(ws, url)
        hello = Hello(PROTOCOL_VERSION, name, token, cls_key, watch)
        try:
            # asyncio.timeout, not wait_for: 3.11's wait_for may swallow a cancellation
            async with asyncio.timeout(open_timeout):
                conn.welcome = await conn._handshake(hello)
        except TimeoutError as exc:
            await ws.close()
            raise ConnectionClosed(f"no welcome from {url} within {open_timeout:g} s") from exc
        except ProtocolError as exc:
            await ws.close()
            raise ConnectionClosed(f"bad reply from {url}: {exc}") from exc
        except ConnectionClosed:
            await ws.close()
            raise
        except BaseException:
            ws.transport.abort()  # cancelled: do not wait for a closing handshake
            raise
        return conn

    async def _handshake(self, hello: Hello) -> Welcome:
        await self.send(hello)
        while True:
            msg = await self.recv()
            if isinstance(msg, Welcome):
                if msg.v != PROTOCOL_VERSION:
                    raise ConnectionClosed(f"server speaks protocol version {msg.v}")
                return msg
            if isinstance(msg, Error):
                raise ConnectionClosed(f"{msg.code}: {msg.msg}" if msg.msg else msg.code)

    @property
    def closed(self) -> bool:
        """Whether the websocket is closing or closed."""
        return self._ws.close_code is not None

    async def send(self, msg: ClientMessage) -> None:
        """Send one message.

        Raises:
            ConnectionClosed: the connection is closed.
        """
        try:
            await self._ws.send(encode_client(msg))
        except _WSConnectionClosed as exc:
            raise ConnectionClosed(self._reason(exc)) from exc

    async def command(
        self,
        c: CommandName | str,
        d: Sequence[int] | None = None,
        *,
        item: str | None = None,
        at: Sequence[int] | None = None,
        spell: str | None = None,
        opt: str | None = None,
    ) -> int:
        """Send a ``cmd`` with the next sequence number.

        Which keys a command takes is docs/protocol.md's table; the server
        checks it (a wrong set is answered with a ``bad_field`` error).

        Args:
            c: the command (``"move"``, ...).
            d: direction ``(dx, dy)`` (move, open, close, zap, some casts).
            item: pack letter (drop, wield, wear, remove, eat, quaff, read,
                throw, zap).
            at: target cell ``(x, y)`` (throw, some casts).
            spell: spell key (cast).
            opt: reward key (choose).

        Returns:
            The ``seq`` used; its send time is in :attr:`sent_at`.

        Raises:
            ValueError: ``c`` names no command, or ``d`` or ``at`` is not two
                numbers.
            ConnectionClosed: the connection is closed.
        """
        name = CommandName(c)
        direction = _pair("direction", d)
        cell = _pair("target cell", at)
        seq = self._next_seq
        self._next_seq = (seq + 1) % MAX_SEQ
        sent_at = self.sent_at
        sent_at.pop(seq, None)
        sent_at[seq] = time.perf_counter()
        while len(sent_at) > SENT_AT_LIMIT:
            del sent_at[next(iter(sent_at))]
        try:
            await self.send(Command(seq, name, direction, item, cell, spell, opt))
        except ConnectionClosed:
            sent_at.pop(seq, None)
            raise
        return seq

    async def recv(self) -> ServerMessage:
        """Wait for the next message from the server.

        Returns:
            The decoded message. A fatal ``error`` is returned like any other
            message; the following call raises :class:`ConnectionClosed` with
            its text as the reason.

        Raises:
            ConnectionClosed: the connection closed.
            ProtocolError: the frame could not be decoded; it is dropped and
                the connection stays usable.
        """
        if self._pending:
            return self._pending.popleft()
        try:
            data = await self._ws.recv()
        except _WSConnectionClosed as exc:
            raise ConnectionClosed(self._reason(exc)) from exc
        self.messages_received += 1
        if isinstance(data, str):
            self.bytes_received += len(data.encode())
            raise ProtocolError(ErrorCode.BAD_MESSAGE, "the server sent a text frame")
        self.bytes_received += len(data)
        msg = decode_server(data)
        if isinstance(msg, Error) and msg.fatal:
            self._fatal = f"{msg.code}: {msg.msg}" if msg.msg else msg.code
        if isinstance(msg, Snapshot):
            self.ack = msg.ack
        elif isinstance(msg, Delta) and msg.ack is not None:
            self.ack += msg.ack  # the step from the last one (protocol 10)
        if isinstance(msg, (Delta, Snapshot)) and msg.rej:
            # Protocol 3 folds the tick's refusals into its one frame; they
            # are handed out first, as ``reject`` messages, then the frame.
            # Protocol 6 names each reason by its code in welcome.reasons.
            welcome = getattr(self, "welcome", None)
            reasons = welcome.reasons if welcome is not None else []
            rejects = [
                Reject(seq=seq, reason=reason)
                for seq, reason in unpack_rejects(msg.rej, reasons, self.ack)
            ]
            self._pending.extend(rejects[1:])
            self._pending.append(msg)
            if rejects:
                return rejects[0]
            return self._pending.popleft()
        return msg

    async def close(self) -> None:
        """Close the connection (idempotent); waits for the closing handshake."""
        await self._ws.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def _reason(self, exc: _WSConnectionClosed) -> str:
        if self._fatal is not None:
            return self._fatal
        if exc.rcvd is not None and exc.rcvd.reason:
            return exc.rcvd.reason
        return f"connection to {self._url} closed ({exc})"


def client_ssl(url: str, ca: str | os.PathLike[str] | None = None) -> ssl.SSLContext | None:
    """The TLS context for ``url``: None for ``ws://``; for ``wss://`` one that
    verifies the server's certificate and host name against ``ca`` (else
    ``$UNDERHALL_CA``, else the system's authorities).

    Raises:
        ConnectionClosed: ``ca`` cannot be read as PEM certificates.
    """
    if not url.startswith("wss://"):
        return None
    cafile = ca if ca is not None else os.environ.get("UNDERHALL_CA") or None
    try:
        return ssl.create_default_context(cafile=cafile)
    except (OSError, ssl.SSLError) as exc:
        raise ConnectionClosed(f"cannot use certificate authority {cafile}: {exc}") from exc


# --- resume tokens ------------------------------------------------------------


def token_path() -> Path:
    """The token file: ``$UNDERHALL_HOME/tokens.json``, else ``~/.config/underhall/tokens.json``."""
    home = os.environ.get("UNDERHALL_HOME")
    base = Path(home) if home else Path.home() / ".config" / "underhall"
    return base / "tokens.json"


def _server_key(url: str) -> str:
    return url.rstrip("/")


def _read_tokens(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def load_token(url: str, name: str) -> str | None:
    """The saved resume token for ``name`` on the server at ``url``, or None.

    A missing, unreadable or corrupt token file counts as empty; never raises.
    """
    servers = _read_tokens(token_path()).get(_server_key(url))
    token = servers.get(name) if isinstance(servers, dict) else None
    return token if isinstance(token, str) else None


def save_token(url: str, name: str, token: str) -> bool:
    """Remember ``token`` for ``name`` on the server at ``url``.

    Creates the directory if needed, replaces a corrupt file, writes
    atomically with mode 0600 (a token is a secret).

    Returns:
        True if saved, False if the file could not be written (never raises
        for I/O errors: losing a token must not stop a game).
    """
    path = token_path()
    data = _read_tokens(path)
    key = _server_key(url)
    servers = data.get(key)
    if not isinstance(servers, dict):
        servers = {}
    servers[name] = token
    data[key] = servers
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        return False
    return True
