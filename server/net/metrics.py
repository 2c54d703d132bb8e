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
import tomllib
from collections.abc import Callable, Iterable, Iterator
from importlib import resources
from typing import Any, Protocol

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
from prometheus_client.registry import Collector
from websockets.asyncio.server import ServerConnection
from websockets.http11 import Request, Response

from server.game.game import Game
from server.game.hooks import GameHooks
from server.net.collector import Pacer

HEALTH_PATHS = ("/metrics", "/healthz", "/readyz")


def _catalogue() -> dict[str, Any]:
    """server/net/metrics.toml, parsed."""
    return tomllib.loads(resources.files("server.net").joinpath("metrics.toml").read_text())


CATALOGUE: dict[str, Any] = _catalogue()
"""Every event metric of every kind of process (server/net/metrics.toml):
``{"buckets": {name: [seconds, ...]}, group: {key: {"kind", "name", "help",
"labels"?, "buckets"?, "zero"?}}}`` for the groups ``front``, ``serve``,
``gateway`` and ``worker``."""


class Declared:
    """The event metrics of one process, declared from :data:`CATALOGUE`.

    Code counts by a metric's key in the catalogue, with the label values in
    the order of its ``labels``: ``count("joins", "new")``,
    ``observe("tick_seconds", 0.012)``, ``gauge("draining", 1)``. A labelled
    child is looked up once and kept (``labels()`` takes a lock and builds a
    key: too dear per frame). A ``tally`` (a counter counted per client
    message) is a dict of plain numbers by label values, turned into its
    counter family when scraped: no lock, no child, no call into
    prometheus_client per event.

    Args:
        groups: The catalogue's groups to declare (``front``, ``serve``,
            ``gateway``, ``worker``).
        collectors: What the process reads of its state at scrape time.

    Attributes:
        registry: A ``CollectorRegistry`` of this process's own (several
            servers may run in one process, as in the tests): the declared
            metrics, the ``collectors`` and ``underhall_process_*``.

    Raises:
        KeyError: a group, or a histogram's bucket list, not in the catalogue;
            and from the methods below, a key not declared, or label values
            not declared for it (ValueError from prometheus_client: too few
            or too many).
    """

    def __init__(self, groups: tuple[str, ...], *collectors: Collector) -> None:
        self.registry = registry = new_registry()
        self._counters: dict[str, Counter] = {}
        self._histograms: dict[str, Histogram] = {}
        self._gauges: dict[str, Gauge] = {}
        self._children: dict[tuple[str, ...], Any] = {}
        self._tallies: dict[str, Tally] = {}
        buckets = CATALOGUE["buckets"]
        for group in groups:
            for key, spec in CATALOGUE[group].items():
                labels = spec.get("labels", ())
                args = (spec["name"], spec["help"], labels)
                metric: Counter | Histogram | Gauge
                if spec["kind"] == "tally":
                    self._tallies[key] = Tally(*args, spec.get("zero", ()))
                    continue
                if spec["kind"] == "counter":
                    metric = self._counters[key] = Counter(*args, registry=registry)
                elif spec["kind"] == "histogram":
                    bounds = buckets[spec["buckets"]]
                    metric = self._histograms[key] = Histogram(
                        *args, buckets=bounds, registry=registry
                    )
                else:
                    metric = self._gauges[key] = Gauge(*args, registry=registry)
                for values in spec.get("zero", ()):
                    self._children[(key, *values)] = metric.labels(*values)
        if self._tallies:
            registry.register(_TallyCollector(list(self._tallies.values())))
        for collector in collectors:
            registry.register(collector)

    def _child(self, family: Counter | Histogram | Gauge, key: str, labels: tuple[str, ...]) -> Any:
        if not labels:
            return family
        child = self._children.get((key, *labels))
        if child is None:
            child = self._children[(key, *labels)] = family.labels(*labels)
        return child

    def count(self, key: str, *labels: str, by: float = 1) -> None:
        """Add ``by`` to counter (or tally) ``key``'s series for ``labels``.

        Raises:
            ValueError: ``by`` is negative, or ``labels`` are not as many as
                the metric's (also KeyError: ``key`` not declared).
        """
        tally = self._tallies.get(key)
        if tally is not None:
            tally.add(labels, by)
            return
        self._child(self._counters[key], key, labels).inc(by)

    def tally(self, key: str) -> Tally:
        """Tally ``key``, for a caller that counts into it per message.

        Raises:
            KeyError: ``key`` is not a declared tally.
        """
        return self._tallies[key]

    def observe(self, key: str, value: float, *labels: str) -> None:
        """One observation of ``value`` (seconds) in histogram ``key``."""
        self._child(self._histograms[key], key, labels).observe(value)

    def gauge(self, key: str, value: float) -> None:
        """Set gauge ``key`` (unlabelled) to ``value``."""
        self._gauges[key].set(value)

    def gauge_by(self, key: str, change: float) -> None:
        """Add ``change`` (may be negative) to gauge ``key`` (unlabelled)."""
        self._gauges[key].inc(change)


