"""Cluster scale benchmark: K workers and G gateways, each pinned to its cores,
under ``bench/scale.py``'s *spread* scene (issue 43, parts 6 to 8).

For each client count N, it starts a NATS server of its own (``--nats URL``
uses another), makes a database of its own on the PostgreSQL server of
``--pg`` (dropped at the end), starts K ``underhall worker`` processes with
monsters (depth ``d`` claimed by worker ``(d - 1) % K``) and G ``underhall
gateway`` processes, each pinned to its core (``--worker-cores``,
``--gateway-cores``; every thread, with ``sched_setaffinity``), then saves
N characters at their depths as ``bench/scale.py --scene spread`` does
(:func:`scale.seat_groups`: health and defence for their depth, in a random
room of depth ``1 + i % D``) and starts one lean load generator
(``python -m client.loadgen``) per gateway, pinned to ``--load-cores``, that
resumes its share of them there, ``--join-rate`` joins a second in all; one
client in four walks, the others only read.

Once every join was answered (or joins stalled), every client stood at its
depth, and a warm-up passed, it measures a window of ``--window`` seconds:

- per process (workers, gateways, NATS, PostgreSQL, load generators): CPU as
  % of one core (``/proc/PID/stat`` deltas) and RSS; for a worker its
  players and the ticks per second it delivered (from its heartbeats on
  ``<prefix>.hb.<id>``, which carry its world tick and its players);
- µs of CPU per client-tick of workers, gateways, NATS and PostgreSQL apart:
  their CPU seconds over the client-ticks the workers delivered (players ×
  ticks, summed over heartbeats). PostgreSQL is the backends serving the
  benchmark's database (``pg_stat_activity``), not the server's shared
  background processes;
- a gateway's resident memory per connected player, above its RSS before
  any client came;
- frames and payload bytes per client per second, command→effect p50 / p99,
  join time (TCP connect to ``welcome`` and to the first ``snap``) p50 / p99
  / max, refused joins by reason, failed connections and errors, as the load
  generators counted them.

With ``--kill-worker``, the worker with the most players is killed (SIGKILL)
in the middle of the window. The benchmark reads, at once, the saved tick of
each of its characters (how much play the kill lost: the worker's tick when
it died, less the tick of the character's last checkpoint), then asks every
gateway's admin socket ``who`` every 0.25 s until each of those players is
seated on another worker and playing, and reports how long that took
(every one, and the median). A player shown on two gateways at once is a
problem.

At the end the load generators leave, the workers drain (they save everyone)
and the database is checked as ``bench/cluster.py`` checks it
(:func:`cluster.lost_or_duplicated`): every character once, no actor id
twice, and every one saved at least once after it joined.

``--serve`` also runs ``bench/scale.py``'s spread scene on ``serve`` (one
core) with N / K clients, the same players per core as a worker, and prints
the ratio of the two costs per client-tick (the issue's target: 1.2 at most).

Usage::

    .venv/bin/python bench/cluster_scale.py [-n 400] [--workers 2] [--gateways 1]
        [--depths 10] [--join-rate 100] [--window 20] [--warmup 5]
        [--worker-cores 0,1] [--gateway-cores 2] [--load-cores 3-5] [--nats-cores 2]
        [--kill-worker] [--serve] [--json] [--logs DIR]
        [--pg postgresql://postgres@127.0.0.1:5432/postgres] [--nats nats://127.0.0.1:4222]

``--logs DIR`` keeps the workers', gateways' and load generators' logs
(``DIR/n<N>/``). With ``--nats``, NATS's CPU is that of the process
listening on its port on this machine, whoever else uses it.

Cores default to one per worker, then one per gateway, the rest for the load
generators, when the machine has that many (K + G + 1); else (a 2-core
machine) every cluster process shares the first core and the load
generators the last. NATS shares the gateways' cores unless
``--nats-cores`` says otherwise. Linux only (``/proc``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/scale.py, bench/cluster.py

import msgpack  # type: ignore[import-untyped]
import psycopg
from cluster import bench_database, lost_or_duplicated, start_nats
from scale import (
    SCENES,
    Joins,
    check_pinning,
    client_counts,
    fill_joins,
    read_cpu,
    run_all,
    seat_groups,
    stop,
)
from scale import measure as measure_serve

from client.loadgen import raise_open_files
from client.loadstats import diff, merge, percentile
from tests.cluster.procs import SEED, ClusterProcs

TICK_RATE = 10
"""The workers' ticks per second (their default)."""
POLL_S = 0.25
"""Seconds between two looks at the load generators' counts (and ``who``)."""
PROC_KEYS = ("name", "role", "cores", "cpu_pct", "sys_pct", "rss_mb", "players", "ticks_per_s")


