"""Fixtures of the cluster tests: NATS and PostgreSQL (the machine's, or private
ones where none answers), or a skip saying why neither can be had."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster.natsenv import require_nats, unique_prefix
from tests.pgdb import empty_pg, pg_database

__all__ = ["pg_database"]


@pytest.fixture
def nats_url() -> str:
    """The test NATS server's URL (:func:`~tests.cluster.natsenv.require_nats`)."""
    return require_nats()


@pytest.fixture
def prefix() -> str:
    """A subject and bucket prefix of this test's own."""
    return unique_prefix()


@pytest.fixture
def db(request: pytest.FixtureRequest) -> str:
    """The URL of an empty PostgreSQL database of this test's own (on the
    server of :func:`~tests.pgdb.pg_database`)."""
    return empty_pg(request.getfixturevalue("pg_database"))


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A directory with a short path (a Unix socket path has at most 107 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="uh-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)
