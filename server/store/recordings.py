"""Recordings of games: every frame a player was written, kept for replays.

A recording is one player's game, from its ``welcome`` to its leave: each
frame the server wrote to that player's websocket, byte for byte, with the
world's tick and the time it was written (issue 45, item 2). A replay feeds
those frames to a client's model in order and draws what the player saw.

The file format (``.uhrec``) is a gzip stream written as consecutive gzip
members, one per flush, so that a file cut short by ``kill -9`` still reads
up to its last whole member. Uncompressed, it is a stream of msgpack values:

1. a header map: ``{"format": "underhall-recording", "v": 1, "protocol":
   int, "name": str, "started": float}`` (``started`` in Unix seconds,
   ``protocol`` the protocol version its frames are in);
2. one array per frame: ``[ms, tick, frame]``: milliseconds since
   ``started`` (int), the world's tick when it was written (int) and the
   frame's payload (bytes, as the client received it);
3. last, if the game ended while the server ran: ``{"ended": float}``.

:class:`Shelf` keeps the files in one directory; :class:`Recorder` takes
frames from the server's event loop and appends them from a thread of its
own every :data:`FLUSH_S` seconds, so a crash loses at most the last few
seconds. Imports nothing of the game: the caller hands it bytes.
"""

from __future__ import annotations

import os
import re
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]

FORMAT = "underhall-recording"
"""The header's ``format``."""
VERSION = 1
"""The header's ``v``: the version of this file format."""
SUFFIX = ".uhrec"
FLUSH_S = 2.0
"""Seconds between two appends of the frames written since: at most this
much of a game (and the append's own time) is lost to a crash."""
MAX_MB = 1024
"""Default cap on all recordings' size, in MB (10^6 bytes): the oldest
finished ones go first (:meth:`Shelf.sweep`)."""
MAX_DAYS = 30.0
"""Default age in days after which a finished recording is deleted."""
SWEEP_S = 3600.0
"""Seconds between two sweeps of a running recorder."""
LEVEL = 6
"""zlib level of each member."""

_ID = re.compile(r"^(\d{8}T\d{6}Z)-([A-Za-z0-9_-]{1,32})-(\d{1,9})$")
"""A recording id: ``<UTC start>-<name>-<serial>``; nothing else is opened."""


class RecordingError(Exception):
    """A recording is unknown or unreadable; the message says which, in one line."""


@dataclass(frozen=True, slots=True)
class RecordingInfo:
    """One recording on a shelf.

    Attributes:
        id: ``<UTC start>-<name>-<serial>`` (``20261128T234500Z-ada-1``).
        name: The player's name.
        started: When its game began, Unix seconds (from the id: to the second).
        size: The file's size in bytes (compressed).
        modified: When it was last appended to, Unix seconds.
    """

    id: str
    name: str
    started: float
    size: int
    modified: float


@dataclass(frozen=True, slots=True)
class Recording:
    """A recording read back (:func:`read_recording`).

    Attributes:
        name: The player's name.
        protocol: The protocol version of its frames.
        started: When its game began, Unix seconds.
        frames: ``(ms since started, tick, payload)`` in the order written.
        ended: When the game ended, Unix seconds, or None: still going, or
            cut short (the server died, or the file was copied mid-game).
        complete: False when the file ended inside a member (a crash in
            the middle of an append): what came before is still here.
    """

    name: str
    protocol: int
    started: float
    frames: list[tuple[int, int, bytes]]
    ended: float | None
    complete: bool


def recording_id(name: str, started: float, serial: int) -> str:
    """The id of ``name``'s recording begun at ``started`` (Unix seconds).

    Raises:
        ValueError: ``name`` is not 1-32 letters, digits, ``_`` or ``-``.
    """
    stamp = datetime.fromtimestamp(started, UTC).strftime("%Y%m%dT%H%M%SZ")
    rid = f"{stamp}-{name}-{serial}"
    if not _ID.match(rid):
        raise ValueError(f"not a name a recording can have: {name!r}")
    return rid


