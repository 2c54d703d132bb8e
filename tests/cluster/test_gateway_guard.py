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
        url = cluster.gateway("g1", max_conns_per_addr=2, trusted_proxy="127.0.0.1")
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
        # Through the proxy, each client's own address is capped.
        via = {"X-Forwarded-For": "203.0.113.7"}
        first = await connect(url, additional_headers=via)
        second = await connect(url, additional_headers=via)
        other = await connect(url, additional_headers={"X-Forwarded-For": "203.0.113.8"})
        mine = await connect(url)  # the host's own (loopback): no cap
        try:
            with pytest.raises(InvalidStatus) as refused:
                await connect(url, additional_headers=via)
            assert refused.value.response.status_code == 429
        finally:
            for ws in (first, second, other, mine):
                await ws.close()
        # A closed connection frees its place.
        third = await connect(url, additional_headers=via)
        await third.close()
