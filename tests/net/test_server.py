"""The real server over real websockets on 127.0.0.1: bad input is answered
with a clear error and disturbs nobody; reconnects resume; a restart keeps
characters."""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
from websockets.exceptions import ConnectionClosed

from protocol.codec import encode_server
from protocol.messages import Delta
from protocol.version import PROTOCOL_VERSION
from server.net import front as net_front
from server.net import ratelimit
from server.net import server as net_server
from tests.net.conftest import (
    Started,
    connect,
    join,
    recv,
    recv_until,
    scrape,
    send,
    stop,
)


async def _still_served(ws: object) -> None:
    """The connection still answers a ping."""
    await send(ws, {"t": "ping", "id": 77})  # type: ignore[arg-type]
    pong = await recv_until(ws, lambda m: m["t"] == "pong")  # type: ignore[arg-type]
    assert pong["id"] == 77


def _answers(seq: int, msg: dict[str, Any]) -> bool:
    """``msg`` acknowledges or rejects command ``seq``."""
    return bool(msg.get("ack") == seq or msg["t"] == "reject")


async def test_join_move_and_ack(start_server: Started) -> None:
    server = await start_server(populate=False)
    ws, welcome, snap = await join(server, "ann")
    assert (
        welcome["v"] == PROTOCOL_VERSION
        and welcome["token"]
        and snap["w"] * snap["h"] == len(snap["map"])
    )
    me = snap["me"]
    for seq, d in enumerate([[1, 0], [-1, 0], [0, 1], [0, -1], [1, 1], [-1, -1]]):
        await send(ws, {"t": "cmd", "seq": seq, "c": "move", "d": d})
        msg = await recv_until(ws, functools.partial(_answers, seq))
        if msg["t"] == "delta" and "me" in msg:
            me = me | msg["me"]
    assert isinstance(me["x"], int)
    await ws.close()


@pytest.mark.parametrize(
    "frame, code",
    [
        (b"\xc1", "bad_msgpack"),
        (msgpack.packb([1, 2, 3]), "bad_message"),
        (msgpack.packb({"t": "teleport"}), "unknown_type"),
        (msgpack.packb({"t": "cmd", "seq": "one", "c": "move", "d": [1, 0]}), "bad_field"),
        (msgpack.packb({"t": "cmd", "seq": 1, "c": "move", "d": [2, 0]}), "bad_field"),
        (msgpack.packb({"t": "cmd", "seq": 1, "c": "wait", "extra": 1}), "bad_field"),
        (msgpack.packb({"t": "hello", "v": PROTOCOL_VERSION, "name": "again"}), "not_allowed"),
        ("a text frame", "bad_message"),
    ],
)
async def test_bad_input_gets_an_error_and_disturbs_nobody(
    start_server: Started, frame: bytes | str, code: str
) -> None:
    server = await start_server(populate=False)
    bad, _, _ = await join(server, "bad")
    good, _, _ = await join(server, "good")
    await bad.send(frame)
    err = await recv_until(bad, lambda m: m["t"] == "error")
    assert err["code"] == code and err["fatal"] is False and err["msg"]
    await _still_served(bad)
    await _still_served(good)
    await send(good, {"t": "cmd", "seq": 5, "c": "wait"})
    assert (await recv_until(good, lambda m: m.get("ack") == 5))["ack"] == 5


async def test_oversized_frame_closes_only_that_connection(start_server: Started) -> None:
    server = await start_server(populate=False)
    big, _, _ = await join(server, "big")
    good, _, _ = await join(server, "good")
    await big.send(b"\x00" * 10_000)
    with pytest.raises(ConnectionClosed) as info:
        await recv_until(big, lambda m: False)
    assert info.value.rcvd is not None and info.value.rcvd.code == 1009
    await _still_served(good)


async def test_version_and_name_rules(start_server: Started) -> None:
    server = await start_server(populate=False)
    ws = await connect(server)
    await send(ws, {"t": "hello", "v": PROTOCOL_VERSION + 1, "name": "old"})
    err = await recv(ws)
    assert err["code"] == "version" and err["fatal"] is True
    with pytest.raises(ConnectionClosed):
        await recv(ws)
    await join(server, "ann")
    ws = await connect(server)
    await send(ws, {"t": "hello", "v": PROTOCOL_VERSION, "name": "ann"})
    assert (await recv(ws))["code"] == "name_taken"
    ws = await connect(server)
    await send(ws, {"t": "cmd", "seq": 1, "c": "wait"})
    assert (await recv(ws))["code"] == "not_allowed"


