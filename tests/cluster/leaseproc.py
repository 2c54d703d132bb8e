"""A process that races for level leases, for tests/cluster/test_lease.py.

``python -m tests.cluster.leaseproc URL BUCKET OWNER START DEPTHS HOLD_S``:
waits until wall-clock time START, tries to claim every depth in DEPTHS
(comma-separated), prints ``won <depth>`` for each lease it got and
``ready``, then renews them every second for HOLD_S seconds.
"""

from __future__ import annotations

import asyncio
import sys
import time

import nats

from server.cluster.lease import Leases, open_bucket


async def main(
    url: str, bucket: str, owner: str, start: float, depths: list[int], hold: float
) -> None:
    nc = await nats.connect(url)
    kv = await open_bucket(nc.jetstream(), bucket, 2.0)
    leases = Leases(kv, owner, 2.0)
    await asyncio.sleep(max(0.0, start - time.time()))
    won = await asyncio.gather(*(leases.claim(d) for d in depths))
    for depth, ok in zip(depths, won, strict=True):
        if ok:
            print(f"won {depth}", flush=True)
    print("ready", flush=True)
    end = time.monotonic() + hold
    while time.monotonic() < end:
        await asyncio.sleep(0.5)
        await leases.renew_all()
    await nc.close()


if __name__ == "__main__":
    url, bucket, owner, start, depths, hold = sys.argv[1:7]
    asyncio.run(
        main(url, bucket, owner, float(start), [int(d) for d in depths.split(",")], float(hold))
    )
