"""The two ways of running Underhall, started for the conformance suite.

A :class:`Front` is what a player and an operator can reach of a running
server: its ``ws://`` URLs and its admin socket. ``serve`` is the real
``underhall serve`` (:func:`tests.serverproc.server_process`) with its
world in SQLite; ``cluster`` is two real workers (levels 1 and 2) and two
gateways on NATS and PostgreSQL (:class:`tests.cluster.procs.ClusterProcs`),
the operator's admin socket on the first. Both run the same world (seed
:data:`SEED`, monsters included) with the network limits of their
defaults, and both hold the same characters planted before they start
(:data:`PLANTED`), so a test can put a player on a staircase or on another
level without walking there.

Every test's clients connect from a loopback address of the test's own
(:func:`next_address`), so the per-address limits (failed tokens, above
all) count one test's clients only. Limits that spare loopback addresses
are tested from this machine's other address (:func:`outside_address`).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import itertools
import shutil
import socket
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from server.net.guard import NetLimits
from server.store import open_store
from tests.cluster.procs import SEED, ClusterProcs, admin_request, plant
from tests.serverproc import server_process

TOKEN = "conformance-secret"
"""The resume token of every planted character."""

PLANTED: dict[str, tuple[int, str]] = {
    "Deep": (2, "up"),
    "Notice": (2, "down"),
    "Below": (2, "down"),
    "Stairs": (1, "down"),
    "Stairs2": (1, "down"),
    "Stairs3": (1, "down"),
    "Stairs4": (1, "down"),
    "Faraway": (1, "down"),
    "Lobbied": (2, "down"),
    "Lobbied2": (1, "down"),
    "Followed": (1, "down"),
    "Followed2": (1, "down"),
}
"""Characters saved before a front starts: name -> (depth, the staircase
(``"up"``/``"down"``) they stand on). Each test that uses one takes it for
its own (see :meth:`Front.planted`); a name serves one test per front."""

MAX_CONNS_PER_ADDR = NetLimits().max_conns_per_addr
"""``serve``'s default per-address connection cap, given to the gateway too."""

_addresses = itertools.count(2)
_names = itertools.count(1)


def next_address() -> str:
    """A loopback address (``127.0.x.y``) no earlier call returned: the
    source address of one test's clients."""
    n = next(_addresses)
    return f"127.0.{n // 250}.{n % 250 + 2}"


