"""The Prometheus metrics of one cluster gateway, answered at ``GET /metrics``
on the gateway's own port (beside ``/healthz`` and ``/readyz``).

Every :class:`~server.cluster.gateway.Gateway` owns one :class:`GatewayMetrics`
with its own ``CollectorRegistry`` (several gateways may run in one process,
as in the tests), built by the helpers of :mod:`server.net.metrics`. Events
are counted as they happen; what already exists as the gateway's state
(players, workers heard, frames written, route changes) is read when scraped,
so the frame path pays one integer addition per frame.

Names follow ``underhall serve``'s: a metric that means the same as one of
``serve``'s keeps its name (``underhall_players_online``,
``underhall_frames_sent_total``, ...), so one dashboard reads both; the
gateway's own start ``underhall_gateway_``. docs/operating.md lists them all.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Protocol

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from server.net.metrics import FrontMetrics, FrontState

WORKER_SHOWN_S = 600.0
"""A worker not heard from for this many seconds is left out of the
per-worker series (worker ids of past processes would pile up)."""


class Routed(Protocol):
    """A seated player, as the metrics read it."""

    @property
    def worker(self) -> str: ...


class Watched(FrontState, Protocol):
    """What a gateway's metrics read of :class:`~server.cluster.gateway.Gateway`."""

    draining: bool
    handoffs: int
    dropped: dict[str, int]
    heartbeats: dict[str, float]

    @property
    def players(self) -> Mapping[int, Routed]: ...

    def live_workers(self) -> list[str]: ...


class _StateCollector:
    """Series read from the gateway's state at scrape time."""

    def __init__(self, gateway: Watched) -> None:
        self._gateway = gateway

    def describe(self) -> Iterator[Metric]:
        """The families :meth:`collect` yields, without samples (read at registration)."""
        yield GaugeMetricFamily("underhall_draining", "")
        yield CounterMetricFamily("underhall_gateway_handoffs", "")
        yield CounterMetricFamily("underhall_gateway_frames_dropped", "", labels=["reason"])
        yield GaugeMetricFamily("underhall_gateway_workers_live", "")
        yield GaugeMetricFamily("underhall_gateway_players_by_worker", "", labels=["worker"])
        yield GaugeMetricFamily(
            "underhall_gateway_worker_heartbeat_age_seconds", "", labels=["worker"]
        )

    def collect(self) -> Iterator[Metric]:
        gw = self._gateway
        now = time.monotonic()
        yield GaugeMetricFamily(
            "underhall_draining", "1 from the start of a drain", value=1 if gw.draining else 0
        )
        handoffs = CounterMetricFamily(
            "underhall_gateway_handoffs",
            "Route changes of a player to another worker (stairs, or seated again elsewhere)",
        )
        handoffs.add_metric([], gw.handoffs)
        yield handoffs
        dropped = CounterMetricFamily(
            "underhall_gateway_frames_dropped",
            "Workers' frames not written to the client, by reason",
            labels=["reason"],
        )
        for reason in sorted(gw.dropped):
            dropped.add_metric([reason], gw.dropped[reason])
        yield dropped
        heard = {w: now - t for w, t in gw.heartbeats.items() if now - t <= WORKER_SHOWN_S}
        yield GaugeMetricFamily(
            "underhall_gateway_workers_live",
            "Workers heard from lately enough to be asked to seat joins",
            value=len(gw.live_workers()),
        )
        by_worker: dict[str, int] = {}
        for p in gw.players.values():
            by_worker[p.worker] = by_worker.get(p.worker, 0) + 1
        players = GaugeMetricFamily(
            "underhall_gateway_players_by_worker",
            "Players of this gateway held by each worker",
            labels=["worker"],
        )
        for worker in sorted(by_worker):
            players.add_metric([worker], by_worker[worker])
        yield players
        age = GaugeMetricFamily(
            "underhall_gateway_worker_heartbeat_age_seconds",
            f"Seconds since each worker's last heartbeat (workers heard within "
            f"{WORKER_SHOWN_S:g} s)",
            labels=["worker"],
        )
        for worker in sorted(heard):
            age.add_metric([worker], round(heard[worker], 3))
        yield age


class GatewayMetrics(FrontMetrics):
    """The front's metrics and the gateway's own (the catalogue's ``front``
    and ``gateway`` groups), with the gateway's state read at scrape time."""

    def __init__(self, gateway: Watched) -> None:
        super().__init__(gateway, ("gateway",), _StateCollector(gateway))

    def route(self, kind: str) -> None:
        """A client message of type ``kind`` (``cmd``, ``look``, ``chat``) went
        (or will go) to a worker."""
        self.count("routed", kind)
