"""Codec tests: round trips, the fuzz rule, and every error the codec raises."""

from __future__ import annotations

import dataclasses
import string
from typing import Any

import msgpack  # type: ignore[import-untyped]
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.codec import (
    _decode_command_fast,
    _decode_generic,
    _pack,
    decode_client,
    decode_server,
    encode_client,
    encode_server,
)
from protocol.errors import ErrorCode, ProtocolError
from protocol.fov import pack_fov
from protocol.limits import KEY_RE, MAX_CHAT, MAX_COORD, MAX_FRAME_BYTES, MAX_SEQ, NAME_RE
from protocol.messages import (
    COMMAND_ARGS,
    COMMAND_KEYS,
    DELTA_KEY,
    DELTA_KEYS,
    DIRECTED_COMMANDS,
    STEP_CODES,
    STEP_DIRECTIONS,
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
    unpack_ids,
    unpack_moves,
    unpack_rejects,
    unpack_steps,
)
from tests.rawwire import delta_frame

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- strategies ----------------------------------------------------------------

wire_ints = st.integers(min_value=-(2**63), max_value=2**64 - 1)
small_ints = st.integers(min_value=-(2**31), max_value=2**31)
names = st.from_regex(NAME_RE, fullmatch=True)
chat_texts = st.text(
    alphabet=st.characters(exclude_categories=("Cc", "Cs")), min_size=1, max_size=MAX_CHAT
)
directions = st.tuples(st.sampled_from((-1, 0, 1)), st.sampled_from((-1, 0, 1))).filter(
    lambda d: d != (0, 0)
)


letters = st.sampled_from(string.ascii_letters)
keys = st.from_regex(KEY_RE, fullmatch=True)
cells = st.tuples(st.integers(0, MAX_COORD - 1), st.integers(0, MAX_COORD - 1))
ARG_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "d": directions, "item": letters, "at": cells, "spell": keys, "opt": keys,
}  # fmt: skip


@st.composite
def commands(draw: st.DrawFn) -> Command:
    """A valid command: its required keys, and at most one of its ``one_of`` keys."""
    c = draw(st.sampled_from(list(CommandName)))
    rule = COMMAND_KEYS[c]
    present = set(rule.required)
    if rule.one_of:
        choice = draw(st.sampled_from([None, *sorted(rule.one_of)]))
        if choice is not None:
            present.add(choice)
    args = {key: draw(ARG_VALUES[key]) for key in COMMAND_ARGS if key in present}
    return Command(seq=draw(st.integers(0, MAX_SEQ - 1)), c=c, **args)


client_messages: st.SearchStrategy[ClientMessage] = st.one_of(
    st.builds(
        Hello,
        v=wire_ints,
        name=names,
        token=st.none() | st.text(max_size=64),
        cls=st.none() | st.text(max_size=32),
    ),
    commands(),
    st.builds(Chat, text=chat_texts),
    st.builds(Chat, text=chat_texts, scope=st.sampled_from(["level", "global"])),
    st.builds(Chat, text=chat_texts, to=names),
    st.builds(Ping, id=st.integers(min_value=0, max_value=2**31 - 1)),
    st.builds(Look, id=st.integers(min_value=0, max_value=2**31 - 1)),
    st.builds(Hello, v=wire_ints, name=names, watch=names),
    st.builds(Chat, text=chat_texts, scope=st.just("watch")),
    st.builds(Spectators, allow=st.booleans()),
)

# Values msgpack carries unchanged (lists, not tuples; no NaN, which is != itself).
leaves = (
    st.none()
    | st.booleans()
    | wire_ints
    | st.floats(allow_nan=False)
    | st.text(max_size=20)
    | st.binary(max_size=20)
)
values = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
lists = st.lists(values, max_size=5)
dicts = st.dictionaries(st.text(max_size=8), values, max_size=5)


@st.composite
def fovs(draw: st.DrawFn) -> list[Any]:
    fh, fw = draw(st.integers(0, 6)), draw(st.integers(0, 6))
    bits = draw(st.lists(st.booleans(), min_size=fw * fh, max_size=fw * fh))
    return pack_fov(np.array(bits, dtype=bool).reshape(fh, fw), draw(small_ints), draw(small_ints))


@st.composite
def snapshots(draw: st.DrawFn) -> Snapshot:
    w, h = draw(st.integers(0, 8)), draw(st.integers(0, 8))
    return Snapshot(
        tick=draw(wire_ints),
        depth=draw(wire_ints),
        w=w,
        h=h,
        map=draw(st.binary(min_size=w * h, max_size=w * h)),
        fov=draw(fovs()),
        actors=draw(lists),
        objs=draw(lists),
        me=draw(dicts),
        ack=draw(wire_ints),
    )


