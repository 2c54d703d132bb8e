"""Where the world persists: one interface, two backends.

:func:`open_store` picks the backend from the ``--db`` value: a
``postgresql://`` URL opens :class:`~server.store.postgres.PostgresStore`;
anything else is a SQLite file (:class:`~server.store.sqlite.SqliteStore`,
the default, needing no setup). Both apply the same numbered migrations
(:mod:`server.store.migrations`) and offer :class:`~server.store.base.Store`.
"""

from __future__ import annotations

from pathlib import Path

from server.store.base import (
    LevelRow,
    PlayerRow,
    Store,
    StoreError,
    hash_token,
    join_maps,
    map_pairs,
    pack_record,
    pack_value,
    unpack_record,
)

__all__ = [
    "LevelRow",
    "PlayerRow",
    "Store",
    "StoreError",
    "hash_token",
    "is_url",
    "join_maps",
    "map_pairs",
    "open_store",
    "pack_record",
    "pack_value",
    "unpack_record",
]


def is_url(target: str | Path) -> bool:
    """True if ``target`` names a PostgreSQL database rather than a file."""
    return str(target).startswith(("postgresql://", "postgres://"))


def open_store(target: str | Path, *, lock: bool = True) -> Store:
    """Open (creating and migrating as needed) the world at ``target``.

    Args:
        target: A SQLite file path, ``":memory:"``, or a
            ``postgresql://USER@HOST/DB`` URL.
        lock: Take the one-server lock (see each backend).

    Raises:
        StoreError: It cannot be opened; the message is one line.
    """
    if is_url(target):
        from server.store.postgres import PostgresStore

        return PostgresStore(str(target), lock=lock)
    from server.store.sqlite import SqliteStore

    return SqliteStore(target, lock=lock)
