"""Recordings of the world and their replays (issue 45, item 4):
:mod:`server.game.worldrecord` and :mod:`server.game.worldreplay`."""

from __future__ import annotations

import zlib
from pathlib import Path

import msgspec
import numpy as np
import pytest

from server.cli import main
from server.game.game import Game
from server.game.keeper import CHECK_EVERY_TICKS, LevelKeeper
from server.game.worldrecord import (
    FLUSH_TICKS,
    Header,
    Join,
    Record,
    RecordingReader,
    Tick,
    WorldRecorder,
)
from server.game.worldreplay import replay_world
from server.sim.events import Event
from server.sim.world import World
from server.store.sqlite import SqliteStore
from tests.game.randomplay import give_commands

SEED = 31
IDLE = 2 * CHECK_EVERY_TICKS
"""The keeper's idle ticks in these games: levels are put away and come back."""


def play(db: Path, out: Path, ticks: int, *, close: bool = True) -> tuple[Path, int]:
    """A game recorded from a restart: a first game (not recorded) saves
    five characters and the levels they dug; the second, on the same
    database, is recorded for ``ticks`` ticks, while four of them come
    back with their tokens (their saved records), a new one joins, random
    commands are given, players leave, a level is put away and visited
    again. Returns the recording and the commands given."""
    store = SqliteStore(str(db))
    first = Game(World(SEED), store)
    rng = np.random.default_rng(2)
    welcomes = [
        first.join(f"p{i}", None, ("warrior", "mage", "monk")[i % 3], object())[0] for i in range(5)
    ]
    ids = [w.id for w in welcomes]
    seq = 1
    for tick in range(30):
        seq, _ = give_commands(first, ids, rng, tick, seq)
        first.step()
    for aid in ids:
        first.leave(aid, first.seats[aid].session)
    first.save_all()

    game = Game(World(SEED), store)
    keeper = LevelKeeper(game.world, None, IDLE)
    game.recorder = WorldRecorder.open(out, game.world, keeper_idle_ticks=IDLE)
    assert game.world.saved_levels  # the restart's levels are in the header
    ids = [game.join(w.name, w.token, None, object())[0].id for w in welcomes[:4]]
    ids.append(game.join("new", None, "mage", object())[0].id)
    given = 0
    for tick in range(ticks):
        before = seq
        seq, _ = give_commands(game, ids, rng, tick, seq)
        given += seq - before
        if tick == 40:  # everyone leaves: the levels idle and are put away
            for aid in ids:
                game.leave(aid, game.seats[aid].session)
            ids = []
        if tick == 40 + IDLE + CHECK_EVERY_TICKS:
            assert keeper.put_away
            ids = [game.join(w.name, w.token, None, object())[0].id for w in welcomes[:3]]
        game.step()
        keeper.after_tick()
    recorder = game.recorder
    if close:
        recorder.close()
    game.save_all()
    store.close()
    return recorder.path, given


def rewrite(path: Path, change: dict[int, Record | None]) -> None:
    """Write the recording in ``path`` again with record ``i`` replaced by
    ``change[i]`` (None: dropped)."""
    encode = msgspec.msgpack.Encoder().encode
    records = list(RecordingReader(path))
    data = b"".join(
        encode(new)
        for i, record in enumerate(records)
        if (new := change.get(i, record)) is not None
    )
    pack = zlib.compressobj(6, zlib.DEFLATED, 31)
    path.write_bytes(pack.compress(data) + pack.flush())


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    base = tmp_path_factory.mktemp("worldrecord")
    return play(base / "world.db", base / "rec", 320)


def test_a_recorded_game_replays_with_every_tick_matching(recorded: tuple[Path, int]) -> None:
    path, given = recorded
    report = replay_world(path)
    assert report.ok, report.summary()
    assert report.ended and not report.cut
    # The first game saved at tick 30; the restart's clock goes on after it.
    assert (report.first_tick, report.ticks) == (31, 320)
    assert report.players == {"p0", "p1", "p2", "p3", "new"}
    assert (report.joins, report.leaves, report.commands) == (8, 5, given)
    assert "every recorded tick reproduced (320 of 320)" in report.summary()


def test_a_changed_checksum_diverges_at_its_tick(
    recorded: tuple[Path, int], tmp_path: Path
) -> None:
    path = tmp_path / path_name(recorded)
    path.write_bytes(recorded[0].read_bytes())
    records = list(RecordingReader(path))
    at = next(i for i, r in enumerate(records) if isinstance(r, Tick) and r.tick == 31 + 123)
    tick = records[at]
    assert isinstance(tick, Tick)
    rewrite(path, {at: msgspec.structs.replace(tick, rng=tick.rng ^ 1)})
    report = replay_world(path)
    assert report.divergence is not None
    assert (report.divergence.tick, report.divergence.what) == (31 + 123, "rng differ")
    assert (report.ticks, report.recorded_ticks, report.ended) == (123, 320, True)
    assert main(["replay-world", str(path)]) == 1


