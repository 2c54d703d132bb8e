"""Operator commands over the admin Unix socket, bans across restarts, and the drain."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
import websockets

from protocol.version import PROTOCOL_VERSION
from server.game.game import Game
from server.game.store import Store
from server.net.admin import AdminServer, ServeOperator, bind_private_socket
from server.net.server import GameServer
from server.sim.world import World
from server.store import open_store
from tests.net.conftest import join, recv, recv_until, send, url
from tests.serverproc import underhall_command

Start = Callable[..., Coroutine[Any, Any, GameServer]]


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A directory with a short path (a Unix socket path has at most 107 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="uh-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
async def start(short_dir: Path) -> AsyncIterator[Start]:
    """Start a server with its admin socket at ``short_dir / "admin.sock"``."""
    running: list[tuple[GameServer, asyncio.Task[None], Store]] = []

    async def go(db: str = "world.db", **options: Any) -> GameServer:
        from server.game.bans import BanList

        store = Store(short_dir / db)
        game = Game(World(1, populate=False), store, tick_rate=20)
        game.bans = BanList.from_meta(store)
        server = GameServer(
            game, "127.0.0.1", 0, 20, admin_socket=short_dir / "admin.sock", **options
        )
        ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(server.run(ready, install_signals=False))
        await asyncio.wait_for(ready, 5)
        running.append((server, task, store))
        return server

    yield go
    for server, task, store in running:
        server.stop()
        await asyncio.wait_for(task, 10)
        store.close()


async def admin(server: GameServer, **req: Any) -> dict[str, Any]:
    """One request over the server's admin socket, as a client would send it."""
    assert server.admin_socket is not None
    reader, writer = await asyncio.open_unix_connection(str(server.admin_socket))
    writer.write(json.dumps(req).encode() + b"\n")
    line = await asyncio.wait_for(reader.readline(), 5)
    writer.close()
    answer: dict[str, Any] = json.loads(line)
    return answer


async def refused(server: GameServer, name: str) -> dict[str, Any]:
    """Try to join as ``name``; return the fatal error the server answers."""
    ws = await websockets.connect(url(server), compression=None)
    await send(ws, {"t": "hello", "v": PROTOCOL_VERSION, "name": name})
    msg = await recv(ws)
    await ws.close()
    assert msg["t"] == "error" and msg["fatal"], msg
    return msg


async def test_socket_is_private_and_answers_who(start: Start) -> None:
    server = await start()
    assert server.admin_socket is not None
    mode = server.admin_socket.stat().st_mode
    assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
    ws, welcome, _ = await join(server, "ann")
    answer = await admin(server, cmd="who")
    assert answer["ok"] and answer["draining"] is False
    [player] = answer["players"]
    assert (player["name"], player["actor"], player["depth"]) == ("ann", welcome["id"], 1)
    assert player["address"].startswith("127.0.0.1:")
    await ws.close()


async def test_bad_requests_get_a_clear_error_and_the_channel_goes_on(start: Start) -> None:
    server = await start()
    assert server.admin_socket is not None
    reader, writer = await asyncio.open_unix_connection(str(server.admin_socket))
    answers = []
    for line in [
        b"not json\n",
        b"[1]\n",
        b'{"cmd": "fly"}\n',
        b'{"cmd": "kick"}\n',
        b'{"cmd": "broadcast", "text": "bad\\u0007bell"}\n',
        b'{"cmd": "shutdown", "grace": -1}\n',
        b'{"cmd": "who"}\n',
    ]:
        writer.write(line)
        answers.append(json.loads(await asyncio.wait_for(reader.readline(), 5)))
    writer.close()
    assert [a["ok"] for a in answers] == [False] * 6 + [True]
    assert "JSON" in answers[0]["error"] and "unknown command 'fly'" in answers[2]["error"]
    assert '"name"' in answers[3]["error"] and "control" in answers[4]["error"]
    assert not server.draining


async def test_memory_counts_players_levels_floors_and_objects(start: Start) -> None:
    server = await start()
    ws, _welcome, _ = await join(server, "ann")
    answer = await admin(server, cmd="memory", types=5, garbage=3)
    assert answer["ok"] and answer["rss_bytes"] > 0 and answer["clients"] == 1
    assert answer["host"]["seats"] == 1 and answer["host"]["left"] == 0
    world = answer["world"]
    assert (world["players"], world["levels"], world["memory_grids"]) == (1, 1, 1)
    [level] = answer["levels"]
    assert level["depth"] == 1 and level["players"] == 1 and level["items"] >= 0
    objects = answer["objects"]
    assert len(objects) == 6 and objects["(all)"] >= max(objects.values())
    assert isinstance(answer["garbage"], dict) and "sites" not in answer
    bad = await admin(server, cmd="memory", types=-1)
    assert not bad["ok"] and "types" in bad["error"]
    await ws.close()


