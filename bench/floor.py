"""Network floor: what one server core spends per client-tick on websocket I/O alone.

No game at all: a floor server (this script with ``--serve``) pinned to core 0
with ``taskset``, on uvloop, with websockets' asyncio server
(``compression=None``, no pings), ticks at a fixed rate (10 ticks/s) and in
each tick writes each connected client one binary frame of ``--frame-bytes``
bytes with probability ``--frames-per-tick`` (a credit per client, seeded:
``frames-per-tick`` is added each tick and a frame goes out when it reaches
one), without awaiting per client. ``--send broadcast`` writes it with
``websockets.broadcast([ws], frame)`` per client (websockets' framing);
``--send transport`` builds the frame's header once per tick and writes
header + payload straight to ``ws.transport.write`` (server frames are
unmasked: a 2-byte header below 126 B), the cheapest legal way to send a
websocket frame from Python. Everything the clients send is decoded with
``msgpack.unpackb`` and counted, nothing else: ``--recv iterate`` reads it by
iterating the connection (websockets' own path: parser, assembler, a task per
connection), ``--recv frames`` cuts whole masked binary frames out of the
received bytes before websockets' parser sees them, as the real server's
lean receive path does (``server/net/guard.py``). The server writes nothing
else. The defaults, ``transport`` and ``frames``, are the paths the real
server takes, so the default run is the floor under it.

A load generator (this script with ``--load``) pinned to core 1 opens the
clients (``--rate`` joins per second; each a raw uvloop transport driving
websockets' sans-I/O ``ClientProtocol`` for the opening handshake, then cutting
frames itself, as ``client/loadgen.py`` does) and sends, from one walking
client in ``--walk-every``, a masked binary frame holding a msgpack ``move``
command (``{"t": "cmd", "seq": k, "c": "move", "d": [1, 0]}``, 24-26 B), paced so
that all clients together send ``--commands-per-tick`` per client-tick on
average, spread over each tick; it reads and counts every frame, decoding
none.

Once every client is in and a warm-up has passed, a window is measured:

- the server's CPU as % of one core, user and system apart (``/proc/PID/stat``);
- µs of server CPU per client-tick (user, system, total): CPU seconds /
  (clients × ticks completed in the window);
- of that, the CPU time of the tick's write loop (``time.thread_time``),
  per client-tick and per frame written: the cost of sending, the kernel's
  loopback send included (which also does most of the receiving side's
  kernel work); the rest, per command received, is receiving, the event
  loop and the kernel's reads;
- ticks/s completed, frames/s each client was sent and got, commands/s each
  client sent and the server decoded, bytes per frame;
- the load generator's own CPU (% of one core; µs per frame it got) and the
  CPU pressure (``/proc/pressure/cpu``, "some", % of the window) of the
  whole machine, which says whether anything else ran.

Scenes preset the traffic of ``bench/scale.py``'s two scenes as measured on
main: ``crowded`` = 0.99 frames of 47 B and 0.55 commands per client-tick,
everyone walking; ``spread`` = 0.55 frames of 24 B and 0.14 commands per
client-tick, one client in four walking. Explicit flags override the preset.

This is the floor the real server (``bench/scale.py``) is compared against:
what is left above it is the game (its step, views and encoding).

Usage::

    .venv/bin/python bench/floor.py [-n 2000] [--scene crowded|spread]
        [--send transport|broadcast] [--recv frames|iterate]
        [--frames-per-tick F] [--frame-bytes B] [--commands-per-tick C]
        [--walk-every K] [--window 20] [--warmup 5] [--rate 400] [--json]

Linux only (``/proc``, ``taskset``); 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any, cast

import msgpack  # type: ignore[import-untyped]
import uvloop
from websockets.asyncio.server import ServerConnection, broadcast, serve
from websockets.client import ClientProtocol
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.protocol import State
from websockets.uri import parse_uri

from client.leanclient import frame_at

try:  # websockets' C helper, as its own frames use
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover -- built without its C extension
    from websockets.utils import apply_mask

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/scale.py beside this file

READY_TIMEOUT_S = 30.0
"""Seconds a child process may take to start or to answer a request."""
JOIN_STALL_S = 30.0
"""Seconds past the ramp's end to wait for the last joins."""
SLOTS_PER_TICK = 10
"""The load generator visits one client in this many at each of this many
instants per tick, so that commands arrive spread over the tick."""


