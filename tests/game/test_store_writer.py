"""The background writer: what it writes, and that it yields the core to the tick."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from server.game.census import host_census
from server.store.base import StoreError, pack_record
from server.store.sqlite import SqliteStore
from server.store.writer import CHECKPOINT_KEY, DIGEST_BYTES, WRITER_NICE, StoreWriter


def test_a_checkpoint_is_written_from_a_thread_of_lower_priority(tmp_path: Path) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("thread priorities are set on Linux only")
    store = SqliteStore(str(tmp_path / "world.db"))
    writer = StoreWriter(store)
    seen: dict[str, int] = {}

    def saved(kind: str, seconds: float) -> None:
        seen["thread"] = threading.get_native_id()
        seen["nice"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    writer.on_saved = saved
    mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    blob = pack_record({"depth": 1, "x": 2, "y": 3})
    seq = writer.submit([("ann", "hash", blob, 30)], [], checkpoint_tick=30)
    assert writer.flush(10)
    assert writer.committed == seq
    assert seen["thread"] != threading.get_native_id()
    assert seen["nice"] == max(mine, WRITER_NICE)
    # the caller's own priority is left alone
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == mine
    loaded = store.load_player("ann")
    assert loaded is not None and loaded[1] == {"depth": 1, "x": 2, "y": 3}
    assert store.get_meta(CHECKPOINT_KEY) == "30"
    store.close()


class _FailsFirst(SqliteStore):
    """A store whose first write fails, as a database that went away would."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.attempts = 0

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.attempts += 1
        if self.attempts == 1:
            raise StoreError("the database went away")
        super().save(*args, **kwargs)


def test_rows_are_written_once_retried_after_a_failure_and_forgotten_when_asked(
    tmp_path: Path,
) -> None:
    """A row equal to what was last written for that player is skipped; a
    failed write is retried with its rows (a player's "left" mark kept); a
    player who left is forgotten once written, so the same record submitted
    again is written again."""
    store = _FailsFirst(str(tmp_path / "world.db"))
    writer = StoreWriter(store)
    ann = pack_record({"depth": 1, "x": 2, "y": 3})
    bob = pack_record({"depth": 2, "x": 5, "y": 6})
    writer.submit([("ann", "h1", ann, 10), ("bob", "h2", bob, 10)], [], forget={"bob"})
    assert writer.flush(10)
    assert store.attempts == 2 and writer.stats.failures == 1  # retried after RETRY_S
    assert writer.stats.rows == 2
    assert store.load_player("bob") is not None
    # ann's record is unchanged: skipped; bob was forgotten: written again.
    writer.submit([("ann", "h1", ann, 20), ("bob", "h2", bob, 20)], [])
    assert writer.flush(10)
    assert writer.stats.rows == 3
    # Now bob is remembered, and a later mark of leaving takes over.
    writer.submit([("ann", "h1", ann, 30), ("bob", "h2", bob, 30)], [], forget={"bob"})
    assert writer.flush(10)
    assert writer.stats.rows == 3
    writer.submit([("bob", "h2", bob, 40)], [])
    assert writer.flush(10)
    assert writer.stats.rows == 4
    store.close()


def test_the_writer_keeps_a_digest_of_each_row_not_a_copy(tmp_path: Path) -> None:
    """Issue 48: what the writer holds to skip unchanged rows is a digest of
    DIGEST_BYTES per character and level (a copy of each record would hold
    its map memory a second time); a record that changed by one byte is
    still written."""
    store = SqliteStore(str(tmp_path / "world.db"))
    writer = StoreWriter(store)
    memory = bytes(range(256)) * 8  # 2 kB standing for compressed map memory
    ann = pack_record({"depth": 1, "memory": memory})
    level = pack_record({"terrain": memory})
    writer.submit([("ann", "h1", ann, 10)], [(1, level, 10)])
    assert writer.flush(10)
    held = host_census(SimpleNamespace(saver=writer))
    assert held["written_players"] == 1 and held["written_player_bytes"] == DIGEST_BYTES
    assert held["written_levels"] == 1 and held["written_level_bytes"] == DIGEST_BYTES
    writer.submit([("ann", "h1", ann, 20)], [(1, level, 20)])
    assert writer.flush(10)
    assert writer.stats.rows == 2  # both unchanged: skipped
    changed = pack_record({"depth": 1, "memory": memory[:-1] + b"\x00"})
    writer.submit([("ann", "h1", changed, 30)], [(1, level, 30)])
    assert writer.flush(10)
    assert writer.stats.rows == 3
    loaded = store.load_player("ann")
    assert loaded is not None and loaded[1]["memory"] == memory[:-1] + b"\x00"
    store.close()
