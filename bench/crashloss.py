"""Crash-loss benchmark: how much play ``kill -9`` costs each character.

Starts ``underhall serve`` on a throw-away SQLite file (or ``--db URL``), lets
20 bots (:func:`client.bots.run_bots_async`) play, kills the server with
SIGKILL at a random moment, reads the database, restarts the server on the
same database and the same port (so the bots resume their characters with
their saved tokens), ten times. An observer connection pings every 50 ms and
keeps the server's last tick, the tick of the kill (to within a ping).

For each kill and each bot character it reports the ticks lost: the kill tick
minus the tick its row was saved at, if the row was written during that run;
otherwise the whole run (nothing of it was kept). Integrity: after every kill
every bot character created so far must still be in the database, and the
metadata ``checkpoint_tick`` must not be after the kill.

With ``--checkpoint-cost N`` it instead measures, in this process, what one
checkpoint of N connected characters costs: building and packing the records in the
tick, and writing them in the writer thread.

Usage::

    .venv/bin/python bench/crashloss.py [-n 20] [--kills 10] [--save-s 3] [--db URL]
    .venv/bin/python bench/crashloss.py --checkpoint-cost 1000
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

READY_TIMEOUT_S = 30.0
TICK_RATE = 10
PING_S = 0.05


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_server(db: str, port: int, log_path: Path, save_s: float) -> subprocess.Popen[bytes]:
    """Start ``underhall serve``; return once it listens.

    Raises:
        RuntimeError: It exited or did not listen in time (with its output).
    """
    start = log_path.stat().st_size if log_path.exists() else 0
    cmd = [
        sys.executable,
        "-m",
        "server.cli",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--tick-rate",
        str(TICK_RATE),
        "--seed",
        "17",
        "--db",
        db,
        "--save-s",
        str(save_s),
    ]
    with log_path.open("ab") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    expected = f"listening on ws://127.0.0.1:{port}".encode()
    deadline = time.monotonic() + READY_TIMEOUT_S
    while expected not in log_path.read_bytes()[start:]:
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"server did not start:\n{log_path.read_text()}")
        time.sleep(0.05)
    return proc


async def observe(url: str, name: str, last: list[int]) -> None:
    """Join as ``name`` and ping until the connection drops; keep the last tick."""
    import msgpack  # type: ignore[import-untyped]
    import websockets

    from protocol.version import PROTOCOL_VERSION

    try:
        async with websockets.connect(url, compression=None) as ws:
            await ws.send(msgpack.packb({"t": "hello", "v": PROTOCOL_VERSION, "name": name}))
            n = 0

            async def pinger() -> None:
                nonlocal n
                while True:
                    n += 1
                    await ws.send(msgpack.packb({"t": "ping", "id": n}))
                    await asyncio.sleep(PING_S)

            task = asyncio.create_task(pinger())
            try:
                async for data in ws:
                    msg = msgpack.unpackb(data, raw=False, strict_map_key=False)
                    if isinstance(msg, dict) and msg.get("t") == "pong":
                        last[0] = max(last[0], int(msg["tick"]))
            finally:
                task.cancel()
    except (OSError, websockets.ConnectionClosed):
        pass


def read_rows(db: str) -> tuple[dict[str, tuple[int, str]], int | None]:
    """``name -> (saved_tick, record digest)`` of every character, and the
    metadata ``checkpoint_tick``."""
    from server.store import open_store

    store = open_store(db, lock=False)
    try:
        rows = {
            row[0]: (int(row[3]), hashlib.sha256(row[2]).hexdigest())
            for kind, row in store.dump()
            if kind == "player"
        }
        checkpoint = store.get_meta("checkpoint_tick")
    finally:
        store.close()
    return rows, None if checkpoint is None else int(checkpoint)


@dataclass(slots=True)
class Kill:
    """One kill: when, and what each bot character lost (ticks)."""

    at_s: float
    tick: int
    checkpoint: int | None
    lost: dict[str, int]
    missing: list[str]


async def one_run(
    db: str,
    port: int,
    log: Path,
    n: int,
    save_s: float,
    kill_at: float,
    created: set[str],
    rng_seed: int,
) -> Kill:
    from client.bots import run_bots_async

    url = f"ws://127.0.0.1:{port}"
    before, _ = read_rows(db) if created else ({}, None)
    proc = start_server(db, port, log, save_s)
    last = [0]
    watcher = asyncio.create_task(observe(url, f"observer{rng_seed}", last))
    bots = asyncio.create_task(run_bots_async(url, n, kill_at + 2.0, seed=rng_seed, ramp=1.0))
    await asyncio.sleep(kill_at)
    proc.kill()  # SIGKILL
    proc.wait(10)
    kill_tick = last[0]
    if kill_tick == 0:
        raise RuntimeError("the observer saw no tick: is the server answering pings?")
    await asyncio.gather(bots, watcher, return_exceptions=True)
    after, checkpoint = read_rows(db)
    names = [f"bot{i}" for i in range(n)]
    lost: dict[str, int] = {}
    for name in names:
        row = after.get(name)
        if row is None:
            continue
        changed = before.get(name) != row
        lost[name] = kill_tick - row[0] if changed else kill_tick
    missing = sorted(created - set(after))
    created.update(name for name in names if name in after)
    return Kill(kill_at, kill_tick, checkpoint, lost, missing)


async def crash_loop(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="underhall-crash-") as tmp:
        os.environ["UNDERHALL_HOME"] = tmp  # the bots' tokens live here, not in ~
        db = args.db or str(Path(tmp) / "world.db")
        log = Path(tmp) / "server.log"
        port = free_port()
        created: set[str] = set()
        kills: list[Kill] = []
        for k in range(args.kills):
            kill_at = rng.uniform(args.min_s, args.max_s)
            kill = await one_run(db, port, log, args.n, args.save_s, kill_at, created, k)
            kills.append(kill)
            lost = list(kill.lost.values())
            print(
                f"kill {k + 1:2d} at {kill.at_s:5.1f} s: tick {kill.tick}, last checkpoint "
                f"{kill.checkpoint}, lost per character mean {statistics.mean(lost):.1f} "
                f"max {max(lost)} ticks; missing {kill.missing or 'none'}",
                flush=True,
            )
        every = [v for kill in kills for v in kill.lost.values()]
        missing = sorted({m for kill in kills for m in kill.missing})
        late = [k.tick for k in kills if k.checkpoint is not None and k.checkpoint > k.tick]
        print(
            f"\n{args.kills} kills, {args.n} bots, save every {args.save_s} s, {TICK_RATE} ticks/s"
        )
        print(
            f"ticks lost per character: mean {statistics.mean(every):.1f}, max {max(every)} "
            f"({statistics.mean(every) / TICK_RATE:.2f} s, {max(every) / TICK_RATE:.1f} s)"
        )
        print(
            f"integrity: {len(created)} characters, lost {len(missing)} "
            f"{missing or ''}; checkpoints after the kill: {len(late)}"
        )
        return 1 if missing or late else 0


def checkpoint_cost(n: int) -> int:
    """Time one checkpoint of ``n`` characters spread over depth 1."""
    from server.game.game import Game
    from server.sim.world import World
    from server.store import open_store

    with tempfile.TemporaryDirectory(prefix="underhall-cost-") as tmp:
        store = open_store(Path(tmp) / "world.db")
        game = Game(World(3, populate=False), store, save_interval_s=3600)
        for i in range(n):
            game.join(f"p{i}", None, "warrior", object())
        game.saver.flush()
        rng = random.Random(1)
        for _ in range(3):
            for aid in list(game.seats):
                game.command(aid, 0, "move", (rng.choice((-1, 1)), rng.choice((-1, 0, 1))))
            game.step()
        builds, writes = [], []
        for _ in range(5):
            for aid in list(game.seats):
                game.command(aid, 0, "move", (rng.choice((-1, 1)), rng.choice((-1, 0, 1))))
            game.step()
            started = time.perf_counter()
            game.checkpoint()
            builds.append((time.perf_counter() - started) * 1000)
            game.saver.flush()
            writes.append(game.saver.stats.last_ms)
        size = Path(tmp, "world.db").stat().st_size
        store.close()
    print(
        f"checkpoint of {n} characters: built and packed in the tick "
        f"{statistics.median(builds):.1f} ms "
        f"(median of 5, max {max(builds):.1f}); compared and written by the writer thread "
        f"{statistics.median(writes):.1f} ms (max {max(writes):.1f}); database "
        f"{size / 1e6:.1f} MB"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=20, help="bots (default %(default)s)")
    parser.add_argument("--kills", type=int, default=10, help="default %(default)s")
    parser.add_argument(
        "--save-s", type=float, default=3.0, help="the server's --save-s (default %(default)s)"
    )
    parser.add_argument(
        "--min-s",
        type=float,
        default=4.0,
        help="earliest kill after a start, s (default %(default)s)",
    )
    parser.add_argument(
        "--max-s",
        type=float,
        default=12.0,
        help="latest kill after a start, s (default %(default)s)",
    )
    parser.add_argument("--db", default=None, help="a postgresql:// URL instead of SQLite")
    parser.add_argument("--seed", type=int, default=1, help="of the kill moments")
    parser.add_argument(
        "--checkpoint-cost",
        type=int,
        default=0,
        metavar="N",
        help="measure one checkpoint of N characters instead",
    )
    args = parser.parse_args(argv)
    if args.checkpoint_cost:
        return checkpoint_cost(args.checkpoint_cost)
    result: Any = asyncio.run(crash_loop(args))
    return int(result)


if __name__ == "__main__":
    sys.exit(main())