@dataclass(frozen=True, slots=True)
class Shape:
    """The traffic of one scene, per client-tick.

    Attributes:
        frames_per_tick: Frames the server writes per client-tick (0..1).
        frame_bytes: Payload bytes of each frame.
        commands_per_tick: Commands the clients send per client-tick, averaged
            over all clients.
        walk_every: One client in this many sends commands.
    """

    frames_per_tick: float
    frame_bytes: int
    commands_per_tick: float
    walk_every: int


SCENES = {
    "crowded": Shape(0.99, 47, 0.55, 1),
    "spread": Shape(0.55, 24, 0.14, 4),
}
"""``bench/scale.py``'s scenes as measured on main (README, "Measured load")."""


@dataclass(frozen=True, slots=True)
class ServeConfig:
    """The floor server's settings (``--serve``, as JSON)."""

    tick_rate: int
    frames_per_tick: float
    frame_bytes: int
    send: str
    recv: str
    seed: int


@dataclass(frozen=True, slots=True)
class LoadConfig:
    """The load generator's settings (``--load``, as JSON)."""

    port: int
    n: int
    rate: float
    commands_per_tick: float
    walk_every: int
    tick_rate: int
    seed: int


@dataclass(slots=True)
class Row:
    """One measured window. Rates per second; CPU in % of one core or µs."""

    scene: str
    send: str
    recv: str
    requested: int
    frame_bytes: int
    frames_per_tick: float
    commands_per_tick: float
    walk_every: int
    clients: int = 0
    connect_failures: int = 0
    lost: int = 0
    join_s: float = 0.0
    window_s: float = 0.0
    ticks: int = 0
    frames_sent: int = 0
    frames_got: int = 0
    commands_sent: int = 0
    commands_recv: int = 0
    undecodable: int = 0
    cpu_user_pct: float = 0.0
    cpu_sys_pct: float = 0.0
    us_user: float | None = None
    us_sys: float | None = None
    us_per_client_tick: float | None = None
    write_us_per_client_tick: float | None = None
    write_us_per_frame: float | None = None
    rest_us_per_command: float | None = None
    ticks_per_s: float = 0.0
    frames_per_client_s: float = 0.0
    frames_got_per_client_s: float = 0.0
    commands_per_client_s: float = 0.0
    commands_recv_per_client_s: float = 0.0
    bytes_per_frame: float | None = None
    rss_mb: float = 0.0
    loadgen_cpu_pct: float = 0.0
    loadgen_us_per_frame: float | None = None
    cpu_pressure_pct: float | None = None
    note: str = ""


def frame_header(n: int) -> bytes:
    """The header of a final, unmasked binary frame of ``n`` payload bytes
    (RFC 6455 section 5.2: a server's frame)."""
    if n < 126:
        return bytes((0x82, n))
    if n < 65536:
        return struct.pack("!BBH", 0x82, 126, n)
    return struct.pack("!BBQ", 0x82, 127, n)


# --- the floor server (--serve) ------------------------------------------------------------


class LeanReceive(ServerConnection):
    """A websockets server connection that hands each whole, masked, final
    binary frame to :attr:`on_message` as it arrives, without websockets'
    parser or assembler; anything else (control frames, a frame cut between
    two reads, text) goes to websockets from that frame's start."""

    on_message: Callable[[bytes], None] | None = None

    def data_received(self, data: bytes) -> None:
        handler = self.on_message
        protocol = self.protocol
        if (
            handler is None
            or protocol.state is not State.OPEN
            or protocol.reader.buffer
            or protocol.current_size is not None  # a fragmented message under way
        ):
            super().data_received(data)
            return
        end, at = len(data), 0
        while end - at >= 6:
            size = data[at + 1]
            if data[at] != 0x82 or not size & 0x80:
                break
            size &= 0x7F
            start = at + 6
            if size == 126 and end - at >= 8:
                size = (data[at + 2] << 8) | data[at + 3]
                start = at + 8
            elif size >= 126:
                break
            if start + size > end:
                break
            handler(apply_mask(data[start : start + size], data[start - 4 : start]))
            at = start + size
        if at < end:
            super().data_received(data[at:] if at else data)


