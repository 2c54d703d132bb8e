"""Prometheus metrics and the health endpoints of one server.

Every :class:`~server.net.server.GameServer` owns one :class:`Metrics` with
its own ``CollectorRegistry`` (several servers may run in one process, as in
the tests). The server calls one method per event; values that already exist
as state (players online, players per depth, readiness) are read when
scraped, so the tick pays nothing for them.

HTTP on the game port goes through websockets' ``process_request`` hook
(:meth:`Metrics.process_request`): ``GET /metrics`` answers the Prometheus
text format, ``/healthz`` 200 while the process serves, ``/readyz`` 200 only
while players are accepted (503 before the first tick and from the first
moment of a drain). Any other path goes on to the websocket handshake. The
same hook answers on ``--metrics-port`` (:meth:`Metrics.process_http_only`),
where every other path is a 404.

Names follow Prometheus conventions: ``underhall_`` prefix, ``_total`` for
counters, base units (seconds, bytes).
"""

from __future__ import annotations

import gc
import http
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    disable_created_metrics,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, generate_latest
from websockets.asyncio.server import ServerConnection
from websockets.http11 import Request, Response

from server.game.game import Game
from server.game.hooks import GameHooks
from server.net.collector import Pacer

TICK_BUCKETS_S = (0.001, 0.002, 0.005, 0.01, 0.02, 0.035, 0.05, 0.075, 0.1, 0.2, 0.5)
"""Histogram buckets of the tick duration (a tick at 10 Hz has 0.1 s)."""
SAVE_BUCKETS_S = (0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0)
"""Histogram buckets of a save's duration."""

HEALTH_PATHS = ("/metrics", "/healthz", "/readyz")


class FrontState(Protocol):
    """What the front's series read at scrape time (``serve`` and a gateway)."""

    @property
    def ready(self) -> bool: ...

    def players_online(self) -> int: ...

    def current_tick(self) -> int: ...


class _FrontCollector:
    """The series every front reads from its state at scrape time."""

    def __init__(self, front: FrontState, metrics: FrontMetrics) -> None:
        self._front = front
        self._metrics = metrics

    def describe(self) -> Iterator[Metric]:
        """The families :meth:`collect` yields, without samples (read at registration)."""
        yield GaugeMetricFamily("underhall_players_online", "")
        yield GaugeMetricFamily("underhall_ready", "")
        yield GaugeMetricFamily("underhall_world_tick", "")
        yield CounterMetricFamily("underhall_frames_sent", "")
        yield CounterMetricFamily("underhall_sent_bytes", "")

    def collect(self) -> Iterator[Metric]:
        front = self._front
        yield GaugeMetricFamily(
            "underhall_players_online", "Players seated", value=front.players_online()
        )
        yield GaugeMetricFamily(
            "underhall_ready", "1 while joins are accepted, else 0", value=1 if front.ready else 0
        )
        yield GaugeMetricFamily(
            "underhall_world_tick", "Current tick of the world", value=front.current_tick()
        )
        frames = CounterMetricFamily("underhall_frames_sent", "Websocket frames sent to players")
        frames.add_metric([], self._metrics.frames_sent)
        yield frames
        sent = CounterMetricFamily("underhall_sent_bytes", "Payload bytes sent to players")
        sent.add_metric([], self._metrics.bytes_sent)
        yield sent


class FrontMetrics:
    """The metrics every front keeps (:mod:`server.net.front`), in a registry
    of their own (several servers may run in one process, as in the tests),
    with ``underhall_process_*``.

    Args:
        front: The front whose state is read at scrape time.

    Attributes:
        registry: The ``CollectorRegistry`` holding every metric.
        frames_sent: Frames sent so far to players (plain int: counted per
            frame): ticks' messages, chat, notices, errors.
        bytes_sent: Payload bytes of those frames.
    """

    def __init__(self, front: FrontState) -> None:
        self.registry = r = new_registry()
        self.frames_sent = 0
        self.bytes_sent = 0
        self.connections = Gauge(
            "underhall_connections_open",
            "Open websocket connections (players, and clients not yet seated)",
            registry=r,
        )
        self.joins = Counter(
            "underhall_joins", "Players seated, new characters or resumed", ["kind"], registry=r
        )
        self.leaves = Counter("underhall_leaves", "Seated players who left", registry=r)
        self.refusals = Counter(
            "underhall_join_refusals", "Joins refused, by error code", ["code"], registry=r
        )
        self.commands = Counter(
            "underhall_commands", "Commands received, by command", ["command"], registry=r
        )
        self.protocol_errors = Counter(
            "underhall_protocol_errors",
            "Protocol errors sent to clients, by code",
            ["code"],
            registry=r,
        )
        self.admin_actions = Counter(
            "underhall_admin_actions",
            "Admin commands carried out, by command",
            ["action"],
            registry=r,
        )
        r.register(_FrontCollector(front, self))
        self._command_children: dict[str, Counter] = {}

    def sent(self, size: int, frames: int = 1) -> None:
        """``frames`` frames of ``size`` bytes each went to players."""
        self.frames_sent += frames
        self.bytes_sent += size * frames

    def command(self, name: str) -> None:
        """A command named ``name`` was received (for the world, or a worker)."""
        _child(self._command_children, self.commands, name).inc()


