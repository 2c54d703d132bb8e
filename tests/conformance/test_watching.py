"""Spectators (docs/protocol.md, "Watching a player"; issue 45, items 1
and 5): a spectator's frames are the watched player's, byte for byte, from
the snapshot it starts at; it can send no command and sees nothing the
player does not; it chats with the player in the watch scope; the player
is told how many watch, and may refuse them; a spectator counts against its
address's connection cap; the player's leaving closes it. Against ``serve``
and a cluster, where a spectator may come through either gateway.
"""

from __future__ import annotations

import asyncio

import pytest
from websockets.exceptions import InvalidStatus

from protocol.messages import Command, CommandName, Hello, Look, Spectators
from protocol.version import PROTOCOL_VERSION
from tests.conformance.conftest import Server
from tests.conformance.fronts import MAX_CONNS_PER_ADDR, outside_address
from tests.conformance.players import Closed, Msg, Player, connect, own_cell

STEPS = ((1, 0), (-1, 0), (0, 1), (0, -1))
FLOOD = 1000
"""Messages a flooding spectator sends at once: far over 40 + 200."""


async def watch(
    server: Server, name: str, watched: str, door: int = 0, source: str | None = None
) -> tuple[Player, Msg]:
    """Connect (through door ``door``) and ask to watch ``watched`` as
    ``name``; the spectator and the first answer."""
    url = server.front.other_door if door else server.url
    spectator = await connect(url, source or server.source, server.opened)
    await spectator.send(Hello(v=PROTOCOL_VERSION, name=name, watch=watched))
    return spectator, await spectator.recv()


def frames(player: Player) -> list[bytes]:
    """The ``snap`` and delta frames ``player`` received, as bytes."""
    return [
        raw
        for raw, msg in zip(player.raw, player.seen, strict=True)
        if msg["t"] in ("snap", "delta")
    ]


async def walk(player: Player, steps: int) -> None:
    """Take ``steps`` steps to and fro (refusals are fine: each is a frame)."""
    for n in range(steps):
        seq = await player.command(CommandName.MOVE, STEPS[n % len(STEPS)])
        await player.acked(seq)


async def watchers(player: Player, n: int) -> Msg:
    """The next ``watchers`` message that says ``n``."""
    return await player.recv_until(lambda m: m["t"] == "watchers" and m["n"] == n)


@pytest.mark.parametrize("door", [0, 1], ids=["same-door", "other-door"])
async def test_a_spectator_gets_the_players_frames_byte_for_byte(server: Server, door: int) -> None:
    ann_name = server.name("Ann")
    ann, _ = await server.join(ann_name)
    await walk(ann, 3)
    bob, welcome = await watch(server, server.name("bob"), ann_name.upper(), door)
    assert welcome["t"] == "welcome", welcome
    assert (welcome["id"], welcome["name"], welcome["watch"]) == (
        ann.welcome["id"],
        ann_name,
        ann_name,
    )
    assert (welcome["token"], welcome["resumed"]) == ("", False)
    assert welcome["kinds"] == ann.welcome["kinds"] and welcome["items"] == ann.welcome["items"]
    first = await bob.recv()
    assert first["t"] == "snap", f"a spectator starts at a snapshot, not a {first['t']}"
    await watchers(ann, 1)
    await walk(ann, 12)
    await asyncio.gather(ann.quiet(0.8), bob.quiet(0.8))
    theirs, its = frames(ann), frames(bob)
    assert its[0] in theirs, "the spectator's snapshot is one the player was sent"
    start = theirs.index(its[0])
    assert len(its) >= 12, len(its)
    both = min(len(its), len(theirs) - start)
    assert its[:both] == theirs[start : start + both]
    # The last frame may still be on its way to either one, through another gateway.
    assert abs(len(theirs) - start - len(its)) <= 1
    # Besides the frames, the spectator got nothing but its welcome.
    assert [m["t"] for m in bob.seen if m["t"] not in ("snap", "delta")] == ["welcome"]


