"""Scale benchmark: what one server core costs per client, from 250 to 4,000 clients.

For each scene and each N, starts ``underhall serve`` (a throw-away database,
10 ticks/s) pinned to core 0 and the lean load generator
(``python -m client.loadgen``) pinned to core 1, both with ``taskset``. It
waits until every join was answered (or joins stall), then a warm-up, then
measures a fixed window:

- server CPU as % of one core, user and system apart (``/proc/PID/stat``);
- µs of server CPU per client-tick: CPU seconds / (clients × ticks in the window);
- ticks/s the server completed, and frames/s each client actually received;
- tick duration p50 / p99 / max (the server writes every tick's duration to
  the file named by ``UNDERHALL_TICK_LOG``), and below the table the mean ms
  of a tick spent in the game's step and in writing its messages, and the
  players' messages skipped because their client was behind (0 when every
  client got its frame in the tick its view changed);
- payload bytes/s per client and the mean frame size;
- command→effect p50 / p99 (the load generator's histogram over the window);
- server RSS at the end of the window, and the load generator's own CPU (as
  % of one core, as clients per core at that load, and µs per frame received);
- join latency p50 / p99 / max: from the start of each client's TCP connect
  to its ``welcome``, and to its first ``snap`` (the table's "join" columns),
  over every join up to the end of the window; refused joins and failed
  connections are counted by reason below the table.

Scenes:

- ``crowded``: every client on depth 1, walking.
- ``spread``: client ``i`` resumes a character saved (by :func:`seat_spread`,
  before the server starts) in a room of depth ``1 + i % 10``; one
  in four walks, the others only read. The window starts when every client
  stands at its depth (or after ``--settle`` seconds); the report says how
  many did.

Usage::

    .venv/bin/python bench/scale.py [-n 250,500,1000,2000,4000] [--scene crowded,spread]
        [--window 20] [--warmup 5] [--rate 100] [--json]

Linux only (``/proc``, ``taskset``); both cores should be otherwise idle.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, ClassVar, Protocol, TypeVar

from client.loadgen import raise_open_files
from client.loadstats import diff, percentile

READY_TIMEOUT_S = 30.0
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")
SCENES = {"crowded": (1, 1), "spread": (10, 4)}
"""Scene name -> (depths, one client in K walks)."""


@dataclass(slots=True, kw_only=True)
class Joins:
    """How the clients got in, as the load generator counted them: joins
    refused by reason, failed connections, seconds until every join was
    answered, and join latency in ms (:func:`fill_joins`)."""

    joins_refused: dict[str, int] = field(default_factory=dict)
    connect_failures: dict[str, int] = field(default_factory=dict)
    join_s: float = 0.0
    join_welcome_p50_ms: float | None = None
    join_welcome_p99_ms: float | None = None
    join_welcome_max_ms: float | None = None
    join_snap_p50_ms: float | None = None
    join_snap_p99_ms: float | None = None
    join_snap_max_ms: float | None = None


@dataclass(slots=True)
class Row(Joins):
    """One measured window. Rates per second; times in ms; sizes in bytes."""

    scene: str
    requested: int
    clients: int = 0
    settled: int = 0
    window_s: float = 0.0
    cpu_user_pct: float = 0.0
    cpu_sys_pct: float = 0.0
    us_per_client_tick: float | None = None
    ticks_per_s: float = 0.0
    frames_per_client_s: float = 0.0
    tick_p50_ms: float | None = None
    tick_p99_ms: float | None = None
    tick_max_ms: float | None = None
    gc_pause_max_ms: float | None = None
    tick_step_ms: float | None = None
    tick_write_ms: float | None = None
    frames_skipped: int | None = None
    bytes_per_client_s: float = 0.0
    mean_frame_bytes: float | None = None
    cmd_p50_ms: float | None = None
    cmd_p99_ms: float | None = None
    commands_per_client_s: float = 0.0
    rss_mb: float = 0.0
    loadgen_cpu_pct: float = 0.0
    loadgen_clients_per_core: float | None = None
    loadgen_us_per_frame: float | None = None
    rejects: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    depths: dict[str, int] = field(default_factory=dict)
    note: str = ""


def read_cpu(pid: int) -> tuple[float, float, int]:
    """User and system CPU seconds (all threads) and RSS bytes of process ``pid``.

    Raises:
        OSError: the process is gone.
    """
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "
    rss_pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    return int(fields[11]) / _CLOCK_TICKS, int(fields[12]) / _CLOCK_TICKS, rss_pages * _PAGE


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def pinned(core: int | None, cmd: list[str]) -> list[str]:
    """``cmd`` run by ``taskset -c core`` (``core`` None: as it is)."""
    return cmd if core is None else ["taskset", "-c", str(core), *cmd]


def start_server(
    tmp: Path,
    port: int,
    tick_rate: int,
    seed: int,
    core: int | None,
    tree: Path | None = None,
    extra: tuple[str, ...] = (),
) -> subprocess.Popen[bytes]:
    """Start ``underhall serve`` and return once it listens.

    ``tree``: run the server from that source tree instead (its modules come
    first on the path; for A/B runs against another commit of the server).
    ``extra``: more options for ``underhall serve``.

    Raises:
        RuntimeError: it exited or did not listen within :data:`READY_TIMEOUT_S`.
    """
    log_path = tmp / "server.log"
    cmd = pinned(core, [
        sys.executable, "-m", "server.cli", "serve", "--host", "127.0.0.1",
        "--port", str(port), "--tick-rate", str(tick_rate), "--seed", str(seed),
        "--db", str(tmp / "bench.db"), "--max-players", "100000", "--log-level", "warning",
        # every client comes from 127.0.0.1: the per-address caps are lifted
        "--max-conns-per-addr", "0", "--new-chars-per-hour", "0",
        "--token-failures-per-name", "0", "--token-failures-per-addr", "0", *extra,
    ])  # fmt: skip
    env = dict(os.environ, UNDERHALL_TICK_LOG=str(tmp / "ticks.log"))
    cwd = None
    if tree is not None:  # ``-m`` puts the working directory first on the path
        cwd = str(tree.resolve())
        env["PYTHONPATH"] = cwd
    with log_path.open("wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd)
    expected = f"listening on ws://127.0.0.1:{port}".encode()
    deadline = time.monotonic() + READY_TIMEOUT_S
    while expected not in log_path.read_bytes():
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(proc)
            raise RuntimeError(f"server did not start:\n{log_path.read_text()}")
        time.sleep(0.05)
    return proc


def stop(proc: subprocess.Popen[Any], sig: int = signal.SIGTERM) -> None:
    """Signal ``proc`` and wait for it, killing it if it has not exited after 15 s."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def _tick_lines(path: Path, t0: float, t1: float) -> list[list[str]]:
    """The fields of the server's tick-log lines written in ``[t0, t1]`` (Unix s)."""
    try:
        text = path.read_text(encoding="ascii")
    except OSError:
        return []
    rows = (line.split() for line in text.splitlines())
    return [parts for parts in rows if len(parts) >= 3 and t0 <= float(parts[0]) <= t1]


