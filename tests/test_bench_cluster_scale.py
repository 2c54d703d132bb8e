"""``bench/cluster_scale.py`` at a tiny scale: two workers, one gateway and 40
spread clients; one worker is killed mid-window. Every client gets in and
plays again after the kill, nothing is lost or duplicated, and the figures
are there and sane. Speed is not asserted.

It uses the cluster tests' NATS and PostgreSQL (the machine's, else private
ones, else a skip), a database, subject prefix, ports and temporary
directory of its own, and pins nothing, so it may run beside other tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.cluster.natsenv import require_nats
from tests.pgdb import pg_database

__all__ = ["pg_database"]

ROOT = Path(__file__).resolve().parents[1]
N = 40
WINDOW_S = 8.0
TICK_RATE = 10
SAVE_INTERVAL_S = 1.0


def test_the_cluster_benchmark_measures_a_cluster_and_a_killed_worker(pg_database: str) -> None:
    nats_url = require_nats()
    cmd = [
        sys.executable, "bench/cluster_scale.py", "-n", str(N), "--workers", "2",
        "--gateways", "1", "--depths", "4", "--join-rate", "400", "--warmup", "0.5",
        "--window", str(WINDOW_S), "--kill-worker", "--lease", "2",
        "--save-interval", str(SAVE_INTERVAL_S), "--recover-timeout", "20", "--no-pin",
        "--nats", nats_url, "--pg", pg_database, "--json",
    ]  # fmt: skip
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=90, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    row: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    assert row["requested"] == row["clients"] == row["settled"] == N, row
    assert row["joins_refused"] == row["connect_failures"] == row["errors"] == {}, row
    assert row["problems"] == [], row
    assert row["join_snap_p50_ms"] is not None and row["join_snap_p50_ms"] > 0, row
    assert row["window_s"] >= WINDOW_S, row
    procs = {p["name"]: p for p in row["processes"]}
    assert {"w0", "w1", "g0", "load0"} <= set(procs), procs
    for name in ("w0", "w1", "g0"):
        assert procs[name]["cpu_pct"] > 0, procs[name]
    survivor = procs["w1" if row["kill"]["worker"] == "w0" else "w0"]
    assert 0 < survivor["ticks_per_s"] <= 1.1 * TICK_RATE, survivor
    assert procs["g0"]["players"] == N, procs["g0"]
    # The workers cannot deliver more than every client once a tick.
    assert 0 < row["client_ticks_per_s"] <= 1.1 * N * TICK_RATE, row
    assert row["us_per_client_tick"] > 0 and row["gateway_us_per_client_tick"] > 0, row
    assert row["frames_per_client_s"] > 0 and row["bytes_per_client_s"] > 0, row
    assert row["gateway_kb_per_player"] is not None, row
    kill = row["kill"]
    assert kill["players"] > 0 and kill["recovered"] == kill["players"], kill
    assert kill["gone"] == kill["lost_over_interval"] == 0, kill
    assert kill["recovery_s"] is not None and kill["recovery_s"] > 0, kill
    assert kill["lost_max_s"] is not None and kill["lost_max_s"] <= SAVE_INTERVAL_S + 0.2, kill
