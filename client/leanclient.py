"""One lean walking client of :mod:`client.loadgen` (see there for what it does).

An :class:`asyncio.Protocol` on a raw transport: websockets' sans-I/O
:class:`~websockets.client.ClientProtocol` does the opening handshake,
control frames (ping, close) and anything unusual. Once the connection is
open, this client cuts the received bytes into frames itself: whole unmasked
binary frames are read here, every other frame is handed to websockets
whole, and a frame not yet complete waits here for the rest (websockets'
parser, given part of a frame, holds no bytes once it has read the header,
so its empty buffer cannot say that the next bytes start a frame).
Commands are framed by the generator
(:meth:`client.loadgen.Generator.frame`). Decisions are a random walk that
keeps its direction while the remembered map shows a walkable cell ahead, or
(on the way to a target depth) python-tcod paths to known down stairs, else
to the nearest unexplored cell.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol, cast

import numpy as np
from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.protocol import OPEN
from websockets.uri import WebSocketURI

from client.botpolicy import frontier_cells, path_to_nearest, walkable_cells
from client.loadstats import LAT_BUCKETS, Counters
from protocol.messages import DELTA_KEY, STEP_DIRECTIONS, unpack_rejects
from protocol.version import PROTOCOL_VERSION


class Setup(Protocol):
    """What a client reads of its run's configuration (:class:`client.loadgen.LoadConfig`)."""

    @property
    def prefix(self) -> str: ...

    @property
    def classes(self) -> tuple[str, ...]: ...

    @property
    def depths(self) -> int: ...

    @property
    def walk_every(self) -> int: ...

    @property
    def tokens(self) -> dict[str, str]: ...


class Hub(Protocol):
    """What a client uses of the clients' process (:class:`client.loadgen.Generator`)."""

    @property
    def cfg(self) -> Setup: ...

    @property
    def uri(self) -> WebSocketURI: ...

    @property
    def passable(self) -> list[bool]: ...

    @property
    def passable_np(self) -> np.ndarray[Any, np.dtype[np.bool_]]: ...

    @property
    def counters(self) -> Counters: ...

    @property
    def new_tokens(self) -> dict[str, str]: ...

    @property
    def rng(self) -> random.Random: ...

    @property
    def np_rng(self) -> np.random.Generator: ...

    @property
    def loop(self) -> asyncio.AbstractEventLoop: ...

    @property
    def pack(self) -> Callable[[Any], bytes]: ...

    @property
    def unpack(self) -> Callable[[bytes], Any]: ...

    def frame(self, payload: bytes) -> bytes: ...


__all__ = ["ACK_TIMEOUT_S", "DIRECTIONS", "DOOR_CLOSED", "LAVA", "UNKNOWN", "LeanClient"]


ACK_TIMEOUT_S = 2.0
"""Seconds a client waits for its last command to be answered before sending another."""

DIRECTIONS: tuple[tuple[int, int], ...] = (
    (0, -1), (1, -1), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1),
)  # fmt: skip

KEEP_DIRECTION = 0.8
"""Chance that a walker keeps its direction while the cell ahead is walkable."""

STAIRS_DOWN = 12
DOOR_CLOSED = 3
LAVA = 6
UNKNOWN = 255

_ACK, _REJ, _ME, _TILES, _ST, _MV, _UPD = (
    DELTA_KEY[k] for k in ("ack", "rej", "me", "tiles", "st", "mv", "upd")
)  # the keys a client reads from a delta (protocol 11)


def frame_at(data: bytes, i: int) -> tuple[int, int] | None:
    """The websocket frame that starts at ``data[i]`` (RFC 6455 section 5.2),
    if all of it is there: ``(header bytes, payload bytes)``; the payload
    length is -1 for a masked frame (a server never sends one). None when
    the header or the payload is not all in ``data`` yet."""
    n = len(data)
    if i + 2 > n:
        return None
    length, head = data[i + 1], 2
    if length == 126:
        if i + 4 > n:
            return None
        length, head = int.from_bytes(data[i + 2 : i + 4], "big"), 4
    elif length == 127:
        if i + 10 > n:
            return None
        length, head = int.from_bytes(data[i + 2 : i + 10], "big"), 10
    elif length > 127:
        return head, -1
    if i + head + length > n:
        return None
    return head, length


