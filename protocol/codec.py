"""Bytes <-> messages, for both directions (docs/protocol.md).

Untrusted input goes through three gates: the frame size limit, msgpack with
safe options (no raw strings, string or binary map keys only, every length
bounded by the frame), then a strict schema check. Every failure raises
:class:`~protocol.errors.ProtocolError`; no other exception escapes
:func:`decode_client` or :func:`decode_server`, whatever the input.

A ``cmd`` that carries at most a direction (most of what clients send) is
first decoded by msgspec into a typed struct whose types and bounds are the
schema's (:class:`_WireCommand`): one C call instead of msgpack's generic
objects and their checks in Python. Anything that struct refuses, or does
not cover, is decoded again by the generic path, which alone says what is
wrong: the struct only ever accepts what the generic path accepts, with the
same values.

Client messages are checked strictly (exact key sets, types, ranges), since a
server must trust nothing. Server messages are checked for shape only (the
keys a client needs, with the right types; unknown keys are ignored as the
versioning rule requires); the contents of records are left to the client's
model, which skips what it cannot use.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Annotated, Any, Literal

import msgpack  # type: ignore[import-untyped]
import msgspec

from protocol.errors import ErrorCode, ProtocolError
from protocol.fov import check_fov
from protocol.limits import (
    CHAT_SCOPES,
    ITEM_LETTER_RE,
    KEY_RE,
    MAX_CHAT,
    MAX_COORD,
    MAX_FRAME_BYTES,
    MAX_SEQ,
    NAME_RE,
)
from protocol.messages import (
    COMMAND_ARGS,
    COMMAND_KEYS,
    DELTA_KEY,
    DELTA_KEYS,
    Chat,
    ChatOut,
    ClientMessage,
    Command,
    CommandName,
    Delta,
    Error,
    Hello,
    Info,
    Look,
    Ping,
    Pong,
    Reject,
    ServerMessage,
    Snapshot,
    Spectators,
    Watchers,
    Welcome,
)

_CONTROL_RE = re.compile("[\x00-\x1f\x7f-\x9f]")
# What msgpack.unpackb raises for bad input: ValueError covers ExtraData,
# FormatError, StackError and UnicodeDecodeError; OutOfData is an
# UnpackException only; TypeError for an unhashable map key.
_UNPACK_ERRORS = (ValueError, TypeError, msgpack.UnpackException)


def _show(value: object) -> str:
    """A short printable form of an untrusted value for error details."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _int(v: object) -> bool:
    """An msgpack integer (``bool`` is not one)."""
    return type(v) is int


def _unpack(data: bytes, limit: int) -> object:
    """Unpack one msgpack object, every length bounded by ``limit``.

    Raises:
        ProtocolError: ``bad_msgpack`` for anything msgpack refuses
            (truncated, trailing bytes, bad UTF-8, non-string map keys,
            nesting too deep, lengths over ``limit``).
    """
    try:
        return msgpack.unpackb(
            data,
            raw=False,
            use_list=True,
            strict_map_key=True,
            max_str_len=limit,
            max_bin_len=limit,
            max_array_len=limit,
            max_map_len=limit,
            max_ext_len=limit,
        )
    except _UNPACK_ERRORS as exc:
        raise ProtocolError(
            ErrorCode.BAD_MSGPACK, f"not valid msgpack ({type(exc).__name__})"
        ) from exc


def _unpack_server(data: bytes) -> object:
    """Unpack a server frame as :func:`_unpack` does, but for the keys of
    the outermost map, which may be integers as well as strings (a delta's
    are: protocol 11). Maps inside it keep string keys.

    Raises:
        ProtocolError: ``bad_msgpack``, as :func:`_unpack`, and for an
            outermost key that is neither a string nor an integer.
    """
    limit = max(len(data), 1)
    unpacker = msgpack.Unpacker(
        raw=False,
        use_list=True,
        strict_map_key=True,
        max_buffer_size=limit,
        max_str_len=limit,
        max_bin_len=limit,
        max_array_len=limit,
        max_map_len=limit,
        max_ext_len=limit,
    )
    unpacker.feed(data)
    try:
        size = unpacker.read_map_header()
    except _UNPACK_ERRORS:
        return _unpack(data, limit)  # not a map: what it is, or why it is not msgpack
    obj: dict[Any, Any] = {}
    try:
        for _ in range(size):
            key = unpacker.unpack()
            if not isinstance(key, str) and type(key) is not int:
                raise ValueError("a map key must be a string or an integer")
            obj[key] = unpacker.unpack()
        if unpacker.tell() != len(data):
            raise msgpack.ExtraData(obj, b"")
    except _UNPACK_ERRORS as exc:
        raise ProtocolError(
            ErrorCode.BAD_MSGPACK, f"not valid msgpack ({type(exc).__name__})"
        ) from exc
    return obj


