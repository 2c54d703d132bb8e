"""The Prometheus metrics and health checks of one cluster worker.

A worker has no player port: with ``--metrics-port`` it answers plain HTTP
on a port of its own (:meth:`WorkerMetrics.process_request`, websockets'
hook, as ``underhall serve --metrics-port`` does): ``GET /metrics`` the
Prometheus text format, ``/healthz`` 200 while the process runs,
``/readyz`` 200 while the worker is connected to NATS and PostgreSQL, has
ticked and is not draining (else 503 and why), anything else 404.

Every :class:`~server.cluster.worker.Worker` owns one :class:`WorkerMetrics`
with its own ``CollectorRegistry`` (several workers may run in one process,
as in the tests), built by the helpers of :mod:`server.net.metrics`. The
tick pays one histogram observation (and a counter when it starts late);
hand-offs, checkpoints and errors are counted where they happen; what the
worker already keeps (players, levels held, frames sent) is read when
scraped, from :meth:`WorkerState.figures`.

Every name starts ``underhall_worker_`` (besides ``underhall_process_*``);
docs/cluster.md lists them all.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

import nats.errors
import psycopg
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from websockets.asyncio.server import ServerConnection
from websockets.http11 import Request, Response

from server.net.metrics import NOT_FOUND, Declared, health_answer, http_response


@dataclass(frozen=True, slots=True)
class WorkerFigures:
    """What a worker holds at one moment, read at scrape time.

    Attributes:
        players: Players seated on this worker.
        levels_held: Levels whose lease this worker holds.
        tick: The world's tick.
        frame_messages: NATS messages of players' frames sent since start.
        frame_bytes: Payload bytes of those messages.
        refused_saves: Character and level saves refused since start (the
            epoch or the level's token had moved on: held elsewhere now).
        nats_connected: Whether the NATS connection is up.
    """

    players: int
    levels_held: int
    tick: int
    frame_messages: int
    frame_bytes: int
    refused_saves: int
    nats_connected: bool


class WorkerState(Protocol):
    """What :class:`WorkerMetrics` reads of its worker."""

    @property
    def draining(self) -> bool:
        """Whether a drain has begun."""
        ...

    def not_ready(self) -> str | None:
        """None while ready to take players, else why not (``starting``,
        ``draining``, ...)."""
        ...

    def figures(self) -> WorkerFigures:
        """The worker's figures now."""
        ...


class _StateCollector:
    """Series read from the worker's state at scrape time."""

    def __init__(self, worker: WorkerState) -> None:
        self._worker = worker

    def describe(self) -> Iterator[Metric]:
        """The families :meth:`collect` yields, without samples (read at registration)."""
        for name in _GAUGES:
            yield GaugeMetricFamily(name, "")
        for name in _COUNTERS:
            yield CounterMetricFamily(name, "")

    def collect(self) -> Iterator[Metric]:
        w = self._worker
        f = w.figures()
        gauges = {
            "underhall_worker_players": (f.players, "Players seated on this worker"),
            "underhall_worker_levels_held": (f.levels_held, "Levels whose lease this worker holds"),
            "underhall_worker_world_tick": (f.tick, "The world's tick"),
            "underhall_worker_ready": (
                int(w.not_ready() is None),
                "1 while /readyz says ready (NATS and PostgreSQL up, ticking, not draining)",
            ),
            "underhall_worker_draining": (int(w.draining), "1 from the start of a drain"),
            "underhall_worker_nats_connected": (int(f.nats_connected), "1 while NATS is connected"),
        }
        for name, (value, text) in gauges.items():
            yield GaugeMetricFamily(name, text, value=value)
        counters = {
            "underhall_worker_frame_messages": (
                f.frame_messages,
                "NATS messages of players' frames sent to the gateways",
            ),
            "underhall_worker_frame_bytes": (f.frame_bytes, "Payload bytes of those messages"),
            "underhall_worker_saves_refused": (
                f.refused_saves,
                "Character and level saves refused: held elsewhere now (fenced)",
            ),
        }
        for name, (value, text) in counters.items():
            family = CounterMetricFamily(name, text)
            family.add_metric([], value)
            yield family


_GAUGES = (
    "underhall_worker_players",
    "underhall_worker_levels_held",
    "underhall_worker_world_tick",
    "underhall_worker_ready",
    "underhall_worker_draining",
    "underhall_worker_nats_connected",
)
_COUNTERS = (
    "underhall_worker_frame_messages",
    "underhall_worker_frame_bytes",
    "underhall_worker_saves_refused",
)


class WorkerMetrics(Declared):
    """A worker's metrics (the catalogue's ``worker`` group), with the
    worker's figures read at scrape time.

    Args:
        worker: The worker whose state is read at scrape time.
    """

    def __init__(self, worker: WorkerState) -> None:
        super().__init__(("worker",), _StateCollector(worker))
        self._worker = worker

    # --------------------------------------------------------- events

    def tick(self, seconds: float, late: bool) -> None:
        """A tick ran for ``seconds``; ``late`` if it started after its time."""
        self.observe("tick_seconds", seconds)
        if late:
            self.count("late_ticks")

    def checkpoint(self, seconds: float, players: int, levels: int) -> None:
        """A checkpoint took ``seconds`` and wrote ``players`` and ``levels`` rows."""
        self.observe("checkpoint_seconds", seconds)
        self.count("checkpoint_rows", "players", by=players)
        self.count("checkpoint_rows", "levels", by=levels)

    def failed(self, what: str, exc: BaseException) -> None:
        """Step ``what`` raised ``exc``: a PostgreSQL error counts in
        ``underhall_worker_database_errors_total``, a NATS error (a timeout
        included) in ``underhall_worker_nats_errors_total``; anything else is
        a bug, for the log only."""
        if isinstance(exc, psycopg.Error):
            self.count("database_errors", what)
        elif isinstance(exc, nats.errors.Error):
            self.count("nats_errors", what)

    # --------------------------------------------------------- HTTP

    def process_request(self, conn: ServerConnection, request: Request) -> Response:
        """websockets' ``process_request`` hook of the metrics port:
        ``/metrics``, ``/healthz``, ``/readyz``, else 404."""
        found = health_answer(request.path, self.registry, self._worker.not_ready)
        return http_response(conn, *(found or NOT_FOUND))
