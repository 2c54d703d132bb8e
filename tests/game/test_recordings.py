"""Recordings of games (protocol/recording.py, server/game/recordings.py): the file format, the
recorder's appends, a file cut short by a crash, and the shelf's caps."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from protocol.recording import RecordingError, compress, pack_header, read_recording
from server.game.recordings import Caps, PgShelf, Recorder, Shelf, Shelves
from tests.pgdb import empty_pg, pg_database

__all__ = ["pg_database"]


def test_a_game_reads_back_frame_for_frame(tmp_path: Path) -> None:
    shelf = Shelf(tmp_path / "rec")
    rec = Recorder(shelf, protocol=12, flush_s=3600)
    rid = rec.begin(7, "ada", b"welcome-bytes", tick=40)
    sent = [(41 + i, bytes([i]) * (i + 1)) for i in range(50)]
    for tick, data in sent:
        rec.frame(7, tick, data)
    rec.frame(8, 41, b"no game for this key")  # nothing begun under 8: ignored
    rec.end(7)
    rec.frame(7, 99, b"after the end")  # ignored
    rec.close()
    [info] = shelf.recordings()
    assert info.id == rid and info.name == "ada" and info.size == len(shelf.read(rid))
    got = read_recording(shelf.read(rid))
    assert (got.name, got.protocol, got.complete) == ("ada", 12, True)
    assert got.ended is not None and got.ended >= got.started
    assert [(t, d) for _, t, d in got.frames] == [(40, b"welcome-bytes"), *sent]
    ms = [m for m, _, _ in got.frames]
    assert ms == sorted(ms) and ms[0] == 0


def test_the_thread_appends_while_the_game_goes_on(tmp_path: Path) -> None:
    """What a ``kill -9`` would find: the frames up to the last flush,
    without an end, in a file that reads."""
    shelf = Shelf(tmp_path)
    rec = Recorder(shelf, protocol=12, flush_s=0.2)
    rid = rec.begin(1, "bo", b"w", tick=0)
    rec.frame(1, 1, b"one")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if shelf.recordings() and len(read_recording(shelf.read(rid)).frames) == 2:
            break
        time.sleep(0.05)
    got = read_recording(shelf.read(rid))
    assert [d for _, _, d in got.frames] == [b"w", b"one"] and got.ended is None
    rec.frame(1, 2, b"two")
    rec.close()
    assert [d for _, _, d in read_recording(shelf.read(rid)).frames] == [b"w", b"one", b"two"]


def test_a_file_cut_inside_its_last_member_keeps_the_members_before(tmp_path: Path) -> None:
    import msgpack  # type: ignore[import-untyped]

    first = compress(pack_header("cy", 12, 1000.0) + msgpack.packb([0, 5, b"a"]))
    second = compress(msgpack.packb([100, 6, b"b"]) + msgpack.packb([200, 7, b"c"]))
    whole = read_recording(first + second)
    assert [d for _, _, d in whole.frames] == [b"a", b"b", b"c"] and whole.complete
    # What a cut member still inflates to is kept, up to its last whole frame.
    for cut, kept in ((1, 1), (len(second) - 4, 3)):
        got = read_recording(first + second[:cut])
        assert [d for _, _, d in got.frames] == [b"a", b"b", b"c"][:kept]
        assert not got.complete
    assert read_recording(first + b"\x1f\x8b\x08garbage").frames == whole.frames[:1]


def test_what_is_not_a_recording_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RecordingError):
        read_recording(b"")
    with pytest.raises(RecordingError):
        read_recording(compress(b"\x91\x01"))  # msgpack [1]: no header
    shelf = Shelf(tmp_path)
    for bad in ("../../etc/passwd", "x", "20261128T000000Z-a/b-1", ""):
        with pytest.raises(RecordingError):
            shelf.file(bad)
    with pytest.raises(RecordingError):
        shelf.find("nobody")


def test_the_sweep_keeps_games_going_on_and_drops_the_oldest_first(tmp_path: Path) -> None:
    shelf = Shelf(tmp_path)
    rec = Recorder(shelf, protocol=12, flush_s=3600)
    ids = []
    for key, name in enumerate(("a1", "a2", "a3", "a4")):
        ids.append(rec.begin(key, name, os.urandom(5000), tick=0))  # incompressible
    for key in range(3):
        rec.end(key)
    rec.flush()
    now = time.time()
    ages = {ids[0]: 40 * 86400, ids[1]: 3 * 86400, ids[2]: 2 * 86400, ids[3]: 90 * 86400}
    for rid, age in ages.items():
        os.utime(shelf.file(rid), (now - age, now - age))
    sizes = {i.id: i.size for i in shelf.recordings()}
    # Too old: ids[0] (ids[3] is older, but its game goes on); then over the
    # cap: the oldest of the rest, ids[1].
    cap = sizes[ids[2]] + sizes[ids[3]] + 10
    gone = shelf.sweep(Caps(max_bytes=cap, max_age_s=30 * 86400), now, rec.active())
    assert gone == [ids[0], ids[1]]
    assert sorted(i.id for i in shelf.recordings()) == sorted([ids[2], ids[3]])
    assert shelf.find("a4").id == ids[3] and shelf.find(ids[2]).name == "a3"
    rec.close()


@pytest.fixture(params=["directory", "postgresql"])
def shelf(request: pytest.FixtureRequest, tmp_path: Path) -> Shelves:
    """A shelf of each kind: files in a directory, rows in PostgreSQL."""
    if request.param == "directory":
        return Shelf(tmp_path / "rec")
    url = empty_pg(request.getfixturevalue("pg_database"))
    pg = PgShelf(url)
    request.addfinalizer(pg.close)
    return pg


def _age(shelf: Shelves, rid: str, seconds: float, now: float) -> None:
    """Make recording ``rid`` last appended ``seconds`` before ``now``."""
    if isinstance(shelf, Shelf):
        os.utime(shelf.file(rid), (now - seconds, now - seconds))
    else:
        assert isinstance(shelf, PgShelf)
        shelf._call("UPDATE recordings SET modified = %s WHERE id = %s", (now - seconds, rid))


def test_both_shelves_keep_list_find_and_sweep_recordings_alike(shelf: Shelves) -> None:
    """A recorder appends to either shelf; what it wrote reads back; the
    newest of a name is found; the caps' sweep spares games going on and
    drops the oldest first; an import replaces a recording whole."""
    rec = Recorder(shelf, protocol=12, flush_s=3600)
    ids = [
        rec.begin(key, name, os.urandom(5000), tick=0)
        for key, name in enumerate(("p1", "p2", "p3"))
    ]
    rec.frame(0, 1, b"more of p1")
    rec.flush()  # two appends for p1: its members follow each other
    rec.frame(0, 2, b"and more")
    rec.end(0)
    rec.end(1)
    rec.flush()
    assert rec.errors == 0
    assert [d for _, _, d in read_recording(shelf.read(ids[0])).frames][1:] == [
        b"more of p1",
        b"and more",
    ]
    listed = shelf.recordings()
    assert sorted(r.id for r in listed) == sorted(ids)
    assert {r.id: r.size for r in listed}[ids[1]] == len(shelf.read(ids[1]))
    assert shelf.find("P2").id == ids[1] and shelf.find(ids[2]).name == "p3"
    assert [r.id for r in shelf.recordings("p3")] == [ids[2]]
    with pytest.raises(RecordingError):
        shelf.find("nobody")
    with pytest.raises(RecordingError):
        shelf.read("20261128T000000Z-nobody-9")
    now = time.time()
    _age(shelf, ids[0], 40 * 86400, now)
    _age(shelf, ids[1], 2 * 86400, now)
    _age(shelf, ids[2], 90 * 86400, now)  # going on: never swept
    gone = shelf.sweep(Caps(max_bytes=10**9, max_age_s=30 * 86400), now, rec.active())
    assert gone == [ids[0]] and sorted(r.id for r in shelf.recordings()) == sorted(ids[1:])
    shelf.put(ids[1], b"replaced")
    assert shelf.read(ids[1]) == b"replaced"
    shelf.remove(ids[1])
    assert [r.id for r in shelf.recordings()] == [ids[2]]
    rec.close()


def test_a_postgresql_shelf_makes_its_table_again_when_it_was_dropped(pg_database: str) -> None:
    shelf = PgShelf(empty_pg(pg_database))
    try:
        shelf.append("20261128T000000Z-ann-1", compress(pack_header("ann", 12, 0.0)))
        empty_pg(pg_database)  # the table goes (as the tests' clean start drops it)
        shelf.append("20261128T000000Z-bob-2", compress(pack_header("bob", 12, 0.0)))
        assert [r.name for r in shelf.recordings()] == ["bob"]
    finally:
        shelf.close()
