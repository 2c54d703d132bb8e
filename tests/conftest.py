"""Suite-wide fixtures."""

from __future__ import annotations

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
