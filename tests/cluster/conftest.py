"""Fixtures of the cluster tests: NATS and PostgreSQL, or a skip saying why."""

from __future__ import annotations

import pytest

from tests.cluster.natsenv import require_nats, unique_prefix
from tests.pgdb import pg_database

__all__ = ["pg_database"]


@pytest.fixture
def nats_url() -> str:
    """The test NATS server's URL (skips when unreachable or without JetStream)."""
    return require_nats()


@pytest.fixture
def prefix() -> str:
    """A subject and bucket prefix of this test's own."""
    return unique_prefix()
