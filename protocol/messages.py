"""The messages of the wire protocol, one frozen dataclass per type.

Field names follow the wire keys (docs/protocol.md), except where a key is a
Python keyword: ``Hello.cls`` is the wire key ``class``, ``ChatOut.sender``
is ``from``. Grids and records stay in their wire form (lists, ``bytes``);
:mod:`protocol.fov` and :class:`client.model.GameModel` interpret them.

These classes do not validate themselves: :func:`protocol.codec.decode_client`
and :func:`protocol.codec.decode_server` do, for input from the network.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeAlias

from protocol.errors import ProtocolError


class CommandName(StrEnum):
    """The ``c`` of a ``cmd`` message."""

    MOVE = "move"
    OPEN = "open"
    CLOSE = "close"
    WAIT = "wait"
    REST = "rest"
    PICKUP = "pickup"
    DOWN = "down"
    UP = "up"

    @property
    def needs_direction(self) -> bool:
        """Whether this command takes (and requires) a direction ``d``."""
        return self in DIRECTED_COMMANDS


DIRECTED_COMMANDS: frozenset[CommandName] = frozenset(
    {CommandName.MOVE, CommandName.OPEN, CommandName.CLOSE}
)
"""Commands whose ``d`` is required; every other command must omit it."""


# --- client -> server -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hello:
    """``hello``: join as a new character or resume one with its token."""

    v: int
    name: str
    token: str | None = None
    cls: str | None = None


@dataclass(frozen=True, slots=True)
class Command:
    """``cmd``: an action; ``d`` is ``(dx, dy)`` for move/open/close, else None."""

    seq: int
    c: CommandName
    d: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class Chat:
    """``chat`` from a client: text for every player on the server."""

    text: str


@dataclass(frozen=True, slots=True)
class Ping:
    """``ping``: answered by a :class:`Pong` with the same ``id``."""

    id: int


ClientMessage: TypeAlias = Hello | Command | Chat | Ping


# --- server -> client -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Welcome:
    """``welcome``: the session is accepted; carries the code tables."""

    v: int
    id: int
    name: str
    token: str
    resumed: bool
    tick: int
    tick_rate: int
    terrain: list[Any]
    kinds: dict[str, Any]
    items: dict[str, Any]
    classes: list[Any]
    motd: str


@dataclass(frozen=True, slots=True)
class Snapshot:
    """``snap``: the whole visible and remembered state, from scratch.

    ``map`` is ``w * h`` bytes of terrain codes, row by row (255 = unknown);
    ``fov`` is ``[x0, y0, fw, fh, bits]`` (see :mod:`protocol.fov`).
    """

    tick: int
    depth: int
    w: int
    h: int
    map: bytes
    fov: list[Any]
    actors: list[Any]
    objs: list[Any]
    me: dict[str, Any]
    ack: int


@dataclass(frozen=True, slots=True)
class Delta:
    """``delta``: what changed since the last message; None = key absent."""

    tick: int
    ack: int | None = None
    tiles: list[Any] | None = None
    fov: list[Any] | None = None
    add: list[Any] | None = None
    upd: list[Any] | None = None
    rm: list[Any] | None = None
    objs: list[Any] | None = None
    ev: list[Any] | None = None
    me: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Reject:
    """``reject``: the command ``seq`` could not be carried out."""

    seq: int
    reason: str


@dataclass(frozen=True, slots=True)
class Error:
    """``error``: the server refused a message, or is closing the session."""

    code: str
    msg: str
    fatal: bool

    @classmethod
    def from_exception(cls, exc: ProtocolError) -> Error:
        """Build the ``error`` message that reports ``exc`` to the client."""
        return cls(code=exc.code.value, msg=exc.detail, fatal=exc.fatal)


@dataclass(frozen=True, slots=True)
class Pong:
    """``pong``: the answer to a :class:`Ping`, with the server's tick."""

    id: int
    tick: int


@dataclass(frozen=True, slots=True)
class ChatOut:
    """``chat`` from the server; ``sender`` (wire key ``from``) is "" for notices."""

    sender: str
    text: str
    tick: int


ServerMessage: TypeAlias = Welcome | Snapshot | Delta | Reject | Error | Pong | ChatOut
