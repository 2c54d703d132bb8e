"""The server's view of one session, as a state table (docs/protocol.md, "Session").

States: ``CONNECTED`` (websocket open, no ``welcome`` yet) -> ``PLAYING``
(after the server sent ``welcome``) -> ``CLOSED``. What a client may send in
each state is the table :data:`CLIENT_TRANSITIONS`; a message not in it is a
lookup miss, reported as ``not_allowed``.

The class does no I/O and keeps no clock: the server feeds it each decoded
message, and tells it when it welcomed the client or closed the connection.
"""

from __future__ import annotations

from enum import Enum

from protocol.errors import ErrorCode, LocalProtocolError, ProtocolError
from protocol.messages import Chat, ClientMessage, Command, Hello, Look, Ping


class SessionState(Enum):
    """Where a session is in its life."""

    CONNECTED = "connected"
    PLAYING = "playing"
    CLOSED = "closed"


CLIENT_TRANSITIONS: dict[tuple[SessionState, type], SessionState] = {
    (SessionState.CONNECTED, Hello): SessionState.CONNECTED,
    (SessionState.CONNECTED, Ping): SessionState.CONNECTED,
    (SessionState.PLAYING, Command): SessionState.PLAYING,
    (SessionState.PLAYING, Chat): SessionState.PLAYING,
    (SessionState.PLAYING, Ping): SessionState.PLAYING,
    (SessionState.PLAYING, Look): SessionState.PLAYING,
}
"""(state, client message type) -> next state, for every legal client message.

A ``hello`` does not change the state by itself: the server answers it with
``welcome`` (then calls :meth:`ServerSession.welcomed`) or a fatal error
(then :meth:`ServerSession.close`).
"""

SERVER_TRANSITIONS: dict[tuple[SessionState, str], SessionState] = {
    (SessionState.CONNECTED, "welcome"): SessionState.PLAYING,
    (SessionState.CONNECTED, "close"): SessionState.CLOSED,
    (SessionState.PLAYING, "close"): SessionState.CLOSED,
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
                allowed in the current state; the state is unchanged, the
                server reports the error and drops the message.
        """
        try:
            self.state = CLIENT_TRANSITIONS[self.state, type(msg)]
        except KeyError:
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