class LeanClient(asyncio.Protocol):
    """One websocket client on a raw transport; see the module docstring."""

    def __init__(self, gen: Hub, index: int) -> None:
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
        self.reasons: list[Any] = []
        """``welcome.reasons``: refusal reasons by code (protocol 6)."""
        self.depth = 0
        self.x = self.y = 0
        self.speed = 1
        self.w = self.h = 0
        self.map = bytearray()
        self.passable = gen.passable
        self.seq = 0
        self.last_seq = -1
        self.actor_id = -1
        """The own actor's id, from ``welcome``."""
        self.ack = -1
        """The last acknowledged ``seq``: a ``snap`` gives it whole, a delta
        as the step from the one before (protocol 10)."""
        self.pending: deque[tuple[int, float]] = deque()
        self.sent_t = 0.0
        self.answered = True
        self.timer: asyncio.TimerHandle | None = None
        self.d = DIRECTIONS[index % 8]
        self.path: list[tuple[int, int]] = []
        self.parts: list[bytes] = []
        self.framing = False
        """Whether this client cuts the received bytes into frames (from the
        first bytes after the handshake, when websockets holds none)."""
        self.rest = b""
        """The start of a frame not yet complete (while :attr:`framing`)."""
        self.connect_t = 0.0
        """``time.perf_counter()`` when the TCP connect started (join latency's origin)."""
        self.open_t: float | None = None
        """``time.perf_counter()`` when the TCP connection was made (None before)."""
        self.upgraded_t: float | None = None
        """``time.perf_counter()`` when the opening handshake's answer arrived."""
        self.welcome_t: float | None = None
        """``time.perf_counter()`` when ``welcome`` arrived (None before)."""
        self.snap_t: float | None = None
        """``time.perf_counter()`` when the first ``snap`` arrived (None before)."""

    # transport callbacks

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is no subclass
        self.open_t = time.perf_counter()
        self.gen.counters.connected += 1
        self.ws.send_request(self.ws.connect())
        self._flush()

    def data_received(self, data: bytes) -> None:
        if not self.framing:
            ws = self.ws
            if ws.state is not OPEN or ws.reader.buffer:
                self._to_websockets(data)
                return
            # The handshake is done and websockets holds nothing of a frame
            # (the server sends none before this client's hello, which
            # follows the handshake): from here on the frames are cut here.
            self.framing = True
        if self.rest:
            data = self.rest + data
        done = self._frames(data)
        self.rest = data[done:]
        self._flush()

    def _to_websockets(self, data: bytes) -> None:
        """Let websockets parse ``data`` and act on the events it yields."""
        ws, parts = self.ws, self.parts
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
                self.upgraded_t = time.perf_counter()
                if ws.handshake_exc is not None:
                    self.answered_join = True
                    self.gen.counters.connect_failures[f"handshake: {ws.handshake_exc}"] += 1
                else:
                    self._hello()
        self._flush()

    def _frames(self, data: bytes) -> int:
        """Read the whole frames at the start of ``data``: each final unmasked
        binary one goes to :meth:`_on_message`, any other to websockets
        whole. Return the bytes used; the rest is the start of a frame."""
        n, i = len(data), 0
        while (found := frame_at(data, i)) is not None:
            head, length = found
            if length < 0:  # masked: a protocol error websockets reports
                self._to_websockets(data[i:])
                return n
            end = i + head + length
            if data[i] == 0x82:  # FIN + binary, the server's every message
                self._on_message(data[i + head : end])
            else:  # ping, close, a text or fragmented frame: websockets' business
                self._to_websockets(data[i:end])
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
            t = msg.get("t", "delta")  # a delta carries no "t" (protocol 10)
        except Exception:  # noqa: BLE001 -- any undecodable frame is counted, not fatal
            counters.errors["undecodable"] += 1
            return
        if t == "delta":
            counters.deltas += 1
            self._on_view(msg, snap=False)
        elif t == "snap":
            counters.snaps += 1
            if self.snap_t is None:
                self.snap_t = time.perf_counter()
                counters.joined(self.connect_t, self.snap_t, snap=True)
            self._on_view(msg, snap=True)
        elif t == "reject":  # protocol 2; protocol 3 sends refusals in the frame's rej
            self._refused(msg.get("seq"), str(msg.get("reason", "?")))
        elif t == "welcome":
            self.playing = self.answered_join = True
            counters.welcomed += 1
            self.welcome_t = time.perf_counter()
            counters.joined(self.connect_t, self.welcome_t, snap=False)
            self.tick_rate = int(msg.get("tick_rate", 10))
            ident = msg.get("id")
            self.actor_id = ident if type(ident) is int else -1
            reasons = msg.get("reasons")
            self.reasons = reasons if isinstance(reasons, list) else []
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

    def _on_view(self, msg: dict[Any, Any], *, snap: bool) -> None:
        ack = msg.get("ack" if snap else _ACK)  # a delta's keys are numbers (protocol 11)
        if type(ack) is int:
            if snap:
                self.ack = ack
            else:
                self.ack += ack  # the step from the last one (protocol 10)
        rej = msg.get("rej" if snap else _REJ)
        if rej:  # [ack - seq, code, ...], before the ack of the same frame
            for seq, reason in unpack_rejects(rej, self.reasons, self.ack):
                self._refused(seq, reason)
        me = msg.get("me" if snap else _ME)
        if snap:
            self.depth = msg["depth"]
            self.w, self.h = msg["w"], msg["h"]
            self.map = bytearray(msg["map"])
            self.path = []
        else:
            tiles = msg.get(_TILES)
            if tiles:
                m, w = self.map, self.w
                for k in range(0, len(tiles) - 2, 3):
                    m[tiles[k + 1] * w + tiles[k]] = tiles[k + 2]
            self._own_cell(msg)
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
        if ack is not None and self.pending and self.pending[0][0] <= self.ack:
            self._settle(self.ack)
        if snap and self.answered and not self.dead:
            self._schedule(self.gen.rng.random() / self.tick_rate)

    def _own_cell(self, msg: dict[Any, Any]) -> None:
        """Follow the own actor record of a delta to this client's cell: a
        delta's ``me`` has no ``x``, ``y`` (protocol 10). A one-cell step is
        in ``st`` (ids as gaps, ``gap × 8 + direction``), a longer move in
        ``mv`` (``[gap, x, y, ...]``), a move with other changes in ``upd``."""
        me = self.actor_id
        st = msg.get(_ST)
        if st:
            aid = 0
            for v in st:
                aid += v >> 3
                if aid >= me:
                    if aid == me:
                        dx, dy = STEP_DIRECTIONS[v & 7]
                        self.x += dx
                        self.y += dy
                        return
                    break
        mv = msg.get(_MV)
        if mv:
            aid = 0
            for k in range(0, len(mv) - 2, 3):
                aid += mv[k]
                if aid >= me:
                    if aid == me:
                        self.x, self.y = mv[k + 1], mv[k + 2]
                        return
                    break
        for row in msg.get(_UPD) or ():
            if row[0] == me:
                self.x, self.y = row[1], row[2]
                return

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
