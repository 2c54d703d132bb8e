"""Recordings of games kept by a server: where they go, and the recorder.

Every player's game is recorded (issue 45, item 2): each frame the server
wrote to the player, with its tick and time, in the file format of
:mod:`protocol.recording`. :class:`Shelf` keeps the files in one directory;
:class:`Recorder` takes frames from the server's event loop and appends them
from a thread of its own every :data:`FLUSH_S` seconds, so a crash loses at
most the last few seconds. Holds no game rule: the caller hands it bytes.
"""

from __future__ import annotations

import os
import re
import secrets
import threading
import time
from collections.abc import Hashable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]

from protocol.recording import SUFFIX, RecordingError, compress, pack_header

FLUSH_S = 2.0
"""Seconds between two appends of the frames written since: at most this
much of a game (and the append's own time) is lost to a crash."""
MAX_MB = 1024
"""Default cap on all recordings' size, in MB (10^6 bytes): the oldest
finished ones go first (:meth:`Shelf.sweep`)."""
MAX_DAYS = 30.0
"""Default age in days after which a finished recording is deleted."""
SWEEP_S = 600.0
"""Seconds between two sweeps of a running recorder."""

_ID = re.compile(r"^(\d{8}T\d{6}Z)-([A-Za-z0-9_-]{1,32})-(\d{1,9})$")
"""A recording id: ``<UTC start>-<name>-<serial>``; nothing else is opened."""


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


@dataclass(frozen=True, slots=True)
class Caps:
    """How much of its recordings a shelf keeps (:meth:`Shelf.sweep`).

    Attributes:
        max_bytes: All recordings together, in bytes (the oldest finished go first).
        max_age_s: Seconds after its last append that a finished recording goes.
    """

    max_bytes: int = MAX_MB * 10**6
    max_age_s: float = MAX_DAYS * 86400.0


class Shelves:
    """Where a server's recordings are kept: :class:`Shelf` (files in a
    directory) or :class:`PgShelf` (rows of a PostgreSQL database). Both
    append a game's members as they come, list, read, replace and delete
    whole recordings; finding one and the caps' sweep are the same for both.

    Attributes:
        where: The directory or the database, for messages.
    """

    where: str

    def append(self, rid: str, data: bytes) -> None:
        """Add ``data`` (whole gzip members) to the end of recording ``rid``."""
        raise NotImplementedError

    def put(self, rid: str, data: bytes) -> None:
        """Write recording ``rid`` whole (an import), replacing one of that id."""
        raise NotImplementedError

    def read(self, rid: str) -> bytes:
        """The whole of recording ``rid``.

        Raises:
            RecordingError: no such recording.
        """
        raise NotImplementedError

    def remove(self, rid: str) -> None:
        """Delete recording ``rid`` (nothing if there is none)."""
        raise NotImplementedError

    def recordings(self, name: str | None = None) -> list[RecordingInfo]:
        """The recordings here (of ``name`` only, if given), newest first."""
        raise NotImplementedError

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
        raise RecordingError(f"no recording of {what!r} in {self.where}")

    def sweep(self, caps: Caps, now: float, keep: frozenset[str] = frozenset()) -> list[str]:
        """Delete recordings older than ``caps.max_age_s`` (by their last
        append, against ``now`` in Unix seconds), then the oldest until all
        together take at most ``caps.max_bytes``; never one in ``keep``
        (games going on). Return the ids deleted."""
        max_age_s, max_bytes = caps.max_age_s, caps.max_bytes
        gone: list[str] = []
        every = sorted(self.recordings(), key=lambda r: (r.modified, r.id))
        total = sum(r.size for r in every)
        for info in every:
            if info.id in keep:
                continue
            if now - info.modified > max_age_s or total > max_bytes:
                self.remove(info.id)
                total -= info.size
                gone.append(info.id)
        return gone


