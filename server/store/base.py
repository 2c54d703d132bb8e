"""The interface every storage backend offers, and the SQL they share.

A store holds one world: its metadata (the seed), every player's character
and every visited level. Records are msgpack blobs (:func:`pack_record`) of
:meth:`server.sim.actors.Actor.to_record` and
:meth:`server.sim.world.World.level_record`; tokens are kept as SHA-256
hashes, never in the clear.

Thread use: a store may be used by the thread that opened it and by one
writer thread at once (:class:`server.store.writer.StoreWriter`). Each
backend keeps a reading and a writing connection, each behind its own lock,
so a long save never blocks a read.
"""

from __future__ import annotations

import hashlib
import hmac
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Any

import msgpack  # type: ignore[import-untyped]

from server.store.migrations import LATEST, MIGRATIONS, VERSION_TABLE, statements

PlayerRow = tuple[str, str, bytes, int]
"""``(name, token_hash, packed record, saved_tick)``."""
LevelRow = tuple[int, bytes, int]
"""``(depth, packed record, saved_tick)``."""


class StoreError(Exception):
    """The database cannot be opened or used: the message says which and why,
    in one line fit to show an operator."""


def hash_token(token: str) -> str:
    """Return the hex SHA-256 of ``token``."""
    return hashlib.sha256(token.encode()).hexdigest()


def pack_record(record: dict[str, Any]) -> bytes:
    """A record as stored: msgpack with binary strings kept binary."""
    return pack_value(record)


def pack_value(value: object) -> bytes:
    """Any plain value packed as :func:`pack_record` packs a record's parts."""
    return bytes(msgpack.packb(value, use_bin_type=True))


def map_pairs(packed: bytes) -> bytes:
    """The key-value pairs of a packed msgpack map, without its header (to
    be joined with others by :func:`join_maps`).

    Raises:
        ValueError: ``packed`` does not start with a map header.
    """
    first = packed[0]
    if 0x80 <= first <= 0x8F:  # fixmap
        return packed[1:]
    if first == 0xDE:  # map 16
        return packed[3:]
    if first == 0xDF:  # map 32
        return packed[5:]
    raise ValueError("not a packed msgpack map")


def join_maps(count: int, *pairs: bytes) -> bytes:
    """One packed msgpack map of ``count`` entries from the pairs of several
    (:func:`map_pairs`, or a packed key followed by a packed value): what
    :func:`pack_record` gives for the merged dict, whose parts may have been
    packed at different times and reused. Keys must not repeat."""
    if count < 16:
        header = bytes([0x80 | count])
    elif count < 0x10000:
        header = b"\xde" + count.to_bytes(2, "big")
    else:
        header = b"\xdf" + count.to_bytes(4, "big")
    return b"".join((header, *pairs))


def unpack_record(blob: bytes) -> dict[str, Any]:
    """Inverse of :func:`pack_record`.

    Raises:
        StoreError: The blob is not a msgpack map.
    """
    try:
        out = msgpack.unpackb(blob, raw=False, strict_map_key=False)
    except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError) as exc:
        raise StoreError(f"a stored record is not msgpack: {exc}") from exc
    if not isinstance(out, dict):
        raise StoreError("a stored record is not a map")
    return out