server_messages: st.SearchStrategy[ServerMessage] = st.one_of(
    st.builds(
        Welcome,
        v=wire_ints,
        id=wire_ints,
        name=st.text(),
        token=st.text(),
        resumed=st.booleans(),
        tick=wire_ints,
        tick_rate=wire_ints,
        terrain=lists,
        kinds=lists,
        items=dicts,
        classes=lists,
        motd=st.text(),
        spells=dicts,
        statuses=lists,
        damage_types=lists,
        watch=st.none() | names,
    ),
    snapshots(),
    st.builds(
        Delta,
        tick=wire_ints,
        ack=st.none() | wire_ints,
        tiles=st.none() | lists,
        fov=st.none() | fovs(),
        add=st.none() | lists,
        upd=st.none() | lists,
        rm=st.none() | lists,
        objs=st.none() | lists,
        ev=st.none() | lists,
        me=st.none() | dicts,
    ),
    st.builds(Reject, seq=wire_ints, reason=st.text()),
    st.builds(Error, code=st.text(), msg=st.text(), fatal=st.booleans()),
    st.builds(Pong, id=wire_ints, tick=wire_ints),
    st.builds(ChatOut, sender=st.text(), text=st.text(), tick=wire_ints),
    st.builds(
        ChatOut,
        sender=st.text(),
        text=st.text(),
        tick=wire_ints,
        scope=st.sampled_from(["level", "global", "private"]),
        to=st.none() | names,
    ),
    st.builds(Info, id=wire_ints, found=st.booleans(), about=dicts),
    st.builds(Watchers, n=wire_ints),
)

# Maps that look like client messages: a valid "t" with arbitrary fields.
_NEAR_CLIENT_VALUES = [
    1, -1, 0, "move", "wait", "throw", "cast", "zap", "choose", "a", "spark",
    [1, 0], [0, 0], [3, 4], [70000, 1], "bob",
]  # fmt: skip
_NEAR_CLIENT_KEYS = (
    "v", "name", "token", "class", "seq", "c", "d", "item", "at", "spell", "opt", "text", "id",
    "extra",
)  # fmt: skip
near_client_maps = st.fixed_dictionaries(
    {"t": st.sampled_from(["hello", "cmd", "chat", "ping", "look", "welcome", "x"])},
    optional={k: values | st.sampled_from(_NEAR_CLIENT_VALUES) for k in _NEAR_CLIENT_KEYS},
)
near_server_maps = st.fixed_dictionaries(
    {"t": st.sampled_from(["welcome", "snap", "delta", "reject", "error", "pong", "chat", "info"])},
    optional={
        k: values | st.sampled_from([0, [0, 0, 1, 1, b"\x01"], b"", [], {}, True])
        for k in (
            "tick",
            "depth",
            "w",
            "h",
            "map",
            "fov",
            "ack",
            "tiles",
            "seq",
            "code",
            "id",
            "found",
            "about",
            "spells",
            "statuses",
            "damage_types",
        )
    },
)


# --- round trips -------------------------------------------------------------------


@FAST
@given(client_messages)
def test_client_round_trip(msg: ClientMessage) -> None:
    assert decode_client(encode_client(msg)) == msg


@FAST
@given(server_messages)
def test_server_round_trip(msg: ServerMessage) -> None:
    assert decode_server(encode_server(msg)) == msg


def unpack_delta(frame: bytes) -> dict[Any, Any]:
    raw: dict[Any, Any] = msgpack.unpackb(frame, strict_map_key=False)
    return raw


def test_delta_omits_absent_keys() -> None:
    assert unpack_delta(encode_server(Delta(tick=7, ack=3))) == {0: 7, 1: 3}


def test_a_deltas_keys_are_the_numbers_of_its_fields() -> None:
    """Protocol 11: a delta's map keys are the integers of DELTA_KEYS, one
    byte each, in Delta's field order; a reader ignores the keys it does not
    know (a later version's) and refuses a key neither string nor integer."""
    assert DELTA_KEYS == tuple(f.name for f in dataclasses.fields(Delta))
    full = Delta(**{name: [k] for k, name in enumerate(DELTA_KEYS) if name not in ("tick", "ack", "me", "fov")},
                 tick=1, ack=2, me={"hp": 3}, fov=[0, 0, 0, 0, b""])  # fmt: skip
    raw = unpack_delta(encode_server(full))
    assert sorted(raw) == list(range(len(DELTA_KEYS)))
    assert all(raw[k] == getattr(full, name) for k, name in enumerate(DELTA_KEYS))
    assert decode_server(encode_server(full)) == full
    # 14 fields, each key one byte: the map header, the keys, the values
    values = sum(len(pack(v)) for v in raw.values())
    assert len(encode_server(full)) == 1 + len(DELTA_KEYS) + values
    # ignored: a later version's key, and names (a version 10 delta's keys)
    assert decode_server(pack({1: 2, 99: [1], "st": [74]})) == Delta(ack=2)
    for bad in (
        b"\x81\xc0\x01",
        b"\x81\xc3\x01",
        b"\x81\xcb" + bytes(8) + b"\x01",
    ):  # nil, true, 0.0
        with pytest.raises(ProtocolError) as info:
            decode_server(bad)
        assert info.value.code is ErrorCode.BAD_MSGPACK
    with pytest.raises(ProtocolError) as info:  # maps inside keep string keys
        decode_server(pack({DELTA_KEY["me"]: {1: 2}}))
    assert info.value.code is ErrorCode.BAD_MSGPACK
    with pytest.raises(ProtocolError) as info:  # trailing bytes after the map
        decode_server(delta_frame(ack=1) + b"\x01")
    assert info.value.code is ErrorCode.BAD_MSGPACK


