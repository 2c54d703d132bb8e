"""The messages of the wire protocol, one frozen dataclass per type.

Field names follow the wire keys (docs/protocol.md), except where a key is a
Python keyword: ``Hello.cls`` is the wire key ``class``, ``ChatOut.sender``
is ``from``. Grids and records stay in their wire form (lists, ``bytes``);
:mod:`protocol.fov` and :class:`client.model.GameModel` interpret them.

These classes do not validate themselves: :func:`protocol.codec.decode_client`
and :func:`protocol.codec.decode_server` do, for input from the network.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeAlias

from protocol.errors import ProtocolError


class CommandName(StrEnum):
    """The ``c`` of a ``cmd`` message (docs/protocol.md, "Commands")."""

    MOVE = "move"
    OPEN = "open"
    CLOSE = "close"
    WAIT = "wait"
    REST = "rest"
    PICKUP = "pickup"
    DOWN = "down"
    UP = "up"
    DROP = "drop"
    WIELD = "wield"
    WEAR = "wear"
    REMOVE = "remove"
    EAT = "eat"
    QUAFF = "quaff"
    READ = "read"
    THROW = "throw"
    ZAP = "zap"
    CAST = "cast"
    CHOOSE = "choose"
    UPGRADE = "upgrade"

    @property
    def key_rule(self) -> CommandKeys:
        """Which optional ``cmd`` keys this command requires and allows."""
        return COMMAND_KEYS[self]

    @property
    def needs_direction(self) -> bool:
        """Whether this command requires a direction ``d``."""
        return "d" in COMMAND_KEYS[self].required


COMMAND_ARGS: tuple[str, ...] = ("d", "item", "at", "spell", "opt")
"""The optional keys of a ``cmd`` (besides ``t``, ``seq`` and ``c``), in wire order."""


@dataclass(frozen=True, slots=True)
class CommandKeys:
    """The key rule of one command, a row of :data:`COMMAND_KEYS`.

    Attributes:
        required: keys of :data:`COMMAND_ARGS` that must be present.
        one_of: keys of which at most one may be present (``cast``'s ``d`` or
            ``at``); every key in neither set must be absent.
    """

    required: frozenset[str] = frozenset()
    one_of: frozenset[str] = frozenset()

    @property
    def allowed(self) -> frozenset[str]:
        """Every key this command may carry."""
        return self.required | self.one_of


_D = CommandKeys(frozenset({"d"}))
_NONE = CommandKeys()
_ITEM = CommandKeys(frozenset({"item"}))

COMMAND_KEYS: dict[CommandName, CommandKeys] = {
    CommandName.MOVE: _D,
    CommandName.OPEN: _D,
    CommandName.CLOSE: _D,
    CommandName.WAIT: _NONE,
    CommandName.REST: _NONE,
    CommandName.PICKUP: _NONE,
    CommandName.DOWN: _NONE,
    CommandName.UP: _NONE,
    CommandName.DROP: _ITEM,
    CommandName.WIELD: _ITEM,
    CommandName.WEAR: _ITEM,
    CommandName.REMOVE: _ITEM,
    CommandName.EAT: _ITEM,
    CommandName.QUAFF: _ITEM,
    CommandName.READ: _ITEM,
    CommandName.THROW: CommandKeys(frozenset({"item", "at"})),
    CommandName.ZAP: CommandKeys(frozenset({"item", "d"})),
    CommandName.CAST: CommandKeys(frozenset({"spell"}), frozenset({"d", "at"})),
    CommandName.CHOOSE: CommandKeys(frozenset({"opt"})),
    CommandName.UPGRADE: CommandKeys(frozenset({"spell"})),
}
"""The per-command key table (docs/protocol.md, "Commands"), in the h11 style:
a ``cmd`` whose keys do not fit its row is a ``bad_field``."""

DIRECTED_COMMANDS: frozenset[CommandName] = frozenset(
    c for c, rule in COMMAND_KEYS.items() if "d" in rule.required
)
"""Commands whose ``d`` is required (move, open, close, zap)."""

ITEM_COMMANDS: frozenset[CommandName] = frozenset(
    c for c, rule in COMMAND_KEYS.items() if "item" in rule.required
)
"""Commands that name a pack letter ``item``."""

REJECT_REASONS: tuple[str, ...] = (
    "blocked", "occupied", "no_door", "door_blocked", "no_stairs", "sealed", "nothing_here",
    "dead", "monster_in_view", "lava", "queue_full",
    "no_item", "pack_full", "wrong_item", "cursed", "full", "no_energy", "cannot_cast",
    "unknown_spell", "no_target", "no_choice", "confused", "afraid", "no_altar",
)  # fmt: skip
"""The ``reject`` reasons docs/protocol.md documents (a reason is just a string
on the wire; clients show unknown ones as they are)."""


# --- client -> server -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hello:
    """``hello``: join as a new character or resume one with its token, or
    (with ``watch``, protocol 12) watch the player of that name as a
    spectator called ``name``."""

    v: int
    name: str
    token: str | None = None
    cls: str | None = None
    watch: str | None = None


@dataclass(slots=True)
class Command:
    """``cmd``: an action. Keys a command does not take are None.

    Not frozen, for the reason :class:`Delta` is not: one is decoded for
    every command a client sends, and the frozen constructor took a third
    of that decoding (1.1 of 3.4 µs). Treat it as read-only all the same.

    Attributes:
        seq: the client's sequence number.
        c: the command.
        d: direction ``(dx, dy)``.
        item: a pack letter (``a``-``z``, ``A``-``Z``).
        at: a target cell ``(x, y)``.
        spell: a spell key (``welcome.spells``).
        opt: a level-up reward key (``me.options``).
    """

    seq: int
    c: CommandName
    d: tuple[int, int] | None = None
    item: str | None = None
    at: tuple[int, int] | None = None
    spell: str | None = None
    opt: str | None = None


@dataclass(frozen=True, slots=True)
class Chat:
    """``chat`` from a client.

    Attributes:
        text: the line.
        scope: ``"level"`` (players on the sender's level), ``"global"``
            (every player) or ``"watch"`` (the sender and its spectators,
            protocol 12); ignored when ``to`` is set. A spectator's line
            goes to its watch scope whatever the scope.
        to: a player's name: a private line to that player only.
    """

    text: str
    scope: str = "level"
    to: str | None = None


@dataclass(frozen=True, slots=True)
class Ping:
    """``ping``: answered by a :class:`Pong` with the same ``id``."""

    id: int


@dataclass(frozen=True, slots=True)
class Look:
    """``look``: ask about the actor ``id`` in view; answered by :class:`Info`.

    Not an action: it takes no time and has no ``seq``.
    """

    id: int


@dataclass(frozen=True, slots=True)
class Spectators:
    """``spectators`` (protocol 12): a player lets spectators watch it
    (``allow`` True, the default of every connection) or not (False: those
    watching are closed with ``not_watchable``, and new ones refused)."""

    allow: bool


ClientMessage: TypeAlias = Hello | Command | Chat | Ping | Look | Spectators


# --- server -> client -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Welcome:
    """``welcome``: the session is accepted; carries the code tables.

    ``spells``, ``statuses`` and ``damage_types`` are new in version 2, and
    ``reasons`` (the refusal reasons by code: ``rej`` gives a reason as its
    index here) in version 6; a server always sends them, the decoder leaves
    them empty when absent.
    """

    v: int
    id: int
    name: str
    token: str
    resumed: bool
    tick: int
    tick_rate: int
    terrain: list[Any]
    kinds: list[Any]
    items: dict[str, Any]
    classes: list[Any]
    motd: str
    spells: dict[str, Any] = field(default_factory=dict)
    statuses: list[Any] = field(default_factory=list)
    damage_types: list[Any] = field(default_factory=list)
    reasons: list[Any] = field(default_factory=list)
    watch: str | None = None
    """A spectator's welcome only (protocol 12): the name of the player it
    watches (``id`` and ``name`` are that player's)."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """``snap``: the whole visible and remembered state, from scratch.

    ``map`` is ``w * h`` bytes of terrain codes, row by row (255 = unknown);
    ``fov`` is ``[x0, y0, fw, fh, bits]`` (see :mod:`protocol.fov`).
    ``ack`` is whole (a delta's is a step from the last one); ``rej`` and
    ``ev`` are the tick's refused commands and witnessed events, as in
    :class:`Delta` (None = key absent).
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
    rej: list[Any] | None = None
    ev: list[Any] | None = None


@dataclass(slots=True)
class Delta:
    """``delta``: what changed since the last message; None = key absent.

    Unlike the other messages it is not frozen: the server builds one for
    nearly every player on every tick, and a frozen dataclass's constructor
    (one ``object.__setattr__`` per field) costs about three times as much
    (1.5 against 0.4 µs). Treat it as read-only all the same.

    ``ack`` is the step from the acknowledged ``seq`` the client was last
    given (by the previous ``snap``, whose ``ack`` is whole, and the deltas
    since): the new acknowledged ``seq`` is that one plus ``ack`` (protocol
    10: mostly 1, one byte, where a ``seq`` takes three after the 127th
    command). ``rej`` is ``[ack − seq, code, ...]`` for the commands refused
    this tick, each ``seq`` given back from the frame's acknowledged ``seq``
    once applied (0 for the command just acknowledged, as nearly every
    refusal is: protocol 10) and each reason as its index in
    ``welcome.reasons`` (:func:`unpack_rejects`; protocol 3 put them in the
    tick's one frame instead of ``reject`` messages of their own, protocol 6
    made them flat pairs with codes).

    ``mv`` is ``[gap, x, y, gap, x, y, ...]`` for the actors in view whose
    position alone changed, in increasing id order, each id the one before
    plus its gap (:func:`unpack_moves`; protocol 4 made them triples, a
    third of the bytes of their ``upd`` rows, and protocol 5 gave ids as
    gaps, mostly one byte instead of three). ``rm``
    gives the ids that left the view the same way, as increasing ids by
    their gaps (:func:`unpack_ids`; protocol 6). ``st`` is ``[gap × 8 +
    direction, ...]`` for the actors in view whose position alone changed by
    one step, ids increasing as in ``mv`` (:func:`unpack_steps`; protocol 7:
    one byte for most steps in a crowd where an ``mv`` triple takes about
    four); ``mv`` then carries only the moves of more than one cell.
    ``back`` is ``[gap, x, y, ...]`` as in ``mv``, for actors that came back
    into view as the client kept them when they left it, but for their new
    cell (:func:`unpack_moves`; protocol 8: about four bytes where an ``add``
    record takes about seventeen; see :data:`BACK_TICKS`).

    ``tick`` is None (the key absent) when the delta is for the tick right
    after that of the previous ``snap`` or ``delta`` sent to the client, as
    most are: the client counts on from there (protocol 9: the key and its
    value took 8 to 10 bytes of a crowded frame of about 75).

    On the wire a delta is the one server message without ``"t"``: a map
    with no type is a delta (protocol 10: ``"t": "delta"`` took 8 bytes of
    a crowded frame of about 66). Its keys are the small integers of
    :data:`DELTA_KEYS`, one byte each, instead of the field names (protocol
    11: the names took about 15 bytes of a crowded delta of about 50)."""

    tick: int | None = None
    ack: int | None = None
    tiles: list[Any] | None = None
    fov: list[Any] | None = None
    add: list[Any] | None = None
    upd: list[Any] | None = None
    rm: list[Any] | None = None
    objs: list[Any] | None = None
    ev: list[Any] | None = None
    me: dict[str, Any] | None = None
    rej: list[Any] | None = None
    mv: list[Any] | None = None
    st: list[Any] | None = None
    back: list[Any] | None = None


DELTA_KEYS: tuple[str, ...] = (
    "tick", "ack", "tiles", "fov", "add", "upd", "rm", "objs", "ev", "me", "rej", "mv", "st", "back",
)  # fmt: skip
"""The field of a delta's map key ``k`` is ``DELTA_KEYS[k]`` (protocol 11):
a delta is keyed by these small integers, each packed in one byte, where the
names took two to six (``"st"`` is 3 bytes, ``"tiles"`` 6). The order is
that of :class:`Delta`'s fields, the order the keys were added in; a key past
the end is one a later version added, and a reader ignores it."""

DELTA_KEY: dict[str, int] = {name: k for k, name in enumerate(DELTA_KEYS)}
"""The map key of each of a delta's fields: the inverse of :data:`DELTA_KEYS`."""


BACK_TICKS = 100
"""How long, in ticks, a client keeps the record of an actor that left its
view (protocol 8): an actor removed by the ``rm`` of the delta of tick ``T``
may come back in the ``back`` of a delta up to tick ``T + BACK_TICKS``, as
that record with a new cell. After that the client may forget it; the server
sends a whole ``add`` record instead. 100 ticks is 10 s at the default rate:
in a walking crowd of 2,000 (``bench/tick.py``), about 85% of the actors
entering a player's view had left it within that time and came back with
nothing but their cell changed."""


STEP_DIRECTIONS: tuple[tuple[int, int], ...] = (
    (0, -1), (1, -1), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1),
)  # fmt: skip
"""The directions of a delta's ``st`` by code, ``(dx, dy)`` in cells, x to
the east and y to the south, clockwise from north (protocol 7)."""

STEP_CODES: dict[tuple[int, int], int] = {d: i for i, d in enumerate(STEP_DIRECTIONS)}
"""The code of each one-cell step ``(dx, dy)`` in :data:`STEP_DIRECTIONS`."""


def unpack_steps(flat: object) -> list[tuple[int, int, int]]:
    """A delta's ``st``, ``[gap × 8 + direction, ...]``, as ``(id, dx, dy)``
    (protocol 7): each actor stepped one cell in direction
    ``STEP_DIRECTIONS[value & 7]`` from where the previous message left it;
    the ids increase, each the one before plus its gap ``value >> 3`` (the
    first counting from 0). Decoding stops at the first value that is not an
    int of at least 8 (a gap below 1): the ids after it are unknown. An ``st``
    that is not a list reads as empty."""
    if not isinstance(flat, list):
        return []
    out: list[tuple[int, int, int]] = []
    aid = 0
    for v in flat:
        if type(v) is not int or v < 8:
            break
        aid += v >> 3
        dx, dy = STEP_DIRECTIONS[v & 7]
        out.append((aid, dx, dy))
    return out


def unpack_moves(flat: object) -> list[tuple[int, int, int]]:
    """A delta's ``mv``, ``[gap, x, y, gap, x, y, ...]``, as ``(id, x, y)``
    triples (protocol 5): the ids increase, each the one before plus its gap,
    the first gap counting from 0. Decoding stops at the first malformed
    triple (not three ints, or a gap below 1): the ids after it are unknown.
    An ``mv`` that is not a list reads as empty."""
    if not isinstance(flat, list):
        return []
    out: list[tuple[int, int, int]] = []
    aid = 0
    for i in range(0, len(flat) - 2, 3):
        gap, x, y = flat[i], flat[i + 1], flat[i + 2]
        if not all(type(v) is int for v in (gap, x, y)) or gap < 1:
            break
        aid += gap
        out.append((aid, x, y))
    return out


def unpack_ids(flat: object) -> list[int]:
    """A delta's ``rm``, ``[gap, gap, ...]``, as ids (protocol 6): the ids
    increase, each the one before plus its gap, the first gap counting from
    0. Decoding stops at the first gap that is not an int of at least 1: the
    ids after it are unknown. An ``rm`` that is not a list reads as empty."""
    if not isinstance(flat, list):
        return []
    out: list[int] = []
    aid = 0
    for gap in flat:
        if type(gap) is not int or gap < 1:
            break
        aid += gap
        out.append(aid)
    return out


def unpack_rejects(flat: object, reasons: list[Any], ack: int) -> list[tuple[int, str]]:
    """A frame's ``rej``, ``[ack − seq, code, ...]``, as ``(seq, reason)``
    pairs: each ``seq`` is ``ack`` (the acknowledged ``seq`` once the frame
    is applied: a ``snap``'s ``ack``, or the last one plus a delta's step)
    minus the pair's first value (protocol 10), each code looked up in
    ``reasons`` (``welcome.reasons``; protocol 6). A code that the table
    lacks, or whose entry is not a string, reads as ``"reason <code>"``; a
    pair that is not two ints is skipped, as is a ``rej`` that is not a
    list."""
    if not isinstance(flat, list):
        return []
    out: list[tuple[int, str]] = []
    for i in range(0, len(flat) - 1, 2):
        behind, code = flat[i], flat[i + 1]
        if type(behind) is not int or type(code) is not int:
            continue
        seq = ack - behind
        name = reasons[code] if 0 <= code < len(reasons) else None
        out.append((seq, name if isinstance(name, str) and name else f"reason {code}"))
    return out


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
    """``chat`` from the server; ``sender`` (wire key ``from``) is "" for notices.

    ``scope`` is ``"level"``, ``"global"``, ``"private"`` or ``"watch"``
    (protocol 12: a player and its spectators; None: a notice, or
    a server that does not say); ``to`` names the recipient of a private line.
    """

    sender: str
    text: str
    tick: int
    scope: str | None = None
    to: str | None = None


@dataclass(frozen=True, slots=True)
class Info:
    """``info``: the answer to a :class:`Look`.

    ``found`` is False (and ``about`` empty) when actor ``id`` is not in the
    asker's view; ``about`` holds the keys of docs/protocol.md, "info".
    """

    id: int
    found: bool
    about: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Watchers:
    """``watchers`` (protocol 12): how many spectators watch the player now
    (sent to the player when the number changes)."""

    n: int


ServerMessage: TypeAlias = (
    Welcome | Snapshot | Delta | Reject | Error | Pong | ChatOut | Info | Watchers
)