async def test_broadcast_reaches_every_player(start: Start) -> None:
    server = await start()
    (a, _, _), (b, _, _) = await join(server, "ann"), await join(server, "bob")
    assert await admin(server, cmd="broadcast", text="Reboot at noon") == {"ok": True, "players": 2}
    for ws in (a, b):
        notice = await recv_until(ws, lambda m: m["t"] == "chat")
        assert (notice["from"], notice["text"]) == ("", "Reboot at noon")
        await ws.close()


async def test_kick_closes_the_player_and_holds_the_name_out(start: Start) -> None:
    server = await start()
    ws, _, _ = await join(server, "eve")
    assert (await admin(server, cmd="kick", name="eve"))["ok"]
    error = await recv_until(ws, lambda m: m["t"] == "error")
    assert (error["code"], error["fatal"]) == ("kicked", True)
    await asyncio.wait_for(ws.wait_closed(), 5)
    assert (await refused(server, "eve"))["code"] == "kicked"
    answer = await admin(server, cmd="kick", name="nobody")
    assert not answer["ok"] and "nobody" in answer["error"]


async def test_ban_persists_across_a_restart_until_unbanned(
    start: Start, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="underhall.admin")
    server = await start()
    ws, first, _ = await join(server, "mal")
    answer = await admin(server, cmd="ban", name="mal", reason="griefing")
    assert answer == {"ok": True, "name": "mal", "online": True}
    error = await recv_until(ws, lambda m: m["t"] == "error")
    assert (error["code"], error["msg"]) == ("banned", "banned: griefing")
    server.stop()
    await asyncio.sleep(0.5)
    server.game.store.close()  # release the database's lock for the next server

    again = await start()  # same database
    assert (await refused(again, "mal"))["code"] == "banned"
    assert [b["name"] for b in (await admin(again, cmd="bans"))["bans"]] == ["mal"]
    assert (await admin(again, cmd="unban", name="mal"))["ok"]
    assert not (await admin(again, cmd="unban", name="mal"))["ok"]
    ws, welcome, _ = await join(again, "mal", first["token"])
    assert welcome["name"] == "mal" and welcome["resumed"]
    await ws.close()
    actions = [
        (getattr(r, "action", None), getattr(r, "player", None))
        for r in caplog.records
        if getattr(r, "event", None) == "admin"
    ]
    assert actions == [("ban", "mal"), ("unban", "mal")]


async def test_save_writes_every_character(start: Start, short_dir: Path) -> None:
    server = await start()
    ws, _, _ = await join(server, "sam")
    await send(ws, {"t": "cmd", "seq": 0, "c": "move", "d": [1, 0]})
    await recv_until(ws, lambda m: m.get("ack") == 0)
    actor = server.game.world.actors[server.game.by_name["sam"].actor_id]
    answer = await admin(server, cmd="save")
    assert answer["ok"] and answer["players"] == 1
    other = open_store(short_dir / "world.db", lock=False)  # a reader beside the server
    saved = other.load_player("sam")
    other.close()
    assert saved is not None and (saved[1]["x"], saved[1]["y"]) == (actor.x, actor.y)
    await ws.close()


async def test_shutdown_drains_tells_players_and_stops(start: Start) -> None:
    server = await start(drain_s=10.0)
    ws, _, _ = await join(server, "ann")
    started = time.monotonic()
    answer = await admin(server, cmd="shutdown", grace=1.0)
    assert answer == {"ok": True, "grace_s": 1.0, "players": 1}
    assert server.draining and not server.ready
    notice = await recv_until(ws, lambda m: m["t"] == "chat")
    assert notice["from"] == "" and "1 s" in notice["text"]
    assert (await refused(server, "late"))["code"] == "shutdown"
    await send(ws, {"t": "ping", "id": 9})  # play goes on during the grace period
    assert (await recv_until(ws, lambda m: m["t"] == "pong"))["id"] == 9
    error = await recv_until(ws, lambda m: m["t"] == "error", timeout=5)
    assert error["code"] == "shutdown"
    await asyncio.wait_for(ws.wait_closed(), 5)
    assert 0.9 <= time.monotonic() - started < 10.0
    assert server.admin_socket is not None
    for _ in range(50):
        if not server.admin_socket.exists():
            break
        await asyncio.sleep(0.05)
    assert not server.admin_socket.exists()


def test_ban_list_round_trips_and_refuses_a_damaged_document() -> None:
    from server.game.bans import BanList

    kept: list[str] = []
    bans = BanList(lambda: None, kept.append, clock=lambda: 100.0)
    bans.ban("mal", "griefing")
    again = BanList(lambda: kept[-1])
    assert [(b.name, b.reason) for b in again.bans()] == [("mal", "griefing")]
    assert again.refusal("mal") == ("banned", "'mal' is banned: griefing")
    assert again.refusal("ann") is None
    with pytest.raises(ValueError, match="'bans'"):
        BanList(lambda: '{"not": "a list"}')


