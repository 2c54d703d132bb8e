"""End to end: a real ``underhall serve`` subprocess played by real bot clients.

Every wait is bounded. Speed is reported by the bots, never asserted here.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from client.bots import run_bots, run_bots_async
from tests.serverproc import running_server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def server_url(tmp_path: Path) -> Iterator[str]:
    """A real ``underhall serve`` (seed 7, 20 ticks/s); its URL once it listens."""
    with running_server(tmp_path, seed=7, tick_rate=20) as url:
        yield url


async def test_24_bots_play_together(server_url: str) -> None:
    report = await asyncio.wait_for(run_bots_async(server_url, 24, duration=4.0, seed=1), 60.0)
    summary = report.format_table()
    assert report.clients_connected == 24, summary
    assert report.clients_at_end == 24, summary
    assert report.protocol_errors == 0, summary
    assert report.commands_sent > 0, summary
    assert report.acks_received > 0, summary
    assert report.latency_samples > 0, summary
    assert report.snapshots_received >= 24, summary
    assert report.deltas_received > 0, summary
    assert report.bots_moved >= 20, summary
    assert report.bots_saw_player >= 2, summary  # they spawn together
    assert report.ok


def test_bots_command_line_prints_json(server_url: str) -> None:
    """The bots' command line against a ``serve`` with its default caps: 40
    bots, over the 32 connections and the 30 new characters an address may
    have, all get in (they come from loopback, the operator's own)."""
    cmd = [
        sys.executable, "-m", "server.cli", "bots", "--url", server_url,
        "-n", "40", "--duration", "3", "--json",
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, timeout=60, check=False)
    out = done.stdout.decode()
    assert done.returncode == 0, out + done.stderr.decode()
    lines = [line for line in out.splitlines() if line.startswith("{")]
    assert len(lines) == 1, out
    report = json.loads(lines[0])
    assert report["clients_requested"] == 40
    assert report["clients_connected"] == 40
    assert report["protocol_errors"] == 0
    assert report["commands_sent"] > 0
    assert 2.5 <= report["duration_s"] <= 10.0
    for key in ("bytes_received", "latency_p50_ms", "latency_p99_ms", "bots_moved", "deaths"):
        assert key in report


async def test_without_a_server_no_client_connects_and_the_run_fails() -> None:
    url = f"ws://127.0.0.1:{_free_port()}"
    report = await asyncio.wait_for(run_bots_async(url, 3, duration=0.5), 30.0)
    assert report.clients_connected == 0
    assert report.connect_failures == 3
    assert report.protocol_errors == 0  # unreachable is not a protocol error
    assert not report.ok


def test_run_bots_exit_status_is_1_when_no_client_connects(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run_bots(f"ws://127.0.0.1:{_free_port()}", 2, 0.5, as_json=True) == 1
    assert json.loads(capsys.readouterr().out)["clients_connected"] == 0