@dataclass(slots=True)
class _Peer:
    ws: ServerConnection
    credit: float


class FloorServer:
    """The connections, the tick and the counters of the floor server."""

    def __init__(self, cfg: ServeConfig) -> None:
        self.cfg = cfg
        self.rng = random.Random(cfg.seed)
        self.peers: dict[ServerConnection, _Peer] = {}
        self.ticks = self.frames = self.bytes = self.messages = self.undecodable = 0
        self.write_cpu_s = 0.0

    def on_message(self, data: bytes) -> None:
        """Decode one message and count it."""
        try:
            msgpack.unpackb(data)
        except Exception:  # noqa: BLE001 -- counted, not fatal
            self.undecodable += 1
            return
        self.messages += 1

    async def handle(self, ws: ServerConnection) -> None:
        """One connection: in the tick's list until it closes; its messages counted."""
        self.peers[ws] = _Peer(ws, self.rng.random())
        if isinstance(ws, LeanReceive):
            ws.on_message = self.on_message
        try:
            async for raw in ws:  # with LeanReceive, only what came before on_message
                self.on_message(raw if isinstance(raw, bytes) else raw.encode())
        except ConnectionClosed:
            pass
        finally:
            del self.peers[ws]

    def write_tick(self) -> None:
        """Write this tick's frames: one to each client whose credit reached one."""
        fpt = self.cfg.frames_per_tick
        size = self.cfg.frame_bytes
        payload = bytes((self.ticks & 0xFF,)) * size
        sent = 0
        if self.cfg.send == "broadcast":
            for peer in self.peers.values():
                peer.credit += fpt
                if peer.credit >= 1.0:
                    peer.credit -= 1.0
                    broadcast((peer.ws,), payload)
                    sent += 1
        else:
            head = frame_header(size)
            for peer in self.peers.values():
                peer.credit += fpt
                if peer.credit >= 1.0:
                    peer.credit -= 1.0
                    ws = peer.ws
                    if ws.protocol.state is State.OPEN:  # as broadcast() skips the others
                        ws.transport.write(head + payload)
                        sent += 1
        self.frames += sent
        self.bytes += sent * size

    async def tick_loop(self) -> None:
        """Call :meth:`write_tick` at ``tick_rate`` per second on a fixed schedule
        (a late tick runs at once; more than a tick late, the schedule restarts)."""
        loop = asyncio.get_running_loop()
        period = 1.0 / self.cfg.tick_rate
        due = loop.time()
        while True:
            due += period
            delay = due - loop.time()
            if delay < -period:
                due, delay = loop.time(), 0.0
            await asyncio.sleep(max(delay, 0.0))
            t0 = time.thread_time()
            self.write_tick()
            self.write_cpu_s += time.thread_time() - t0
            self.ticks += 1

    def snapshot(self) -> dict[str, Any]:
        """The counters now (``t``: ``time.perf_counter()`` s)."""
        return {
            "t": time.perf_counter(),
            "connected": len(self.peers),
            "ticks": self.ticks,
            "frames": self.frames,
            "bytes": self.bytes,
            "messages": self.messages,
            "undecodable": self.undecodable,
            "write_cpu_s": self.write_cpu_s,
        }


def _answer_requests(snapshot: Callable[[], dict[str, Any]], stop: asyncio.Event) -> None:
    """Answer each ``snap`` line on stdin with one JSON line on stdout; set
    ``stop`` at ``quit`` or the end of stdin (the parent closed it or died)."""
    loop = asyncio.get_running_loop()

    def readable() -> None:
        data = os.read(0, 4096)
        for line in data.split(b"\n"):
            if line.strip() == b"snap":
                _emit(snapshot())
        if not data or b"quit" in data:
            loop.remove_reader(0)
            stop.set()

    loop.add_reader(0, readable)


