"""Errors a player meets, before and after ``hello`` (docs/protocol.md,
"Session", "`error` codes"): each code with its ``fatal`` flag, the close
code after a fatal one, and a session that goes on after a non-fatal one."""

from __future__ import annotations

import os
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest

from protocol.limits import HELLO_TIMEOUT_S
from protocol.messages import Command, CommandName, Ping
from protocol.version import PROTOCOL_VERSION
from tests.conformance.conftest import Server
from tests.conformance.players import Player, hello

HELLO = {"t": "hello", "v": PROTOCOL_VERSION, "name": "x"}


def packed(obj: Any) -> bytes:
    data: bytes = msgpack.packb(obj, use_bin_type=True)
    return data


async def expect_error(player: Player, code: str, fatal: bool) -> dict[str, Any]:
    """The next message is the error ``code`` with ``fatal``, and a text."""
    error = await player.recv()
    assert error["t"] == "error", error
    assert (error["code"], error["fatal"]) == (code, fatal), error
    assert isinstance(error["msg"], str) and error["msg"], error
    return error


async def test_a_ping_before_hello_is_answered(server: Server) -> None:
    player = await server.connect()
    pong = await player.pong(7)
    assert isinstance(pong["tick"], int)
    await player.close()


# A frame is checked in this order: msgpack, shape, type, keys and values, state.
BEFORE_HELLO = [
    pytest.param(b"\xc1", "bad_msgpack", id="bad_msgpack"),
    pytest.param(packed(HELLO) + b"\x00", "bad_msgpack", id="trailing_bytes"),
    pytest.param(packed([1, 2, 3]), "bad_message", id="not_a_map"),
    pytest.param(packed({"name": "x"}), "bad_message", id="no_type"),
    pytest.param("a text frame", "bad_message", id="text_frame"),
    pytest.param(packed({"t": "teleport"}), "unknown_type", id="unknown_type"),
    pytest.param(packed({"t": "hello", "v": PROTOCOL_VERSION}), "bad_field", id="no_name"),
    pytest.param(
        packed({"t": "hello", "v": PROTOCOL_VERSION, "name": "bad name!"}),
        "bad_field",
        id="bad_name",
    ),
    pytest.param(
        packed({"t": "hello", "v": PROTOCOL_VERSION, "name": "x" * 17}), "bad_field", id="long_name"
    ),
    pytest.param(
        packed({"t": "hello", "v": PROTOCOL_VERSION, "name": "x", "token": None}),
        "bad_field",
        id="nil_token",
    ),
    pytest.param(packed({**HELLO, "extra": 1}), "bad_field", id="unknown_key"),
    pytest.param(packed({"t": "cmd", "seq": "one", "c": "wait"}), "bad_field", id="bad_cmd"),
    pytest.param(packed({"t": "cmd", "seq": 1, "c": "wait"}), "not_allowed", id="cmd"),
    pytest.param(packed({"t": "chat", "text": "hi"}), "not_allowed", id="chat"),
    pytest.param(packed({"t": "look", "id": 1}), "not_allowed", id="look"),
]


@pytest.mark.parametrize("frame, code", BEFORE_HELLO)
async def test_bad_input_before_hello_is_not_fatal(
    server: Server, frame: bytes | str, code: str
) -> None:
    player = await server.connect()
    await player.send(frame)
    await expect_error(player, code, fatal=False)
    name = server.name("after")
    await player.send(hello(name))  # the session goes on
    welcome = await player.recv()
    assert (welcome["t"], welcome["name"]) == ("welcome", name), welcome
    await player.close()