@dataclass(slots=True)
class Proc:
    """One process over the window: CPU as % of one core, RSS at its end."""

    name: str
    role: str
    cores: str
    cpu_pct: float = 0.0
    sys_pct: float = 0.0
    rss_mb: float = 0.0
    players: float | None = None
    ticks_per_s: float | None = None


@dataclass(slots=True)
class Kill:
    """``--kill-worker``: the worker killed and how its players fared.

    Times in seconds from the kill; ``lost_s`` is play lost per character
    (the worker's tick at the kill less the tick of its last checkpoint).
    """

    worker: str
    players: int
    at_s: float = 0.0
    recovered: int = 0
    recovery_s: float | None = None
    recovery_p50_s: float | None = None
    gone: int = 0
    lost_max_s: float | None = None
    lost_over_interval: int = 0
    save_interval_s: float = 0.0


@dataclass(slots=True)
class Row(Joins):
    """One measured window. Rates per second; times in ms unless named ``_s``."""

    scene: str
    requested: int
    workers: int = 0
    gateways: int = 0
    depths: int = 0
    join_rate: float = 0.0
    clients: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    settled: int = 0
    window_s: float = 0.0
    processes: list[Proc] = field(default_factory=list)
    client_ticks_per_s: float = 0.0
    us_per_client_tick: float | None = None
    """The workers' µs of CPU per client-tick (the figure to hold against ``serve``)."""
    gateway_us_per_client_tick: float | None = None
    nats_us_per_client_tick: float | None = None
    pg_us_per_client_tick: float | None = None
    gateway_kb_per_player: float | None = None
    frames_per_client_s: float = 0.0
    bytes_per_client_s: float = 0.0
    cmd_p50_ms: float | None = None
    cmd_p99_ms: float | None = None
    serve_clients: int | None = None
    serve_us_per_client_tick: float | None = None
    kill: Kill | None = None
    problems: list[str] = field(default_factory=list)
    note: str = ""


# --- processes and their cores -------------------------------------------------------------


def parse_cores(p: argparse.ArgumentParser, option: str, text: str | None) -> list[int] | None:
    """The cores of a list such as ``0,2-4`` (None for None); a usage error through ``p``."""
    if text is None:
        return None
    cores: list[int] = []
    try:
        for part in filter(None, (s.strip() for s in text.split(","))):
            lo, _, hi = part.partition("-")
            cores.extend(range(int(lo), int(hi or lo) + 1))
    except ValueError:
        p.error(f"{option}: not a list of cores such as 0,2-4: {text!r}")
    if not cores:
        p.error(f"{option}: no cores in {text!r}")
    return cores


def default_cores(workers: int, gateways: int) -> tuple[list[int], list[int], list[int]]:
    """Worker, gateway and load cores: one each while the machine has them, else shared."""
    n = os.cpu_count() or 1
    if n >= workers + gateways + 1:
        return (
            list(range(workers)),
            list(range(workers, workers + gateways)),
            list(range(workers + gateways, n)),
        )
    return [0], [0], [n - 1]


def pin(pid: int, cores: list[int] | None) -> None:
    """Bind every thread of process ``pid`` to ``cores`` (threads it starts later
    inherit it); nothing for None."""
    if cores is None:
        return
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(ProcessLookupError):
            os.sched_setaffinity(int(task.name), cores)


def cores_text(cores: list[int] | None) -> str:
    return "-" if cores is None else ",".join(map(str, cores))