def test_a_delta_is_the_server_map_without_t() -> None:
    """Protocol 10: a delta carries no ``"t"``; every other server message
    does, and a server map whose ``"t"`` is not a string is refused."""
    for msg in (Delta(tick=7, ack=3), Delta(st=[74]), Delta()):
        frame = encode_server(msg)
        assert "t" not in unpack_delta(frame)
        assert decode_server(frame) == msg
    assert decode_server(delta_frame(ack=2, rm=[9])) == Delta(ack=2, rm=[9])
    pong = msgpack.unpackb(encode_server(Pong(id=1, tick=2)))
    assert pong["t"] == "pong"  # every other message keeps its type
    for bad in ({"t": 5, "ack": 2}, {"t": None}, {"t": b"delta"}):
        with pytest.raises(ProtocolError) as info:
            decode_server(pack(bad))
        assert info.value.code is ErrorCode.BAD_MESSAGE


def test_wire_keys_for_python_keywords() -> None:
    assert msgpack.unpackb(encode_client(Hello(1, "bob", cls="mage")))["class"] == "mage"
    raw = msgpack.unpackb(encode_server(ChatOut(sender="ann", text="hi", tick=2)))
    assert raw == {"t": "chat", "from": "ann", "text": "hi", "tick": 2}


def test_snapshot_map_is_binary() -> None:
    data = encode_server(Snapshot(1, 1, 2, 1, b"\x02\xff", [0, 0, 0, 0, b""], [], [], {}, -1))
    assert msgpack.unpackb(data, raw=True)[b"map"] == b"\x02\xff"
    assert b"\xc4\x02\x02\xff" in data  # bin 8 header, not a str


def test_error_from_exception() -> None:
    err = Error.from_exception(ProtocolError(ErrorCode.FLOOD, "too fast"))
    assert err == Error(code="flood", msg="too fast", fatal=True)


def test_encoders_refuse_other_objects() -> None:
    with pytest.raises(TypeError):
        encode_server(Ping(1))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        encode_client(Pong(1, 2))  # type: ignore[arg-type]


# --- the fuzz rule ----------------------------------------------------------------


def _accepts_or_rejects_client(data: bytes | str) -> None:
    try:
        decode_client(data)
    except ProtocolError:
        pass


def _accepts_or_rejects_server(data: bytes) -> None:
    try:
        decode_server(data)
    except ProtocolError:
        pass


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64))
def test_arbitrary_bytes(data: bytes) -> None:
    _accepts_or_rejects_client(data)
    _accepts_or_rejects_server(data)


@FAST
@given(values | near_client_maps | near_server_maps)
def test_arbitrary_msgpack_values(value: object) -> None:
    data = msgpack.packb(value, use_bin_type=True)
    _accepts_or_rejects_client(data)
    _accepts_or_rejects_server(data)


@FAST
@given(client_messages, st.data())
def test_truncated_and_corrupted_frames(msg: ClientMessage, data: st.DataObject) -> None:
    frame = encode_client(msg)
    cut = data.draw(st.integers(0, len(frame) - 1))
    _accepts_or_rejects_client(frame[:cut])
    i = data.draw(st.integers(0, len(frame) - 1))
    flipped = frame[:i] + bytes([frame[i] ^ data.draw(st.integers(1, 255))]) + frame[i + 1 :]
    _accepts_or_rejects_client(flipped)


@FAST
@given(server_messages, st.data())
def test_truncated_server_frames(msg: ServerMessage, data: st.DataObject) -> None:
    frame = encode_server(msg)
    _accepts_or_rejects_server(frame[: data.draw(st.integers(0, len(frame) - 1))])


# --- the typed path for commands --------------------------------------------------

_NEAR_SEQS = st.sampled_from([0, 1, MAX_SEQ - 1, MAX_SEQ, -1, True, False, 1.0, None, "1", b"1"])
_NEAR_CS = st.sampled_from([*CommandName, "Move", "x", "", b"move", 1, None])
_NEAR_DS: st.SearchStrategy[object] = st.sampled_from(
    [[1, 0], [-1, 1], [0, 0], [2, 0], [1], [1, 0, 0], [True, 0], [1.0, 0], (0, -1), None, "d", {}]
)
near_commands = st.fixed_dictionaries(
    {},
    optional={
        "t": st.sampled_from(["cmd", "ping", b"cmd", "Cmd"]),
        "seq": _NEAR_SEQS | st.integers(-(2**40), 2**40),
        "c": _NEAR_CS,
        "d": _NEAR_DS | st.lists(st.integers(-2, 2), max_size=3),
        "item": st.sampled_from(["a", "ab", 1]),
        "at": st.sampled_from([[1, 2], [-1, 0]]),
        "spell": st.just("spark"),
        "x": values,
    },
)


def _same_as_generic(data: bytes) -> None:
    """The typed path takes only frames the generic path accepts, and gives
    the same message; what it leaves (None), the generic path judges."""
    fast = _decode_command_fast(data)
    if fast is not None:
        assert _decode_generic(data) == fast
        assert decode_client(data) == fast


@settings(max_examples=400, deadline=None)
@given(near_commands, st.data())
def test_typed_command_path_agrees_with_the_generic_one(obj: dict[str, Any], data: Any) -> None:
    frame = pack(obj)
    _same_as_generic(frame)
    i = data.draw(st.integers(0, len(frame) - 1))
    _same_as_generic(frame[:i])
    _same_as_generic(
        frame[:i] + bytes([frame[i] ^ data.draw(st.integers(1, 255))]) + frame[i + 1 :]
    )