def _started_of(rid: str) -> float:
    m = _ID.match(rid)
    if m is None:
        raise RecordingError(f"not a recording id: {rid!r}")
    return datetime.strptime(m.group(1), "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC).timestamp()


def pack_header(name: str, protocol: int, started: float) -> bytes:
    """A recording's first value (see the module's docstring)."""
    header = {"format": FORMAT, "v": VERSION, "protocol": protocol, "name": name}
    header["started"] = started
    return bytes(msgpack.packb(header, use_bin_type=True))


def compress(data: bytes) -> bytes:
    """``data`` as one gzip member."""
    c = zlib.compressobj(LEVEL, zlib.DEFLATED, 31)
    return c.compress(data) + c.flush()


def _members(data: bytes) -> tuple[bytes, bool]:
    """The uncompressed bytes of consecutive gzip members, and whether the
    last one was whole (a crash may cut the final member short)."""
    out: list[bytes] = []
    rest = data
    while rest:
        d = zlib.decompressobj(31)
        try:
            out.append(d.decompress(rest))
        except zlib.error:
            return b"".join(out), False
        if not d.eof:
            return b"".join(out), False
        rest = d.unused_data
    return b"".join(out), True


def read_recording(data: bytes) -> Recording:
    """Read a recording file's bytes.

    Raises:
        RecordingError: not a recording (no header), or of a newer format.
    """
    raw, whole = _members(data)
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
    unpacker.feed(raw)
    values: Iterator[Any] = iter(unpacker)
    try:
        header = next(values)
    except (StopIteration, ValueError, msgpack.ExtraData) as exc:
        raise RecordingError("not an Underhall recording: no header") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise RecordingError("not an Underhall recording")
    if header.get("v") != VERSION:
        raise RecordingError(f"recording format {header.get('v')!r}: this version reads {VERSION}")
    frames: list[tuple[int, int, bytes]] = []
    ended: float | None = None
    try:
        for value in values:
            if isinstance(value, list) and len(value) == 3:
                frames.append((int(value[0]), int(value[1]), bytes(value[2])))
            elif isinstance(value, dict) and "ended" in value:
                ended = float(value["ended"])
    except (ValueError, TypeError):
        whole = False
    return Recording(
        name=str(header.get("name", "")),
        protocol=int(header.get("protocol", 0)),
        started=float(header.get("started", 0.0)),
        frames=frames,
        ended=ended,
        complete=whole,
    )


class Shelf:
    """The recordings of one server, as files in one directory.

    Args:
        path: The directory (made on the first append).

    Thread use: :meth:`append` from the recorder's thread, the rest from any.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def file(self, rid: str) -> Path:
        """The file of recording ``rid``.

        Raises:
            RecordingError: ``rid`` is not a recording id (no path can be
                named through it).
        """
        _started_of(rid)
        return self.path / f"{rid}{SUFFIX}"

    def append(self, rid: str, data: bytes) -> None:
        """Add ``data`` (whole gzip members) to the end of ``rid``'s file.

        Raises:
            OSError: the directory or the file cannot be written.
        """
        self.path.mkdir(parents=True, exist_ok=True)
        with open(self.file(rid), "ab") as f:
            f.write(data)

    def read(self, rid: str) -> bytes:
        """The whole file of ``rid``.

        Raises:
            RecordingError: no such recording.
        """
        try:
            return self.file(rid).read_bytes()
        except FileNotFoundError:
            raise RecordingError(f"no recording {rid}") from None

    def recordings(self, name: str | None = None) -> list[RecordingInfo]:
        """The recordings here (of ``name`` only, if given), newest first."""
        found: list[RecordingInfo] = []
        try:
            entries = list(os.scandir(self.path))
        except FileNotFoundError:
            return []
        for entry in entries:
            if not entry.name.endswith(SUFFIX):
                continue
            m = _ID.match(entry.name[: -len(SUFFIX)])
            if m is None or (name is not None and m.group(2).lower() != name.lower()):
                continue
            try:
                st = entry.stat()
            except FileNotFoundError:
                continue
            rid = m.group(0)
            found.append(RecordingInfo(rid, m.group(2), _started_of(rid), st.st_size, st.st_mtime))
        found.sort(key=lambda r: (r.started, r.modified, r.id), reverse=True)
        return found

    def find(self, what: str) -> RecordingInfo:
        """The recording with id ``what``, else the newest of the player named ``what``.

        Raises:
            RecordingError: none.
        """
        every = self.recordings()
        for info in every:
            if info.id == what:
                return info
        for info in every:
            if info.name.lower() == what.lower():
                return info
        raise RecordingError(f"no recording of {what!r} in {self.path}")

    def sweep(
        self,
        *,
        max_bytes: int,
        max_age_s: float,
        now: float,
        keep: frozenset[str] = frozenset(),
    ) -> list[str]:
        """Delete recordings older than ``max_age_s`` (by their last append),
        then the oldest until all together take at most ``max_bytes``; never
        one in ``keep`` (games going on). Return the ids deleted."""
        gone: list[str] = []
        every = sorted(self.recordings(), key=lambda r: (r.modified, r.id))
        total = sum(r.size for r in every)
        for info in every:
            if info.id in keep:
                continue
            if now - info.modified > max_age_s or total > max_bytes:
                try:
                    self.file(info.id).unlink()
                except FileNotFoundError:
                    pass
                total -= info.size
                gone.append(info.id)
        return gone


@dataclass(slots=True)
class _Open:
    """A game being recorded."""

    rid: str
    started: float
    pending: list[Any] = field(default_factory=list)
    """msgpack values not yet appended (the header, frames, the end)."""


class Recorder:
    """Records every player's game on a :class:`Shelf`.

    The server's event loop calls :meth:`begin`, :meth:`frame` and
    :meth:`end`, which only append to lists; a thread of the recorder's own
    packs, compresses and appends what came since every ``flush_s`` seconds,
    and sweeps the shelf every :data:`SWEEP_S`.

    Args:
        shelf: Where the files go.
        protocol: The protocol version of the frames (in each header).
        flush_s: Seconds between two appends.
        max_bytes: The shelf's cap on all recordings (see :meth:`Shelf.sweep`).
        max_age_s: The age past which a finished recording goes.
    """

    def __init__(
        self,
        shelf: Shelf,
        protocol: int,
        *,
        flush_s: float = FLUSH_S,
        max_bytes: int = MAX_MB * 10**6,
        max_age_s: float = MAX_DAYS * 86400.0,
    ) -> None:
        self.shelf = shelf
        self.protocol = protocol
        self.flush_s = flush_s
        self.max_bytes = max_bytes
        self.max_age_s = max_age_s
        self.errors = 0
        """Appends that failed (the disk full, say): their frames are lost,
        the game goes on."""
        self.written = 0
        """Compressed bytes appended since start."""
        self._games: dict[int, _Open] = {}
        """The games going on, by key."""
        self._ended: list[_Open] = []
        """Games ended since the last flush (their last values to append)."""
        self._lock = threading.Lock()
        self._serial = 0
        self._wake = threading.Event()
        self._stop = False
        self._next_sweep = 0.0
        self._thread = threading.Thread(target=self._run, name="recorder", daemon=True)
        self._thread.start()

    # ------------------------------------------------------ the event loop's side

    def begin(self, key: int, name: str, welcome: bytes, tick: int) -> str:
        """A game begins: ``key`` (the seat's actor id) was written ``welcome``
        (with no token in it: a recording may be handed to anyone) at
        ``tick``. A game already recorded under ``key`` ends first.

        Returns:
            The new recording's id.
        """
        self.end(key)
        now = time.time()
        with self._lock:
            self._serial += 1
            game = _Open(recording_id(name, now, self._serial), now)
            game.pending.append(pack_header(name, self.protocol, now))
            game.pending.append([0, tick, welcome])
            self._games[key] = game
        return game.rid

    def frame(self, key: int, tick: int, data: bytes) -> None:
        """``data`` was written to ``key``'s player at ``tick`` (nothing
        happens for a key with no game begun)."""
        game = self._games.get(key)
        if game is None:
            return
        ms = int((time.time() - game.started) * 1000)
        with self._lock:
            game.pending.append([ms, tick, data])

    def end(self, key: int) -> None:
        """``key``'s game ended (the player left or was disconnected)."""
        with self._lock:
            game = self._games.pop(key, None)
            if game is not None:
                game.pending.append({"ended": time.time()})
                self._ended.append(game)

    def active(self) -> frozenset[str]:
        """The ids of the games being recorded."""
        with self._lock:
            return frozenset(g.rid for g in self._games.values())

    def close(self) -> None:
        """End every game, append what is left and stop the thread."""
        for key in list(self._games):
            self.end(key)
        self._stop = True
        self._wake.set()
        self._thread.join(30)

    # ------------------------------------------------------------ the thread

    def flush(self) -> None:
        """Append every game's pending values now (the thread's work; also
        callable from outside, as the tests do)."""
        taken: list[tuple[str, list[Any]]] = []
        with self._lock:
            for game in [*self._games.values(), *self._ended]:
                if game.pending:
                    taken.append((game.rid, game.pending))
                    game.pending = []
            self._ended.clear()
        for rid, values in taken:
            data = b"".join(
                v if isinstance(v, bytes) else msgpack.packb(v, use_bin_type=True) for v in values
            )
            member = compress(data)
            try:
                self.shelf.append(rid, member)
            except OSError:
                self.errors += 1
            else:
                self.written += len(member)

    def sweep(self) -> list[str]:
        """Apply the caps now (:meth:`Shelf.sweep`), sparing the games going on."""
        try:
            return self.shelf.sweep(
                max_bytes=self.max_bytes,
                max_age_s=self.max_age_s,
                now=time.time(),
                keep=self.active(),
            )
        except OSError:
            self.errors += 1
            return []

    def _run(self) -> None:
        while True:
            self._wake.wait(self.flush_s)
            self._wake.clear()
            self.flush()
            if self._stop:
                self.flush()
                return
            now = time.monotonic()
            if now >= self._next_sweep:
                self._next_sweep = now + SWEEP_S
                self.sweep()