def test_a_dropped_join_diverges_at_the_tick_it_came_before(
    recorded: tuple[Path, int], tmp_path: Path
) -> None:
    path = tmp_path / path_name(recorded)
    path.write_bytes(recorded[0].read_bytes())
    records = list(RecordingReader(path))
    late = [i for i, r in enumerate(records) if isinstance(r, Join)][-1]
    tick = next(r for r in records[late:] if isinstance(r, Tick))
    rewrite(path, {late: None})
    report = replay_world(path)
    assert report.divergence is not None and report.divergence.tick == tick.tick
    assert report.divergence.what.startswith("actors (recorded")


def test_a_recording_cut_off_replays_up_to_where_it_ends(tmp_path: Path) -> None:
    """As after ``kill -9``: the recorder is never closed, and the file is
    then cut within a record as well."""
    path, _ = play(tmp_path / "world.db", tmp_path / "rec", 120, close=False)
    report = replay_world(path)
    assert report.ok and not report.ended, report.summary()
    assert 120 - FLUSH_TICKS <= report.ticks <= 120
    assert "no end mark" in report.summary()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 9 // 10])  # (the header's saved levels come first)
    half = replay_world(path)
    assert half.ok and not half.ended and 0 < half.ticks < report.ticks, half.summary()


def test_replay_world_reads_a_directory_and_refuses_what_is_not_a_recording(
    recorded: tuple[Path, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay-world", str(recorded[0].parent)]) == 0
    assert "every recorded tick reproduced" in capsys.readouterr().out
    junk = tmp_path / "junk.msgpack.gz"
    junk.write_bytes(b"not gzip at all")
    assert main(["replay-world", str(junk)]) == 2
    assert "not a gzip stream" in capsys.readouterr().err
    assert main(["replay-world", str(tmp_path / "nothing")]) == 2


def test_only_a_fresh_world_of_the_shipped_rules_is_recorded(tmp_path: Path) -> None:
    world = World(SEED, populate=False)
    world.join("ann")
    with pytest.raises(ValueError, match="from its start"):
        WorldRecorder.open(tmp_path, world)
    recorder = WorldRecorder.open(tmp_path, World(SEED))
    recorder.close()
    header = next(iter(RecordingReader(recorder.path)))
    assert isinstance(header, Header) and header.seed == SEED and header.populate


def path_name(recorded: tuple[Path, int]) -> str:
    return recorded[0].name


def test_a_step_that_raised_is_recorded_and_reproduced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server logs a tick whose step raised and goes on: the recording
    says so, a replay with the same bug raises there too and goes on, and a
    replay without it diverges there."""
    real_step = World.step

    def buggy(world: World) -> list[Event]:
        if world.tick == 25:
            raise RuntimeError("a bug at tick 25")
        return real_step(world)

    monkeypatch.setattr(World, "step", buggy)
    game = Game(World(SEED, populate=False), SqliteStore(":memory:"))
    game.recorder = WorldRecorder.open(tmp_path, game.world)
    aid = game.join("ann", None, None, object())[0].id
    failed = 0
    for tick in range(40):
        game.command(aid, tick + 1, "move", (1, 0) if tick % 2 else (-1, 0))
        try:
            game.step()
        except RuntimeError:
            failed += 1
    game.recorder.close()
    assert failed == 15  # tick 25 never passes
    report = replay_world(game.recorder.path)
    assert report.ok and report.ticks == 25, report.summary()
    assert [tick for tick, _ in report.raised] == [25] * 15
    assert "a bug at tick 25" in report.summary()
    monkeypatch.setattr(World, "step", real_step)
    fixed = replay_world(game.recorder.path)
    assert fixed.divergence is not None and fixed.divergence.tick == 25
    assert fixed.divergence.what.startswith("the step did not raise")


def test_a_replay_says_when_its_rules_code_or_data_are_not_the_recordings(
    recorded: tuple[Path, int], tmp_path: Path
) -> None:
    path = tmp_path / path_name(recorded)
    path.write_bytes(recorded[0].read_bytes())
    header = next(iter(RecordingReader(path)))
    assert isinstance(header, Header)
    rewrite(path, {0: msgspec.structs.replace(header, code="0" * 16, content="1" * 16)})
    report = replay_world(path)
    assert report.ok  # the same code and data, in truth
    assert [note.split(" (")[0] for note in report.notes] == [
        "the rules data differ from the recording's",
        "the simulation's code",
    ]
    assert "differs from the recording's" in report.notes[1]
