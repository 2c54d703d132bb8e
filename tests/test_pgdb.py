"""The tests' PostgreSQL: a URL that answers is used as it is; where none
answers, a private server is started once; a private server can be stopped
and started again at the same URL with its data."""

from __future__ import annotations

import secrets
import socket

import psycopg
import pytest

from tests.pgdb import PrivatePostgres, database_url, usable_pg

pytestmark = pytest.mark.xdist_group("private-postgres")
"""One worker runs these under pytest-xdist: they share the private server
the first one starts (one per worker process)."""


def _dead_url() -> str:
    """A ``postgresql://`` URL of a port of 127.0.0.1 that nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"postgresql://postgres@127.0.0.1:{s.getsockname()[1]}/postgres"


def test_a_url_that_does_not_answer_gets_a_private_server() -> None:
    dead = _dead_url()
    url = usable_pg(dead)
    assert url != dead
    assert usable_pg(_dead_url()) == url  # one private server for the session
    name = f"underhall_probe_{secrets.token_hex(4)}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            with psycopg.connect(database_url(url, name), autocommit=True) as conn:
                conn.execute("CREATE TABLE t (x integer)")
                conn.execute("INSERT INTO t VALUES (7)")
                assert conn.execute("SELECT x FROM t").fetchall() == [(7,)]
        finally:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def test_a_url_that_answers_is_used_as_it_is() -> None:
    running = usable_pg(_dead_url())  # the private server: a PostgreSQL that answers
    assert usable_pg(running) == running


def test_a_private_server_stops_and_starts_again_with_its_data() -> None:
    server = PrivatePostgres()
    try:
        with psycopg.connect(server.url, autocommit=True) as conn:
            conn.execute("CREATE TABLE t (x integer)")
            conn.execute("INSERT INTO t VALUES (7)")
        server.stop()
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(server.url, connect_timeout=3).close()
        server.start()
        with psycopg.connect(server.url) as conn:
            assert conn.execute("SELECT x FROM t").fetchall() == [(7,)]
    finally:
        server.remove()
    assert not server.dir.exists()
