"""What a bot run measured: the run's counters and the :class:`BotReport` made of them.

:class:`Totals` holds the counters all bots of a run share; :func:`build_report`
turns them and each bot's own figures into a :class:`BotReport`, which prints
itself as a table (:meth:`BotReport.format_table`) or as one line of JSON
(:meth:`BotReport.to_json`).
"""

from __future__ import annotations

import dataclasses
import json
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

MAX_ERROR_MESSAGES = 5
"""Distinct protocol error messages kept for the report."""


@dataclass(slots=True)
class BotReport:
    """What a bot run measured. Times in seconds or ms as named; bytes in B."""

    clients_requested: int = 0
    clients_connected: int = 0
    clients_at_end: int = 0
    duration_s: float = 0.0
    commands_sent: int = 0
    acks_received: int = 0
    rejects: int = 0
    deltas_received: int = 0
    snapshots_received: int = 0
    messages_received: int = 0
    bytes_received: int = 0
    bytes_per_client_s: float = 0.0
    messages_per_client_s: float = 0.0
    latency_samples: int = 0
    latency_p50_ms: float | None = None
    latency_p99_ms: float | None = None
    latency_max_ms: float | None = None
    protocol_errors: int = 0
    protocol_error_messages: list[str] = field(default_factory=list)
    connect_failures: int = 0
    connect_failure_messages: list[str] = field(default_factory=list)
    bot_errors: int = 0
    bot_error_messages: list[str] = field(default_factory=list)
    bots_moved: int = 0
    bots_saw_player: int = 0
    monsters_killed_witnessed: int = 0
    deaths: int = 0
    ranged_commands: int = 0
    deepest_depth: int = 0
    depths_reached: dict[str, int] = field(default_factory=dict)
    descents: int = 0
    monster_kinds_seen: int = 0
    monster_kinds: list[str] = field(default_factory=list)
    spells_learned: int = 0
    spell_kinds_learned: list[str] = field(default_factory=list)
    casts: int = 0
    casts_succeeded: int = 0
    spell_kinds_cast: list[str] = field(default_factory=list)
    pickups_sent: int = 0
    commands_by_kind: dict[str, int] = field(default_factory=dict)
    reject_reasons: dict[str, int] = field(default_factory=dict)
    items_used: dict[str, int] = field(default_factory=dict)
    item_kinds_used: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when some client connected and no protocol error or bot bug happened."""
        return self.clients_connected > 0 and self.protocol_errors == 0 and self.bot_errors == 0

    def to_json(self) -> str:
        """The report as one JSON object on one line."""
        return json.dumps(dataclasses.asdict(self), separators=(",", ":"))

    def format_table(self) -> str:
        """The report as a readable table."""

        def ms(v: float | None) -> str:
            return "-" if v is None else f"{v:.1f}"

        def counted(n: int, messages: list[str]) -> str:
            return f"{n}  ({'; '.join(messages)})" if messages else f"{n}"

        connected = self.clients_connected
        clients = (
            f"{self.clients_requested} requested, {connected} connected, "
            f"{self.clients_at_end} still connected at end"
        )
        commands = (
            f"{self.commands_sent} sent ({self.ranged_commands} throws or zaps), "
            f"{self.acks_received} acked, {self.rejects} rejected"
        )
        messages = (
            f"{self.deltas_received} deltas, {self.snapshots_received} snapshots, "
            f"{self.messages_received} in all"
        )
        nbytes = f"{self.bytes_received:,} B in all, {self.bytes_per_client_s:,.0f} B/s per client"
        latency = (
            f"p50 {ms(self.latency_p50_ms)}  p99 {ms(self.latency_p99_ms)}  "
            f"max {ms(self.latency_max_ms)}  (n={self.latency_samples})"
        )
        reached = ", ".join(f"{n} at {d}" for d, n in self.depths_reached.items())
        depths = f"deepest {self.deepest_depth} ({reached or 'none'}), {self.descents} descents"
        kinds = f"{self.monster_kinds_seen} seen ({', '.join(self.monster_kinds) or '-'})"
        spells = (
            f"{self.spells_learned} learned ({', '.join(self.spell_kinds_learned) or '-'}); "
            f"{self.casts} cast, {self.casts_succeeded} succeeded "
            f"({', '.join(self.spell_kinds_cast) or '-'})"
        )
        used = ", ".join(f"{n} {verb}" for verb, n in self.items_used.items())
        items = (
            f"{self.pickups_sent} pickups sent; used: {used or 'none'} "
            f"({', '.join(self.item_kinds_used) or '-'})"
        )
        rows = [
            ("clients", clients),
            ("connect failures", counted(self.connect_failures, self.connect_failure_messages)),
            ("duration", f"{self.duration_s:.1f} s"),
            ("commands", commands),
            ("messages", messages),
            ("bytes received", nbytes),
            ("message rate", f"{self.messages_per_client_s:.1f} per client per s"),
            ("cmd->effect ms", latency),
            ("protocol errors", counted(self.protocol_errors, self.protocol_error_messages)),
            ("bot errors", counted(self.bot_errors, self.bot_error_messages)),
            ("bots moved", f"{self.bots_moved} of {connected}"),
            ("saw a player", f"{self.bots_saw_player} of {connected}"),
            ("monsters killed", f"{self.monsters_killed_witnessed} (witnessed)"),
            ("deaths", f"{self.deaths}"),
            ("depths", depths),
            ("monster kinds", kinds),
            ("spells", spells),
            ("items", items),
            ("by command", ", ".join(f"{n} {c}" for c, n in self.commands_by_kind.items())),
            ("rejected as", ", ".join(f"{n} {r}" for r, n in self.reject_reasons.items())),
        ]
        width = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


class Totals:
    """Counters shared by all bots of a run (one event loop, so no locking)."""

    def __init__(self) -> None:
        self.commands = 0
        self.ranged = 0
        self.acks = 0
        self.rejects = 0
        self.deltas = 0
        self.snapshots = 0
        self.latencies = array("d")
        self.errors = 0
        self.error_messages: list[str] = []
        self.connect_failures = 0
        self.connect_messages: list[str] = []
        self.bot_errors = 0
        self.bot_error_messages: list[str] = []
        self.player_ids: set[int] = set()
        self.kills: set[tuple[int, int]] = set()  # (depth, monster id)
        self.deaths = 0
        self.descents = 0
        self.pickups = 0
        self.by_kind: dict[str, int] = {}
        self.reasons: dict[str, int] = {}
        self.monster_kinds: set[str] = set()
        self.learned = 0
        self.spells_learned: set[str] = set()
        self.casts = 0
        self.casts_ok = 0
        self.spells_cast: set[str] = set()
        self.uses: dict[str, int] = {}
        self.items_used: set[str] = set()

    def own_event(self, ev: Sequence[object], own_id: int | None) -> None:
        """Count one delta event of a bot's own doing (docs/protocol.md):
        ``["learn", spell]``, ``["cast", actor, spell, success]`` and
        ``["use", actor, verb, item]`` with ``actor`` the bot's id; others are
        ignored."""
        name = ev[0] if ev else None
        if name == "learn" and len(ev) > 1 and isinstance(ev[1], str):
            self.learned += 1
            self.spells_learned.add(ev[1])
        elif len(ev) < 4 or own_id is None or ev[1] != own_id or not isinstance(ev[2], str):
            return
        elif name == "cast":
            self.casts += 1
            self.casts_ok += ev[3] is True
            self.spells_cast.add(ev[2])
        elif name == "use" and isinstance(ev[3], str):
            self.uses[ev[2]] = self.uses.get(ev[2], 0) + 1
            self.items_used.add(ev[3])

    def protocol_error(self, text: str) -> None:
        self.errors += 1
        keep_message(self.error_messages, text)

    def connect_failure(self, text: str, *, protocol: bool) -> None:
        self.connect_failures += 1
        keep_message(self.connect_messages, text)
        if protocol:
            self.protocol_error(f"connect: {text}")


def keep_message(messages: list[str], text: str) -> None:
    """Append ``text`` to ``messages`` if new and fewer than the maximum are kept."""
    if len(messages) < MAX_ERROR_MESSAGES and text not in messages:
        messages.append(text)


class ConnectionFigures(Protocol):
    """What the report reads of a bot's :class:`client.connection.Connection`."""

    @property
    def bytes_received(self) -> int: ...
    @property
    def messages_received(self) -> int: ...