def _type_of(obj: object) -> tuple[dict[Any, Any], str]:
    if not isinstance(obj, dict):
        raise ProtocolError(ErrorCode.BAD_MESSAGE, "a message must be a msgpack map")
    t = obj.get("t")
    if not isinstance(t, str):
        raise ProtocolError(ErrorCode.BAD_MESSAGE, 'a message needs a string "t"')
    return obj, t


# --- client -> server: decoding ---------------------------------------------


def _check_keys(
    obj: dict[Any, Any], t: str, required: frozenset[str], optional: frozenset[str] = frozenset()
) -> None:
    keys = obj.keys()
    if required <= keys <= required | optional:
        return
    unknown = keys - required - optional
    if unknown:
        names = ", ".join(sorted(_show(k) for k in unknown))
        raise ProtocolError(ErrorCode.BAD_FIELD, f"{t}: unknown key {names}")
    missing = required - keys
    raise ProtocolError(ErrorCode.BAD_FIELD, f"{t}: missing key {', '.join(sorted(missing))}")


def _bad(t: str, key: str, what: str, value: object) -> ProtocolError:
    return ProtocolError(ErrorCode.BAD_FIELD, f"{t}.{key} must be {what}, not {_show(value)}")


_HELLO_REQ = frozenset({"t", "v", "name"})
_HELLO_OPT = frozenset({"token", "class", "watch"})


def _decode_hello(obj: dict[Any, Any]) -> Hello:
    _check_keys(obj, "hello", _HELLO_REQ, _HELLO_OPT)
    v, name = obj["v"], obj["name"]
    if not _int(v):
        raise _bad("hello", "v", "an int", v)
    if not isinstance(name, str) or NAME_RE.fullmatch(name) is None:
        raise _bad("hello", "name", "1-16 characters from A-Z a-z 0-9 _ -", name)
    token = obj.get("token")
    if "token" in obj and not isinstance(token, str):
        raise _bad("hello", "token", "a string (omit the key for none)", token)
    cls = obj.get("class")
    if "class" in obj and not isinstance(cls, str):
        raise _bad("hello", "class", "a string (omit the key for none)", cls)
    watch = obj.get("watch")
    if "watch" in obj:
        if not isinstance(watch, str) or NAME_RE.fullmatch(watch) is None:
            raise _bad("hello", "watch", "a player name (omit the key to play)", watch)
        if "token" in obj or "class" in obj:
            raise ProtocolError(
                ErrorCode.BAD_FIELD, "hello: a spectator's hello takes no token or class"
            )
    return Hello(v=v, name=name, token=token, cls=cls, watch=watch)


_CMD_REQ = frozenset({"t", "seq", "c"})
_CMD_OPT = frozenset(COMMAND_ARGS)
_CMD_RULES: dict[str, tuple[CommandName, frozenset[str], frozenset[str], frozenset[str]]] = {
    name.value: (name, rule.required, rule.allowed, rule.one_of)
    for name, rule in COMMAND_KEYS.items()
}
"""Each command's wire name, with its name and key rule (required, allowed
and at-most-one-of keys) read out of :data:`COMMAND_KEYS` once."""
_D_ONLY = frozenset({"d"})


def _direction(d: object) -> tuple[int, int]:
    if type(d) is list and len(d) == 2:
        dx, dy = d
        if type(dx) is int and type(dy) is int and -1 <= dx <= 1 and -1 <= dy <= 1 and (dx or dy):
            return (dx, dy)
    raise _bad("cmd", "d", "[dx, dy] with dx, dy in {-1, 0, 1}, not both 0", d)


def _cell(at: object) -> tuple[int, int]:
    if (
        not isinstance(at, list)
        or len(at) != 2
        or not all(_int(v) and 0 <= v < MAX_COORD for v in at)
    ):
        raise _bad("cmd", "at", f"[x, y] with ints 0 <= x, y < {MAX_COORD}", at)
    return (at[0], at[1])