def listener_pid(port: int) -> int | None:
    """The process listening on TCP ``port`` of this machine (None if not found:
    another machine, or no right to look)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                cols = line.split()
                if cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(f"socket:[{cols[9]}]")
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in (proc / "fd").iterdir():
                if os.readlink(fd) in inodes:
                    return int(proc.name)
    return None


def pg_backends(pg: str, db: str) -> set[int]:
    """PIDs of the PostgreSQL backends connected to the database of URL ``db``."""
    name = urlsplit(db).path.lstrip("/")
    with psycopg.connect(pg, autocommit=True) as conn:
        rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", (name,))
        return {int(r[0]) for r in rows.fetchall()}


def cpu_or_none(pid: int) -> tuple[float, float, int] | None:
    """:func:`scale.read_cpu`, or None for a process that is gone."""
    try:
        return read_cpu(pid)
    except OSError:
        return None


# --- what the cluster and the load generators say --------------------------------------------


class Beats(threading.Thread):
    """The workers' heartbeats (``[tick, players]`` each second), heard on a
    NATS connection of its own in a thread of its own."""

    def __init__(self, nats_url: str, subject: str) -> None:
        super().__init__(daemon=True)
        self.nats_url = nats_url
        self.subject = subject
        self.heard: dict[str, list[tuple[float, int, int]]] = {}
        """Worker id -> (``time.monotonic()``, tick, players), in order."""
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._quit: asyncio.Event | None = None

    def run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        import nats

        self._loop = asyncio.get_running_loop()
        self._quit = asyncio.Event()
        nc = await nats.connect(self.nats_url, name="cluster_scale beats")
        await nc.subscribe(self.subject, cb=self._on)
        self._ready.set()
        await self._quit.wait()
        await nc.close()

    async def _on(self, msg: Any) -> None:
        tick, players = msgpack.unpackb(msg.data)[:2]  # the worker's heartbeat: [tick, players]
        worker = msg.subject.rsplit(".", 1)[1]
        self.heard.setdefault(worker, []).append((time.monotonic(), int(tick), int(players)))

    def start_listening(self) -> None:
        self.start()
        if not self._ready.wait(10):
            raise RuntimeError(f"no NATS connection to {self.nats_url}")

    def close(self) -> None:
        if self._loop is not None and self._quit is not None:
            self._loop.call_soon_threadsafe(self._quit.set)
        self.join(5)

    def span(self, worker: str, t0: float, t1: float) -> tuple[float, float, float]:
        """Over the heartbeats heard in ``[t0, t1]`` (monotonic s): ticks per
        second while the worker lived, client-ticks per second (players ×
        ticks) over the whole span (a worker that fell silent delivered none
        after) and mean players."""
        beats = [b for b in self.heard.get(worker, []) if t0 <= b[0] <= t1]
        if len(beats) < 2 or beats[-1][0] <= beats[0][0]:
            return 0.0, 0.0, float(beats[0][2]) if beats else 0.0
        lived = beats[-1][0] - beats[0][0]
        silent = beats[-1][0] < t1 - 2.5  # heartbeats come every second
        client_ticks = sum((a[2] + b[2]) / 2 * (b[1] - a[1]) for a, b in itertools.pairwise(beats))
        players = sum(b[2] for b in beats) / len(beats)
        per_s = client_ticks / (t1 - beats[0][0] if silent else lived)
        return (beats[-1][1] - beats[0][1]) / lived, per_s, players

    def tick_at(self, worker: str, when: float) -> float | None:
        """The worker's tick at ``when`` (monotonic s), from its last two heartbeats before."""
        beats = [b for b in self.heard.get(worker, []) if b[0] <= when]
        if not beats:
            return None
        t, tick, _ = beats[-1]
        rate = float(TICK_RATE)
        if len(beats) >= 2 and t > beats[-2][0]:
            rate = (tick - beats[-2][1]) / (t - beats[-2][0])
        return tick + (when - t) * rate


class Gens:
    """The load generators (one per gateway) and the last snapshot each printed."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []
        self.latest: list[dict[str, Any] | None] = []

    def start(self, cmd: list[str], env: dict[str, str], err: IO[bytes]) -> None:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, env=env)
        k = len(self.procs)
        self.procs.append(proc)
        self.latest.append(None)
        threading.Thread(target=self._read, args=(k, proc), daemon=True).start()

    def _read(self, k: int, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            with contextlib.suppress(ValueError):
                self.latest[k] = json.loads(raw)

    def now(self) -> list[dict[str, Any]] | None:
        """Every generator's last snapshot (None until each has printed one)."""
        snaps = list(self.latest)
        return None if any(s is None for s in snaps) else [s for s in snaps if s is not None]

    def alive(self) -> bool:
        return all(p.poll() is None for p in self.procs)

    def stop(self) -> None:
        for proc in self.procs:
            stop(proc, signal.SIGINT)


