"""The embedded backend: one SQLite file, needing no server and no setup.

The file is created private (mode 0600; SQLite gives its ``-wal`` and
``-shm`` siblings the same mode), runs in write-ahead-log mode with
``synchronous=NORMAL`` (a committed save survives the process being killed;
only a power cut may undo the last few), and is locked for one server at a
time: ``<file>.lock`` holds an exclusive ``flock`` and the holder's pid, and
the kernel releases it whenever that process ends, even by ``kill -9``.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from server.store.base import Store, StoreError

BUSY_TIMEOUT_S = 10.0
"""How long a connection waits for another one's write to finish."""


class SqliteStore(Store):
    """A world in a SQLite file (or in memory, for tests).

    Args:
        path: The database file (created, with its folders, if missing), or
            ``":memory:"``.
        lock: Take the file's lock (refused if another process holds it).
            ``db export`` reads without it.

    Raises:
        StoreError: The path is empty, a folder, not a regular file, not a
            SQLite database, cannot be created or written, or is locked by
            another process (the message names the pid).
    """

    backend = "sqlite"

    def __init__(self, path: str | Path, *, lock: bool = True) -> None:
        super().__init__()
        text = str(path)
        self.url = text
        self._lock_fd: int | None = None
        if not text.strip():
            raise StoreError("the database path is empty")
        if text == ":memory:":
            self._rconn = self._wconn = self._connect(text)
            self._read_lock = self._write_lock
        else:
            file = Path(text)
            _check_file(file)
            if lock:
                self._lock_fd = _take_lock(file)
            try:
                _create_private(file)
                self._wconn = self._connect(text)
                self._rconn = self._connect(text)
            except BaseException:
                self._release()
                raise
        try:
            self._migrate()
        except BaseException:
            self.close()
            raise

    def _connect(self, target: str) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                target, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_S
            )
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
            except sqlite3.Error:
                conn.close()
                raise
        except sqlite3.Error as exc:
            raise StoreError(f"{target}: {exc}") from exc
        return conn

    def _sql(self, query: str) -> str:
        return query

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[sqlite3.Cursor]:
        conn, lock = (self._wconn, self._write_lock) if write else (self._rconn, self._read_lock)
        with lock:
            try:
                cur = conn.cursor()
                cur.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    yield cur
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                cur.execute("COMMIT")
            except sqlite3.Error as exc:
                raise StoreError(f"{self.url}: {exc}") from exc

    def close(self) -> None:
        """Close the database and release its lock; further use raises StoreError."""
        for conn in {id(self._rconn): self._rconn, id(self._wconn): self._wconn}.values():
            conn.close()
        self._release()

    def _release(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing the descriptor drops the flock
            self._lock_fd = None


def _check_file(file: Path) -> None:
    if file.is_dir():
        raise StoreError(f"{file} is a folder, not a database file")
    if file.exists() and not file.is_file():
        raise StoreError(f"{file} is not a regular file (a device, pipe or socket)")
    if file.exists() and not os.access(file, os.R_OK | os.W_OK):
        raise StoreError(f"{file}: permission denied (the server must read and write it)")
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as exc:
        raise StoreError(f"{file}: cannot create its folder: a file is in the way") from exc
    except OSError as exc:
        raise StoreError(f"{file}: cannot create its folder: {exc.strerror or exc}") from exc


def _create_private(file: Path) -> None:
    """Create ``file`` empty with mode 0600 if it does not exist (SQLite
    would create it with the umask's mode, usually 0644)."""
    try:
        fd = os.open(file, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise StoreError(f"{file}: cannot open: {exc.strerror or exc}") from exc
    os.close(fd)


def _take_lock(file: Path) -> int:
    lock_path = file.with_name(file.name + ".lock")
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise StoreError(
            f"{lock_path}: cannot create the lock file: {exc.strerror or exc}"
        ) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise StoreError(
            f"{file} is in use by another server (pid {holder}); stop it or choose another --db"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd
