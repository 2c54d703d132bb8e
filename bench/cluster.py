"""Cluster benchmark: K workers and G gateways on this machine, bots on the stairs.

Starts a NATS server of its own (``nats-server -js`` on a free port, its
store in a temporary directory; or uses ``--nats URL``), makes a fresh
database on the PostgreSQL server at ``--pg`` (dropped at the end), starts K
``underhall worker`` and G ``underhall gateway`` processes (levels shared
out round robin, no monsters so nothing but the stairs moves a character),
and drives P real clients (:mod:`tests.cluster.trips`): client ``i`` shuttles
between the down stairs of depth ``i + 1`` and the up stairs of ``i + 2``, so
every trip is a hand-off between two workers. Every ``--chat-every`` trips a
client says a timed global line, which every client hears.

It prints:

- CPU of every process over the run (``/proc/PID/stat``, user + system), as
  % of one core, and µs of cluster CPU (workers + gateways) per client-tick;
- hand-off latency p50 / p99 as the workers measure it (leaving the world to
  the new holder's yes) and as the clients see it (``down``/``up`` sent to the
  new level's snapshot, which includes waiting for the character's turn);
- tick duration p50 / p99 per worker;
- frames and bytes per client per second as the gateways wrote them;
- global chat delay p50 / p99 and how many lines were heard of those said;
- the check: every character in the database once, with a distinct actor id,
  at the depth and cell its client last saw, its epoch 1 + its trips (no
  character lost, duplicated or admitted twice), and a digest of its data
  (pack, scores, place, map memory) equal to a replay of its client's
  moves in one process (:mod:`tests.cluster.replay`).

Usage::

    .venv/bin/python bench/cluster.py [--workers 3] [--gateways 2]
        [--players 40] [--trips 250] [--pg postgresql://postgres@127.0.0.1:5432/postgres]
        [--nats nats://127.0.0.1:4222]

Linux only (``/proc``). The default is the issue's 10,000 trips (40 × 250).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.cluster

import psycopg

from server.sim.actors import player_from_record
from server.store import unpack_record
from tests.cluster.procs import SEED, ClusterProcs, plant
from tests.cluster.replay import digest, replay
from tests.cluster.trips import TripResult, trip

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else float("nan")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_nats(tmp: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``nats-server`` with JetStream on a free port; its process and URL."""
    exe = shutil.which("nats-server") or "/usr/sbin/nats-server"
    port = free_port()
    proc = subprocess.Popen(
        [exe, "-js", "-a", "127.0.0.1", "-p", str(port), "-sd", str(tmp / "js")],
        stdout=(tmp / "nats.log").open("wb"),
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc, f"nats://127.0.0.1:{port}"
        time.sleep(0.05)
    proc.kill()
    raise SystemExit("nats-server did not start")


def last_stats(log: str) -> dict[str, float]:
    """The figures of the last ``stats:`` line of a worker's or gateway's log."""
    line = [ln for ln in log.splitlines() if "stats:" in ln][-1].split("stats:", 1)[1]
    out: dict[str, float] = {}
    for part in line.split(","):
        words = part.split()
        if "p50" in words and "p99" in words:
            key = " ".join(words[: words.index("p50")])
            out[f"{key} p50"] = float(words[words.index("p50") + 1])
            out[f"{key} p99"] = float(words[words.index("p99") + 1])
        elif words:
            out[" ".join(words[:-1])] = float(words[-1])
    return out


async def drive(
    urls: list[str], players: int, trips: int, chat_every_s: float, pause_s: float
) -> list[TripResult]:
    """Run the trippers; each stays connected (hearing chat) until all are done."""
    done = 0
    everyone = asyncio.Event()

    async def linger() -> None:
        nonlocal done
        done += 1
        if done == players:
            everyone.set()
        await everyone.wait()

    return list(
        await asyncio.gather(
            *(
                trip(
                    urls[i % len(urls)], f"B{i}", f"tok{i}", i + 1, trips,
                    chat_every_s=chat_every_s, linger=linger, pause_s=pause_s,
                )
                for i in range(players)
            )
        )
    )  # fmt: skip


@contextlib.contextmanager
def bench_database(pg: str) -> Iterator[str]:
    """A new database on the PostgreSQL server that the admin URL ``pg``
    reaches; yields its URL; drops it afterwards (cutting off whoever still
    uses it)."""
    name = f"underhall_bench_{os.getpid()}_{secrets.token_hex(3)}"
    with psycopg.connect(pg, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield urlunsplit(urlsplit(pg)._replace(path=f"/{name}"))
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


Saved = dict[str, tuple[dict[str, Any], int, int]]
"""Name -> (record, epoch, saved tick) of each character in the database."""


def lost_or_duplicated(db: str, names: Iterable[str]) -> tuple[list[str], Saved]:
    """The characters saved in ``db``, and what is wrong with them (empty:
    nothing): a name of ``names`` with no row (lost), rows for other names,
    an actor id that two rows share (duplicated)."""
    with psycopg.connect(db) as conn:
        rows = conn.execute(
            "SELECT name, record, epoch, actor_id, saved_tick FROM players"
        ).fetchall()
    expected = sorted(names)
    problems: list[str] = []
    if sorted(r[0] for r in rows) != expected:
        problems.append(f"{len(rows)} rows for {len(expected)} characters")
    ids = [r[3] for r in rows if r[3] is not None]  # None: never joined a cluster
    if len(set(ids)) != len(ids):
        problems.append("actor ids repeat")
    saved = {r[0]: (unpack_record(bytes(r[1])), int(r[2]), int(r[4])) for r in rows}
    problems.extend(f"{name} lost" for name in expected if name not in saved)
    return problems, saved


def check(db: str, results: list[TripResult], planted: dict[str, dict[str, Any]]) -> list[str]:
    """What is wrong in the database after the run (empty: nothing).

    Besides place, epoch and id, every character's digest
    (:func:`tests.cluster.replay.digest`: pack, scores, place, map memory)
    must equal that of its client's moves replayed in one process from the
    record it was ``planted`` with."""
    problems, saved = lost_or_duplicated(db, (r.name for r in results))
    for r in results:
        if r.name not in saved:
            continue
        record, epoch, _ = saved[r.name]
        if r.position is None or (record["depth"], record["x"], record["y"]) != (
            r.depth,
            *r.position,
        ):
            problems.append(f"{r.name}: saved at {record['depth']} {record['x']},{record['y']}")
        if epoch != 1 + r.trips:
            problems.append(f"{r.name}: epoch {epoch} after {r.trips} trips")
        if r.ids_seen != {r.actor_id}:
            problems.append(f"{r.name}: ids {sorted(r.ids_seen)}")
        try:
            replayed = digest(replay(SEED, planted[r.name], r.moves))
        except AssertionError as exc:
            problems.append(f"{r.name}: {exc}")
            continue
        if digest(player_from_record(r.actor_id, record)) != replayed:
            problems.append(f"{r.name}: saved data differs from a replay of its moves")
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--gateways", type=int, default=2)
    parser.add_argument("--players", type=int, default=40)
    parser.add_argument("--trips", type=int, default=250, help="trips per player")
    parser.add_argument(
        "--chat-every", type=float, default=6.0, help="seconds between a client's chat lines"
    )
    parser.add_argument(
        "--pause", type=float, default=0.0, help="seconds a client rests after each trip"
    )
    parser.add_argument(
        "--idle", type=float, default=10.0, help="seconds of CPU measured before any client"
    )
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--nats", default=None, help="use this NATS instead of starting one")
    parser.add_argument("--lease", type=float, default=6.0)
    args = parser.parse_args()
    # A SIGTERM stops the bench through its clean-up (processes, database).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))

    tmp = Path(tempfile.mkdtemp(prefix="uh-cluster-bench-"))
    keep = True
    nats_proc = None
    if args.nats is None:
        nats_proc, nats_url = start_nats(tmp)
    else:
        nats_url = args.nats
    databases = contextlib.ExitStack()
    db = databases.enter_context(bench_database(args.pg))
    prefix = f"uhb{os.getpid()}"
    try:
        with ClusterProcs(tmp, nats_url, db, prefix, args.lease, 3.0) as cluster:
            planted: dict[str, dict[str, Any]] = {}
            for i in range(args.players):
                planted[f"B{i}"] = plant(db, f"B{i}", f"tok{i}", i + 1, on="down")
            depths = args.players + 1
            workers = [f"w{k}" for k in range(args.workers)]
            for k, w in enumerate(workers):
                levels = ",".join(str(d) for d in range(k + 1, depths + 1, args.workers))
                cluster.worker(w, levels)
            urls = [cluster.gateway(f"g{k}") for k in range(args.gateways)]
            names = [*workers, *(f"g{k}" for k in range(args.gateways))]
            pids = {n: cluster.procs[n].pid for n in names}
            idle0 = {n: cpu_seconds(p) for n, p in pids.items()}
            time.sleep(args.idle)
            idle = {n: (cpu_seconds(p) - idle0[n]) / args.idle for n, p in pids.items()}
            cpu0 = {n: cpu_seconds(p) for n, p in pids.items()}
            me0 = time.process_time()
            t0 = time.monotonic()
            results = asyncio.run(
                drive(urls, args.players, args.trips, args.chat_every, args.pause)
            )
            wall = time.monotonic() - t0
            cpu = {n: cpu_seconds(p) - cpu0[n] for n, p in pids.items()}
            bots_cpu = time.process_time() - me0
            time.sleep(1.0)  # the last leaves are saved
            for n in names:
                cluster.signal(n, signal.SIGTERM)
            for n in names:
                cluster.wait(n, 30)
            logs = {n: cluster.log(n) for n in names}
        problems = check(db, results, planted)
        keep = bool(problems) or any(r.error for r in results)
    except BaseException:
        keep = True
        raise
    finally:
        databases.close()
        if nats_proc is not None:
            nats_proc.terminate()
            nats_proc.wait()
        if keep:
            print(f"logs kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    trips_done = sum(r.trips for r in results)
    errors = [r.error for r in results if r.error]
    ticks = wall * 10
    clients = args.players
    print(
        f"cluster: {args.workers} workers, {args.gateways} gateways, {clients} clients, "
        f"{trips_done} stair trips in {wall:.1f} s ({trips_done / wall:.1f} trips/s); "
        f"{len(errors)} clients stopped early"
    )
    for e in errors[:5]:
        print(f"  error: {e}")
    print("process  CPU % of a core: over the run, and idle (no client, before the run)")
    for n in names:
        print(f"  {n:<6} {100 * cpu[n] / wall:6.1f}   {100 * idle[n]:5.1f}")
    print(f"  bots   {100 * bots_cpu / wall:6.1f}  (this process: {clients} websocket clients)")
    total = sum(cpu.values())
    wk = sum(cpu[w] for w in workers)
    print(
        f"µs of CPU per client-tick: cluster {1e6 * total / (clients * ticks):.0f} "
        f"(workers {1e6 * wk / (clients * ticks):.0f}, "
        f"gateways {1e6 * (total - wk) / (clients * ticks):.0f})"
    )
    wk_idle = sum(idle[w] for w in workers) * wall
    gw_idle = sum(idle[n] for n in names if n not in workers) * wall
    print(
        f"  less the idle cost: workers {1e6 * (wk - wk_idle) / (clients * ticks):.0f}, "
        f"gateways {1e6 * (total - wk - gw_idle) / (clients * ticks):.0f}"
    )
    handoffs = sum(last_stats(logs[w]).get("handoffs", 0) for w in workers)
    print(
        f"µs of worker CPU per hand-off, if all worker CPU were hand-offs: "
        f"{1e6 * wk / max(1, handoffs):.0f} ({handoffs:.0f} hand-offs)"
    )
    for w in workers:
        st = last_stats(logs[w])
        print(
            f"  {w}: tick ms p50 {st['tick ms p50']:.2f} p99 {st['tick ms p99']:.2f}; "
            f"hand-off ms p50 {st['handoff ms p50']:.1f} p99 {st['handoff ms p99']:.1f}; "
            f"take-backs {st['takebacks']:.0f}, refused saves {st['refused saves']:.0f}"
        )
    seen = [ms for r in results for ms in r.trip_ms]
    print(f"trip as the client sees it, ms: p50 {pct(seen, 0.5):.0f} p99 {pct(seen, 0.99):.0f}")
    frames = sum(last_stats(logs[f"g{k}"])["frames"] for k in range(args.gateways))
    nbytes = sum(last_stats(logs[f"g{k}"])["frame bytes"] for k in range(args.gateways))
    print(
        f"per client: {frames / clients / wall:.1f} frames/s, {nbytes / clients / wall:.0f} B/s "
        f"({nbytes / max(1, frames):.0f} B per frame)"
    )
    said = sum(r.said for r in results)
    heard = [ms for r in results for ms in r.chat_ms]
    if said:
        print(
            f"global chat: {len(heard)} heard of {said * clients} expected; delay ms "
            f"p50 {pct(heard, 0.5):.1f} p99 {pct(heard, 0.99):.1f}"
        )
    print("check: " + ("no character lost, duplicated or admitted twice" if not problems else ""))
    for p in problems[:20]:
        print(f"  {p}")


if __name__ == "__main__":
    main()
