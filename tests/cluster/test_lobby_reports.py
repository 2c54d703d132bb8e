"""The cluster's lobby (issue 47): what a worker reports of its players on
``P.lobby.W`` and how a gateway merges the reports into its ``/lobby.json``
(server/cluster/worker.py, server/cluster/gateway.py). The end-to-end test,
on a real cluster, is tests/conformance/test_web_page.py."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import cast

from nats.aio.msg import Msg

from server.cluster.bus import LOBBY_EVERY_S, SILENT_S
from server.cluster.gateway import Gateway
from server.cluster.messages import LobbyPlayer, LobbyReport, decode, encode
from server.cluster.worker import Worker
from server.game.host import Host
from server.net.web import LOBBY_ROWS, LobbyRow, lobby_order
from server.sim.world import World


def ranked(row: LobbyRow | LobbyPlayer) -> tuple[int, int, str]:
    """A row's place in the lobby's order."""
    return lobby_order(row.level, row.depth, row.name)


def test_a_worker_reports_every_player_and_lists_the_first_hundred() -> None:
    worker = Worker("nats://127.0.0.1:1", "postgresql://nobody@127.0.0.1/none", worker_id="w1")
    worker.world = World(7, populate=False)
    worker.host = Host(worker.world, tick_rate=10)
    players = LOBBY_ROWS + 20
    for i in range(players):
        actor = worker.world.join(f"p{i:03d}", "mage" if i % 2 else "warrior")
        actor.level = 1 + i % 9
        worker._seat(actor.name, actor.id, 1, "g1").session.turns = i
    report = worker.lobby_report()
    assert report.online == players and len(report.players) == LOBBY_ROWS
    assert report.players == sorted(report.players, key=ranked)
    listed = {p.name for p in report.players}
    left_out = [a for a in worker.world.actors.values() if a.name not in listed]
    assert max(a.level for a in left_out) <= min(p.level for p in report.players)
    first = next(p for p in report.players if p.name == "p008")
    assert first == LobbyPlayer("p008", "warrior", 9, 1, 8)
    assert decode(encode(report), LobbyReport) == report  # as the bus carries it


async def test_a_gateway_merges_the_workers_latest_reports() -> None:
    gateway = Gateway("nats://127.0.0.1:1", gateway_id="g1")
    assert gateway.lobby_players() == (0, [])
    now = time.monotonic()
    moving = LobbyPlayer("Mover", "mage", 3, 1, 7)
    arrived = LobbyPlayer("Mover", "mage", 3, 2, 8)
    gone = LobbyReport(1, [LobbyPlayer("Ghost", "", 1, 1, 0)])
    gateway.lobby_reports["wa"] = (now - 1.5, LobbyReport(1, [moving]))  # before the hand-off
    gateway.lobby_reports["gone"] = (now - LOBBY_EVERY_S - SILENT_S - 1, gone)
    newer = LobbyReport(2, [arrived, LobbyPlayer("Deep", "monk", 5, 2, 40)])
    await gateway._on_lobby_report(
        cast(Msg, SimpleNamespace(subject="uh.lobby.wb", data=encode(newer)))
    )
    online, rows = gateway.lobby_players()
    assert online == 3
    assert sorted(rows, key=ranked) == [
        LobbyRow("Deep", "monk", 5, 2, 40),
        LobbyRow("Mover", "mage", 3, 2, 8),  # once, as the newer report has it
    ]
    assert set(gateway.lobby_reports) == {"wa", "wb"}  # a silent worker's report is forgotten
