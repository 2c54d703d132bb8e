"""``bench/gateway_alone.py``: at a tiny scale, every client is welcomed by a
real gateway in front of the fake worker, gets the frames the fake worker
publishes for it, and its commands reach the fake worker; the CPU figure is
there. Speed is not asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.cluster.natsenv import require_nats

ROOT = Path(__file__).resolve().parents[1]
N = 100


def test_the_gateway_alone_gets_every_client_in_and_forwards_both_ways() -> None:
    nats_url = require_nats()
    cmd = [
        sys.executable, "bench/gateway_alone.py", "-n", str(N), "--window", "2",
        "--warmup", "0.5", "--rate", "1000", "--nats", nats_url, "--json",
    ]  # fmt: skip
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    row = json.loads(done.stdout.strip().splitlines()[-1])
    assert row["note"] == ""
    assert row["welcomed"] == N
    assert row["gateway_us_per_client_tick"] is not None
    assert row["nats_us_per_client_tick"] is None  # another's NATS: not measured
    assert 5 <= row["ticks_per_s"] <= 15
    published, received = row["frames_published_per_client_s"], row["frames_received_per_client_s"]
    assert published > 3
    assert abs(received - published) <= 0.5 * published
    assert row["commands_per_s"] > 0
    assert 0 < row["inbound_per_s"] <= row["commands_per_s"]