def _letter(item: object) -> str:
    if not isinstance(item, str) or ITEM_LETTER_RE.fullmatch(item) is None:
        raise _bad("cmd", "item", "one pack letter a-z or A-Z", item)
    return item


def _key(name: str) -> Callable[[object], str]:
    def check(value: object) -> str:
        if not isinstance(value, str) or KEY_RE.fullmatch(value) is None:
            raise _bad("cmd", name, "1-32 characters of a-z 0-9 _", value)
        return value

    return check


_ARG_CHECKS: dict[str, Callable[[object], Any]] = {
    "d": _direction,
    "item": _letter,
    "at": _cell,
    "spell": _key("spell"),
    "opt": _key("opt"),
}


def _decode_command(obj: dict[Any, Any]) -> Command:
    """A ``cmd`` checked against its row of :data:`COMMAND_KEYS`. The move,
    open and close commands that make most of the traffic (``d`` their only
    optional key) take a short way through the same checks."""
    _check_keys(obj, "cmd", _CMD_REQ, _CMD_OPT)
    keys = obj.keys()
    seq, c = obj["seq"], obj["c"]
    if type(seq) is not int or not 0 <= seq < MAX_SEQ:
        raise _bad("cmd", "seq", "an int in [0, 2**31)", seq)
    rule = _CMD_RULES.get(c) if isinstance(c, str) else None
    if rule is None:
        raise _bad("cmd", "c", "a command name", c)
    name, required, allowed, one_of = rule
    present = keys & _CMD_OPT
    if present == required == _D_ONLY:
        return Command(seq, name, _direction(obj["d"]))
    if not required <= present:
        missing = required - present
        raise ProtocolError(ErrorCode.BAD_FIELD, f"cmd: {name} needs {', '.join(sorted(missing))}")
    if not present <= allowed:
        extra = present - allowed
        raise ProtocolError(ErrorCode.BAD_FIELD, f"cmd: {name} takes no {', '.join(sorted(extra))}")
    if len(present & one_of) > 1:
        keys_text = " / ".join(sorted(one_of))
        raise ProtocolError(ErrorCode.BAD_FIELD, f"cmd: {name} takes at most one of {keys_text}")
    args = {key: _ARG_CHECKS[key](obj[key]) for key in COMMAND_ARGS if key in present}
    return Command(seq=seq, c=name, **args)


_Unit = Annotated[int, msgspec.Meta(ge=-1, le=1)]