class Store(ABC):
    """A world's database. Open one with :func:`server.store.open_store`.

    Attributes:
        url: Where the database is (a file path or a ``postgresql://`` URL,
            without any password).
        backend: ``"sqlite"`` or ``"postgres"``.
    """

    url: str
    backend: str

    def __init__(self) -> None:
        self._read_lock = threading.Lock()
        self._write_lock = threading.Lock()

    # ----------------------------------------------------------- backend hooks

    @abstractmethod
    def _transaction(self, write: bool) -> AbstractContextManager[Any]:
        """Hold the reading or writing connection's lock and run a
        transaction on it; yield a cursor-like object with ``execute``,
        ``executemany`` and ``fetchall``/``fetchone``. Database errors leave it
        as :class:`StoreError`."""

    @abstractmethod
    def _sql(self, query: str) -> str:
        """``query`` written with ``?`` placeholders, in this driver's style."""

    @abstractmethod
    def close(self) -> None:
        """Close the connections and release the database's lock."""

    # ----------------------------------------------------------- schema

    def _migrate(self) -> None:
        """Apply every migration newer than the database's schema version.

        Raises:
            StoreError: The database has a newer schema than this code knows.
        """
        with self._transaction(True) as cur:
            cur.execute(VERSION_TABLE[self.backend])
        have = self.schema_version()
        if have > LATEST:
            raise StoreError(
                f"{self.url}: schema version {have} is newer than this "
                f"server knows ({LATEST}); upgrade underhall"
            )
        for migration in MIGRATIONS:
            if migration.version <= have:
                continue
            with self._transaction(True) as cur:
                for statement in statements(getattr(migration, self.backend)):
                    cur.execute(statement)
                cur.execute(
                    self._sql(
                        "INSERT INTO schema_version (version, about, applied_at) VALUES (?, ?, ?)"
                    ),
                    (migration.version, migration.about, datetime.now(UTC).isoformat()),
                )

    def schema_version(self) -> int:
        """The highest migration applied to this database (0 if none)."""
        with self._transaction(False) as cur:
            cur.execute("SELECT MAX(version) FROM schema_version")
            row = cur.fetchone()
        return 0 if row is None or row[0] is None else int(row[0])

    # ----------------------------------------------------------- metadata

    def get_meta(self, key: str) -> str | None:
        """Return a metadata value, or None."""
        with self._transaction(False) as cur:
            cur.execute(self._sql("SELECT value FROM meta WHERE key = ?"), (key,))
            row = cur.fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Set a metadata value."""
        with self._transaction(True) as cur:
            cur.execute(
                self._sql(
                    "INSERT INTO meta (key, value) VALUES (?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
                ),
                (key, value),
            )

    def last_tick(self) -> int:
        """The latest world tick this database holds anything from: the
        highest ``saved_tick`` of its players and levels (0 when it holds
        none). A server starting on it resumes its world's clock after this
        tick, so that what characters keep in ticks of the world (the tick
        each spell was learned, seed 004's forgetting) goes on counting
        across restarts instead of starting again."""
        with self._transaction(False) as cur:
            cur.execute(
                "SELECT (SELECT MAX(saved_tick) FROM players), (SELECT MAX(saved_tick) FROM levels)"
            )
            row = cur.fetchone()
        return max((int(v) for v in (row or ()) if v is not None), default=0)

    # ----------------------------------------------------------- players and levels

    def load_player(self, name: str) -> tuple[str, dict[str, Any]] | None:
        """Return ``(token_hash, record)`` for ``name`` (any case), or None if unknown."""
        with self._transaction(False) as cur:
            cur.execute(
                self._sql("SELECT token_hash, record FROM players WHERE lower(name) = lower(?)"),
                (name,),
            )
            row = cur.fetchone()
        if row is None:
            return None
        return str(row[0]), unpack_record(bytes(row[1]))

    def check_token(self, name: str, token: str | None) -> dict[str, Any] | None:
        """Return the saved record if ``token`` is right for ``name``, else None."""
        found = self.load_player(name)
        if found is None or token is None:
            return None
        return found[1] if hmac.compare_digest(found[0], hash_token(token)) else None

    def load_levels(self) -> dict[int, dict[str, Any]]:
        """Every saved level record, by depth."""
        with self._transaction(False) as cur:
            cur.execute("SELECT depth, record FROM levels ORDER BY depth")
            rows = cur.fetchall()
        return {int(d): unpack_record(bytes(r)) for d, r in rows}

    def save(
        self,
        players: Sequence[PlayerRow],
        levels: Sequence[LevelRow],
        meta: Sequence[tuple[str, str]] = (),
    ) -> None:
        """Write packed player and level rows, and metadata values, in one
        transaction: after a crash the database holds all of them or none.

        Raises:
            StoreError: The write failed (nothing of it was kept).
        """
        if not players and not levels and not meta:
            return
        with self._transaction(True) as cur:
            if meta:
                cur.executemany(
                    self._sql(
                        "INSERT INTO meta (key, value) VALUES (?, ?) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
                    ),
                    list(meta),
                )
            if players:
                cur.executemany(
                    self._sql(
                        "INSERT INTO players (name, token_hash, record, saved_tick) "
                        "VALUES (?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET "
                        "token_hash = excluded.token_hash, record = excluded.record, "
                        "saved_tick = excluded.saved_tick"
                    ),
                    list(players),
                )
            if levels:
                cur.executemany(
                    self._sql(
                        "INSERT INTO levels (depth, record, saved_tick) VALUES (?, ?, ?) "
                        "ON CONFLICT (depth) DO UPDATE SET record = excluded.record, "
                        "saved_tick = excluded.saved_tick"
                    ),
                    list(levels),
                )

    def save_players(self, rows: Sequence[tuple[str, str, dict[str, Any], int]]) -> None:
        """Save ``(name, token_hash, record, tick)`` rows in one transaction."""
        self.save([(n, h, pack_record(r), t) for n, h, r, t in rows], [])

    def save_levels(self, rows: Sequence[tuple[int, dict[str, Any], int]]) -> None:
        """Save ``(depth, record, tick)`` rows in one transaction."""
        self.save([], [(d, pack_record(r), t) for d, r, t in rows])

    # ----------------------------------------------------------- whole worlds

    def dump(self) -> Iterator[tuple[str, tuple[Any, ...]]]:
        """Every row, read in one transaction: ``("meta", (key, value))``,
        then ``("player", PlayerRow)`` by name, then ``("level", LevelRow)``
        by depth."""
        with self._transaction(False) as cur:
            cur.execute("SELECT key, value FROM meta ORDER BY key")
            meta = cur.fetchall()
            cur.execute("SELECT name, token_hash, record, saved_tick FROM players ORDER BY name")
            players = cur.fetchall()
            cur.execute("SELECT depth, record, saved_tick FROM levels ORDER BY depth")
            levels = cur.fetchall()
        for k, v in meta:
            yield "meta", (str(k), str(v))
        for n, h, r, t in players:
            yield "player", (str(n), str(h), bytes(r), int(t))
        for d, r, t in levels:
            yield "level", (int(d), bytes(r), int(t))

    def is_empty(self) -> bool:
        """True if the database holds no metadata, player or level."""
        with self._transaction(False) as cur:
            cur.execute(
                "SELECT (SELECT COUNT(*) FROM meta) + (SELECT COUNT(*) FROM players)"
                " + (SELECT COUNT(*) FROM levels)"
            )
            row = cur.fetchone()
        return row is None or int(row[0]) == 0

    def replace_all(
        self,
        meta: Sequence[tuple[str, str]],
        players: Sequence[PlayerRow],
        levels: Sequence[LevelRow],
    ) -> None:
        """Make the database hold exactly these rows, in one transaction."""
        with self._transaction(True) as cur:
            for table in ("meta", "players", "levels"):
                cur.execute(f"DELETE FROM {table}")
            if meta:
                cur.executemany(
                    self._sql("INSERT INTO meta (key, value) VALUES (?, ?)"), list(meta)
                )
            if players:
                cur.executemany(
                    self._sql(
                        "INSERT INTO players (name, token_hash, record, saved_tick) "
                        "VALUES (?, ?, ?, ?)"
                    ),
                    list(players),
                )
            if levels:
                cur.executemany(
                    self._sql("INSERT INTO levels (depth, record, saved_tick) VALUES (?, ?, ?)"),
                    list(levels),
                )
