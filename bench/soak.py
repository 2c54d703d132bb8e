"""Soak benchmark (issue 48): does a server's memory hold steady in a long game?

Starts ``underhall serve`` (a throw-away database, 10 ticks/s) pinned to one
core with ``taskset``, and ``-n`` explore-and-fight bots (``underhall
bots``: they fight, use items, cast and take the stairs down) pinned to the
other, in ``--procs`` processes, for ``--minutes``. Besides them, every
minute ``--churn`` bots with new names join and leave again a minute later,
as players of a community server come and go (their characters are saved
and left behind).

Every ``--every`` seconds (default 60) it prints one line: the server's
resident memory (``/proc/PID/statm``) and what the server says it holds
(the admin command ``memory``, :mod:`server.game.census`): players, levels
in memory, floor items, characters that left and are still held, map
memory held by players, saved level records, the collector's tracked
objects. ``--types N`` also counts the server's live objects by type
(a pass over all of them, which the tick waits for: about 0.1-0.3 s each
time); ``--tracemalloc N`` runs the server under ``PYTHONTRACEMALLOC=1``
(slower: about a third more server CPU) and takes its N largest allocation
sites by file and line each time.

At the end it prints the growth between the baseline sample (minute 5, or a
third of the way for runs shorter than 15 minutes, or ``--baseline``) and
the last: resident memory, every count of the census, the object types that
grew most and, with ``--tracemalloc``, the ten allocation sites that grew
most; and the bots' totals (commands, errors). ``--garbage N`` makes the
last sample also collect everything, the frozen heap included, and list the
N commonest types of cyclic garbage it freed (what the server's paced
collector would have kept). ``--json`` prints instead
one JSON object (the lines go to standard error): ``samples`` (each with ``t_s``, ``rss_bytes`` and the
server's answer), ``growth`` and ``bots``.

Usage::

    .venv/bin/python bench/soak.py [-n 1000] [--minutes 30] [--procs K] [--churn C]
        [--every 60] [--types 20] [--tracemalloc 50] [--garbage 20]
        [--level-idle-s S] [--tree PATH] [--json]

Linux only (``/proc``, ``taskset``; two cores).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from scale import free_port, pinned, read_cpu, start_server, stop

from server.net.admin import request

SERVER_CORE = 0
BOTS_CORE = 1
BOTS_PER_PROC = 400
"""Default bots per bot process (``--procs`` is ``n`` over this, rounded up)."""
ADMIN_TIMEOUT_S = 60.0
CHURN_S = 50.0
"""Seconds each churning bot plays before it leaves."""
CHURN_OFFSET_S = 30.0
"""Churning bots join this many seconds into each minute (so each sample,
on the minute, finds the minute's churners playing)."""


def bot_command(url: str, n: int, seconds: float, prefix: str, seed: int) -> list[str]:
    """``underhall bots`` with ``n`` bots named ``prefix0...`` for ``seconds``, JSON report."""
    return [
        sys.executable, "-m", "server.cli", "bots", "--url", url, "-n", str(n),
        "--duration", f"{seconds:.1f}", "--prefix", prefix, "--seed", str(seed), "--json",
    ]  # fmt: skip


def flatten(answer: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, float]]:
    """Every number in a nested answer as ``("a.b.c", value)``; the per-level
    list becomes sums over the levels (``levels.items`` ...)."""
    for key, value in answer.items():
        name = f"{prefix}{key}"
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int | float):
            yield name, float(value)
        elif isinstance(value, Mapping) and key not in ("objects",):
            yield from flatten(value, name + ".")
        elif key == "levels" and isinstance(value, list):
            for field in ("players", "monsters", "piles", "items", "fov_cells"):
                yield f"levels.{field}", float(sum(level.get(field, 0) for level in value))
            parts = sorted({part for level in value for part in level.get("bytes", {})})
            for part in parts:
                held = sum(level.get("bytes", {}).get(part, 0) for level in value)
                yield f"levels.bytes.{part}", float(held)