def test_typed_command_path_takes_the_frequent_commands() -> None:
    for c in CommandName:
        rule = COMMAND_KEYS[c]
        args: dict[str, Any] = {"d": [0, -1]} if rule.required == {"d"} and not rule.one_of else {}
        if rule.allowed and not args:
            continue  # an item, a cell, a spell or an option: the generic path's
        frame = pack({"t": "cmd", "seq": 9, "c": c.value, **args})
        assert _decode_command_fast(frame) == Command(9, c, (0, -1) if args else None)
    # A repeated key: the last one counts, in both paths.
    twice = b"\x85\xa1t\xa3cmd\xa3seq\x05\xa1c\xa4move\xa1d\x92\x01\x00\xa1d\x92\x00\x01"
    assert (
        _decode_command_fast(twice)
        == _decode_generic(twice)
        == Command(5, CommandName.MOVE, (0, 1))
    )
    # No "t", or another: not a command (msgspec takes a lone tagged struct's tag as optional).
    assert _decode_command_fast(pack({"seq": 1, "c": "wait"})) is None
    assert code_of(pack({"seq": 1, "c": "wait"})) == ErrorCode.BAD_MESSAGE
    assert _decode_command_fast(pack({"t": "ping", "seq": 1, "c": "wait"})) is None
    # The key order is free.
    assert _decode_command_fast(pack({"d": [1, 1], "c": "move", "seq": 3, "t": "cmd"})) == Command(
        3, CommandName.MOVE, (1, 1)
    )


# --- each error the codec raises --------------------------------------------------


def pack(obj: object) -> bytes:
    data: bytes = msgpack.packb(obj, use_bin_type=True)
    return data


def code_of(data: bytes | str) -> ErrorCode:
    with pytest.raises(ProtocolError) as info:
        decode_client(data)
    return info.value.code


def test_frame_limit() -> None:
    overhead = len(pack({"t": "ping", "id": 1, "x": "a" * 300})) - 300  # str 16 header
    padding = MAX_FRAME_BYTES - overhead
    at_limit = pack({"t": "ping", "id": 1, "x": "a" * padding})
    assert len(at_limit) == MAX_FRAME_BYTES
    assert code_of(at_limit) == ErrorCode.BAD_FIELD  # decoded, then refused for "x"
    too_big = pack({"t": "ping", "id": 1, "x": "a" * (padding + 1)})
    assert len(too_big) == MAX_FRAME_BYTES + 1
    with pytest.raises(ProtocolError) as info:
        decode_client(too_big)
    assert info.value.code == ErrorCode.TOO_LARGE and info.value.fatal


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\xc1",  # never used
        b"\x81\xa1t",  # truncated map
        pack({"t": "ping", "id": 1}) + b"\x00",  # trailing bytes
        b"\x81\xa1t\xa2\xff\xfe",  # invalid UTF-8 string
        b"\x81\x01\xa4ping",  # int map key
        b"\x91" * 5000,  # nested too deep (and too large)
    ],
)
def test_bad_msgpack(data: bytes) -> None:
    assert code_of(data) in (ErrorCode.BAD_MSGPACK, ErrorCode.TOO_LARGE)


def test_deep_nesting_within_the_frame_limit() -> None:
    assert code_of(b"\x91" * 4000 + b"\xc0") in (ErrorCode.BAD_MSGPACK, ErrorCode.BAD_MESSAGE)


@pytest.mark.parametrize(
    "data",
    ['{"t": "ping"}', pack([1, 2]), pack(3), pack({"id": 1}), pack({"t": 1}), pack({"t": b"ping"})],
)
def test_bad_message(data: bytes | str) -> None:
    assert code_of(data) == ErrorCode.BAD_MESSAGE


@pytest.mark.parametrize("t", ["welcome", "snap", "pong", "info", "", "PING", "LOOK"])
def test_unknown_type(t: str) -> None:
    assert code_of(pack({"t": t})) == ErrorCode.UNKNOWN_TYPE


VALID: dict[str, dict[str, Any]] = {
    "hello": {"t": "hello", "v": 2, "name": "Bob_the-2nd"},
    "cmd": {"t": "cmd", "seq": 0, "c": "move", "d": [1, -1]},
    "chat": {"t": "chat", "text": "hello all"},
    "ping": {"t": "ping", "id": 5},
    "look": {"t": "look", "id": 5},
    "spectators": {"t": "spectators", "allow": False},
    "watch": {"t": "hello", "v": 12, "name": "bob", "watch": "Ann"},
}


@pytest.mark.parametrize("t", VALID)
def test_valid_examples(t: str) -> None:
    decode_client(pack(VALID[t]))


def _with(t: str, **changes: Any) -> bytes:
    obj = dict(VALID[t])
    for k, v in changes.items():
        if v is _DROP:
            obj.pop(k)
        else:
            obj[k] = v
    return pack(obj)


_DROP = object()

