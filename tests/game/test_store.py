"""The store against both real backends: SQLite in a temporary file and
PostgreSQL in a throw-away database (on a private server, tests/pgdb.py,
when no PostgreSQL server answers). Schema migrations, all-or-nothing saves,
the one-server lock, and moving a played world between backends unchanged."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from server.game.game import Game
from server.sim.world import World
from server.store import Store, StoreError, hash_token, open_store, pack_record
from server.store.dump import export_world, import_world
from server.store.migrations import LATEST
from tests.pgdb import empty_pg, pg_database

__all__ = ["pg_database"]

MOVES = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1)]


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a fresh, empty world database is (per test)."""
    if request.param == "sqlite":
        return str(tmp_path / "world.db")
    return empty_pg(request.getfixturevalue("pg_database"))


@pytest.fixture
def store(target: str) -> Iterator[Store]:
    opened = open_store(target)
    yield opened
    opened.close()


def test_a_new_database_gets_every_migration_once(target: str) -> None:
    first = open_store(target)
    assert first.schema_version() == LATEST and first.is_empty()
    first.set_meta("seed", "5")
    first.close()
    again = open_store(target)  # reopening applies nothing twice and keeps the data
    with again._transaction(False) as cur:
        cur.execute("SELECT version, about FROM schema_version ORDER BY version")
        rows = cur.fetchall()
    assert [r[0] for r in rows] == list(range(1, LATEST + 1)) and all(r[1] for r in rows)
    assert again.get_meta("seed") == "5"
    with again._transaction(True) as cur:
        cur.execute(
            again._sql("INSERT INTO schema_version (version, about, applied_at) VALUES (?, ?, ?)"),
            (LATEST + 1, "from the future", "-"),
        )
    again.close()
    with pytest.raises(StoreError, match="newer than this server"):
        open_store(target)


def test_characters_levels_and_meta_round_trip(store: Store) -> None:
    record = {"name": "ann", "hp": 7, "memory": {"1": [[2, 3], bytes(range(6))]}}
    level = {"shape": [2, 2], "terrain": b"\x01\x02\x03\x04", "items": [[1, 1, [["dart", 3]]]]}
    store.save_players([("ann", hash_token("t"), record, 40)])
    store.save_levels([(2, level, 40)])
    store.set_meta("seed", "11")
    store.set_meta("seed", "12")
    assert store.load_player("ann") == (hash_token("t"), record)
    assert store.check_token("ann", "t") == record
    assert store.check_token("ann", "wrong") is None and store.load_player("bob") is None
    assert store.load_levels() == {2: level} and store.get_meta("seed") == "12"


def test_a_save_is_all_or_nothing(store: Store) -> None:
    good = ("ann", "h", pack_record({"hp": 1}), 5)
    bad = ("bob", None, pack_record({"hp": 2}), 5)  # token_hash may not be NULL
    with pytest.raises(StoreError):
        store.save([good, bad], [(1, pack_record({"items": []}), 5)])  # type: ignore[list-item]
    assert store.load_player("ann") is None and store.load_levels() == {}
    store.save([good], [])
    assert store.load_player("ann") == ("h", {"hp": 1})


def test_a_second_server_on_the_same_database_is_refused(store: Store, target: str) -> None:
    with pytest.raises(StoreError, match="in use by another server") as info:
        open_store(target)
    assert f"pid {os.getpid()}" in str(info.value)
    reader = open_store(target, lock=False)  # db export reads beside a running server
    assert reader.is_empty()
    reader.close()
    store.close()
    open_store(target).close()  # released with the first one