def tick_rate(first: Mapping[str, Any], last: Mapping[str, Any]) -> float | None:
    """Ticks per second the server kept between two samples (None if
    they are the same or lack the world's tick)."""
    ticks = [s["answer"].get("world", {}).get("tick") for s in (first, last)]
    span = float(last["t_s"] - first["t_s"])
    if None in ticks or span <= 0:
        return None
    return round(float(ticks[1] - ticks[0]) / span, 2)


def line(t_s: float, rss: int, answer: Mapping[str, Any], rate: float | None = None) -> str:
    """One sample as a line of text (``rate``: ticks/s since the last sample)."""
    world = answer.get("world", {})
    host = answer.get("host", {})
    levels = answer.get("levels", [])
    objects = answer.get("objects", {})
    items = " ".join(f"{lv['depth']}:{lv['items']}" for lv in levels)
    level_bytes = sum(lv.get("bytes", {}).get("total", 0) for lv in levels)
    fov_bytes = sum(lv.get("bytes", {}).get("fov_cache", 0) for lv in levels)
    tracked = objects.get("(all)")
    return (
        f"min {t_s / 60:5.1f}  rss {rss / 2**20:6.1f} MB  players {host.get('seats')}"
        f"  levels {world.get('levels')} (saved {world.get('saved_levels')})"
        f"  left {host.get('left')} ({host.get('left_bytes', 0) / 2**10:.0f} kB)"
        f"  map memory {world.get('memory_grids')} depths"
        f" {world.get('memory_bytes', 0) / 2**20:.1f} MB"
        f" ({world.get('memory_live_bytes', 0) / 2**20:.1f} live)"
        f"  parts {host.get('memory_part_bytes', 0) / 2**20:.1f} MB"
        f"  monsters {world.get('monsters')}"
        f"  levels hold {level_bytes / 2**20:.1f} MB"
        f" (fov {fov_bytes / 2**20:.1f}, path finders {(world.get('path_finder_bytes') or 0) / 2**20:.1f})"
        + (f"  objects {tracked}" if tracked is not None else "")
        + (f"  ticks/s {rate:.2f}" if rate is not None else "")
        + f"  floor items by depth {items}"
    )


def growth(first: dict[str, Any], last: dict[str, Any]) -> dict[str, Any]:
    """What changed from the sample ``first`` to ``last``: RSS, every count
    of the census, object types and allocation sites (largest growth first)."""
    a, b = first["answer"], last["answer"]
    counts_a, counts_b = dict(flatten(a)), dict(flatten(b))
    counts = {
        k: [counts_a.get(k), v]
        for k, v in counts_b.items()
        if counts_a.get(k) != v and not k.startswith(("gc_counts", "world.tick"))
    }
    types_a, types_b = a.get("objects") or {}, b.get("objects") or {}
    types = sorted(
        ((k, types_b.get(k, 0) - types_a.get(k, 0)) for k in set(types_a) | set(types_b)),
        key=lambda kv: -kv[1],
    )
    sites_a = {s["site"]: s for s in a.get("sites") or []}
    sites_b = {s["site"]: s for s in b.get("sites") or []}
    sites = sorted(
        (
            (k, sites_b.get(k, {}).get("bytes", 0) - sites_a.get(k, {}).get("bytes", 0))
            for k in set(sites_a) | set(sites_b)
        ),
        key=lambda kv: -kv[1],
    )
    rss_a, rss_b = first["rss_bytes"], last["rss_bytes"]
    return {
        "from_s": first["t_s"],
        "to_s": last["t_s"],
        "rss_from_bytes": rss_a,
        "rss_to_bytes": rss_b,
        "rss_growth_pct": round(100.0 * (rss_b - rss_a) / rss_a, 2),
        "ticks_per_s": tick_rate(first, last),
        "counts": counts,
        "types": types[:15],
        "sites": sites[:10],
    }