def who(sockets: list[Path]) -> dict[str, list[dict[str, Any]]]:
    """Every gateway's players (its admin socket's ``who``), by name: one
    entry per gateway that holds the name (two: a duplicate)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for path in sockets:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(15)
            s.connect(str(path))
            s.sendall(b'{"cmd": "who"}\n')
            data = b""
            while not data.endswith(b"\n"):
                chunk = s.recv(1 << 20)
                if not chunk:
                    break
                data += chunk
        for entry in json.loads(data).get("players", []):
            out.setdefault(str(entry["name"]), []).append(entry)
    return out


# --- one run ---------------------------------------------------------------------------------


@dataclass(slots=True)
class Setup:
    """What a run started: the processes measured, by name."""

    pids: dict[str, int] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)
    cores: dict[str, list[int] | None] = field(default_factory=dict)
    idle_rss: dict[str, int] = field(default_factory=dict)
    sockets: list[Path] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    load_cores: list[int] | None = None

    def add(self, name: str, role: str, pid: int, cores: list[int] | None) -> None:
        pin(pid, cores)
        self.pids[name], self.roles[name], self.cores[name] = pid, role, cores


def measure(args: argparse.Namespace, n: int) -> Row:
    """Start a cluster, load it with ``n`` spread clients and measure a window."""
    k, g = args.workers, args.gateways
    row = Row("spread", n, k, g, args.depths, args.join_rate)
    with (
        tempfile.TemporaryDirectory(prefix="underhall-cluster-scale-") as tmp_name,
        contextlib.ExitStack() as stack,
    ):
        tmp = Path(tmp_name)
        setup = Setup()
        if args.nats is None:
            nats_proc, nats_url = start_nats(tmp)
            stack.callback(stop, nats_proc)
            setup.add("nats", "nats", nats_proc.pid, args.nats_cores)
        else:
            nats_url = args.nats
            nats_pid = listener_pid(urlsplit(nats_url).port or 4222)
            if nats_pid is not None:  # shared: its CPU includes others' traffic
                setup.add("nats", "nats", nats_pid, None)
        db = stack.enter_context(bench_database(args.pg))
        prefix = f"uhs{os.getpid()}_{secrets.token_hex(3)}"
        cluster = stack.enter_context(
            ClusterProcs(tmp, nats_url, db, prefix, args.lease, args.save_interval)
        )
        for w in range(k):
            levels = ",".join(str(d) for d in range(w + 1, args.depths + 1, k))
            cluster.worker(f"w{w}", levels, monsters=True)
            cores = None if args.no_pin else [args.worker_cores[w % len(args.worker_cores)]]
            setup.add(f"w{w}", "worker", cluster.procs[f"w{w}"].pid, cores)
        urls = []
        for j in range(g):
            sock = tmp / f"g{j}.sock"
            urls.append(cluster.gateway(f"g{j}", admin_socket=sock))
            setup.sockets.append(sock)
            cores = None if args.no_pin else [args.gateway_cores[j % len(args.gateway_cores)]]
            setup.add(f"g{j}", "gateway", cluster.procs[f"g{j}"].pid, cores)
            setup.idle_rss[f"g{j}"] = read_cpu(cluster.procs[f"g{j}"].pid)[2]
        shares = [n // g + (j < n % g) for j in range(g)]
        groups = [(urls[j], f"g{j}s", shares[j]) for j in range(g)]
        seat_groups(db, groups, args.depths, SEED, tmp / "home")
        setup.names = [f"{prefix_}{i}" for _, prefix_, m in groups for i in range(m)]
        beats = Beats(nats_url, f"{prefix}.hb.*")
        beats.start_listening()
        stack.callback(beats.close)
        gens = Gens()
        stack.callback(gens.stop)
        setup.load_cores = None if args.no_pin else args.load_cores
        env = dict(os.environ, UNDERHALL_HOME=str(tmp / "home"))
        err = stack.enter_context((tmp / "loadgen.err").open("wb"))
        _, walk_every = SCENES["spread"]
        for j, (url, prefix_, m) in enumerate(groups):
            gens.start(
                pinned_list(setup.load_cores, [
                    sys.executable, "-m", "client.loadgen", "--url", url, "-n", str(m),
                    "--duration", "0", "--rate", str(args.join_rate * m / n),
                    "--procs", str(args.procs), "--seed", str(args.seed + j),
                    "--prefix", prefix_, "--jsonl", "--depths", str(args.depths),
                    "--walk-every", str(walk_every),
                ]),
                env,
                err,
            )  # fmt: skip
        try:
            _run(args, row, setup, cluster, gens, beats, db)
        finally:
            gens.stop()
        time.sleep(1.0)  # the leaves are saved
        for name in cluster.procs:
            cluster.signal(name, signal.SIGTERM)  # workers drain: they save everyone
        for name in cluster.procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                cluster.wait(name, 30)
        if row.window_s > 0:
            row.problems.extend(check_saved(db, setup.names))
        if args.logs is not None:  # the processes' logs, for a look at what they did
            dest = Path(args.logs) / f"n{n}"
            dest.mkdir(parents=True, exist_ok=True)
            for log in [*tmp.glob("*.log"), tmp / "loadgen.err"]:
                shutil.copy(log, dest / log.name)
    return row


def pinned_list(cores: list[int] | None, cmd: list[str]) -> list[str]:
    """``cmd`` run by ``taskset`` on ``cores`` (None: as it is)."""
    return cmd if cores is None else ["taskset", "-c", cores_text(cores), *cmd]


def check_saved(db: str, names: list[str]) -> list[str]:
    """:func:`cluster.lost_or_duplicated`, and every character a worker took
    charge of (epoch 1 or more) saved by one since."""
    problems, saved = lost_or_duplicated(db, names)
    unsaved = [name for name, (_, epoch, tick) in saved.items() if epoch >= 1 and tick <= 0]
    if unsaved:
        problems.append(f"{len(unsaved)} characters never saved by a worker, e.g. {unsaved[:3]}")
    return problems


def _run(
    args: argparse.Namespace,
    row: Row,
    setup: Setup,
    cluster: ClusterProcs,
    gens: Gens,
    beats: Beats,
    db: str,
) -> None:
    """The phases: joins, settling, warm-up, the window (and the kill)."""
    n = row.requested
    started = time.monotonic()
    best, best_t = -1, started

    def wait(done: Callable[[dict[str, Any]], bool], until: float) -> dict[str, Any] | None:
        while True:
            snaps = gens.now()
            if snaps is not None:
                merged = merge(snaps)
                if done(merged) or time.monotonic() > until:
                    return merged
            if not gens.alive():
                row.note = "a load generator exited"
                return None
            time.sleep(POLL_S)

    def answered(s: dict[str, Any]) -> bool:
        nonlocal best, best_t
        if s["welcomed"] > best:
            best, best_t = s["welcomed"], time.monotonic()
        stalled = time.monotonic() - best_t > args.join_stall
        done: int = s["welcomed"] + sum(s["refused"].values())
        done += sum(s["connect_failures"].values())
        return done >= n or (time.monotonic() - started > n / args.join_rate and stalled)

    snap = wait(answered, float("inf"))
    if snap is None:
        return
    row.join_s = round(time.monotonic() - started, 1)
    if snap["welcomed"] < n:
        row.note = f"joins ended at {snap['welcomed']} of {n}"
    if wait(lambda s: s["settled"] >= s["connected"], time.monotonic() + args.settle) is None:
        return
    time.sleep(args.warmup)
    first, t0 = gens.now(), time.monotonic()
    pg0 = pg_backends(args.pg, db)
    cpu0 = {name: cpu_or_none(pid) for name, pid in setup.pids.items()}
    pgcpu0 = {pid: cpu_or_none(pid) for pid in pg0}
    kill = Killing(args, setup, cluster, beats, db) if args.kill_worker else None
    while time.monotonic() < t0 + args.window:
        if kill is not None:
            kill.step(time.monotonic() - t0)
        if not gens.alive():
            row.note = "a load generator exited"
            return
        time.sleep(POLL_S)
    last, t1 = gens.now(), time.monotonic()
    cpu1 = {name: cpu_or_none(pid) for name, pid in setup.pids.items()}
    pg1 = pg_backends(args.pg, db)
    pgcpu1 = {pid: cpu_or_none(pid) for pid in pg0 | pg1}
    assert first is not None and last is not None
    _fill(row, setup, beats, (t0, t1), (first, last), (cpu0, cpu1))
    _fill_pg(row, pgcpu0, pgcpu1, t1 - t0)
    if kill is not None:
        row.kill = kill.finish(time.monotonic() + args.recover_timeout)
        row.problems.extend(kill.problems)


def _fill(
    row: Row,
    setup: Setup,
    beats: Beats,
    times: tuple[float, float],
    snaps: tuple[list[dict[str, Any]], list[dict[str, Any]]],
    cpu: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    (t0, t1), (first, last), (cpu0, cpu1) = times, snaps, cpu
    secs = t1 - t0
    row.window_s = round(secs, 1)
    diffs = [diff(b, a) for a, b in zip(first, last, strict=True)]
    d = merge(diffs)
    end = merge(last)
    clients = sum((a["connected"] + b["connected"]) / 2 for a, b in zip(first, last, strict=True))
    row.clients = end["connected"]
    row.settled = end["settled"]
    row.joins_refused, row.connect_failures = end["refused"], end["connect_failures"]
    row.errors = end["errors"]
    fill_joins(row, end)
    if clients:
        row.frames_per_client_s = round(sum(x["frames"] / x["seconds"] for x in diffs) / clients, 2)
        row.bytes_per_client_s = round(sum(x["bytes"] / x["seconds"] for x in diffs) / clients)
    row.cmd_p50_ms, row.cmd_p99_ms = percentile(d["lat"], 0.5), percentile(d["lat"], 0.99)
    by_role: dict[str, float] = {}
    rate = 0.0
    gateway_kb = []
    for name in setup.pids:
        role, a, b = setup.roles[name], cpu0[name], cpu1[name]
        proc = Proc(name, role, cores_text(setup.cores[name]))
        if a is not None and b is not None:
            proc.cpu_pct = round(100 * (b[0] + b[1] - a[0] - a[1]) / secs, 1)
            proc.sys_pct = round(100 * (b[1] - a[1]) / secs, 1)
            proc.rss_mb = round(b[2] / 2**20, 1)
            by_role[role] = by_role.get(role, 0.0) + b[0] + b[1] - a[0] - a[1]
        if role == "worker":
            ticks, client_ticks, players = beats.span(name, t0, t1)
            proc.ticks_per_s, proc.players = round(ticks, 2), round(players, 1)
            rate += client_ticks
        elif role == "gateway" and b is not None:
            j = int(name[1:])
            proc.players = last[j]["connected"]
            if proc.players:
                gateway_kb.append((b[2] - setup.idle_rss[name]) / 1024 / proc.players)
        row.processes.append(proc)
    for j, (a, b) in enumerate(zip(first, last, strict=True)):
        used = b["cpu_s"] - a["cpu_s"]
        cores = "-" if setup.load_cores is None else cores_text(setup.load_cores)
        row.processes.append(Proc(f"load{j}", "load", cores, cpu_pct=round(100 * used / secs, 1)))
    row.client_ticks_per_s = round(rate, 1)
    if rate:
        per = 1e6 / (rate * secs)
        row.us_per_client_tick = round(by_role.get("worker", 0.0) * per, 1)
        row.gateway_us_per_client_tick = round(by_role.get("gateway", 0.0) * per, 1)
        if "nats" in by_role:
            row.nats_us_per_client_tick = round(by_role["nats"] * per, 2)
    if gateway_kb:
        row.gateway_kb_per_player = round(max(gateway_kb), 1)


def _fill_pg(
    row: Row,
    before: dict[int, tuple[float, float, int] | None],
    after: dict[int, tuple[float, float, int] | None],
    secs: float,
) -> None:
    """PostgreSQL's row: the benchmark database's backends, summed (a backend
    that connected during the window counts from zero)."""
    used = 0.0
    rss = 0
    for pid, b in after.items():
        if b is None:
            continue
        a = before.get(pid) or (0.0, 0.0, 0)
        used += b[0] + b[1] - a[0] - a[1]
        rss += b[2]
    row.processes.append(
        Proc(
            f"postgres×{sum(v is not None for v in after.values())}",
            "postgres",
            "-",
            cpu_pct=round(100 * used / secs, 1),
            rss_mb=round(rss / 2**20, 1),
        )
    )
    if row.client_ticks_per_s:
        row.pg_us_per_client_tick = round(1e6 * used / (row.client_ticks_per_s * secs), 2)


class Killing:
    """``--kill-worker``: kill the busiest worker half-way through the window,
    then follow its players until each is playing on another worker."""

    def __init__(
        self,
        args: argparse.Namespace,
        setup: Setup,
        cluster: ClusterProcs,
        beats: Beats,
        db: str,
    ) -> None:
        self.args = args
        self.setup = setup
        self.cluster = cluster
        self.beats = beats
        self.db = db
        self.at = args.window / 2
        self.report: Kill | None = None
        self.killed_t = 0.0
        self.waiting: set[str] = set()
        self.took: list[float] = []
        self.problems: list[str] = []

    def step(self, elapsed: float) -> None:
        """Kill when the time has come; afterwards, look who plays again."""
        if self.report is None:
            if elapsed >= self.at:
                self._kill(elapsed)
        elif self.waiting:
            self._look()

    def _kill(self, elapsed: float) -> None:
        seated = who(self.setup.sockets)
        held: dict[str, list[str]] = {}
        for name, entries in seated.items():
            held.setdefault(str(entries[0]["worker"]), []).append(name)
        victim = max(sorted(held), key=lambda w: len(held[w]))
        self.waiting = set(held[victim])
        self.cluster.signal(victim, signal.SIGKILL)
        self.killed_t = time.monotonic()
        self.report = Kill(victim, len(self.waiting), round(elapsed, 1))
        self.report.save_interval_s = self.args.save_interval
        with psycopg.connect(self.db) as conn:
            rows = conn.execute(
                "SELECT name, saved_tick FROM players WHERE name = ANY(%s)", (sorted(self.waiting),)
            ).fetchall()
        tick = self.beats.tick_at(victim, self.killed_t)
        if tick is not None and rows:
            # The tick at the kill is estimated from the heartbeats (to about a
            # tick): a character saved in the kill's own tick may come out below 0.
            lost = [max(0.0, (tick - int(r[1])) / TICK_RATE) for r in rows]
            self.report.lost_max_s = round(max(lost), 2)
            # A checkpoint takes the tick's state and is written just after it.
            limit = self.args.save_interval + 2 / TICK_RATE
            self.report.lost_over_interval = sum(s > limit for s in lost)

    def _look(self) -> None:
        assert self.report is not None
        seated = who(self.setup.sockets)
        now = time.monotonic() - self.killed_t
        twice = sorted(name for name, entries in seated.items() if len(entries) > 1)
        if twice:
            self.problems.append(f"seated on two gateways at {now:.1f} s: {twice[:5]}")
        for name in list(self.waiting):
            entries = seated.get(name)
            if entries is None:  # its client was dropped
                self.report.gone += 1
                self.waiting.discard(name)
            elif entries[0]["worker"] != self.report.worker and entries[0]["state"] == "playing":
                self.took.append(now)
                self.waiting.discard(name)

    def finish(self, deadline: float) -> Kill | None:
        """Follow the players until all play again or ``deadline``; the report."""
        while self.report is not None and self.waiting and time.monotonic() < deadline:
            self._look()
            time.sleep(POLL_S)
        if self.report is None:
            return None
        self.report.recovered = len(self.took)
        if self.took:
            ordered = sorted(self.took)
            self.report.recovery_p50_s = round(ordered[(len(ordered) - 1) // 2], 2)
        if not self.waiting and not self.report.gone:
            self.report.recovery_s = round(max(self.took, default=0.0), 2)
        if self.waiting:
            self.problems.append(
                f"{len(self.waiting)} players of the killed worker not seated again"
            )
        if self.report.lost_over_interval:
            self.problems.append(
                f"{self.report.lost_over_interval} characters lost more than one checkpoint interval"
            )
        return self.report


def measure_against_serve(args: argparse.Namespace, row: Row) -> None:
    """``bench/scale.py``'s spread scene on ``serve`` with the workers' players per core."""
    per_core = max(1, row.requested // row.workers)
    serve_args = argparse.Namespace(
        no_pin=args.no_pin, seed=SEED, server_tree="", rate=args.join_rate, procs=args.procs,
        tick_rate=TICK_RATE, join_stall=args.join_stall, settle=args.settle,
        warmup=args.warmup, window=args.window,
    )  # fmt: skip
    served = measure_serve(serve_args, "spread", per_core)
    row.serve_clients = served.clients
    row.serve_us_per_client_tick = served.us_per_client_tick


# --- the report ------------------------------------------------------------------------------


def format_row(r: Row) -> str:
    """One run as a process table and the figures below it."""

    def f(v: float | None, spec: str = "{:.1f}") -> str:
        return "-" if v is None else spec.format(v)

    head = (
        f"cluster: {r.workers} workers, {r.gateways} gateways, {r.clients:,} of "
        f"{r.requested:,} clients over {r.depths} depths (one in four walking), joins at "
        f"{r.join_rate:g}/s, joined in {r.join_s} s; window {r.window_s} s"
    )
    out = [head]
    cells = [["process", "cores", "CPU %", "sys %", "RSS MB", "players", "ticks/s"]]
    for p in r.processes:
        cells.append(
            [p.name, p.cores, f(p.cpu_pct), f(p.sys_pct), f(p.rss_mb, "{:.0f}"),
             f(p.players, "{:,.0f}"), f(p.ticks_per_s, "{:.2f}")]
        )  # fmt: skip
    widths = [max(len(c[i]) for c in cells) for i in range(len(cells[0]))]
    out += [
        "  " + "  ".join(c.rjust(w) for c, w in zip(line, widths, strict=True)) for line in cells
    ]
    ratio = ""
    if r.serve_us_per_client_tick and r.us_per_client_tick:
        ratio = (
            f"; serve with {r.serve_clients:,} clients {r.serve_us_per_client_tick:.1f}: "
            f"workers / serve = {r.us_per_client_tick / r.serve_us_per_client_tick:.2f}"
        )
    out.append(
        f"µs of CPU per client-tick ({r.client_ticks_per_s:,.0f} client-ticks/s): workers "
        f"{f(r.us_per_client_tick)}, gateways {f(r.gateway_us_per_client_tick)}, NATS "
        f"{f(r.nats_us_per_client_tick, '{:.2f}')}, PostgreSQL "
        f"{f(r.pg_us_per_client_tick, '{:.2f}')}{ratio}"
    )
    out.append(f"gateway memory: {f(r.gateway_kb_per_player)} KB per connected player above idle")
    out.append(
        f"per client: {r.frames_per_client_s:.1f} frames/s, {r.bytes_per_client_s:,.0f} B/s; "
        f"command→effect p50 {f(r.cmd_p50_ms, '{:.0f}')} / p99 {f(r.cmd_p99_ms, '{:.0f}')} ms"
    )
    out.append(
        f"join: to welcome p50 {f(r.join_welcome_p50_ms, '{:.0f}')} / p99 "
        f"{f(r.join_welcome_p99_ms, '{:.0f}')} / max {f(r.join_welcome_max_ms, '{:.0f}')} ms, "
        f"to first snap p50 {f(r.join_snap_p50_ms, '{:.0f}')} / p99 "
        f"{f(r.join_snap_p99_ms, '{:.0f}')} / max {f(r.join_snap_max_ms, '{:.0f}')} ms; "
        f"{r.settled:,} at their depth"
    )

    def counted(c: dict[str, int]) -> str:
        return ", ".join(f"{k} {v:,}" for k, v in c.items()) or "none"

    out.append(
        f"refused joins: {counted(r.joins_refused)}; connect failures: "
        f"{counted(r.connect_failures)}; errors: {counted(r.errors)}"
    )
    if r.kill is not None:
        k = r.kill
        out.append(
            f"killed {k.worker} (SIGKILL) {k.at_s} s into the window with {k.players:,} players: "
            f"{k.recovered:,} playing again on another worker, all within "
            f"{f(k.recovery_s, '{:.1f}')} s (median {f(k.recovery_p50_s, '{:.1f}')} s), "
            f"{k.gone} dropped; play lost at most {f(k.lost_max_s, '{:.1f}')} s "
            f"(checkpoint interval {k.save_interval_s:g} s), {k.lost_over_interval} over it"
        )
    out.append(
        "check: " + ("; ".join(r.problems) if r.problems else "no character lost or duplicated")
    )
    if r.note:
        out.append(r.note)
    return "\n".join(out)


def _terminated(*_: object) -> None:
    """SIGTERM: stop through the clean-up (processes, database), saying so."""
    print("cluster_scale: terminated (SIGTERM)", file=sys.stderr, flush=True)
    sys.exit(1)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the report (or JSON); 0 if every run measured a
    window and found no problem."""
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("-n", default="400", help="client counts, comma-separated (default 400)")
    p.add_argument("--workers", type=int, default=2, help="K worker processes (default 2)")
    p.add_argument("--gateways", type=int, default=1, help="G gateway processes (default 1)")
    p.add_argument("--depths", type=int, default=10, help="D depths (default 10)")
    p.add_argument("--join-rate", type=float, default=100.0, help="joins per second (default 100)")
    p.add_argument("--window", type=float, default=20.0, help="measured seconds (default 20)")
    p.add_argument("--warmup", type=float, default=5.0, help="seconds after joins (default 5)")
    p.add_argument("--worker-cores", help="cores of the workers, one each in turn (e.g. 0-5)")
    p.add_argument("--gateway-cores", help="cores of the gateways, one each in turn")
    p.add_argument("--load-cores", help="cores the load generators share")
    p.add_argument("--nats-cores", help="cores of the NATS server (default: the gateways')")
    p.add_argument("--no-pin", action="store_true", help="pin nothing")
    p.add_argument("--procs", type=int, default=0, help="processes per load generator")
    p.add_argument("--kill-worker", action="store_true", help="SIGKILL the busiest worker")
    p.add_argument("--recover-timeout", type=float, default=60.0, help="seconds (default 60)")
    p.add_argument("--serve", action="store_true", help="also measure serve at N / K clients")
    p.add_argument("--lease", type=float, default=6.0, help="workers' lease s (default 6)")
    p.add_argument("--save-interval", type=float, default=3.0, help="checkpoint s (default 3)")
    p.add_argument("--join-stall", type=float, default=30.0, help="seconds (default 30)")
    p.add_argument("--settle", type=float, default=60.0, help="seconds (default 60)")
    p.add_argument("--seed", type=int, default=SEED, help="clients' seed")
    p.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/postgres")
    p.add_argument("--nats", default=None, help="use this NATS instead of starting one")
    p.add_argument("--json", action="store_true", help="print one JSON object per run")
    p.add_argument("--logs", help="copy the processes' logs into this directory")
    args = p.parse_args(argv)
    counts = client_counts(p, args.n)
    if args.workers < 1 or args.gateways < 1 or args.depths < 1:
        p.error("need --workers, --gateways and --depths >= 1")
    check_pinning(p, args.no_pin)
    cores = default_cores(args.workers, args.gateways)
    args.worker_cores = parse_cores(p, "--worker-cores", args.worker_cores) or cores[0]
    args.gateway_cores = parse_cores(p, "--gateway-cores", args.gateway_cores) or cores[1]
    args.load_cores = parse_cores(p, "--load-cores", args.load_cores) or cores[2]
    args.nats_cores = parse_cores(p, "--nats-cores", args.nats_cores) or args.gateway_cores
    if args.no_pin:
        args.nats_cores = None
    if args.procs < 1:  # the load cores shared out between the generators
        args.procs = max(1, round(len(args.load_cores) / args.gateways))
    raise_open_files(2 * max(counts) + 256)
    signal.signal(signal.SIGTERM, _terminated)

    def one(_scene: str, n: int) -> Row:
        row = measure(args, n)
        if args.serve and row.window_s > 0:
            measure_against_serve(args, row)
        return row

    rows = run_all([("spread", n) for n in counts], one, args.json)
    if not args.json:
        print("\n\n".join(format_row(r) for r in rows))
    return 0 if all(r.window_s > 0 and not r.problems for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
