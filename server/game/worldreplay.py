"""Re-running a recording of the world headless (issue 45, item 4).

:func:`replay_world` reads a recording (:mod:`server.game.worldrecord`),
makes the world again from its header, and feeds it the recorded joins,
leaves and commands between the same ticks, with the same level keeper
after each tick as ``underhall serve`` runs; after each tick it compares
the world's checksums with the recorded ones and stops at the first that
differs. No host, views or network: only the simulation, which is what a
recording reproduces (``underhall replay-world``).
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from pathlib import Path

from server.game.keeper import LevelKeeper
from server.game.wire import to_command
from server.game.worldrecord import (
    SUMS,
    Cmd,
    Header,
    Join,
    Leave,
    Raised,
    RecordingReader,
    Tick,
    code_digest,
    content_digest,
    world_sums,
)
from server.sim.world import World
from server.store.base import unpack_record


@dataclass(slots=True)
class Divergence:
    """Where a replay first failed to reproduce its recording."""

    tick: int
    """The tick (the tick about to run, for a join, leave or command)."""
    what: str
    """What differs, in words."""


@dataclass(slots=True)
class ReplayReport:
    """What :func:`replay_world` found."""

    path: Path
    seed: int = 0
    first_tick: int = 0
    ticks: int = 0
    """Ticks replayed whose checksums matched."""
    recorded_ticks: int = 0
    """Ticks the recording holds (read to its end after a divergence)."""
    players: set[str] = field(default_factory=set)
    """Names that joined."""
    joins: int = 0
    leaves: int = 0
    commands: int = 0
    ended: bool = False
    """The recording has its end mark (else it was cut off)."""
    cut: bool = False
    """The file stops within a record."""
    notes: list[str] = field(default_factory=list)
    """Warnings: another version or other rules data than the recording's."""
    raised: list[tuple[int, str]] = field(default_factory=list)
    """Ticks whose step raised, as recorded, and what the replay's raised
    (the server logged ``tick N failed`` and went on)."""
    divergence: Divergence | None = None

    @property
    def ok(self) -> bool:
        """Every recorded tick was reproduced."""
        return self.divergence is None

    def summary(self) -> str:
        """The report in a few lines of text."""
        last = self.first_tick + self.ticks - 1
        lines = [
            f"{self.path}: seed {self.seed}, {self.ticks} ticks replayed"
            + (f" ({self.first_tick}-{last})" if self.ticks else "")
            + f", {len(self.players)} players ({self.joins} joins, {self.leaves} leaves), "
            f"{self.commands} commands"
        ]
        lines += [f"note: {note}" for note in self.notes]
        lines += [
            f"the step of tick {tick} raised, as recorded: {what}" for tick, what in self.raised
        ]
        if not self.ended:
            lines.append(
                "the recording has no end mark: it was cut off (the server was killed?)"
                + (", within a record" if self.cut else "")
                + "; replayed up to its last whole tick"
            )
        if self.divergence is None:
            lines.append(f"every recorded tick reproduced ({self.ticks} of {self.ticks})")
        else:
            lines.append(
                f"DIVERGED at tick {self.divergence.tick}: {self.divergence.what} "
                f"({self.ticks} of the {self.recorded_ticks} recorded ticks reproduced before)"
            )
        return "\n".join(lines)


