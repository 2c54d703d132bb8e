"""The message rate (docs/protocol.md, "Rates"): 40 messages a second
(bursts of 40), pings and chat included, before and after ``hello``; the
first drop in each second is reported with one non-fatal ``rate_limited``;
more than 200 dropped within a second is a fatal ``flood`` and a close."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from protocol.limits import RATE_BURST, RATE_PER_S
from protocol.messages import ClientMessage, Command, CommandName, Ping
from tests.conformance.conftest import Server
from tests.conformance.players import Closed, Player

FLOOD = 1000
"""Messages a flooding test client sends at once: far over 40 + 200."""


async def _send_until_closed(player: Player, msgs: list[ClientMessage]) -> None:
    """Send ``msgs`` one after the other, stopping if the server closes the
    connection meanwhile (what it sent before is still read after)."""
    try:
        for msg in msgs:
            await player.send(msg)
    except Closed:
        pass


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
    await _send_until_closed(flood, [Command(seq=seq, c=CommandName.WAIT) for seq in range(FLOOD)])
    seen, code = await _read_to_the_end(flood)
    errors = [(m["code"], m["fatal"]) for m in seen if m["t"] == "error"]
    assert errors == [("rate_limited", False), ("flood", True)], errors
    assert code == 1008
    await good.pong(1)  # an honest player plays on
    await good.close()


async def test_a_burst_within_the_rate_is_not_limited(server: Server) -> None:
    player, _ = await server.join(server.name("burst"))
    burst = RATE_BURST - 2  # the hello took one token; keep one spare
    for n in range(burst):
        await player.send(Ping(id=n))
    answers = [await player.recv_until(lambda m: m["t"] in ("pong", "error")) for _ in range(burst)]
    assert [m.get("id") for m in answers] == list(range(burst)), answers
    await player.close()


async def test_pings_count_before_hello_too(server: Server) -> None:
    player = await server.connect()
    started = time.monotonic()
    await _send_until_closed(player, [Ping(id=n) for n in range(FLOOD)])
    seen, code = await _read_to_the_end(player)
    elapsed = time.monotonic() - started
    pongs = [m["id"] for m in seen if m["t"] == "pong"]
    errors = [(m["code"], m["fatal"]) for m in seen if m["t"] == "error"]
    # The bucket admits its burst, plus what refills while the pings arrive
    # (at most the time from the first send to the close): on a loaded
    # machine sending a thousand pings takes a good part of a second.
    refilled = int(RATE_PER_S * elapsed) + 1
    # The burst is answered first, in order; a ping a refilled token admits
    # comes after the ones dropped meanwhile (so, on a loaded machine, after
    # a gap in the ids), and no ping is answered twice or out of the order sent.
    assert pongs[:RATE_BURST] == list(range(RATE_BURST)), pongs
    assert pongs == sorted(set(pongs)), pongs
    assert RATE_BURST <= len(pongs) <= RATE_BURST + refilled, (len(pongs), elapsed)
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
    burst = RATE_BURST - 1  # the hello took a token
    assert pongs[:burst] == list(range(burst)) and len(pongs) < RATE_BURST + 20, pongs
    await player.pong(10_000)  # tokens came back: answered again
    await player.close()


async def test_commands_over_the_queue_are_refused_with_queue_full(server: Server) -> None:
    """docs/protocol.md, "The keys of a `cmd`": at most 8 commands wait per
    player; one arriving while 8 wait is refused with ``queue_full``; every
    command gets exactly one answer, its ``ack`` or a refusal."""
    player, _ = await server.join(server.name("queue"))
    reasons = player.welcome["reasons"]
    sent = [await player.command(CommandName.WAIT) for _ in range(12)]
    refused: dict[int, str] = {}
    ack = -1
    async with asyncio.timeout(10):
        while not all(seq <= ack or seq in refused for seq in sent):
            msg = await player.recv()
            if msg["t"] not in ("snap", "delta"):
                continue
            ack = msg.get("ack", ack)
            rej = msg.get("rej") or []
            for seq, code in zip(rej[::2], rej[1::2], strict=True):
                assert seq not in refused, f"command {seq} refused twice"
                refused[seq] = reasons[code]
    assert refused, "12 commands at once: some must be refused"
    assert set(refused.values()) == {"queue_full"}, refused
    assert sorted(refused) == sent[-len(refused) :], "the last ones are refused"
    assert len(sent) - len(refused) >= 8
    await player.close()
