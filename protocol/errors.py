"""Error codes of the wire protocol and the exceptions that carry them.

:class:`ProtocolError` is the one exception raised for anything a peer sent
that cannot be accepted: undecodable bytes, a malformed message, a message not
allowed in the session's state, a wrong version. Its :attr:`~ProtocolError.code`
is what the server puts in an ``error`` message.

:class:`LocalProtocolError` is raised when *this* side misuses the sans-I/O
objects (e.g. calls :meth:`~protocol.session.ServerSession.welcomed` twice);
it signals a bug in the caller, never bad input.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    """The ``code`` of an ``error`` message (docs/protocol.md, "error codes")."""

    BAD_MSGPACK = "bad_msgpack"
    BAD_MESSAGE = "bad_message"
    UNKNOWN_TYPE = "unknown_type"
    BAD_FIELD = "bad_field"
    NOT_ALLOWED = "not_allowed"
    RATE_LIMITED = "rate_limited"
    TOO_LARGE = "too_large"
    VERSION = "version"
    NAME_TAKEN = "name_taken"
    BAD_CLASS = "bad_class"
    SERVER_FULL = "server_full"
    FLOOD = "flood"
    TIMEOUT = "timeout"
    SHUTDOWN = "shutdown"
    REPLACED = "replaced"
    KICKED = "kicked"
    BANNED = "banned"
    LIMITED = "limited"
    SPECTATOR = "spectator"
    NOT_PLAYING = "not_playing"
    NOT_WATCHABLE = "not_watchable"
    GONE = "gone"

    @property
    def fatal(self) -> bool:
        """Whether the server closes the connection after sending this error."""
        return self in FATAL_CODES


FATAL_CODES: frozenset[ErrorCode] = frozenset(
    {
        ErrorCode.TOO_LARGE,
        ErrorCode.VERSION,
        ErrorCode.NAME_TAKEN,
        ErrorCode.BAD_CLASS,
        ErrorCode.SERVER_FULL,
        ErrorCode.FLOOD,
        ErrorCode.TIMEOUT,
        ErrorCode.SHUTDOWN,
        ErrorCode.REPLACED,
        ErrorCode.KICKED,
        ErrorCode.BANNED,
        ErrorCode.LIMITED,
        ErrorCode.NOT_PLAYING,
        ErrorCode.NOT_WATCHABLE,
        ErrorCode.GONE,
    }
)
"""Codes after which the server closes the websocket (1008, or 1001 for shutdown)."""


class ProtocolError(Exception):
    """The peer sent something the protocol does not accept.

    Attributes:
        code: the error code to report.
        detail: a human-readable explanation (goes into ``error.msg``).
        fatal: whether the connection must be closed; derived from ``code``.
    """

    code: ErrorCode
    detail: str

    def __init__(self, code: ErrorCode, detail: str = "") -> None:
        super().__init__(code, detail)
        self.code = code
        self.detail = detail

    @property
    def fatal(self) -> bool:
        """Whether the connection must be closed after reporting this error."""
        return self.code.fatal

    def __str__(self) -> str:
        return f"{self.code.value}: {self.detail}" if self.detail else self.code.value


class LocalProtocolError(Exception):
    """This side used a sans-I/O object in a way the protocol does not allow.

    Raised for caller bugs (e.g. welcoming a session twice), never for input
    from the peer.
    """
