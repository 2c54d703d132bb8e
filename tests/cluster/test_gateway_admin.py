"""A gateway's ``/metrics`` and admin socket, with real processes, clients and sockets."""

from __future__ import annotations

import asyncio
import re
import shlex
import stat
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from client.connection import Connection, ConnectionClosed
from client.model import GameModel
from protocol.codec import encode_server
from protocol.messages import (
    ChatOut,
    CommandName,
    Delta,
    Error,
    Snapshot,
    Welcome,
)
from server.cluster.gateway import snapshot_depth
from server.game.bans import KICK_HOLD_S
from tests.cluster.procs import (
    ClusterProcs,
    acked,
    admin_request,
    is_snap,
    plant,
    play_until,
    raw_hello,
    recv_until,
)
from tests.serverproc import underhall_command

Scrape = dict[tuple[str, frozenset[tuple[str, str]]], float]
CLUSTER_DOC = Path(__file__).resolve().parents[2] / "docs" / "cluster.md"


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return int(answer.status), answer.read().decode()
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.read().decode()


async def scrape(http: str) -> Scrape:
    """Every sample of the gateway's ``/metrics``, parsed by prometheus_client."""
    status, text = await asyncio.to_thread(_get, f"{http}/metrics")
    assert status == 200, text
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(samples: Scrape, name: str, **labels: str) -> float:
    """One sample's value; 0 when the series does not exist (yet)."""
    return samples.get((name, frozenset(labels.items())), 0.0)


async def scrape_until(http: str, done: Callable[[Scrape], bool], timeout: float = 10.0) -> Scrape:
    """Scrape until ``done(samples)``; the last scrape.

    Raises:
        AssertionError: Not within ``timeout`` seconds.
    """
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        samples = await scrape(http)
        if done(samples):
            return samples
        assert asyncio.get_running_loop().time() < deadline, "the metrics never got there"
        await asyncio.sleep(0.1)


async def test_metrics_follow_a_player_through_a_hand_off(
    tmp_path: Path, short_dir: Path, nats_url: str, db: str, prefix: str
) -> None:
    plant(db, "Walker", "secret", 1, on="down")
    sock = short_dir / "g1.sock"
    with ClusterProcs(tmp_path, nats_url, db, prefix) as cluster:
        cluster.worker("wa", "1")
        cluster.worker("wb", "2")
        url = cluster.gateway(
            "g1", max_conns_per_addr=2, admin_socket=sock, trusted_proxy="127.0.0.1"
        )
        http = url.replace("ws://", "http://")
        idle = await scrape_until(http, lambda m: value(m, "underhall_gateway_workers_live") == 2)
        assert value(idle, "underhall_players_online") == 0
        assert value(idle, "underhall_ready") == 1
        assert value(idle, "underhall_frames_sent_total") == 0
        for worker in ("wa", "wb"):
            age = value(idle, "underhall_gateway_worker_heartbeat_age_seconds", worker=worker)
            assert 0 <= age < 2.5
        assert value(idle, "underhall_process_resident_memory_bytes") > 0

        conn = await Connection.open(url, "Walker", token="secret")
        try:
            model = GameModel(conn.welcome)
            await play_until(conn, model, is_snap(1))
            seated = await scrape(http)
            kind = "resumed" if conn.welcome.resumed else "new"
            assert value(seated, "underhall_joins_total", kind=kind) == 1
            assert value(seated, "underhall_players_online") == 1
            assert value(seated, "underhall_connections_open") == 1
            assert value(seated, "underhall_gateway_players_by_worker", worker="wa") == 1
            # The gateway sent at least what the client has received (welcome included).
            assert value(seated, "underhall_frames_sent_total") >= conn.messages_received
            assert value(seated, "underhall_sent_bytes_total") >= conn.bytes_received

            await conn.command(CommandName.DOWN)  # wa hands the player to wb
            await play_until(conn, model, is_snap(2))
            for _ in range(2):
                await play_until(conn, model, acked(conn, await conn.command(CommandName.WAIT)))
            moved = await scrape(http)
            assert value(moved, "underhall_commands_total", command="down") == 1
            assert value(moved, "underhall_commands_total", command="wait") == 2
            assert value(moved, "underhall_gateway_messages_routed_total", type="cmd") == 3
            assert value(moved, "underhall_gateway_handoffs_total") == 1
            assert value(moved, "underhall_gateway_players_by_worker", worker="wb") == 1
            assert value(moved, "underhall_gateway_players_by_worker", worker="wa") == 0
            assert value(moved, "underhall_world_tick") > 0
            # who follows the route and the depth of the last snapshot.
            [walker] = (await admin_request(sock, cmd="who"))["players"]
            assert (walker["worker"], walker["depth"], walker["epoch"]) == ("wb", 2, 2)
            for name in ("underhall_frames_sent_total", "underhall_sent_bytes_total"):
                assert value(moved, name) > value(seated, name)
            assert value(moved, "underhall_frames_sent_total") >= conn.messages_received
            assert value(moved, "underhall_sent_bytes_total") >= conn.bytes_received

            # The per-address cap (2), through the proxy: two connections
            # of one client address, and the third is refused and counted.
            # (The player and the scrapes come from loopback: no cap.)
            via = {"X-Forwarded-For": "203.0.113.7"}
            extra = [await connect(url, additional_headers=via) for _ in range(2)]
            try:
                with pytest.raises(InvalidStatus) as over:
                    await connect(url, additional_headers=via)
                assert over.value.response.status_code == 429
            finally:
                for ws in extra:
                    await ws.close()
            refused = 1
            capped = await scrape(http)
            assert (
                value(capped, "underhall_gateway_connections_refused_total", reason="per_address")
                == refused
            )
            assert value(capped, "underhall_gateway_connections_accepted_total") == 3
        finally:
            await conn.close()
        gone = await scrape_until(http, lambda m: value(m, "underhall_players_online") == 0)
        assert value(gone, "underhall_leaves_total") == 1
        assert value(gone, "underhall_connections_open") == 0
        assert value(gone, "underhall_gateway_players_by_worker", worker="wb") == 0
        # docs/cluster.md's gateway section lists exactly what a gateway serves.
        text = (await asyncio.to_thread(_get, f"{http}/metrics"))[1]
        served = set(re.findall(r"^# TYPE (underhall_\w+)", text, re.MULTILINE))
        doc = CLUSTER_DOC.read_text()
        section = doc.split("## Watch and manage a gateway", 1)[1].split("\n## ", 1)[0]
        documented = set(re.findall(r"`(underhall_\w+)", section))
        prefixes = {n for n in documented if n.endswith("_")}  # underhall_process_*, ...
        assert prefixes == {"underhall_process_", "underhall_gateway_"}
        assert any(n.startswith("underhall_process_") for n in served)
        assert {n for n in served if not n.startswith("underhall_process_")} == (
            documented - prefixes
        )


