"""End to end: every game ``underhall serve`` hosts is recorded (issue 45,
items 2 and 3). A real client on 127.0.0.1 walks about; the server's
recording holds exactly the frames that client received (its ``welcome``'s
token blanked), the server answers it at ``/recordings/``, and the replay
draws, at sampled turns, the screens the client's own frames draw, cell for
cell. A server killed with SIGKILL leaves a recording that reads up to the
last few seconds. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import io
import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from blessed import Terminal
from websockets.asyncio.client import connect

from client.render import Screen
from client.replay import ReplayApp, Tape, load
from protocol.codec import decode_server, encode_client, encode_server
from protocol.messages import Command, CommandName, Hello, Welcome
from protocol.recording import SUFFIX, Recording, inflate, read_recording
from protocol.version import PROTOCOL_VERSION
from server.game.recordings import PgShelf
from tests.pgdb import new_database
from tests.serverproc import STOP_TIMEOUT_S, server_process

STEPS = ((1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, -1))


async def _walk(url: str, name: str, seconds: float) -> list[bytes]:
    """Join as ``name``, take a step every 0.2 s for ``seconds``, leave; every
    frame received."""
    frames: list[bytes] = []
    async with connect(url, compression=None) as ws:
        await ws.send(encode_client(Hello(v=PROTOCOL_VERSION, name=name)))

        async def receive() -> None:
            async for data in ws:
                if isinstance(data, bytes):
                    frames.append(data)

        receiving = asyncio.create_task(receive())
        for seq in range(1, int(seconds / 0.2) + 1):
            await asyncio.sleep(0.2)
            step = STEPS[seq % len(STEPS)]
            await ws.send(encode_client(Command(seq=seq, c=CommandName.MOVE, d=step)))
        await asyncio.sleep(0.3)
        receiving.cancel()
    return frames


def _rows(recording: Recording, tick: int, *, via_end: bool = False) -> list[str]:
    """The replay's screen after ``tick`` (an 80x24 terminal); ``via_end``:
    seek to the end first, then back (the rebuilt-from-the-start path)."""
    term = Terminal(kind="xterm-256color", stream=io.StringIO(), force_styling=True)

    async def build() -> list[str]:
        app = ReplayApp(term, Tape(recording))
        if via_end:
            app.seek(app.tape.ticks[-1])
        app.seek(tick)
        app.state.note = ""  # the replay's own status line
        return Screen(term).rows(app.model, app.state, app.log)

    return asyncio.run(build())


def _get(url: str, path: str) -> tuple[int, bytes]:
    http = url.replace("ws://", "http://")
    try:
        with urllib.request.urlopen(http + path, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""


def test_a_served_game_is_recorded_frame_for_frame_and_replays(tmp_path: Path) -> None:
    with server_process(tmp_path, tick_rate=10) as (url, _):
        received = asyncio.run(_walk(url, "rita", 4.0))
        deadline = time.monotonic() + 15
        listed: list[dict[str, object]] = []
        while time.monotonic() < deadline:  # the leave's last append comes within a flush
            status, body = _get(url, "/recordings.json")
            assert status == 200
            listed = json.loads(body)["recordings"]
            if listed:
                status, data = _get(url, f"/recordings/rita{SUFFIX}")
                if status == 200 and read_recording(data).ended is not None:
                    break
            time.sleep(0.2)
        assert [r["name"] for r in listed] == ["rita"]
        rid = str(listed[0]["id"])
        assert _get(url, f"/recordings/{rid}{SUFFIX}") == (200, data)
        assert _get(url, "/recordings/rita.msgpack") == (200, inflate(data)[0])
        assert _get(url, f"/recordings/nobody{SUFFIX}")[0] == 404
        assert _get(url, "/recordings/..%2F..%2Fworld.db")[0] == 404
        fetched = load("rita", url=url)
        assert fetched.frames == read_recording(data).frames
    assert "recording games to" in (tmp_path / "server.log").read_text()
    on_disk = (tmp_path / "world.db.recordings" / f"{rid}{SUFFIX}").read_bytes()
    recording = read_recording(on_disk)
    assert recording.complete and recording.ended is not None and recording.name == "rita"

    # Frame for frame what the client received; the welcome's token blanked.
    frames = [data for _, _, data in recording.frames]
    welcome = decode_server(received[0])
    assert isinstance(welcome, Welcome) and welcome.token
    assert frames[0] == encode_server(replace(welcome, token=""))
    assert all(welcome.token.encode() not in frame for frame in frames)
    # Every frame the client read, in order; a frame written as it closed
    # (after its last read) may follow.
    assert frames[1 : len(received)] == received[1:] and len(frames) - len(received) <= 2
    assert len(frames) > 10
    ticks = [tick for _, tick, _ in recording.frames]
    assert ticks == sorted(ticks)

    # The replay draws what the client's own frames draw, at sampled turns,
    # going forward and coming back.
    mine = Recording(
        "rita",
        recording.protocol,
        recording.started,
        [(ms, tick, data) for (ms, tick, _), data in zip(recording.frames, received, strict=False)],
        None,
        True,
    )
    # From the snapshot on (the welcome draws no map), to before the tick of
    # the last frame the client read (a frame it did not read is of that tick
    # or later).
    first, last = ticks[1], ticks[len(received) - 1] - 1
    sampled = sorted({first, first + (last - first) // 3, first + 2 * (last - first) // 3, last})
    for tick in sampled:
        ours = _rows(recording, tick)
        assert ours == _rows(mine, tick), tick
        assert ours == _rows(recording, tick, via_end=True), tick
        assert any("@" in row for row in ours)


def test_a_recording_killed_with_its_server_reads_up_to_the_kill(tmp_path: Path) -> None:
    with server_process(tmp_path, tick_rate=10) as (url, proc):

        async def walk_then_kill() -> list[bytes]:
            walking = asyncio.create_task(_walk(url, "kim", 6.0))
            await asyncio.sleep(4.5)
            proc.kill()  # kill -9, the client still playing
            proc.wait(STOP_TIMEOUT_S)
            try:
                return await asyncio.wait_for(walking, 20)
            except Exception:  # noqa: BLE001 - the connection died with the server
                return []

        asyncio.run(walk_then_kill())
    [path] = (tmp_path / "world.db.recordings").glob(f"*{SUFFIX}")
    recording = read_recording(path.read_bytes())
    assert recording.ended is None  # the server never saw the game end
    assert recording.name == "kim"
    # 4.5 s of play, flushed every 2 s: at least the first 2 s are there.
    assert recording.frames[-1][0] >= 1500, recording.frames[-1][0]


@pytest.mark.parametrize("value", ["off"])
def test_recordings_can_be_turned_off(tmp_path: Path, value: str) -> None:
    with server_process(tmp_path, tick_rate=10, args=["--recordings", value]) as (url, _):
        asyncio.run(_walk(url, "otto", 1.0))
        assert _get(url, "/recordings.json")[0] == 404
    assert not (tmp_path / "world.db.recordings").exists()
    assert not (tmp_path / "off").exists()


@pytest.fixture
def own_database() -> Iterator[str]:
    """A database of this test's own, dropped after: a server's lock on the
    session's shared one could outlive its process by a moment and refuse
    the next test's store."""
    yield from new_database("underhall_rec")


def test_a_server_on_postgresql_keeps_its_recordings_in_the_database(
    tmp_path: Path, own_database: str
) -> None:
    """With the world in PostgreSQL, the games are rows of the same
    database, not files (docs/operating.md, "Recorded games")."""
    url_db = own_database
    with server_process(tmp_path, tick_rate=10, args=["--db", url_db]) as (url, _):
        received = asyncio.run(_walk(url, "pia", 2.0))
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            status, data = _get(url, f"/recordings/pia{SUFFIX}")
            if status == 200 and read_recording(data).ended is not None:
                break
            time.sleep(0.2)
    recording = read_recording(data)
    frames = [frame for _, _, frame in recording.frames]
    assert frames[1 : len(received)] == received[1:] and len(frames) - len(received) <= 2
    assert recording.ended is not None
    assert "recording games to" in (tmp_path / "server.log").read_text()
    assert not (tmp_path / "world.db.recordings").exists()
    shelf = PgShelf(url_db)
    try:
        [info] = shelf.recordings()
        assert info.name == "pia" and shelf.read(info.id) == data
    finally:
        shelf.close()
