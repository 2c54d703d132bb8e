"""Saving off the tick: a thread that packs records and writes them.

The tick only builds record dicts (plain data, sharing nothing with the live
world) and hands them over with :meth:`StoreWriter.submit`; this thread packs
them, skips those equal to what it last wrote, and writes the rest in one
transaction. Submissions waiting while a write runs are merged, the newest
record of each player or level winning, so a slow database delays saves
instead of queueing them without bound. A failed write is logged and its rows
are retried (unless newer ones replaced them) in the next transaction.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from server.store.base import LevelRow, PlayerRow, Store, StoreError, pack_record

log = logging.getLogger("underhall.store")

IDLE_EXIT_S = 30.0
"""The thread ends after this long with nothing to write (started again on demand)."""
RETRY_S = 1.0
"""Pause after a failed write before trying again."""


@dataclass(slots=True)
class _Player:
    token_hash: str
    record: dict[str, Any]
    tick: int
    forget: bool


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
        self._players: dict[str, _Player] = {}
        self._levels: dict[int, tuple[dict[str, Any], int]] = {}
        self._pending_seq = 0
        self._seq = 0
        self._busy = False
        self._thread: threading.Thread | None = None
        self._written_players: dict[str, bytes] = {}
        self._written_levels: dict[int, bytes] = {}

    def submit(self, players: list[tuple[str, str, dict[str, Any], int]],
               levels: list[tuple[int, dict[str, Any], int]],
               forget: frozenset[str] | set[str] = frozenset()) -> int:
        """Queue ``(name, token_hash, record, tick)`` and ``(depth, record,
        tick)`` rows to be written together in one transaction.

        The records must not be changed afterwards. ``forget`` names players
        who left: once written, the writer drops its copy of them.

        Returns:
            This submission's number: it is in the database once
            :attr:`committed` reaches it.
        """
        with self._cond:
            self._seq += 1
            for name, token_hash, record, tick in players:
                self._players[name] = _Player(token_hash, record, tick, name in forget)
            for depth, record, tick in levels:
                self._levels[depth] = (record, tick)
            self._pending_seq = self._seq
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="store-writer",
                                                daemon=True)
                self._thread.start()
            self._cond.notify()
            return self._seq

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything submitted so far is written (or failed and
        waiting for its retry). Returns False on timeout."""
        with self._cond:
            return self._cond.wait_for(
                lambda: not self._busy and not self._players and not self._levels, timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._cond.wait_for(lambda: bool(self._players or self._levels),
                                           IDLE_EXIT_S):
                    self._thread = None
                    return
                players, self._players = self._players, {}
                levels, self._levels = self._levels, {}
                seq = self._pending_seq
                self._busy = True
            ok = self._write(players, levels)
            with self._cond:
                self._busy = False
                if ok:
                    self.committed = max(self.committed, seq)
                else:  # keep for a retry what nothing newer replaced
                    for name, p in players.items():
                        self._players.setdefault(name, p)
                    for depth, lv in levels.items():
                        self._levels.setdefault(depth, lv)
                self._cond.notify_all()
            if not ok:
                time.sleep(RETRY_S)

    def _write(self, players: dict[str, _Player],
               levels: dict[int, tuple[dict[str, Any], int]]) -> bool:
        started = time.perf_counter()
        player_rows: list[PlayerRow] = []
        player_blobs: dict[str, bytes] = {}
        for name, p in sorted(players.items()):
            blob = pack_record(p.record)
            if self._written_players.get(name) != blob:
                player_rows.append((name, p.token_hash, blob, p.tick))
            player_blobs[name] = blob
        level_rows: list[LevelRow] = []
        level_blobs: dict[int, bytes] = {}
        for depth, (record, tick) in sorted(levels.items()):
            blob = pack_record(record)
            if self._written_levels.get(depth) != blob:
                level_rows.append((depth, blob, tick))
            level_blobs[depth] = blob
        try:
            self.store.save(player_rows, level_rows)
        except StoreError as exc:
            self.stats.failures += 1
            log.error("saving %d characters and %d levels failed (will retry): %s",
                      len(player_rows), len(level_rows), exc)
            return False
        for name, blob in player_blobs.items():
            if players[name].forget:
                self._written_players.pop(name, None)
            else:
                self._written_players[name] = blob
        self._written_levels.update(level_blobs)
        ms = (time.perf_counter() - started) * 1000
        self.stats.writes += 1
        self.stats.rows += len(player_rows) + len(level_rows)
        self.stats.last_ms = ms
        self.stats.max_ms = max(self.stats.max_ms, ms)
        return True