class Shelf(Shelves):
    """The recordings of one server, as files in one directory.

    Args:
        path: The directory (made on the first append).

    Thread use: :meth:`append` from the recorder's thread, the rest from any.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.where = str(self.path)

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
        target = self.file(rid)
        if not target.exists():  # a new game's file appears whole, header and all:
            self.put(rid, data)  # a reader never finds it empty (one writer a file)
            return
        with open(target, "ab") as f:
            f.write(data)

    def put(self, rid: str, data: bytes) -> None:
        """Write recording ``rid`` whole (an import), replacing one of that id.

        Raises:
            RecordingError: ``rid`` is not a recording id.
            OSError: it cannot be written.
        """
        self.path.mkdir(parents=True, exist_ok=True)
        target = self.file(rid)
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, target)

    def read(self, rid: str) -> bytes:
        """The whole file of ``rid``.

        Raises:
            RecordingError: no such recording.
        """
        try:
            return self.file(rid).read_bytes()
        except FileNotFoundError:
            raise RecordingError(f"no recording {rid}") from None

    def remove(self, rid: str) -> None:
        self.file(rid).unlink(missing_ok=True)

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


class PgShelf(Shelves):
    """The recordings of one server as rows of a PostgreSQL database (the
    world's, for a ``serve`` on PostgreSQL): table ``recordings`` (``id``,
    ``name``, ``started`` and ``modified`` in Unix seconds, ``data``), made
    on first use. An append adds its members to the row's ``data``.

    Args:
        url: ``postgresql://USER@HOST/DB``.

    Raises:
        RecordingError: the database cannot be reached (and from every
            method, when a call fails: the message is one line).

    Thread use: one connection behind a lock, for the recorder's thread and
    the server's.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self.where = url.split("@")[-1]  # no user or password in messages
        self._lock = threading.Lock()
        self._conn: Any = None
        self._call(_CREATE)

    def _call(self, sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
        import psycopg

        with self._lock:
            for attempt in (0, 1):
                try:
                    if self._conn is None or self._conn.closed:
                        self._conn = psycopg.connect(self.url, autocommit=True, connect_timeout=5)
                    cur = self._conn.execute(sql, args)
                    return list(cur.fetchall()) if cur.description is not None else []
                except psycopg.errors.UndefinedTable as exc:
                    if attempt:  # dropped since it was made: made again
                        raise RecordingError(f"recordings in {self.where}: {exc}") from exc
                    self._conn.execute(_CREATE)
                except psycopg.OperationalError as exc:
                    self._conn = None  # a broken connection: once more with a new one
                    if attempt:
                        raise RecordingError(f"recordings in {self.where}: {exc}") from exc
                except psycopg.Error as exc:
                    raise RecordingError(f"recordings in {self.where}: {exc}") from exc
        raise AssertionError("unreachable")

    def append(self, rid: str, data: bytes) -> None:
        name = _name_of(rid)
        self._call(
            "INSERT INTO recordings AS r VALUES (%s, %s, %s, %s, %s) "
            "ON CONFLICT (id) DO UPDATE SET data = r.data || EXCLUDED.data, "
            "modified = EXCLUDED.modified",
            (rid, name, _started_of(rid), time.time(), data),
        )

    def put(self, rid: str, data: bytes) -> None:
        self._call(
            "INSERT INTO recordings VALUES (%s, %s, %s, %s, %s) "
            "ON CONFLICT (id) DO UPDATE SET data = EXCLUDED.data, modified = EXCLUDED.modified",
            (rid, _name_of(rid), _started_of(rid), time.time(), data),
        )

    def read(self, rid: str) -> bytes:
        rows = self._call("SELECT data FROM recordings WHERE id = %s", (rid,))
        if not rows:
            raise RecordingError(f"no recording {rid}")
        return bytes(rows[0][0])

    def remove(self, rid: str) -> None:
        self._call("DELETE FROM recordings WHERE id = %s", (rid,))

    def recordings(self, name: str | None = None) -> list[RecordingInfo]:
        rows = self._call(
            "SELECT id, name, started, octet_length(data), modified FROM recordings "
            "WHERE %s::text IS NULL OR lower(name) = lower(%s) "
            "ORDER BY started DESC, modified DESC, id DESC",
            (name, name),
        )
        return [RecordingInfo(r[0], r[1], float(r[2]), int(r[3]), float(r[4])) for r in rows]

    def close(self) -> None:
        """Close the connection (a later call opens another)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


_CREATE = (
    "CREATE TABLE IF NOT EXISTS recordings (id text PRIMARY KEY, name text NOT NULL, "
    "started double precision NOT NULL, modified double precision NOT NULL, data bytea NOT NULL)"
)
"""The table of :class:`PgShelf`."""


def _name_of(rid: str) -> str:
    m = _ID.match(rid)
    if m is None:
        raise RecordingError(f"not a recording id: {rid!r}")
    return m.group(2)


def open_shelf(where: str | Path) -> Shelves:
    """The shelf at ``where``: a ``postgresql://`` URL, else a directory."""
    text = str(where)
    if text.startswith(("postgresql://", "postgres://")):
        return PgShelf(text)
    return Shelf(where)


@dataclass(slots=True)
class _Open:
    """A game being recorded."""

    rid: str
    started: float
    pending: list[Any] = field(default_factory=list)
    """msgpack values not yet appended (the header, frames, the end)."""


class Recorder:
    """Records every player's game on a shelf (:class:`Shelf` or :class:`PgShelf`).

    The server's event loop calls :meth:`begin`, :meth:`frame` and
    :meth:`end`, which only append to lists; a thread of the recorder's own
    packs, compresses and appends what came since every ``flush_s`` seconds,
    and sweeps the shelf every :data:`SWEEP_S`.

    Args:
        shelf: Where the files go.
        protocol: The protocol version of the frames (in each header).
        flush_s: Seconds between two appends.
        caps: What the shelf keeps (applied every :data:`SWEEP_S`).
    """

    def __init__(
        self,
        shelf: Shelves,
        protocol: int,
        *,
        flush_s: float = FLUSH_S,
        caps: Caps = Caps(),
    ) -> None:
        self.shelf = shelf
        self.protocol = protocol
        self.flush_s = flush_s
        self.caps = caps
        self.errors = 0
        """Appends that failed (the disk full, say): their frames are lost,
        the game goes on."""
        self.written = 0
        """Compressed bytes appended since start."""
        self._games: dict[Hashable, _Open] = {}
        """The games going on, by key."""
        self._ended: list[_Open] = []
        """Games ended since the last flush (their last values to append)."""
        self._lock = threading.Lock()
        self._serial = secrets.randbelow(10**8)
        """The last id's serial: from a random start, so that two gateways
        recording into one database do not name two games alike."""
        self._wake = threading.Event()
        self._stop = False
        self._next_sweep = 0.0
        self._thread = threading.Thread(target=self._run, name="recorder", daemon=True)
        self._thread.start()

    # ------------------------------------------------------ the event loop's side

    def begin(self, key: Hashable, name: str, welcome: bytes, tick: int) -> str:
        """A game begins: ``key`` (its connection) was written ``welcome``
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

    def frame(self, key: Hashable, tick: int, data: bytes) -> None:
        """``data`` was written to ``key``'s player at ``tick`` (nothing
        happens for a key with no game begun)."""
        game = self._games.get(key)
        if game is None:
            return
        ms = int((time.time() - game.started) * 1000)
        with self._lock:
            game.pending.append([ms, tick, data])

    def end(self, key: Hashable) -> None:
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
            except (OSError, RecordingError):
                self.errors += 1
            else:
                self.written += len(member)

    def sweep(self) -> list[str]:
        """Apply the caps now (:meth:`Shelf.sweep`), sparing the games going on."""
        try:
            return self.shelf.sweep(self.caps, time.time(), self.active())
        except (OSError, RecordingError):
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
