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
from prometheus_client import Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from websockets.asyncio.server import ServerConnection
from websockets.http11 import Request, Response

from server.net.metrics import (
    NOT_FOUND,
    SAVE_BUCKETS_S,
    TICK_BUCKETS_S,
    health_answer,
    http_response,
    new_registry,
)

HANDOFF_BUCKETS_S = (0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Histogram buckets of a hand-off's duration, in seconds (a sender tries
five admissions of up to 1 s each before it takes the player back)."""


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
DATABASE_STEPS = (
    "checkpoint", "save", "handoff", "takeback", "claim", "join", "admit", "final_save",
    "background",
)  # fmt: skip
"""Values of the ``what`` label of the error counters: the step that failed."""
NATS_STEPS = ("client", "heartbeat", "request", "join", "admit", "handoff", "background")
"""Values of ``underhall_worker_nats_errors_total``'s ``what`` label
(``client``: an error nats-py reported on the connection itself)."""


class WorkerMetrics:
    """The metrics of one worker, in a registry of their own.

    Args:
        worker: The worker whose state is read at scrape time.

    Attributes:
        registry: The ``CollectorRegistry`` holding every metric below, the
            state read at scrape time and ``underhall_process_*``.
    """

    def __init__(self, worker: WorkerState) -> None:
        self._worker = worker
        self.registry = r = new_registry()
        self.tick_seconds = Histogram(
            "underhall_worker_tick_duration_seconds",
            "Time to run one tick: step the world, build and publish its frames",
            buckets=TICK_BUCKETS_S,
            registry=r,
        )
        self.late_ticks = Counter(
            "underhall_worker_late_ticks", "Ticks that started after their time", registry=r
        )
        handoffs = Counter(
            "underhall_worker_handoffs",
            "Hand-offs of players between workers: out (this worker passed the player on: "
            "admitted, taken_back, dropped) and in (this worker was asked to admit one: "
            "admitted, refused)",
            ["direction", "outcome"],
            registry=r,
        )
        self.out_admitted = handoffs.labels("out", "admitted")
        self.out_taken_back = handoffs.labels("out", "taken_back")
        self.out_dropped = handoffs.labels("out", "dropped")
        self.in_admitted = handoffs.labels("in", "admitted")
        self.in_refused = handoffs.labels("in", "refused")
        handoff_seconds = Histogram(
            "underhall_worker_handoff_duration_seconds",
            "Duration of a hand-off: out, from the player leaving our level to its admission "
            "by the new holder; in, from the admission request to the player seated here",
            ["direction"],
            buckets=HANDOFF_BUCKETS_S,
            registry=r,
        )
        self.out_seconds = handoff_seconds.labels("out")
        self.in_seconds = handoff_seconds.labels("in")
        self.joins = Counter(
            "underhall_worker_joins",
            "Players seated here by a join, new characters or resumed",
            ["kind"],
            registry=r,
        )
        self.joins_new = self.joins.labels("new")
        self.joins_resumed = self.joins.labels("resumed")
        self.checkpoint_seconds = Histogram(
            "underhall_worker_checkpoint_duration_seconds",
            "Duration of a checkpoint: every held character and level written",
            buckets=SAVE_BUCKETS_S,
            registry=r,
        )
        rows = Counter(
            "underhall_worker_checkpoint_rows",
            "Rows written by checkpoints, players and levels",
            ["what"],
            registry=r,
        )
        self.player_rows = rows.labels("players")
        self.level_rows = rows.labels("levels")
        self.levels_lost = Counter(
            "underhall_worker_levels_lost",
            "Levels dropped for a lost lease (not renewed in time, or taken over)",
            registry=r,
        )
        self.nats_disconnects = Counter(
            "underhall_worker_nats_disconnects",
            "Times the NATS connection was lost (nats-py reconnects by itself)",
            registry=r,
        )
        self.nats_errors = Counter(
            "underhall_worker_nats_errors",
            "NATS calls that failed or timed out, by step",
            ["what"],
            registry=r,
        )
        self.database_errors = Counter(
            "underhall_worker_database_errors",
            "PostgreSQL calls that raised, by step",
            ["what"],
            registry=r,
        )
        for what in NATS_STEPS:
            self.nats_errors.labels(what)
        for what in DATABASE_STEPS:
            self.database_errors.labels(what)
        r.register(_StateCollector(worker))

    # --------------------------------------------------------- events

    def tick(self, seconds: float, late: bool) -> None:
        """A tick ran for ``seconds``; ``late`` if it started after its time."""
        self.tick_seconds.observe(seconds)
        if late:
            self.late_ticks.inc()

    def checkpoint(self, seconds: float, players: int, levels: int) -> None:
        """A checkpoint took ``seconds`` and wrote ``players`` and ``levels`` rows."""
        self.checkpoint_seconds.observe(seconds)
        self.player_rows.inc(players)
        self.level_rows.inc(levels)

    def failed(self, what: str, exc: BaseException) -> None:
        """Step ``what`` raised ``exc``: a PostgreSQL error counts in
        ``underhall_worker_database_errors_total``, a NATS error (a timeout
        included) in ``underhall_worker_nats_errors_total``; anything else is
        a bug, for the log only."""
        if isinstance(exc, psycopg.Error):
            self.database_errors.labels(what).inc()
        elif isinstance(exc, nats.errors.Error):
            self.nats_errors.labels(what).inc()

    # --------------------------------------------------------- HTTP

    def process_request(self, conn: ServerConnection, request: Request) -> Response:
        """websockets' ``process_request`` hook of the metrics port:
        ``/metrics``, ``/healthz``, ``/readyz``, else 404."""
        found = health_answer(request.path, self.registry, self._worker.not_ready)
        return http_response(conn, *(found or NOT_FOUND))
