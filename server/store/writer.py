"""Saving off the tick: a thread that writes what the tick packed.

The tick builds and packs the records (:func:`~server.store.base.pack_record`:
packing at once lets each record's dicts be freed at once, which keeps the
garbage collector quiet) and hands the blobs over with
:meth:`StoreWriter.submit`; this thread skips those equal to what it last
wrote and writes the rest in one transaction. Submissions waiting while a
write runs are merged, the newest record of each player or level winning,
so a slow database delays saves instead of queueing them without bound. A
failed write is logged and its rows are retried (unless newer ones replaced
them) in the next transaction.

What it last wrote is remembered as a digest per row (:func:`digest`), not
as the row's bytes: a copy of every seated character's record would hold
its map memory's compressed grids a second time (issue 48).
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from server.store.base import LevelRow, PlayerRow, Store, StoreError

log = logging.getLogger("underhall.store")

CHECKPOINT_KEY = "checkpoint_tick"
"""Metadata key of the tick of the last checkpoint written: every character
and level in the database is as it was at that tick or later."""
IDLE_EXIT_S = 30.0
"""The thread ends after this long with nothing to write (started again on demand)."""
RETRY_S = 1.0
"""Pause after a failed write before trying again."""
WRITER_NICE = 19
"""Niceness of the writer thread on Linux (the lowest priority): on a core
it shares with the tick, the scheduler gives it the time the tick leaves
idle instead of half the core while a tick runs. A tick that never leaves
the core idle still lets it run (a niced thread is slowed, not stopped),
and saves that wait merge into one write."""


def _lower_priority() -> None:
    """Give the calling thread :data:`WRITER_NICE` (Linux only: elsewhere, or
    where it is refused, the thread keeps its priority)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WRITER_NICE)
    except OSError:
        pass


DIGEST_BYTES = 32
"""Size of the digest the writer keeps of each row it wrote (SHA-256): no
two different records are known to share one, so a changed row is never
taken for the one written before it."""


def digest(blob: bytes) -> bytes:
    """The SHA-256 digest (:data:`DIGEST_BYTES` bytes) of a packed row, by
    which the writer knows a row equal to the one it last wrote. Computed in
    the writer's thread (hashlib lets go of the GIL while it hashes a row
    of more than 2 kB, so the tick runs meanwhile)."""
    return hashlib.sha256(blob).digest()


@dataclass(slots=True)
class WriteStats:
    """What the writer has done (read from any thread)."""

    writes: int = 0
    rows: int = 0
    failures: int = 0
    last_ms: float = 0.0
    max_ms: float = 0.0


