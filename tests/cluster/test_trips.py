"""Many stair trips by real clients over 3 workers and 2 gateways: no
character lost or duplicated (a scaled-down issue 14 run; bench/cluster.py
makes the full 10,000)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import psycopg

from server.sim.actors import player_from_record
from server.store import unpack_record
from tests.cluster.procs import SEED, ClusterProcs, plant
from tests.cluster.replay import digest, replay
from tests.cluster.trips import trip

PLAYERS = 8
TRIPS_EACH = 30


async def test_stair_trips_lose_and_duplicate_nobody(
    tmp_path: Path, nats_url: str, db: str, prefix: str
) -> None:
    planted = [plant(db, f"T{i}", f"tok{i}", i + 1, on="down") for i in range(PLAYERS)]
    with ClusterProcs(tmp_path, nats_url, db, prefix) as cluster:
        workers = ["wa", "wb", "wc"]
        for k, w in enumerate(workers):
            cluster.worker(w, ",".join(str(d) for d in range(k + 1, PLAYERS + 2, 3)))
        urls = [cluster.gateway("g1"), cluster.gateway("g2")]
        results = await asyncio.gather(
            *(trip(urls[i % 2], f"T{i}", f"tok{i}", i + 1, TRIPS_EACH) for i in range(PLAYERS))
        )
        for r in results:
            assert r.error is None, results
            assert r.trips == TRIPS_EACH
            assert r.ids_seen == {r.actor_id}  # one id for life, on every worker
        await asyncio.sleep(1.0)  # the leaves are saved
        logs = "".join(cluster.log(n) for n in [*workers, "g1", "g2"])
    assert "Traceback" not in logs
    assert logs.count("save refused") == 0 and "hand-off refused" not in logs
    with psycopg.connect(db) as conn:
        rows = conn.execute("SELECT name, record, epoch, actor_id FROM players").fetchall()
    assert sorted(r[0] for r in rows) == sorted(f"T{i}" for i in range(PLAYERS))
    assert len({r[3] for r in rows}) == PLAYERS
    by_name = {r[0]: (unpack_record(bytes(r[1])), int(r[2])) for r in rows}
    for i, r in enumerate(results):
        record, epoch = by_name[r.name]
        # Where the client last saw itself is where the database has it.
        assert r.position is not None
        assert (record["depth"], record["x"], record["y"]) == (r.depth, *r.position)
        assert r.depth == i + 1  # an even number of trips ends where it began
        # One join, then one epoch per hand-off: none admitted twice.
        assert epoch == 1 + TRIPS_EACH
        # Everything the trips must keep (pack, scores, place, the map memory
        # of both levels) is what one process makes of the same moves.
        assert sum(1 for m, _ in r.moves if m in ("down", "up")) == TRIPS_EACH
        assert digest(player_from_record(r.actor_id, record)) == digest(
            replay(SEED, planted[i], r.moves)
        ), r.name
