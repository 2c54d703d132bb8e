"""A gateway puts serve's caps on connections and answers health checks."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from tests.cluster.procs import ClusterProcs


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return int(answer.status), answer.read().decode()
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.read().decode()


async def test_health_checks_and_the_per_address_cap(
    tmp_path: Path, nats_url: str, db: str, prefix: str
) -> None:
    with ClusterProcs(tmp_path, nats_url, db, prefix) as cluster:
        url = cluster.gateway("g1", max_conns_per_addr=2)
        http = url.replace("ws://", "http://")
        assert await asyncio.to_thread(_get, f"{http}/healthz") == (200, "ok\n")
        # No worker yet: alive, but not ready for players.
        assert await asyncio.to_thread(_get, f"{http}/readyz") == (503, "no worker\n")
        cluster.worker("wa", "1")
        deadline = asyncio.get_running_loop().time() + 10.0
        while (await asyncio.to_thread(_get, f"{http}/readyz"))[0] != 200:
            assert asyncio.get_running_loop().time() < deadline, "never ready"
            await asyncio.sleep(0.2)
        assert await asyncio.to_thread(_get, f"{http}/readyz") == (200, "ready\n")
        first = await connect(url)
        second = await connect(url)
        try:
            with pytest.raises(InvalidStatus) as refused:
                await connect(url)
            assert refused.value.response.status_code == 429
        finally:
            await first.close()
            await second.close()
        # A closed connection frees its place.
        third = await connect(url)
        await third.close()