def _emit(obj: dict[str, Any]) -> None:
    os.write(1, json.dumps(obj, separators=(",", ":")).encode() + b"\n")


async def _serve(cfg: ServeConfig) -> None:
    server = FloorServer(cfg)
    stop = asyncio.Event()
    async with serve(
        server.handle,
        "127.0.0.1",
        0,
        compression=None,
        ping_interval=None,
        max_size=1 << 16,
        backlog=4096,
        create_connection=LeanReceive if cfg.recv == "frames" else ServerConnection,
    ) as ws_server:
        port = int(next(iter(ws_server.sockets)).getsockname()[1])
        _emit({"port": port})
        _answer_requests(server.snapshot, stop)
        tick = asyncio.create_task(server.tick_loop())
        await stop.wait()
        tick.cancel()
        for ws in list(server.peers):  # no closing handshakes: the clients are gone
            ws.transport.abort()


# --- the load generator (--load) -----------------------------------------------------------


class Load:
    """The clients of the load generator, their pacing and counters."""

    def __init__(self, cfg: LoadConfig) -> None:
        self.cfg = cfg
        self.uri = parse_uri(f"ws://127.0.0.1:{cfg.port}")
        self.rng = random.Random(cfg.seed)
        self.loop = asyncio.get_running_loop()
        self.clients: list[FloorClient] = []
        self.connected = self.failed = self.lost = 0
        self.frames = self.bytes = self.cmds = 0
        self.per_walker = cfg.commands_per_tick * cfg.walk_every
        self._keys = os.urandom(4096)
        self._key_at = 0

    def command(self, seq: int) -> bytes:
        """A client's ``move`` command as a final, masked binary frame (RFC 6455 5.2)."""
        data = msgpack.packb({"t": "cmd", "seq": seq, "c": "move", "d": [1, 0]})
        k = self._key_at
        if k + 4 > len(self._keys):
            self._keys, k = os.urandom(4096), 0
        key = self._keys[k : k + 4]
        self._key_at = k + 4
        return bytes((0x82, 0x80 | len(data))) + key + apply_mask(data, key)

    async def ramp(self) -> None:
        """Open the connections, ``rate`` per second."""
        start = time.perf_counter()
        tasks: set[asyncio.Task[None]] = set()
        for i in range(self.cfg.n):
            delay = start + i / self.cfg.rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            client = FloorClient(self, i % self.cfg.walk_every == 0)
            self.clients.append(client)
            task = asyncio.create_task(self._connect(client))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        if tasks:
            await asyncio.gather(*tasks)

    async def _connect(self, client: FloorClient) -> None:
        try:
            await self.loop.create_connection(lambda: client, "127.0.0.1", self.cfg.port)
        except OSError:
            self.failed += 1

    async def pace(self) -> None:
        """Each of the tick's :data:`SLOTS_PER_TICK` instants, let one client in
        that many (by index) send the commands its credit allows."""
        period = 1.0 / (self.cfg.tick_rate * SLOTS_PER_TICK)
        due = self.loop.time()
        slot = 0
        while True:
            due += period
            delay = due - self.loop.time()
            if delay < -SLOTS_PER_TICK * period:
                due, delay = self.loop.time(), 0.0
            await asyncio.sleep(max(delay, 0.0))
            for client in self.clients[slot::SLOTS_PER_TICK]:
                if client.open and client.walker:
                    client.credit += self.per_walker
                    while client.credit >= 1.0:
                        client.credit -= 1.0
                        client.send_command()
            slot = (slot + 1) % SLOTS_PER_TICK

    def snapshot(self) -> dict[str, Any]:
        """The counters now."""
        return {
            "connected": self.connected,
            "failed": self.failed,
            "lost": self.lost,
            "frames": self.frames,
            "bytes": self.bytes,
            "cmds": self.cmds,
        }