class BotFigures(Protocol):
    """What the report reads of one bot of the run (``client.bots._Bot``)."""

    @property
    def conn(self) -> ConnectionFigures | None: ...
    @property
    def connected_at(self) -> float: ...
    @property
    def closed_at(self) -> float | None: ...
    @property
    def moved(self) -> bool: ...
    @property
    def saw_player(self) -> bool: ...
    @property
    def deepest(self) -> int: ...


def build_report(
    bots: Sequence[BotFigures], totals: Totals, started: float, ended: float
) -> BotReport:
    """The report of a run from its totals and its bots (connected or not).

    ``started`` and ``ended`` are ``time.perf_counter()`` seconds; a bot still
    connected at the end counts as connected until ``ended``.
    """
    connected = [b for b in bots if b.conn is not None]
    client_s = sum((b.closed_at or ended) - b.connected_at for b in connected)
    nbytes = sum(b.conn.bytes_received for b in connected if b.conn is not None)
    nmsgs = sum(b.conn.messages_received for b in connected if b.conn is not None)
    report = BotReport(
        clients_requested=len(bots),
        clients_connected=len(connected),
        clients_at_end=sum(1 for b in connected if b.closed_at is None),
        duration_s=round(ended - started, 3),
        commands_sent=totals.commands,
        acks_received=totals.acks,
        rejects=totals.rejects,
        deltas_received=totals.deltas,
        snapshots_received=totals.snapshots,
        messages_received=nmsgs,
        bytes_received=nbytes,
        bytes_per_client_s=round(nbytes / client_s, 1) if client_s > 0 else 0.0,
        messages_per_client_s=round(nmsgs / client_s, 2) if client_s > 0 else 0.0,
        latency_samples=len(totals.latencies),
        protocol_errors=totals.errors,
        protocol_error_messages=list(totals.error_messages),
        connect_failures=totals.connect_failures,
        connect_failure_messages=list(totals.connect_messages),
        bot_errors=totals.bot_errors,
        bot_error_messages=list(totals.bot_error_messages),
        bots_moved=sum(1 for b in connected if b.moved),
        bots_saw_player=sum(1 for b in connected if b.saw_player),
        monsters_killed_witnessed=len(totals.kills),
        deaths=totals.deaths,
        ranged_commands=totals.ranged,
        deepest_depth=max((b.deepest for b in connected), default=0),
        depths_reached={
            str(d): sum(1 for b in connected if b.deepest == d)
            for d in sorted({b.deepest for b in connected if b.deepest > 0})
        },
        descents=totals.descents,
        monster_kinds_seen=len(totals.monster_kinds),
        monster_kinds=sorted(totals.monster_kinds),
        spells_learned=totals.learned,
        spell_kinds_learned=sorted(totals.spells_learned),
        casts=totals.casts,
        casts_succeeded=totals.casts_ok,
        spell_kinds_cast=sorted(totals.spells_cast),
        pickups_sent=totals.pickups,
        commands_by_kind=dict(sorted(totals.by_kind.items())),
        reject_reasons=dict(sorted(totals.reasons.items())),
        items_used=dict(sorted(totals.uses.items())),
        item_kinds_used=sorted(totals.items_used),
    )
    if totals.latencies:
        lat_ms = np.frombuffer(totals.latencies, dtype=np.float64) * 1000.0
        p50, p99 = np.percentile(lat_ms, [50, 99])
        report.latency_p50_ms = round(float(p50), 2)
        report.latency_p99_ms = round(float(p99), 2)
        report.latency_max_ms = round(float(lat_ms.max()), 2)
    return report