BAD_FIELDS = [
    # spectators (protocol 12)
    _with("spectators", allow=0),
    _with("spectators", allow=None),
    _with("spectators", allow=_DROP),
    _with("watch", watch="bad name"),
    _with("watch", watch=None),
    _with("watch", token="t"),
    _with("watch", **{"class": "mage"}),
    # unknown and missing keys
    _with("ping", extra=1),
    _with("ping", id=_DROP),
    pack({"t": "ping", "id": 1, b"id": 1}),  # a binary key is not a known key
    _with("hello", name=_DROP),
    # hello
    _with("hello", v=True),
    _with("hello", v="1"),
    _with("hello", v=1.0),
    _with("hello", name=""),
    _with("hello", name="a" * 17),
    _with("hello", name="bad name"),
    _with("hello", name="bob\n"),
    _with("hello", name="bøb"),
    _with("hello", name=5),
    _with("hello", token=None),
    _with("hello", token=12),
    _with("hello", **{"class": None}),
    _with("hello", **{"class": ["mage"]}),
    # cmd
    _with("cmd", seq=-1),
    _with("cmd", seq=MAX_SEQ),
    _with("cmd", seq=False),
    _with("cmd", seq="1"),
    _with("cmd", c="fly"),
    _with("cmd", c=1),
    _with("cmd", d=_DROP),
    _with("cmd", d=[0, 0]),
    _with("cmd", d=[2, 0]),
    _with("cmd", d=[1]),
    _with("cmd", d=[1, 0, 0]),
    _with("cmd", d=[True, 0]),
    _with("cmd", d=[1.0, 0]),
    _with("cmd", d=None),
    _with("cmd", d={"x": 1}),
    _with("cmd", c="wait"),  # wait takes no direction
    _with("cmd", c="pickup", d=None),
    # chat
    _with("chat", text=""),
    _with("chat", text="x" * (MAX_CHAT + 1)),
    _with("chat", text="\x1b[2Jgotcha"),
    _with("chat", text="line\nbreak"),
    _with("chat", text="c1 \x9b"),
    _with("chat", text=b"bytes"),
    _with("chat", scope="planet"),
    _with("chat", scope=None),
    _with("chat", scope=["level"]),
    _with("chat", to="no spaces allowed"),
    _with("chat", to=""),
    _with("chat", to=7),
    _with("chat", to="ann", scope="global"),
    # ping
    _with("ping", id=None),
    _with("ping", id=True),
    _with("ping", id=[1]),
    # look
    _with("look", id=-1),
    _with("look", id=MAX_SEQ),
    _with("look", id="3"),
    _with("look", id=1.0),
    _with("look", extra=1),
    _with("look", id=_DROP),
]


@pytest.mark.parametrize("data", BAD_FIELDS)
def test_bad_field(data: bytes) -> None:
    assert code_of(data) == ErrorCode.BAD_FIELD


def test_limits_of_valid_fields() -> None:
    assert decode_client(_with("cmd", seq=MAX_SEQ - 1)) == Command(
        MAX_SEQ - 1, CommandName.MOVE, (1, -1)
    )
    assert decode_client(_with("chat", text="é" * MAX_CHAT)) == Chat("é" * MAX_CHAT)
    assert decode_client(_with("hello", name="A" * 16)).name == "A" * 16  # type: ignore[union-attr]
    for c in ("wait", "rest", "pickup", "down", "up"):
        assert decode_client(pack({"t": "cmd", "seq": 1, "c": c})) == Command(1, CommandName(c))
    all_chars = string.ascii_letters + string.digits + "_-"
    assert NAME_RE.fullmatch(all_chars[:16]) is not None


# One minimal valid cmd per command name (docs/protocol.md, "Commands").
MINIMAL: dict[str, dict[str, Any]] = {
    "move": {"d": [1, 0]}, "open": {"d": [0, -1]}, "close": {"d": [-1, 1]},
    "wait": {}, "rest": {}, "pickup": {}, "down": {}, "up": {},
    "drop": {"item": "a"}, "wield": {"item": "b"}, "wear": {"item": "Z"},
    "remove": {"item": "c"}, "eat": {"item": "d"}, "quaff": {"item": "e"}, "read": {"item": "f"},
    "throw": {"item": "g", "at": [3, 4]}, "zap": {"item": "h", "d": [1, 1]},
    "cast": {"spell": "spark"}, "choose": {"opt": "resist_fire"}, "upgrade": {"spell": "spark"},
}  # fmt: skip
SAMPLE_ARGS: dict[str, Any] = {
    "d": [1, 0], "item": "a", "at": [2, 2], "spell": "spark", "opt": "health",
}  # fmt: skip


def cmd(c: str, **args: Any) -> bytes:
    return pack({"t": "cmd", "seq": 9, "c": c, **args})


def test_minimal_table_covers_every_command() -> None:
    assert set(MINIMAL) == {c.value for c in CommandName}
    assert DIRECTED_COMMANDS == {CommandName(c) for c in ("move", "open", "close", "zap")}
    assert CommandName.ZAP.needs_direction and not CommandName.CAST.needs_direction


@pytest.mark.parametrize("c", sorted(MINIMAL))
def test_each_command_with_its_required_keys(c: str) -> None:
    msg = decode_client(cmd(c, **MINIMAL[c]))
    assert isinstance(msg, Command) and msg.c == CommandName(c)
    expected = {
        "d": tuple(MINIMAL[c]["d"]) if "d" in MINIMAL[c] else None,
        "item": MINIMAL[c].get("item"),
        "at": tuple(MINIMAL[c]["at"]) if "at" in MINIMAL[c] else None,
        "spell": MINIMAL[c].get("spell"),
        "opt": MINIMAL[c].get("opt"),
    }
    assert {k: getattr(msg, k) for k in COMMAND_ARGS} == expected


@pytest.mark.parametrize("c", sorted(MINIMAL))
def test_each_command_refuses_missing_and_foreign_keys(c: str) -> None:
    for key in MINIMAL[c]:  # every required key is required
        args = {k: v for k, v in MINIMAL[c].items() if k != key}
        assert code_of(cmd(c, **args)) == ErrorCode.BAD_FIELD, (c, "without", key)
    allowed = COMMAND_KEYS[CommandName(c)].allowed
    for key in COMMAND_ARGS:  # every other key must be absent
        if key not in allowed:
            assert code_of(cmd(c, **MINIMAL[c], **{key: SAMPLE_ARGS[key]})) == ErrorCode.BAD_FIELD


