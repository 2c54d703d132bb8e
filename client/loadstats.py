"""What a load run measured: counters, snapshots and their reports.

One :class:`Counters` per process of :mod:`client.loadgen`; a snapshot of it
is a plain JSON-able dict (:meth:`Counters.snapshot`), snapshots of several
processes add up with :func:`merge`, and :func:`diff` of two snapshots
describes the window between them (what ``bench/scale.py`` measures).
:func:`live_line` and :func:`format_report` print them for people.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "LAT_BUCKETS", "Counters", "diff", "format_report", "live_line", "merge", "percentile",
]  # fmt: skip


LAT_BUCKETS = 5001
"""Latency histogram buckets: bucket ``k`` counts latencies in ``[k, k + 1)`` ms;
the last one everything from 5 s up."""


class Placed(Protocol):
    """What a snapshot reads of a client: whether it plays, its depth and its target."""

    playing: bool
    depth: int
    target: int


@dataclass(slots=True)
class Counters:
    """Cumulative counters of the clients of one process."""

    joins: int = 0
    connected: int = 0
    welcomed: int = 0
    closed: int = 0
    frames: int = 0
    bytes: int = 0
    snaps: int = 0
    deltas: int = 0
    cmds: int = 0
    acks: int = 0
    lat: list[int] = field(default_factory=lambda: [0] * LAT_BUCKETS)
    rejects: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    connect_failures: Counter[str] = field(default_factory=Counter)
    join_welcome: Counter[str] = field(default_factory=Counter)
    """Join latency histogram: ms (key ``str(int(ms))``) from starting the TCP
    connect to receiving ``welcome``, one count per welcomed client."""
    join_snap: Counter[str] = field(default_factory=Counter)
    """The same, from starting the TCP connect to the first ``snap``."""

    def joined(self, since: float, now: float, *, snap: bool) -> None:
        """Count one client's join latency (``time.perf_counter()`` seconds):
        ``welcome`` received (``snap`` False) or the first ``snap``."""
        (self.join_snap if snap else self.join_welcome)[str(int((now - since) * 1000.0))] += 1

    def snapshot(self, clients: Iterable[Placed] = ()) -> dict[str, Any]:
        """The counters now, as a JSON-able dict.

        Keys: ``t`` (Unix time, s), the counters above, ``lat``,
        ``join_welcome`` and ``join_snap`` as sparse ``{ms bucket: count}``, ``depths`` ``{depth: clients}`` and ``settled``
        (clients at their target depth) over ``clients`` that are playing,
        ``cpu_s`` this process's CPU seconds, ``procs`` 1.
        """
        depths: Counter[str] = Counter()
        settled = 0
        for c in clients:
            if c.playing:
                depths[str(c.depth)] += 1
                settled += c.depth == c.target
        return {
            "t": time.time(), "joins": self.joins, "connected": self.connected,
            "welcomed": self.welcomed, "closed": self.closed, "frames": self.frames,
            "bytes": self.bytes, "snaps": self.snaps, "deltas": self.deltas,
            "cmds": self.cmds, "acks": self.acks,
            "lat": {str(k): v for k, v in enumerate(self.lat) if v},
            "rejects": dict(self.rejects), "errors": dict(self.errors),
            "refused": dict(self.refused), "connect_failures": dict(self.connect_failures),
            "join_welcome": dict(self.join_welcome), "join_snap": dict(self.join_snap),
            "depths": dict(depths), "settled": settled,
            "cpu_s": time.process_time(), "procs": 1,
        }  # fmt: skip


_SUMMED = (
    "joins",
    "connected",
    "welcomed",
    "closed",
    "frames",
    "bytes",
    "snaps",
    "deltas",
    "cmds",
    "acks",
    "settled",
    "cpu_s",
    "procs",
)
_COUNTED = (
    "lat",
    "rejects",
    "errors",
    "refused",
    "connect_failures",
    "join_welcome",
    "join_snap",
    "depths",
)


def merge(snaps: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Sum snapshots of several processes into one (``t``: the latest)."""
    out: dict[str, Any] = {k: 0 for k in _SUMMED}
    out.update({k: {} for k in _COUNTED})
    out["t"] = 0.0
    for s in snaps:
        out["t"] = max(out["t"], s["t"])
        for k in _SUMMED:
            out[k] += s.get(k, 0)
        for k in _COUNTED:
            for key, v in s.get(k, {}).items():
                out[k][key] = out[k].get(key, 0) + v
    return out


