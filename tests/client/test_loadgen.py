"""The lean load generator against a real ``underhall serve`` on 127.0.0.1.

Every wait is bounded; speed is reported by the generator, never asserted.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import msgpack  # type: ignore[import-untyped]
import pytest
from websockets.client import ClientProtocol
from websockets.protocol import State

from client.leanclient import LeanClient
from client.loadgen import Generator, LoadConfig, run_load_async
from client.loadstats import diff, merge, percentile
from server.game.wire import REASONS
from tests.rawwire import delta_frame
from tests.serverproc import running_server, underhall_command


@pytest.fixture
def server_url(tmp_path: Path) -> Iterator[str]:
    """A real ``underhall serve`` (seed 7, 20 ticks/s); its URL once it listens."""
    with running_server(tmp_path, seed=7, tick_rate=20) as url:
        yield url


async def test_20_lean_clients_join_walk_and_get_deltas(server_url: str) -> None:
    cfg = LoadConfig(url=server_url, n=20, duration=4.0, rate=50.0, seed=3)
    seen: list[dict[str, object]] = []
    final, tokens = await asyncio.wait_for(run_load_async(cfg, on_snapshot=seen.append), 30.0)
    assert final["welcomed"] == 20, final
    assert final["errors"] == {} and final["refused"] == {}, final
    assert final["connect_failures"] == {}, final
    assert final["closed"] == 0, final
    assert final["snaps"] >= 20 and final["deltas"] > 20, final
    # Every command is answered: acknowledged (carried out or rejected) or still pending.
    assert final["cmds"] > 20
    assert final["acks"] > 0 and final["cmds"] - final["acks"] <= 20, final
    # Some moves were carried out, not only rejected.
    assert final["acks"] > sum(final["rejects"].values()), final
    assert sum(final["lat"].values()) == final["acks"]
    assert final["depths"] == {"1": 20}
    # One join latency per client, to welcome and to the first snap, never negative.
    assert sum(final["join_welcome"].values()) == 20
    assert sum(final["join_snap"].values()) == 20
    assert min(int(k) for k in final["join_welcome"]) >= 0
    last_welcome = percentile(final["join_welcome"], 1.0)
    last_snap = percentile(final["join_snap"], 1.0)
    assert last_welcome is not None and last_snap is not None and last_welcome <= last_snap
    assert sorted(tokens) == sorted(f"lean{i}" for i in range(20))
    assert seen and seen[-1]["connected"] == 20
    assert final["connected"] == 0  # every connection was closed at the end


def test_bots_lean_command_with_two_processes(server_url: str, tmp_path: Path) -> None:
    cmd = [
        *underhall_command(),
        "bots",
        "--lean",
        "--url",
        server_url,
        "-n",
        "6",
        "--duration",
        "4",
        "--procs",
        "2",
        "--json",
        "--prefix",
        "duo",
        "--forget",
    ]
    out = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert out.returncode == 0, (out.stdout, out.stderr)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["procs"] == 2 and report["requested"] == 6
    assert report["welcomed"] == 6 and report["errors"] == {}, report
    assert report["deltas"] > 0 and report["acks"] > 0


def test_bad_options_are_refused_with_a_message(tmp_path: Path) -> None:
    cmd = [
        *underhall_command(),
        "bots",
        "--lean",
        "--url",
        "ws://127.0.0.1:9",
        "-n",
        "3",
        "--procs",
        "0",
    ]
    out = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert out.returncode == 2
    assert "procs" in out.stderr


def test_merge_diff_and_percentile() -> None:
    a = {
        "t": 10.0,
        "joins": 2,
        "connected": 2,
        "welcomed": 2,
        "closed": 0,
        "frames": 10,
        "bytes": 1000,
        "snaps": 2,
        "deltas": 8,
        "cmds": 4,
        "acks": 3,
        "settled": 2,
        "cpu_s": 1.0,
        "procs": 1,
        "lat": {"50": 2, "90": 1},
        "rejects": {"blocked": 1},
        "errors": {},
        "refused": {},
        "connect_failures": {},
        "depths": {"1": 2},
    }
    b = dict(a, t=11.0, frames=30, lat={"50": 3, "90": 1, "200": 1}, rejects={"blocked": 1})
    both = merge([a, b])
    assert both["frames"] == 40 and both["procs"] == 2 and both["t"] == 11.0
    assert both["lat"] == {"50": 5, "90": 2, "200": 1}
    d = diff(b, a)
    assert d["seconds"] == 1.0 and d["frames"] == 20
    assert d["lat"] == {"50": 1, "200": 1} and d["rejects"] == {}
    # Five samples 50, 50, 50, 90, 200 ms (buckets): median 50.5, top 200.5.
    lat = {"50": 3, "90": 1, "200": 1}
    assert percentile(lat, 0.5) == 50.5
    assert percentile(lat, 0.99) == 200.5
    assert percentile({}, 0.5) is None
    # Join latencies merge as histograms; a snapshot without them (an older
    # generator) diffs as empty.
    c = dict(a, join_welcome={"120": 1, "900": 1}, join_snap={"200": 2})
    e = dict(b, join_welcome={"120": 1}, join_snap={"300": 1})
    assert merge([c, e])["join_welcome"] == {"120": 2, "900": 1}
    assert merge([c, e])["join_snap"] == {"200": 2, "300": 1}
    assert diff(c, a)["join_welcome"] == {"120": 1, "900": 1}
    assert diff(b, a)["join_snap"] == {}


async def test_refusals_in_a_frame_count_and_answer_the_last_command() -> None:
    """Protocol 3 carries refusals as ``rej`` in the snap or delta, beside the
    ack; protocol 6 as flat pairs with codes from the welcome; protocol 10
    gives a delta's ack as the step from the last and each refused seq as
    ``ack − seq``."""
    gen = Generator(LoadConfig(url="ws://127.0.0.1:9", n=1), 0, 1)
    client = LeanClient(gen, 0)
    client._on_message(msgpack.packb({"t": "welcome", "tick_rate": 10, "reasons": REASONS}))
    assert client.reasons == REASONS
    client.last_seq = 7
    client.answered = False
    client.pending.extend([(6, 0.0), (7, 0.0)])
    client.ack = 5  # as the frames before left it
    # refusals of 6, 7 and 8 once the ack has moved on by 2 to 7
    rej = [1, REASONS.index("blocked"), 0, REASONS.index("occupied"), -1, len(REASONS)]
    client._on_message(delta_frame(tick=40, ack=2, rej=rej))
    assert client.ack == 7
    # A code the table lacks is counted under its number, not dropped.
    assert gen.counters.rejects == {
        "blocked": 1,
        "occupied": 1,
        f"reason {len(REASONS)}": 1,
    }
    assert gen.counters.acks == 2 and not client.pending
    assert client.answered and client.timer is not None  # the next move comes at once
    client.timer.cancel()


async def test_the_lean_client_follows_its_own_record_to_its_cell() -> None:
    """Protocol 10: a delta's ``me`` has no cell; the lean client finds its
    own actor (id 40, from the welcome) in ``st``, ``mv`` or ``upd`` and
    leaves its cell alone when the delta moves only others."""
    gen = Generator(LoadConfig(url="ws://127.0.0.1:9", n=1), 0, 1)
    client = LeanClient(gen, 0)
    client._on_message(msgpack.packb({"t": "welcome", "id": 40, "reasons": REASONS}))
    client.x, client.y = 10, 20  # as the snap left it

    def delta(**keys: object) -> None:
        client._on_message(delta_frame(**keys))

    delta(st=[38 * 8 + 4, 2 * 8 + 2, 3 * 8 + 0])  # 38 south, 40 (me) east, 43 north
    assert (client.x, client.y) == (11, 20)
    delta(st=[41 * 8 + 0], mv=[39, 5, 5])  # others only
    assert (client.x, client.y) == (11, 20)
    delta(mv=[7, 1, 1, 33, 30, 31])  # 7, then me (40) to (30, 31)
    assert (client.x, client.y) == (30, 31)
    delta(upd=[[12, 2, 2, 5, 5, 0, 0], [40, 29, 31, 8, 10, 24, 0]])
    assert (client.x, client.y) == (29, 31)
    delta(st=[40 * 8 + 7], me={"hp": 3})  # north-west, with other news of me
    assert (client.x, client.y) == (28, 30)


class _Recorder:
    """A stand-in for the socket's transport that keeps what was written."""

    def __init__(self) -> None:
        self.written: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.written.append(bytes(data))

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        self.written.append(b"")


