"""Fuzz benchmark: a million hostile frames against a fresh ``underhall serve``.

Starts ``underhall serve`` on 127.0.0.1 (a throw-away database), joins one
honest player that pings the server throughout, and sends ``-n`` frames of
the kinds of ``tests/net/fuzzframes.py`` (random bytes, truncated and
overlong msgpack, wrong shapes, deep nesting, extension types, frames over
the size limit, odd hellos, game messages before hello, text frames), in
batches that fit the message burst, from several connections at a time.

Prints the frames sent and the server's answers by kind, the tracebacks in
the server's log, the server's memory before and after, and the honest
player's ping round trips. Exits 1 if the log holds a traceback or the
honest player stopped being answered.

Frames that end their connection (over-size frames and hellos) are sent one
per connection, so they get ``--one-per-connection-share`` of the frames
(default 1% each), which keeps the number of connections (and of sockets in
TIME_WAIT) reasonable. The failed-token caps are turned off for the run (the
fuzzer's wrong tokens would otherwise lock its address out of resuming,
and every frame would be sent before hello).

    python bench/fuzz.py            # 10**6 frames
    python bench/fuzz.py -n 20000   # a quick look
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import msgpack  # type: ignore[import-untyped]
import websockets

from protocol.version import PROTOCOL_VERSION
from tests.net.fuzzframes import KINDS, ONE_PER_CONNECTION, Tally, fuzz
from tests.serverproc import server_process


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` in MB (Linux ``/proc``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def _join(url: str, name: str) -> tuple[Any, dict[str, Any]]:
    ws = await websockets.connect(url, compression=None)
    await ws.send(msgpack.packb({"t": "hello", "v": PROTOCOL_VERSION, "name": name}))
    while True:
        msg = msgpack.unpackb(
            await asyncio.wait_for(ws.recv(), 10), raw=False, strict_map_key=False
        )
        if msg.get("t") == "welcome":
            return ws, msg


async def _honest(url: str, stop: asyncio.Event, rtts: list[float], missed: list[int]) -> None:
    """Ping every 0.2 s; record round trips (ms) and pings unanswered within 5 s."""
    ws, _ = await _join(url, "honest")
    n = 0
    while not stop.is_set():
        n += 1
        sent = time.perf_counter()
        await ws.send(msgpack.packb({"t": "ping", "id": n}))
        try:
            async with asyncio.timeout(5):
                while True:
                    msg = msgpack.unpackb(await ws.recv(), raw=False, strict_map_key=False)
                    if msg.get("t") == "pong" and msg["id"] == n:
                        break
            rtts.append((time.perf_counter() - sent) * 1000)
        except TimeoutError:
            missed.append(n)
        await asyncio.sleep(0.2)
    await ws.close()


async def run(args: argparse.Namespace, url: str, pid: int) -> tuple[Tally, dict[str, Any]]:
    port = int(url.rsplit(":", 1)[1])
    resume = []
    for w in range(args.workers):
        ws, welcome = await _join(url, f"fuzzer{w}")
        resume.append(
            {
                "t": "hello",
                "v": PROTOCOL_VERSION,
                "name": welcome["name"],
                "token": welcome["token"],
            }
        )
        await ws.close()
    await asyncio.sleep(0.5)
    before = rss_mb(pid)
    one = max(1, int(args.n * args.one_per_connection_share))
    rest = max(
        1, (args.n - one * len(ONE_PER_CONNECTION)) // (len(KINDS) - len(ONE_PER_CONNECTION))
    )
    stop = asyncio.Event()
    rtts: list[float] = []
    missed: list[int] = []
    honest = asyncio.create_task(_honest(url, stop, rtts, missed))
    peak = before
    started = time.perf_counter()

    def progress(tally: Tally) -> None:
        nonlocal peak
        peak = max(peak, rss_mb(pid))
        sent = sum(tally.frames.values())
        print(
            f"  {sent:>9,} frames, {time.perf_counter() - started:6.0f} s, "
            f"server {peak:.0f} MB peak",
            file=sys.stderr,
            flush=True,
        )

    tally = await fuzz(
        port,
        lambda k: one if k in ONE_PER_CONNECTION else rest,
        seed=args.seed,
        workers=args.workers,
        resume=resume,
        big_max=args.big_max,
        progress=progress,
    )
    elapsed = time.perf_counter() - started
    peak = max(peak, rss_mb(pid))
    await asyncio.sleep(2.0)
    stop.set()
    await honest
    rtts.sort()
    stats = {
        "seconds": elapsed,
        "rss_before": before,
        "rss_peak": peak,
        "rss_after": rss_mb(pid),
        "pings": len(rtts),
        "missed": len(missed),
        "p50": rtts[len(rtts) // 2] if rtts else float("nan"),
        "p99": rtts[min(len(rtts) - 1, int(len(rtts) * 0.99))] if rtts else float("nan"),
    }
    return tally, stats


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=10**6, help="frames to send (default 10**6)")
    parser.add_argument("--workers", type=int, default=4, help="connections at a time")
    parser.add_argument("--seed", type=int, default=0, help="seed of the frames")
    parser.add_argument(
        "--big-max",
        type=int,
        default=1 << 20,
        help="largest over-size frame in bytes (default 1 MiB)",
    )
    parser.add_argument(
        "--one-per-connection-share",
        type=float,
        default=0.01,
        help="share of -n for each kind sent one per connection (default 0.01)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        with server_process(
            Path(tmp),
            seed=1,
            args=[
                "--token-failures-per-name",
                "0",
                "--token-failures-per-addr",
                "0",
                "--log-level",
                "info",
            ],
        ) as (url, proc):
            tally, stats = asyncio.run(run(args, url, proc.pid))
        log = (Path(tmp) / "server.log").read_text(errors="replace")
    tracebacks = log.count("Traceback")
    total = sum(tally.frames.values())
    print(
        f"frames sent: {total:,} in {stats['seconds']:.0f} s "
        f"({total / max(stats['seconds'], 1e-9):,.0f} per second)"
    )
    for kind in KINDS:
        outcomes = ", ".join(
            f"{what} {count:,}" for what, count in tally.outcomes[kind].most_common()
        )
        print(f"  {kind:<10}{tally.frames[kind]:>9,}  {outcomes}")
    print(f"tracebacks in the server log: {tracebacks}")
    print(
        f"server RSS: {stats['rss_before']:.0f} MB before, {stats['rss_peak']:.0f} MB peak, "
        f"{stats['rss_after']:.0f} MB after"
    )
    print(
        f"honest player: {stats['pings']} pings answered, {stats['missed']} missed, "
        f"round trip p50 {stats['p50']:.1f} ms, p99 {stats['p99']:.1f} ms"
    )
    return 1 if tracebacks or stats["missed"] else 0


if __name__ == "__main__":
    sys.exit(main())
