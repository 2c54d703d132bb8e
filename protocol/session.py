"""The server's view of one session, as a state table (docs/protocol.md, "Session").

States: ``CONNECTED`` (websocket open, no ``welcome`` yet) -> ``PLAYING``
(after the server sent ``welcome``) or ``WATCHING`` (after a spectator's
``welcome``, protocol 12) -> ``CLOSED``. What a client may send in each
state is the table :data:`CLIENT_TRANSITIONS`; a message not in it is a
lookup miss, reported as ``not_allowed``, or as ``spectator`` for a game
message from a spectator (:data:`SPECTATOR_REFUSED`).

The class does no I/O and keeps no clock: the server feeds it each decoded
message, and tells it when it welcomed the client or closed the connection.
"""

from __future__ import annotations

from enum import Enum

from protocol.errors import ErrorCode, LocalProtocolError, ProtocolError
from protocol.messages import Chat, ClientMessage, Command, Hello, Look, Ping, Spectators


class SessionState(Enum):
    """Where a session is in its life."""

    CONNECTED = "connected"
    PLAYING = "playing"
    WATCHING = "watching"
    CLOSED = "closed"

    # Members are singletons compared by identity: hashed by identity too,
    # in C, rather than by Enum's hash(self._name_) in Python (looked up in
    # CLIENT_TRANSITIONS with every message a client sends).
    __hash__ = object.__hash__


CLIENT_TRANSITIONS: dict[tuple[SessionState, type], SessionState] = {
    (SessionState.CONNECTED, Hello): SessionState.CONNECTED,
    (SessionState.CONNECTED, Ping): SessionState.CONNECTED,
    (SessionState.PLAYING, Command): SessionState.PLAYING,
    (SessionState.PLAYING, Chat): SessionState.PLAYING,
    (SessionState.PLAYING, Ping): SessionState.PLAYING,
    (SessionState.PLAYING, Look): SessionState.PLAYING,
    (SessionState.PLAYING, Spectators): SessionState.PLAYING,
    (SessionState.WATCHING, Chat): SessionState.WATCHING,
    (SessionState.WATCHING, Ping): SessionState.WATCHING,
}
"""(state, client message type) -> next state, for every legal client message.

A ``hello`` does not change the state by itself: the server answers it with
``welcome`` (then calls :meth:`ServerSession.welcomed`) or a fatal error
(then :meth:`ServerSession.close`).
"""

SPECTATOR_REFUSED: frozenset[type] = frozenset({Command, Look})
"""The game's messages a spectator may not send (protocol 12): refused with
the non-fatal ``spectator`` error rather than ``not_allowed``, to say why."""

SERVER_TRANSITIONS: dict[tuple[SessionState, str], SessionState] = {
    (SessionState.CONNECTED, "welcome"): SessionState.PLAYING,
    (SessionState.CONNECTED, "watch"): SessionState.WATCHING,
    (SessionState.CONNECTED, "close"): SessionState.CLOSED,
    (SessionState.PLAYING, "close"): SessionState.CLOSED,
    (SessionState.WATCHING, "close"): SessionState.CLOSED,
    (SessionState.CLOSED, "close"): SessionState.CLOSED,
}
"""(state, server action) -> next state, for what the server itself does."""


class ServerSession:
    """The protocol state of one client connection, on the server.

    Attributes:
        state: the current :class:`SessionState`.
    """

    def __init__(self) -> None:
        self.state = SessionState.CONNECTED

    def receive(self, msg: ClientMessage) -> ClientMessage:
        """Check that the client may send ``msg`` now, and advance the state.

        Args:
            msg: a message from :func:`protocol.codec.decode_client`.

        Returns:
            ``msg``, for chaining (``session.receive(decode_client(data))``).

        Raises:
            ProtocolError: ``not_allowed`` (non-fatal) if ``msg`` is not
                allowed in the current state, ``spectator`` (non-fatal) for
                a command or a look from a spectator; the state is
                unchanged, the server reports the error and drops the
                message.
        """
        try:
            self.state = CLIENT_TRANSITIONS[self.state, type(msg)]
        except KeyError:
            if self.state is SessionState.WATCHING and type(msg) in SPECTATOR_REFUSED:
                raise ProtocolError(
                    ErrorCode.SPECTATOR,
                    f"a spectator sends no {type(msg).__name__.lower()}: it only watches",
                ) from None
            raise ProtocolError(
                ErrorCode.NOT_ALLOWED,
                f"{type(msg).__name__.lower()} is not allowed while {self.state.value}",
            ) from None
        return msg

    def welcomed(self) -> None:
        """Record that the server sent ``welcome``: the session is now playing.

        Raises:
            LocalProtocolError: the session is not ``CONNECTED`` (a bug in the
                caller: a session is welcomed once).
        """
        self._server_action("welcome")

    def watching(self) -> None:
        """Record that the server sent a spectator's ``welcome``: the session
        now watches (protocol 12: chat and ping only).

        Raises:
            LocalProtocolError: the session is not ``CONNECTED``.
        """
        self._server_action("watch")

    def close(self) -> None:
        """Record that the connection is closed (idempotent); nothing is allowed after."""
        self._server_action("close")

    def _server_action(self, action: str) -> None:
        try:
            self.state = SERVER_TRANSITIONS[self.state, action]
        except KeyError:
            raise LocalProtocolError(
                f"cannot {action} a session that is {self.state.value}"
            ) from None