class Tally:
    """A counter family kept as plain numbers (the catalogue's ``tally``
    kind), exposed as a Prometheus counter at scrape time.

    Args:
        name: The family's name (``_total`` is added to its samples).
        help: Its help text.
        labels: Its label names.
        zero: Label values whose series show 0 before their first event.

    Attributes:
        counts: The count of each series so far, by its label values (in the
            order of ``labels``). A caller may add to it directly,
            ``counts[values] = counts.get(values, 0) + 1``, with as many
            values as labels (:meth:`add` checks that).
    """

    def __init__(
        self, name: str, help: str, labels: Iterable[str], zero: Iterable[Iterable[str]] = ()
    ) -> None:
        self.name = name
        self.help = help
        self.labels = tuple(labels)
        self.counts: dict[tuple[str, ...], float] = {tuple(values): 0 for values in zero}
        if not self.labels:
            self.counts[()] = 0

    def add(self, values: tuple[str, ...], by: float = 1) -> None:
        """Add ``by`` to the series of label ``values``.

        Raises:
            ValueError: ``by`` is negative, or ``values`` are not as many as
                the labels (as prometheus_client's counters refuse them).
        """
        if by < 0:
            raise ValueError(f"{self.name}: counters only go up, not by {by}")
        counts = self.counts
        was = counts.get(values)
        if was is None:
            if len(values) != len(self.labels):
                raise ValueError(f"{self.name}: label values {values} for labels {self.labels}")
            was = 0
        counts[values] = was + by

    def family(self) -> CounterMetricFamily:
        """The counter family of the counts now, series in label order."""
        family = CounterMetricFamily(self.name, self.help, labels=list(self.labels))
        for values, count in sorted(self.counts.items()):
            family.add_metric(list(values), count)
        return family


class _TallyCollector:
    """The tallies of one :class:`Declared`, read at scrape time."""

    def __init__(self, tallies: list[Tally]) -> None:
        self._tallies = tallies

    def describe(self) -> Iterator[Metric]:
        """The families :meth:`collect` yields, without samples (read at registration)."""
        for tally in self._tallies:
            yield CounterMetricFamily(tally.name, "", labels=list(tally.labels))

    def collect(self) -> Iterator[Metric]:
        for tally in self._tallies:
            yield tally.family()


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


class FrontMetrics(Declared):
    """The metrics every front keeps (:mod:`server.net.front`): the
    catalogue's ``front`` group, and the groups a subclass names.

    Args:
        front: The front whose state is read at scrape time.
        groups: More of the catalogue's groups (``serve``, ``gateway``).
        collectors: The subclass's own series read at scrape time.

    Attributes:
        frames_sent: Frames sent so far to players (plain int: counted per
            frame): ticks' messages, chat, notices, errors.
        bytes_sent: Payload bytes of those frames.
    """

    def __init__(self, front: FrontState, groups: tuple[str, ...], *collectors: Collector) -> None:
        self.frames_sent = 0
        self.bytes_sent = 0
        super().__init__(("front", *groups), _FrontCollector(front, self), *collectors)
        self._commands = self.tally("commands").counts

    def sent(self, size: int, frames: int = 1) -> None:
        """``frames`` frames of ``size`` bytes each went to players."""
        self.frames_sent += frames
        self.bytes_sent += size * frames

    def command(self, name: str) -> None:
        """A command named ``name`` was received (for the world, or a worker)."""
        counts, values = self._commands, (name,)
        counts[values] = counts.get(values, 0) + 1


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
    """The metrics of ``underhall serve``: the front's, and the game's
    (the catalogue's ``front`` and ``serve`` groups).

    Args:
        server: The server whose state is read at scrape time.
    """

    def __init__(self, server: Served) -> None:
        super().__init__(server, ("serve",), _StateCollector(server))
        self._server = server

    # --------------------------------------------------------- events

    def skipped(self, count: int) -> None:
        """``count`` players got no message this tick: their clients were
        behind (each will get a snapshot once caught up)."""
        self.count("frames_skipped", by=count)

    def tick(self, seconds: float, late: bool) -> None:
        """A tick ran for ``seconds``; ``late`` if it started after its time."""
        self.observe("tick_seconds", seconds)
        if late:
            self.count("late_ticks")

    def saved(self, what: str, seconds: float) -> None:
        self.count("saves", what)
        self.observe("save_seconds", seconds, what)

    def db_error(self, what: str) -> None:
        self.count("db_errors", what)

    def rejected(self, reasons: Iterable[str]) -> None:
        """The world refused commands for these reasons."""
        for reason in reasons:
            self.count("rejects", reason)

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