async def test_flood_is_limited_then_dropped(start_server: Started) -> None:
    server = await start_server(populate=False)
    flood, _, _ = await join(server, "flood")
    good, _, _ = await join(server, "good")
    codes: list[str] = []
    try:
        for seq in range(2000):
            await send(flood, {"t": "cmd", "seq": seq, "c": "wait"})
        async with asyncio.timeout(5):
            while True:
                msg = await recv(flood)
                if msg["t"] == "error":
                    codes.append(msg["code"])
    except (ConnectionClosed, TimeoutError):
        pass
    assert "rate_limited" in codes and codes[-1] == "flood"
    await _still_served(good)


async def test_hello_timeout(start_server: Started, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(net_front, "HELLO_TIMEOUT_S", 0.3)
    server = await start_server(populate=False)
    ws = await connect(server)
    err = await recv(ws)
    assert err["code"] == "timeout" and err["fatal"]


async def test_client_vanishing_mid_tick_is_noticed_by_others(start_server: Started) -> None:
    server = await start_server(populate=False)
    good, _, _ = await join(server, "good")
    gone, _, _ = await join(server, "gone")
    for seq in range(5):
        await send(gone, {"t": "cmd", "seq": seq, "c": "move", "d": [1, 0]})
    assert gone.transport is not None
    gone.transport.abort()
    msg = await recv_until(good, lambda m: any(e[0] == "leave" for e in m.get("ev", [])))
    assert ["leave", "gone"] in msg["ev"]
    assert "gone" not in server.game.by_name
    await _still_served(good)


async def test_reconnect_with_token_resumes_and_replaces(start_server: Started) -> None:
    server = await start_server(populate=False)
    first, welcome, _ = await join(server, "ann")
    token = welcome["token"]
    await send(first, {"t": "cmd", "seq": 0, "c": "move", "d": [1, 0]})
    await recv_until(first, lambda m: m.get("ack") == 0)
    pos = server.game.world.actors[welcome["id"]]
    where = (pos.x, pos.y)
    # Reconnect while the first connection is still open: it is replaced.
    second, again, snap2 = await join(server, "ann", token)
    assert again["resumed"] and again["id"] == welcome["id"]
    assert (snap2["me"]["x"], snap2["me"]["y"]) == where
    err = await recv_until(first, lambda m: m["t"] == "error")
    assert err["code"] == "replaced"
    await _still_served(second)
    await second.close()
    await asyncio.sleep(0.2)
    _third, back, snap3 = await join(server, "ann", token)
    assert back["resumed"] and (snap3["me"]["x"], snap3["me"]["y"]) == where
    assert snap3["map"] == snap2["map"] or snap3["map"].count(255) <= snap2["map"].count(255)


async def test_characters_survive_a_restart(start_server: Started, tmp_path: Path) -> None:
    db = tmp_path / "keep.db"
    server = await start_server(seed=9, db=db, populate=False)
    ws, welcome, _ = await join(server, "ann")
    for seq in range(4):
        await send(ws, {"t": "cmd", "seq": seq, "c": "move", "d": [1, 0]})
    await recv_until(ws, lambda m: m.get("ack") == 3 or m["t"] == "reject")
    actor = server.game.world.actors[welcome["id"]]
    armour = next(i.letter for i in actor.inventory if i.key == "leather_armour")
    food = next(i.letter for i in actor.inventory if i.key == "food_ration")
    await send(ws, {"t": "cmd", "seq": 4, "c": "remove", "item": armour})
    await send(ws, {"t": "cmd", "seq": 5, "c": "eat", "item": food})
    await recv_until(ws, lambda m: m.get("ack") == 5)
    actor.hp -= 5
    saved = (actor.x, actor.y, actor.hp, actor.memory[1].tobytes())
    inventory = [[i.letter, i.key, i.count] for i in actor.inventory]
    worn = {slot: item.letter for slot, item in actor.equipment.items()}
    assert "body" not in worn and [food, "food_ration", 1] in inventory
    await stop(server)
    nourishment = (actor.food.nourishment, actor.food.hunger)  # as saved on stopping
    err = await recv_until(ws, lambda m: m["t"] == "error")
    assert err["code"] == "shutdown"
    server2 = await start_server(seed=9, db=db, populate=False)
    _ws2, back, snap = await join(server2, "ann", welcome["token"])
    assert back["resumed"]
    me = snap["me"]
    assert (me["x"], me["y"], me["hp"]) == saved[:3]
    assert [row[:3] for row in me["inv"]] == inventory
    assert {row[3]: row[0] for row in me["inv"] if row[3]} == worn
    assert tuple(me["food"]) == nourishment
    known = bytes(snap["map"])
    assert all(k == s or s == 255 for k, s in zip(known, saved[3]))


async def test_a_message_that_cannot_be_written_costs_only_a_snapshot(
    start_server: Started, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A tick's message that fails to encode (a bug) is logged; its player's
    next message is a snapshot (its view had counted the lost one as sent),
    and the tick goes on for everyone else."""
    server = await start_server(populate=False)
    ann, _, _ = await join(server, "ann")
    bob, _, _ = await join(server, "bob")
    failed: list[Delta] = []

    def encode(msg: Any) -> bytes:
        if not failed and isinstance(msg, Delta) and msg.ack == 1:  # ann's first command (-1 to 0)
            failed.append(msg)
            raise TypeError("cannot pack this")
        return encode_server(msg)

    monkeypatch.setattr(net_server, "encode_server", encode)
    reader = asyncio.create_task(_read_all(bob))
    await send(ann, {"t": "cmd", "seq": 0, "c": "move", "d": [1, 0]})
    snap = await recv_until(ann, lambda m: m.get("ack") == 0)
    assert failed and snap["t"] == "snap", "the lost delta is made good by a snapshot"
    assert "message for" in caplog.text and "not written" in caplog.text
    reader.cancel()
    await _still_served(bob)
    await send(ann, {"t": "cmd", "seq": 1, "c": "move", "d": [-1, 0]})
    after = await recv_until(ann, lambda m: m.get("ack") == 1)
    assert after["t"] == "delta"


async def _slow_reader(
    start_server: Started, monkeypatch: pytest.MonkeyPatch, drop_after_s: float
) -> tuple[net_server.GameServer, Any, Any, Any]:
    """A server whose outbox limit is 2 KiB and that drops a client behind
    for ``drop_after_s``; a client "slow" with 4 KiB socket buffers on both
    ends that has been sent its first snapshot but reads nothing yet, and a
    client "talker" whose chat (the output here) reaches everyone. Returns
    the server, the slow client's connection, its seat and the talker."""
    import socket

    import websockets

    monkeypatch.setattr(net_server, "OUTBOX_LIMIT_BYTES", 2048)
    monkeypatch.setattr(net_server, "BEHIND_DROP_S", drop_after_s)
    monkeypatch.setattr(ratelimit, "CHAT_RATE_PER_S", 1000.0)
    monkeypatch.setattr(ratelimit, "CHAT_BURST", 1000)
    server = await start_server(populate=False)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", server.port))
    slow = await websockets.connect(
        f"ws://127.0.0.1:{server.port}", sock=sock, compression=None, max_queue=1
    )
    await send(slow, {"t": "hello", "v": PROTOCOL_VERSION, "name": "slow"})
    talker, _, _ = await join(server, "talker")
    async with asyncio.timeout(5):
        while "slow" not in server.game.by_name:
            await asyncio.sleep(0.02)
    seat = server.game.by_name["slow"]
    async with asyncio.timeout(5):
        while seat.view.needs_snapshot:  # its first snapshot went out
            await asyncio.sleep(0.02)
    server_sock = server.clients[seat.actor_id].ws.transport.get_extra_info("socket")
    server_sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)  # no autotuning
    return server, slow, seat, talker


async def _chat(talker: Any) -> None:
    """Eight chat lines from the talker, then a quarter of a second."""
    for _ in range(8):
        await send(talker, {"t": "chat", "text": "x" * 200})
    await asyncio.sleep(0.25)


async def _read_all(ws: Any) -> None:
    while True:
        await ws.recv()


async def test_a_client_that_stops_reading_is_skipped_then_dropped(
    start_server: Started, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client that stops reading gets no deltas while it is behind (its next
    message would be a snapshot) and is disconnected once it stays behind;
    the others play on."""
    server, stuck, seat, talker = await _slow_reader(start_server, monkeypatch, 1.0)
    before = await scrape(server.port)
    reader = asyncio.create_task(_read_all(talker))
    # The stuck client never reads.
    skipped = dropped = False
    behind_seen = 0.0
    async with asyncio.timeout(30):
        while not dropped:
            await _chat(talker)
            skipped = skipped or seat.view.needs_snapshot
            dropped = "slow" not in server.game.by_name
            if not dropped:
                now = await scrape(server.port)
                behind_seen = max(behind_seen, now[("underhall_clients_behind", ())])
    assert skipped, "deltas were skipped while the client was behind"
    assert dropped
    after = await scrape(server.port)
    assert behind_seen == 1 and after[("underhall_clients_behind", ())] == 0
    assert after[("underhall_slow_clients_dropped_total", ())] == 1
    assert before[("underhall_slow_clients_dropped_total", ())] == 0
    # One skipped message per tick behind (about ten a second for a second).
    assert after[("underhall_frames_skipped_total", ())] >= 5
    reader.cancel()
    await _still_served(talker)
    stuck.transport.abort()


async def test_a_client_that_catches_up_gets_a_snapshot_and_plays_on(
    start_server: Started, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client that stops reading falls behind (its deltas are not written);
    once it reads again and its buffer drains, its next message is a
    snapshot, it is no longer behind, and it stays connected."""
    server, slow, seat, talker = await _slow_reader(start_server, monkeypatch, 60.0)
    client = server.clients[seat.actor_id]
    reader = asyncio.create_task(_read_all(talker))
    async with asyncio.timeout(30):  # the slow client does not read: it falls behind
        while client.behind_since is None:
            await _chat(talker)
    assert seat.view.needs_snapshot
    behind_at = server.game.world.tick
    # It reads again: what was queued for it arrives (its first snapshot
    # among it), then a snapshot taken after it fell behind.
    snap = await recv_until(slow, lambda m: m["t"] == "snap" and m["tick"] > behind_at, timeout=30)
    assert snap["me"]["x"] == server.game.world.actors[seat.actor_id].x
    async with asyncio.timeout(5):
        while client.behind_since is not None:
            await asyncio.sleep(0.05)
    assert "slow" in server.game.by_name and server.clients.get(seat.actor_id) is client
    await _still_served(slow)
    reader.cancel()
    await slow.close()


async def test_the_tick_log_splits_each_tick_into_step_and_writing(
    start_server: Started, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With UNDERHALL_TICK_LOG set, every tick appends ``wall tick duration
    players gc step write skipped``, one line per tick in order; the step and
    the writing of its messages are parts of the tick's duration."""
    log_path = tmp_path / "ticks.log"
    monkeypatch.setenv(net_server.TICK_LOG_ENV, str(log_path))
    server = await start_server(populate=False)
    ws, _, _ = await join(server, "ann")
    for seq, d in enumerate([[1, 0], [-1, 0], [1, 0], [-1, 0]]):
        await send(ws, {"t": "cmd", "seq": seq, "c": "move", "d": d})
        await recv_until(ws, functools.partial(_answers, seq))
    start = server.game.world.tick
    async with asyncio.timeout(10):
        while server.game.world.tick < start + 12:  # a flush a second at 10 ticks/s
            await asyncio.sleep(0.05)
    rows = [line.split() for line in log_path.read_text(encoding="ascii").splitlines()]
    assert len(rows) >= 10 and all(len(r) == 8 for r in rows)
    assert all(r[7] == "0" for r in rows), "a client that reads is never skipped"
    ticks = [int(r[1]) for r in rows]
    assert ticks == list(range(ticks[0], ticks[0] + len(ticks)))
    for r in rows:
        duration, step, write = float(r[2]), float(r[5]), float(r[6])
        assert 0 < step and 0 <= write and step + write <= duration
    assert int(rows[-1][3]) == 1  # players seated
    await ws.close()


async def test_sighup_saves_every_character_before_closing(tmp_path: Path) -> None:
    """Closing the terminal that runs the server (SIGHUP) is a clean stop: every
    character is saved before the closing handshakes, which a slow client can
    drag out."""
    import os
    import signal
    import subprocess
    import time

    import websockets

    from server.game.store import Store
    from tests.serverproc import running_server

    with running_server(tmp_path, seed=2) as url:
        ws = await websockets.connect(url, compression=None)
        await send(ws, {"t": "hello", "v": PROTOCOL_VERSION, "name": "slow"})
        snap = await recv_until(ws, lambda m: m["t"] == "snap")
        me: dict[str, object] = dict(snap["me"])
        start = (me["x"], me["y"])
        for seq, d in enumerate([[1, 0], [0, 1], [-1, 0], [0, -1], [1, 1], [-1, 1]]):
            await send(ws, {"t": "cmd", "seq": seq, "c": "move", "d": d})
            while True:
                msg = await recv(ws)
                me |= msg.get("me", {})
                if msg.get("ack", -1) >= seq:
                    break
            if (me["x"], me["y"]) != start:
                break
        assert (me["x"], me["y"]) != start, "the character moved"
        pid = int(
            subprocess.check_output(  # noqa: ASYNC221 -- a quick pgrep
                ["pgrep", "-f", "--", f"--db {tmp_path / 'world.db'}"]
            ).split()[0]
        )
        os.kill(pid, signal.SIGHUP)
        time.sleep(1.5)  # noqa: ASYNC251 -- on purpose: this client cannot answer the close
        store = Store(tmp_path / "world.db", lock=False)  # the server may still be closing
        found = store.load_player("slow")
        store.close()
        assert found is not None
        assert (found[1]["x"], found[1]["y"]) == (me["x"], me["y"])
        assert "stopping: 1 players saved" in (tmp_path / "server.log").read_text()
        await ws.close()
