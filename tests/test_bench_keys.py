"""``bench/tick.py --keys``: the bytes it gives each field of the deltas add
up to the deltas' bytes, less one byte of map header per delta."""

from __future__ import annotations

from bench.tick import run
from protocol.messages import DELTA_KEYS


def test_the_fields_bytes_add_up_to_the_deltas() -> None:
    keys: dict[str, list[int]] = {}
    run(30, 8, seed=3, keys=keys)
    total, deltas = keys.pop("")
    assert deltas > 0 and set(keys) <= set(DELTA_KEYS)
    assert {"st", "ack"} <= set(keys)  # walkers step and their commands are acknowledged
    # every delta has fewer than 16 fields: a one-byte map header
    assert sum(size for size, _ in keys.values()) + deltas == total
    assert all(0 < carried <= deltas for _, carried in keys.values())