def test_a_socket_in_use_is_refused_and_a_stale_one_replaced(short_dir: Path) -> None:
    path = short_dir / "a.sock"
    live = bind_private_socket(path)
    with pytest.raises(OSError, match="in use"):
        bind_private_socket(path)
    live.close()  # the file stays: a server that died
    assert path.exists()
    bind_private_socket(path).close()
    plain = short_dir / "plain"
    plain.write_text("not a socket")
    with pytest.raises(OSError, match="not a socket"):
        bind_private_socket(plain)
    assert plain.read_text() == "not a socket"


async def test_a_second_admin_server_on_the_same_path_is_refused(tmp_path: Path) -> None:
    store = Store(tmp_path / "w.db")
    server = GameServer(Game(World(1, populate=False), store), "127.0.0.1", 0, 20)
    with pytest.raises(OSError, match="in use"):
        operator = ServeOperator(server)
        async with AdminServer(operator, tmp_path / "s"), AdminServer(operator, tmp_path / "s"):
            pass
    store.close()


# --- the real command line ----------------------------------------------------------


def _serve(short_dir: Path, *extra: str) -> tuple[subprocess.Popen[bytes], str]:
    log = short_dir / "server.log"
    cmd = [
        *underhall_command(),
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--seed",
        "3",
        "--tick-rate",
        "20",
        "--db",
        str(short_dir / "world.db"),
        *extra,
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while b"listening on" not in log.read_bytes():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the server did not start:\n{log.read_text()}")
        time.sleep(0.05)
    found = re.search(r"listening on (ws://[\d.]+:\d+)", log.read_text())
    assert found is not None
    return proc, found.group(1)


async def _run_admin(short_dir: Path, *args: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        *underhall_command(),
        "admin",
        "--db",
        str(short_dir / "world.db"),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 30)
    return int(proc.returncode or 0), out.decode()


async def test_admin_command_line_against_a_running_server(short_dir: Path) -> None:
    code, out = await _run_admin(short_dir, "who")
    assert code == 2 and "no server answers" in out
    proc, server_url = _serve(short_dir)
    try:
        ws = await websockets.connect(server_url, compression=None)
        await send(ws, {"t": "hello", "v": PROTOCOL_VERSION, "name": "ann"})
        await recv_until(ws, lambda m: m["t"] == "snap")
        code, out = await _run_admin(short_dir, "who")
        assert code == 0 and out.splitlines()[0].startswith("ann ") and "1 playing" in out
        code, out = await _run_admin(short_dir, "--json", "broadcast", "hello", "there")
        assert code == 0 and json.loads(out) == {"ok": True, "players": 1}
        assert (await recv_until(ws, lambda m: m["t"] == "chat"))["text"] == "hello there"
        code, out = await _run_admin(short_dir, "unban", "nobody")
        assert code == 1 and "not banned" in out
        code, out = await _run_admin(short_dir, "shutdown", "--grace", "0.5")
        assert code == 0
        assert (await recv_until(ws, lambda m: m["t"] == "error"))["code"] == "shutdown"
        assert await asyncio.to_thread(proc.wait, 15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert '"event": "admin"' not in (short_dir / "server.log").read_text()  # text format
    assert "admin shutdown" in (short_dir / "server.log").read_text()


async def test_sigterm_drains_within_drain_s_and_exits_0(short_dir: Path) -> None:
    proc, server_url = _serve(short_dir, "--drain-s", "4", "--log-format", "json")
    try:
        ws = await websockets.connect(server_url, compression=None)
        await send(ws, {"t": "hello", "v": PROTOCOL_VERSION, "name": "ann"})
        await recv_until(ws, lambda m: m["t"] == "snap")
        started = time.monotonic()
        os.kill(proc.pid, signal.SIGTERM)
        notice = await recv_until(ws, lambda m: m["t"] == "chat")
        assert "stops in 2 s" in notice["text"]  # 4 s of drain, 2 s kept for closing
        error = await recv_until(ws, lambda m: m["t"] == "error", timeout=5)
        assert error["code"] == "shutdown"
        assert await asyncio.to_thread(proc.wait, 10) == 0
        assert time.monotonic() - started < 4.0 + 0.5
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    events = [
        json.loads(line)
        for line in (short_dir / "server.log").read_text().splitlines()
        if line.startswith("{")
    ]
    kinds = [e.get("event") for e in events]
    assert "drain" in kinds and kinds.index("drain") < kinds.index("saved")
    drain = events[kinds.index("drain")]
    assert (drain["players"], drain["grace_s"]) == (1, 2.0)
    assert not (short_dir / "world.db.admin.sock").exists()