AFTER_HELLO = [
    pytest.param(b"\xc1", "bad_msgpack", id="bad_msgpack"),
    pytest.param(packed({"t": 5}), "bad_message", id="type_not_a_string"),
    pytest.param("a text frame", "bad_message", id="text_frame"),
    pytest.param(packed({"t": "teleport", "seq": "x"}), "unknown_type", id="unknown_type"),
    pytest.param(packed({"t": "cmd", "seq": "one", "c": "wait"}), "bad_field", id="seq"),
    pytest.param(packed({"t": "cmd", "seq": 1, "c": "move", "d": [2, 0]}), "bad_field", id="d"),
    pytest.param(
        packed({"t": "cmd", "seq": 1, "c": "move", "d": [1.0, 0]}), "bad_field", id="float"
    ),
    pytest.param(
        packed({"t": "cmd", "seq": 1, "c": "wait", "d": [1, 0]}), "bad_field", id="extra_d"
    ),
    pytest.param(packed({"t": "cmd", "seq": 1, "c": "wait", "item": None}), "bad_field", id="nil"),
    pytest.param(packed({"t": "cmd", "seq": 1, "c": "fly"}), "bad_field", id="unknown_command"),
    pytest.param(packed({"t": "cmd", "seq": 2**31, "c": "wait"}), "bad_field", id="seq_range"),
    pytest.param(packed({"t": "ping", "id": -1}), "bad_field", id="ping_id"),
    pytest.param(packed({"t": "look"}), "bad_field", id="look_id"),
    pytest.param(packed(HELLO), "not_allowed", id="hello_again"),
]


@pytest.mark.parametrize("frame, code", AFTER_HELLO)
async def test_bad_input_after_hello_is_not_fatal(
    server: Server, frame: bytes | str, code: str
) -> None:
    player, _ = await server.join(server.name("bad"))
    await player.send(frame)
    error = await player.error()
    assert (error["code"], error["fatal"]) == (code, False), error
    assert error["msg"]
    # Nothing else changed: the player still plays.
    await player.pong(77)
    seq = await player.command(CommandName.WAIT)
    await player.acked(seq)
    await player.close()


async def test_a_frame_over_4096_bytes_closes_with_1009(server: Server) -> None:
    player, _ = await server.join(server.name("big"))
    other, _ = await server.join(server.name("bystander"))
    await player.send(b"\x00" * 5000)
    assert await player.closed() == 1009
    await other.pong(3)  # nobody else is disturbed
    await other.close()


@pytest.mark.parametrize(
    "fields, code",
    [
        pytest.param({"v": PROTOCOL_VERSION + 1}, "version", id="newer"),
        pytest.param({"v": 1}, "version", id="older"),
        pytest.param({"cls": "necromancer"}, "bad_class", id="bad_class"),
    ],
)
async def test_fatal_hello_refusals_close_with_1008(
    server: Server, fields: dict[str, Any], code: str
) -> None:
    player = await server.connect()
    name = server.name("refused")
    await player.send(hello(name, v=fields.get("v"), cls=fields.get("cls")))
    await expect_error(player, code, fatal=True)
    assert await player.closed() == 1008


async def test_a_refused_version_creates_no_character(server: Server) -> None:
    name = server.name("nover")
    player = await server.connect()
    await player.send(hello(name, v=PROTOCOL_VERSION + 1))
    await expect_error(player, "version", fatal=True)
    again, _snap = await server.join(name)  # the name was not taken
    assert again.welcome["resumed"] is False
    await again.close()


async def test_ping_and_look_after_hello(server: Server) -> None:
    player, snap = await server.join(server.name("looker"))
    me = player.welcome["id"]
    assert me in {a[0] for a in snap["actors"]}
    await player.send(Ping(id=2**31 - 1))
    pong = await player.recv_until(lambda m: m["t"] == "pong")
    assert pong["id"] == 2**31 - 1
    await player.send(packed({"t": "look", "id": me}))
    info = await player.recv_until(lambda m: m["t"] == "info")
    assert (info["id"], info["found"]) == (me, True)
    await player.send(packed({"t": "look", "id": 2**31 - 2}))
    info = await player.recv_until(lambda m: m["t"] == "info")
    assert (info["id"], info["found"]) == (2**31 - 2, False)
    await player.send(Command(seq=0, c=CommandName.WAIT))
    await player.acked(0)
    await player.close()


@pytest.mark.skipif(
    not os.environ.get("UNDERHALL_SLOW_TESTS"),
    reason="waits out the 10 s hello timeout, which no option of either front shortens "
    "(set UNDERHALL_SLOW_TESTS=1 to run it)",
)
async def test_no_hello_in_time_is_a_fatal_timeout(server: Server) -> None:
    player = await server.connect()
    await player.pong(1)  # a ping is not a hello
    error = await player.recv(HELLO_TIMEOUT_S + 5)
    assert (error["t"], error["code"], error["fatal"]) == ("error", "timeout", True), error
    assert await player.closed() == 1008