def tick_stats(path: Path, t0: float, t1: float) -> tuple[int, list[float], float | None]:
    """Ticks the server completed in ``[t0, t1]`` (Unix s), their durations
    (ms), and the longest garbage-collection pause among them (ms; None if
    the server does not log pauses)."""
    return _tick_stats(_tick_lines(path, t0, t1))


def _tick_stats(rows: list[list[str]]) -> tuple[int, list[float], float | None]:
    """:func:`tick_stats` over tick-log lines (:func:`_tick_lines`)."""
    durations = [float(parts[2]) for parts in rows]
    pauses = [float(parts[4]) for parts in rows if len(parts) >= 5]
    return len(durations), durations, max(pauses, default=None)


def tick_split(rows: list[list[str]]) -> tuple[float | None, float | None]:
    """Mean ms per tick spent in the game's step and in writing its messages
    (encoding included), over tick-log lines (:func:`_tick_lines`); None
    where the server does not log them (an older tree)."""
    split = [(float(parts[5]), float(parts[6])) for parts in rows if len(parts) >= 7]
    if not split:
        return None, None
    steps, writes = zip(*split, strict=True)
    return round(sum(steps) / len(steps), 1), round(sum(writes) / len(writes), 1)


def frames_skipped(rows: list[list[str]]) -> int | None:
    """Players' messages the server did not build or write because their
    client was behind, summed over tick-log lines (:func:`_tick_lines`);
    None where the server does not log them (an older tree)."""
    counts = [int(parts[7]) for parts in rows if len(parts) >= 8]
    return sum(counts) if counts else None


def _quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    return s[max(math.ceil(q * len(s)), 1) - 1]  # the nearest-rank method


