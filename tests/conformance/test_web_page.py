"""The browser client on the game port (issue 47; README, "From a browser"):
``serve`` and every gateway answer ``GET /`` with the page under a strict
Content-Security-Policy, ``/lobby.json`` with the classes and who is playing
(a cluster's gateways list every worker's players), and refuse a browser's
game connection from another origin (HTTP 403) while taking one from their
own."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
import websockets
from websockets.exceptions import InvalidStatus
from websockets.typing import Origin

from protocol.messages import CommandName
from tests.conformance.conftest import Server
from tests.conformance.test_fog_and_stairs import take_the_stairs


async def get(url: str) -> tuple[int, dict[str, str], bytes]:
    def fetch() -> tuple[int, dict[str, str], bytes]:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.read()

    return await asyncio.to_thread(fetch)


def http_of(url: str) -> str:
    return "http://" + url.split("://", 1)[1].rstrip("/")


async def test_the_page_and_the_lobby_are_served(server: Server) -> None:
    base = http_of(server.url)
    status, headers, body = await get(base + "/")
    assert status == 200 and headers["content-type"] == "text/html; charset=utf-8"
    assert b'src="app.js"' in body
    policy = headers["content-security-policy"]
    assert "script-src 'self';" in policy and "connect-src 'self' ws://" in policy
    status, headers, body = await get(base + "/lobby.json")
    lobby = json.loads(body)
    assert ["warrior", "Warrior"] in lobby["classes"]
    assert isinstance(lobby["players"], list) and isinstance(lobby["online"], int)


async def test_the_lobby_lists_who_is_playing(server: Server) -> None:
    """Name, class, level, depth and turns of each player. On a cluster the
    second gateway lists a new mage on level 1 (worker ``wa``) and a
    character on level 2 (worker ``wb``), both of whom joined through the
    first gateway: every worker reports its players to every gateway."""
    mage = server.name("Lobby")
    player, _ = await server.join(mage, cls="mage")
    await player.command(CommandName.WAIT)
    await player.command(CommandName.WAIT)
    deep, token, record = server.front.planted("Lobbied")
    await server.join(deep, token)
    url = http_of(server.front.other_door) + "/lobby.json"

    def listed(lobby: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return {r["name"]: r for r in lobby["players"] if r["name"] in (mage, deep)}

    async with asyncio.timeout(20):  # a worker reports every 2 s, a lobby is kept 1 s
        while len(rows := listed(lobby := json.loads((await get(url))[2]))) < 2 or (
            rows[mage]["turns"] < 2
        ):
            await asyncio.sleep(0.25)
    assert rows[mage] == {"name": mage, "cls": "mage", "level": 1, "depth": 1, "turns": 2}
    assert rows[deep] == {
        "name": deep,
        "cls": record["cls"],
        "level": record["level"],
        "depth": 2,
        "turns": 0,
    }
    assert lobby["online"] >= 2


async def test_a_browser_from_another_origin_is_refused(server: Server) -> None:
    host = server.url.split("://", 1)[1].rstrip("/")
    with pytest.raises(InvalidStatus) as refused:
        await websockets.connect(server.url, origin=Origin("http://evil.example"))
    assert refused.value.response.status_code == 403
    own = f"http://{host}"
    async with websockets.connect(server.url, origin=Origin(own), compression=None) as ws:
        await ws.send(msgpack.packb({"t": "ping", "id": 1}))
        assert msgpack.unpackb(await ws.recv())["t"] == "pong"


async def test_the_lobby_follows_a_player_down_the_stairs(server: Server) -> None:
    """A player who takes the stairs is listed on its new depth with the
    turns of its whole session (on a cluster it went from worker ``wa`` to
    ``wb``, its count carried in the hand-off; the command it had queued was
    counted once)."""
    await take_the_stairs(server, "Lobbied2", waits=1)
    url = http_of(server.front.other_door) + "/lobby.json"

    async def row() -> dict[str, Any] | None:
        lobby = json.loads((await get(url))[2])
        return next((r for r in lobby["players"] if r["name"] == "Lobbied2"), None)

    async with asyncio.timeout(20):
        while (found := await row()) is None or found["depth"] != 2:
            await asyncio.sleep(0.25)
    assert (found["depth"], found["turns"]) == (2, 2)
