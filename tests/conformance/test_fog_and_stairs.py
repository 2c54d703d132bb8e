"""What a player is sent of the world (docs/protocol.md, `snap`, `delta`):
nothing of a player out of sight (fog of war), a player who comes into
sight; and a change of level by the stairs, seen as one ordinary level
change with the same actor id (in a cluster, a hand-off between the workers
holding levels 1 and 2: docs/cluster.md, "The hand-off on the stairs")."""

from __future__ import annotations

import asyncio

from protocol.messages import CommandName, unpack_ids, unpack_moves, unpack_steps
from tests.conformance.conftest import Server
from tests.conformance.players import Msg, Player, own_cell

STAIRS_DOWN = 12
"""The terrain code of a down staircase (docs/protocol.md, `welcome` `terrain`)."""

SIGHT_RADIUS = 8
"""Cells a player sees at most, in each axis (docs/protocol.md, `snap` `fov`)."""

STEPS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1))


def actors_sent(msg: Msg) -> set[int]:
    """The ids of the actors a ``snap`` or delta tells of: records, moves,
    steps, returns, updates and removals."""
    ids = {int(a[0]) for key in ("actors", "add", "upd") for a in msg.get(key) or ()}
    ids.update(aid for key in ("mv", "back") for aid, _, _ in unpack_moves(msg.get(key)))
    ids.update(aid for aid, _, _ in unpack_steps(msg.get("st")))
    ids.update(unpack_ids(msg.get("rm")))
    return ids


def tells_of(player: Player, who: Player) -> list[Msg]:
    """The frames ``player`` received that tell of ``who``: its actor id, or
    its name anywhere but in the server-wide ``join``/``leave`` events."""
    aid, name = who.welcome["id"], who.welcome["name"]
    out = []
    for msg in player.seen:
        if msg["t"] not in ("snap", "delta"):
            continue
        events = [e for e in msg.get("ev") or () if e[0] not in ("join", "leave")]
        rest = {k: v for k, v in msg.items() if k != "ev"}
        if aid in actors_sent(msg) or name in repr((rest, events)):
            out.append(msg)
    return out


async def wander(player: Player, steps: int) -> None:
    """Take ``steps`` steps (each tried in turn until one is not refused)."""
    for n in range(steps):
        seq = await player.command(CommandName.MOVE, STEPS[n % len(STEPS)])
        await player.acked(seq)


async def test_a_player_out_of_sight_is_never_sent(server: Server) -> None:
    near, snap = await server.join(server.name("Watcher"))
    far_name, token, _record = server.front.planted("Faraway")
    far, far_snap = await server.join(far_name, token)
    (x, y), (fx, fy) = own_cell(snap), own_cell(far_snap)
    assert (snap["depth"], far_snap["depth"]) == (1, 1)
    assert max(abs(x - fx), abs(y - fy)) > 2 * SIGHT_RADIUS + 2, "the test needs them far apart"
    await asyncio.gather(wander(far, 6), wander(near, 6))
    await asyncio.gather(near.quiet(0.5), far.quiet(0.5))
    assert tells_of(near, far) == [], "the watcher was told of a player out of sight"
    assert tells_of(far, near) == []

    # A player who arrives beside the watcher is sent (so the check above can fail).
    close, _ = await server.join(server.name("Arrives"))
    await near.recv_until(lambda m: bool(tells_of(near, close)))
    await asyncio.gather(near.quiet(0.5), far.quiet(0.5))
    assert tells_of(far, close) == []
    for player in (near, far, close):
        await player.close()


def joins_and_leaves(player: Player) -> list[list[str]]:
    """The ``join`` and ``leave`` events ``player`` received, in order."""
    return [
        list(e)
        for m in player.seen
        if m["t"] in ("snap", "delta")
        for e in m.get("ev") or ()
        if e[0] in ("join", "leave")
    ]


