"""``bench/floor.py``: at a tiny scale, every client gets in, the server sends
the frames it is asked to and the clients get them, the server decodes every
command the clients send, and the CPU figures are there. Speed is not asserted."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

N = 200
"""Clients: enough that the server spends ~0.1 s of CPU in the window
(well above the 10 ms grain of ``/proc/PID/stat``), few enough to join in 0.2 s."""
FRAMES_PER_TICK = 0.5
COMMANDS_PER_TICK = 0.5
TICK_RATE = 10


def _floor(send: str, recv: str) -> dict[str, Any]:
    cmd = [
        sys.executable, "bench/floor.py", "-n", str(N), "--send", send, "--recv", recv,
        "--frames-per-tick", str(FRAMES_PER_TICK), "--frame-bytes", "40",
        "--commands-per-tick", str(COMMANDS_PER_TICK), "--walk-every", "1",
        "--rate", "1000", "--warmup", "0.5", "--window", "2", "--json",
    ]  # fmt: skip
    done = subprocess.run(
        cmd,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    row: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return row


@pytest.mark.alone  # it pins to both cores and asserts the tick rate the server kept
@pytest.mark.skipif(
    not sys.platform.startswith("linux")
    or shutil.which("taskset") is None
    or (os.cpu_count() or 1) < 2,
    reason="bench/floor.py pins with taskset (util-linux) to two cores and reads /proc (Linux)",
)
@pytest.mark.parametrize(("send", "recv"), [("broadcast", "iterate"), ("transport", "frames")])
def test_the_floor_sends_receives_and_counts_what_it_was_asked(send: str, recv: str) -> None:
    row = _floor(send, recv)
    assert row["requested"] == row["clients"] == N, row
    assert row["connect_failures"] == row["lost"] == row["undecodable"] == 0, row
    w, ticks, clients = row["window_s"], row["ticks"], row["clients"]
    assert w > 0 and ticks > 0, row
    # Each client's credit grows by FRAMES_PER_TICK a tick and pays one per
    # frame, so over the window's ticks it gets FRAMES_PER_TICK × ticks
    # frames, give or take one (its credit where the window starts and ends).
    assert abs(row["frames_sent"] - FRAMES_PER_TICK * ticks * clients) <= clients, row
    # Per second: a fixed-rate clock completes 10 × w ticks, give or take one,
    # in w seconds, so frames/s per client is FRAMES_PER_TICK × 10 within
    # (FRAMES_PER_TICK × 1 tick + 1 frame) / w; the 0.01 is the report's rounding.
    tol = (FRAMES_PER_TICK + 1) / w + 0.01
    assert abs(row["frames_per_client_s"] - FRAMES_PER_TICK * TICK_RATE) <= tol, row
    # A frame is read within its tick on loopback: at each end of the window
    # at most one frame per client was sent and not yet got.
    assert abs(row["frames_got"] - row["frames_sent"]) <= clients, row
    assert abs(row["frames_got_per_client_s"] - FRAMES_PER_TICK * TICK_RATE) <= tol + 1 / w, row
    # The clients pace their commands by the same credit on their own clock.
    tol = (COMMANDS_PER_TICK + 1) / w + 0.01
    assert abs(row["commands_per_client_s"] - COMMANDS_PER_TICK * TICK_RATE) <= tol, row
    # A client sends at most one command per tick, and one arrives within the
    # tick: at each end of the window at most one per client was in flight.
    assert abs(row["commands_recv"] - row["commands_sent"]) <= clients, row
    assert row["commands_recv"] > 0
    assert row["cpu_user_pct"] > 0 and row["cpu_sys_pct"] > 0, row
    assert row["us_per_client_tick"] > 0 and row["write_us_per_client_tick"] > 0, row
    assert row["loadgen_cpu_pct"] > 0, row
    assert row["bytes_per_frame"] == 40, row
