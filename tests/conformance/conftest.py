"""Fixtures of the conformance suite: one ``server`` fixture, parametrised
over ``serve`` and a cluster, so that every test is written once against
the protocol and run against both (issue 43).

The fronts are started once per session (a cluster costs seconds) and
shared: each test uses character names of its own (:func:`fronts.unique`)
and connects from a loopback address of its own (:func:`fronts.next_address`).
A test that stops its front (a drain) asks for a spare one
(:meth:`Server.spare`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from websockets.protocol import State

from tests.cluster.natsenv import require_nats, unique_prefix
from tests.conformance.fronts import (
    Cluster,
    Front,
    cluster_front,
    next_address,
    serve_front,
    spare_front,
    unique,
    wait_ready,
)
from tests.conformance.players import Msg, Player, answer_to_hello, connect, join
from tests.pgdb import empty_pg, pg_database

__all__ = ["pg_database"]

FRONTS = ["serve", "cluster"]
FRONT_PARAMS = [
    pytest.param(kind, marks=pytest.mark.xdist_group(f"conformance-{kind}")) for kind in FRONTS
]
"""The ``server`` fixture's parameters. Under pytest-xdist each front's tests
are one group, run by one worker: the session's front is started once per
run, not once per worker (a cluster costs seconds)."""


@pytest.fixture(scope="session")
def serve_running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Front]:
    """``underhall serve``, for the whole session."""
    with serve_front(tmp_path_factory.mktemp("serve")) as front:
        yield front


@pytest.fixture(scope="session")
def cluster_running(
    tmp_path_factory: pytest.TempPathFactory, pg_database: str
) -> Iterator[tuple[Front, Cluster]]:
    """Two workers and two gateways on NATS and PostgreSQL, for the whole
    session (skipped, saying why, without NATS or PostgreSQL)."""
    nats_url = require_nats()
    db = empty_pg(pg_database)
    with cluster_front(tmp_path_factory.mktemp("cluster"), nats_url, db, unique_prefix()) as ran:
        yield ran


@dataclass
class Server:
    """What one test reaches of a front: the front itself (URLs, operator
    hooks), and the test's own source address.

    Attributes:
        front: The running front.
        source: The loopback address this test's clients connect from.
        tmp: The test's own directory (a spare ``serve`` keeps its world there).
        cluster: The running cluster, for a spare gateway (None for ``serve``).
    """

    front: Front
    source: str
    tmp: Path
    cluster: Cluster | None
    opened: list[Player] = field(default_factory=list)
    """Every connection this test opened, closed after it (a failed test
    leaves no character in the world to disturb the next)."""

    @property
    def kind(self) -> str:
        """``"serve"`` or ``"cluster"``."""
        return self.front.kind

    @property
    def url(self) -> str:
        """The ``ws://`` URL players connect to."""
        return self.front.url

    @staticmethod
    def name(stem: str) -> str:
        """A character name of this test's own, beginning with ``stem``."""
        return unique(stem)

    async def join(
        self, name: str, token: str | None = None, cls: str | None = None, door: int = 0
    ) -> tuple[Player, Msg]:
        """Join as ``name`` from this test's address: the player and its
        first ``snap``. ``door`` 1 comes in through the front's other door
        (:attr:`Front.other_door`)."""
        url = self.front.other_door if door else self.url
        player, snap = await join(url, self.source, name, token, cls, self.opened)
        return player, snap

    async def hello(
        self,
        name: str,
        token: str | None = None,
        cls: str | None = None,
        source: str | None = None,
    ) -> tuple[Player, Msg]:
        """Connect and say hello (from ``source``, else this test's
        address); the player and the first answer."""
        return await answer_to_hello(self.url, source or self.source, name, token, cls, self.opened)

    async def connect(self, source: str | None = None) -> Player:
        """A connection that has said nothing yet."""
        return await connect(self.url, source or self.source, self.opened)

    @contextlib.asynccontextmanager
    async def spare(self, max_players: int | None = None) -> AsyncIterator[Server]:
        """A front of this test's own (``serve``: a new server; a cluster: a
        new gateway of the same workers), ready for joins; stopped after.
        See :func:`tests.conformance.fronts.spare_front`."""
        with spare_front(self.kind, self.tmp, self.cluster, max_players) as front:
            await wait_ready(front)
            spare = Server(front, self.source, self.tmp, self.cluster)
            try:
                yield spare
            finally:
                # A server stops at once with nobody playing (else it drains).
                await close_all(spare.opened)
                self.opened.extend(spare.opened)


async def close_all(players: list[Player]) -> None:
    """Close every connection of ``players`` still open, and give the front
    a moment to seat their characters out."""
    still_open = [p for p in players if p.ws.state is not State.CLOSED]
    for player in still_open:
        await player.close()
    if still_open:
        await asyncio.sleep(0.3)


@pytest.fixture(params=FRONT_PARAMS)
async def server(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Server]:
    """The front under test: ``serve``, or a cluster (two workers, two gateways)."""
    if request.param == "serve":
        front: Front = request.getfixturevalue("serve_running")
        cluster = None
    else:
        front, cluster = request.getfixturevalue("cluster_running")
    server = Server(front, next_address(), tmp_path, cluster)
    yield server
    await close_all(server.opened)