class Served(FrontState, Protocol):
    """What ``serve``'s metrics read of :class:`~server.net.server.GameServer`."""

    game: Game
    draining: bool
    pacer: Pacer

    @property
    def clients_behind(self) -> int: ...


class _StateCollector:
    """Gauges read from ``serve``'s state at scrape time."""

    def __init__(self, server: Served) -> None:
        self._server = server

    def describe(self) -> Iterator[Metric]:
        """The families :meth:`collect` yields, without samples (read at registration)."""
        yield GaugeMetricFamily("underhall_players_by_depth", "", labels=["depth"])
        yield GaugeMetricFamily("underhall_clients_behind", "")
        yield GaugeMetricFamily("underhall_gc_frozen_objects", "")
        yield GaugeMetricFamily("underhall_gc_ticks_between_collections", "")

    def collect(self) -> Iterator[Metric]:
        server = self._server
        game = server.game
        by_depth: dict[int, int] = {}
        for actor_id in game.seats:
            actor = game.world.actors.get(actor_id)
            if actor is not None:
                by_depth[actor.depth] = by_depth.get(actor.depth, 0) + 1
        depth = GaugeMetricFamily(
            "underhall_players_by_depth", "Players seated at each depth", labels=["depth"]
        )
        for d in sorted(by_depth):
            depth.add_metric([str(d)], by_depth[d])
        yield depth
        yield GaugeMetricFamily(
            "underhall_clients_behind",
            "Clients whose output is over the outbox limit: their deltas are skipped",
            value=server.clients_behind,
        )
        yield GaugeMetricFamily(
            "underhall_gc_frozen_objects",
            "Containers frozen out of the collector's reach (server.net.collector)",
            value=gc.get_freeze_count(),
        )
        yield GaugeMetricFamily(
            "underhall_gc_ticks_between_collections",
            "Ticks between the server's young collections, paced to their pauses",
            value=server.pacer.every,
        )


class Metrics(FrontMetrics, GameHooks):
    """The metrics of ``underhall serve``: the front's, and the game's.

    Args:
        server: The server whose state is read at scrape time.
    """

    def __init__(self, server: Served) -> None:
        super().__init__(server)
        self._server = server
        r = self.registry
        self.rejects = Counter(
            "underhall_command_rejects",
            "Commands the world refused, by reason",
            ["reason"],
            registry=r,
        )
        self.tick_seconds = Histogram(
            "underhall_tick_duration_seconds",
            "Time to run one tick and send its frames",
            buckets=TICK_BUCKETS_S,
            registry=r,
        )
        self.gc_pause_seconds = Histogram(
            "underhall_gc_pause_seconds",
            "Duration of each garbage collection, by generation",
            ["generation"],
            buckets=TICK_BUCKETS_S,
            registry=r,
        )
        self.late_ticks = Counter(
            "underhall_late_ticks", "Ticks that started after their time", registry=r
        )
        self.saves = Counter(
            "underhall_saves", "Database saves, by what was saved", ["what"], registry=r
        )
        self.save_seconds = Histogram(
            "underhall_save_duration_seconds",
            "Duration of a database save",
            ["what"],
            buckets=SAVE_BUCKETS_S,
            registry=r,
        )
        self.db_errors = Counter(
            "underhall_database_errors",
            "Database calls that raised, by what was attempted",
            ["what"],
            registry=r,
        )
        self.draining = Gauge("underhall_draining", "1 from the start of a drain", registry=r)
        self.frames_skipped = Counter(
            "underhall_frames_skipped",
            "Players' tick messages not built or not written: the client was behind",
            registry=r,
        )
        self.slow_dropped = Counter(
            "underhall_slow_clients_dropped",
            "Clients disconnected for staying behind",
            registry=r,
        )
        r.register(_StateCollector(server))
        self._reject_children: dict[str, Counter] = {}

    # --------------------------------------------------------- events

    def skipped(self, count: int) -> None:
        """``count`` players got no message this tick: their clients were
        behind (each will get a snapshot once caught up)."""
        self.frames_skipped.inc(count)

    def tick(self, seconds: float, late: bool) -> None:
        """A tick ran for ``seconds``; ``late`` if it started after its time."""
        self.tick_seconds.observe(seconds)
        if late:
            self.late_ticks.inc()

    def saved(self, what: str, seconds: float) -> None:
        self.saves.labels(what).inc()
        self.save_seconds.labels(what).observe(seconds)

    def db_error(self, what: str) -> None:
        self.db_errors.labels(what).inc()

    def rejected(self, reasons: Iterable[str]) -> None:
        """The world refused commands for these reasons."""
        for reason in reasons:
            _child(self._reject_children, self.rejects, reason).inc()

    # --------------------------------------------------------- HTTP

    def exposition(self) -> bytes:
        """The registry in the Prometheus text format (version 0.0.4)."""
        return generate_latest(self.registry)

    def answer(self, path: str) -> tuple[int, str, bytes] | None:
        """``(status, content type, body)`` for a health or metrics path, else None.

        Query strings are ignored (``/metrics?x`` is ``/metrics``).
        """
        return health_answer(path, self.registry, self._not_ready)

    def _not_ready(self) -> str | None:
        if self._server.ready:
            return None
        return "draining" if self._server.draining else "starting"

    def process_request(self, conn: ServerConnection, request: Request) -> Response | None:
        """websockets' ``process_request`` hook for the game port."""
        found = self.answer(request.path)
        if found is None:
            return None
        return http_response(conn, *found)

    def process_http_only(self, conn: ServerConnection, request: Request) -> Response:
        """The hook for ``--metrics-port``: health and metrics, else 404."""
        return http_response(conn, *(self.answer(request.path) or NOT_FOUND))