def test_cast_takes_at_most_one_of_d_and_at() -> None:
    assert decode_client(cmd("cast", spell="spark", d=[0, 1])) == Command(
        9, CommandName.CAST, d=(0, 1), spell="spark"
    )
    assert decode_client(cmd("cast", spell="fireball", at=[7, 8])) == Command(
        9, CommandName.CAST, at=(7, 8), spell="fireball"
    )
    assert code_of(cmd("cast", spell="spark", d=[0, 1], at=[7, 8])) == ErrorCode.BAD_FIELD
    assert code_of(cmd("cast", d=[0, 1])) == ErrorCode.BAD_FIELD


@pytest.mark.parametrize("item", ["a", "z", "A", "Z"])
def test_item_letters(item: str) -> None:
    assert decode_client(cmd("eat", item=item)) == Command(9, CommandName.EAT, item=item)


@pytest.mark.parametrize("item", ["", "ab", "1", "_", "é", "ä", " ", 5, None, True, ["a"], b"a"])
def test_bad_item_letters(item: object) -> None:
    assert code_of(cmd("eat", item=item)) == ErrorCode.BAD_FIELD


@pytest.mark.parametrize("at", [[0, 0], [MAX_COORD - 1, MAX_COORD - 1], [5, 0]])
def test_target_cells(at: list[int]) -> None:
    msg = decode_client(cmd("throw", item="a", at=at))
    assert isinstance(msg, Command) and msg.at == (at[0], at[1])


@pytest.mark.parametrize(
    "at",
    [[-1, 0], [0, -1], [MAX_COORD, 0], [0, MAX_COORD], [1.0, 2], [True, 2], [1], [1, 2, 3],
     None, "1,2", {"x": 1}],
)  # fmt: skip
def test_bad_target_cells(at: object) -> None:
    assert code_of(cmd("throw", item="a", at=at)) == ErrorCode.BAD_FIELD


@pytest.mark.parametrize("key", ["spark", "a", "x" * 32, "resist_fire", "0_9"])
def test_spell_and_option_keys(key: str) -> None:
    assert decode_client(cmd("cast", spell=key)) == Command(9, CommandName.CAST, spell=key)
    assert decode_client(cmd("choose", opt=key)) == Command(9, CommandName.CHOOSE, opt=key)


@pytest.mark.parametrize("key", ["", "x" * 33, "Spark", "sp ark", "spärk", "a-b", 3, None, ["a"]])
def test_bad_spell_and_option_keys(key: object) -> None:
    assert code_of(cmd("cast", spell=key)) == ErrorCode.BAD_FIELD
    assert code_of(cmd("choose", opt=key)) == ErrorCode.BAD_FIELD


def test_command_wire_form() -> None:
    raw = msgpack.unpackb(encode_client(Command(3, CommandName.THROW, item="b", at=(4, 5))))
    assert raw == {"t": "cmd", "seq": 3, "c": "throw", "item": "b", "at": [4, 5]}
    raw = msgpack.unpackb(encode_client(Command(4, CommandName.CAST, d=(1, 0), spell="spark")))
    assert raw == {"t": "cmd", "seq": 4, "c": "cast", "d": [1, 0], "spell": "spark"}
    assert msgpack.unpackb(encode_client(Look(12))) == {"t": "look", "id": 12}


def test_welcome_without_the_version_2_tables() -> None:
    raw = {
        "t": "welcome", "v": 2, "id": 1, "name": "a", "token": "t", "resumed": False,
        "tick": 0, "tick_rate": 10, "terrain": [], "kinds": [], "items": {}, "classes": [],
        "motd": "",
    }  # fmt: skip
    msg = decode_server(pack(raw))
    assert isinstance(msg, Welcome)
    assert (msg.spells, msg.statuses, msg.damage_types) == ({}, [], [])
    full = decode_server(
        pack(
            {
                **raw,
                "spells": {"spark": ["spark", 1, "evocation", "dir"]},
                "statuses": [["frozen", "frozen"]],
                "damage_types": ["fire"],
            }
        )
    )
    assert isinstance(full, Welcome) and full.spells["spark"][3] == "dir"
    assert full.statuses == [["frozen", "frozen"]] and full.damage_types == ["fire"]


def test_info_wire_form() -> None:
    about = {"name": "", "kind": "rat", "level": 1, "courage": 0.25, "resist": {"fire": -1}}
    data = encode_server(Info(5, True, about))
    assert msgpack.unpackb(data) == {"t": "info", "id": 5, "found": True, "about": about}
    assert decode_server(data) == Info(5, True, about)


