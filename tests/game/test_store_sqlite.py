"""The SQLite file: private modes, and a clean one-line refusal of every path
that cannot hold a world (through ``underhall serve`` itself)."""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.cli import main
from server.store import StoreError, open_store
from tests.serverproc import running_server, underhall_command


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)  # the usual umask, under which SQLite alone makes 0644 files
    yield
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("umask_022")
def test_the_database_and_its_siblings_are_private(tmp_path: Path) -> None:
    db = tmp_path / "sub" / "world.db"
    store = open_store(db)
    store.save_players([("ann", "h", {"hp": 1}, 1)])
    siblings = [db, Path(f"{db}-wal"), Path(f"{db}-shm"), Path(f"{db}.lock")]
    assert all(p.exists() for p in siblings)
    assert {p.name: _mode(p) for p in siblings} == {p.name: 0o600 for p in siblings}
    store.close()


def _serve(db: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = main(["serve", "--port", "0", "--db", db])
    return status, capsys.readouterr().err


def test_paths_that_cannot_hold_a_world_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not a database at all, just some words " * 40)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    cases = {
        str(tmp_path): "is a folder",
        "/dev/null": "not a regular file",
        str(text): "not a database",
        "": "path is empty",
        str(blocker / "world.db"): "cannot create its folder",
    }
    for db, message in cases.items():
        status, err = _serve(db, capsys)
        assert status == 1, db
        assert err.count("\n") == 1 and err.startswith("underhall serve: ") and message in err, err
    assert text.read_text().startswith("not a database")  # and the file is left as it was


# Root writes a 0400 file through CAP_DAC_OVERRIDE (and reads anything through
# CAP_DAC_READ_SEARCH), so as root the server runs with both dropped from its
# bounding set: a server started by root as a service is refused the same way
# once it is confined, and CI, which runs as root, tests the refusal for real.
DROP_FILE_OVERRIDES = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]


def test_an_unwritable_database_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "world.db"
    open_store(db).close()
    db.chmod(0o400)
    if os.geteuid() != 0:
        status, err = _serve(str(db), capsys)
    else:
        done = subprocess.run(
            [*DROP_FILE_OVERRIDES, *underhall_command(), "serve", "--port", "0", "--db", str(db)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        status, err = done.returncode, done.stderr
    assert status == 1 and "permission denied" in err, err
    assert err.count("\n") == 1 and err.startswith("underhall serve: "), err


def test_a_second_server_on_the_same_file_is_refused_with_the_holders_pid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with running_server(tmp_path):
        pid = (tmp_path / "world.db.lock").read_text().strip()
        status, err = _serve(str(tmp_path / "world.db"), capsys)
        assert status == 1 and f"in use by another server (pid {pid})" in err
        assert err.count("\n") == 1
    with pytest.raises(StoreError, match="is a folder"):
        open_store(tmp_path)