def play_world(store: Store, seed: int = 5) -> dict[str, str]:
    """Play a small world into ``store``: joins, moves, a drop, a leave;
    return each character's token."""
    game = Game(World(seed), store, save_interval_s=0.5)
    rng = np.random.default_rng(seed)
    tokens: dict[str, str] = {}
    ids = []
    for name, cls in (("ann", "warrior"), ("bob", "mage"), ("cy", "monk")):
        welcome, _ = game.join(name, None, cls, object())
        tokens[name] = welcome.token
        ids.append(welcome.id)
    for tick in range(120):
        for aid in ids:
            if aid in game.seats and rng.random() < 0.6:
                game.command(aid, tick, "move", MOVES[int(rng.integers(8))])
        if tick == 30:
            actor = game.world.actors[ids[0]]
            game.command(ids[0], 1000, "drop", item=actor.inventory[-1].letter)
        if tick == 80:
            game.leave(ids[2], game.seats[ids[2]].session)
        game.step()
    game.save_all()
    return tokens


def test_a_played_world_moves_sqlite_to_postgres_to_sqlite_unchanged(
    tmp_path: Path, pg_database: str
) -> None:
    first = open_store(tmp_path / "first.db")
    first.set_meta("seed", "5")
    tokens = play_world(first)
    original = list(first.dump())
    assert {k for k, _ in original} == {"meta", "player", "level"}
    assert sum(1 for k, _ in original if k == "player") == 3
    export_world(first, tmp_path / "a.jsonl")
    first.close()
    pg = open_store(empty_pg(pg_database))
    counts = import_world(pg, tmp_path / "a.jsonl")
    assert counts["players"] == 3 and counts["levels"] >= 1
    assert list(pg.dump()) == original
    export_world(pg, tmp_path / "b.jsonl")
    pg.close()
    last = open_store(tmp_path / "last.db")
    import_world(last, tmp_path / "b.jsonl")
    export_world(last, tmp_path / "c.jsonl")
    assert list(last.dump()) == original
    a, c = (tmp_path / "a.jsonl").read_bytes(), (tmp_path / "c.jsonl").read_bytes()
    assert a == c and a == (tmp_path / "b.jsonl").read_bytes()
    assert oct((tmp_path / "a.jsonl").stat().st_mode & 0o777) == "0o600"
    game = Game(World(5), last)  # and the moved world plays on: the character resumes
    saved = last.load_player("ann")
    assert saved is not None and saved[1]["hp"] > 0  # alive: resumes where it stood
    welcome, _ = game.join("ann", tokens["ann"], None, object())
    ann = game.world.actors[welcome.id]
    assert welcome.resumed and (ann.x, ann.y, ann.hp) == (
        saved[1]["x"],
        saved[1]["y"],
        saved[1]["hp"],
    )
    last.close()


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"table": "meta", "key": "seed"}', "field 'value' must be str"),
        ('{"table": "bans", "name": "x"}', "unknown table 'bans'"),
        ('{"table": "levels", "depth": 1, "saved_tick": 0, "record": "!!"}', "not base64"),
        ('{"table": "levels", "depth": 1, "saved_tick": 0, "record": "kQE="}', "not a map"),
        ('{"table": "meta", "key": "a", "value": "b", "extra": 1}', "unknown field"),
        ("[1, 2", "not JSON"),
    ],
)
def test_a_bad_import_names_its_line_and_writes_nothing(
    store: Store, tmp_path: Path, line: str, message: str
) -> None:
    store.set_meta("seed", "3")
    good = tmp_path / "good.jsonl"
    export_world(store, good)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.read_text() + line + "\n")
    with pytest.raises(StoreError, match=message) as info:
        import_world(store, bad, replace=True)
    assert f"bad.jsonl:{len(good.read_text().splitlines()) + 1}" in str(info.value)
    assert list(store.dump()) == [("meta", ("seed", "3"))]


def test_import_does_not_overwrite_a_world_unless_told(store: Store, tmp_path: Path) -> None:
    store.set_meta("seed", "3")
    export_world(store, tmp_path / "w.jsonl")
    store.set_meta("seed", "4")
    with pytest.raises(StoreError, match="already holds a world"):
        import_world(store, tmp_path / "w.jsonl")
    assert store.get_meta("seed") == "4"
    import_world(store, tmp_path / "w.jsonl", replace=True)
    assert store.get_meta("seed") == "3"
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(StoreError, match="empty file"):
        import_world(store, tmp_path / "empty.jsonl", replace=True)