def outside_address() -> str | None:
    """This machine's own address that is not a loopback one (the source of
    its default route), or None when it has none. Limits that spare loopback
    addresses (the operator's own tools) are tested from it."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.254", 9))  # no packet is sent: it only picks a route
        addr = str(probe.getsockname()[0])
        if not ipaddress.ip_address(addr).is_loopback:
            return addr
    return None


def unique(stem: str) -> str:
    """``stem`` with a number no other call in this run gave: a character
    name no other test of this run uses (at most 16 characters)."""
    name = f"{stem[:11]}{next(_names)}"
    assert len(name) <= 16, name
    return name


@dataclass
class Front:
    """A running server as players and operators reach it.

    Args:
        kind: ``"serve"`` or ``"cluster"``.
        url: The ``ws://`` URL players connect to.
        other_door: Another URL to the same world: ``serve``'s own again; a
            cluster's second gateway (players come back through any one).
        admin_socket: Its admin Unix socket (``underhall admin``'s channel).
        planted: The planted characters: name -> their saved record.
    """

    kind: str
    url: str
    other_door: str
    admin_socket: Path
    planted_records: dict[str, dict[str, Any]]
    used: set[str] = field(default_factory=set)

    def planted(self, name: str) -> tuple[str, str, dict[str, Any]]:
        """Take planted character ``name`` for this test: ``(name, token,
        saved record)``. A second test asking for it on the same front is an
        error of the suite (two tests would share a character)."""
        assert name not in self.used, f"{name} was planted for one test only"
        self.used.add(name)
        return name, TOKEN, self.planted_records[name]

    async def admin(self, **request: Any) -> dict[str, Any]:
        """One admin request (``{"cmd": ...}``), answered.

        Raises:
            TimeoutError: No answer within 20 s.
        """
        return await asyncio.wait_for(admin_request(self.admin_socket, **request), 20)

    async def kick(self, name: str) -> dict[str, Any]:
        """``underhall admin kick NAME``."""
        return await self.admin(cmd="kick", name=name)

    async def ban(self, name: str, reason: str) -> dict[str, Any]:
        """``underhall admin ban NAME --reason REASON``."""
        return await self.admin(cmd="ban", name=name, reason=reason)

    async def notice(self, text: str) -> dict[str, Any]:
        """``underhall admin broadcast TEXT``: a notice to every player."""
        return await self.admin(cmd="broadcast", text=text)

    async def drain(self, grace_s: float) -> dict[str, Any]:
        """``underhall admin shutdown --grace GRACE``: the drain. ``serve``
        stops; a cluster's gateway stops (its workers keep the characters)."""
        return await self.admin(cmd="shutdown", grace=grace_s)


def _plant_all(db: str) -> dict[str, dict[str, Any]]:
    return {name: plant(db, name, TOKEN, depth, on=on) for name, (depth, on) in PLANTED.items()}


def _short_dir() -> Path:
    """A directory with a short path, for Unix sockets (at most 107 bytes)."""
    return Path(tempfile.mkdtemp(prefix="uh-"))


@contextlib.contextmanager
def serve_front(tmp: Path, args: Sequence[str] = ()) -> Iterator[Front]:
    """``underhall serve`` (with more options ``args``) with the suite's
    world in ``tmp``; stopped after."""
    store = open_store(tmp / "world.db", lock=False)
    store.set_meta("seed", str(SEED))
    store.close()
    records = _plant_all(str(tmp / "world.db"))
    sock_dir = _short_dir()
    sock = sock_dir / "admin.sock"
    try:
        with server_process(tmp, seed=SEED, args=["--admin-socket", str(sock), *args]) as (url, _):
            yield Front("serve", url, url, sock, records)
    finally:
        shutil.rmtree(sock_dir, ignore_errors=True)


@dataclass
class Cluster:
    """A running cluster: its processes, and what a new gateway needs."""

    procs: ClusterProcs
    records: dict[str, dict[str, Any]]
    gateways: itertools.count[int] = field(default_factory=lambda: itertools.count(3))

    def gateway(self, sock: Path, args: Sequence[str] = ()) -> str:
        """Start one more gateway with its admin socket at ``sock`` and more
        options ``args``; its URL."""
        return self.procs.gateway(
            f"g{next(self.gateways)}",
            max_conns_per_addr=MAX_CONNS_PER_ADDR,
            admin_socket=sock,
            args=args,
        )


@contextlib.contextmanager
def cluster_front(
    tmp: Path, nats_url: str, db: str, prefix: str
) -> Iterator[tuple[Front, Cluster]]:
    """Two workers (levels 1 and 2, with monsters) and two gateways (the
    first with an admin socket, recording its players' games in ``db``) on
    the database ``db``; stopped after."""
    procs = ClusterProcs(tmp, nats_url, db, prefix)  # sets the world's seed
    cluster = Cluster(procs, _plant_all(db))
    sock_dir = _short_dir()
    sock = sock_dir / "g1.sock"
    try:
        with procs:
            procs.worker("wa", "1", monsters=True)
            procs.worker("wb", "2", monsters=True)
            url = procs.gateway(
                "g1",
                max_conns_per_addr=MAX_CONNS_PER_ADDR,
                admin_socket=sock,
                args=["--recordings", db],  # the cluster's database keeps them
            )
            other = procs.gateway("g2", max_conns_per_addr=MAX_CONNS_PER_ADDR)
            yield Front("cluster", url, other, sock, cluster.records), cluster
    finally:
        shutil.rmtree(sock_dir, ignore_errors=True)


@contextlib.contextmanager
def spare_front(
    kind: str, tmp: Path, cluster: Cluster | None, max_players: int | None = None
) -> Iterator[Front]:
    """A front of its own for one test that stops it (a drain) or needs
    options of its own: a new ``serve`` with a new world, or a new gateway
    of the running cluster.

    Args:
        max_players: A cap on the players (``--max-players`` of ``serve``,
            or of the new gateway).
    """
    args = [] if max_players is None else ["--max-players", str(max_players)]
    if kind == "serve":
        with serve_front(tmp, args) as front:
            yield front
        return
    assert cluster is not None
    sock_dir = _short_dir()
    try:
        url = cluster.gateway(sock_dir / "admin.sock", args)
        yield Front("cluster", url, url, sock_dir / "admin.sock", cluster.records)
    finally:
        shutil.rmtree(sock_dir, ignore_errors=True)


async def wait_ready(front: Front, timeout: float = 15.0) -> None:
    """Wait until ``front``'s ``/readyz`` answers 200 (a new gateway has heard a worker)."""
    import urllib.error
    import urllib.request

    http = front.url.replace("ws://", "http://")

    def ready() -> bool:
        try:
            with urllib.request.urlopen(f"{http}/readyz", timeout=2) as answer:
                return int(answer.status) == 200
        except (urllib.error.URLError, OSError):
            return False

    async with asyncio.timeout(timeout):
        while not await asyncio.to_thread(ready):
            await asyncio.sleep(0.1)