async def test_admin_who_kick_broadcast_and_shutdown(
    tmp_path: Path, short_dir: Path, nats_url: str, db: str, prefix: str
) -> None:
    sock = short_dir / "g1.sock"
    with ClusterProcs(tmp_path, nats_url, db, prefix) as cluster:
        cluster.worker("wa", "1")
        url1 = cluster.gateway("g1", admin_socket=sock)
        url2 = cluster.gateway("g2")
        http1, http2 = (u.replace("ws://", "http://") for u in (url1, url2))
        mode = sock.stat().st_mode
        assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
        for http in (http1, http2):
            await scrape_until(http, lambda m: value(m, "underhall_ready") == 1)

        ann, welcome = await raw_hello(url1, "ann")
        assert isinstance(welcome, Welcome)
        await recv_until(ann, is_snap(1))
        bob = await Connection.open(url2, "bob")
        bob_model = GameModel(bob.welcome)
        await play_until(bob, bob_model, is_snap(1))

        who = await admin_request(sock, cmd="who")
        assert who["ok"] and who["gateway"] == "g1" and who["workers"] == ["wa"]
        assert who["draining"] is False
        [player] = who["players"]  # bob plays through g2
        assert (player["name"], player["actor"], player["worker"], player["depth"]) == (
            "ann",
            welcome.id,
            "wa",
            1,
        )
        assert player["epoch"] >= 1 and player["state"] == "playing"
        assert player["address"].startswith("127.0.0.1:")
        cli = await asyncio.create_subprocess_exec(
            *underhall_command(), "admin", "--admin-socket", str(sock), "who",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        out = (await asyncio.wait_for(cli.communicate(), 30))[0].decode()
        assert cli.returncode == 0, out
        assert out.splitlines()[0].startswith("ann ") and "worker wa" in out
        assert "1 playing" in out and "gateway g1" in out

        # Bans are answered by a worker (tests/cluster/test_cluster_admin.py).
        assert await admin_request(sock, cmd="bans") == {"ok": True, "bans": []}

        # A notice reaches the players of every gateway, as serve's does.
        said = await admin_request(sock, cmd="broadcast", text="Reboot at noon")
        assert said == {"ok": True, "players_here": 1}
        heard = await play_until(bob, bob_model, lambda m: isinstance(m, ChatOut))
        notice = await recv_until(ann, lambda m: isinstance(m, ChatOut))
        for line in (heard[-1], notice):
            assert isinstance(line, ChatOut)
            assert (line.sender, line.text, line.scope, line.to) == (
                "",
                "Reboot at noon",
                None,
                None,
            )

        # Kick: the error and close code serve uses; the name is held out.
        kicked = await admin_request(sock, cmd="kick", name="ANN")
        assert kicked["ok"] and kicked["name"] == "ANN"
        assert kicked["online"] and kicked["where"] == ["g1"]
        error = await recv_until(ann, lambda m: isinstance(m, Error))
        assert isinstance(error, Error) and (error.code, error.fatal) == ("kicked", True)
        await asyncio.wait_for(ann.wait_closed(), 5)
        assert (ann.close_code, ann.close_reason) == (1008, "kicked")
        again, refusal = await raw_hello(url1, "ann", welcome.token)
        assert isinstance(refusal, Error) and (refusal.code, refusal.fatal) == ("kicked", True)
        assert f"{KICK_HOLD_S:.0f} s" in refusal.msg
        await asyncio.wait_for(again.wait_closed(), 5)
        assert again.close_code == 1008
        nobody = await admin_request(sock, cmd="kick", name="ann")
        assert nobody["ok"] and not nobody["online"] and nobody["where"] == []

        counted = await scrape_until(http1, lambda m: value(m, "underhall_players_online") == 0)
        assert value(counted, "underhall_admin_actions_total", action="kick") == 2
        assert value(counted, "underhall_admin_actions_total", action="broadcast") == 1
        assert value(counted, "underhall_admin_actions_total", action="who") == 0
        assert value(counted, "underhall_join_refusals_total", code="kicked") == 1
        assert value(counted, "underhall_gateway_chat_lines_total", scope="notice") == 1
        assert value(counted, "underhall_gateway_chat_deliveries_total", scope="notice") == 1
        other = await scrape(http2)
        assert value(other, "underhall_gateway_chat_deliveries_total", scope="notice") == 1

        # Shutdown with a grace: the player is told, joins are refused, then it stops.
        cy = await Connection.open(url1, "cy")
        cy_model = GameModel(cy.welcome)
        await play_until(cy, cy_model, is_snap(1))
        answer = await admin_request(sock, cmd="shutdown", grace=1)
        assert answer == {"ok": True, "grace_s": 1.0, "players": 1}
        warned = await play_until(cy, cy_model, lambda m: isinstance(m, ChatOut))
        assert isinstance(warned[-1], ChatOut) and warned[-1].sender == ""
        assert "stops in 1 s" in warned[-1].text
        assert await asyncio.to_thread(_get, f"{http1}/readyz") == (503, "draining\n")
        with pytest.raises(ConnectionClosed, match="shutdown"):
            await Connection.open(url1, "dee")
        ended = await play_until(cy, cy_model, lambda m: isinstance(m, Error), timeout=5)
        assert isinstance(ended[-1], Error) and ended[-1].code == "shutdown"
        assert await asyncio.to_thread(cluster.wait, "g1", 10) == 0
        assert not sock.exists()
        # The other gateway plays on.
        assert value(await scrape(http2), "underhall_players_online") == 1
        await bob.close()
        await cy.close()


def test_snapshot_depth_reads_snapshots_only() -> None:
    snap = Snapshot(
        tick=5, depth=3, w=2, h=1, map=b"\x01\x01", fov=[0, 0, 2, 1, b"\x03"],
        actors=[], objs=[], me={}, ack=0,
    )  # fmt: skip
    assert snapshot_depth(encode_server(snap)) == 3
    assert snapshot_depth(encode_server(Delta(tick=6, ack=1))) is None
    assert snapshot_depth(encode_server(ChatOut(sender="", text="snap", tick=1))) is None
    assert snapshot_depth(b"\x8b\xa1t\xa4snap") is None  # cut short
    assert snapshot_depth(b"") is None


def test_admin_command_lines_in_the_cluster_doc_parse() -> None:
    from server.cli import build_parser

    lines = re.findall(r"^underhall admin (.*?)(?:  #.*)?$", CLUSTER_DOC.read_text(), re.MULTILINE)
    assert len(lines) >= 4
    for line in lines:
        args = build_parser().parse_args(["admin", *shlex.split(line)])
        assert args.admin_socket is not None