def test_the_db_commands_move_a_world_and_refuse_bad_files_in_one_line(
    tmp_path: Path, pg_database: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from server.cli import main

    db = tmp_path / "world.db"
    source = open_store(db)
    source.set_meta("seed", "8")
    play_world(source, seed=8)
    original = list(source.dump())
    source.close()
    url = empty_pg(pg_database)
    assert main(["db", "export", str(tmp_path / "w.jsonl"), "--db", str(db)]) == 0
    assert main(["db", "import", str(tmp_path / "w.jsonl"), "--db", url]) == 0
    out = capsys.readouterr().out
    assert "exported to" in out and "imported from" in out and "3 players" in out
    pg = open_store(url)
    assert list(pg.dump()) == original
    pg.close()
    assert main(["db", "import", str(tmp_path / "w.jsonl"), "--db", url]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already holds a world" in err
    (tmp_path / "bad.jsonl").write_text('{"underhall": "world", "format": 1}\n{"table": 3}\n')
    assert main(["db", "import", str(tmp_path / "bad.jsonl"), "--db", url, "--replace"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("underhall db import: ") and "bad.jsonl:2: unknown table" in err


def test_postgres_connections_that_broke_are_opened_again(pg_database: str) -> None:
    import psycopg

    url = empty_pg(pg_database)
    store = open_store(url)
    store.save_players([("ann", "h", {"hp": 1}, 1)])
    with psycopg.connect(url, autocommit=True) as admin:  # as a database restart would
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
            (f"underhall pid {os.getpid()}",),
        )
    with pytest.raises(StoreError):  # the write that finds its connection dead fails ...
        store.save_players([("ann", "h", {"hp": 2}, 2)])
    store.save_players([("ann", "h", {"hp": 3}, 3)])  # ... the next one reconnects
    with pytest.raises(StoreError):
        store.load_player("ann")
    assert store.load_player("ann") == ("h", {"hp": 3})
    with pytest.raises(StoreError, match="in use by another server"):
        open_store(url)  # and the lock was taken again with the reading connection
    store.close()


def test_db_export_carries_the_recorded_games(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A world's recorded games (issue 45) go into the export and come out
    beside the database it is imported into, byte for byte."""
    from protocol.recording import read_recording
    from server.cli import main
    from server.game.recordings import Recorder, Shelf

    db = tmp_path / "a.db"
    source = open_store(db)
    source.set_meta("seed", "8")
    source.close()
    recorder = Recorder(Shelf(tmp_path / "a.db.recordings"), protocol=12, flush_s=3600)
    for key, name in enumerate(("ann", "bob")):
        recorder.begin(key, name, f"welcome of {name}".encode(), tick=3)
        recorder.frame(key, 4, b"a frame")
    recorder.close()
    games = {
        r.id: Shelf(tmp_path / "a.db.recordings").read(r.id) for r in recorder.shelf.recordings()
    }
    assert len(games) == 2
    assert main(["db", "export", str(tmp_path / "w.jsonl"), "--db", str(db)]) == 0
    assert main(["db", "import", str(tmp_path / "w.jsonl"), "--db", str(tmp_path / "b.db")]) == 0
    assert "2 recorded games" in capsys.readouterr().out
    moved = Shelf(tmp_path / "b.db.recordings")
    assert {r.id: moved.read(r.id) for r in moved.recordings()} == games
    assert read_recording(moved.read(moved.find("bob").id)).frames[1][2] == b"a frame"
    # --recordings off: none exported
    assert (
        main(["db", "export", str(tmp_path / "x.jsonl"), "--db", str(db), "--recordings", "off"])
        == 0
    )
    assert '"recordings"' not in (tmp_path / "x.jsonl").read_text()