class FloorClient(asyncio.Protocol):
    """One client: websockets' sans-I/O protocol for the handshake and control
    frames, then frames cut and counted here (as :class:`client.leanclient.LeanClient`)."""

    def __init__(self, load: Load, walker: bool) -> None:
        self.load = load
        self.walker = walker
        self.credit = load.rng.random()
        self.seq = 0
        self.ws = ClientProtocol(load.uri, max_size=None)
        self.transport: asyncio.Transport | None = None
        self.open = False
        self.framing = False
        self.rest = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is no subclass
        self.ws.send_request(self.ws.connect())
        self._flush()

    def data_received(self, data: bytes) -> None:
        if not self.framing:
            if self.ws.state is not State.OPEN or self.ws.reader.buffer:
                self._to_websockets(data)
                return
            self.framing = True  # websockets holds nothing: frames are cut here from now on
        if self.rest:
            data = self.rest + data
        self.rest = data[self._frames(data) :]

    def _frames(self, data: bytes) -> int:
        """Count the whole final binary frames at the start of ``data``, hand any
        other frame to websockets; return the bytes used."""
        i = 0
        while (found := frame_at(data, i)) is not None:
            head, length = found
            if length < 0:  # masked: a protocol error websockets reports
                self._to_websockets(data[i:])
                return len(data)
            end = i + head + length
            if data[i] == 0x82:
                self._binary(length)
            else:  # close (the server sends no ping)
                self._to_websockets(data[i:end])
            i = end
        return i

    def _binary(self, length: int) -> None:
        """A binary frame of ``length`` payload bytes came: counted."""
        self.load.frames += 1
        self.load.bytes += length

    def _to_websockets(self, data: bytes) -> None:
        ws = self.ws
        ws.receive_data(data)
        for ev in ws.events_received():
            if isinstance(ev, Frame):
                if ev.opcode is Opcode.BINARY:
                    self._binary(len(ev.data))
            elif isinstance(ev, Response):
                if ws.handshake_exc is not None:
                    self.load.failed += 1
                else:
                    self.open = True
                    self.load.connected += 1
        self._flush()

    def _flush(self) -> None:
        if self.transport is not None:
            for data in self.ws.data_to_send():
                if data:
                    self.transport.write(data)

    def send_command(self) -> None:
        """Send the next ``move`` command."""
        if self.transport is not None:
            self.seq += 1
            self.transport.write(self.load.command(self.seq))
            self.load.cmds += 1

    def connection_lost(self, exc: Exception | None) -> None:
        if self.open:
            self.open = False
            self.load.connected -= 1
            self.load.lost += 1
        self.transport = None


async def _load(cfg: LoadConfig) -> None:
    load = Load(cfg)
    stop = asyncio.Event()
    _answer_requests(load.snapshot, stop)
    tasks = [asyncio.create_task(load.ramp()), asyncio.create_task(load.pace())]
    await stop.wait()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for client in load.clients:
        if client.transport is not None:
            client.transport.abort()


