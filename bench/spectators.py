"""What spectators cost ``underhall serve`` (issue 45, item 1).

A spectator is written the very bytes its player is written
(:mod:`server.net.watch`): no view, no encoding, one more socket write per
frame. This bench measures that write's cost on a real server.

A ``serve`` of its own (a fresh world in a temporary directory, no
recordings) runs pinned to core 0 with ``taskset``; this script, pinned to
core 1, connects ``--players`` players that each take one step a tick
(directions drawn from a seeded generator) and reads every frame. Windows of
``--window`` seconds then alternate, ``--rounds`` times: without spectators,
and with ``--spectators`` spectators spread over the players (spectator
``k`` watches player ``k mod players``), connected before the window and
closed after it. For each window: the server's CPU (``/proc/PID/stat``,
user + system) as % of one core, the frames the players and the spectators
got. The difference of the two kinds of window, divided by the frames the
spectators got, is the server CPU per frame forwarded to a spectator;
beside it, the server CPU per frame a player is written (building its view,
encoding, writing: the window without spectators).

Usage::

    .venv/bin/python bench/spectators.py [--players 50] [--spectators 200]
        [--window 10] [--rounds 3] [--no-pin]

Linux only (``/proc``, ``taskset``); 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import websockets
from websockets.asyncio.client import ClientConnection

from protocol.codec import encode_client
from protocol.messages import Command, CommandName, Hello
from protocol.version import PROTOCOL_VERSION

STEPS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1))
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


@dataclass
class Counter:
    frames: int = 0


async def read_all(ws: ClientConnection, counter: Counter) -> None:
    """Count every frame until the connection closes."""
    with contextlib.suppress(websockets.ConnectionClosed):
        async for _ in ws:
            counter.frames += 1


async def player(url: str, name: str, rng: random.Random, counter: Counter) -> None:
    """Join as ``name`` and take a step a tick until cancelled."""
    async with websockets.connect(url, compression=None) as ws:
        await ws.send(encode_client(Hello(v=PROTOCOL_VERSION, name=name)))
        reader = asyncio.create_task(read_all(ws, counter))
        seq = 0
        try:
            while True:
                await ws.send(encode_client(Command(seq, CommandName.MOVE, rng.choice(STEPS))))
                seq += 1
                await asyncio.sleep(0.1)
        finally:
            reader.cancel()


async def spectator(url: str, name: str, watched: str, counter: Counter) -> None:
    """Watch ``watched`` as ``name`` until cancelled."""
    async with websockets.connect(url, compression=None) as ws:
        await ws.send(encode_client(Hello(v=PROTOCOL_VERSION, name=name, watch=watched)))
        await read_all(ws, counter)


async def window(pid: int, seconds: float, *counters: Counter) -> tuple[float, list[int]]:
    """The server's CPU (% of one core) over ``seconds``, and the frames
    each counter got meanwhile."""
    before = [c.frames for c in counters]
    cpu0, t0 = cpu_seconds(pid), time.monotonic()
    await asyncio.sleep(seconds)
    cpu1, t1 = cpu_seconds(pid), time.monotonic()
    return 100.0 * (cpu1 - cpu0) / (t1 - t0), [c.frames - b for c, b in zip(counters, before)]


async def run(args: argparse.Namespace, url: str, pid: int) -> None:
    rng = random.Random(45)
    players, watching = Counter(), Counter()
    names = [f"p{i}" for i in range(args.players)]
    tasks = [
        asyncio.create_task(player(url, n, random.Random(rng.random()), players)) for n in names
    ]
    await asyncio.sleep(3.0)  # everyone in, walking
    rows: list[tuple[str, float, int, int]] = []
    for _ in range(args.rounds):
        cpu, (pf, _) = await window(pid, args.window, players, watching)
        rows.append(("without", cpu, pf, 0))
        spectators = [
            asyncio.create_task(spectator(url, f"s{k}", names[k % len(names)], watching))
            for k in range(args.spectators)
        ]
        await asyncio.sleep(2.0)  # all watching
        cpu, (pf, sf) = await window(pid, args.window, players, watching)
        rows.append(("with", cpu, pf, sf))
        for task in spectators:
            task.cancel()
        await asyncio.gather(*spectators, return_exceptions=True)
        await asyncio.sleep(2.0)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    print(f"{'window':8} {'server CPU %':>12} {'player frames/s':>16} {'spectator frames/s':>19}")
    for kind, cpu, pf, sf in rows:
        print(f"{kind:8} {cpu:12.1f} {pf / args.window:16.0f} {sf / args.window:19.0f}")
    without = [r for r in rows if r[0] == "without"]
    with_ = [r for r in rows if r[0] == "with"]
    cpu_a = sum(r[1] for r in without) / len(without)
    cpu_b = sum(r[1] for r in with_) / len(with_)
    pf_a = sum(r[2] for r in without) / len(without) / args.window
    sf_b = sum(r[3] for r in with_) / len(with_) / args.window
    per_player = 1e6 * cpu_a / 100.0 / pf_a
    per_spectator = 1e6 * (cpu_b - cpu_a) / 100.0 / sf_b if sf_b else float("nan")
    print(
        f"server CPU per frame a player is written: {per_player:.1f} us; "
        f"per frame forwarded to a spectator: {per_spectator:.1f} us "
        f"({args.players} players, {args.spectators} spectators, mean of {args.rounds} rounds)"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--players", type=int, default=50)
    p.add_argument("--spectators", type=int, default=200)
    p.add_argument("--window", type=float, default=10.0)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--no-pin", action="store_true", help="do not pin with taskset")
    args = p.parse_args(argv)
    if not sys.platform.startswith("linux"):
        p.error("Linux only (/proc)")
    pin = not args.no_pin and shutil.which("taskset") is not None
    if pin:
        os.sched_setaffinity(0, {1})
    underhall = Path(sys.executable).parent / "underhall"
    with tempfile.TemporaryDirectory(prefix="uh-watch-") as tmp:
        cmd = [str(underhall), "serve", "--port", "0", "--seed", "45", "--db", f"{tmp}/world.db"]
        cmd += ["--recordings", "off"]
        if pin:
            cmd = ["taskset", "-c", "0", *cmd]
        log = open(f"{tmp}/serve.log", "wb")  # noqa: SIM115
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        try:
            url = None
            deadline = time.monotonic() + 30
            while url is None and time.monotonic() < deadline:
                time.sleep(0.2)
                found = re.search(
                    rb"ws://127\.0\.0\.1:(\d+)", Path(f"{tmp}/serve.log").read_bytes()
                )
                if found:
                    url = f"ws://127.0.0.1:{int(found.group(1))}"
            if url is None:
                print(Path(f"{tmp}/serve.log").read_text(), file=sys.stderr)
                return 1
            asyncio.run(run(args, url, proc.pid))
        finally:
            proc.terminate()
            proc.wait(20)
            log.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