async def test_joins_and_leaves_reach_every_other_player(server: Server) -> None:
    """docs/protocol.md, "Events": ``join``/``leave``, "a player entered or
    left the server (sent to every other player)": on any level."""
    here, _ = await server.join(server.name("Here"))
    deep_name, token, _ = server.front.planted("Below")
    below, snap = await server.join(deep_name, token)
    assert snap["depth"] == 2
    comer_name = server.name("Comer")
    comer, _ = await server.join(comer_name, door=1)
    await comer.quiet(0.3)
    await comer.close()
    await asyncio.gather(here.quiet(1.0), below.quiet(1.0))
    expected = [["join", comer_name], ["leave", comer_name]]
    assert joins_and_leaves(here)[-2:] == expected, joins_and_leaves(here)
    assert joins_and_leaves(below)[-2:] == expected, joins_and_leaves(below)
    await here.close()
    await below.close()


async def take_the_stairs(server: Server, planted: str, waits: int = 0) -> tuple[Player, Msg]:
    """Join as ``planted`` (a character saved on level 1's down staircase),
    send ``down`` and then ``waits`` waits at once, and read up to the
    snapshot of level 2; the player and that snapshot.

    Raises:
        AssertionError: The player does not stand on the staircase, or
            ``down`` was refused (the reason is in the message).
    """
    name, token, record = server.front.planted(planted)
    player, snap = await server.join(name, token)
    x, y = own_cell(snap)
    assert (snap["depth"], record["depth"]) == (1, 1)
    assert snap["map"][y * snap["w"] + x] == STAIRS_DOWN, f"{name} is not on the stairs"
    down = await player.command(CommandName.DOWN)
    for _ in range(waits):
        await player.command(CommandName.WAIT)
    reasons = player.welcome["reasons"]

    def arrived_or_refused(msg: Msg) -> bool:
        rej = msg.get("rej") or []
        refused = [reasons[code] for seq, code in zip(rej[::2], rej[1::2]) if seq == down]
        assert not refused, f"down was refused: {refused}"
        return bool(msg["t"] == "snap" and msg["depth"] == 2)

    arrived = await player.recv_until(arrived_or_refused)
    return player, arrived


async def test_the_stairs_change_the_level_with_the_same_actor(server: Server) -> None:
    player, arrived = await take_the_stairs(server, "Stairs")
    mine = [a for a in arrived["actors"] if a[7] & 8]
    assert [a[0] for a in mine] == [player.welcome["id"]], arrived["actors"]
    assert arrived["me"]["depth"] == 2 and own_cell(arrived) == (mine[0][3], mine[0][4])
    seq = await player.command(CommandName.WAIT)  # and plays on there
    assert (await player.acked(seq))["ack"] == seq
    assert [m for m in player.seen if m["t"] == "error"] == []


async def test_commands_sent_while_changing_level_are_carried_out(server: Server) -> None:
    """Commands queue (docs/protocol.md, "The keys of a `cmd`"): the ones
    sent right after ``down`` are carried out on the new level, each
    answered (``ack``), none lost."""
    player, _ = await take_the_stairs(server, "Stairs2", waits=3)
    last = await player.acked(3)
    assert last["ack"] == 3
    assert [m["rej"] for m in player.seen if m.get("rej")] == []


async def test_the_snapshot_of_the_new_level_acknowledges_the_stairs(server: Server) -> None:
    """A ``snap``'s ``ack`` is "the `seq` of your last command the world has
    carried out or rejected (-1 if none this session)": after the stairs,
    at least the ``down`` (seq 0)."""
    _, arrived = await take_the_stairs(server, "Stairs3")
    assert arrived["ack"] >= 0, arrived["ack"]


async def test_the_tick_never_goes_back_across_the_stairs(server: Server) -> None:
    """The ``tick`` of a ``snap`` or delta "counts the ticks the world has
    completed" (docs/protocol.md, "Transport"): it never goes back, also
    when the level changes (in a cluster, when another worker takes over)."""
    player, _ = await take_the_stairs(server, "Stairs4")
    await player.quiet(0.5)
    ticks = [m["tick"] for m in player.seen if m["t"] in ("snap", "delta") and "tick" in m]
    assert ticks == sorted(ticks), ticks
