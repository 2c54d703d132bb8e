"""Bans, kicks and the who-list across a cluster, through gateways' admin sockets.

Real processes (workers, gateways), real clients, NATS and PostgreSQL; the
bans are checked in the database with ``serve``'s own reader
(:meth:`~server.game.bans.BanList.from_meta`).
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable
from pathlib import Path

from client.connection import Connection
from client.model import GameModel
from protocol.messages import Error, ServerMessage, Welcome
from server.cluster.bans import change_bans
from server.game.bans import KICK_HOLD_S, Ban, BanList
from server.store import open_store
from tests.cluster.procs import (
    ClusterProcs,
    admin_request,
    is_snap,
    play_until,
    raw_hello,
    recv_until,
)
from tests.serverproc import underhall_command


def saved_bans(db: str) -> dict[str, str]:
    """Name -> reason of the bans in the database, read as ``serve`` reads them."""
    store = open_store(db, lock=False)
    try:
        return {b.name: b.reason for b in BanList.from_meta(store).bans()}
    finally:
        store.close()


async def gateways_know(
    sock: Path, gateways: list[str], timeout: float = 10.0, workers: list[str] | None = None
) -> None:
    """Wait until the gateway of ``sock`` hears the heartbeats of ``gateways``
    (a question it gathers then waits for their answers) and, if given, of
    ``workers`` (a worker beats once a second, so a gateway that just
    started may seat players through the join queue before it hears one)."""
    deadline = time.monotonic() + timeout
    while True:
        who = await admin_request(sock, cmd="who")
        if who["gateways"] == gateways and (workers is None or who["workers"] == workers):
            return
        assert time.monotonic() < deadline, f"never heard of {gateways} and {workers}: {who}"
        await asyncio.sleep(0.2)


async def refused(url: str, name: str, token: str | None) -> Error:
    """Say ``hello`` as ``name``; the fatal error it gets, checked closed with 1008."""
    ws, answer = await raw_hello(url, name, token)
    assert isinstance(answer, Error) and answer.fatal, answer
    await asyncio.wait_for(ws.wait_closed(), 5)
    assert (ws.close_code, ws.close_reason) == (1008, answer.code)
    return answer


def banning(name: str) -> Callable[[BanList], Ban]:
    """A change for :func:`change_bans`: ban ``name``."""
    return lambda bans: bans.ban(name, "x")


def is_error(msg: ServerMessage) -> bool:
    return isinstance(msg, Error)


async def test_a_ban_reaches_every_gateway_and_is_kept_as_serve_keeps_it(
    tmp_path: Path, short_dir: Path, nats_url: str, db: str, prefix: str
) -> None:
    s1, s2 = short_dir / "g1.sock", short_dir / "g2.sock"
    with ClusterProcs(tmp_path, nats_url, db, prefix) as cluster:
        # A ban written by serve's code (a database that serve used).
        store = open_store(db, lock=False)
        BanList.from_meta(store).ban("Eve", "spam")
        store.close()
        cluster.worker("wa", "1")
        cluster.worker("wb", "2")
        url1 = cluster.gateway("g1", admin_socket=s1)
        url2 = cluster.gateway("g2", admin_socket=s2)
        await gateways_know(s1, ["g1", "g2"])

        eve = await refused(url2, "eve", None)
        assert (eve.code, eve.msg) == ("banned", "'eve' is banned: spam")

        mallory, welcome = await raw_hello(url2, "Mallory")
        assert isinstance(welcome, Welcome)
        await recv_until(mallory, is_snap(1))
        banned = await admin_request(s1, cmd="ban", name="mallory", reason="griefing")
        assert banned["ok"] and banned["name"] == "mallory", banned
        assert banned["online"] and banned["where"] == ["g2"], banned
        assert banned["gateways"] == ["g1", "g2"] and banned["silent"] == []
        # Disconnected as serve disconnects a player it bans.
        error = await recv_until(mallory, is_error)
        assert isinstance(error, Error)
        assert (error.code, error.msg, error.fatal) == ("banned", "banned: griefing", True)
        await asyncio.wait_for(mallory.wait_closed(), 5)
        assert (mallory.close_code, mallory.close_reason) == (1008, "banned")
        # Refused as serve refuses a banned name, through either gateway (by
        # either worker: each join goes to one picked at random).
        for url in (url2, url1, url2, url1):
            again = await refused(url, "Mallory", welcome.token)
            assert (again.code, again.msg) == ("banned", "'Mallory' is banned: griefing")

        assert saved_bans(db) == {"Eve": "spam", "mallory": "griefing"}
        listed = await admin_request(s2, cmd="bans")
        assert listed["ok"]
        assert [(b["name"], b["reason"]) for b in listed["bans"]] == [
            ("Eve", "spam"),
            ("mallory", "griefing"),
        ]

        assert await admin_request(s2, cmd="unban", name="MALLORY") == {
            "ok": True,
            "name": "MALLORY",
        }
        twice = await admin_request(s1, cmd="unban", name="mallory")
        assert not twice["ok"] and twice["error"] == "'mallory' is not banned"
        assert saved_bans(db) == {"Eve": "spam"}
        for url in (url1, url2):
            back = await Connection.open(url, "Mallory", token=welcome.token)
            assert back.welcome.resumed and back.welcome.id == welcome.id
            await play_until(back, GameModel(back.welcome), is_snap(1))
            await back.close()


async def test_bans_at_once_are_all_kept(
    tmp_path: Path, short_dir: Path, nats_url: str, db: str, prefix: str
) -> None:
    s1, s2 = short_dir / "g1.sock", short_dir / "g2.sock"
    with ClusterProcs(tmp_path, nats_url, db, prefix) as cluster:
        cluster.worker("wa", "1")
        cluster.worker("wb", "2")
        cluster.gateway("g1", admin_socket=s1)
        cluster.gateway("g2", admin_socket=s2)
        await gateways_know(s1, ["g1", "g2"])
        names = [f"rogue{i}" for i in range(8)]
        answers = await asyncio.gather(
            *(
                admin_request(s1 if i % 2 else s2, cmd="ban", name=n, reason=f"r{i}")
                for i, n in enumerate(names)
            )
        )
        assert all(a["ok"] and not a["online"] for a in answers), answers
        assert saved_bans(db) == {n: f"r{i}" for i, n in enumerate(names)}

        # The row lock itself: 12 changes on 12 connections at once, none lost.
        more = [f"thief{i}" for i in range(12)]
        await asyncio.gather(*(change_bans(db, banning(n)) for n in more))
        assert await change_bans(db, lambda bans: bans.unban("rogue0"))
        kept = saved_bans(db)
        assert set(kept) == set(names[1:]) | set(more)
        listed = await admin_request(s1, cmd="bans")
        assert {b["name"] for b in listed["bans"]} == set(kept)


async def test_a_kick_reaches_every_gateway(
    tmp_path: Path, short_dir: Path, nats_url: str, db: str, prefix: str
) -> None:
    s1 = short_dir / "g1.sock"
    with ClusterProcs(tmp_path, nats_url, db, prefix) as cluster:
        cluster.worker("wa", "1")
        url1 = cluster.gateway("g1", admin_socket=s1)
        url2 = cluster.gateway("g2")
        await gateways_know(s1, ["g1", "g2"])
        mallory, welcome = await raw_hello(url2, "Mallory")
        assert isinstance(welcome, Welcome)
        await recv_until(mallory, is_snap(1))

        kicked = await admin_request(s1, cmd="kick", name="mallory")
        assert kicked["ok"] and kicked["online"] and kicked["where"] == ["g2"], kicked
        assert kicked["gateways"] == ["g1", "g2"] and kicked["hold_s"] == KICK_HOLD_S
        error = await recv_until(mallory, is_error)
        assert isinstance(error, Error) and (error.code, error.fatal) == ("kicked", True)
        await asyncio.wait_for(mallory.wait_closed(), 5)
        assert (mallory.close_code, mallory.close_reason) == (1008, "kicked")
        for url in (url2, url1):
            again = await refused(url, "Mallory", welcome.token)
            assert again.code == "kicked" and f"{KICK_HOLD_S:.0f} s" in again.msg


async def test_who_lists_the_players_of_every_gateway(
    tmp_path: Path, short_dir: Path, nats_url: str, db: str, prefix: str
) -> None:
    s1 = short_dir / "g1.sock"
    with ClusterProcs(tmp_path, nats_url, db, prefix) as cluster:
        cluster.worker("wa", "1")
        url1 = cluster.gateway("g1", admin_socket=s1)
        url2 = cluster.gateway("g2")
        await gateways_know(s1, ["g1", "g2"], workers=["wa"])
        conns = {}
        for name, url in (("ann", url1), ("bob", url2), ("cy", url2)):
            conns[name] = await Connection.open(url, name)
            await play_until(conns[name], GameModel(conns[name].welcome), is_snap(1))
        try:
            who = await admin_request(s1, cmd="who")
            assert who["ok"] and who["gateway"] == "g1" and who["workers"] == ["wa"]
            assert [p["name"] for p in who["players"]] == ["ann"]  # this gateway's, as before
            by_gateway = {g["gateway"]: g["players"] for g in who["cluster"]}
            assert {g: [p["name"] for p in ps] for g, ps in by_gateway.items()} == {
                "g1": ["ann"],
                "g2": ["bob", "cy"],
            }
            bob = by_gateway["g2"][0]
            assert (bob["actor"], bob["worker"], bob["depth"], bob["state"]) == (
                conns["bob"].welcome.id,
                "wa",
                1,
                "playing",
            )
            assert who["gateways"] == ["g1", "g2"] and who["silent"] == []

            cli = await asyncio.create_subprocess_exec(
                *underhall_command(), "admin", "--admin-socket", str(s1), "who",
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            )  # fmt: skip
            out = (await asyncio.wait_for(cli.communicate(), 30))[0].decode()
            assert cli.returncode == 0, out
            lines = out.splitlines()
            assert [line.split()[0] for line in lines[:3]] == ["ann", "bob", "cy"]
            assert "gateway g1" in lines[0] and "gateway g2" in lines[1]
            assert lines[3].startswith("1 playing (tick")
            assert lines[4] == "3 playing in the cluster (g1 1, g2 2)"

            # A gateway that does not answer is named, and waited for a bounded time.
            cluster.signal("g2", signal.SIGSTOP)
            started = time.monotonic()
            stalled = await admin_request(s1, cmd="who")
            assert time.monotonic() - started < 2.0
            assert stalled["gateways"] == ["g1"] and stalled["silent"] == ["g2"]
            assert [g["gateway"] for g in stalled["cluster"]] == ["g1"]
        finally:
            cluster.signal("g2", signal.SIGCONT)
            for conn in conns.values():
                await conn.close()