class _Lines:
    """The load generator's JSON lines, each with the server's /proc sample on arrival."""

    def __init__(self, stream: IO[bytes], pid: int) -> None:
        self.stream = stream
        self.pid = pid

    def next(self) -> tuple[dict[str, Any], tuple[float, float, int]] | None:
        """The next snapshot and the server's (user s, system s, RSS) when it arrived."""
        while True:
            raw = self.stream.readline()
            if not raw:
                return None
            try:
                snap = json.loads(raw)
            except ValueError:
                continue
            try:
                usage = read_cpu(self.pid)
            except OSError:
                return None
            return snap, usage


def seat_spread(db: Path, url: str, n: int, depths: int, seed: int, home: Path) -> None:
    """Save ``n`` characters named ``s0``, ``s1``, ... into a new world's
    database, character ``i`` standing in a random room of depth
    ``1 + i % depths`` with health and defence for that depth, and their
    resume tokens where the load generator
    (``UNDERHALL_HOME=home``) reads them: the *spread* scene's clients then
    resume there instead of walking down the stairs first (issue 10)."""
    seat_groups(db, [(url, "s", n)], depths, seed, home)


def seat_groups(
    db: Path | str, groups: list[tuple[str, str, int]], depths: int, seed: int, home: Path
) -> None:
    """:func:`seat_spread` for several load generators at once: for each
    ``(url, prefix, n)`` of ``groups``, characters ``prefix0`` ..
    ``prefix{n-1}``, character ``prefix{i}`` at depth ``1 + i % depths`` (as
    that generator's client ``i`` expects), their tokens filed under ``url``.
    One world and one stream of random rooms serve every group, so no two
    groups' characters are put on the same cells. ``db``: a SQLite file or
    a ``postgresql://`` URL."""
    import secrets

    import numpy as np

    from server.sim.world import World
    from server.store import hash_token, open_store, pack_record

    world = World(seed, populate=False)
    rng = np.random.default_rng(seed)
    rows = []
    tokens: dict[str, dict[str, str]] = {}
    classes = ("warrior", "mage", "monk")
    for url, prefix, n in groups:
        mine = tokens.setdefault(url, {})
        for i in range(n):
            name = f"{prefix}{i}"
            depth = 1 + i % depths
            record = world.leave(world.join(name, classes[i % 3]).id)
            rooms = world.level(depth).rooms
            room = rooms[int(rng.integers(len(rooms)))]
            record["depth"] = depth
            # Seasoned enough for their depth, so that the window measures play
            # there, not respawns at the entrance: health and defence scale with depth.
            record["max_hp"] = record["hp"] = int(record["max_hp"]) * 10 * depth
            record["defence"] = int(record["defence"]) + 2 * depth
            record["x"] = room.x + int(rng.integers(room.w))
            record["y"] = room.y + int(rng.integers(room.h))
            mine[name] = secrets.token_urlsafe(24)
            rows.append((name, hash_token(mine[name]), pack_record(record), 0))
    store = open_store(db)
    try:
        store.save(rows, [], [("seed", str(seed))])
    finally:
        store.close()
    home.mkdir(parents=True, exist_ok=True)
    path = home / "tokens.json"
    path.write_text(json.dumps(tokens), encoding="utf-8")
    path.chmod(0o600)


def measure(args: argparse.Namespace, scene: str, n: int) -> Row:
    """Run one scene with ``n`` clients; return its row."""
    row = Row(scene, n)
    depths, walk_every = SCENES[scene]
    cores = (None, None) if args.no_pin else (0, 1)
    with tempfile.TemporaryDirectory(prefix="underhall-scale-") as tmp_name:
        tmp = Path(tmp_name)
        port = free_port()
        url = f"ws://127.0.0.1:{port}"
        env = dict(os.environ)
        resume: list[str] = ["--forget"]
        if depths > 1:  # characters saved at their depths resume there
            seat = [str(tmp / "bench.db"), url, n, depths, args.seed, str(tmp / "home")]
            tree = Path(args.server_tree) if args.server_tree else None
            if tree is None:
                seat_spread(Path(seat[0]), url, n, depths, args.seed, Path(seat[5]))
            else:  # the other tree's store and records, so its server can open them
                subprocess.run(
                    [sys.executable, __file__, "--seat", json.dumps(seat)],
                    env={**env, "PYTHONPATH": str(tree.resolve())},
                    cwd=tree,
                    check=True,
                )
            env["UNDERHALL_HOME"] = str(tmp / "home")
            resume = []
        tree = Path(args.server_tree) if args.server_tree else None
        server = start_server(tmp, port, args.tick_rate, args.seed, cores[0], tree)
        gen_cmd = pinned(cores[1], [
            sys.executable, "-m", "client.loadgen", "--url", url,
            "-n", str(n), "--duration", "0", "--rate", str(args.rate), "--procs", str(args.procs),
            "--seed", str(args.seed), "--prefix", "s", "--jsonl", *resume,
            "--depths", str(depths), "--walk-every", str(walk_every),
        ])  # fmt: skip
        with (tmp / "loadgen.err").open("wb") as err:
            gen = subprocess.Popen(gen_cmd, stdout=subprocess.PIPE, stderr=err, env=env)
        assert gen.stdout is not None
        try:
            _run_phases(args, row, n, depths, _Lines(gen.stdout, server.pid), tmp)
        finally:
            stop(gen, signal.SIGINT)
            stop(server)
    return row


