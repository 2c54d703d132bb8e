"""Persistence of the world's seed, its levels and every player's character, in SQLite.

SQLite (standard library) needs no server: the default database is a file,
so a restarted server keeps its dungeon (same seed, and each visited level's
terrain and floor items as they were left: burnt doors, dug walls, dropped and
thrown things) and its players (level, health, place, pack, spells, map
memory). Level records are :meth:`server.sim.world.World.level_record`. Records are msgpack blobs of
:meth:`server.sim.actors.Actor.to_record`. Tokens are stored as SHA-256
hashes, never in the clear.
"""

from __future__ import annotations

import hashlib
import hmac
import sqlite3
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS players (
    name TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL,
    record BLOB NOT NULL,
    saved_tick INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS levels (
    depth INTEGER PRIMARY KEY,
    record BLOB NOT NULL,
    saved_tick INTEGER NOT NULL
);
"""


def hash_token(token: str) -> str:
    """Return the hex SHA-256 of ``token``."""
    return hashlib.sha256(token.encode()).hexdigest()


class Store:
    """A SQLite database of players and world metadata.

    Args:
        path: Database file (created with its parent folders), or ``":memory:"``.

    Raises:
        sqlite3.Error: If the file cannot be opened or is not a database.
    """

    def __init__(self, path: str | Path) -> None:
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path))
        self._db.executescript(SCHEMA)
        self._db.commit()

    def close(self) -> None:
        """Close the database; further calls raise sqlite3.ProgrammingError."""
        self._db.close()

    def get_meta(self, key: str) -> str | None:
        """Return a metadata value, or None."""
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Set a metadata value."""
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))
        self._db.commit()

    def load_player(self, name: str) -> tuple[str, dict[str, Any]] | None:
        """Return ``(token_hash, record)`` for ``name`` (any case), or None if unknown."""
        row = self._db.execute(
            "SELECT token_hash, record FROM players WHERE name = ? COLLATE NOCASE",
            (name,)).fetchone()
        if row is None:
            return None
        record = msgpack.unpackb(row[1], raw=False, strict_map_key=False)
        return str(row[0]), record

    def check_token(self, name: str, token: str | None) -> dict[str, Any] | None:
        """Return the saved record if ``token`` is right for ``name``, else None."""
        found = self.load_player(name)
        if found is None or token is None:
            return None
        return found[1] if hmac.compare_digest(found[0], hash_token(token)) else None

    def save_players(self, rows: list[tuple[str, str, dict[str, Any], int]]) -> None:
        """Save ``(name, token_hash, record, tick)`` rows in one transaction."""
        self._db.executemany(
            "INSERT OR REPLACE INTO players (name, token_hash, record, saved_tick) "
            "VALUES (?, ?, ?, ?)",
            [(n, h, msgpack.packb(r, use_bin_type=True), t) for n, h, r, t in rows],
        )
        self._db.commit()

    def save_levels(self, rows: list[tuple[int, dict[str, Any], int]]) -> None:
        """Save ``(depth, record, tick)`` rows in one transaction."""
        self._db.executemany(
            "INSERT OR REPLACE INTO levels (depth, record, saved_tick) VALUES (?, ?, ?)",
            [(d, msgpack.packb(r, use_bin_type=True), t) for d, r, t in rows],
        )
        self._db.commit()

    def load_levels(self) -> dict[int, dict[str, Any]]:
        """Every saved level record, by depth."""
        rows = self._db.execute("SELECT depth, record FROM levels ORDER BY depth").fetchall()
        return {int(d): msgpack.unpackb(r, raw=False, strict_map_key=False) for d, r in rows}