def _child(children: dict[str, Counter], counter: Counter, label: str) -> Counter:
    """``counter.labels(label)``, looked up once and kept in ``children``
    (``labels`` takes a lock and builds a key: too dear per tick)."""
    child = children.get(label)
    if child is None:
        child = children[label] = counter.labels(label)
    return child


def http_response(conn: ServerConnection, status: int, content_type: str, body: bytes) -> Response:
    """A plain HTTP answer to a handshake (health checks, metrics): ``body``
    as ``content_type``, never cached."""
    response = conn.respond(http.HTTPStatus(status), "")
    response.body = body
    for key in ("Content-Type", "Content-Length"):
        del response.headers[key]
    response.headers["Content-Type"] = content_type
    response.headers["Content-Length"] = str(len(body))
    response.headers["Cache-Control"] = "no-store"
    return response


# ------------------------------------------------------------- for other servers
# Helpers for the metrics of processes other than ``serve`` (the cluster
# gateway and worker, server/cluster/gateway_metrics.py and worker_metrics.py),
# so they are built and answered the same way.

TEXT_PLAIN = "text/plain; charset=utf-8"
"""Content type of the health checks' answers."""


def new_registry() -> CollectorRegistry:
    """A ``CollectorRegistry`` of its own for one server (several may run in one
    process), holding the ``underhall_process_*`` metrics (CPU seconds,
    resident memory, open files), without ``*_created`` series."""
    disable_created_metrics()  # type: ignore[no-untyped-call]
    registry = CollectorRegistry(auto_describe=True)
    ProcessCollector(namespace="underhall", registry=registry)
    return registry


def metrics_answer(registry: CollectorRegistry) -> tuple[int, str, bytes]:
    """``(200, content type, body)``: ``registry`` in the Prometheus text
    format (version 0.0.4), for :func:`http_response`."""
    return 200, CONTENT_TYPE_PLAIN_0_0_4, generate_latest(registry)


NOT_FOUND = (404, TEXT_PLAIN, b"not found: try /metrics, /healthz or /readyz\n")
"""The answer of a metrics-only port to any other path."""


def health_answer(
    path: str, registry: CollectorRegistry, not_ready: Callable[[], str | None]
) -> tuple[int, str, bytes] | None:
    """``(status, content type, body)`` for ``/metrics`` (``registry``),
    ``/healthz`` (200 ``ok``) or ``/readyz`` (200 ``ready`` when
    ``not_ready()`` is None, else 503 and its reason), for :func:`http_response`;
    None for any other path. Query strings are ignored (``/metrics?x`` is
    ``/metrics``)."""
    path = path.split("?", 1)[0]
    if path == "/metrics":
        return metrics_answer(registry)
    if path == "/healthz":
        return 200, TEXT_PLAIN, b"ok\n"
    if path == "/readyz":
        why = not_ready()
        if why is None:
            return 200, TEXT_PLAIN, b"ready\n"
        return 503, TEXT_PLAIN, f"{why}\n".encode()
    return None


def labelled(children: dict[str, Counter], counter: Counter, label: str) -> Counter:
    """``counter.labels(label)``, looked up once and kept in ``children``: for
    counters bumped per message or per frame."""
    return _child(children, counter, label)
