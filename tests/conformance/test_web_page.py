"""The browser client on the game port (issue 47; README, "From a browser"):
``serve`` and every gateway answer ``GET /`` with the page under a strict
Content-Security-Policy, ``/lobby.json`` with the classes, and refuse a
browser's game connection from another origin (HTTP 403) while taking one
from their own."""

from __future__ import annotations

import asyncio
import json
import urllib.request

import msgpack  # type: ignore[import-untyped]
import pytest
import websockets
from websockets.exceptions import InvalidStatus
from websockets.typing import Origin

from tests.conformance.conftest import Server


async def get(url: str) -> tuple[int, dict[str, str], bytes]:
    def fetch() -> tuple[int, dict[str, str], bytes]:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.read()

    return await asyncio.to_thread(fetch)


def http_of(server: Server) -> str:
    return "http://" + server.url.split("://", 1)[1].rstrip("/")


async def test_the_page_and_the_lobby_are_served(server: Server) -> None:
    base = http_of(server)
    status, headers, body = await get(base + "/")
    assert status == 200 and headers["content-type"] == "text/html; charset=utf-8"
    assert b'src="app.js"' in body
    policy = headers["content-security-policy"]
    assert "script-src 'self';" in policy and "connect-src 'self' ws://" in policy
    status, headers, body = await get(base + "/lobby.json")
    lobby = json.loads(body)
    assert ["warrior", "Warrior"] in lobby["classes"]
    if server.kind == "serve":
        assert isinstance(lobby["players"], list)


async def test_a_browser_from_another_origin_is_refused(server: Server) -> None:
    host = server.url.split("://", 1)[1].rstrip("/")
    with pytest.raises(InvalidStatus) as refused:
        await websockets.connect(server.url, origin=Origin("http://evil.example"))
    assert refused.value.response.status_code == 403
    own = f"http://{host}"
    async with websockets.connect(server.url, origin=Origin(own), compression=None) as ws:
        await ws.send(msgpack.packb({"t": "ping", "id": 1}))
        assert msgpack.unpackb(await ws.recv())["t"] == "pong"
