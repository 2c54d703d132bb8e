"""A player's websocket as the conformance tests see it: real connections to
127.0.0.1 from a test's own loopback address, messages out through
:func:`protocol.codec.encode_client` (or raw bytes, for hostile input), and
every frame in both as the client's decoder checks it
(:func:`protocol.codec.decode_server`: a frame a client would refuse fails
the test) and as a map of the wire's own keys (:func:`tests.rawwire.read_frame`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import websockets
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from protocol.codec import decode_server, encode_client
from protocol.messages import Chat, ClientMessage, Command, CommandName, Hello, Ping
from protocol.version import PROTOCOL_VERSION
from tests.rawwire import read_frame

RECV_TIMEOUT_S = 5.0
"""Seconds a test waits for a message it expects (a cluster's join may
take a few hundred milliseconds on a loaded machine)."""

Msg = dict[str, Any]


class Closed(Exception):
    """The server closed the connection; ``code`` and ``reason`` of its close frame."""

    def __init__(self, code: int | None, reason: str) -> None:
        super().__init__(f"closed by the server: {code} {reason!r}")
        self.code = code
        self.reason = reason


class Player:
    """One connection of a test client.

    Attributes:
        ws: The websocket.
        seen: Every message received so far, in order (maps of wire keys;
            a delta gets ``"t": "delta"``, see :mod:`tests.rawwire`).
        raw: The frames received so far, as bytes.
    """

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.seen: list[Msg] = []
        self.raw: list[bytes] = []
        self.seq = 0
        self.welcome: Msg = {}

    async def send(self, msg: ClientMessage | bytes | str) -> None:
        """Send a client message, or a raw binary (bytes) or text (str) frame."""
        data = msg if isinstance(msg, bytes | str) else encode_client(msg)
        try:  # a server that stops reading must not hang the test
            await asyncio.wait_for(self.ws.send(data), RECV_TIMEOUT_S)
        except ConnectionClosed as exc:
            rcvd = exc.rcvd
            raise Closed(
                None if rcvd is None else rcvd.code, "" if rcvd is None else rcvd.reason
            ) from exc

    async def command(self, c: CommandName, d: tuple[int, int] | None = None) -> int:
        """Send command ``c`` with the next ``seq``; that ``seq``."""
        seq = self.seq
        self.seq += 1
        await self.send(Command(seq=seq, c=c, d=d))
        return seq

    async def say(self, text: str, scope: str = "level", to: str | None = None) -> None:
        """Send a chat line."""
        await self.send(Chat(text=text, scope=scope, to=to))

    async def recv(self, timeout: float = RECV_TIMEOUT_S) -> Msg:
        """The next message.

        Raises:
            Closed: The server closed the connection.
            TimeoutError: Nothing within ``timeout`` seconds.
        """
        try:
            data = await asyncio.wait_for(self.ws.recv(), timeout)
        except ConnectionClosed as exc:
            rcvd = exc.rcvd
            raise Closed(
                None if rcvd is None else rcvd.code, "" if rcvd is None else rcvd.reason
            ) from exc
        assert isinstance(data, bytes), f"a text frame from the server: {data!r}"
        decode_server(data)  # what a client accepts (raises ProtocolError if not)
        msg = read_frame(self.ws, data)
        self.raw.append(data)
        self.seen.append(msg)
        return msg

    async def recv_until(self, done: Callable[[Msg], bool], timeout: float = RECV_TIMEOUT_S) -> Msg:
        """Receive until a message passes ``done``; that message.

        Raises:
            Closed: The server closed the connection first.
            TimeoutError: Not within ``timeout`` seconds.
        """
        async with asyncio.timeout(timeout):
            while True:
                msg = await self.recv(timeout)
                if done(msg):
                    return msg

    async def quiet(self, seconds: float) -> list[Msg]:
        """Every message that arrives within ``seconds``."""
        out: list[Msg] = []
        loop = asyncio.get_running_loop()
        end = loop.time() + seconds
        while (left := end - loop.time()) > 0:
            try:
                out.append(await self.recv(left))
            except TimeoutError:
                break
        return out

    async def chats(self, quiet: float = 0.6) -> list[Msg]:
        """The ``chat`` and ``error`` messages that arrive until ``quiet``
        seconds pass without one."""
        out: list[Msg] = []
        loop = asyncio.get_running_loop()
        last = loop.time()
        while (left := last + quiet - loop.time()) > 0:
            try:
                msg = await self.recv(left)
            except TimeoutError:
                break
            if msg["t"] in ("chat", "error"):
                out.append(msg)
                last = loop.time()
        return out

    async def error(self, timeout: float = RECV_TIMEOUT_S) -> Msg:
        """The next ``error`` message (other messages are skipped)."""
        return await self.recv_until(lambda m: m["t"] == "error", timeout)

    async def pong(self, ident: int, timeout: float = RECV_TIMEOUT_S) -> Msg:
        """Ping with ``ident``; the ``pong`` that answers it."""
        await self.send(Ping(id=ident))
        return await self.recv_until(lambda m: m["t"] == "pong" and m["id"] == ident, timeout)

    async def acked(self, seq: int, timeout: float = RECV_TIMEOUT_S) -> Msg:
        """The ``snap`` or delta whose ``ack`` reaches ``seq``."""
        return await self.recv_until(
            lambda m: m["t"] in ("snap", "delta") and m.get("ack", -1) >= seq, timeout
        )

    async def closed(self, timeout: float = RECV_TIMEOUT_S) -> int | None:
        """Read on until the server closes the connection; its close code
        (None if it dropped the connection without a close frame).

        Raises:
            TimeoutError: Still open after ``timeout`` seconds.
        """
        try:
            await self.recv_until(lambda m: False, timeout)
        except Closed as exc:
            return exc.code
        raise AssertionError("unreachable")

    async def close(self) -> None:
        """Close the connection (from the client's side); drop it if the
        closing handshake does not finish in time."""
        try:
            await asyncio.wait_for(self.ws.close(), RECV_TIMEOUT_S)
        except TimeoutError:
            if self.ws.transport is not None:
                self.ws.transport.abort()


async def connect(url: str, source: str, opened: list[Player] | None = None) -> Player:
    """Open a websocket to ``url`` from the address ``source`` (appended to
    ``opened`` if given)."""
    ws = await websockets.connect(
        url, compression=None, local_addr=(source, 0), open_timeout=RECV_TIMEOUT_S
    )
    player = Player(ws)
    if opened is not None:
        opened.append(player)
    return player


def hello(
    name: str, token: str | None = None, cls: str | None = None, v: int | None = None
) -> Hello:
    """A ``hello`` of this protocol version (unless ``v``)."""
    return Hello(v=PROTOCOL_VERSION if v is None else v, name=name, token=token, cls=cls)


async def answer_to_hello(
    url: str,
    source: str,
    name: str,
    token: str | None = None,
    cls: str | None = None,
    opened: list[Player] | None = None,
) -> tuple[Player, Msg]:
    """Connect and say ``hello``; the player and the first message answered."""
    player = await connect(url, source, opened)
    await player.send(hello(name, token, cls))
    return player, await player.recv()


async def join(
    url: str,
    source: str,
    name: str,
    token: str | None = None,
    cls: str | None = None,
    opened: list[Player] | None = None,
) -> tuple[Player, Msg]:
    """Connect, say ``hello`` and read up to the first ``snap``; the player
    (its ``welcome`` kept) and that snapshot.

    Raises:
        AssertionError: The server answered with anything but ``welcome``,
            or sent anything between it and the ``snap``.
    """
    player, welcome = await answer_to_hello(url, source, name, token, cls, opened)
    assert welcome["t"] == "welcome", welcome
    player.welcome = welcome
    snap = await player.recv()
    assert snap["t"] == "snap", f"the first frame after welcome is a {snap['t']}: {snap}"
    return player, snap


def own_cell(msg: Msg) -> tuple[int, int]:
    """The player's own cell in a ``snap`` (or a delta that moved it)."""
    return msg["me"]["x"], msg["me"]["y"]


def actor_ids(snap: Msg) -> set[int]:
    """The ids of every actor record of a ``snap``."""
    return {int(a[0]) for a in snap["actors"]}
