"""Prometheus metrics and health endpoints of a real server, scraped over HTTP."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

import pytest
from prometheus_client.exposition import generate_latest

from client.bots import run_bots_async
from server.game.game import Game
from server.game.store import Store
from server.net.collector import MAX_EVERY_TICKS
from server.net.metrics import Declared
from server.net.server import GameServer
from server.sim.world import World
from server.store import open_store
from tests.net.conftest import Started, http_get, join, recv_until, scrape, send, total, url


async def test_health_endpoints_answer_on_the_game_port(start_server: Started) -> None:
    server = await start_server(populate=False)
    assert await http_get(server.port, "/healthz") == (200, "text/plain; charset=utf-8", "ok\n")
    assert (await http_get(server.port, "/readyz"))[:1] == (200,)
    ws, _, _ = await join(server, "ann")  # websockets still work on any other path
    await send(ws, {"t": "ping", "id": 5})
    assert (await recv_until(ws, lambda m: m["t"] == "pong"))["id"] == 5
    await ws.close()


async def test_metrics_move_as_bots_play(start_server: Started) -> None:
    server = await start_server(seed=3)
    before = await scrape(server.port)
    assert before[("underhall_players_online", ())] == 0
    assert total(before, "underhall_joins_total") == 0
    bots = asyncio.create_task(
        run_bots_async(url(server), 6, duration=3.0, seed=2, name_prefix="mbot")
    )
    await asyncio.sleep(2.0)
    during = await scrape(server.port)
    report = await asyncio.wait_for(bots, 30)
    await asyncio.sleep(0.3)  # the server notices the last closes
    after = await scrape(server.port)

    assert report.clients_connected == 6
    assert during[("underhall_players_online", ())] == 6
    assert total(during, "underhall_players_by_depth") == 6
    assert during[("underhall_connections_open", ())] >= 6
    assert after[("underhall_players_online", ())] == 0
    assert after[("underhall_connections_open", ())] == 0
    assert after[("underhall_joins_total", (("kind", "new"),))] == 6
    assert after[("underhall_leaves_total", ())] == 6
    commands = total(after, "underhall_commands_total")
    assert commands >= report.commands_sent - report.protocol_errors > 0
    assert after[("underhall_frames_sent_total", ())] > before[("underhall_frames_sent_total", ())]
    assert after[("underhall_sent_bytes_total", ())] > after[("underhall_frames_sent_total", ())]
    ticks = after[("underhall_tick_duration_seconds_count", ())]
    assert ticks > before[("underhall_tick_duration_seconds_count", ())] + 20
    assert after[("underhall_world_tick", ())] >= ticks
    assert after[("underhall_tick_duration_seconds_sum", ())] > 0
    # Bots that read everything are never behind: no message is skipped.
    assert during[("underhall_clients_behind", ())] == 0
    assert after[("underhall_frames_skipped_total", ())] == 0
    assert after[("underhall_slow_clients_dropped_total", ())] == 0
    assert after[("underhall_gc_frozen_objects", ())] == gc.get_freeze_count()
    assert 1 <= after[("underhall_gc_ticks_between_collections", ())] <= MAX_EVERY_TICKS


async def test_rejects_protocol_errors_and_saves_are_counted(start_server: Started) -> None:
    server = await start_server(populate=False)
    ws, welcome, _ = await join(server, "bea")
    await send(ws, {"t": "cmd", "seq": 0, "c": "choose", "opt": "health"})
    refused = await recv_until(ws, lambda m: bool(m.get("rej")))
    seq, code = refused["rej"]  # protocol 6: [seq, code], the code into welcome.reasons
    reason = welcome["reasons"][code]
    assert (seq, reason) == (0, "no_choice")
    await ws.send(b"\xc1")  # never valid msgpack
    await recv_until(ws, lambda m: m["t"] == "error")
    server.game.save_all()
    samples = await scrape(server.port)
    assert samples[("underhall_command_rejects_total", (("reason", reason),))] == 1
    assert samples[("underhall_commands_total", (("command", "choose"),))] == 1
    assert samples[("underhall_protocol_errors_total", (("code", "bad_msgpack"),))] == 1
    assert samples[("underhall_saves_total", (("what", "checkpoint"),))] >= 1
    assert samples[("underhall_save_duration_seconds_count", (("what", "checkpoint"),))] >= 1
    assert total(samples, "underhall_database_errors_total") == 0
    await ws.close()


async def test_database_errors_are_counted_and_the_server_goes_on(start_server: Started) -> None:
    server = await start_server(populate=False)
    ws, _, _ = await join(server, "dee")  # a character and a level to write
    server.game.store.close()  # every later write fails
    await asyncio.sleep(0.2)
    server.game.checkpoint()  # handed to the writer thread, which fails and will retry
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for _ in range(100):
        samples = await scrape(server.port)
        if samples.get(("underhall_database_errors_total", (("what", "checkpoint"),))):
            break
        await asyncio.sleep(0.05)
    assert samples[("underhall_database_errors_total", (("what", "checkpoint"),))] >= 1
    assert (await http_get(server.port, "/healthz"))[0] == 200
    # The database comes back: the writer's retry saves what failed.
    server.game.saver.store = open_store(server.game.store.url)
    assert await asyncio.to_thread(server.game.saver.flush, 10.0)
    samples = await scrape(server.port)
    assert samples[("underhall_saves_total", (("what", "checkpoint"),))] >= 1
    await ws.close()


async def test_readyz_fails_from_the_first_moment_of_a_drain(start_server: Started) -> None:
    server = await start_server(populate=False)
    ws, _, _ = await join(server, "cid")
    assert (await http_get(server.port, "/readyz"))[0] == 200
    assert server.drain(grace_s=2.0) == 2.0
    status, _, body = await http_get(server.port, "/readyz")
    assert (status, body) == (503, "draining\n")
    assert (await http_get(server.port, "/healthz"))[0] == 200
    samples = await scrape(server.port)
    assert samples[("underhall_ready", ())] == 0 and samples[("underhall_draining", ())] == 1
    await ws.close()


async def test_metrics_port_serves_only_http(tmp_path: Path) -> None:
    store = Store(tmp_path / "w.db")
    server = GameServer(Game(World(1, populate=False), store), "127.0.0.1", 0, 20, metrics_port=0)
    ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(server.run(ready, install_signals=False))
    await asyncio.wait_for(ready, 5)
    try:
        assert server.metrics_port not in (None, 0, server.port)
        assert server.metrics_port is not None
        assert (await http_get(server.metrics_port, "/healthz"))[0] == 200
        assert ("underhall_players_online", ()) in await scrape(server.metrics_port)
        status, _, body = await http_get(server.metrics_port, "/")
        assert status == 404 and "/metrics" in body
    finally:
        server.stop()
        await asyncio.wait_for(task, 10)
        store.close()


async def test_two_servers_in_one_process_keep_their_own_metrics(
    start_server: Started, tmp_path: Path
) -> None:
    one = await start_server(populate=False, db=tmp_path / "one.db")
    two = await start_server(populate=False, db=tmp_path / "two.db")
    ws, _, _ = await join(one, "dee")
    assert (await scrape(one.port))[("underhall_players_online", ())] == 1
    assert (await scrape(two.port))[("underhall_players_online", ())] == 0
    await ws.close()


def test_a_tally_counts_as_a_counter_and_refuses_what_one_refuses() -> None:
    metrics = Declared(("front", "gateway"))
    metrics.count("commands", "move")
    metrics.count("commands", "move", by=2)
    metrics.count("routed", "cmd")
    text = generate_latest(metrics.registry).decode()
    assert 'underhall_commands_total{command="move"} 3.0' in text
    assert 'underhall_gateway_messages_routed_total{type="cmd"} 1.0' in text
    assert "# TYPE underhall_commands_total counter" in text
    for bad in (("move", "extra"), ()):
        with pytest.raises(ValueError):
            metrics.count("commands", *bad)
    with pytest.raises(ValueError):
        metrics.count("commands", "move", by=-1)
    assert metrics.tally("commands").counts == {("move",): 3}
