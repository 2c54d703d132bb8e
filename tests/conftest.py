"""Suite-wide fixtures, and the lock that runs an ``alone`` test with no
other test of the run beside it when pytest-xdist runs tests in parallel."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def private_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keep every test's tokens and default database out of the user's home.

    Set in the environment, so server and client subprocesses inherit it.
    """
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("UNDERHALL_HOME", str(home))
    monkeypatch.setenv("UNDERHALL_DB", str(home / "world.db"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    return home


@pytest.fixture(autouse=True)
def alone_when_marked(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """Under pytest-xdist, hold the run's test lock for the whole test (its
    fixtures included): shared for every test, exclusive for one marked
    ``alone``, which so runs while no other worker runs a test.

    A waiting ``alone`` test is not starved: it first takes a turnstile that
    every test passes before it takes the shared lock. The files are in the
    run's base temporary directory, which all workers share; without xdist
    nothing is locked.
    """
    if "PYTEST_XDIST_WORKER" not in os.environ:
        yield
        return
    run_dir = tmp_path_factory.getbasetemp().parent  # the controller's: .../pytest-N
    exclusive = request.node.get_closest_marker("alone") is not None
    with (run_dir / "turnstile.lock").open("a") as gate, (run_dir / "tests.lock").open("a") as lock:
        fcntl.flock(gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        finally:
            if not exclusive:
                fcntl.flock(gate, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
            if exclusive:
                fcntl.flock(gate, fcntl.LOCK_UN)
