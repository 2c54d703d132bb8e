"""Run the real ``underhall serve`` as a subprocess for end-to-end tests."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

READY_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0


def underhall_command() -> list[str]:
    """The ``underhall`` script beside this Python, else ``python -m server.cli``."""
    beside = Path(sys.executable).with_name("underhall")
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "server.cli"]


@contextmanager
def running_server(
    tmp_path: Path, *, seed: int = 7, tick_rate: int = 10, env: dict[str, str] | None = None
) -> Iterator[str]:
    """Start ``underhall serve`` on a free port of 127.0.0.1 with a database
    in ``tmp_path``; yield its URL once it listens; stop it afterwards.

    Its output goes to ``tmp_path / "server.log"``, shown if it fails to start.
    """
    with server_process(tmp_path, seed=seed, tick_rate=tick_rate, env=env) as (url, _proc):
        yield url


@contextmanager
def server_process(
    tmp_path: Path,
    *,
    seed: int = 7,
    tick_rate: int = 10,
    env: dict[str, str] | None = None,
    args: Sequence[str] = (),
    prefix: Sequence[str] = (),
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """:func:`running_server` with more ``serve`` options ``args``, and a
    command ``prefix`` (e.g. ``prlimit ... --``); yields the URL and the process."""
    log_path = tmp_path / "server.log"
    cmd = [
        *prefix,
        *underhall_command(),
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--seed",
        str(seed),
        "--tick-rate",
        str(tick_rate),
        "--db",
        str(tmp_path / "world.db"),
        *args,
    ]
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            cmd,
            cwd=tmp_path,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            match = re.search(rb"listening on (ws://\S+)", log_path.read_bytes())
            if match:
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the server did not start:\n{log_path.read_text(errors='replace')}")
            time.sleep(0.05)
        yield match.group(1).decode(), proc
    finally:
        proc.terminate()
        try:
            proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(STOP_TIMEOUT_S)