class StoreWriter:
    """The background writer of one store.

    Args:
        store: Where to write. The caller keeps using it for reads.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self.stats = WriteStats()
        self.committed = 0
        """The highest submission number whose rows are all in the database."""
        self._cond = threading.Condition()
        self._players: dict[str, PlayerRow] = {}
        """Rows waiting to be written, by name: the tuples as submitted (no
        object of the writer's own per row, so a checkpoint of thousands of
        players leaves the garbage collector little to walk while it waits)."""
        self._forget: set[str] = set()
        """Names among ``_players`` whose submission said they left."""
        self._levels: dict[int, tuple[bytes, int]] = {}
        self._checkpoint: int | None = None
        self._pending_seq = 0
        self._seq = 0
        self._busy = False
        self._thread: threading.Thread | None = None
        self._written_players: dict[str, bytes] = {}
        """Name -> :func:`digest` of the record last written (a seated
        character's; forgotten once one who left is written)."""
        self._written_levels: dict[int, bytes] = {}
        """Depth -> :func:`digest` of the level record last written."""
        self.on_saved: Callable[[str, float], None] | None = None
        """Called from the writer thread after each successful write with
        ``("checkpoint", seconds)`` (for metrics)."""
        self.on_error: Callable[[str], None] | None = None
        """Called from the writer thread with ``"checkpoint"`` after a failed write."""

    def submit(
        self,
        players: list[PlayerRow],
        levels: list[LevelRow],
        forget: frozenset[str] | set[str] = frozenset(),
        checkpoint_tick: int | None = None,
    ) -> int:
        """Queue packed player and level rows to be written together in one
        transaction.

        ``forget`` names players
        who left: once written, the writer drops its copy of them.
        ``checkpoint_tick`` says these rows are the whole world at that tick;
        it is written as the metadata value ``CHECKPOINT_KEY``.

        Returns:
            This submission's number: it is in the database once
            :attr:`committed` reaches it.
        """
        with self._cond:
            self._seq += 1
            waiting, leaving = self._players, self._forget
            for row in players:
                name = row[0]
                waiting[name] = row
                if name in forget:
                    leaving.add(name)
                else:
                    leaving.discard(name)
            for depth, blob, tick in levels:
                self._levels[depth] = (blob, tick)
            if checkpoint_tick is not None:
                self._checkpoint = checkpoint_tick
            self._pending_seq = self._seq
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="store-writer", daemon=True)
                self._thread.start()
            self._cond.notify()
            return self._seq

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything submitted so far is written (or failed and
        waiting for its retry). Returns False on timeout."""
        with self._cond:
            return self._cond.wait_for(
                lambda: not self._busy and not self._players and not self._levels, timeout
            )

    def _run(self) -> None:
        _lower_priority()
        while True:
            with self._cond:
                if not self._cond.wait_for(
                    lambda: bool(self._players or self._levels), IDLE_EXIT_S
                ):
                    self._thread = None
                    return
                players, self._players = self._players, {}
                forget, self._forget = self._forget, set()
                levels, self._levels = self._levels, {}
                checkpoint, self._checkpoint = self._checkpoint, None
                seq = self._pending_seq
                self._busy = True
            ok = self._write(players, forget, levels, checkpoint)
            with self._cond:
                self._busy = False
                if ok:
                    self.committed = max(self.committed, seq)
                else:  # keep for a retry what nothing newer replaced
                    for name, row in players.items():
                        if name not in self._players:
                            self._players[name] = row
                            if name in forget:
                                self._forget.add(name)
                    for depth, lv in levels.items():
                        self._levels.setdefault(depth, lv)
                    if self._checkpoint is None:
                        self._checkpoint = checkpoint
                self._cond.notify_all()
            if not ok:
                time.sleep(RETRY_S)

    def _write(
        self,
        players: dict[str, PlayerRow],
        forget: set[str],
        levels: dict[int, tuple[bytes, int]],
        checkpoint: int | None,
    ) -> bool:
        started = time.perf_counter()
        written = self._written_players
        player_sums = {name: digest(row[2]) for name, row in players.items()}
        level_sums = {depth: digest(blob) for depth, (blob, _) in levels.items()}
        player_rows = [
            row for name, row in sorted(players.items()) if written.get(name) != player_sums[name]
        ]
        level_rows = [
            (depth, blob, tick)
            for depth, (blob, tick) in sorted(levels.items())
            if self._written_levels.get(depth) != level_sums[depth]
        ]
        try:
            meta = [] if checkpoint is None else [(CHECKPOINT_KEY, str(checkpoint))]
            self.store.save(player_rows, level_rows, meta)
        except StoreError as exc:
            self.stats.failures += 1
            if self.on_error is not None:
                self.on_error("checkpoint")
            log.error(
                "saving %d characters and %d levels failed (will retry): %s",
                len(player_rows),
                len(level_rows),
                exc,
            )
            return False
        for name in players:
            if name in forget:
                written.pop(name, None)
            else:
                written[name] = player_sums[name]
        self._written_levels.update(level_sums)
        ms = (time.perf_counter() - started) * 1000
        self.stats.writes += 1
        self.stats.rows += len(player_rows) + len(level_rows)
        self.stats.last_ms = ms
        self.stats.max_ms = max(self.stats.max_ms, ms)
        if self.on_saved is not None:
            self.on_saved("checkpoint", ms / 1000)
        return True
