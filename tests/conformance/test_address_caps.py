"""Per-address limits (docs/protocol.md, "Limits of a connection and of an
address"), at the defaults of ``underhall serve``: at most 32 connections
at once (the next refused at the handshake with HTTP 429 and a line of
text) and 30 new characters an hour (the next ``hello`` that would create
one gets ``limited``; resuming still works).

Loopback addresses are the operator's own, so these are tested from this
machine's other address (:func:`tests.conformance.fronts.outside_address`),
connecting to the server on 127.0.0.1.
"""

from __future__ import annotations

import pytest
from websockets.exceptions import InvalidStatus

from server.net.guard import NetLimits
from tests.conformance.conftest import Server
from tests.conformance.fronts import outside_address
from tests.conformance.players import Player

MAX_CONNS_PER_ADDR = NetLimits().max_conns_per_addr
NEW_CHARS_PER_HOUR = NetLimits().new_chars_per_hour


@pytest.fixture
def outside() -> str:
    """This machine's non-loopback address (skips when it has none)."""
    addr = outside_address()
    if addr is None:
        pytest.skip("this machine has no address but loopback ones")
    return addr


async def test_connections_per_address_are_capped(server: Server, outside: str) -> None:
    held: list[Player] = []
    try:
        for _ in range(MAX_CONNS_PER_ADDR):
            held.append(await server.connect(outside))
        with pytest.raises(InvalidStatus) as refused:
            await server.connect(outside)
        response = refused.value.response
        assert response.status_code == 429
        assert response.body.decode().strip(), "a line of text says why"
        other = await server.connect()  # another address is not held back
        await other.pong(1)
        await other.close()
    finally:
        for player in held:
            await player.close()


async def test_new_characters_per_address_are_capped(server: Server, outside: str) -> None:
    tokens: dict[str, str] = {}
    for _ in range(NEW_CHARS_PER_HOUR):
        name = server.name("Alt")
        player, answer = await server.hello(name, source=outside)
        assert answer["t"] == "welcome", answer
        tokens[name] = answer["token"]
        await player.close()
    player, error = await server.hello(server.name("OneTooMany"), source=outside)
    assert (error["t"], error["code"], error["fatal"]) == ("error", "limited", True), error
    assert await player.closed() == 1008
    name, token = next(iter(tokens.items()))
    player, answer = await server.hello(name, token, source=outside)  # resuming still works
    assert answer["t"] == "welcome" and answer["resumed"] is True, answer
    await player.close()