async def test_frames_split_anywhere_are_each_read_once_and_pings_answered() -> None:
    """The lean frame path and websockets' own parser take turns on one byte stream."""

    def frame(payload: bytes, opcode: int = 0x2) -> bytes:
        n = len(payload)
        head = (
            bytes((0x80 | opcode, n))
            if n < 126
            else bytes((0x80 | opcode, 126)) + n.to_bytes(2, "big")
        )
        return head + payload

    deltas = [
        delta_frame(tick=t, ev=[["xp", 1, 2]] * size) for t, size in ((1, 1), (2, 40), (3, 2))
    ]
    assert len(deltas[1]) >= 126  # one frame with a 16-bit length
    # The first payload starts as a whole empty binary frame would: cut
    # right after its frame's header, it must still be read as payload.
    assert deltas[0][:2] == b"\x82\x00"
    stream = frame(deltas[0]) + frame(b"hi", opcode=0x9) + frame(deltas[1]) + frame(deltas[2])
    gen = Generator(LoadConfig(url="ws://127.0.0.1:9", n=1), 0, 1)
    for cut in range(len(stream) + 1):
        client = LeanClient(gen, 0)
        client.ws = ClientProtocol(gen.uri, state=State.OPEN, max_size=None)
        recorder = _Recorder()
        client.transport = recorder  # type: ignore[assignment]
        client.playing = True
        before = gen.counters.deltas
        client.data_received(stream[:cut])
        client.data_received(stream[cut:])
        assert gen.counters.deltas - before == 3, cut
        pongs = [w for w in recorder.written if w[:1] == b"\x8a"]
        assert len(pongs) == 1, cut  # websockets answered the ping
    assert gen.counters.errors == {}
