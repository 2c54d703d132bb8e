"""End to end: ``underhall serve --record-world`` played by real bots, and its
recording replayed (issue 45, item 4). Every wait is bounded."""

from __future__ import annotations

import asyncio
from pathlib import Path

from client.bots import run_bots_async
from server.game.worldrecord import newest_recording
from server.game.worldreplay import replay_world
from tests.serverproc import STOP_TIMEOUT_S, server_process

BOTS = 6


async def test_a_served_game_with_bots_replays_every_tick(tmp_path: Path) -> None:
    with server_process(tmp_path, tick_rate=20, args=["--record-world", "rec"]) as (url, _):
        report = await asyncio.wait_for(run_bots_async(url, BOTS, duration=3.0, seed=2), 60.0)
        assert report.clients_connected == BOTS and report.commands_sent > 0
    assert "recording the world to" in (tmp_path / "server.log").read_text()
    replay = replay_world(newest_recording(tmp_path / "rec"))
    assert replay.ok and replay.ended, replay.summary()
    assert replay.joins == replay.leaves == BOTS, replay.summary()
    assert replay.ticks >= 40 and replay.commands > 0, replay.summary()


async def test_a_recording_killed_with_its_server_replays_up_to_the_kill(tmp_path: Path) -> None:
    with server_process(tmp_path, tick_rate=20, args=["--record-world", "rec"]) as (url, proc):
        bots = asyncio.create_task(run_bots_async(url, BOTS, duration=5.0, seed=3))
        await asyncio.sleep(3.0)
        proc.kill()  # kill -9, the bots still playing
        proc.wait(STOP_TIMEOUT_S)
        await asyncio.wait_for(bots, 60.0)
    replay = replay_world(newest_recording(tmp_path / "rec"))
    assert replay.ok and not replay.ended, replay.summary()
    assert replay.joins == BOTS and replay.ticks >= 20, replay.summary()