def _run_phases(
    args: argparse.Namespace, row: Row, n: int, depths: int, lines: _Lines, tmp: Path
) -> None:
    started = time.time()
    ramp_s = n / args.rate
    best, best_t = 0, started
    while True:  # joins
        got = lines.next()
        if got is None:
            row.note = "load generator or server exited"
            return
        snap, _ = got
        answered = (
            snap["welcomed"]
            + sum(snap["refused"].values())
            + sum(snap["connect_failures"].values())
        )
        if snap["welcomed"] > best:
            best, best_t = snap["welcomed"], snap["t"]
        if answered >= n:
            break
        if snap["t"] - started > ramp_s and snap["t"] - best_t > args.join_stall:
            row.note = f"joins stalled at {best}"
            break
    row.join_s = round(snap["t"] - started, 1)
    if depths > 1:
        settle_end = snap["t"] + args.settle
        while snap["settled"] < snap["connected"] and snap["t"] < settle_end:
            got = lines.next()
            if got is None:
                return
            snap, _ = got
    warm_end = snap["t"] + args.warmup
    while snap["t"] < warm_end:
        got = lines.next()
        if got is None:
            return
        snap, _ = got
    first = lines.next()
    if first is None:
        return
    last = first
    while last[0]["t"] < first[0]["t"] + args.window:
        got = lines.next()
        if got is None:
            return
        last = got
    time.sleep(1.5)  # the tick log is flushed about once a second
    _fill(row, first, last, tmp / "ticks.log")


def _fill(
    row: Row,
    first: tuple[dict[str, Any], tuple[float, float, int]],
    last: tuple[dict[str, Any], tuple[float, float, int]],
    tick_log: Path,
) -> None:
    (s0, (u0, k0, _)), (s1, (u1, k1, rss)) = first, last
    d = diff(s1, s0)
    secs = d["seconds"]
    clients = (s0["connected"] + s1["connected"]) / 2
    row.clients = s1["connected"]
    row.joins_refused = s1["refused"]
    row.connect_failures = s1["connect_failures"]
    row.settled = s1["settled"]
    row.depths = dict(sorted(s1["depths"].items(), key=lambda kv: int(kv[0])))
    row.window_s = round(secs, 1)
    row.cpu_user_pct = round(100 * (u1 - u0) / secs, 1)
    row.cpu_sys_pct = round(100 * (k1 - k0) / secs, 1)
    rows = _tick_lines(tick_log, s0["t"], s1["t"])
    ticks, durations, row.gc_pause_max_ms = _tick_stats(rows)
    row.tick_step_ms, row.tick_write_ms = tick_split(rows)
    row.frames_skipped = frames_skipped(rows)
    row.ticks_per_s = round(ticks / secs, 2)
    if ticks and clients:
        row.us_per_client_tick = round(1e6 * (u1 - u0 + k1 - k0) / (clients * ticks), 1)
    row.tick_p50_ms = _round(_quantile(durations, 0.5))
    row.tick_p99_ms = _round(_quantile(durations, 0.99))
    row.tick_max_ms = _round(max(durations, default=None))
    if clients:
        row.frames_per_client_s = round(d["frames"] / clients / secs, 2)
        row.bytes_per_client_s = round(d["bytes"] / clients / secs)
        row.commands_per_client_s = round(d["cmds"] / clients / secs, 2)
    row.mean_frame_bytes = round(d["bytes"] / d["frames"]) if d["frames"] else None
    row.cmd_p50_ms = percentile(d["lat"], 0.5)
    row.cmd_p99_ms = percentile(d["lat"], 0.99)
    row.rss_mb = round(rss / 2**20, 1)
    row.loadgen_cpu_pct = round(100 * d["cpu_s"] / secs, 1)
    if d["cpu_s"] > 0:
        row.loadgen_clients_per_core = round(clients * secs / d["cpu_s"])
    if d["frames"]:
        row.loadgen_us_per_frame = round(1e6 * d["cpu_s"] / d["frames"], 1)
    row.rejects = d["rejects"]
    row.errors = s1["errors"]
    fill_joins(row, s1)


