"""Chat over real websockets: scoped to the level by default, a global channel
with a stricter rate, private lines to one name; each line is one frame, the
same bytes for every recipient."""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack  # type: ignore[import-untyped]
from websockets.asyncio.client import ClientConnection

from server.content import Terrain
from tests.net.conftest import Started, join, recv, send


async def _chats(ws: ClientConnection, quiet: float = 0.4) -> list[dict[str, Any]]:
    """Every chat (and error) that arrives until ``quiet`` seconds pass without one."""
    out: list[dict[str, Any]] = []
    while True:
        try:
            msg = await recv(ws, quiet)
        except TimeoutError:
            return out
        if msg["t"] in ("chat", "error"):
            out.append(msg)


async def test_level_global_and_private_scopes(start_server: Started) -> None:
    server = await start_server(populate=False)
    ann, _, _ = await join(server, "Ann")
    bob, _, _ = await join(server, "bob")
    deep, welcome, _ = await join(server, "deep")
    world = server.game.world
    world._relocate(world.actors[welcome["id"]], 2, *world._arrival(2, Terrain.STAIRS_UP))

    await send(ann, {"t": "chat", "text": "on level one"})
    for ws, hears in ((ann, True), (bob, True), (deep, False)):
        got = [(m["from"], m["text"], m.get("scope")) for m in await _chats(ws)]
        assert got == ([("Ann", "on level one", "level")] if hears else [])

    await send(deep, {"t": "chat", "text": "hello everyone", "scope": "global"})
    for ws in (ann, bob, deep):
        got = [(m["from"], m["text"], m.get("scope")) for m in await _chats(ws)]
        assert got == [("deep", "hello everyone", "global")]

    await send(bob, {"t": "chat", "text": "psst", "to": "ANN"})  # names without case
    for ws, hears in ((ann, True), (bob, True), (deep, False)):
        seen = [(m["from"], m["text"], m.get("scope"), m.get("to")) for m in await _chats(ws)]
        assert seen == ([("bob", "psst", "private", "Ann")] if hears else [])

    await send(bob, {"t": "chat", "text": "anyone?", "to": "nobody"})
    notice = await _chats(bob)
    assert len(notice) == 1 and notice[0]["from"] == "" and "nobody" in notice[0]["text"]
    assert await _chats(ann, 0.2) == []


async def test_chat_has_its_own_rates(start_server: Started) -> None:
    server = await start_server(populate=False)
    ann, _, _ = await join(server, "ann")
    bob, _, _ = await join(server, "bob")
    for n in range(8):
        await send(ann, {"t": "chat", "text": f"line {n}"})
    got = await _chats(bob)
    assert [m["text"] for m in got] == [f"line {n}" for n in range(5)]  # the burst of 5
    errors = [m for m in await _chats(ann) if m["t"] == "error"]
    assert [(e["code"], e["fatal"]) for e in errors] == [("rate_limited", False)]

    await asyncio.sleep(3.2)  # three lines' worth of tokens come back
    for n in range(4):
        await send(ann, {"t": "chat", "text": f"global {n}", "scope": "global"})
    got = await _chats(bob)
    assert [m["text"] for m in got] == ["global 0", "global 1"]  # the global burst of 2
    # Commands are not held back by chat's rate.
    await send(ann, {"t": "ping", "id": 5})
    pong = await recv(ann)
    while pong["t"] != "pong":
        pong = await recv(ann)
    assert pong["id"] == 5


async def test_a_line_is_the_same_frame_for_everyone(start_server: Started) -> None:
    server = await start_server(populate=False)
    players = [await join(server, f"p{n}") for n in range(4)]
    await send(players[0][0], {"t": "chat", "text": "one frame"})
    frames = []
    for ws, _, _ in players:
        while True:
            data = await asyncio.wait_for(ws.recv(), 5)
            assert isinstance(data, bytes)
            if msgpack.unpackb(data, strict_map_key=False).get("t") == "chat":
                frames.append(data)
                break
    assert len(set(frames)) == 1
