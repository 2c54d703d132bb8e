"""The background writer: what it writes, and that it yields the core to the tick."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from server.store.base import pack_record
from server.store.sqlite import SqliteStore
from server.store.writer import CHECKPOINT_KEY, WRITER_NICE, StoreWriter


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
