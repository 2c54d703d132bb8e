"""A client in another language, written from docs/protocol.md alone, plays
against the real server.

``client.mjs`` (Node) joins, plays about forty commands, sends one malformed
frame and one unknown message type, keeps its state from the snapshot and the
deltas as the document describes, resumes with its token and compares that
state with the server's fresh snapshot, then prints a JSON summary. This test
starts ``underhall serve`` as a subprocess, runs the Node client against it and
checks the summary. Black-box: nothing here imports the project.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.serverproc import running_server

HERE = Path(__file__).resolve().parent
NODE = shutil.which("node")

NPM = shutil.which("npm")


@pytest.fixture(scope="module")
def node_modules() -> Path:
    """``tests/interop/node_modules``, installed with ``npm ci`` from the
    committed lock file when missing (skips only without node and npm, or
    when the registry cannot be reached)."""
    path = HERE / "node_modules"
    if NODE is None:
        pytest.skip("node is not installed")
    if not path.is_dir():
        if NPM is None:
            pytest.skip("npm is not installed, and tests/interop/node_modules is missing")
        done = subprocess.run(
            [NPM, "ci", "--no-audit", "--no-fund", "--silent"],
            cwd=HERE,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0:
            shutil.rmtree(path, ignore_errors=True)
            pytest.skip(f"npm ci failed: {done.stderr.strip()[-500:]}")
    return path


# Terrain codes fixed by the document that nobody can stand on.
ROCK, WALL, CLOSED_DOOR, UNKNOWN = 0, 1, 3, 255


def test_node_client_plays_against_the_server(tmp_path: Path, node_modules: Path) -> None:
    assert NODE is not None
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "UNDERHALL_HOME": str(home), "PYTHONUNBUFFERED": "1"}
    with running_server(tmp_path, seed=3, tick_rate=20, env=env) as url:
        run = subprocess.run(
            [NODE, str(HERE / "client.mjs"), url, "interop_node"],
            cwd=HERE,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert run.returncode == 0, (
            f"node client failed ({run.returncode}):\n{run.stderr}\n{run.stdout}\n"
            f"server log:\n{(tmp_path / 'server.log').read_text(errors='replace')[-3000:]}"
        )
    lines = run.stdout.strip().splitlines()
    assert len(lines) == 1, run.stdout
    s = json.loads(lines[0])

    # The documented non-fatal errors, and nothing else.
    assert s["errors"] == ["bad_msgpack", "unknown_type"]
    assert s["pong"] is True
    assert s["chat_echo"] is True
    assert s["commands"] >= 35
    # Every command was answered: carried out or rejected, so ack caught up,
    # and none went unanswered (not even when a death emptied the queue).
    assert s["ack"] == s["last_seq"]
    assert s["dropped"] == []

    # Where it stands is inside the level, known, and a cell one can stand on.
    assert 0 <= s["x"] < s["w"] and 0 <= s["y"] < s["h"]
    assert s["depth"] >= 1
    assert s["passable_here"] is True
    assert s["terrain_here"] not in (ROCK, WALL, CLOSED_DOOR, UNKNOWN)
    assert s["hp"] > 0

    assert 0 < s["visible_cells"] <= s["known_cells"] <= s["w"] * s["h"]
    # Its own actor is among the actors in view, where `me` says it is.
    assert [s["id"], s["x"], s["y"], s["hp"]] in s["actors"]
    assert [a[0] for a in s["actors"]] == sorted({a[0] for a in s["actors"]})

    # The state built from deltas matched the server's snap on resuming.
    assert s["resync_diffs"] == []
