"""Load benchmark: N bots against a fresh ``underhall serve``, with the server's cost.

Starts ``underhall serve`` (10 ticks/s by default, a throw-away database) as a
subprocess, runs :func:`client.bots.run_bots_async` with ``-n`` bots for
``--duration`` seconds in this process, and samples the server process from
``/proc`` meanwhile: CPU time (``utime + stime`` of all its threads) and RSS.
Prints the bot report, then the server's CPU as a percentage of one core
(over the whole run, and after the connect ramp) and its peak RSS, plus this
process's own CPU (if it is near 100%, the bots, not the server, were the
limit: see PERFORMANCE.md, ~1,500 bots per core).

Usage::

    .venv/bin/python bench/load.py [-n 200] [--duration 30] [--tick-rate 10] [--json]

Linux only (reads ``/proc``).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from client.botreport import BotReport
from client.bots import run_bots_async

READY_TIMEOUT_S = 30.0
SAMPLE_PERIOD_S = 0.5
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(slots=True)
class ServerUsage:
    """Samples of one process: ``(wall s, cpu s, rss bytes)``, wall from perf_counter."""

    samples: list[tuple[float, float, int]] = field(default_factory=list)

    def cpu_percent(self, since: float = 0.0) -> float | None:
        """Mean CPU as % of one core over the samples taken at or after ``since``."""
        window = [s for s in self.samples if s[0] >= since]
        if len(window) < 2 or window[-1][0] <= window[0][0]:
            return None
        (t0, c0, _), (t1, c1, _) = window[0], window[-1]
        return 100.0 * (c1 - c0) / (t1 - t0)

    @property
    def peak_rss(self) -> int:
        """Largest resident set size seen, in bytes."""
        return max((s[2] for s in self.samples), default=0)


def read_proc(pid: int) -> tuple[float, int]:
    """CPU seconds (user + system, all threads) and RSS bytes of process ``pid``.

    Raises:
        OSError: the process is gone.
    """
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "
    utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of stat(5)
    rss_pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    return (utime + stime) / _CLOCK_TICKS, rss_pages * _PAGE


async def sample(pid: int, usage: ServerUsage) -> None:
    """Append a sample of ``pid`` to ``usage`` every :data:`SAMPLE_PERIOD_S` until cancelled."""
    while True:
        try:
            cpu, rss = read_proc(pid)
        except OSError:
            return
        usage.samples.append((time.perf_counter(), cpu, rss))
        await asyncio.sleep(SAMPLE_PERIOD_S)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_server(tmp: Path, port: int, tick_rate: int, seed: int) -> subprocess.Popen[bytes]:
    """Start ``underhall serve`` and return once it prints that it listens.

    Raises:
        RuntimeError: it exited or did not listen within :data:`READY_TIMEOUT_S`
            (the message holds its output).
    """
    log_path = tmp / "server.log"
    cmd = [
        sys.executable, "-m", "server.cli", "serve", "--host", "127.0.0.1",
        "--port", str(port), "--tick-rate", str(tick_rate), "--seed", str(seed),
        "--db", str(tmp / "bench.db"), "--max-players", "100000",
        "--max-conns-per-addr", "0", "--new-chars-per-hour", "0",  # every bot is 127.0.0.1
    ]  # fmt: skip
    with log_path.open("wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    expected = f"listening on ws://127.0.0.1:{port}".encode()
    deadline = time.monotonic() + READY_TIMEOUT_S
    while expected not in log_path.read_bytes():
        if proc.poll() is not None or time.monotonic() > deadline:
            stop_server(proc)
            raise RuntimeError(f"server did not start:\n{log_path.read_text()}")
        time.sleep(0.05)
    return proc


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    """Terminate the server, killing it if it has not exited after 10 s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


async def measure(
    url: str, pid: int, n: int, duration: float, seed: int
) -> tuple[BotReport, ServerUsage, float, float]:
    """Run the bots while sampling the server.

    Returns:
        The bot report, the server's samples, the time the connect ramp ended
        (perf_counter s) and this process's CPU as % of one core.
    """
    usage = ServerUsage()
    sampler = asyncio.create_task(sample(pid, usage))
    started = time.perf_counter()
    cpu0 = time.process_time()
    ramp_end = started + min(2.0, duration / 4)
    try:
        report = await run_bots_async(url, n, duration, seed=seed)
    finally:
        sampler.cancel()
        await asyncio.gather(sampler, return_exceptions=True)
    own = 100.0 * (time.process_time() - cpu0) / max(time.perf_counter() - started, 1e-9)
    return report, usage, ramp_end, own


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the results; exit status as ``underhall bots``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=200, help="bots (default %(default)s)")
    parser.add_argument("--duration", type=float, default=30.0, help="seconds (default 30)")
    parser.add_argument("--tick-rate", type=int, default=10, help="server ticks/s (default 10)")
    parser.add_argument("--seed", type=int, default=7, help="world and bot seed (default 7)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)

    loop_factory: Callable[[], asyncio.AbstractEventLoop] = asyncio.new_event_loop
    try:
        import uvloop

        loop_factory = uvloop.new_event_loop
    except ImportError:
        pass

    with tempfile.TemporaryDirectory(prefix="underhall-bench-") as tmp:
        port = free_port()
        proc = start_server(Path(tmp), port, args.tick_rate, args.seed)
        try:
            with asyncio.Runner(loop_factory=loop_factory) as runner:
                report, usage, ramp_end, own_cpu = runner.run(
                    measure(f"ws://127.0.0.1:{port}", proc.pid, args.n, args.duration, args.seed)
                )
        finally:
            stop_server(proc)

    def pct(value: float | None) -> float | None:
        return None if value is None else round(value, 1)

    server = {
        "tick_rate": args.tick_rate,
        "cpu_percent_of_core": pct(usage.cpu_percent()),
        "cpu_percent_of_core_after_ramp": pct(usage.cpu_percent(since=ramp_end)),
        "peak_rss_mb": round(usage.peak_rss / 2**20, 1),
        "start_rss_mb": round(usage.samples[0][2] / 2**20, 1) if usage.samples else None,
        "bot_process_cpu_percent_of_core": round(own_cpu, 1),
    }
    if args.json:
        print(json.dumps({"bots": dataclasses.asdict(report), "server": server}))
    else:
        print(report.format_table())
        print()
        print(f"server ({args.tick_rate} ticks/s, {report.clients_at_end} clients at end):")
        print(f"  CPU, % of one core   {server['cpu_percent_of_core']} over the run, "
              f"{server['cpu_percent_of_core_after_ramp']} after the ramp")  # fmt: skip
        print(f"  RSS                  {server['start_rss_mb']} MB at start, "
              f"{server['peak_rss_mb']} MB peak")  # fmt: skip
        print(f"bot process CPU, % of one core: {server['bot_process_cpu_percent_of_core']}")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