def replay_world(path: Path) -> ReplayReport:
    """Re-run the recording in ``path`` and compare every tick's checksums.

    Returns:
        The report; its :attr:`~ReplayReport.divergence` is the first place
        the replay did not reproduce the recording (None: every tick did).

    Raises:
        RecordingError: The file is not a recording, or is damaged in its
            middle (a file cut off at its end is read up to there).
        OSError: The file cannot be read.
    """
    reader = RecordingReader(path)
    report = ReplayReport(path)
    records = iter(reader)
    header = next(records, None)
    if not isinstance(header, Header):
        report.ended, report.cut = reader.ended, reader.cut
        report.notes.append("the file holds no header: nothing to replay")
        return report
    report.seed, report.first_tick = header.seed, header.tick
    if header.content != content_digest():
        report.notes.append(
            f"the rules data differ from the recording's ({header.content}, here "
            f"{content_digest()}): a divergence may be that"
        )
    if header.code != code_digest():
        report.notes.append(
            f"the simulation's code (server/sim) differs from the recording's "
            f"({header.code}, here {code_digest()}; recorded by underhall {header.version}): "
            "a divergence may be that"
        )
    world = World(header.seed, size=header.size, populate=header.populate)
    world.tick = header.tick
    world.saved_levels.update(
        {depth: unpack_record(blob) for depth, blob in header.saved_levels.items()}
    )
    keeper = LevelKeeper(world, None, header.keeper_idle_ticks)
    for record in records:
        found = _apply(world, record, report)
        if found is not None:
            tick = record.tick if isinstance(record, Tick | Raised) else world.tick
            report.divergence = Divergence(tick, found)
            break
        if isinstance(record, Tick):
            keeper.after_tick()
    failed = int(report.divergence is not None and isinstance(record, Tick))
    report.recorded_ticks = report.ticks + failed + sum(isinstance(r, Tick) for r in records)
    report.ended, report.cut = reader.ended, reader.cut
    return report


def _apply(world: World, record: object, report: ReplayReport) -> str | None:
    """Carry out one record in ``world``; return what differs, or None."""
    if isinstance(record, Cmd):
        report.commands += 1
        try:
            command = to_command(
                record.c,
                record.d,
                item=record.item,
                at=record.at,
                spell=record.spell,
                opt=record.opt,
            )
        except ValueError as exc:
            return f"command {record.seq} of actor {record.actor_id} is not valid here: {exc}"
        try:
            world.submit(record.actor_id, command, record.seq)
        except KeyError:
            pass  # the player had left: refused alike when it was recorded
        return None
    if isinstance(record, Join):
        report.joins += 1
        report.players.add(record.name)
        saved = None if record.record is None else unpack_record(record.record)
        try:
            got: int | None = world.join(record.name, record.class_key, saved).id
        except LookupError:
            got = None
        if got != record.actor_id:
            return f"{record.name} joined as actor {got}, recorded {record.actor_id}"
        return None
    if isinstance(record, Leave):
        report.leaves += 1
        if record.actor_id not in world.actors:
            return f"actor {record.actor_id} left, but is not in the replayed world"
        world.leave(record.actor_id)
        return None
    if isinstance(record, Tick):
        if record.tick != world.tick:
            return f"the recording's next tick is {record.tick}, the replay's {world.tick}"
        try:
            events = world.step()
        except Exception as exc:  # noqa: BLE001 -- the bug the recording may be about
            return f"the step raised {_error(exc)}, which it did not when recorded"
        sums = world_sums(world, events)
        differ = [k for k in SUMS if getattr(sums, k) != getattr(record, k)]
        if differ:
            told = ", ".join(
                f"{k} (recorded {getattr(record, k)}, replayed {getattr(sums, k)})"
                if k in ("actors", "events")
                else k
                for k in differ
            )
            return f"{told} differ"
        report.ticks += 1
        return None
    if isinstance(record, Raised):
        if record.tick != world.tick:
            return f"the recording's next tick is {record.tick}, the replay's {world.tick}"
        try:
            world.step()
        except Exception as exc:  # noqa: BLE001 -- the failure the recording holds
            report.raised.append((record.tick, _error(exc)))
            return None
        return f"the step did not raise; when recorded it raised {record.error}"
    if isinstance(record, Header):
        return "a second header"
    return None  # End


def _error(exc: Exception) -> str:
    """``exc``'s type, message and the line that raised it."""
    where = traceback.extract_tb(exc.__traceback__)[-1]
    return f"{type(exc).__name__}: {exc} (at {where.filename}:{where.lineno}, in {where.name})"