SERVER_BAD = [
    ({"t": "info", "id": 1, "found": 1, "about": {}}, ErrorCode.BAD_FIELD),
    ({"t": "info", "id": 1, "found": False, "about": []}, ErrorCode.BAD_FIELD),
    ({"t": "info", "id": "1", "found": False, "about": {}}, ErrorCode.BAD_FIELD),
    ({"t": "info", "id": 1, "found": False}, ErrorCode.BAD_FIELD),
    (
        {
            "t": "welcome",
            "v": 2,
            "id": 1,
            "name": "a",
            "token": "t",
            "resumed": False,
            "tick": 0,
            "tick_rate": 10,
            "terrain": [],
            "kinds": [],
            "items": {},
            "classes": [],
            "motd": "",
            "spells": [],
        },
        ErrorCode.BAD_FIELD,
    ),
    ({"t": "pong", "id": 1}, ErrorCode.BAD_FIELD),
    ({"t": "pong", "id": 1, "tick": "2"}, ErrorCode.BAD_FIELD),
    ({"t": "error", "code": "x", "msg": "y", "fatal": 1}, ErrorCode.BAD_FIELD),
    ({0: 1, 3: [0, 0, 3, 3, b"\x00"]}, ErrorCode.BAD_FIELD),  # a delta's tick and fov
    ({0: 1, 2: {"a": 1}}, ErrorCode.BAD_FIELD),  # a delta's tick and tiles
    ({"t": "hello"}, ErrorCode.UNKNOWN_TYPE),
    ([1], ErrorCode.BAD_MESSAGE),
]


@pytest.mark.parametrize(("obj", "code"), SERVER_BAD)
def test_server_errors(obj: object, code: ErrorCode) -> None:
    with pytest.raises(ProtocolError) as info:
        decode_server(pack(obj))
    assert info.value.code == code


def test_server_snapshot_map_size() -> None:
    snap = {
        "t": "snap", "tick": 1, "depth": 1, "w": 3, "h": 2, "map": b"\x00" * 5,
        "fov": [0, 0, 0, 0, b""], "actors": [], "objs": [], "me": {}, "ack": -1,
    }  # fmt: skip
    with pytest.raises(ProtocolError) as info:
        decode_server(pack(snap))
    assert info.value.code == ErrorCode.BAD_FIELD


def test_server_tolerates_unknown_keys_and_nil_options() -> None:
    msg = decode_server(pack({0: 4, 99: [1], DELTA_KEY["ev"]: None}))
    assert msg == Delta(tick=4)


def test_server_text_frame() -> None:
    with pytest.raises(ProtocolError) as info:
        decode_server("x")  # type: ignore[arg-type]
    assert info.value.code == ErrorCode.BAD_MESSAGE


@pytest.mark.parametrize("ident", [-1, 2**31, 2**40])
def test_ping_id_out_of_range_is_bad_field(ident: int) -> None:
    with pytest.raises(ProtocolError) as info:
        decode_client(msgpack.packb({"t": "ping", "id": ident}))
    assert info.value.code == ErrorCode.BAD_FIELD and not info.value.fatal


@FAST
@given(
    st.sampled_from(list(CommandName)),
    st.sets(st.sampled_from(COMMAND_ARGS)),
    st.data(),
)
def test_key_sets_are_accepted_exactly_when_they_fit_the_table(
    c: CommandName, present: set[str], data: st.DataObject
) -> None:
    args = {key: list(v) if isinstance(v := data.draw(ARG_VALUES[key]), tuple) else v
            for key in present}  # fmt: skip
    rule = COMMAND_KEYS[c]
    fits = rule.required <= present <= rule.allowed and len(present & rule.one_of) <= 1
    frame = cmd(c.value, **args)
    if fits:
        msg = decode_client(frame)
        assert isinstance(msg, Command) and msg.c is c
        assert {k for k in COMMAND_ARGS if getattr(msg, k) is not None} == present
    else:
        assert code_of(frame) == ErrorCode.BAD_FIELD


def test_chat_scopes_on_the_wire() -> None:
    """A chat without scope or to is a level chat; the encoder leaves the
    default out, so such a frame is what a version-2 client sent before."""
    assert decode_client(pack({"t": "chat", "text": "hi"})) == Chat("hi", "level")
    assert decode_client(pack({"t": "chat", "text": "hi", "scope": "global"})) == Chat(
        "hi", "global"
    )
    assert decode_client(pack({"t": "chat", "text": "hi", "to": "Bob"})) == Chat("hi", to="Bob")
    assert msgpack.unpackb(encode_client(Chat("hi"))) == {"t": "chat", "text": "hi"}
    raw = msgpack.unpackb(encode_server(ChatOut("ann", "hi", 3, scope="private", to="Bob")))
    assert raw == {
        "t": "chat",
        "from": "ann",
        "text": "hi",
        "tick": 3,
        "scope": "private",
        "to": "Bob",
    }


_wire_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=300)
    | st.binary(max_size=300),
    lambda inner: (
        st.lists(inner, max_size=20)
        | st.dictionaries(st.text(max_size=10) | st.integers(-1000, 1000), inner, max_size=20)
    ),
    max_leaves=60,
)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(_wire_values)
def test_encoding_writes_the_bytes_msgpack_would(value: Any) -> None:
    """The server encodes with msgspec; the bytes are msgpack-python's own
    (smallest formats, ``bytes`` as binary, floats as float64)."""
    assert _pack(value) == msgpack.packb(value, use_bin_type=True)


def test_unpack_moves_reads_ids_as_gaps_and_stops_at_a_malformed_triple() -> None:
    """Protocol 5's ``mv``: ``[gap, x, y, ...]``, ids increasing from 0 by their gaps."""
    assert unpack_moves([9, 4, 1, 3, 6, 2]) == [(9, 4, 1), (12, 6, 2)]
    assert unpack_moves([9, 4, 1, 0, 6, 2, 1, 1, 1]) == [(9, 4, 1)]  # a gap of 0: ids must rise
    assert unpack_moves([9, 4, 1, -2, 6, 2]) == [(9, 4, 1)]
    assert unpack_moves([9, True, 1, 1, 6, 2]) == []  # a bool is not an int here
    assert unpack_moves([9, 4, 1, 1, 6]) == [(9, 4, 1)]  # a partial triple at the end
    assert unpack_moves(None) == [] and unpack_moves("x") == []


