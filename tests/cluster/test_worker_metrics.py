"""A worker's ``/metrics``, ``/healthz`` and ``/readyz`` under load: two real
``underhall worker`` processes with ``--metrics-port``, a gateway, walking
lean clients and stair-tripping clients, scraped while they play.

Every figure is checked against what the test knows independently: who
stands where, how many trips were made, what the gateway says. Every wait
is bounded.
"""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import psycopg

from client.loadgen import LoadConfig, run_load_async
from tests.cluster.procs import ClusterProcs, plant
from tests.cluster.trips import TripResult, trip
from tests.net.conftest import http_get, scrape, total

WALKERS = 24
"""Lean clients that join as new characters (depth 1) and walk there."""
TRIPPERS = 8
"""Clients that each shuttle between levels ``i + 1`` and ``i + 2``."""
TRIPS_EACH = 4
"""Even: each tripper ends where it began."""
SETTLE_S = 60.0
PLAYING_SCRAPES = 4
"""Scrapes 0.5 s apart once everybody is seated, the walkers walking."""
"""Seconds the players' gauges may take to show everybody seated."""

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


class MeteredCluster(ClusterProcs):
    """:class:`ClusterProcs` whose workers serve their metrics."""

    def metered_worker(self, name: str, levels: str) -> int:
        """Start worker ``name`` claiming ``levels``, with ``--metrics-port 0``
        and JSON logs; the port it says it serves the metrics on."""
        match = self._start(
            name,
            ["worker", "--nats", self.nats_url, "--db", self.db_url, "--id", name,
             "--prefix", self.prefix, "--levels", levels, "--lease", str(self.lease_s),
             "--save-interval", str(self.save_interval_s), "--no-monsters",
             "--metrics-port", "0", "--log-format", "json"],
            rb"metrics on http://127\.0\.0\.1:(\d+)/metrics",
        )  # fmt: skip
        return int(match.group(1))


def value(samples: Samples, name: str, **labels: str) -> float:
    """The sample ``name{labels}`` (KeyError when not served)."""
    return samples[(name, tuple(sorted(labels.items())))]


async def wait_ready(port: int, timeout: float = 10.0) -> None:
    """Wait until ``/readyz`` answers 200 (the worker has ticked)."""
    deadline = time.monotonic() + timeout
    while True:
        status, _, body = await http_get(port, "/readyz")
        if status == 200:
            assert body == "ready\n"
            return
        assert status == 503 and body == "starting\n", (status, body)
        assert time.monotonic() < deadline, "not ready in time"
        await asyncio.sleep(0.1)