class _WireCommand(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """A ``cmd`` map with no key but ``d`` (besides ``t``, ``seq`` and ``c``),
    as msgspec decodes it for :func:`_decode_command_fast`, with the types
    and bounds of :func:`_decode_command`'s checks; ``d`` absent is ``UNSET``
    (an explicit nil is refused, as the generic path refuses it). ``t`` is
    a plain required field: msgspec takes a lone tagged struct's tag as
    optional."""

    t: Literal["cmd"]
    seq: Annotated[int, msgspec.Meta(ge=0, lt=MAX_SEQ)]
    c: CommandName
    d: tuple[_Unit, _Unit] | msgspec.UnsetType = msgspec.UNSET


_WIRE_COMMAND = msgspec.msgpack.Decoder(_WireCommand)
_DIRECTION_ONLY = frozenset(name for name, rule in COMMAND_KEYS.items() if rule.allowed == _D_ONLY)
"""Commands whose only key is a required ``d`` (move, open, close)."""
_NO_KEYS = frozenset(name for name, rule in COMMAND_KEYS.items() if not rule.allowed)
"""Commands that take no key (wait, rest, pickup, down, up)."""


def _decode_command_fast(data: bytes) -> Command | None:
    """``data`` as a ``cmd`` of :data:`_DIRECTION_ONLY` or :data:`_NO_KEYS`
    that :func:`_decode_command` would accept, decoded by msgspec in one
    call; None for anything else (another message, a command with other
    keys, any fault), for the generic path to decode and judge."""
    try:
        wire = _WIRE_COMMAND.decode(data)
    except ValueError:  # msgspec's DecodeError and ValidationError, UnicodeDecodeError
        return None  # the generic path says what is wrong
    d, c = wire.d, wire.c
    if d is msgspec.UNSET:
        return Command(wire.seq, c) if c in _NO_KEYS else None
    if c in _DIRECTION_ONLY and d != (0, 0):
        return Command(wire.seq, c, d)
    return None


_CHAT_REQ = frozenset({"t", "text"})
_CHAT_OPT = frozenset({"scope", "to"})


def _decode_chat(obj: dict[Any, Any]) -> Chat:
    _check_keys(obj, "chat", _CHAT_REQ, _CHAT_OPT)
    text = obj["text"]
    if not isinstance(text, str) or not 1 <= len(text) <= MAX_CHAT:
        raise _bad("chat", "text", f"a string of 1-{MAX_CHAT} characters", text)
    if _CONTROL_RE.search(text):
        raise ProtocolError(ErrorCode.BAD_FIELD, "chat.text must not contain control characters")
    if "scope" in obj and "to" in obj:
        raise ProtocolError(ErrorCode.BAD_FIELD, "chat takes at most one of scope / to")
    scope = obj.get("scope", "level")
    if scope not in CHAT_SCOPES:
        raise _bad("chat", "scope", " or ".join(repr(s) for s in CHAT_SCOPES), scope)
    to = obj.get("to")
    if "to" in obj and (not isinstance(to, str) or NAME_RE.fullmatch(to) is None):
        raise _bad("chat", "to", "a player name", to)
    return Chat(text=text, scope=scope, to=to)


_PING_REQ = frozenset({"t", "id"})


def _decode_ping(obj: dict[Any, Any]) -> Ping:
    _check_keys(obj, "ping", _PING_REQ)
    ident = obj["id"]
    if not _int(ident) or not 0 <= ident < MAX_SEQ:
        raise _bad("ping", "id", "an int in [0, 2**31)", ident)
    return Ping(id=ident)


_LOOK_REQ = frozenset({"t", "id"})


def _decode_look(obj: dict[Any, Any]) -> Look:
    _check_keys(obj, "look", _LOOK_REQ)
    ident = obj["id"]
    if not _int(ident) or not 0 <= ident < MAX_SEQ:
        raise _bad("look", "id", "an int in [0, 2**31)", ident)
    return Look(id=ident)


_SPECTATORS_REQ = frozenset({"t", "allow"})


def _decode_spectators(obj: dict[Any, Any]) -> Spectators:
    _check_keys(obj, "spectators", _SPECTATORS_REQ)
    allow = obj["allow"]
    if not isinstance(allow, bool):
        raise _bad("spectators", "allow", "a bool", allow)
    return Spectators(allow=allow)


_CLIENT_DECODERS: dict[str, Callable[[dict[Any, Any]], ClientMessage]] = {
    "hello": _decode_hello,
    "cmd": _decode_command,
    "chat": _decode_chat,
    "ping": _decode_ping,
    "look": _decode_look,
    "spectators": _decode_spectators,
}


def decode_client(data: bytes | str) -> ClientMessage:
    """Decode and validate one frame a client sent.

    Args:
        data: the frame's payload; ``str`` for a text frame.

    Returns:
        The message.

    Raises:
        ProtocolError: ``bad_message`` for a text frame, a non-map or a map
            without a string ``"t"``; ``too_large`` (fatal) above
            :data:`~protocol.limits.MAX_FRAME_BYTES`; ``bad_msgpack``;
            ``unknown_type``; ``bad_field`` for a missing, unknown, mistyped
            or out-of-range key. Non-fatal codes leave the session unchanged:
            report the error and drop the frame.
    """
    if isinstance(data, str):
        raise ProtocolError(ErrorCode.BAD_MESSAGE, "text frames are not accepted; send binary")
    if not isinstance(data, (bytes, bytearray)):
        raise ProtocolError(ErrorCode.BAD_MESSAGE, "a frame must be bytes")
    if len(data) > MAX_FRAME_BYTES:
        raise ProtocolError(
            ErrorCode.TOO_LARGE, f"frame of {len(data)} bytes exceeds {MAX_FRAME_BYTES}"
        )
    command = _decode_command_fast(data)
    if command is not None:
        return command
    return _decode_generic(data)


def _decode_generic(data: bytes) -> ClientMessage:
    """A client frame within the size limit, decoded by msgpack and checked
    key by key (:func:`decode_client`'s path for every frame
    :func:`_decode_command_fast` does not take).

    Raises:
        ProtocolError: as :func:`decode_client`.
    """
    obj, t = _type_of(_unpack(data, MAX_FRAME_BYTES))
    decoder = _CLIENT_DECODERS.get(t)
    if decoder is None:
        raise ProtocolError(ErrorCode.UNKNOWN_TYPE, f"no client message type {_show(t)}")
    return decoder(obj)


# --- client -> server: encoding ---------------------------------------------


def encode_client(msg: ClientMessage) -> bytes:
    """Encode a client message (no validation: the server does that).

    Raises:
        TypeError: ``msg`` is not a client message, or holds unpackable values.
    """
    obj: dict[str, Any]
    if isinstance(msg, Command):
        obj = {"t": "cmd", "seq": msg.seq, "c": str(msg.c)}
        if msg.d is not None:
            obj["d"] = list(msg.d)
        if msg.item is not None:
            obj["item"] = msg.item
        if msg.at is not None:
            obj["at"] = list(msg.at)
        if msg.spell is not None:
            obj["spell"] = msg.spell
        if msg.opt is not None:
            obj["opt"] = msg.opt
    elif isinstance(msg, Look):
        obj = {"t": "look", "id": msg.id}
    elif isinstance(msg, Ping):
        obj = {"t": "ping", "id": msg.id}
    elif isinstance(msg, Chat):
        obj = {"t": "chat", "text": msg.text}
        if msg.to is not None:
            obj["to"] = msg.to
        elif msg.scope != "level":
            obj["scope"] = msg.scope
    elif isinstance(msg, Hello):
        obj = {"t": "hello", "v": msg.v, "name": msg.name}
        if msg.token is not None:
            obj["token"] = msg.token
        if msg.cls is not None:
            obj["class"] = msg.cls
        if msg.watch is not None:
            obj["watch"] = msg.watch
    elif isinstance(msg, Spectators):
        obj = {"t": "spectators", "allow": msg.allow}
    else:
        raise TypeError(f"not a client message: {type(msg).__name__}")
    return _pack(obj)


# --- server -> client: encoding ---------------------------------------------

_local = threading.local()


def _pack(obj: object) -> bytes:
    """``obj`` in msgpack, with a reused per-thread msgspec encoder.

    The bytes are those of ``msgpack.packb(obj, use_bin_type=True)`` (the
    smallest format for every integer, string, array and map; ``bytes`` as
    binary; floats as float64): tests/protocol/test_codec.py compares the
    two. msgspec packs a delta in about half the time (bench/encode.py).
    """
    try:
        encoder = _local.encoder
    except AttributeError:
        encoder = _local.encoder = msgspec.msgpack.Encoder()
    data: bytes = encoder.encode(obj)
    return data


def _enc_delta(m: Delta) -> dict[int, Any]:
    # No "t": a server map without one is a delta (protocol 10); its keys
    # are the small integers of DELTA_KEYS (protocol 11).
    obj: dict[int, Any] = {}
    if m.tick is not None:
        obj[_K_TICK] = m.tick
    if m.ack is not None:
        obj[_K_ACK] = m.ack
    if m.tiles is not None:
        obj[_K_TILES] = m.tiles
    if m.fov is not None:
        obj[_K_FOV] = m.fov
    if m.add is not None:
        obj[_K_ADD] = m.add
    if m.upd is not None:
        obj[_K_UPD] = m.upd
    if m.mv is not None:
        obj[_K_MV] = m.mv
    if m.st is not None:
        obj[_K_ST] = m.st
    if m.back is not None:
        obj[_K_BACK] = m.back
    if m.rm is not None:
        obj[_K_RM] = m.rm
    if m.objs is not None:
        obj[_K_OBJS] = m.objs
    if m.ev is not None:
        obj[_K_EV] = m.ev
    if m.me is not None:
        obj[_K_ME] = m.me
    if m.rej is not None:
        obj[_K_REJ] = m.rej
    return obj


_K_TICK, _K_ACK, _K_TILES, _K_FOV, _K_ADD, _K_UPD, _K_MV, _K_ST = (
    DELTA_KEY[k] for k in ("tick", "ack", "tiles", "fov", "add", "upd", "mv", "st")
)
_K_BACK, _K_RM, _K_OBJS, _K_EV, _K_ME, _K_REJ = (
    DELTA_KEY[k] for k in ("back", "rm", "objs", "ev", "me", "rej")
)


def _enc_snapshot(m: Snapshot) -> dict[str, Any]:
    obj = {
        "t": "snap", "tick": m.tick, "depth": m.depth, "w": m.w, "h": m.h, "map": m.map,
        "fov": m.fov, "actors": m.actors, "objs": m.objs, "me": m.me, "ack": m.ack,
    }  # fmt: skip
    if m.rej is not None:
        obj["rej"] = m.rej
    if m.ev is not None:
        obj["ev"] = m.ev
    return obj


def _enc_welcome(m: Welcome) -> dict[str, Any]:
    obj = {
        "t": "welcome", "v": m.v, "id": m.id, "name": m.name, "token": m.token,
        "resumed": m.resumed, "tick": m.tick, "tick_rate": m.tick_rate, "terrain": m.terrain,
        "kinds": m.kinds, "items": m.items, "classes": m.classes, "motd": m.motd,
        "spells": m.spells, "statuses": m.statuses, "damage_types": m.damage_types,
        "reasons": m.reasons,
    }  # fmt: skip
    if m.watch is not None:
        obj["watch"] = m.watch
    return obj


def _enc_reject(m: Reject) -> dict[str, Any]:
    return {"t": "reject", "seq": m.seq, "reason": m.reason}


def _enc_error(m: Error) -> dict[str, Any]:
    return {"t": "error", "code": m.code, "msg": m.msg, "fatal": m.fatal}


def _enc_pong(m: Pong) -> dict[str, Any]:
    return {"t": "pong", "id": m.id, "tick": m.tick}


def _enc_chat_out(m: ChatOut) -> dict[str, Any]:
    obj: dict[str, Any] = {"t": "chat", "from": m.sender, "text": m.text, "tick": m.tick}
    if m.scope is not None:
        obj["scope"] = m.scope
    if m.to is not None:
        obj["to"] = m.to
    return obj


def _enc_info(m: Info) -> dict[str, Any]:
    return {"t": "info", "id": m.id, "found": m.found, "about": m.about}


def _enc_watchers(m: Watchers) -> dict[str, Any]:
    return {"t": "watchers", "n": m.n}


_SERVER_ENCODERS: dict[type, Callable[[Any], dict[Any, Any]]] = {
    Delta: _enc_delta,
    Snapshot: _enc_snapshot,
    Welcome: _enc_welcome,
    Reject: _enc_reject,
    Error: _enc_error,
    Pong: _enc_pong,
    ChatOut: _enc_chat_out,
    Info: _enc_info,
    Watchers: _enc_watchers,
}


def encode_server(msg: ServerMessage) -> bytes:
    """Encode a server message; ``None`` fields of a :class:`Delta` are omitted.

    Called for every player on every tick, so it only builds the map and packs
    it (``bytes`` fields become msgpack binary); it does not validate.

    Raises:
        TypeError: ``msg`` is not a server message, or holds unpackable values.
    """
    try:
        encoder = _SERVER_ENCODERS[type(msg)]
    except KeyError:
        raise TypeError(f"not a server message: {type(msg).__name__}") from None
    return _pack(encoder(msg))


# --- server -> client: decoding ---------------------------------------------

# A field check returns True when the value has the right shape.
_Check = Callable[[object], bool]


def _str(v: object) -> bool:
    return isinstance(v, str)


def _bool(v: object) -> bool:
    return isinstance(v, bool)


def _list(v: object) -> bool:
    return isinstance(v, list)


def _dict(v: object) -> bool:
    return isinstance(v, dict)


def _bin(v: object) -> bool:
    return isinstance(v, bytes)


def _fov(v: object) -> bool:
    check_fov(v)  # raises ProtocolError with a precise detail
    return True


_DELTA_FIELD: dict[object, str] = dict(enumerate(DELTA_KEYS))

# message type -> (class, [(wire key, attribute, check)], [optional (key, attr, check)])
_Fields = list[tuple[str, str, _Check]]
_SERVER_SCHEMAS: dict[str, tuple[type, _Fields, _Fields]] = {
    "welcome": (
        Welcome,
        [
            ("v", "v", _int), ("id", "id", _int), ("name", "name", _str),
            ("token", "token", _str), ("resumed", "resumed", _bool), ("tick", "tick", _int),
            ("tick_rate", "tick_rate", _int), ("terrain", "terrain", _list),
            ("kinds", "kinds", _list), ("items", "items", _dict),
            ("classes", "classes", _list), ("motd", "motd", _str),
        ],
        [
            ("spells", "spells", _dict), ("statuses", "statuses", _list),
            ("damage_types", "damage_types", _list), ("reasons", "reasons", _list),
            ("watch", "watch", _str),
        ],
    ),
    "snap": (
        Snapshot,
        [
            ("tick", "tick", _int), ("depth", "depth", _int), ("w", "w", _int),
            ("h", "h", _int), ("map", "map", _bin), ("fov", "fov", _fov),
            ("actors", "actors", _list), ("objs", "objs", _list), ("me", "me", _dict),
            ("ack", "ack", _int),
        ],
        [("rej", "rej", _list), ("ev", "ev", _list)],
    ),
    "delta": (
        Delta,
        [],
        [
            ("tick", "tick", _int), ("ack", "ack", _int), ("tiles", "tiles", _list), ("fov", "fov", _fov),
            ("add", "add", _list), ("upd", "upd", _list), ("mv", "mv", _list), ("st", "st", _list),
            ("back", "back", _list), ("rm", "rm", _list),
            ("objs", "objs", _list), ("ev", "ev", _list), ("me", "me", _dict),
            ("rej", "rej", _list),
        ],
    ),
    "reject": (Reject, [("seq", "seq", _int), ("reason", "reason", _str)], []),
    "error": (Error, [("code", "code", _str), ("msg", "msg", _str), ("fatal", "fatal", _bool)], []),
    "pong": (Pong, [("id", "id", _int), ("tick", "tick", _int)], []),
    "chat": (
        ChatOut,
        [("from", "sender", _str), ("text", "text", _str), ("tick", "tick", _int)],
        [("scope", "scope", _str), ("to", "to", _str)],
    ),
    "info": (Info, [("id", "id", _int), ("found", "found", _bool), ("about", "about", _dict)], []),
    "watchers": (Watchers, [("n", "n", _int)], []),
}  # fmt: skip


def decode_server(data: bytes) -> ServerMessage:
    """Decode one frame a server sent, checking its shape.

    A map without ``"t"`` is a ``delta`` (protocol 10: the most frequent
    message carries no type; every other one does), keyed by the integers
    of :data:`~protocol.messages.DELTA_KEYS` (protocol 11); a delta's other
    keys are ignored. Required keys must be
    present with the right types; optional keys (of ``delta``, and
    ``welcome``'s version-2 tables) may be absent or nil;
    unknown keys are ignored. A ``snap``'s ``map``
    must hold ``w * h`` bytes and every ``fov`` must be well formed. Records
    inside lists are not checked here.

    Args:
        data: the frame's payload.

    Returns:
        The message.

    Raises:
        ProtocolError: ``bad_message`` (not bytes, not a map, a ``"t"``
            that is not a string), ``bad_msgpack``, ``unknown_type`` or
            ``bad_field``. The connection is still usable; the frame should
            be dropped.
    """
    if not isinstance(data, (bytes, bytearray)):
        raise ProtocolError(ErrorCode.BAD_MESSAGE, "a frame must be bytes")
    raw = _unpack_server(data)
    if isinstance(raw, dict) and "t" not in raw:
        # A delta: no "t" (protocol 10), its fields keyed by number (protocol 11).
        raw = {_DELTA_FIELD[k]: v for k, v in raw.items() if k in _DELTA_FIELD}
        raw["t"] = "delta"
    obj, t = _type_of(raw)
    schema = _SERVER_SCHEMAS.get(t)
    if schema is None:
        raise ProtocolError(ErrorCode.UNKNOWN_TYPE, f"no server message type {_show(t)}")
    cls, required, optional = schema
    kwargs: dict[str, Any] = {}
    for key, attr, check in required:
        if key not in obj:
            raise ProtocolError(ErrorCode.BAD_FIELD, f"{t}: missing key {key}")
        value = obj[key]
        if not check(value):
            raise _bad(t, key, f"of the right type ({check.__name__.strip('_')})", value)
        kwargs[attr] = value
    for key, attr, check in optional:
        value = obj.get(key)
        if value is not None:
            if not check(value):
                raise _bad(t, key, f"of the right type ({check.__name__.strip('_')})", value)
            kwargs[attr] = value
    if cls is Snapshot:
        w, h = kwargs["w"], kwargs["h"]
        if w < 0 or h < 0 or w * h != len(kwargs["map"]):
            raise ProtocolError(ErrorCode.BAD_FIELD, f"snap: map must be w * h = {w} * {h} bytes")
    message: ServerMessage = cls(**kwargs)
    return message