@pytest.mark.parametrize("door", [0, 1], ids=["same-door", "other-door"])
async def test_a_spectator_follows_the_player_down_the_stairs(server: Server, door: int) -> None:
    """In a cluster, levels 1 and 2 are two workers': the player's frames
    come from the second after the stairs, and reach the spectator on
    either gateway from a snapshot on."""
    name, token, _ = server.front.planted(("Followed", "Followed2")[door])
    ann, snap = await server.join(name, token)
    assert snap["depth"] == 1
    bob, welcome = await watch(server, server.name("bob"), name, door)
    assert welcome["t"] == "welcome", welcome
    await bob.recv_until(lambda m: m["t"] == "snap" and m["depth"] == 1)
    await ann.command(CommandName.DOWN)
    await ann.recv_until(lambda m: m["t"] == "snap" and m["depth"] == 2)
    below = await bob.recv_until(lambda m: m["t"] == "snap" and m["depth"] == 2)
    for _ in range(6):
        seq = await ann.command(CommandName.WAIT)
        await ann.acked(seq)
    await asyncio.gather(ann.quiet(0.8), bob.quiet(0.8))
    theirs, its = frames(ann), frames(bob)
    start = its.index(bob.raw[bob.seen.index(below)])
    assert its[start] in theirs, "the spectator's snapshot below is one the player was sent"
    mine = theirs.index(its[start])
    # Both listened for the same 0.8 s while frames kept coming (monsters
    # fight below): a frame in flight as the window closed may have reached
    # one and not yet the other, through another gateway. What both got is
    # the same, frame for frame.
    both = min(len(its) - start, len(theirs) - mine)
    assert its[start : start + both] == theirs[mine : mine + both]
    assert abs((len(its) - start) - (len(theirs) - mine)) <= 1 and both >= 6


async def test_a_spectator_sends_no_command_and_sees_nothing_more(server: Server) -> None:
    ann_name = server.name("Ann")
    ann, snap = await server.join(ann_name)
    bob, welcome = await watch(server, server.name("bob"), ann_name)
    assert welcome["t"] == "welcome"
    await bob.recv_until(lambda m: m["t"] == "snap")
    neighbour, _ = await server.join(server.name("Neighbour"))  # on ann's level
    await bob.send(Hello(v=PROTOCOL_VERSION, name="again"))
    await bob.command(CommandName.MOVE, (1, 0))
    await bob.send(Look(id=ann.welcome["id"]))
    await bob.say("to everyone", scope="global")
    await bob.say("psst", to=ann_name)
    errors = [await bob.error() for _ in range(5)]
    assert [(e["code"], e["fatal"]) for e in errors] == [
        ("not_allowed", False),
        ("spectator", False),
        ("spectator", False),
        ("spectator", False),
        ("spectator", False),
    ], errors
    await neighbour.say("on the level")
    await bob.pong(7)  # still connected
    await ann.quiet(0.8)
    # ann sent no command: none of its frames acknowledges one (the
    # spectator's move never reached its character)
    assert all(m.get("ack", -1) == -1 for m in ann.seen if m["t"] in ("snap", "delta"))
    assert own_cell(snap) == own_cell(
        next(m for m in reversed(ann.seen) if m["t"] == "snap" or "me" in m and "x" in m["me"])
    )
    lines = [m for m in ann.seen if m["t"] == "chat"]
    assert [(m["from"], m["text"]) for m in lines] == [(neighbour.welcome["name"], "on the level")]
    assert [m for m in bob.seen if m["t"] == "chat"] == []  # nor the level's chat
    assert not [m for m in ann.seen if m["t"] == "info"]


async def test_the_player_and_its_spectators_share_the_watch_scope(server: Server) -> None:
    ann_name, bob_name, cid_name = server.name("Ann"), server.name("bob"), server.name("cid")
    ann, _ = await server.join(ann_name)
    other, _ = await server.join(server.name("Other"))  # on the level, not watching
    bob, _ = await watch(server, bob_name, ann_name)
    cid, _ = await watch(server, cid_name, ann_name, door=1)
    await watchers(ann, 2)
    await bob.say("nice move")
    line = (bob_name, "nice move", "watch", ann_name)
    for who in (ann, bob, cid):
        got = await who.recv_until(lambda m: m["t"] == "chat")
        assert (got["from"], got["text"], got["scope"], got["to"]) == line
    await ann.say("thanks", scope="watch")
    line = (ann_name, "thanks", "watch", ann_name)
    for who in (ann, bob, cid):
        got = await who.recv_until(lambda m: m["t"] == "chat")
        assert (got["from"], got["text"], got["scope"], got["to"]) == line
    assert [m for m in await other.quiet(0.6) if m["t"] == "chat"] == []
    await cid.close()
    await watchers(ann, 1)


async def test_a_player_may_refuse_to_be_watched(server: Server) -> None:
    ann_name = server.name("Ann")
    ann, _ = await server.join(ann_name)
    bob, _ = await watch(server, server.name("bob"), ann_name, door=1)
    await watchers(ann, 1)
    await ann.send(Spectators(allow=False))
    error = await bob.error()
    assert (error["code"], error["fatal"]) == ("not_watchable", True), error
    assert await bob.closed() == 1008
    await watchers(ann, 0)
    for door in (0, 1):  # through the player's gateway and through the other
        cid, refused = await watch(server, server.name("cid"), ann_name, door)
        assert (refused["t"], refused["code"], refused["fatal"]) == ("error", "not_watchable", True)
        assert await cid.closed() == 1008
    await ann.send(Spectators(allow=True))
    await watchers(ann, 0)
    _dan, welcome = await watch(server, server.name("dan"), ann_name)
    assert welcome["t"] == "welcome", welcome
    await watchers(ann, 1)


