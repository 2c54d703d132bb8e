"""Join benchmark: how long a burst of new clients takes to get in while a crowd plays.

Starts ``underhall serve`` (a throw-away database, 10 ticks/s) pinned to
core 0, and a crowd of ``--crowd`` lean walking clients
(``python -m client.loadgen``) pinned to core 1. Once every one of them was
answered and a warm-up has passed, this process (also pinned to core 1)
opens ``--burst`` more lean clients (:class:`client.loadgen.Generator`) at
``--rate`` connections per second, and waits until each was welcomed and
got its first ``snap``, was refused, or failed (at most ``--timeout``
seconds). It reports:

- per burst client, the time from the start of its TCP connect to its
  ``welcome`` and to its first ``snap``: p50 / p99 / max (ms); and the
  phases of that: TCP connect (``tcp``), opening handshake (``upgrade``),
  ``hello`` to ``welcome`` (``hello``), p50 / p99;
- how long until the whole burst was in (first connect to last first
  ``snap``, s), and how many joins were refused or failed, by reason;
- during the burst: the server's tick duration p50 / p99 / max (ms, from
  the tick log), the crowd's command→effect p50 / p99 (ms, from its
  per-second snapshots) and how many of the crowd lost their connection;
- the server's CPU seconds (user + system, ``/proc``) spent over the burst.

``--repeat K`` runs the whole thing K times; ``--tree A,B`` alternates the
server between source trees (for example a copy of an older commit made
with ``git archive``) and prints the median of each over the repeats, so
an A/B comparison runs in one session on a shared machine.

Usage::

    .venv/bin/python bench/joins.py [--crowd 1000] [--burst 1000] [--rate 500]
        [--tree .,/tmp/old] [--repeat 3] [--json]

Linux only (``/proc``, ``taskset``, ``sched_setaffinity``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import queue
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/scale.py beside this file

from scale import (
    _Lines,
    _quantile,
    free_port,
    pinned,
    read_cpu,
    start_server,
    stop,
    tick_stats,
)

from client.loadgen import Generator, LoadConfig, _new_loop, raise_open_files
from client.loadstats import diff, percentile


@dataclass(slots=True)
class Burst:
    """One measured burst. Times in ms unless named ``_s``."""

    tree: str
    crowd: int
    burst: int
    rate: float
    crowd_in: int = 0
    crowd_lost: int | None = None
    welcomed: int = 0
    snapped: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)
    all_in_s: float | None = None
    welcome_p50: float | None = None
    welcome_p99: float | None = None
    welcome_max: float | None = None
    tcp_p50: float | None = None
    tcp_p99: float | None = None
    upgrade_p50: float | None = None
    upgrade_p99: float | None = None
    hello_p50: float | None = None
    hello_p99: float | None = None
    snap_p50: float | None = None
    snap_p99: float | None = None
    snap_max: float | None = None
    tick_p50: float | None = None
    tick_p99: float | None = None
    tick_max: float | None = None
    crowd_cmd_p50: float | None = None
    crowd_cmd_p99: float | None = None
    server_cpu_s: float = 0.0
    note: str = ""


class _Drained:
    """The crowd generator's snapshots, read by a thread as they come, so its
    output pipe never fills (a generator blocked on writing stops reading its
    sockets, and the server then drops its clients as not reading)."""

    Item = tuple[dict[str, Any], tuple[float, float, int]]

    def __init__(self, lines: _Lines) -> None:
        self._queue: queue.Queue[_Drained.Item | None] = queue.Queue()
        self._thread = threading.Thread(target=self._read, args=(lines,), daemon=True)
        self._thread.start()

    def _read(self, lines: _Lines) -> None:
        while (got := lines.next()) is not None:
            self._queue.put(got)
        self._queue.put(None)

    def next(self) -> _Drained.Item | None:
        """The next snapshot (waiting for it), or None once the generator ended."""
        return self._queue.get()

    def latest(self) -> _Drained.Item | None:
        """The newest snapshot read so far (waiting for one if none is queued)."""
        got = self._queue.get()
        while got is not None:
            try:
                newer = self._queue.get_nowait()
            except queue.Empty:
                return got
            if newer is None:
                return got
            got = newer
        return None


def _ms(values: list[float], q: float) -> float | None:
    v = _quantile(values, q)
    return None if v is None else round(v, 1)


async def _burst(url: str, n: int, rate: float, timeout: float) -> tuple[Generator, float, float]:
    """Open ``n`` lean clients at ``rate`` per second; return the generator, its
    start and the time the last of them was answered (``perf_counter`` s)."""
    cfg = LoadConfig(url=url, n=n, rate=rate, prefix="b", seed=11)
    cfg.check()
    gen = Generator(cfg, 0, 1)
    started = time.perf_counter()
    ramp = asyncio.create_task(gen.ramp())
    deadline = started + timeout
    while time.perf_counter() < deadline:
        await asyncio.sleep(0.05)
        c = gen.counters
        snapped = sum(1 for cl in gen.clients if cl.snap_t is not None)
        failed = sum(c.refused.values()) + sum(c.connect_failures.values())
        if len(gen.clients) == n and snapped + failed >= n:
            break
    ended = time.perf_counter()
    ramp.cancel()
    await asyncio.gather(ramp, return_exceptions=True)
    return gen, started, ended


def run_once(args: argparse.Namespace, tree: str) -> Burst:
    """One server, one crowd, one burst."""
    out = Burst(tree, args.crowd, args.burst, args.rate)
    with tempfile.TemporaryDirectory(prefix="underhall-joins-") as tmp_name:
        tmp = Path(tmp_name)
        port = free_port()
        url = f"ws://127.0.0.1:{port}"
        cores = (None, None) if args.no_pin else (0, 1)
        server = start_server(tmp, port, 10, args.seed, cores[0], Path(tree))
        gen_cmd = pinned(cores[1], [
            sys.executable, "-m", "client.loadgen", "--url", url, "-n", str(args.crowd),
            "--duration", "0", "--rate", str(args.crowd_rate), "--seed", str(args.seed),
            "--prefix", "c", "--jsonl", "--forget",
        ])  # fmt: skip
        with (tmp / "crowd.err").open("wb") as err:
            crowd = subprocess.Popen(gen_cmd, stdout=subprocess.PIPE, stderr=err)
        assert crowd.stdout is not None
        lines = _Drained(_Lines(crowd.stdout, server.pid))
        try:
            _measure(args, out, url, lines, server.pid, tmp / "ticks.log")
        finally:
            stop(crowd, signal.SIGINT)
            stop(server)
    return out


def _measure(
    args: argparse.Namespace, out: Burst, url: str, lines: _Drained, pid: int, tick_log: Path
) -> None:
    started = time.time()
    while True:  # the crowd joins
        got = lines.next()
        if got is None:
            out.note = "crowd generator or server exited"
            return
        snap, _ = got
        answered = (
            snap["welcomed"]
            + sum(snap["refused"].values())
            + sum(snap["connect_failures"].values())
        )
        if (
            answered >= args.crowd
            or snap["t"] - started > args.timeout + args.crowd / args.crowd_rate
        ):
            break
    out.crowd_in = snap["welcomed"]
    warm_end = snap["t"] + args.warmup
    while snap["t"] < warm_end:
        got = lines.next()
        if got is None:
            return
        snap, _ = got
    before = lines.latest()
    if before is None:
        return
    u0, k0, _ = read_cpu(pid)
    t0 = time.time()
    if not args.no_pin:
        os.sched_setaffinity(0, {1})
    with asyncio.Runner(loop_factory=_new_loop) as runner:
        gen, b0, b1 = runner.run(_burst(url, args.burst, args.rate, args.timeout))
        u1, k1, _ = read_cpu(pid)
        t1 = time.time()
        time.sleep(1.1)  # the crowd's next snapshot: after the burst
        after = lines.latest()
        runner.run(gen.close_all())
    out.server_cpu_s = round(u1 - u0 + k1 - k0, 2)
    c = gen.counters
    out.welcomed = c.welcomed
    out.refused = dict(c.refused)
    out.failed = dict(c.connect_failures)
    unanswered = (
        args.burst - c.welcomed - sum(c.refused.values()) - sum(c.connect_failures.values())
    )
    if unanswered > 0:
        out.failed["unanswered"] = unanswered
    welcome = [1000 * (cl.welcome_t - cl.connect_t) for cl in gen.clients if cl.welcome_t]
    snaps = [1000 * (cl.snap_t - cl.connect_t) for cl in gen.clients if cl.snap_t]
    # The phases of a join: TCP connect, opening handshake, hello to welcome.
    tcp = [1000 * (cl.open_t - cl.connect_t) for cl in gen.clients if cl.open_t]
    upgrade = [
        1000 * (cl.upgraded_t - cl.open_t) for cl in gen.clients if cl.upgraded_t and cl.open_t
    ]
    hello = [
        1000 * (cl.welcome_t - cl.upgraded_t)
        for cl in gen.clients
        if cl.welcome_t and cl.upgraded_t
    ]
    out.tcp_p50, out.tcp_p99 = _ms(tcp, 0.5), _ms(tcp, 0.99)
    out.upgrade_p50, out.upgrade_p99 = _ms(upgrade, 0.5), _ms(upgrade, 0.99)
    out.hello_p50, out.hello_p99 = _ms(hello, 0.5), _ms(hello, 0.99)
    out.snapped = len(snaps)
    out.welcome_p50, out.welcome_p99 = _ms(welcome, 0.5), _ms(welcome, 0.99)
    out.welcome_max = _ms(welcome, 1.0)
    out.snap_p50, out.snap_p99, out.snap_max = _ms(snaps, 0.5), _ms(snaps, 0.99), _ms(snaps, 1.0)
    if snaps and len(snaps) == args.burst:
        last = max(cl.snap_t for cl in gen.clients if cl.snap_t)
        out.all_in_s = round(last - b0, 2)
    time.sleep(1.5)  # the tick log is flushed about once a second
    _, durations, _ = tick_stats(tick_log, t0, t1)
    out.tick_p50, out.tick_p99, out.tick_max = (
        _ms(durations, 0.5),
        _ms(durations, 0.99),
        _ms(durations, 1.0),
    )
    if after is not None:
        out.crowd_lost = before[0]["connected"] - after[0]["connected"]
        d = diff(after[0], before[0])
        out.crowd_cmd_p50 = percentile(d["lat"], 0.5)
        out.crowd_cmd_p99 = percentile(d["lat"], 0.99)
    del b1


COLUMNS = (
    "tree", "crowd_in", "crowd_lost", "burst", "rate", "welcomed", "snapped", "all_in_s",
    "welcome_p50", "welcome_p99", "welcome_max", "tcp_p50", "tcp_p99", "upgrade_p50",
    "upgrade_p99", "hello_p50", "hello_p99", "snap_p50", "snap_p99", "snap_max",
    "tick_p50", "tick_p99", "tick_max", "crowd_cmd_p50", "crowd_cmd_p99", "server_cpu_s",
)  # fmt: skip


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.1f}" if abs(v) < 100 else f"{v:,.0f}"
    return str(v)


def format_table(rows: list[dict[str, Any]]) -> str:
    """Rows (dicts with :data:`COLUMNS`) as an aligned text table."""
    cells = [list(COLUMNS)] + [[_fmt(r.get(k)) for k in COLUMNS] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(COLUMNS))]
    return "\n".join(
        "  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) for row in cells
    )


def medians(runs: list[Burst]) -> dict[str, Any]:
    """The median of each numeric figure over ``runs`` (of one tree)."""
    row: dict[str, Any] = {"tree": f"{runs[0].tree} (median of {len(runs)})"}
    for k in COLUMNS[1:]:
        values = [getattr(r, k) for r in runs if getattr(r, k) is not None]
        row[k] = statistics.median(values) if len(values) == len(runs) else None
    return row


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the table (or JSON lines); 0 if every burst got in."""
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument(
        "--crowd", type=int, default=1000, help="walking clients already in (default 1000)"
    )
    p.add_argument("--crowd-rate", type=float, default=200.0, help="the crowd's joins per second")
    p.add_argument("--burst", type=int, default=1000, help="clients joining at once (default 1000)")
    p.add_argument("--rate", type=float, default=500.0, help="the burst's connections per second")
    p.add_argument("--warmup", type=float, default=5.0, help="seconds between crowd and burst")
    p.add_argument("--timeout", type=float, default=90.0, help="longest wait for the burst (s)")
    p.add_argument("--tree", default=".", help="server source trees, comma-separated, alternated")
    p.add_argument("--repeat", type=int, default=1, help="runs per tree (default 1)")
    p.add_argument("--seed", type=int, default=7, help="world seed (default 7)")
    p.add_argument("--no-pin", action="store_true", help="do not pin to cores 0 and 1")
    p.add_argument("--json", action="store_true", help="print one JSON object per run")
    args = p.parse_args(argv)
    trees = [t.strip() for t in args.tree.split(",") if t.strip()]
    raise_open_files(2 * (args.crowd + args.burst) + 256)
    runs: dict[str, list[Burst]] = {t: [] for t in trees}
    for k in range(args.repeat):
        for tree in trees:
            run = run_once(args, tree)
            runs[tree].append(run)
            if args.json:
                print(json.dumps(asdict(run), separators=(",", ":")), flush=True)
            else:
                print(f"run {k + 1} {tree}: {_fmt(run.all_in_s)} s, {run.note}", file=sys.stderr)
    if not args.json:
        rows = [asdict(r) for t in trees for r in runs[t]]
        if args.repeat > 1:
            rows += [medians(runs[t]) for t in trees]
        print(format_table(rows))
        for t in trees:
            for r in runs[t]:
                if r.refused or r.failed or r.note:
                    print(f"  {t}: refused {r.refused}, failed {r.failed} {r.note}")
    every = [r for rs in runs.values() for r in rs]
    return 0 if all(r.all_in_s is not None for r in every) else 1


if __name__ == "__main__":
    sys.exit(main())
