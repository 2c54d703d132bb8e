"""The typed messages of the cluster's bus (NATS), one class per kind.

Each is a frozen msgspec ``Struct`` encoded as a msgpack array (``array_like``):
a subject that carries several kinds has a tagged union, whose tag is the
array's first element (``["route", actor, worker, epoch]``). :func:`encode`
and :func:`decode` are the only way onto and off the bus; a payload that does
not decode to the expected type raises ``ValueError`` (``msgspec.DecodeError``
and ``msgspec.ValidationError`` are ``ValueError`` s), which a handler drops.

Which subject carries what is in :mod:`server.cluster.bus`.
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

T = TypeVar("T")


class _Message(msgspec.Struct, frozen=True, array_like=True):
    """The form every bus message shares."""


# --------------------------------------------------------------- joins (P.join, P.w.W)


class JoinRequest(_Message, frozen=True, tag="join"):
    """A gateway asks the workers to seat a player.

    Attributes:
        name: The ``hello``'s name.
        token: The ``hello``'s token (None: a new character, or a refusal).
        cls: The class of a new character (None: the default).
        gw: The asking gateway's id.
        nonce: The same for every try of one join (a retry gets the first answer).
        create: False when the address may create no more characters
            (a join that would create one is refused ``limited``).
    """

    name: str
    token: str | None
    cls: str | None
    gw: str
    nonce: str
    create: bool = True


class AdmitRequest(_Message, frozen=True, tag="admit"):
    """A hand-off's admission to the holder of the player's new level, keyed
    on ``(name, epoch)``: asking twice admits once. ``pending``: the commands
    the player still had queued, as its client sent them, in order; ``ack``:
    the ``seq`` of its last command carried out or refused; ``tick``: the
    sending worker's world tick."""

    name: str
    epoch: int
    gw: str
    actor: int
    pending: list[bytes] = []
    ack: int = -1
    tick: int = 0
    turns: int = 0
    """The player's commands of this session so far (the lobby's ``turns``
    go on across the hand-off)."""


WorkerRequest = JoinRequest | AdmitRequest
"""What ``P.w.W`` carries (a join forwarded to a level's holder, or an admission)."""


class JoinReply(_Message, frozen=True):
    """A worker's answer to a :class:`JoinRequest`.

    Attributes:
        ok: Seated.
        code: Why not (an error code of docs/protocol.md, or ``retry``).
        detail: The refusal's text.
        retry: The gateway should ask again (a level without a holder, a
            race, a slow save).
        draining: The answering worker drains: ask another.
        welcome: The encoded ``welcome`` (when seated).
        worker: The worker holding the player now.
        epoch: The character's epoch (its route's).
        actor: The player's actor id.
    """

    ok: bool
    code: str = ""
    detail: str = ""
    retry: bool = False
    draining: bool = False
    welcome: bytes = b""
    worker: str = ""
    epoch: int = 0
    actor: int = 0


class AdmitReply(_Message, frozen=True):
    """The answer to an :class:`AdmitRequest`: admitted, or why not
    (``stale``, ``not_holder``, ``draining``, ``full``, an exception's text)."""

    ok: bool
    code: str = ""


class Claim(_Message, frozen=True):
    """``P.claim``: someone take level ``depth``."""

    depth: int


class Holder(_Message, frozen=True):
    """The answer to a :class:`Claim`: the worker holding the level (None: nobody yet)."""

    worker: str | None


# --------------------------------------------------------------- workers -> a gateway (P.g.G)


class _OfPlayer(_Message, frozen=True):
    """A message about one seated player: its actor id and the epoch it is
    held under (a message of an older epoch is stale)."""

    actor: int
    epoch: int


class Frames(_Message, frozen=True, tag="f"):
    """A tick's frames for a gateway's players: ``(actor, epoch, encoded frame)``."""

    entries: list[tuple[int, int, bytes]]


class Route(_Message, frozen=True, tag="route"):
    """The player is held by ``worker`` under ``epoch`` now."""

    actor: int
    worker: str
    epoch: int


class Moving(_OfPlayer, frozen=True, tag="moving"):
    """A hand-off began: hold the player's messages until its next route."""


class Lost(_OfPlayer, frozen=True, tag="lost"):
    """The player's worker let it go: seat it again."""


class Replaced(_OfPlayer, frozen=True, tag="replaced"):
    """The character connected again through another connection: close this
    one (``replaced``), as ``serve`` does."""


ToGateway = Frames | Route | Moving | Lost | Replaced
"""What ``P.g.G`` carries."""


# --------------------------------------------------------------- gateways -> a worker (P.w.W.in)


class FromClient(_OfPlayer, frozen=True, tag="m"):
    """A player's message (``data``: as the client sent it, checked by the gateway)."""

    data: bytes


class Leave(_OfPlayer, frozen=True, tag="leave"):
    """The player's connection ended."""


class Resync(_OfPlayer, frozen=True, tag="resync"):
    """The player's next frame must be a snapshot."""


ToWorker = FromClient | Leave | Resync
"""A gateway's message about one of a worker's players."""


class Inbound(_Message, frozen=True, tag="in"):
    """What ``P.w.W.in`` carries: a gateway's messages for the worker, in
    the order the gateway queued them (one event-loop turn's)."""

    events: list[FromClient | Leave | Resync]


# --------------------------------------------------------------- workers -> every gateway (P.lobby.W)


