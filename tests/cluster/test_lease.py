"""Level leases against a real NATS server: one owner per level, expiry on death."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import sys
import time

import nats
import pytest

from server.cluster.lease import Leases, open_bucket

LEASE_S = 2.0
"""Lease time of these tests' buckets (the workers' default is 6 s)."""
SWEEP_S = 1.5
"""Allowance for the server's expiry sweep beyond the max age."""


async def test_racing_tasks_give_one_owner_per_level(nats_url: str, prefix: str) -> None:
    conns = [await nats.connect(nats_url) for _ in range(6)]
    try:
        kvs = [await open_bucket(nc.jetstream(), f"{prefix}_leases", LEASE_S) for nc in conns]
        racers = [Leases(kv, f"w{i}", LEASE_S) for i, kv in enumerate(kvs)]
        depths = list(range(1, 9))
        results = await asyncio.gather(*(r.claim(d) for d in depths for r in racers))
        for k, depth in enumerate(depths):
            winners = [
                r.owner for r, ok in zip(racers, results[k * 6 : k * 6 + 6], strict=True) if ok
            ]
            assert len(winners) == 1, (depth, winners)
            assert await racers[0].owner_of(depth) == winners[0]
        # A loser's later claim still loses while the winner renews.
        owner = await racers[0].owner_of(1)
        losers = [r for r in racers if r.owner != owner]
        holder = next(r for r in racers if r.owner == owner)
        assert await holder.renew_all() == []
        assert not await losers[0].claim(1)
    finally:
        for nc in conns:
            await nc.close()


def test_racing_processes_give_one_owner_per_level(nats_url: str, prefix: str) -> None:
    start = time.time() + 2.0
    depths = "1,2,3,4,5"
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.cluster.leaseproc",
                nats_url,
                f"{prefix}_leases",
                f"p{i}",
                str(start),
                depths,
                "0",
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    outs = [p.communicate(timeout=30)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    wins: dict[int, list[int]] = {}
    for i, out in enumerate(outs):
        assert "ready" in out
        for line in out.splitlines():
            if line.startswith("won "):
                wins.setdefault(int(line.split()[1]), []).append(i)
    assert sorted(wins) == [1, 2, 3, 4, 5]
    assert all(len(w) == 1 for w in wins.values()), wins


async def test_killed_holder_lease_expires_and_is_taken_over(nats_url: str, prefix: str) -> None:
    bucket = f"{prefix}_leases"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.cluster.leaseproc",
        nats_url,
        bucket,
        "victim",
        str(time.time()),
        "7",
        "60",
        stdout=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    try:
        first = await asyncio.wait_for(proc.stdout.readline(), 20)
        assert first.decode().strip() == "won 7"
        nc = await nats.connect(nats_url)
        try:
            heir = Leases(await open_bucket(nc.jetstream(), bucket, LEASE_S), "heir", LEASE_S)
            await asyncio.sleep(LEASE_S + 0.5)  # the holder renews: still its lease
            assert await heir.owner_of(7) == "victim"
            assert not await heir.claim(7)
            proc.send_signal(signal.SIGKILL)
            killed = time.monotonic()
            while not await heir.claim(7):
                assert time.monotonic() - killed < LEASE_S + SWEEP_S + 1.0, "lease never expired"
                await asyncio.sleep(0.1)
            assert await heir.owner_of(7) == "heir"
        finally:
            await nc.close()
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


async def test_lost_lease_is_reported_by_renewal(nats_url: str, prefix: str) -> None:
    nc = await nats.connect(nats_url)
    try:
        kv = await open_bucket(nc.jetstream(), f"{prefix}_leases", LEASE_S)
        a, b = Leases(kv, "a", LEASE_S), Leases(kv, "b", LEASE_S)
        assert await a.claim(3)
        await kv.delete("level.3")  # as if it expired
        assert await b.claim(3)
        assert await a.renew_all() == [3]
        assert 3 not in a.held
        await a.release(3)  # not ours any more: b keeps it
        assert await b.owner_of(3) == "b"
        await b.release(3)
        assert await a.owner_of(3) is None
    finally:
        await nc.close()


@pytest.fixture(autouse=True)
def _cleanup_buckets(nats_url: str, prefix: str) -> object:
    yield None

    async def drop() -> None:
        nc = await nats.connect(nats_url)
        with contextlib.suppress(Exception):  # the test may not have made it
            await nc.jetstream().delete_key_value(f"{prefix}_leases")
        await nc.close()

    asyncio.run(drop())
