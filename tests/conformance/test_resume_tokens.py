"""Characters and their tokens (docs/protocol.md, `hello`, `welcome`,
"`error` codes", "Limits"): a token resumes the character where it was, a
second connection replaces the first, a missing or wrong token is
``name_taken`` (the same words whether the owner plays or not), names are
one character whatever their case, and the per-address limits on new
characters and on failed tokens."""

from __future__ import annotations

import asyncio

from protocol.messages import CommandName
from server.net.guard import NetLimits
from tests.conformance.conftest import Server
from tests.conformance.fronts import next_address
from tests.conformance.players import Msg, Player, own_cell

FAILURES_PER_NAME = NetLimits().token_failures_per_name
FAILURES_PER_ADDR = NetLimits().token_failures_per_addr
STEPS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1))


async def refusal(server: Server, name: str, token: str | None, source: str | None = None) -> Msg:
    """Say hello; the fatal error that answers it, after which the server
    closes with 1008."""
    player, answer = await server.hello(name, token, source=source)
    assert answer["t"] == "error" and answer["fatal"] is True, answer
    assert await player.closed() == 1008
    return answer


async def walk_one_step(player: Player, snap: Msg) -> tuple[int, int]:
    """Step to a free neighbouring cell (trying each direction until one is
    not refused); the cell the player stands on then."""
    cell = own_cell(snap)
    for d in STEPS:
        seq = await player.command(CommandName.MOVE, d)
        frame = await player.acked(seq)
        if "me" in frame and "x" in frame["me"]:
            cell = own_cell(frame)
        if not frame.get("rej"):
            return cell
    raise AssertionError("every step was refused")


async def leave(player: Player) -> None:
    """Close and give the server a moment to seat the character out."""
    await player.close()
    await asyncio.sleep(0.3)


async def test_a_token_resumes_the_character_where_it_was(server: Server) -> None:
    name = server.name("Resumer")
    first, snap = await server.join(name)
    welcome = first.welcome
    assert welcome["resumed"] is False and welcome["name"] == name and welcome["token"]
    cell = await walk_one_step(first, snap)
    await leave(first)
    again, snap2 = await server.join(name.lower(), welcome["token"], door=1)
    back = again.welcome
    assert back["resumed"] is True and back["name"] == name
    assert own_cell(snap2) == cell and snap2["depth"] == snap["depth"]
    assert back["id"] in {a[0] for a in snap2["actors"]}
    await again.close()


async def test_a_resumed_character_is_the_welcomes_actor_and_acks_afresh(
    server: Server,
) -> None:
    """docs/protocol.md (`welcome`): a resumed character's ``welcome.id`` is
    its id for the session (the actor the snapshot shows at its place), and
    "its `ack` starts again at -1". ``serve`` gives it a new id and a cluster
    keeps one per character: both documented, each checked below."""
    name = server.name("Again")
    first, _ = await server.join(name)
    seq = await first.command(CommandName.WAIT)
    assert (await first.acked(seq))["ack"] == seq
    await leave(first)
    again, snap = await server.join(name, first.welcome["token"])
    assert again.welcome["resumed"] is True
    assert snap["ack"] == -1
    me = snap["me"]
    here = [a for a in snap["actors"] if a[0] == again.welcome["id"]]
    assert len(here) == 1 and (here[0][3], here[0][4]) == (me["x"], me["y"]), (here, me)
    if server.front.kind == "serve":  # a new actor in the one world
        assert again.welcome["id"] != first.welcome["id"]
    else:  # docs/cluster.md: "each character also keeps one actor_id for life"
        assert again.welcome["id"] == first.welcome["id"]
    await again.close()


async def test_a_second_connection_replaces_the_first(server: Server) -> None:
    name = server.name("Twice")
    first, snap = await server.join(name)
    second, snap2 = await server.join(name, first.welcome["token"])
    assert second.welcome["resumed"] is True
    assert own_cell(snap2) == own_cell(snap)
    error = await first.error()
    assert (error["code"], error["fatal"]) == ("replaced", True), error
    assert await first.closed() == 1008
    await second.pong(1)  # the new connection plays on
    seq = await second.command(CommandName.WAIT)
    await second.acked(seq)
    await second.close()


async def test_a_connection_through_the_other_door_replaces_the_first(server: Server) -> None:
    name = server.name("Elsewhere")
    first, snap = await server.join(name)
    second, snap2 = await server.join(name, first.welcome["token"], door=1)
    assert second.welcome["resumed"] is True
    assert own_cell(snap2) == own_cell(snap)
    error = await first.error()
    assert (error["code"], error["fatal"]) == ("replaced", True), error
    assert await first.closed() == 1008
    seq = await second.command(CommandName.WAIT)
    await second.acked(seq)
    await second.close()


async def test_a_missing_or_wrong_token_is_name_taken_either_way(server: Server) -> None:
    name = server.name("Owner")
    owner, _ = await server.join(name)
    online = [await refusal(server, name, None), await refusal(server, name, "wrong")]
    await leave(owner)
    offline = [await refusal(server, name, None), await refusal(server, name, "wrong")]
    assert [a["code"] for a in online + offline] == ["name_taken"] * 4
    assert [a["msg"] for a in online] == [a["msg"] for a in offline]
    assert (await refusal(server, name.upper(), "wrong"))["code"] == "name_taken"
    back, _ = await server.join(name.upper(), owner.welcome["token"])
    assert back.welcome["resumed"] and back.welcome["name"] == name
    await back.close()


async def test_failed_tokens_are_throttled_per_name(server: Server) -> None:
    name = server.name("Victim")
    owner, _ = await server.join(name)
    token = owner.welcome["token"]
    await leave(owner)
    guesser = next_address()
    codes = [
        (await refusal(server, name, f"guess{n}", guesser))["code"]
        for n in range(FAILURES_PER_NAME + 1)
    ]
    assert codes == ["name_taken"] * FAILURES_PER_NAME + ["limited"], codes
    # From the guesser's address, the right token waits too: guessing learns nothing.
    assert (await refusal(server, name, token, guesser))["code"] == "limited"


async def test_the_owner_gets_in_while_a_guesser_is_throttled(server: Server) -> None:
    """Issue 43: the owner must never be refused. Another address guessed
    this name's token until it was throttled; the owner, with the right
    token, gets in at once."""
    name = server.name("Owned")
    owner, _ = await server.join(name)
    token = owner.welcome["token"]
    await leave(owner)
    guesser = next_address()
    for n in range(FAILURES_PER_NAME + 2):
        await refusal(server, name, f"guess{n}", guesser)
    back, answer = await server.hello(name, token)
    assert answer["t"] == "welcome", answer
    assert answer["resumed"] is True
    await back.close()


async def test_failed_tokens_are_throttled_per_address(server: Server) -> None:
    guesser = next_address()
    names = [server.name("Target") for _ in range(FAILURES_PER_ADDR // FAILURES_PER_NAME + 1)]
    for name in names:
        player, _ = await server.join(name)
        await player.close()
    codes: list[str] = []
    for n in range(FAILURES_PER_ADDR + 1):  # spread below each name's own limit
        name = names[n % len(names)]
        codes.append((await refusal(server, name, f"guess{n}", guesser))["code"])
    assert codes == ["name_taken"] * FAILURES_PER_ADDR + ["limited"], codes
    # The address is held out, for new characters too.
    assert (await refusal(server, server.name("Newcomer"), None, guesser))["code"] == "limited"