def test_unpack_steps_reads_gap_and_direction_from_one_int() -> None:
    """Protocol 7's ``st``: ``[gap × 8 + direction, ...]``, ids increasing from
    0 by their gaps, directions clockwise from north."""
    assert STEP_DIRECTIONS[0] == (0, -1) and STEP_DIRECTIONS[2] == (1, 0)
    assert all(STEP_CODES[d] == i for i, d in enumerate(STEP_DIRECTIONS))
    assert len(set(STEP_DIRECTIONS)) == 8 and all(
        max(abs(dx), abs(dy)) == 1 for dx, dy in STEP_DIRECTIONS
    )
    # 9 × 8 + 2: actor 9 east; 3 × 8 + 5: actor 12 south-west (docs/protocol.md)
    assert unpack_steps([74, 29]) == [(9, 1, 0), (12, -1, 1)]
    assert unpack_steps([8, 15, 1000 * 8 + 4]) == [(1, 0, -1), (2, -1, -1), (1002, 0, 1)]
    assert unpack_steps([74, 7, 29]) == [(9, 1, 0)]  # a gap of 0 (value < 8): ids must rise
    assert unpack_steps([74, -3, 29]) == [(9, 1, 0)]
    assert unpack_steps([True, 74]) == [] and unpack_steps([74, 29.0]) == [(9, 1, 0)]
    assert unpack_steps(None) == [] and unpack_steps("x") == [] and unpack_steps([]) == []
    wire = decode_server(encode_server(Delta(tick=3, st=[74, 29], mv=[5, 1, 1])))
    assert isinstance(wire, Delta) and wire.st == [74, 29] and wire.mv == [5, 1, 1]


def test_back_goes_through_the_codec_and_is_checked_for_shape() -> None:
    """Protocol 8's ``back`` rides in a delta as a flat list, read as ``mv``
    is; a ``back`` that is not a list is a bad field."""
    wire = decode_server(encode_server(Delta(tick=3, back=[9, 4, 1, 3, 6, 2], st=[74])))
    assert isinstance(wire, Delta) and wire.back == [9, 4, 1, 3, 6, 2] and wire.st == [74]
    assert unpack_moves(wire.back) == [(9, 4, 1), (12, 6, 2)]
    assert decode_server(encode_server(Delta(tick=3))) == Delta(tick=3)  # absent: None
    with pytest.raises(ProtocolError) as err:
        decode_server(delta_frame(tick=3, back=5))
    assert err.value.code is ErrorCode.BAD_FIELD and "back" in str(err.value)


def test_a_delta_may_leave_tick_out_but_not_send_a_bad_one() -> None:
    """Protocol 9: ``tick`` is optional in a delta (the tick after the last
    message's); present, it must be an int."""
    frame = encode_server(Delta(st=[74]))
    assert unpack_delta(frame) == {DELTA_KEY["st"]: [74]}
    assert decode_server(frame) == Delta(st=[74])
    assert decode_server(encode_server(Delta(tick=7))) == Delta(tick=7)
    with pytest.raises(ProtocolError) as err:
        decode_server(delta_frame(tick="7"))
    assert err.value.code is ErrorCode.BAD_FIELD and "tick" in str(err.value)


def test_unpack_ids_reads_rm_as_gaps_and_stops_at_a_bad_gap() -> None:
    """Protocol 6's ``rm``: ``[gap, ...]``, ids increasing from 0 by their gaps."""
    assert unpack_ids([9, 3, 1]) == [9, 12, 13]
    assert unpack_ids([9, 0, 4]) == [9]  # a gap of 0: ids must rise
    assert unpack_ids([9, -1, 4]) == [9]
    assert unpack_ids([True, 4]) == []  # a bool is not an int here
    assert unpack_ids([9, "x", 4]) == [9]
    assert unpack_ids([]) == [] and unpack_ids(None) == [] and unpack_ids(7) == []


def test_unpack_rejects_names_codes_from_the_welcome_table() -> None:
    """Protocol 6's ``rej``: flat pairs, codes into ``welcome.reasons``;
    protocol 10: each ``seq`` given as ``ack − seq``."""
    reasons = ["blocked", "occupied", 5, ""]
    assert unpack_rejects([1, 1, 0, 0], reasons, 8) == [(7, "occupied"), (8, "blocked")]
    # A refusal of a command past the ack (queue_full) counts back negatively.
    assert unpack_rejects([-2, 0], reasons, 8) == [(10, "blocked")]
    # Codes the table lacks, or whose entry is no name, are shown by number.
    assert unpack_rejects([3, 9, 2, -1, 1, 2, 0, 3], reasons, 10) == [
        (7, "reason 9"),
        (8, "reason -1"),
        (9, "reason 2"),
        (10, "reason 3"),
    ]
    # A pair that is not two ints is skipped; an odd last element is ignored.
    assert unpack_rejects([2, "x", True, 0, 1, 1, 9], reasons, 9) == [(8, "occupied")]
    assert unpack_rejects(None, reasons, 0) == []
    assert unpack_rejects([[7, "blocked"]], reasons, 0) == []
