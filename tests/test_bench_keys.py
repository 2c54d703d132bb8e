"""``bench/tick.py``: the bytes ``--keys`` gives each field of the deltas add
up to the deltas' bytes, less one byte of map header per delta; ``--split``
times the parts of the world's step."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from protocol.messages import DELTA_KEYS

ROOT = Path(__file__).resolve().parents[1]


def test_the_fields_bytes_add_up_to_the_deltas() -> None:
    out = subprocess.run(
        [sys.executable, "bench/tick.py", "-n", "30", "--ticks", "8", "--seed", "3", "--keys"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    head = re.search(r"^deltas ([\d,]+), ([\d.]+) bytes each", out, flags=re.MULTILINE)
    assert head, out
    mean = float(head.group(2))
    rows = re.findall(r"^  (\w+) +([\d.]+)  in +([\d.]+)% of deltas$", out, flags=re.MULTILINE)
    fields = {name: (float(size), float(share)) for name, size, share in rows}
    assert set(fields) <= set(DELTA_KEYS) and {"st", "ack"} <= set(fields), out
    # A delta of fewer than 16 fields has a one-byte map header; each figure
    # is rounded to 0.005, so the sum may be off by that much per field.
    assert abs(sum(size for size, _ in fields.values()) + 1 - mean) <= 0.005 * (len(fields) + 1)
    assert all(0 < share <= 100 for _, share in fields.values())


def _tick_bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "bench/tick.py", "-n", "20", "--ticks", "4", "--seed", "3", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_split_times_the_parts_of_the_step() -> None:
    done = _tick_bench("--split")
    assert done.returncode == 0, done.stderr
    parts = dict(re.findall(r"^  (\w+) +([\d.]+) ms/tick", done.stdout, flags=re.MULTILINE))
    assert {"world_step", "update_views", "tick_index", "views"} <= set(parts), done.stdout
    assert float(parts["update_views"]) <= float(parts["world_step"])