def sum_bots(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """The bot processes' reports added up (counters only)."""
    keys = ("clients_requested", "clients_connected", "clients_at_end", "commands_sent",
            "protocol_errors", "connect_failures", "bot_errors", "deaths", "descents")  # fmt: skip
    out: dict[str, Any] = {k: sum(int(r.get(k, 0)) for r in reports) for k in keys}
    out["deepest_depth"] = max((int(r.get("deepest_depth", 0)) for r in reports), default=0)
    out["reports"] = len(reports)
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Start the server and the bots, sample, stop; return the samples, growth and bots."""
    seconds = args.minutes * 60.0
    baseline = args.baseline if args.baseline is not None else min(5.0, args.minutes / 3)
    procs = args.procs or max(1, math.ceil(args.n / BOTS_PER_PROC))
    if args.tracemalloc:
        os.environ["PYTHONTRACEMALLOC"] = "1"  # the server's environment, not the bots'
    bot_env = {k: v for k, v in os.environ.items() if k != "PYTHONTRACEMALLOC"}
    samples: list[dict[str, Any]] = []
    reports: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="underhall-soak-") as tmp_name:
        tmp = Path(tmp_name)
        bot_env["UNDERHALL_HOME"] = str(tmp / "home")  # the bots' tokens
        port = free_port()
        extra = () if args.level_idle_s is None else ("--level-idle-s", str(args.level_idle_s))
        server = start_server(
            tmp, port, args.tick_rate, args.seed, SERVER_CORE, tree=args.tree, extra=extra
        )
        os.environ.pop("PYTHONTRACEMALLOC", None)
        admin = tmp / "bench.db.admin.sock"
        url = f"ws://127.0.0.1:{port}"
        bots: list[subprocess.Popen[bytes]] = []
        churners: list[subprocess.Popen[bytes]] = []
        logs = tmp / "bots"
        logs.mkdir()

        def launch(cmd: list[str], name: str) -> subprocess.Popen[bytes]:
            with (logs / f"{name}.out").open("wb") as out, (logs / f"{name}.err").open("wb") as err:
                return subprocess.Popen(pinned(BOTS_CORE, cmd), stdout=out, stderr=err, env=bot_env)

        try:
            started = time.monotonic()
            for k in range(procs):
                count = args.n // procs + (1 if k < args.n % procs else 0)
                cmd = bot_command(url, count, seconds + 5.0, f"soak{k}x", args.seed + k)
                bots.append(launch(cmd, f"soak{k}"))
            next_sample = started + args.every
            minute = 0
            while True:
                now = time.monotonic()
                churn_at = started + CHURN_OFFSET_S + 60.0 * minute
                if args.churn and churn_at <= now < started + seconds - CHURN_S - 5.0:
                    cmd = bot_command(url, args.churn, CHURN_S, f"churn{minute}x", 1000 + minute)
                    churners.append(launch(cmd, f"churn{minute}"))
                    minute += 1
                if now >= next_sample:
                    t_s = now - started
                    ask = {"cmd": "memory", "types": args.types, "sites": args.tracemalloc}
                    if t_s >= seconds - 1.0 and args.garbage:
                        ask["garbage"] = args.garbage  # the last sample: it frees what it finds
                    answer = request(admin, ask, timeout=ADMIN_TIMEOUT_S)
                    _, _, rss = read_cpu(server.pid)
                    sample = {"t_s": round(t_s, 1), "rss_bytes": rss, "answer": answer}
                    rate = tick_rate(samples[-1], sample) if samples else None
                    samples.append(sample)
                    out = sys.stderr if args.json else sys.stdout
                    print(line(t_s, rss, answer, rate), file=out, flush=True)
                    next_sample += args.every
                    if t_s >= seconds - 1.0:
                        break
                if server.poll() is not None:
                    raise RuntimeError(f"the server exited: {(tmp / 'server.log').read_text()}")
                time.sleep(0.2)
        finally:
            for proc in bots + churners:
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    stop(proc)
            stop(server)
            for out in sorted(logs.glob("*.out")):
                for text in out.read_text().splitlines()[-1:]:
                    try:
                        reports.append(json.loads(text))
                    except ValueError:
                        pass
            errors = [p.read_text()[-2000:] for p in sorted(logs.glob("*.err")) if p.stat().st_size]
            tail = (tmp / "server.log").read_text()[-3000:]
    base = next((s for s in samples if s["t_s"] >= baseline * 60.0 - 1.0), samples[0])
    return {
        "n": args.n,
        "minutes": args.minutes,
        "procs": procs,
        "churn": args.churn,
        "baseline_min": baseline,
        "samples": samples,
        "growth": growth(base, samples[-1]),
        "bots": sum_bots(reports),
        "bot_stderr": errors,
        "server_log_tail": tail,
    }


def print_report(result: dict[str, Any]) -> None:
    """The end of a run as text: growth and the bots' totals."""
    g = result["growth"]
    print()
    print(
        f"growth from minute {g['from_s'] / 60:.1f} to {g['to_s'] / 60:.1f}: rss "
        f"{g['rss_from_bytes'] / 2**20:.1f} -> {g['rss_to_bytes'] / 2**20:.1f} MB "
        f"({g['rss_growth_pct']:+.1f}%), {g['ticks_per_s']} ticks/s kept"
    )
    for name, (a, b) in sorted(g["counts"].items()):
        print(f"  {name:<32} {a} -> {b}")
    if g["types"]:
        print("object types that grew most (count):")
        for name, delta in g["types"]:
            if delta:
                print(f"  {delta:+8d}  {name}")
    garbage = result["samples"][-1]["answer"].get("garbage")
    if garbage:
        print("cyclic garbage the server held at the end (count by type):")
        for name, count in garbage.items():
            print(f"  {count:8d}  {name}")
    if g["sites"]:
        print("allocation sites that grew most (bytes):")
        for site, delta in g["sites"]:
            print(f"  {delta:+10d}  {site}")
    b = result["bots"]
    print(
        f"bots: {b['clients_connected']} of {b['clients_requested']} connected in "
        f"{b['reports']} processes, {b['commands_sent']} commands, {b['deaths']} deaths, "
        f"{b['descents']} descents (deepest {b['deepest_depth']}), protocol errors "
        f"{b['protocol_errors']}, connect failures {b['connect_failures']}, "
        f"bot errors {b['bot_errors']}"
    )
    for text in result["bot_stderr"]:
        print(f"bot stderr: {text}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run the soak; print its samples and growth (or ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=1000, help="bots (default %(default)s)")
    parser.add_argument("--minutes", type=float, default=30.0, help="default %(default)s")
    parser.add_argument("--procs", type=int, default=0, help="bot processes (default n/400)")
    parser.add_argument(
        "--churn",
        type=int,
        default=None,
        help="bots with new names joining each minute for 50 s (default n/20)",
    )
    parser.add_argument("--every", type=float, default=60.0, help="seconds between samples")
    parser.add_argument(
        "--baseline", type=float, default=None, help="growth from this minute (default min(5, T/3))"
    )
    parser.add_argument("--types", type=int, default=20, help="object types listed (0: none)")
    parser.add_argument(
        "--tracemalloc", type=int, default=0, metavar="N", help="N allocation sites (slow)"
    )
    parser.add_argument(
        "--garbage",
        type=int,
        default=0,
        metavar="N",
        help="at the last sample, collect everything and list the N commonest garbage types",
    )
    parser.add_argument(
        "--level-idle-s",
        type=float,
        default=None,
        metavar="S",
        help="the server's --level-idle-s (default: the server's own)",
    )
    parser.add_argument(
        "--tree",
        type=Path,
        default=None,
        help="run the server from this source tree (an old commit's checkout, for before/after)",
    )
    parser.add_argument("--tick-rate", type=int, default=10, help="default %(default)s")
    parser.add_argument("--seed", type=int, default=7, help="world and bot seed")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if args.churn is None:
        args.churn = args.n // 20
    result = run(args)
    if args.json:
        print(json.dumps(result))
    else:
        print_report(result)
    return 0 if result["bots"]["protocol_errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
