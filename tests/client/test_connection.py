"""Connection against a tiny in-test websocket server speaking the protocol."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from websockets.asyncio.server import Server, ServerConnection, serve

from client import connection as connection_module
from client.connection import Connection, ConnectionClosed, load_token, save_token, token_path
from protocol.codec import decode_client, encode_server
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import (
    Chat,
    ChatOut,
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
    Snapshot,
    Welcome,
)
from protocol.version import PROTOCOL_VERSION


def welcome_for(hello: Hello) -> Welcome:
    return Welcome(
        v=PROTOCOL_VERSION, id=3, name=hello.name, token="tok-" + hello.name,
        resumed=hello.token is not None,
        tick=10, tick_rate=10, terrain=[], kinds=[], items={}, classes=[["warrior", "Warrior"]],
        motd="welcome", reasons=["blocked", "occupied"],
    )  # fmt: skip


SNAP = Snapshot(10, 1, 1, 1, b"\x02", [0, 0, 1, 1, b"\x01"], [], [], {"x": 0, "y": 0}, -1)


class FakeServer:
    """Speaks enough of docs/protocol.md to exercise the client.

    Names select behaviours: "taken" is refused (fatal error + close 1008),
    "mute" is never welcomed. In play, chat texts select actions: "text" sends
    a text frame, "close" closes with a reason, "shutdown" sends a fatal error
    then closes without a reason.
    """

    def __init__(self) -> None:
        self.hellos: list[Hello] = []
        self.commands: list[Command] = []
        self.server: Server | None = None
        self.url = ""

    async def handler(self, ws: ServerConnection) -> None:
        hello = decode_client(await ws.recv())
        assert isinstance(hello, Hello)
        self.hellos.append(hello)
        if hello.name == "taken":
            await ws.send(encode_server(Error("name_taken", "that name is taken", True)))
            await ws.close(1008, "")
            return
        if hello.name == "mute":
            await ws.wait_closed()
            return
        await ws.send(encode_server(Pong(0, 10)))  # noise before welcome is skipped
        await ws.send(encode_server(welcome_for(hello)))
        await ws.send(encode_server(SNAP))
        tick, acked = 10, SNAP.ack
        async for data in ws:
            msg = decode_client(data)
            tick += 1
            if isinstance(msg, Command):
                self.commands.append(msg)
                # a delta's ack is the step from the last one (protocol 10)
                await ws.send(encode_server(Delta(tick, ack=msg.seq - acked)))
                acked = msg.seq
            elif isinstance(msg, Ping):
                await ws.send(encode_server(Pong(msg.id, tick)))
            elif isinstance(msg, Look):
                await ws.send(encode_server(Info(msg.id, False, {})))
            elif isinstance(msg, Chat) and msg.text == "refuse":
                # ack 6 and refusals of 5, 6 and 7, as ack − seq (protocol 10)
                await ws.send(encode_server(Delta(tick, ack=6 - acked, rej=[1, 1, 0, 0, -1, 9])))
                acked = 6
            elif isinstance(msg, Chat) and msg.text == "text":
                await ws.send("not msgpack")
            elif isinstance(msg, Chat) and msg.text == "close":
                await ws.close(1008, "go away")
            elif isinstance(msg, Chat) and msg.text == "shutdown":
                await ws.send(encode_server(Error("shutdown", "server stopping", True)))
                await ws.close(1001)
            elif isinstance(msg, Chat):
                await ws.send(encode_server(ChatOut(hello.name, msg.text, tick)))


@pytest.fixture
async def fake() -> AsyncIterator[FakeServer]:
    fake = FakeServer()
    async with serve(fake.handler, "127.0.0.1", 0, compression=None) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        fake.server, fake.url = server, f"ws://127.0.0.1:{port}/"
        yield fake


async def test_refusals_in_a_frame_come_first_named_from_the_welcome(fake: FakeServer) -> None:
    """Protocol 6: ``rej`` is flat pairs with codes; each refusal is handed
    out as a ``Reject`` named from ``welcome.reasons`` (a code the table lacks
    by its number), then the frame itself. Protocol 10: the frame's ``ack`` is
    a step, and each pair gives its ``seq`` as ``ack − seq``."""
    conn = await Connection.open(fake.url, "ann", open_timeout=2)
    assert await conn.recv() == SNAP
    await conn.send(Chat(text="refuse"))
    assert await conn.recv() == Reject(5, "occupied")
    assert await conn.recv() == Reject(6, "blocked")
    assert await conn.recv() == Reject(7, "reason 9")
    frame = await conn.recv()
    assert isinstance(frame, Delta) and frame.ack == 7 and conn.ack == 6  # from −1
    await conn.close()


async def test_open_and_play(fake: FakeServer) -> None:
    conn = await Connection.open(fake.url, "ann", cls_key="mage", open_timeout=2)
    assert fake.hellos == [Hello(PROTOCOL_VERSION, "ann", None, "mage")]
    assert conn.welcome.name == "ann" and conn.welcome.token == "tok-ann"
    assert await conn.recv() == SNAP
    assert await conn.command("move", (1, 0)) == 0
    assert await conn.command(CommandName.WAIT) == 1
    assert set(conn.sent_at) == {0, 1}
    assert await conn.recv() == Delta(11, ack=1)  # the steps from −1 to 0 and 0 to 1
    assert conn.ack == 0
    assert await conn.recv() == Delta(12, ack=1)
    assert conn.ack == 1
    await conn.send(Ping(42))
    assert await conn.recv() == Pong(42, 13)
    await conn.send(Chat("hi all"))
    assert await conn.recv() == ChatOut("ann", "hi all", 14)
    assert conn.messages_received == 7  # pong, welcome, snap, 2 deltas, pong, chat
    assert conn.bytes_received > 0
    assert not conn.closed
    await conn.close()
    await conn.close()
    assert conn.closed
    with pytest.raises(ConnectionClosed):
        await conn.recv()


async def test_resume_sends_the_token(fake: FakeServer) -> None:
    async with await Connection.open(fake.url, "ann", token="tok-ann", open_timeout=2) as conn:
        assert conn.welcome.resumed
    assert fake.hellos[-1] == Hello(PROTOCOL_VERSION, "ann", "tok-ann", None)


async def test_command_arguments(fake: FakeServer) -> None:
    async with await Connection.open(fake.url, "ann", open_timeout=2) as conn:
        with pytest.raises(ValueError):
            await conn.command("fly")
        with pytest.raises(ValueError):
            await conn.command("move", (1,))
        assert await conn.command("move", [0, -1]) == 0  # any two-number sequence
        assert conn.sent_at.keys() == {0}
        with pytest.raises(ValueError):
            await conn.command("throw", item="a", at=(1, 2, 3))
        assert await conn.command("throw", item="a", at=[4, 5]) == 1
        assert await conn.command("cast", (1, 1), spell="spark") == 2
        assert await conn.command("choose", opt="health") == 3
        assert await conn.command("zap", (0, 1), item="q") == 4
        await conn.send(Look(77))
        while not isinstance(msg := await conn.recv(), Info):
            pass
        assert msg == Info(77, False, {})
    assert fake.commands == [
        Command(0, CommandName.MOVE, (0, -1)),
        Command(1, CommandName.THROW, item="a", at=(4, 5)),
        Command(2, CommandName.CAST, (1, 1), spell="spark"),
        Command(3, CommandName.CHOOSE, opt="health"),
        Command(4, CommandName.ZAP, (0, 1), item="q"),
    ]


async def test_sent_at_is_bounded(fake: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection_module, "SENT_AT_LIMIT", 3)
    async with await Connection.open(fake.url, "ann", open_timeout=2) as conn:
        for _ in range(5):
            await conn.command("wait")
        assert list(conn.sent_at) == [2, 3, 4]


async def test_refused_hello(fake: FakeServer) -> None:
    with pytest.raises(ConnectionClosed) as info:
        await Connection.open(fake.url, "taken", open_timeout=2)
    assert info.value.reason == "name_taken: that name is taken"


async def test_no_welcome_in_time(fake: FakeServer) -> None:
    with pytest.raises(ConnectionClosed) as info:
        await Connection.open(fake.url, "mute", open_timeout=0.2)
    assert "no welcome" in info.value.reason


async def test_unreachable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ConnectionClosed) as info:
        await Connection.open(f"ws://127.0.0.1:{port}/", "ann", open_timeout=2)
    assert info.value.reason.startswith("cannot reach")
    with pytest.raises(ConnectionClosed) as info:
        await Connection.open("not a url", "ann", open_timeout=2)
    assert info.value.reason.startswith("cannot reach")


async def test_server_closes_with_a_reason(fake: FakeServer) -> None:
    conn = await Connection.open(fake.url, "ann", open_timeout=2)
    await conn.recv()
    await conn.send(Chat("close"))
    with pytest.raises(ConnectionClosed) as info:
        await conn.recv()
    assert info.value.reason == "go away"
    with pytest.raises(ConnectionClosed):
        await conn.send(Ping(1))
    with pytest.raises(ConnectionClosed):
        await conn.command("wait")
    assert conn.sent_at == {}


async def test_fatal_error_becomes_the_close_reason(fake: FakeServer) -> None:
    conn = await Connection.open(fake.url, "ann", open_timeout=2)
    await conn.recv()
    await conn.send(Chat("shutdown"))
    assert await conn.recv() == Error("shutdown", "server stopping", True)
    with pytest.raises(ConnectionClosed) as info:
        await conn.recv()
    assert info.value.reason == "shutdown: server stopping"


async def test_undecodable_frame_keeps_the_connection(fake: FakeServer) -> None:
    async with await Connection.open(fake.url, "ann", open_timeout=2) as conn:
        await conn.recv()
        await conn.send(Chat("text"))
        with pytest.raises(ProtocolError) as info:
            await conn.recv()
        assert info.value.code == ErrorCode.BAD_MESSAGE
        await conn.send(Ping(5))
        msg = await asyncio.wait_for(conn.recv(), 2)
        assert isinstance(msg, Pong) and msg.id == 5


# --- token store ------------------------------------------------------------------


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("UNDERHALL_HOME", str(tmp_path / "uh"))
    return tmp_path / "uh"


def test_token_round_trip(home: Path) -> None:
    assert token_path() == home / "tokens.json"
    assert load_token("ws://a:1/", "ann") is None
    assert save_token("ws://a:1/", "ann", "t1")
    assert save_token("ws://a:1", "bob", "t2")
    assert save_token("ws://b:1/", "ann", "t3")
    assert load_token("ws://a:1", "ann") == "t1"  # trailing slash does not matter
    assert load_token("ws://a:1/", "bob") == "t2"
    assert load_token("ws://b:1/", "ann") == "t3"
    assert load_token("ws://b:1/", "bob") is None
    assert save_token("ws://a:1/", "ann", "t4")
    assert load_token("ws://a:1/", "ann") == "t4"
    assert stat.S_IMODE(os.stat(home / "tokens.json").st_mode) == 0o600
    assert [p.name for p in home.iterdir()] == ["tokens.json"]  # no temporary left


@pytest.mark.parametrize(
    "content", ["{not json", "[1, 2]", '{"ws://a:1": "x"}', '{"ws://a:1": {"ann": 5}}']
)
def test_corrupt_token_file(home: Path, content: str) -> None:
    home.mkdir()
    (home / "tokens.json").write_text(content)
    assert load_token("ws://a:1", "ann") is None
    assert save_token("ws://a:1", "ann", "t1")
    assert load_token("ws://a:1", "ann") == "t1"
    assert json.loads((home / "tokens.json").read_text()) == {"ws://a:1": {"ann": "t1"}}


def test_unwritable_token_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("UNDERHALL_HOME", str(blocker / "sub"))  # a directory under a file
    assert save_token("ws://a:1", "ann", "t1") is False
    assert load_token("ws://a:1", "ann") is None


def test_default_token_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("UNDERHALL_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert token_path() == tmp_path / ".config" / "underhall" / "tokens.json"


@pytest.mark.parametrize(
    "reason, expected",
    [
        (
            "bad_field: hello.name must be 1-16 characters, not 'b!d'",
            (
                "ws://h:1 refused us: Server error (bad_field): hello.name must be 1-16 characters, "
                "not 'b!d'"
            ),
        ),
        (
            "bad_class: no class 'paladin' (classes: warrior, mage, monk)",
            (
                "ws://h:1 refused us: The server does not know that class: no class 'paladin' "
                "(classes: warrior, mage, monk)"
            ),
        ),
        (
            "name_taken: 'ann' belongs to someone",
            "ws://h:1 refused us: That name is taken (and this client has no token for it).",
        ),
    ],
)
def test_a_refusal_is_one_line_naming_its_code_at_most_once(reason: str, expected: str) -> None:
    from client.ui import describe_open_failure

    line = describe_open_failure("ws://h:1", ConnectionClosed(reason))
    assert line == expected
    assert line.count(reason.split(":")[0]) <= 1