class LobbyPlayer(_Message, frozen=True):
    """One player as the lobby lists it (:class:`server.net.web.LobbyRow`):
    its name, class key (``""``: none), experience level, depth, and the
    commands it sent this session (``turns``)."""

    name: str
    cls: str
    level: int
    depth: int
    turns: int


class LobbyReport(_Message, frozen=True):
    """``P.lobby.W``: who plays on a worker, for the gateways' ``/lobby.json``
    (every :data:`~server.cluster.bus.LOBBY_EVERY_S`).

    Attributes:
        online: The players the worker holds.
        players: The first :data:`~server.net.web.LOBBY_ROWS` of them in
            the lobby's order (:func:`~server.net.web.lobby_order`).
    """

    online: int
    players: list[LobbyPlayer]


# --------------------------------------------------------------- every process


class ChatLine(_Message, frozen=True):
    """``P.chat``: a global or private line, or an operator's notice (sender
    ``""``, scope None)."""

    sender: str
    text: str
    scope: str | None
    to: str | None
    tick: int


class Release(_Message, frozen=True):
    """``P.release``: whoever holds ``name`` under an older epoch drops it."""

    name: str
    epoch: int


class Presence(_Message, frozen=True):
    """``P.presence``: a player entered (``joined``) or left the dungeon on a
    worker; every other worker tells its players (``serve`` tells everyone)."""

    joined: bool
    actor: int
    name: str
    worker: str
    """The worker it happened on (which told its own players already)."""


class Heartbeat(_Message, frozen=True):
    """``P.hb.W``: a worker lives, at ``tick``, holding ``players``."""

    tick: int
    players: int


class GatewayBeat(_Message, frozen=True):
    """``P.ghb.G``: a gateway lives, with ``players``."""

    players: int


# --------------------------------------------------------------- operators


class Ban(_Message, frozen=True, tag="ban"):
    """``P.bans``: ``name`` is banned (committed); also an operator's request on ``P.admin``."""

    name: str
    reason: str = ""
    inbox: str = ""
    """On ``P.admin``: where the gateways answer the notice (:class:`Closed`)."""


class Unban(_Message, frozen=True, tag="unban"):
    """``P.bans``: the ban of ``name`` is lifted; also a request on ``P.admin``."""

    name: str


class ListBans(_Message, frozen=True, tag="bans"):
    """``P.admin``: the bans, please."""


AdminRequest = Ban | Unban | ListBans
"""What ``P.admin`` carries."""
BanNotice = Ban | Unban
"""What ``P.bans`` carries."""


class BanRow(_Message, frozen=True):
    """One ban: the name, why, and when (Unix seconds)."""

    name: str
    reason: str
    at: float


class AdminReply(_Message, frozen=True):
    """A worker's answer to an :data:`AdminRequest` (``error``: why it failed)."""

    ok: bool
    error: str = ""
    name: str = ""
    bans: list[BanRow] = []


class Kick(_Message, frozen=True):
    """``P.kick``: hold ``name`` out and disconnect it."""

    name: str


class Who(_Message, frozen=True):
    """``P.who``: which players does each gateway hold?"""


class Seek(_Message, frozen=True):
    """``P.seek``: who holds a player called ``name``?"""

    name: str


class PlayerRow(_Message, frozen=True):
    """A seated player, as a gateway lists it (``admin who``)."""

    name: str
    actor: int
    worker: str
    epoch: int
    depth: int | None
    address: str
    state: str


class Closed(_Message, frozen=True, tag="closed"):
    """A gateway's answer to a :class:`Kick` or a ban notice: connections closed."""

    gateway: str
    count: int


class Present(_Message, frozen=True, tag="present"):
    """A gateway's answer to :class:`Who`."""

    gateway: str
    players: list[PlayerRow]
    draining: bool


class Found(_Message, frozen=True, tag="found"):
    """A gateway's answer to :class:`Seek`: the name as its player spells it, or None."""

    gateway: str
    spelling: str | None


Answer = Closed | Present | Found
"""A gateway's answer to a gathered question."""

_encoder = msgspec.msgpack.Encoder()
_decoders: dict[type[Any], msgspec.msgpack.Decoder[Any]] = {}

TO_GATEWAY: msgspec.msgpack.Decoder[ToGateway] = msgspec.msgpack.Decoder(ToGateway)
WORKER_REQUEST: msgspec.msgpack.Decoder[WorkerRequest] = msgspec.msgpack.Decoder(WorkerRequest)
ADMIN_REQUEST: msgspec.msgpack.Decoder[AdminRequest] = msgspec.msgpack.Decoder(AdminRequest)
BAN_NOTICE: msgspec.msgpack.Decoder[BanNotice] = msgspec.msgpack.Decoder(BanNotice)
ANSWER: msgspec.msgpack.Decoder[Answer] = msgspec.msgpack.Decoder(Answer)
"""Decoders of the unions (``.decode(data)`` raises ``ValueError`` as :func:`decode` does)."""


def encode(msg: _Message) -> bytes:
    """The bus payload of ``msg``."""
    return _encoder.encode(msg)


def decode(data: bytes, kind: type[T]) -> T:
    """The message of type ``kind`` in ``data`` (for a union, use its decoder above).

    Raises:
        ValueError: ``data`` is not msgpack, or not a ``kind``.
    """
    decoder = _decoders.get(kind)
    if decoder is None:
        decoder = _decoders[kind] = msgspec.msgpack.Decoder(kind)
    result: T = decoder.decode(data)
    return result