async def test_watching_nobody_or_oneself_is_refused(server: Server) -> None:
    spectator, refused = await watch(server, server.name("bob"), server.name("nobody"))
    assert (refused["t"], refused["code"], refused["fatal"]) == ("error", "not_playing", True)
    assert await spectator.closed() == 1008
    ann_name = server.name("Ann")
    await server.join(ann_name)
    spectator, refused = await watch(server, ann_name.lower(), ann_name)
    assert (refused["t"], refused["code"]) == ("error", "not_playing"), refused


async def test_the_players_leaving_closes_its_spectators(server: Server) -> None:
    ann_name = server.name("Ann")
    ann, _ = await server.join(ann_name)
    bob, _ = await watch(server, server.name("bob"), ann_name, door=1)
    await bob.recv_until(lambda m: m["t"] == "snap")
    await ann.close()
    error = await bob.error()
    assert (error["code"], error["fatal"]) == ("gone", True), error
    assert await bob.closed() == 1008


async def test_a_spectator_counts_against_its_addresss_connections(server: Server) -> None:
    outside = outside_address()
    if outside is None:
        pytest.skip("this machine has no address but loopback ones")
    ann_name = server.name("Ann")
    await server.join(ann_name)
    held = [await server.connect(outside) for _ in range(MAX_CONNS_PER_ADDR - 1)]
    try:
        spectator, welcome = await watch(server, server.name("bob"), ann_name, source=outside)
        held.append(spectator)
        assert welcome["t"] == "welcome", welcome
        with pytest.raises(InvalidStatus) as refused:
            await server.connect(outside)
        assert refused.value.response.status_code == 429
        await spectator.close()
        await asyncio.sleep(0.2)
        held.append(await server.connect(outside))  # its place is free again
    finally:
        for player in held:
            await player.close()


async def test_a_flooding_spectator_is_closed_and_the_player_plays_on(server: Server) -> None:
    """A spectator's messages count against the message rate as a player's
    (docs/protocol.md, "Rates"): its game messages are refused one by one
    (``spectator``) while within the rate, then dropped, then it is closed
    for flooding; the player it watched is told, and plays on."""
    ann_name = server.name("Ann")
    ann, _ = await server.join(ann_name)
    bob, _ = await watch(server, server.name("bob"), ann_name)
    await watchers(ann, 1)
    try:
        for seq in range(FLOOD):
            await bob.send(Command(seq=seq, c=CommandName.WAIT))
    except Closed:
        pass
    seen: list[Msg] = []
    with pytest.raises(Closed) as closed:
        while True:
            seen.append(await bob.recv())
    assert closed.value.code == 1008
    codes = [m["code"] for m in seen if m["t"] == "error"]
    # Refused one by one within the rate; the first drop reported; a sender
    # slowed by a loaded machine may get tokens back meanwhile (more
    # refusals), until more than 200 are dropped within a second.
    assert codes[-1] == "flood", codes
    first_drop = codes.index("rate_limited")
    assert first_drop >= 1 and set(codes[:first_drop]) == {"spectator"}, codes
    assert set(codes[first_drop:-1]) <= {"spectator", "rate_limited"}, codes
    await watchers(ann, 0)
    seq = await ann.command(CommandName.WAIT)
    assert (await ann.acked(seq))["ack"] == seq


async def test_a_stopping_server_tells_its_spectators(server: Server) -> None:
    """A drain refuses new spectators (``shutdown``) and, at its end, tells
    those watching as it tells the players (``shutdown``, close 1001)."""
    async with server.spare() as spare:
        ann_name = spare.name("Ann")
        ann, _ = await spare.join(ann_name)
        bob, _ = await watch(spare, spare.name("bob"), ann_name)
        await bob.recv_until(lambda m: m["t"] == "snap")
        answer = await spare.front.drain(1.0)
        assert answer["ok"], answer
        _late, refused = await watch(spare, spare.name("late"), ann_name)
        assert (refused["t"], refused["code"], refused["fatal"]) == ("error", "shutdown", True)
        for who in (bob, ann):
            error = await who.error()
            assert (error["code"], error["fatal"]) == ("shutdown", True), error
            assert await who.closed() == 1001
