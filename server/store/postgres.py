"""The PostgreSQL backend, through psycopg 3 (synchronous: saves run in the
writer thread, off the tick).

Two connections in autocommit mode, each transaction explicit. One server
at a time per database: the reading connection holds a session advisory
lock, released by PostgreSQL when that connection ends (the server stopped
or was killed); a second server is refused with the holder's description
(its ``application_name`` carries its host's pid, and its client address).
A connection found broken (the database restarted, say) is opened again on
its next use, the lock taken again with it; the write that found it broken
failed and is retried by the writer.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg

from server.store.base import Store, StoreError

LOCK_KEY = (0x5548, 1)
"""The advisory lock ``(class, object)`` that one server holds per database."""
CONNECT_TIMEOUT_S = 5


def redact(url: str) -> str:
    """``url`` without its password, fit for logs and messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    user = f"{parts.username}@" if parts.username else ""
    return urlunsplit(parts._replace(netloc=f"{user}{host}"))


class PostgresStore(Store):
    """A world in a PostgreSQL database.

    Args:
        url: ``postgresql://USER[:PASSWORD]@HOST[:PORT]/DB`` (the database
            must exist; the tables are made by the migrations).
        lock: Take the database's advisory lock (refused if another server
            holds it). ``db export`` reads without it.

    Raises:
        StoreError: The server cannot be reached or refuses the login, the
            database does not exist, or another server holds its lock.
    """

    backend = "postgres"

    def __init__(self, url: str, *, lock: bool = True) -> None:
        super().__init__()
        self.url = redact(url)
        self._dsn = url
        self._locked = lock
        self._rconn = self._connect()
        try:
            self._wconn = self._connect()
        except BaseException:
            self._rconn.close()
            raise
        try:
            if lock:
                self._take_lock()
            self._migrate()
        except BaseException:
            self.close()
            raise

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(
                self._dsn,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT_S,
                application_name=f"underhall pid {os.getpid()}",
            )
        except psycopg.Error as exc:
            raise StoreError(f"{self.url}: cannot connect: {_one_line(exc)}") from exc

    def _take_lock(self) -> None:
        try:
            got = self._rconn.execute("SELECT pg_try_advisory_lock(%s, %s)", LOCK_KEY).fetchone()
            if got is not None and got[0]:
                return
            holder = self._rconn.execute(
                "SELECT a.application_name, a.client_addr FROM pg_locks l "
                "JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' "
                "AND l.classid = %s AND l.objid = %s AND l.granted "
                "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                LOCK_KEY,
            ).fetchone()
        except psycopg.Error as exc:
            raise StoreError(f"{self.url}: {_one_line(exc)}") from exc
        who = "unknown" if holder is None else f"{holder[0] or 'a client'} from {holder[1]}"
        raise StoreError(
            f"{self.url} is in use by another server ({who}); stop it or choose another --db"
        )

    def _sql(self, query: str) -> str:
        return query.replace("?", "%s")

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[psycopg.Cursor[Any]]:
        lock = self._write_lock if write else self._read_lock
        with lock:
            conn = self._usable(write)
            try:
                with conn.transaction(), conn.cursor() as cur:
                    yield cur
            except psycopg.Error as exc:
                raise StoreError(f"{self.url}: {_one_line(exc)}") from exc

    def _usable(self, write: bool) -> psycopg.Connection[Any]:
        """The writing or reading connection, opened again if it broke."""
        conn = self._wconn if write else self._rconn
        if not conn.broken:
            return conn
        conn.close()
        fresh = self._connect()
        if write:
            self._wconn = fresh
        else:
            self._rconn = fresh
            if self._locked:
                self._take_lock()
        return fresh

    def close(self) -> None:
        """Release the lock, then close both connections.

        The lock is released explicitly: the server ends a closed session's
        backend a moment after the client goes, so a server started right
        after this one stopped would otherwise still find it held.
        """
        self._wconn.close()
        with contextlib.suppress(psycopg.Error):
            self._rconn.execute("SELECT pg_advisory_unlock_all()")
        self._rconn.close()


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())
