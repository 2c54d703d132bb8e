"""Killing the real server (``kill -9``) at every step of the sequence that
once duplicated items (issue 11, item 2): drop a stack, let the level be
saved, pick the stack up, leave, crash. Whenever the process dies, the
database must never hold more of the item (pack + floors) than there was.
On SQLite and, when it answers, PostgreSQL."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
import websockets
from websockets.asyncio.client import ClientConnection

from protocol.version import PROTOCOL_VERSION
from server.store import open_store
from tests.pgdb import empty_pg, pg_database
from tests.rawwire import read_frame
from tests.serverproc import READY_TIMEOUT_S, underhall_command

__all__ = ["pg_database"]

SAVE_S = 0.5
"""The servers here checkpoint every half second."""
ITEM = "food_ration"
START_COUNT = 2
"""A new warrior carries one stack of two food rations (classes.toml)."""


class Server:
    """``underhall serve`` as a subprocess that the test may kill."""

    def __init__(self, db: str, log: Path) -> None:
        self.log = log
        seen = log.stat().st_size if log.exists() else 0  # a restart appends to the log
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
            "--save-s",
            str(SAVE_S),
            "--db",
            db,
        ]
        with log.open("ab") as out:
            self.proc = subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            found = re.findall(rb"listening on (ws://\S+)", log.read_bytes()[seen:])
            if len(found) >= 1 and self.proc.poll() is None:
                self.url = found[-1].decode()
                return
            if self.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the server did not start:\n{log.read_text(errors='replace')}")
            time.sleep(0.05)

    def kill9(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


async def _send(ws: ClientConnection, obj: dict[str, Any]) -> None:
    await ws.send(msgpack.packb(obj, use_bin_type=True))


async def _recv(ws: ClientConnection) -> dict[str, Any]:
    """The next frame as a client reads it (:class:`tests.rawwire.RawReader`)."""
    data = await ws.recv()
    assert isinstance(data, bytes)
    return read_frame(ws, data)


class Player:
    """One websocket player that remembers its pack."""

    def __init__(self, ws: ClientConnection, token: str, me: dict[str, Any]) -> None:
        self.ws, self.token, self.me, self.seq = ws, token, me, 0

    @classmethod
    async def join(cls, url: str, name: str, token: str | None = None) -> Player:
        ws = await websockets.connect(url, compression=None)
        hello: dict[str, Any] = {"t": "hello", "v": PROTOCOL_VERSION, "name": name}
        if token:
            hello["token"] = token
        await _send(ws, hello)
        welcome = await _recv(ws)
        assert welcome["t"] == "welcome", welcome
        while (msg := await _recv(ws))["t"] != "snap":
            pass
        return cls(ws, token or welcome["token"], dict(msg["me"]))

    async def do(self, c: str, **keys: Any) -> None:
        """Send a command and wait until the server has carried it out."""
        self.seq += 1
        await _send(self.ws, {"t": "cmd", "seq": self.seq, "c": c, **keys})
        while True:
            msg = await _recv(self.ws)
            self.me |= msg.get("me", {})
            if msg["t"] == "reject" and msg["seq"] == self.seq:
                raise AssertionError(f"{c} refused: {msg}")
            if self.me.get("ack", -1) >= self.seq or msg.get("ack", -1) >= self.seq:
                return

    def count(self) -> int:
        return sum(row[2] for row in self.me["inv"] if row[1] == ITEM)

    def letter(self) -> str:
        return str(next(row[0] for row in self.me["inv"] if row[1] == ITEM))


def saved_count(db: str, name: str) -> int:
    """Items of kind ITEM in the saved pack of ``name`` plus on every saved floor."""
    store = open_store(db, lock=False)
    try:
        found = store.load_player(name)
        pack = (
            0
            if found is None
            else sum(int(rec[1]) for rec in found[1]["inventory"] if rec[0] == ITEM)
        )
        floor = sum(
            int(rec[1])
            for level in store.load_levels().values()
            for _x, _y, pile in level["items"]
            for rec in pile
            if rec[0] == ITEM
        )
    finally:
        store.close()
    return pack + floor


async def _pause(seconds: float) -> None:
    import asyncio

    await asyncio.sleep(seconds)


async def _join(url: str, state: dict[str, Any]) -> None:
    state["p"] = await Player.join(url, "ann")
    assert state["p"].count() == START_COUNT


async def _drop(url: str, state: dict[str, Any]) -> None:
    await state["p"].do("drop", item=state["p"].letter())
    assert state["p"].count() == 0


async def _level_saved(url: str, state: dict[str, Any]) -> None:
    await _pause(3 * SAVE_S)


async def _pickup(url: str, state: dict[str, Any]) -> None:
    await state["p"].do("pickup")
    assert state["p"].count() == START_COUNT


async def _leave(url: str, state: dict[str, Any]) -> None:
    await state["p"].ws.close()


async def _a_moment(url: str, state: dict[str, Any]) -> None:
    await _pause(SAVE_S / 3)


async def _next_save(url: str, state: dict[str, Any]) -> None:
    await _pause(3 * SAVE_S)


Step = Callable[[str, dict[str, Any]], Awaitable[None]]
STEPS: list[tuple[str, Step]] = [
    ("join", _join),
    ("drop", _drop),
    ("level saved", _level_saved),
    ("pickup", _pickup),
    ("leave", _leave),
    ("a moment later", _a_moment),
    ("next save", _next_save),
]


@pytest.mark.parametrize("upto", range(1, len(STEPS) + 1), ids=[s[0] for s in STEPS])
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_kill_9_after_each_step_never_duplicates_the_stack(
    request: pytest.FixtureRequest, tmp_path: Path, backend: str, upto: int
) -> None:
    if backend == "sqlite":
        db = str(tmp_path / "world.db")
    else:
        db = empty_pg(request.getfixturevalue("pg_database"))
    log = tmp_path / "server.log"
    server = Server(db, log)
    state: dict[str, Any] = {}
    try:
        for _name, step in STEPS[:upto]:
            await step(server.url, state)
    finally:
        server.kill9()
    counted = saved_count(db, "ann")
    assert counted <= START_COUNT, f"killed after {STEPS[upto - 1][0]!r}: {counted} saved"
    if STEPS[upto - 1][1] in (_level_saved, _next_save):
        assert counted == START_COUNT  # a checkpoint passed: nothing was lost either
    if upto == len(STEPS):  # the restarted server resumes ann with the stack in her pack
        again = Server(db, log)
        try:
            back = await Player.join(again.url, "ann", state["p"].token)
            assert back.count() == START_COUNT
            await back.ws.close()
        finally:
            again.stop()
