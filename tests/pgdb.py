"""A throw-away PostgreSQL database for tests of the PostgreSQL backend.

The server is ``$UNDERHALL_TEST_PG`` (a ``postgresql://`` URL of a user that
may create databases), else ``postgresql://postgres@127.0.0.1:5432/postgres``.
Tests that need it skip, saying why, when it cannot be reached.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import pytest

ADMIN_URL = os.environ.get("UNDERHALL_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
TABLES = ("schema_version", "meta", "players", "levels")


def _with_db(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


@pytest.fixture(scope="session")
def pg_database() -> Iterator[str]:
    """Create a database for this test run; yield its URL; drop it afterwards."""
    psycopg = pytest.importorskip("psycopg")
    name = f"underhall_test_{os.getpid()}_{secrets.token_hex(4)}"
    try:
        admin = psycopg.connect(ADMIN_URL, autocommit=True, connect_timeout=3)
    except psycopg.Error as exc:
        pytest.skip(f"PostgreSQL not reachable at {ADMIN_URL}: {' '.join(str(exc).split())}")
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield _with_db(ADMIN_URL, name)
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