def fill_joins(row: Joins, snap: dict[str, Any]) -> None:
    """Join latency p50 / p99 / max (ms, from the start of the TCP connect) to
    ``welcome`` and to the first ``snap``, over every join up to ``snap``."""
    for what in ("welcome", "snap"):
        hist = snap.get(f"join_{what}", {})
        setattr(row, f"join_{what}_p50_ms", percentile(hist, 0.5))
        setattr(row, f"join_{what}_p99_ms", percentile(hist, 0.99))
        setattr(row, f"join_{what}_max_ms", max((int(k) + 0.5 for k in hist), default=None))


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 1)


COLUMNS = (
    ("scene", "scene", "{}"), ("clients", "clients", "{:,}"),
    ("cpu_user_pct", "usr%", "{:.0f}"), ("cpu_sys_pct", "sys%", "{:.0f}"),
    ("us_per_client_tick", "µs/cl-tick", "{:.1f}"), ("ticks_per_s", "ticks/s", "{:.1f}"),
    ("frames_per_client_s", "frames/s/cl", "{:.1f}"),
    ("tick_p50_ms", "tick p50", "{:.0f}"), ("tick_p99_ms", "p99", "{:.0f}"),
    ("tick_max_ms", "max ms", "{:.0f}"), ("gc_pause_max_ms", "gc max", "{:.0f}"),
    ("bytes_per_client_s", "B/s/cl", "{:,.0f}"),
    ("mean_frame_bytes", "B/frame", "{:.0f}"), ("cmd_p50_ms", "cmd p50", "{:.0f}"),
    ("cmd_p99_ms", "p99 ms", "{:.0f}"), ("rss_mb", "RSS MB", "{:.0f}"),
    ("loadgen_cpu_pct", "gen CPU%", "{:.0f}"),
    ("loadgen_clients_per_core", "gen cl/core", "{:,.0f}"),
    ("join_snap_p50_ms", "join p50", "{:.0f}"), ("join_snap_p99_ms", "p99", "{:.0f}"),
    ("join_snap_max_ms", "max ms", "{:.0f}"),
)  # fmt: skip