async def test_worker_metrics_under_load(
    tmp_path: Path, nats_url: str, db: str, prefix: str
) -> None:
    for i in range(TRIPPERS):
        plant(db, f"T{i}", f"tok{i}", i + 1, on="down")
    odd = [d for d in range(1, TRIPPERS + 2) if d % 2]
    even = [d for d in range(1, TRIPPERS + 2) if not d % 2]
    with MeteredCluster(tmp_path, nats_url, db, prefix) as cluster:
        ports = {
            "wa": cluster.metered_worker("wa", ",".join(map(str, odd))),
            "wb": cluster.metered_worker("wb", ",".join(map(str, even))),
        }
        url = cluster.gateway("g1")
        for port in ports.values():
            await wait_ready(port)
            assert await http_get(port, "/healthz") == (200, "text/plain; charset=utf-8", "ok\n")
            assert (await http_get(port, "/nothing"))[0] == 404
        before = {w: await scrape(p) for w, p in ports.items()}

        stop = asyncio.Event()
        load = asyncio.create_task(
            run_load_async(
                LoadConfig(url=url, n=WALKERS, duration=180.0, rate=20.0, seed=5, prefix="walk"),
                stop=stop,
            )
        )
        lingering: list[str] = []
        all_lingering = asyncio.Event()
        release = asyncio.Event()

        async def linger() -> None:
            lingering.append("")
            if len(lingering) == TRIPPERS:
                all_lingering.set()
            await release.wait()

        trips = asyncio.gather(
            *(
                trip(url, f"T{i}", f"tok{i}", i + 1, TRIPS_EACH, linger=linger)
                for i in range(TRIPPERS)
            )
        )
        try:
            await asyncio.wait_for(all_lingering.wait(), 120.0)
            # Trippers end where they began: T{i} on level i + 1, held by wa
            # when odd; every walker stands on level 1 (wa).
            expected = {
                "wa": WALKERS + sum(1 for i in range(TRIPPERS) if (i + 1) % 2),
                "wb": sum(1 for i in range(TRIPPERS) if not (i + 1) % 2),
            }
            deadline = time.monotonic() + SETTLE_S
            while True:
                now = {w: await scrape(p) for w, p in ports.items()}
                seated = {w: value(now[w], "underhall_worker_players") for w in ports}
                if seated == expected:
                    break
                assert time.monotonic() < deadline, (seated, expected)
                await asyncio.sleep(0.5)
            gateway = await scrape(int(url.rsplit(":", 1)[1]))
            # Scraped while the walkers walk: the ticks go on, nobody moves away.
            during = [now]
            for _ in range(PLAYING_SCRAPES):
                await asyncio.sleep(0.5)
                during.append({w: await scrape(p) for w, p in ports.items()})
            for w in ports:
                counts = [
                    value(d[w], "underhall_worker_tick_duration_seconds_count") for d in during
                ]
                assert counts == sorted(set(counts)), (w, counts)  # strictly growing
                assert [value(d[w], "underhall_worker_players") for d in during] == [
                    expected[w]
                ] * len(during)
            frames = [value(d["wa"], "underhall_worker_frame_messages_total") for d in during]
            assert frames[-1] > frames[0]
            now = during[-1]
        finally:
            release.set()
            stop.set()
            results: list[TripResult] = await asyncio.wait_for(trips, 60.0)
            final, _ = await asyncio.wait_for(load, 60.0)

        for r in results:
            assert r.error is None and r.trips == TRIPS_EACH, r
        assert final["welcomed"] == WALKERS and final["errors"] == {}, final
        for w in ports:
            assert value(gateway, "underhall_gateway_players_by_worker", worker=w) == expected[w]

        trips_out = TRIPPERS * TRIPS_EACH // 2  # each tripper goes down from one, up from the other
        for w, held in (("wa", odd), ("wb", even)):
            b, m = before[w], now[w]
            # The tick histogram counts every tick, and only those.
            ticks = value(m, "underhall_worker_tick_duration_seconds_count")
            assert value(b, "underhall_worker_tick_duration_seconds_count") < ticks
            # A worker starts its world at the cluster's tick (the second one
            # at the first one's), then counts each tick it runs.
            ran = ticks - value(b, "underhall_worker_tick_duration_seconds_count")
            grew = value(m, "underhall_worker_world_tick") - value(b, "underhall_worker_world_tick")
            assert ran == grew > 0
            assert value(m, "underhall_worker_tick_duration_seconds_sum") > 0
            assert value(m, "underhall_worker_tick_duration_seconds_bucket", le="+Inf") == ticks
            assert value(m, "underhall_worker_levels_held") == len(held)
            assert value(m, "underhall_worker_levels_lost_total") == 0
            # Every trip is one hand-off out of one worker and into the other.
            for direction in ("out", "in"):
                admitted = value(
                    m, "underhall_worker_handoffs_total", direction=direction, outcome="admitted"
                )
                assert admitted == trips_out, (w, direction)
                timed = value(
                    m, "underhall_worker_handoff_duration_seconds_count", direction=direction
                )
                assert timed == admitted
            for outcome in ("taken_back", "dropped"):
                assert (
                    value(m, "underhall_worker_handoffs_total", direction="out", outcome=outcome)
                    == 0
                )
            assert (
                value(m, "underhall_worker_handoffs_total", direction="in", outcome="refused") == 0
            )
            new = value(m, "underhall_worker_joins_total", kind="new")
            assert new == (WALKERS if w == "wa" else 0)
            assert value(m, "underhall_worker_joins_total", kind="resumed") == TRIPPERS // 2
            # Checkpoints (every second) wrote the players and the levels.
            assert value(m, "underhall_worker_checkpoint_duration_seconds_count") > 0
            assert value(m, "underhall_worker_checkpoint_rows_total", what="players") > 0
            assert value(m, "underhall_worker_checkpoint_rows_total", what="levels") >= len(held)
            assert value(m, "underhall_worker_saves_refused_total") == 0
            assert value(m, "underhall_worker_frame_messages_total") > 0
            assert value(m, "underhall_worker_frame_bytes_total") > 0
            assert total(m, "underhall_worker_database_errors_total") == 0
            assert value(m, "underhall_worker_nats_errors_total", what="client") == 0
            assert value(m, "underhall_worker_nats_disconnects_total") == 0
            assert value(m, "underhall_worker_nats_connected") == 1
            assert value(m, "underhall_worker_ready") == 1
            assert value(m, "underhall_worker_draining") == 0
            assert value(m, "underhall_process_resident_memory_bytes") > 0

        # A drain: /readyz says so at once. The database is held (writes wait
        # on a lock) so the drain's last save cannot end before it is seen.
        with psycopg.connect(db) as lock:
            lock.execute("LOCK TABLE players, levels IN SHARE MODE")
            cluster.signal("wa", signal.SIGTERM)
            deadline = time.monotonic() + 15.0
            while True:
                status, _, body = await http_get(ports["wa"], "/readyz")
                if status != 200:
                    break
                assert time.monotonic() < deadline, "/readyz still 200 after SIGTERM"
                await asyncio.sleep(0.05)
            assert (status, body) == (503, "draining\n")
            assert (await http_get(ports["wa"], "/healthz"))[0] == 200
            draining = await scrape(ports["wa"])
            assert value(draining, "underhall_worker_ready") == 0
            assert value(draining, "underhall_worker_draining") == 1
            assert (await http_get(ports["wb"], "/readyz"))[0] == 200
            lock.rollback()
        assert await asyncio.to_thread(cluster.wait, "wa", 30.0) == 0
        logs = cluster.log("wa") + cluster.log("wb")
    assert "Traceback" not in logs
    assert '"msg": "worker wa ready"' in logs  # --log-format json