def diff(later: Mapping[str, Any], earlier: Mapping[str, Any]) -> dict[str, Any]:
    """What happened between two snapshots: counters subtracted, ``seconds`` added.

    ``connected``, ``depths`` and ``settled`` are the later snapshot's (states, not counts).
    """
    out = dict(later)
    out["seconds"] = later["t"] - earlier["t"]
    for k in _SUMMED:
        if k not in ("connected", "settled", "procs"):
            out[k] = later[k] - earlier[k]
    for k in _COUNTED:
        if k != "depths":
            before = earlier.get(k, {})
            out[k] = {
                key: v - before.get(key, 0)
                for key, v in later.get(k, {}).items()
                if v - before.get(key, 0)
            }
    return out


def percentile(lat: Mapping[str, int], q: float) -> float | None:
    """The ``q`` quantile (0..1, nearest rank) of a latency histogram, in ms (bucket
    midpoint), or None when it is empty."""
    total = sum(lat.values())
    if total == 0:
        return None
    rank = max(math.ceil(q * total), 1)  # the nearest-rank method
    seen = 0
    for key in sorted(lat, key=int):
        seen += lat[key]
        if seen >= rank:
            return int(key) + 0.5
    return float(LAT_BUCKETS - 1)


def live_line(now: Mapping[str, Any], last: Mapping[str, Any] | None, n: int) -> str:
    """One status line: connected, messages/s and latency p50/p99 over the last interval."""
    d = diff(now, last) if last is not None else None
    secs = d["seconds"] if d is not None and d["seconds"] > 0 else None
    rate = f"{d['frames'] / secs:,.0f}" if d is not None and secs else "-"
    lat = d["lat"] if d is not None else now["lat"]
    p50, p99 = percentile(lat, 0.5), percentile(lat, 0.99)

    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v:.0f}"

    return (
        f"connected {now['connected']:,}/{n:,}  msgs/s {rate}  cmd->effect p50 {ms(p50)} "
        f"p99 {ms(p99)} ms  rejects {sum(now['rejects'].values()):,}  "
        f"errors {sum(now['errors'].values()):,}"
    )


def format_report(final: Mapping[str, Any], first: Mapping[str, Any] | None, n: int) -> str:
    """The run's report as a readable table (``first``: a snapshot to measure rates from)."""
    d = diff(final, first) if first is not None else dict(final, seconds=0.0)
    secs = d["seconds"]
    welcomed = max(final["welcomed"], 1)

    def per_s(v: float) -> str:
        return f"{v / secs:,.1f}" if secs > 0 else "-"

    def counted(c: Mapping[str, int]) -> str:
        items = sorted(c.items(), key=lambda kv: -kv[1])
        return ", ".join(f"{k} {v:,}" for k, v in items) if items else "none"

    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v:.1f}"

    lat = final["lat"]
    lines = [
        (
            f"clients        {n:,} requested, {final['welcomed']:,} joined, "
            f"{final['closed']:,} closed by the server"
        ),
        f"joins refused  {counted(final['refused'])}",
        f"connect fails  {counted(final['connect_failures'])}",
        f"commands       {final['cmds']:,} sent, {final['acks']:,} acknowledged",
        f"rejects        {counted(final['rejects'])}",
        f"errors         {counted(final['errors'])}",
        (
            f"received       {final['frames']:,} frames ({final['snaps']:,} snaps, "
            f"{final['deltas']:,} deltas), {final['bytes']:,} B"
        ),
        (
            f"per client/s   {per_s(d['frames'] / welcomed)} frames, "
            f"{per_s(d['bytes'] / welcomed)} B  (over the last {secs:.0f} s)"
        ),
        (
            f"cmd->effect    p50 {ms(percentile(lat, 0.5))} ms, "
            f"p99 {ms(percentile(lat, 0.99))} ms, max {ms(_max(lat))} ms"
        ),
        (
            f"join           welcome p50 {ms(percentile(final['join_welcome'], 0.5))} ms, "
            f"p99 {ms(percentile(final['join_welcome'], 0.99))} ms, "
            f"max {ms(_max(final['join_welcome']))} ms; first snap "
            f"p50 {ms(percentile(final['join_snap'], 0.5))} ms, "
            f"p99 {ms(percentile(final['join_snap'], 0.99))} ms, "
            f"max {ms(_max(final['join_snap']))} ms"
        ),
        f"depths         {counted(final['depths'])}",
        f"own CPU        {final['cpu_s']:.1f} s in {final['procs']} process(es)",
    ]
    return "\n".join(lines)


def _max(lat: Mapping[str, int]) -> float | None:
    return max((int(k) + 0.5 for k in lat), default=None)