def format_table(rows: list[Row]) -> str:
    """The rows as an aligned text table, then rejects, refusals and notes per row."""
    cells = [[h for _, h, _ in COLUMNS]]
    for r in rows:
        values = asdict(r)
        cells.append(["-" if values[k] is None else f.format(values[k]) for k, _, f in COLUMNS])
    widths = [max(len(row[i]) for row in cells) for i in range(len(COLUMNS))]
    out = ["  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) for row in cells]
    for r in rows:
        extra = [f"{r.scene} {r.requested}: joined in {r.join_s} s"]
        if r.join_welcome_p50_ms is not None:
            extra.append(
                f"connect to welcome p50 {r.join_welcome_p50_ms:.0f} / "
                f"p99 {r.join_welcome_p99_ms:.0f} / max {r.join_welcome_max_ms:.0f} ms"
            )
        if r.tick_step_ms is not None:
            extra.append(
                f"a tick's step {r.tick_step_ms} ms and writing {r.tick_write_ms} ms on average"
            )
        if r.frames_skipped is not None:
            extra.append(f"{r.frames_skipped:,} messages skipped for clients behind")
        if r.rejects:
            extra.append(
                "rejects "
                + ", ".join(
                    f"{k} {v:,}" for k, v in sorted(r.rejects.items(), key=lambda kv: -kv[1])
                )
            )
        if r.joins_refused:
            extra.append("refused " + ", ".join(f"{k} {v:,}" for k, v in r.joins_refused.items()))
        if r.connect_failures:
            extra.append(
                "connect failures " + ", ".join(f"{k} {v:,}" for k, v in r.connect_failures.items())
            )
        if r.errors:
            extra.append("errors " + ", ".join(f"{k} {v:,}" for k, v in r.errors.items()))
        if r.scene != "crowded":
            extra.append(f"at target depth {r.settled:,}; by depth {r.depths}")
        if r.note:
            extra.append(r.note)
        out.append("  " + "; ".join(extra))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the table (or JSON); 0 if every run measured a window."""
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument(
        "-n",
        default="250,500,1000,2000,4000",
        help="client counts, comma-separated (default %(default)s)",
    )
    p.add_argument(
        "--scene",
        default="crowded,spread",
        help="scenes, comma-separated: crowded, spread (default %(default)s)",
    )
    p.add_argument("--window", type=float, default=20.0, help="measured seconds (default 20)")
    p.add_argument("--warmup", type=float, default=5.0, help="seconds after joins (default 5)")
    p.add_argument("--rate", type=float, default=100.0, help="joins per second (default 100)")
    p.add_argument(
        "--join-stall",
        type=float,
        default=30.0,
        help="stop waiting for joins after this many seconds without one (default 30)",
    )
    p.add_argument(
        "--settle",
        type=float,
        default=300.0,
        help="spread: longest wait for clients to reach their depth (default 300)",
    )
    p.add_argument("--procs", type=int, default=1, help="load generator processes (default 1)")
    p.add_argument("--tick-rate", type=int, default=10, help="server ticks/s (default 10)")
    p.add_argument("--seed", type=int, default=7, help="world and client seed (default 7)")
    p.add_argument("--no-pin", action="store_true", help="do not pin with taskset")
    p.add_argument(
        "--server-tree",
        default="",
        help="run the server from this source tree (A/B against another commit)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object per run")
    p.add_argument("--seat", help=argparse.SUPPRESS)  # internal: seat_spread's arguments, JSON
    args = p.parse_args(argv)
    if args.seat:  # run by measure() under another --server-tree's PYTHONPATH
        db, url, n, depths, seed, home = json.loads(args.seat)
        seat_spread(Path(db), url, n, depths, seed, Path(home))
        return 0
    counts = client_counts(p, args.n)
    scenes = [s.strip() for s in args.scene.split(",") if s.strip()]
    for s in scenes:
        if s not in SCENES:
            p.error(f"--scene: unknown scene {s!r} (known: {', '.join(SCENES)})")
    check_pinning(p, args.no_pin)
    raise_open_files(2 * max(counts) + 256)  # the server and the generator inherit it
    runs = [(scene, n) for scene in scenes for n in counts]
    rows = run_all(runs, lambda scene, n: measure(args, scene, n), args.json)
    if not args.json:
        print(format_table(rows))
    return 0 if all(r.window_s > 0 for r in rows) else 1


def client_counts(p: argparse.ArgumentParser, text: str) -> list[int]:
    """The client counts of ``-n`` (comma-separated); a usage error through
    ``p`` (exit 2) unless they are positive whole numbers."""
    try:
        counts = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        p.error(f"-n: not a comma-separated list of numbers: {text!r}")
    if not counts or min(counts) < 1:
        p.error("-n: need positive client counts")
    return counts


def check_pinning(p: argparse.ArgumentParser, no_pin: bool) -> None:
    """A usage error through ``p`` (exit 2) when pinning was asked for and
    ``taskset`` or a second core is missing."""
    if not no_pin and (shutil.which("taskset") is None or (os.cpu_count() or 1) < 2):
        p.error("needs taskset (util-linux) and two cores; --no-pin runs unpinned")


RowT = TypeVar("RowT", bound="RowLike")


class RowLike(Protocol):
    """What :func:`run_all` reads of a benchmark's row: a dataclass with these fields."""

    __dataclass_fields__: ClassVar[dict[str, Any]]
    clients: int
    us_per_client_tick: float | None


def run_all(
    runs: list[tuple[str, int]], measure_one: Callable[[str, int], RowT], as_json: bool
) -> list[RowT]:
    """Measure each ``(scene, clients)`` of ``runs`` in turn; after each, print
    its row as one JSON line (``as_json``) or a progress line on stderr.
    Returns the rows (dataclasses), in order."""
    rows: list[RowT] = []
    for scene, n in runs:
        row = measure_one(scene, n)
        rows.append(row)
        if as_json:
            print(json.dumps(asdict(row), separators=(",", ":")), flush=True)
        else:
            print(
                f"{scene} {n}: done ({row.clients} clients, "
                f"{row.us_per_client_tick} µs/client-tick)",
                file=sys.stderr,
                flush=True,
            )
    return rows


if __name__ == "__main__":
    sys.exit(main())
