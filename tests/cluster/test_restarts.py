"""A NATS server and a PostgreSQL server of the test's own, each stopped and
started again under a playing cluster: play pauses or goes on, and nothing
saved is lost."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from client.connection import Connection
from client.model import GameModel
from protocol.messages import CommandName
from tests.cluster.natsenv import NatsServer, NoNats
from tests.cluster.procs import ClusterProcs, acked, is_snap, plant, play_until, row_of, step
from tests.pgdb import NoPostgres, PrivatePostgres, empty_pg

LEASE_S = 2.0


@pytest.fixture
def own_nats(tmp_path: Path) -> Iterator[NatsServer]:
    """A NATS server (with JetStream) of this test's own, to stop and start."""
    try:
        server = NatsServer(tmp_path / "js")
        server.start()
    except NoNats as exc:
        pytest.skip(f"cannot start a NATS server of our own: {exc}")
    try:
        yield server
    finally:
        server.stop()


async def test_nats_restart_pauses_play_and_loses_nothing_saved(
    tmp_path: Path, own_nats: NatsServer, request: pytest.FixtureRequest
) -> None:
    db = empty_pg(request.getfixturevalue("pg_database"))
    plant(db, "Nat", "n", 1)
    with ClusterProcs(tmp_path, own_nats.url, db, "uhr", LEASE_S) as cluster:
        cluster.worker("wa", "1")
        cluster.worker("wb")
        conn = await Connection.open(cluster.gateway("g1"), "Nat", token="n")
        model = GameModel(conn.welcome)
        try:
            await play_until(conn, model, is_snap(1))
            seq = await conn.command(CommandName.WAIT)
            await play_until(conn, model, acked(conn, seq))
            await asyncio.sleep(1.5)  # a checkpoint (every second here)
            saved, epoch = row_of(db, "Nat")
            assert (saved["x"], saved["y"]) == model.position
            own_nats.stop()
            await asyncio.sleep(2.0)
            own_nats.start()
            # The worker let the level go (no renewals), the gateway seats
            # the player again: a snapshot, at the saved cell.
            await play_until(conn, model, is_snap(1), timeout=30.0)
            assert model.position == (saved["x"], saved["y"])
            assert row_of(db, "Nat")[1] > epoch
            seq = await conn.command(CommandName.WAIT)
            await play_until(conn, model, acked(conn, seq))  # play goes on
        finally:
            await conn.close()


@pytest.fixture
def own_pg() -> Iterator[PrivatePostgres]:
    """A PostgreSQL server of this test's own, to stop and start."""
    try:
        server = PrivatePostgres()
    except NoPostgres as exc:
        pytest.skip(f"cannot start a PostgreSQL server of our own: {exc}")
    try:
        yield server
    finally:
        server.remove()


async def test_postgres_restart_pauses_saving_and_loses_nothing(
    tmp_path: Path, own_pg: PrivatePostgres, nats_url: str, prefix: str
) -> None:
    db = own_pg.url
    plant(db, "Pia", "p", 1)  # also applies the migrations
    with ClusterProcs(tmp_path, nats_url, db, prefix, LEASE_S) as cluster:
        cluster.worker("wa", "1")
        conn = await Connection.open(cluster.gateway("g1"), "Pia", token="p")
        model = GameModel(conn.welcome)
        try:
            await play_until(conn, model, is_snap(1))
            await step(conn, model)
            await asyncio.sleep(1.5)  # a checkpoint (every second here)
            saved, epoch = row_of(db, "Pia")
            assert (saved["x"], saved["y"]) == model.position
            own_pg.stop()
            # The tick needs no database: play goes on while it is down.
            await step(conn, model)
            await step(conn, model)
            moved_to = model.position
            assert moved_to != (saved["x"], saved["y"])
            await asyncio.sleep(2.0)  # checkpoints fail meanwhile
            own_pg.start()
            await asyncio.sleep(3.0)  # the worker connects again; a checkpoint
            record, after = row_of(db, "Pia")
            assert (record["x"], record["y"]) == moved_to  # the steps made while down
            assert after == epoch  # still held by wa: nobody took it over
            assert "checkpoint failed" in cluster.log("wa")
            await step(conn, model)  # and play goes on
        finally:
            await conn.close()