def _run_child(main: Callable[[], Coroutine[Any, Any, None]]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops it (stdin closes)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(main())
    return 0


# --- the parent: runs, measures, reports ---------------------------------------------------


class _Child:
    """A child process asked over stdin (``snap``), answering one JSON line on stdout."""

    def __init__(self, cmd: list[str], err: IO[bytes]) -> None:
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        self._buf = b""

    def read(self, timeout: float = READY_TIMEOUT_S) -> dict[str, Any] | None:
        """The next JSON line, or None if none came within ``timeout`` s (or it exited)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        answer: dict[str, Any] = json.loads(line)
        return answer

    def ask(self) -> dict[str, Any] | None:
        """Its counters now, or None if it does not answer."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(b"snap\n")
            self.proc.stdin.flush()
        except OSError:
            return None
        return self.read()

    def stop(self) -> None:
        """Close its stdin (it quits) and wait; kill it after 10 s."""
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def cpu_pressure_us() -> int | None:
    """Microseconds some task waited for a CPU since boot (``/proc/pressure/cpu``)."""
    try:
        text = Path("/proc/pressure/cpu").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("some"):
            return int(line.rsplit("total=", 1)[1])
    return None


def measure(args: argparse.Namespace, shape: Shape, n: int) -> Row:
    """Run the floor with ``n`` clients; return its row."""
    # Imported here, not at the top: the children (--serve, --load) need
    # neither, and client.loadgen brings numpy and tcod (0.7 s, 30 MB each).
    from scale import pinned

    row = Row(
        args.scene, args.send, args.recv, n, shape.frame_bytes, shape.frames_per_tick,
        shape.commands_per_tick, shape.walk_every,
    )  # fmt: skip
    cores = (None, None) if args.no_pin else (0, 1)
    serve_cfg = ServeConfig(
        args.tick_rate, shape.frames_per_tick, shape.frame_bytes, args.send, args.recv, args.seed
    )
    me = [sys.executable, str(Path(__file__).resolve())]
    with tempfile.TemporaryFile() as err:
        server = _Child(pinned(cores[0], [*me, "--serve", json.dumps(asdict(serve_cfg))]), err)
        gen: _Child | None = None
        try:
            hello = server.read()
            if hello is None:
                row.note = "the floor server did not start"
                return row
            load_cfg = LoadConfig(
                hello["port"], n, args.rate, shape.commands_per_tick, shape.walk_every,
                args.tick_rate, args.seed,
            )  # fmt: skip
            gen = _Child(pinned(cores[1], [*me, "--load", json.dumps(asdict(load_cfg))]), err)
            _run_window(args, row, n, server, gen)
        finally:
            if gen is not None:
                gen.stop()
            server.stop()
            if row.note:
                err.seek(0)
                tail = err.read().decode(errors="replace")[-2000:]
                if tail:
                    row.note += f"; stderr: {tail}"
    return row


def _run_window(args: argparse.Namespace, row: Row, n: int, server: _Child, gen: _Child) -> None:
    started = time.monotonic()
    deadline = started + n / args.rate + JOIN_STALL_S
    while True:  # joins
        g = gen.ask()
        if g is None:
            row.note = "the load generator did not answer"
            return
        if g["connected"] + g["failed"] >= n:
            break
        if time.monotonic() > deadline:
            row.note = f"joins stalled at {g['connected']}"
            break
        time.sleep(0.25)
    row.join_s = round(time.monotonic() - started, 1)
    time.sleep(args.warmup)
    first = _sample(server, gen)
    if first is None:
        row.note = "a child did not answer"
        return
    time.sleep(args.window)
    last = _sample(server, gen)
    if last is None:
        row.note = "a child did not answer"
        return
    _fill(row, first, last)


_Sample = tuple[dict[str, Any], tuple[float, float, int], dict[str, Any], float, int | None]


def _sample(server: _Child, gen: _Child) -> _Sample | None:
    """Counters and CPU of both children, and the machine's CPU pressure."""
    from scale import read_cpu  # see measure()

    psi = cpu_pressure_us()
    s = server.ask()
    if s is None:
        return None
    s_cpu = read_cpu(server.proc.pid)
    g = gen.ask()
    if g is None:
        return None
    g_user, g_sys, _ = read_cpu(gen.proc.pid)
    return s, s_cpu, g, g_user + g_sys, psi


def _fill(row: Row, first: _Sample, last: _Sample) -> None:
    (s0, (u0, k0, _), g0, gc0, p0), (s1, (u1, k1, rss), g1, gc1, p1) = first, last
    secs = s1["t"] - s0["t"]
    clients = (s0["connected"] + s1["connected"]) / 2
    row.clients = s1["connected"]
    row.connect_failures = g1["failed"]
    row.lost = g1["lost"]
    row.window_s = round(secs, 1)
    row.ticks = ticks = s1["ticks"] - s0["ticks"]
    row.frames_sent = s1["frames"] - s0["frames"]
    row.frames_got = g1["frames"] - g0["frames"]
    row.commands_sent = g1["cmds"] - g0["cmds"]
    row.commands_recv = s1["messages"] - s0["messages"]
    row.undecodable = s1["undecodable"]
    user, system = u1 - u0, k1 - k0
    write = s1["write_cpu_s"] - s0["write_cpu_s"]
    row.cpu_user_pct = round(100 * user / secs, 1)
    row.cpu_sys_pct = round(100 * system / secs, 1)
    row.ticks_per_s = round(ticks / secs, 2)
    if ticks and clients:
        client_ticks = clients * ticks
        row.us_user = round(1e6 * user / client_ticks, 1)
        row.us_sys = round(1e6 * system / client_ticks, 1)
        row.us_per_client_tick = round(1e6 * (user + system) / client_ticks, 1)
        row.write_us_per_client_tick = round(1e6 * write / client_ticks, 1)
    if row.frames_sent:
        row.write_us_per_frame = round(1e6 * write / row.frames_sent, 2)
        row.bytes_per_frame = round((s1["bytes"] - s0["bytes"]) / row.frames_sent, 1)
    if row.commands_recv:
        row.rest_us_per_command = round(1e6 * (user + system - write) / row.commands_recv, 1)
    if clients:
        row.frames_per_client_s = round(row.frames_sent / clients / secs, 2)
        row.frames_got_per_client_s = round(row.frames_got / clients / secs, 2)
        row.commands_per_client_s = round(row.commands_sent / clients / secs, 2)
        row.commands_recv_per_client_s = round(row.commands_recv / clients / secs, 2)
    row.rss_mb = round(rss / 2**20, 1)
    row.loadgen_cpu_pct = round(100 * (gc1 - gc0) / secs, 1)
    if row.frames_got:
        row.loadgen_us_per_frame = round(1e6 * (gc1 - gc0) / row.frames_got, 1)
    if p0 is not None and p1 is not None:
        row.cpu_pressure_pct = round((p1 - p0) / 1e4 / secs, 1)


COLUMNS = (
    ("scene", "scene", "{}"), ("send", "send", "{}"), ("recv", "recv", "{}"),
    ("clients", "clients", "{:,}"),
    ("cpu_user_pct", "usr%", "{:.0f}"), ("cpu_sys_pct", "sys%", "{:.0f}"),
    ("us_user", "µs usr", "{:.1f}"), ("us_sys", "µs sys", "{:.1f}"),
    ("us_per_client_tick", "µs/cl-tick", "{:.1f}"),
    ("write_us_per_client_tick", "write µs", "{:.1f}"),
    ("write_us_per_frame", "µs/frame", "{:.2f}"),
    ("rest_us_per_command", "rest µs/cmd", "{:.1f}"),
    ("ticks_per_s", "ticks/s", "{:.1f}"),
    ("frames_per_client_s", "frames/s/cl", "{:.2f}"), ("frames_got_per_client_s", "got", "{:.2f}"),
    ("commands_per_client_s", "cmds/s/cl", "{:.2f}"),
    ("commands_recv_per_client_s", "decoded", "{:.2f}"),
    ("bytes_per_frame", "B/frame", "{:.0f}"), ("rss_mb", "RSS MB", "{:.0f}"),
    ("loadgen_cpu_pct", "gen CPU%", "{:.0f}"), ("loadgen_us_per_frame", "gen µs/frame", "{:.1f}"),
    ("cpu_pressure_pct", "psi%", "{:.0f}"),
)  # fmt: skip


def format_table(rows: list[Row]) -> str:
    """The rows as an aligned text table, then each row's settings and notes."""
    cells = [[h for _, h, _ in COLUMNS]]
    for r in rows:
        values = asdict(r)
        cells.append(["-" if values[k] is None else f.format(values[k]) for k, _, f in COLUMNS])
    widths = [max(len(row[i]) for row in cells) for i in range(len(COLUMNS))]
    out = ["  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) for row in cells]
    for r in rows:
        extra = [
            (
                f"{r.scene} {r.requested}: {r.frames_per_tick} frames of {r.frame_bytes} B and "
                f"{r.commands_per_tick} commands per client-tick (one client in {r.walk_every} "
                f"walks); joined in {r.join_s} s; window {r.window_s} s, {r.ticks:,} ticks"
            )
        ]
        if r.connect_failures or r.lost:
            extra.append(f"{r.connect_failures} connections failed, {r.lost} lost")
        if r.undecodable:
            extra.append(f"{r.undecodable} undecodable messages")
        if r.note:
            extra.append(r.note)
        out.append("  " + "; ".join(extra))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the table (or JSON); 0 if every run measured a
    window with all its clients in."""
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("-n", default="2000", help="client counts, comma-separated (default 2000)")
    p.add_argument(
        "--scene",
        choices=sorted(SCENES),
        default="crowded",
        help="traffic preset (default crowded)",
    )
    p.add_argument(
        "--send",
        choices=("broadcast", "transport"),
        default="transport",
        help="header + payload to the transport, as the server sends (default), "
        "or websockets' broadcast() per client",
    )
    p.add_argument(
        "--recv",
        choices=("iterate", "frames"),
        default="frames",
        help="cut frames before websockets' parser, as the server receives (default), "
        "or iterate the connection (websockets' path)",
    )
    p.add_argument("--frames-per-tick", type=float, help="frames per client-tick, 0..1 (preset)")
    p.add_argument("--frame-bytes", type=int, help="payload bytes per frame (preset)")
    p.add_argument("--commands-per-tick", type=float, help="commands per client-tick (preset)")
    p.add_argument("--walk-every", type=int, help="one client in K sends commands (preset)")
    p.add_argument("--window", type=float, default=20.0, help="measured seconds (default 20)")
    p.add_argument("--warmup", type=float, default=5.0, help="seconds after joins (default 5)")
    p.add_argument("--rate", type=float, default=400.0, help="joins per second (default 400)")
    p.add_argument("--tick-rate", type=int, default=10, help="ticks/s (default 10)")
    p.add_argument(
        "--seed", type=int, default=7, help="seed of the frame and command credits (default 7)"
    )
    p.add_argument("--no-pin", action="store_true", help="do not pin with taskset")
    p.add_argument("--json", action="store_true", help="print one JSON object per run")
    p.add_argument("--serve", help=argparse.SUPPRESS)  # internal: the floor server, JSON config
    p.add_argument("--load", help=argparse.SUPPRESS)  # internal: the load generator, JSON config
    args = p.parse_args(argv)
    if args.serve:
        serve_cfg = ServeConfig(**json.loads(args.serve))
        return _run_child(lambda: _serve(serve_cfg))
    if args.load:
        load_cfg = LoadConfig(**json.loads(args.load))
        return _run_child(lambda: _load(load_cfg))
    # Imported here, not at the top: the children (--serve, --load) need
    # neither, and client.loadgen (which scale imports) brings numpy and tcod.
    from scale import check_pinning, client_counts, run_all

    from client.loadgen import raise_open_files

    counts = client_counts(p, args.n)
    preset = SCENES[args.scene]
    shape = Shape(
        preset.frames_per_tick if args.frames_per_tick is None else args.frames_per_tick,
        preset.frame_bytes if args.frame_bytes is None else args.frame_bytes,
        preset.commands_per_tick if args.commands_per_tick is None else args.commands_per_tick,
        preset.walk_every if args.walk_every is None else args.walk_every,
    )
    if not 0 <= shape.frames_per_tick <= 1 or shape.frame_bytes < 0:
        p.error("need 0 <= --frames-per-tick <= 1 and --frame-bytes >= 0")
    if shape.commands_per_tick < 0 or shape.walk_every < 1:
        p.error("need --commands-per-tick >= 0 and --walk-every >= 1")
    if not (args.window > 0 and args.warmup >= 0 and args.rate > 0 and args.tick_rate > 0):
        p.error("need --window > 0, --warmup >= 0, --rate > 0 and --tick-rate > 0")
    if not sys.platform.startswith("linux"):
        p.error("Linux only (/proc)")
    check_pinning(p, args.no_pin)
    raise_open_files(2 * max(counts) + 256)  # the server and the generator inherit it
    runs = [(args.scene, n) for n in counts]
    rows = run_all(runs, lambda _scene, n: measure(args, shape, n), args.json)
    if not args.json:
        print(format_table(rows))
    return 0 if all(r.window_s > 0 and r.clients == r.requested for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
