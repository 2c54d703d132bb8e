"""What players see of an operator (docs/operating.md, "Manage players",
"Stop: the drain"; docs/protocol.md, "`error` codes"): a kick (``kicked``,
then held out for a minute), a ban (``banned``, with the reason), a notice
(a ``chat`` from ``""``), and a drain (a notice with the time left, joins
refused with ``shutdown``, then ``shutdown`` and close code 1001); and a
server with no room (``server_full``)."""

from __future__ import annotations

import asyncio
import re

from tests.conformance.conftest import Server
from tests.conformance.players import Msg, Player


async def fatal(player: Player, code: str, close: int = 1008) -> Msg:
    """The next error is the fatal ``code``, then the server closes with ``close``."""
    error = await player.error()
    assert (error["code"], error["fatal"]) == (code, True), error
    assert error["msg"], error
    assert await player.closed() == close
    return error


async def refused(
    server: Server, name: str, token: str | None, code: str, close: int = 1008
) -> Msg:
    """Say hello as ``name``; it is refused with the fatal ``code``."""
    player, answer = await server.hello(name, token)
    assert answer["t"] == "error", answer
    assert (answer["code"], answer["fatal"]) == (code, True), answer
    assert await player.closed() == close
    return answer


async def test_a_kick_disconnects_and_holds_the_name_out(server: Server) -> None:
    name = server.name("Kicked")
    player, _ = await server.join(name, door=1)  # the operator's door is the other one
    other, _ = await server.join(server.name("Stays"))
    assert (await server.front.kick(name))["ok"]
    await fatal(player, "kicked")
    error = await refused(server, name.upper(), player.welcome["token"], "kicked")
    assert re.search(r"\b(59|60) s\b", error["msg"]), error  # "for a minute"
    await other.pong(1)  # nobody else is disturbed
    await other.close()


async def test_a_ban_disconnects_with_the_reason_and_refuses_the_name(server: Server) -> None:
    name = server.name("Banned")
    player, _ = await server.join(name, door=1)
    other, _ = await server.join(server.name("Behaves"))
    assert (await server.front.ban(name, "griefing"))["ok"]
    error = await fatal(player, "banned")
    assert error["msg"] == "banned: griefing", error
    answer = await refused(server, name, player.welcome["token"], "banned")
    assert answer["msg"] == f"{name!r} is banned: griefing", answer
    answer = await refused(server, name.lower(), player.welcome["token"], "banned")
    assert answer["msg"] == f"{name.lower()!r} is banned: griefing", answer
    await other.pong(1)
    await other.close()


async def test_a_name_banned_while_away_is_refused(server: Server) -> None:
    name = server.name("Away")
    player, _ = await server.join(name)
    await player.close()
    await asyncio.sleep(0.3)
    assert (await server.front.ban(name, "cheating"))["ok"]
    answer = await refused(server, name, player.welcome["token"], "banned")
    assert answer["msg"] == f"{name!r} is banned: cheating", answer
    never = server.name("Never")  # a name nobody has played yet
    assert (await server.front.ban(never, ""))["ok"]
    answer = await refused(server, never, None, "banned")
    assert answer["msg"] == f"{never!r} is banned", answer


async def test_a_notice_reaches_every_player(server: Server) -> None:
    players = [(await server.join(server.name("Hears"), door=door))[0] for door in (0, 1)]
    deep_name, token, _ = server.front.planted("Notice")
    deep, snap = await server.join(deep_name, token)
    assert snap["depth"] == 2  # on another level (and, in a cluster, worker)
    players.append(deep)
    assert (await server.front.notice("Reboot at noon"))["ok"]
    for player in players:
        line = await player.recv_until(lambda m: m["t"] == "chat")
        assert (line["from"], line["text"]) == ("", "Reboot at noon"), line
        assert "scope" not in line and "to" not in line, line
        await player.close()


async def test_a_drain_warns_refuses_joins_then_closes_with_shutdown(server: Server) -> None:
    async with server.spare() as spare:
        player, _ = await spare.join(spare.name("Drained"))
        answer = await spare.front.drain(2.0)
        assert answer["ok"] and answer["grace_s"] == 2.0, answer
        warning = await player.recv_until(lambda m: m["t"] == "chat")
        assert warning["from"] == "" and "stops in 2 s" in warning["text"], warning
        await refused(spare, spare.name("Late"), None, "shutdown", close=1001)
        await player.pong(1)  # play goes on during the grace period
        error = await fatal(player, "shutdown", close=1001)
        assert error["msg"]


async def test_a_full_server_refuses_with_server_full(server: Server) -> None:
    async with server.spare(max_players=1) as spare:
        first, _ = await spare.join(spare.name("First"))
        await refused(spare, spare.name("Second"), None, "server_full")
        await first.close()
