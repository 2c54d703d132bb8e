"""A lean load generator: thousands of walking clients per core.

Each client is an :class:`asyncio.Protocol` on a raw transport (uvloop when
installed) that drives websockets' sans-I/O :class:`~websockets.client.ClientProtocol`
(``receive_data`` / ``events_received`` / ``data_to_send``) for the opening
handshake, control frames (ping, close) and anything unusual, and decodes
frames with msgpack, skipping the full client model of :mod:`client.bots`.
The common case takes a lean path that costs a third as much: while the
connection is open and websockets holds no partial frame, whole unmasked
binary frames are cut out of the received bytes here, and each command is
framed here (masked, RFC 6455 section 5.3, with websockets' ``apply_mask``). A client
says ``hello`` (its name and class), then walks: after the ``ack`` of its last
command it waits until its character can act again (``me.speed`` ticks, less
a random part of one tick, as :mod:`client.bots` does) and sends its next
``move``; a ``reject`` of that command makes it try another direction at
once (a ``reject`` message in protocol 2, a ``rej`` entry of the frame in
protocol 3). It keeps going in one direction while the remembered map shows a
walkable cell ahead, else turns to a random walkable neighbour.

With ``depths`` > 1 (the *spread* scene), client ``i`` first goes down the
stairs to depth ``1 + i % depths`` (python-tcod paths over its remembered map
to known down stairs, else to the nearest unexplored cell), then only one in
``walk_every`` of them keeps walking; the others stay where they are and
only read.

What is measured, per process and cumulatively (:class:`Counters`): frames
and payload bytes received, commands sent and answered, command→effect
latency (from sending a ``cmd`` to the first ``snap``/``delta`` whose ``ack``
reaches its ``seq``) as a 1 ms histogram, rejects by reason, ``error`` codes,
join refusals and connection failures, the depths clients stand on, and the
process's CPU time. ``procs`` > 1 runs the clients in that many worker
processes (multiprocessing, ``spawn``) and merges their counters.

Entry points: :func:`run_load` (blocking; returns the final merged snapshot),
:func:`run_load_async` (one process, in the running loop) and :func:`main`
(``python -m client.loadgen``, also behind ``underhall bots --lean``).
Snapshots are plain dicts (JSON-able; see :func:`Counters.snapshot`);
:func:`diff` of two of them describes the window between them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import math
import multiprocessing
import os
import random
import signal
import struct
import sys
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from multiprocessing.connection import Connection as Pipe
from typing import Any, cast

import msgpack  # type: ignore[import-untyped]
import numpy as np
from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.protocol import OPEN
from websockets.uri import parse_uri

try:  # websockets' C helper, as its own frames use
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover -- built without its C extension
    from websockets.utils import apply_mask

from client.botpolicy import frontier_cells, path_to_nearest, walkable_cells
from client.connection import _read_tokens, _server_key, token_path
from protocol.limits import NAME_RE
from protocol.version import PROTOCOL_VERSION

__all__ = [
    "LAT_BUCKETS", "Counters", "LoadConfig", "diff", "format_report", "main", "merge",
    "percentile", "raise_open_files", "run_load", "run_load_async",
]  # fmt: skip

LAT_BUCKETS = 5001
"""Latency histogram buckets: bucket ``k`` counts latencies in ``[k, k + 1)`` ms;
the last one everything from 5 s up."""

ACK_TIMEOUT_S = 2.0
"""Seconds a client waits for its last command to be answered before sending another."""

CLASSES: tuple[str, ...] = ("warrior", "warrior", "mage")
"""Classes of new characters, client ``i`` taking ``CLASSES[i % 3]`` (as the bots do)."""

DIRECTIONS: tuple[tuple[int, int], ...] = (
    (0, -1), (1, -1), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1),
)  # fmt: skip

KEEP_DIRECTION = 0.8
"""Chance that a walker keeps its direction while the cell ahead is walkable."""

STAIRS_DOWN = 12
DOOR_CLOSED = 3
LAVA = 6
UNKNOWN = 255


@dataclass(slots=True)
class LoadConfig:
    """What to run. Times in seconds, rates in joins per second.

    Attributes:
        url: ``ws://host:port``.
        n: Clients in all.
        duration: Seconds from the first join to the end (``inf``: until interrupted).
        rate: Joins per second over all processes (the ramp).
        procs: Worker processes (1: run in this process).
        prefix: Client ``i`` is named ``f"{prefix}{i}"``.
        seed: Seed of the clients' random choices.
        depths: Spread the clients over depths ``1..depths`` by the stairs.
        walk_every: With ``depths`` > 1, one client in this many walks once arrived.
        classes: Classes of new characters in turn (``()``: the server's default).
        tokens: Resume tokens by name (from an earlier run); new ones are returned.
    """

    url: str
    n: int
    duration: float = float("inf")
    rate: float = 100.0
    procs: int = 1
    prefix: str = "lean"
    seed: int = 0
    depths: int = 1
    walk_every: int = 1
    classes: tuple[str, ...] = CLASSES
    tokens: dict[str, str] = field(default_factory=dict)

    def check(self) -> None:
        """Raises:
        ValueError: a value out of range, or a client name that is no valid player name.
        """
        if self.n < 0 or not self.duration > 0 or not self.rate > 0 or self.procs < 1:
            raise ValueError("need n >= 0, duration > 0, rate > 0 and procs >= 1")
        if self.depths < 1 or self.walk_every < 1:
            raise ValueError("need depths >= 1 and walk_every >= 1")
        for i in {0, max(self.n - 1, 0)}:
            if not NAME_RE.fullmatch(f"{self.prefix}{i}"):
                raise ValueError(f"client name {self.prefix}{i} is not a valid player name")
        parse_uri(self.url)  # raises InvalidURI, a ValueError


@dataclass(slots=True)
class Counters:
    """Cumulative counters of the clients of one process."""

    joins: int = 0
    connected: int = 0
    welcomed: int = 0
    closed: int = 0
    frames: int = 0
    bytes: int = 0
    snaps: int = 0
    deltas: int = 0
    cmds: int = 0
    acks: int = 0
    lat: list[int] = field(default_factory=lambda: [0] * LAT_BUCKETS)
    rejects: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    connect_failures: Counter[str] = field(default_factory=Counter)

    def snapshot(self, clients: Iterable[LeanClient] = ()) -> dict[str, Any]:
        """The counters now, as a JSON-able dict.

        Keys: ``t`` (Unix time, s), the counters above, ``lat`` as a sparse
        ``{bucket: count}``, ``depths`` ``{depth: clients}`` and ``settled``
        (clients at their target depth) over ``clients`` that are playing,
        ``cpu_s`` this process's CPU seconds, ``procs`` 1.
        """
        depths: Counter[str] = Counter()
        settled = 0
        for c in clients:
            if c.playing:
                depths[str(c.depth)] += 1
                settled += c.depth == c.target
        return {
            "t": time.time(), "joins": self.joins, "connected": self.connected,
            "welcomed": self.welcomed, "closed": self.closed, "frames": self.frames,
            "bytes": self.bytes, "snaps": self.snaps, "deltas": self.deltas,
            "cmds": self.cmds, "acks": self.acks,
            "lat": {str(k): v for k, v in enumerate(self.lat) if v},
            "rejects": dict(self.rejects), "errors": dict(self.errors),
            "refused": dict(self.refused), "connect_failures": dict(self.connect_failures),
            "depths": dict(depths), "settled": settled,
            "cpu_s": time.process_time(), "procs": 1,
        }  # fmt: skip


_SUMMED = (
    "joins",
    "connected",
    "welcomed",
    "closed",
    "frames",
    "bytes",
    "snaps",
    "deltas",
    "cmds",
    "acks",
    "settled",
    "cpu_s",
    "procs",
)
_COUNTED = ("lat", "rejects", "errors", "refused", "connect_failures", "depths")


def merge(snaps: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Sum snapshots of several processes into one (``t``: the latest)."""
    out: dict[str, Any] = {k: 0 for k in _SUMMED}
    out.update({k: {} for k in _COUNTED})
    out["t"] = 0.0
    for s in snaps:
        out["t"] = max(out["t"], s["t"])
        for k in _SUMMED:
            out[k] += s.get(k, 0)
        for k in _COUNTED:
            for key, v in s.get(k, {}).items():
                out[k][key] = out[k].get(key, 0) + v
    return out


def diff(later: Mapping[str, Any], earlier: Mapping[str, Any]) -> dict[str, Any]:
    """What happened between two snapshots: counters subtracted, ``seconds`` added.

    ``connected``, ``depths`` and ``settled`` are the later snapshot's (states, not counts).
    """
    out = dict(later)
    out["seconds"] = later["t"] - earlier["t"]
    for k in _SUMMED:
        if k not in ("connected", "settled", "procs"):
            out[k] = later[k] - earlier[k]
    for k in _COUNTED:
        if k != "depths":
            before = earlier[k]
            out[k] = {
                key: v - before.get(key, 0) for key, v in later[k].items() if v - before.get(key, 0)
            }
    return out


def percentile(lat: Mapping[str, int], q: float) -> float | None:
    """The ``q`` quantile (0..1, nearest rank) of a latency histogram, in ms (bucket
    midpoint), or None when it is empty."""
    total = sum(lat.values())
    if total == 0:
        return None
    rank = max(math.ceil(q * total), 1)  # the nearest-rank method
    seen = 0
    for key in sorted(lat, key=int):
        seen += lat[key]
        if seen >= rank:
            return int(key) + 0.5
    return float(LAT_BUCKETS - 1)


# --- one client ----------------------------------------------------------------------------


class LeanClient(asyncio.Protocol):
    """One websocket client on a raw transport; see the module docstring."""

    def __init__(self, gen: _Generator, index: int) -> None:
        self.gen = gen
        self.index = index
        self.name = f"{gen.cfg.prefix}{index}"
        self.cls = gen.cfg.classes[index % len(gen.cfg.classes)] if gen.cfg.classes else None
        cfg = gen.cfg
        self.target = 1 + index % cfg.depths
        self.walker = cfg.depths == 1 or (index // cfg.depths) % cfg.walk_every == 0
        self.ws = ClientProtocol(gen.uri, max_size=None)
        self.transport: asyncio.Transport | None = None
        self.playing = False
        self.answered_join = False  # welcomed, refused, or the handshake failed
        self.closing = False
        self.dead = False
        self.tick_rate = 10
        self.depth = 0
        self.x = self.y = 0
        self.speed = 1
        self.w = self.h = 0
        self.map = bytearray()
        self.passable = gen.passable
        self.seq = 0
        self.last_seq = -1
        self.pending: deque[tuple[int, float]] = deque()
        self.sent_t = 0.0
        self.answered = True
        self.timer: asyncio.TimerHandle | None = None
        self.d = DIRECTIONS[index % 8]
        self.path: list[tuple[int, int]] = []
        self.parts: list[bytes] = []

    # transport callbacks

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is no subclass
        self.gen.counters.connected += 1
        self.ws.send_request(self.ws.connect())
        self._flush()

    def data_received(self, data: bytes) -> None:
        ws = self.ws
        if ws.state is OPEN and not ws.reader.buffer:
            # The lean path: websockets holds no partial frame, so the data starts
            # at a frame boundary; whole unmasked binary frames are read here.
            done = self._whole_binary_frames(data)
            if done == len(data):
                return
            data = data[done:]
        parts = self.parts
        ws.receive_data(data)
        for ev in ws.events_received():
            if isinstance(ev, Frame):
                if ev.opcode is Opcode.BINARY or ev.opcode is Opcode.CONT:
                    if ev.fin and not parts:
                        self._on_message(bytes(ev.data))
                    else:  # a fragmented message (the server does not send them)
                        parts.append(bytes(ev.data))
                        if ev.fin:
                            self._on_message(b"".join(parts))
                            parts.clear()
                elif ev.opcode is Opcode.TEXT:
                    self.gen.counters.errors["text_frame"] += 1
            elif isinstance(ev, Response):
                if ws.handshake_exc is not None:
                    self.answered_join = True
                    self.gen.counters.connect_failures[f"handshake: {ws.handshake_exc}"] += 1
                else:
                    self._hello()
        self._flush()

    def _whole_binary_frames(self, data: bytes) -> int:
        """Hand each whole, final, unmasked binary frame at the start of ``data`` to
        :meth:`_on_message`; return the bytes used (the rest goes to websockets)."""
        n, i = len(data), 0
        while i + 2 <= n:
            if data[i] != 0x82:  # FIN + binary: anything else is websockets' business
                break
            length, head = data[i + 1], 2  # the mask bit is 0 from a server
            if length == 126:
                if i + 4 > n:
                    break
                length, head = int.from_bytes(data[i + 2 : i + 4], "big"), 4
            elif length == 127:
                if i + 10 > n:
                    break
                length, head = int.from_bytes(data[i + 2 : i + 10], "big"), 10
            elif length > 127:  # masked: a protocol error websockets will report
                break
            end = i + head + length
            if end > n:
                break
            self._on_message(data[i + head : end])
            i = end
        return i

    def eof_received(self) -> bool | None:
        self.ws.receive_eof()
        self._flush()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        counters = self.gen.counters
        counters.connected -= 1
        if self.timer is not None:
            self.timer.cancel()
        if self.playing and not self.closing:
            counters.closed += 1
            code = self.ws.close_rcvd.code if self.ws.close_rcvd is not None else 1006
            counters.errors[f"closed_by_server_{code}"] += 1
        elif not self.playing and not self.closing and not self.answered_join:
            # Dropped before any welcome or refusal, e.g. the server's opening
            # handshake timed out while it was too busy to answer.
            counters.connect_failures["closed_before_welcome"] += 1
        self.playing = False
        self.transport = None

    # protocol

    def _flush(self) -> None:
        transport = self.transport
        if transport is None:
            return
        for data in self.ws.data_to_send():
            if data:
                transport.write(data)
            elif transport.can_write_eof():  # the closing handshake is over: send FIN
                transport.write_eof()

    def _send(self, obj: dict[str, Any]) -> None:
        data = self.gen.pack(obj)
        if self.ws.state is OPEN and self.transport is not None:
            self.transport.write(self.gen.frame(data))  # nothing else is queued
        else:
            self.ws.send_binary(data)
            self._flush()

    def _hello(self) -> None:
        hello: dict[str, Any] = {"t": "hello", "v": PROTOCOL_VERSION, "name": self.name}
        token = self.gen.cfg.tokens.get(self.name)
        if token:
            hello["token"] = token
        elif self.cls:
            hello["class"] = self.cls
        self._send(hello)

    def _on_message(self, data: bytes) -> None:
        counters = self.gen.counters
        counters.frames += 1
        counters.bytes += len(data)
        try:
            msg = self.gen.unpack(data)
            t = msg["t"]
        except Exception:  # noqa: BLE001 -- any undecodable frame is counted, not fatal
            counters.errors["undecodable"] += 1
            return
        if t == "delta":
            counters.deltas += 1
            self._on_view(msg, snap=False)
        elif t == "snap":
            counters.snaps += 1
            self._on_view(msg, snap=True)
        elif t == "reject":  # protocol 2; protocol 3 sends refusals in the frame's rej
            self._refused(msg.get("seq"), str(msg.get("reason", "?")))
        elif t == "welcome":
            self.playing = self.answered_join = True
            counters.welcomed += 1
            self.tick_rate = int(msg.get("tick_rate", 10))
            token = msg.get("token")
            if token:
                self.gen.new_tokens[self.name] = token
        elif t == "error":
            code = str(msg.get("code", "?"))
            if msg.get("fatal") and not self.playing:
                self.answered_join = True
                counters.refused[code] += 1
            else:
                counters.errors[code] += 1

    def _refused(self, seq: object, reason: str) -> None:
        """Count a refusal; if it answers the last command, try another direction now."""
        self.gen.counters.rejects[reason] += 1
        if seq == self.last_seq and not self.answered:
            self.answered = True
            self.d = DIRECTIONS[self.gen.rng.randrange(8)]
            self.path = []
            self._schedule(0.0)

    def _on_view(self, msg: dict[str, Any], *, snap: bool) -> None:
        rej = msg.get("rej")
        if rej:  # protocol 3: [[seq, reason], ...], before the ack of the same frame
            for seq, reason in rej:
                self._refused(seq, str(reason))
        me = msg.get("me")
        if snap:
            self.depth = msg["depth"]
            self.w, self.h = msg["w"], msg["h"]
            self.map = bytearray(msg["map"])
            self.path = []
        else:
            tiles = msg.get("tiles")
            if tiles:
                m, w = self.map, self.w
                for k in range(0, len(tiles) - 2, 3):
                    m[tiles[k + 1] * w + tiles[k]] = tiles[k + 2]
        if me:
            if "x" in me:
                self.x = me["x"]
            if "y" in me:
                self.y = me["y"]
            if "speed" in me:
                self.speed = me["speed"]
            if "depth" in me:
                self.depth = me["depth"]
            if "dead" in me:
                self.dead = bool(me["dead"])
        ack = msg.get("ack")
        if ack is not None and self.pending and self.pending[0][0] <= ack:
            self._settle(ack)
        if snap and self.answered and not self.dead:
            self._schedule(self.gen.rng.random() / self.tick_rate)

    def _settle(self, ack: int) -> None:
        now = time.perf_counter()
        counters = self.gen.counters
        lat = counters.lat
        pending = self.pending
        while pending and pending[0][0] <= ack:
            _, sent = pending.popleft()
            counters.acks += 1
            lat[min(int((now - sent) * 1000.0), LAT_BUCKETS - 1)] += 1
        if ack >= self.last_seq and not self.answered:
            self.answered = True
            self._schedule((max(1, self.speed) - 1 + self.gen.rng.random()) / self.tick_rate)

    def _schedule(self, delay: float) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.timer = self.gen.loop.call_later(delay, self.act)

    # policy

    def act(self) -> None:
        """Send the next command, if this client walks and can act now."""
        self.timer = None
        if not self.playing or self.closing or self.dead or not self.map:
            return
        if self.depth != self.target:
            c, d = self._descend()
        elif self.walker:
            c, d = "move", self._walk()
        else:
            return
        self.seq += 1
        cmd: dict[str, Any] = {"t": "cmd", "seq": self.seq, "c": c}
        if d is not None:
            cmd["d"] = d
        self._send(cmd)
        now = time.perf_counter()
        self.pending.append((self.seq, now))
        self.last_seq = self.seq
        self.sent_t = now
        self.answered = False
        self.gen.counters.cmds += 1

    def _open(self, x: int, y: int) -> bool:
        return 0 <= x < self.w and 0 <= y < self.h and self.passable[self.map[y * self.w + x]]

    def _walk(self) -> list[int]:
        x, y, (dx, dy) = self.x, self.y, self.d
        rng = self.gen.rng
        if self._open(x + dx, y + dy) and rng.random() < KEEP_DIRECTION:
            return [dx, dy]
        choices = [d for d in DIRECTIONS if self._open(x + d[0], y + d[1])]
        self.d = rng.choice(choices) if choices else DIRECTIONS[rng.randrange(8)]
        return list(self.d)

    def _descend(self) -> tuple[str, list[int] | None]:
        x, y, w = self.x, self.y, self.w
        if self.map[y * w + x] == STAIRS_DOWN:
            return "down", None
        if self.path and self.path[0] == (x, y):
            self.path.pop(0)  # arrived on the next cell of the path
        if not self.path or max(abs(self.path[0][0] - x), abs(self.path[0][1] - y)) != 1:
            known = np.frombuffer(bytes(self.map), dtype=np.uint8).reshape(self.h, w)
            walk = walkable_cells(known, self.gen.passable_np[known])
            goals = known == STAIRS_DOWN
            if not goals.any():
                goals = frontier_cells(known, walk)
            path = path_to_nearest(
                walk.astype(np.int8), goals, (x, y), spread=4, rng=self.gen.np_rng
            )
            if not path:
                return "move", self._walk()
            self.path = path
        nx, ny = self.path[0]
        return "move", [nx - x, ny - y]

    def close(self) -> None:
        """Start a normal close (code 1000); the transport closes when it is done."""
        self.closing = True
        if self.timer is not None:
            self.timer.cancel()
        if self.transport is None:
            return
        if self.playing:
            with contextlib.suppress(Exception):  # already closing: the socket is dropped anyway
                self.ws.send_close(1000)
            self._flush()
        self.gen.loop.call_later(1.0, self._abort)

    def _abort(self) -> None:
        if self.transport is not None:
            self.transport.close()


# --- one process's clients -----------------------------------------------------------------


class _Generator:
    """The clients of one process, their counters and shared helpers."""

    def __init__(self, cfg: LoadConfig, worker: int, procs: int) -> None:
        self.cfg = cfg
        self.worker = worker
        self.procs = procs
        self.uri = parse_uri(cfg.url)
        self.counters = Counters()
        self.rng = random.Random(f"{cfg.seed}/{worker}")
        self.np_rng = np.random.default_rng([cfg.seed, worker])
        self.pack = msgpack.Packer(use_bin_type=True).pack
        self.unpack: Callable[[bytes], Any] = functools.partial(msgpack.unpackb, raw=False)
        # Walkable terrain codes: floor-like passable ones and closed doors, not lava.
        # Fixed codes (docs/protocol.md); 255 (unknown) is not walkable.
        walk = [False] * 256
        for code in (2, 3, 4, 7, 9, 10, 11, 12):  # floor, doors, rubble, fountain, altar, stairs
            walk[code] = True
        self.passable = walk
        self.passable_np = np.array(walk, dtype=bool)
        self.passable_np[[DOOR_CLOSED, LAVA, UNKNOWN]] = False  # walkable_cells adds doors back
        self.clients: list[LeanClient] = []
        self.new_tokens: dict[str, str] = {}
        self._keys = os.urandom(4096)
        self._key_at = 0
        self.loop = asyncio.get_running_loop()

    def frame(self, payload: bytes) -> bytes:
        """A final binary websocket frame from a client (RFC 6455 5.2): masked with
        a random key drawn from a pool of ``os.urandom`` bytes."""
        k = self._key_at
        if k + 4 > len(self._keys):
            self._keys, k = os.urandom(4096), 0
        key = self._keys[k : k + 4]
        self._key_at = k + 4
        n = len(payload)
        if n < 126:
            head = bytes((0x82, 0x80 | n))
        elif n < 65536:
            head = struct.pack("!BBH", 0x82, 0xFE, n)
        else:
            head = struct.pack("!BBQ", 0x82, 0xFF, n)
        return head + key + apply_mask(payload, key)

    async def ramp(self) -> None:
        """Open this process's share of the connections, ``rate / procs`` per second."""
        cfg = self.cfg
        mine = range(self.worker, cfg.n, self.procs)
        per_s = cfg.rate / self.procs
        host, port = self.uri.host, self.uri.port
        start = time.perf_counter()
        tasks: set[asyncio.Task[Any]] = set()
        for k, i in enumerate(mine):
            delay = start + k / per_s - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            client = LeanClient(self, i)
            self.clients.append(client)
            self.counters.joins += 1
            task = asyncio.create_task(self._connect(client, host, port))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        if tasks:
            await asyncio.gather(*tasks)

    async def _connect(self, client: LeanClient, host: str, port: int) -> None:
        try:
            await self.loop.create_connection(lambda: client, host, port)
        except OSError as exc:
            self.counters.connect_failures[exc.strerror or type(exc).__name__] += 1

    def resend_stuck(self) -> None:
        """Let clients whose last command went unanswered for too long act again."""
        now = time.perf_counter()
        for c in self.clients:
            if c.playing and not c.answered and c.timer is None and now - c.sent_t > ACK_TIMEOUT_S:
                c.answered = True
                c.act()

    async def close_all(self) -> None:
        """Close every connection; wait up to 2 s for the closing handshakes."""
        for c in self.clients:
            c.close()
        deadline = time.perf_counter() + 2.0
        while self.counters.connected > 0 and time.perf_counter() < deadline:
            await asyncio.sleep(0.05)

    def snapshot(self) -> dict[str, Any]:
        """:meth:`Counters.snapshot` over this process's clients."""
        return self.counters.snapshot(self.clients)


async def run_load_async(
    cfg: LoadConfig,
    *,
    on_snapshot: Callable[[dict[str, Any]], None] | None = None,
    stop: asyncio.Event | None = None,
    worker: int = 0,
    procs: int = 1,
) -> tuple[dict[str, Any], dict[str, str]]:
    """Run this process's share of the clients in the running loop.

    Calls ``on_snapshot`` with a snapshot about once a second; ends after
    ``cfg.duration`` seconds or when ``stop`` is set, closing every connection.

    Returns:
        The final snapshot and the resume tokens of new characters by name.
    """
    gen = _Generator(cfg, worker, procs)
    stop = stop or asyncio.Event()
    started = time.perf_counter()
    ramp = asyncio.create_task(gen.ramp())
    try:
        while not stop.is_set():
            left = cfg.duration - (time.perf_counter() - started)
            if left <= 0:
                break
            try:
                await asyncio.wait_for(stop.wait(), min(1.0, left))
            except TimeoutError:
                pass
            gen.resend_stuck()
            if on_snapshot is not None:
                on_snapshot(gen.snapshot())
    finally:
        ramp.cancel()
        await asyncio.gather(ramp, return_exceptions=True)
        before = gen.snapshot()  # where the clients stood, before they leave
        await gen.close_all()
    final = gen.snapshot()
    final["depths"], final["settled"] = before["depths"], before["settled"]
    return final, gen.new_tokens


def raise_open_files(wanted: int) -> int:
    """Raise this process's soft limit of open files towards ``wanted`` (at most the
    hard limit), so thousands of sockets fit; return the soft limit now in force."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        new = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
        soft = new
    return int(soft)


def _new_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def _worker_main(cfg: LoadConfig, worker: int, procs: int, pipe: Pipe) -> None:
    """A worker process: run its clients, send snapshots up ``pipe``, stop on ``"stop"``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop

    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        def asked() -> None:  # the parent wrote "stop"; stop watching the pipe
            loop.remove_reader(pipe.fileno())
            stop.set()

        loop.add_reader(pipe.fileno(), asked)
        final, tokens = await run_load_async(
            cfg, on_snapshot=pipe.send, stop=stop, worker=worker, procs=procs
        )
        final["final"] = True
        final["tokens"] = tokens
        pipe.send(final)

    with asyncio.Runner(loop_factory=_new_loop) as runner:
        runner.run(run())


class _Stopper:
    """Set by SIGINT / SIGTERM."""

    def __init__(self) -> None:
        self.stopped = False

    def __call__(self, *_: object) -> None:
        self.stopped = True


def run_load(
    cfg: LoadConfig, on_snapshot: Callable[[dict[str, Any]], None] | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """Run the load (``cfg.procs`` processes) until ``cfg.duration`` or SIGINT / SIGTERM.

    Calls ``on_snapshot`` with the merged snapshot about once a second.

    Returns:
        The final merged snapshot and the new characters' resume tokens.

    Raises:
        ValueError: as :meth:`LoadConfig.check`.
    """
    cfg.check()
    raise_open_files(cfg.n + 256)  # inherited by the workers
    stopper = _Stopper()
    old = {s: signal.signal(s, stopper) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        if cfg.procs == 1:
            return _run_here(cfg, stopper, on_snapshot)
        return _run_workers(cfg, stopper, on_snapshot)
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


def _run_here(
    cfg: LoadConfig, stopper: _Stopper, on_snapshot: Callable[[dict[str, Any]], None] | None
) -> tuple[dict[str, Any], dict[str, str]]:
    async def run() -> tuple[dict[str, Any], dict[str, str]]:
        stop = asyncio.Event()

        def tick(snap: dict[str, Any]) -> None:
            if stopper.stopped:
                stop.set()
            if on_snapshot is not None:
                on_snapshot(snap)

        loop = asyncio.get_running_loop()
        for s in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(s, stop.set)
        return await run_load_async(cfg, on_snapshot=tick, stop=stop)

    with asyncio.Runner(loop_factory=_new_loop) as runner:
        return runner.run(run())


def _run_workers(
    cfg: LoadConfig, stopper: _Stopper, on_snapshot: Callable[[dict[str, Any]], None] | None
) -> tuple[dict[str, Any], dict[str, str]]:
    ctx = multiprocessing.get_context("spawn")
    pipes: list[Pipe] = []
    workers = []
    for w in range(cfg.procs):
        here, there = ctx.Pipe()
        p = ctx.Process(target=_worker_main, args=(cfg, w, cfg.procs, there), daemon=True)
        p.start()
        there.close()
        pipes.append(here)
        workers.append(p)
    latest: list[dict[str, Any] | None] = [None] * cfg.procs
    finals: list[dict[str, Any] | None] = [None] * cfg.procs
    started = time.monotonic()
    asked = False
    last_emit = 0.0
    while any(f is None for f in finals):
        if not asked and (stopper.stopped or time.monotonic() - started > cfg.duration + 1.0):
            for pipe in pipes:
                pipe.send("stop")
            asked = True
        for w, pipe in enumerate(pipes):
            try:
                while pipe.poll():
                    snap = pipe.recv()
                    if snap.get("final"):
                        finals[w] = snap
                    latest[w] = snap
            except (EOFError, OSError):
                if finals[w] is None:  # the worker died: keep what it last said
                    finals[w] = latest[w] or {"t": time.time(), "tokens": {}}
        now = time.monotonic()
        if on_snapshot is not None and now - last_emit >= 1.0 and all(latest):
            last_emit = now
            merged = merge(s for s in latest if s is not None)
            merged["cpu_s"] += time.process_time()
            on_snapshot(merged)
        time.sleep(0.05)
    for p in workers:
        p.join(5)
    tokens: dict[str, str] = {}
    for f in finals:
        if f is not None:
            tokens.update(f.pop("tokens", {}))
    final = merge(f for f in finals if f is not None and "joins" in f)
    final["cpu_s"] += time.process_time()
    return final, tokens


# --- reports and the command line ----------------------------------------------------------


def live_line(now: Mapping[str, Any], last: Mapping[str, Any] | None, n: int) -> str:
    """One status line: connected, messages/s and latency p50/p99 over the last interval."""
    d = diff(now, last) if last is not None else None
    secs = d["seconds"] if d is not None and d["seconds"] > 0 else None
    rate = f"{d['frames'] / secs:,.0f}" if d is not None and secs else "-"
    lat = d["lat"] if d is not None else now["lat"]
    p50, p99 = percentile(lat, 0.5), percentile(lat, 0.99)

    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v:.0f}"

    return (
        f"connected {now['connected']:,}/{n:,}  msgs/s {rate}  cmd->effect p50 {ms(p50)} "
        f"p99 {ms(p99)} ms  rejects {sum(now['rejects'].values()):,}  "
        f"errors {sum(now['errors'].values()):,}"
    )


def format_report(final: Mapping[str, Any], first: Mapping[str, Any] | None, n: int) -> str:
    """The run's report as a readable table (``first``: a snapshot to measure rates from)."""
    d = diff(final, first) if first is not None else dict(final, seconds=0.0)
    secs = d["seconds"]
    welcomed = max(final["welcomed"], 1)

    def per_s(v: float) -> str:
        return f"{v / secs:,.1f}" if secs > 0 else "-"

    def counted(c: Mapping[str, int]) -> str:
        items = sorted(c.items(), key=lambda kv: -kv[1])
        return ", ".join(f"{k} {v:,}" for k, v in items) if items else "none"

    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v:.1f}"

    lat = final["lat"]
    lines = [
        (
            f"clients        {n:,} requested, {final['welcomed']:,} joined, "
            f"{final['closed']:,} closed by the server"
        ),
        f"joins refused  {counted(final['refused'])}",
        f"connect fails  {counted(final['connect_failures'])}",
        f"commands       {final['cmds']:,} sent, {final['acks']:,} acknowledged",
        f"rejects        {counted(final['rejects'])}",
        f"errors         {counted(final['errors'])}",
        (
            f"received       {final['frames']:,} frames ({final['snaps']:,} snaps, "
            f"{final['deltas']:,} deltas), {final['bytes']:,} B"
        ),
        (
            f"per client/s   {per_s(d['frames'] / welcomed)} frames, "
            f"{per_s(d['bytes'] / welcomed)} B  (over the last {secs:.0f} s)"
        ),
        (
            f"cmd->effect    p50 {ms(percentile(lat, 0.5))} ms, "
            f"p99 {ms(percentile(lat, 0.99))} ms, max {ms(_max(lat))} ms"
        ),
        f"depths         {counted(final['depths'])}",
        f"own CPU        {final['cpu_s']:.1f} s in {final['procs']} process(es)",
    ]
    return "\n".join(lines)


def _max(lat: Mapping[str, int]) -> float | None:
    return max((int(k) + 0.5 for k in lat), default=None)


def load_tokens(url: str) -> dict[str, str]:
    """The saved resume tokens for the server at ``url`` (as :mod:`client.connection` keeps them)."""
    servers = _read_tokens(token_path()).get(_server_key(url))
    if not isinstance(servers, dict):
        return {}
    return {k: v for k, v in servers.items() if isinstance(k, str) and isinstance(v, str)}


def save_tokens(url: str, tokens: Mapping[str, str]) -> bool:
    """Add ``tokens`` to the token file in one write (mode 0600); False if it failed."""
    if not tokens:
        return True
    path = token_path()
    data = _read_tokens(path)
    key = _server_key(url)
    servers = data.get(key)
    servers = dict(servers) if isinstance(servers, dict) else {}
    servers.update(tokens)
    data[key] = servers
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        return False
    return True


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The load generator's own options (shared with ``underhall bots --lean``)."""
    p.add_argument(
        "--rate", type=float, default=100.0, help="joins per second, the ramp (default %(default)s)"
    )
    p.add_argument("--procs", type=int, default=1, help="worker processes (default %(default)s)")
    p.add_argument(
        "--depths",
        type=int,
        default=1,
        help="spread clients over depths 1..D by the stairs (default 1)",
    )
    p.add_argument(
        "--walk-every",
        type=int,
        default=1,
        help="with --depths > 1, one client in K walks once arrived (default 1)",
    )
    p.add_argument(
        "--jsonl", action="store_true", help="print a merged snapshot as one JSON line every second"
    )
    p.add_argument(
        "--forget",
        action="store_true",
        help="neither read nor save resume tokens (new characters every run)",
    )


def run_cli(args: argparse.Namespace) -> int:
    """Run from parsed arguments (``url``, ``n``, ``duration``, ``seed``, ``prefix``,
    ``json`` and :func:`add_arguments`'s); print the report; return the exit status:
    0 if some client joined and no ``error``, undecodable frame or close by the
    server happened (rejects and refused joins are load, not errors), else 1."""
    duration = float("inf") if args.duration == 0 else args.duration
    cfg = LoadConfig(
        url=args.url,
        n=args.n,
        duration=duration,
        rate=args.rate,
        procs=args.procs,
        prefix=args.prefix,
        seed=args.seed,
        depths=args.depths,
        walk_every=args.walk_every,
    )
    try:
        cfg.check()
    except ValueError as exc:
        print(f"loadgen: {exc}", file=sys.stderr)
        return 2
    if not args.forget:
        cfg.tokens = load_tokens(cfg.url)
    live = sys.stderr.isatty() and not args.jsonl
    first: list[dict[str, Any]] = []
    last: list[dict[str, Any]] = []

    def on_snapshot(snap: dict[str, Any]) -> None:
        if not first:
            first.append(snap)
        if args.jsonl:
            print(json.dumps(snap, separators=(",", ":")), flush=True)
        if live:
            line = live_line(snap, last[0] if last else None, cfg.n)
            print(f"\r\x1b[K{line}", end="", file=sys.stderr, flush=True)
        last[:] = [snap]

    final, tokens = run_load(cfg, on_snapshot)
    if live:
        print(file=sys.stderr)
    if not args.forget:
        save_tokens(cfg.url, tokens)
    final["requested"] = cfg.n
    if args.json or args.jsonl:
        final["final"] = True
        print(json.dumps(final, separators=(",", ":")), flush=True)
    else:
        print(format_report(final, first[0] if first else None, cfg.n), flush=True)
    ok = final["welcomed"] > 0 and not final["errors"]
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    """``python -m client.loadgen``: see the module docstring."""
    p = argparse.ArgumentParser(
        prog="python -m client.loadgen",
        description="Drive many lean walking clients against a server.",
    )
    p.add_argument("--url", required=True, help="server, e.g. ws://127.0.0.1:8765")
    p.add_argument("-n", type=int, default=100, help="clients (default %(default)s)")
    p.add_argument(
        "--duration",
        type=float,
        default=30.0,
        help="seconds; 0 runs until interrupted (default 30)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the clients' choices")
    p.add_argument("--prefix", default="lean", help="names are PREFIX0, PREFIX1, ...")
    p.add_argument("--json", action="store_true", help="print the final report as JSON")
    add_arguments(p)
    return run_cli(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
