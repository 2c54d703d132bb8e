"""The message rate (docs/protocol.md, "Rates"): 40 messages a second
(bursts of 40), pings and chat included, before and after ``hello``; the
first drop in each second is reported with one non-fatal ``rate_limited``;
more than 200 dropped within a second is a fatal ``flood`` and a close."""

from __future__ import annotations

from typing import Any

from protocol.limits import RATE_BURST
from protocol.messages import Command, CommandName, Ping
from tests.conformance.conftest import Server
from tests.conformance.players import Closed, Player

FLOOD = 1000
"""Messages a flooding test client sends at once: far over 40 + 200."""


async def _read_to_the_end(player: Player) -> tuple[list[dict[str, Any]], int | None]:
    """Every message until the server closes; those and the close code."""
    seen: list[dict[str, Any]] = []
    try:
        while True:
            seen.append(await player.recv())
    except Closed as exc:
        return seen, exc.code


async def test_over_the_rate_one_rate_limited_then_flood_and_close(server: Server) -> None:
    flood, _ = await server.join(server.name("flood"))
    good, _ = await server.join(server.name("good"))
    for seq in range(FLOOD):
        await flood.send(Command(seq=seq, c=CommandName.WAIT))
    seen, code = await _read_to_the_end(flood)
    errors = [(m["code"], m["fatal"]) for m in seen if m["t"] == "error"]
    assert errors == [("rate_limited", False), ("flood", True)], errors
    assert code == 1008
    await good.pong(1)  # an honest player plays on
    await good.close()


async def test_a_burst_within_the_rate_is_not_limited(server: Server) -> None:
    player, _ = await server.join(server.name("burst"))
    for n in range(RATE_BURST - 2):
        await player.send(Ping(id=n))
    pongs = [await player.recv_until(lambda m: m["t"] in ("pong", "error")) for _ in range(38)]
    assert [m.get("id") for m in pongs] == list(range(RATE_BURST - 2)), pongs
    await player.close()


async def test_pings_count_before_hello_too(server: Server) -> None:
    player = await server.connect()
    for n in range(FLOOD):
        await player.send(Ping(id=n))
    seen, code = await _read_to_the_end(player)
    pongs = [m["id"] for m in seen if m["t"] == "pong"]
    errors = [(m["code"], m["fatal"]) for m in seen if m["t"] == "error"]
    assert pongs == list(range(len(pongs))) and RATE_BURST <= len(pongs) < RATE_BURST + 10
    assert errors == [("rate_limited", False), ("flood", True)], errors
    assert code == 1008


async def test_one_rate_limited_per_second_of_drops(server: Server) -> None:
    """Drops below the flood line: one report per second, the session goes on."""
    player, _ = await server.join(server.name("steady"))
    for n in range(RATE_BURST + 20):  # 20 dropped in the first second
        await player.send(Ping(id=n))
    seen = await player.quiet(1.5)
    errors = [(m["code"], m["fatal"]) for m in seen if m["t"] == "error"]
    assert errors == [("rate_limited", False)], errors
    pongs = [m["id"] for m in seen if m["t"] == "pong"]
    assert pongs[:RATE_BURST] == list(range(RATE_BURST))
    await player.pong(10_000)  # tokens came back: answered again
    await player.close()
