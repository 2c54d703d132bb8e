"""Chat (docs/protocol.md, "Client → server" `chat`, "Chat"): the level by
default, the whole server with ``scope: "global"``, one player with ``to``;
a notice to the sender when nobody of that name plays; the text's limits;
the chat rates (5 lines at once, of which 2 global) and their one
``rate_limited`` report."""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest

from tests.conformance.conftest import Server
from tests.conformance.players import Msg, Player


def lines(msgs: list[Msg]) -> list[tuple[Any, ...]]:
    """The chat lines among ``msgs`` as ``(from, text, scope, to)``."""
    return [(m["from"], m["text"], m.get("scope"), m.get("to")) for m in msgs if m["t"] == "chat"]


async def heard_by(players: dict[str, Player]) -> dict[str, list[tuple[Any, ...]]]:
    """The chat lines each player hears until a quiet moment, read side by side."""
    said = await asyncio.gather(*(p.chats() for p in players.values()))
    return {who: lines(msgs) for who, msgs in zip(players, said, strict=True)}


def errors(msgs: list[Msg]) -> list[tuple[str, bool]]:
    """The errors among ``msgs`` as ``(code, fatal)``."""
    return [(m["code"], m["fatal"]) for m in msgs if m["t"] == "error"]


async def test_level_global_and_private_scopes(server: Server) -> None:
    ann_name, bob_name = server.name("Ann"), server.name("bob")
    ann, _ = await server.join(ann_name)
    bob, _ = await server.join(bob_name, door=1)  # through the other door
    deep_name, token, record = server.front.planted("Deep")
    deep, snap = await server.join(deep_name, token)
    assert (snap["depth"], record["depth"]) == (2, 2)
    everyone = {"ann": ann, "bob": bob, "deep": deep}

    await ann.say("on level one")
    heard = await heard_by(everyone)
    assert heard == {
        "ann": [(ann_name, "on level one", "level", None)],
        "bob": [(ann_name, "on level one", "level", None)],
        "deep": [],
    }

    await deep.say("hello everyone", scope="global")
    heard = await heard_by(everyone)
    line: tuple[Any, ...] = (deep_name, "hello everyone", "global", None)
    assert heard == {"ann": [line], "bob": [line], "deep": [line]}

    await bob.say("psst", to=ann_name.upper())  # names without case
    heard = await heard_by(everyone)
    line = (bob_name, "psst", "private", ann_name)
    assert heard == {"ann": [line], "bob": [line], "deep": []}

    await deep.say("down here", to=bob_name)  # across levels (and workers)
    heard = await heard_by(everyone)
    line = (deep_name, "down here", "private", bob_name)
    assert heard == {"ann": [], "bob": [line], "deep": [line]}
    for p in everyone.values():
        await p.close()


async def test_a_private_line_to_nobody_gets_a_notice(server: Server) -> None:
    ann, _ = await server.join(server.name("lonely"))
    bob, _ = await server.join(server.name("listener"))
    absent = server.name("nobody")
    await ann.say("anyone there?", to=absent)
    notices = await ann.chats(1.0)
    assert len(notices) == 1, notices
    [notice] = notices
    assert (notice["t"], notice["from"]) == ("chat", ""), notice
    assert absent in notice["text"], notice
    assert await bob.chats(0.3) == []  # nobody else hears of it
    await ann.close()
    await bob.close()


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param({"text": ""}, id="empty"),
        pytest.param({"text": "x" * 201}, id="201_characters"),
        pytest.param({"text": "bell\x07"}, id="control_character"),
        pytest.param({"text": "c1\x85"}, id="c1_control"),
        pytest.param({"text": "hi", "scope": "party"}, id="unknown_scope"),
        pytest.param({"text": "hi", "scope": "global", "to": "ann"}, id="scope_and_to"),
        pytest.param({"text": "hi", "to": "not a name"}, id="bad_to"),
        pytest.param({"text": "hi", "scope": None}, id="nil_scope"),
        pytest.param({"text": b"hi"}, id="binary_text"),
    ],
)
async def test_bad_chat_is_a_bad_field(server: Server, fields: dict[str, Any]) -> None:
    player, _ = await server.join(server.name("badchat"))
    await player.send(msgpack.packb({"t": "chat", **fields}, use_bin_type=True))
    await player.say("marker")  # comes back after anything the bad line caused
    said = [await player.recv_until(lambda m: m["t"] in ("chat", "error"))]
    while said[-1]["t"] != "chat":
        said.append(await player.recv_until(lambda m: m["t"] in ("chat", "error")))
    assert errors(said) == [("bad_field", False)], said
    assert lines(said) == [(player.welcome["name"], "marker", "level", None)], said
    await player.close()


async def test_the_longest_line_is_200_code_points(server: Server) -> None:
    player, _ = await server.join(server.name("long"))
    text = "é" * 199 + "🙂"  # 200 code points, 402 bytes
    await player.say(text)
    said = await player.chats()
    assert lines(said) == [(player.welcome["name"], text, "level", None)], said
    await player.close()


async def test_chat_over_its_rate_is_dropped_and_reported_once(server: Server) -> None:
    ann, _ = await server.join(server.name("chatty"))
    bob, _ = await server.join(server.name("hearer"))
    for n in range(8):
        await ann.say(f"line {n}")
    assert [text for _, text, _, _ in lines(await bob.chats())] == [f"line {n}" for n in range(5)]
    said = await ann.chats()
    assert [text for _, text, _, _ in lines(said)] == [f"line {n}" for n in range(5)]
    assert errors(said) == [("rate_limited", False)], said
    await ann.pong(5)  # other messages are not held back by chat's rate
    await ann.close()
    await bob.close()


async def test_global_chat_has_a_stricter_rate(server: Server) -> None:
    ann, _ = await server.join(server.name("shouter"))
    bob, _ = await server.join(server.name("crowd"))
    for n in range(4):
        await ann.say(f"global {n}", scope="global")
    assert [text for _, text, _, _ in lines(await bob.chats())] == ["global 0", "global 1"]
    said = await ann.chats()
    assert [text for _, text, _, _ in lines(said)] == ["global 0", "global 1"]
    assert errors(said) == [("rate_limited", False)], said
    await ann.say("still on the level")  # the level's rate has room left
    assert lines(await bob.chats()) == [(ann.welcome["name"], "still on the level", "level", None)]
    await ann.close()
    await bob.close()


async def test_a_line_is_the_same_frame_for_every_hearer(server: Server) -> None:
    players = [(await server.join(server.name("same")))[0] for _ in range(3)]
    await players[0].say("one frame")
    frames = []
    for p in players:
        await p.recv_until(lambda m: m["t"] == "chat")
        frames.append(p.raw[-1])
    assert len(set(frames)) == 1
    for p in players:
        await p.close()
