"""Receive benchmark: what one command a client sends costs ``serve``, from
its frame's payload to the world's queue.

In one process, without the network: a :class:`~server.net.server.GameServer`
with ``-n`` players joined to its game, each seated as ``serve`` seats it
(a ``Client`` with its welcomed session, message bucket and chat buckets).
Every round hands each player one ``move`` command's payload (msgpack,
``{"t": "cmd", "seq": k, "c": "move", "d": [dx, dy]}``, as a client sends
it, 8 directions and growing ``seq``) through the front's real receive path,
:meth:`Front._message_now <server.net.front.Front._message_now>`: the message
rate, :func:`~protocol.codec.decode_client` (decoding and every check), the
session's table, the routing, :meth:`Game.carry_out
<server.game.host.Host.carry_out>` (the simulation's command, queued for
the world) and the ``underhall_commands_total`` count. Between rounds, not
timed, the players' queues are emptied and their buckets refilled (the
world is not stepped: the tick is ``bench/tick.py``'s). Two stages are also
timed alone on the same payloads: ``decode`` (:func:`decode_client`) and
``route`` (:meth:`GameServer._route`, the command already decoded).

Not measured here: the kernel's read, the event loop, and cutting the
websocket frame out of the bytes read (``server/net/guard.py``;
``bench/floor.py`` measures those live as "per command received").

Figures are CPU time of the process (``time.process_time``), in µs per
command: the median and the fastest of ``--rounds`` rounds of every stage,
each round ``-n`` commands.

Given source trees (git revisions, exported with ``git archive``, or
directories), each is measured in a subprocess with its own modules first on
the path, the trees alternated ``--repeat`` times, so that old and new meet
the same machine load; this script's measuring code runs on each.

With ``--instructions``, each tree's whole stage is run under valgrind's
callgrind instead, with 1 and ``1 + --rounds`` rounds, less the untimed work
between rounds counted the same way: instructions per command, which the
machine's load cannot move (the trees' runs go two at a time).

    python bench/receive.py
    python bench/receive.py HEAD~1 . --repeat 5
    python bench/receive.py HEAD~1 . --instructions --rounds 10
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from instructions import callgrind, export_tree  # bench/: the same tree export and count

ROOT = Path(__file__).resolve().parent.parent


def measure(n: int, rounds: int, only: str = "") -> dict[str, list[float]]:
    """µs per command of each stage, one figure per round, for ``n`` seated
    players of a fresh ``serve`` (no network). ``only``: ``whole`` runs only
    that stage, ``refill`` only the untimed work between rounds (for
    counting instructions)."""
    import msgpack  # type: ignore[import-untyped]

    from protocol.codec import decode_client
    from protocol.session import ServerSession
    from server.game.game import Game
    from server.game.store import Store
    from server.net.ratelimit import chat_buckets, message_bucket
    from server.net.server import Client, GameServer
    from server.sim.commands import DIRECTIONS
    from server.sim.world import World

    world = World(7)
    game = Game(world, Store(":memory:"), max_players=n + 1)
    server = GameServer(game, port=0)
    now = time.monotonic()
    clients = []
    for i in range(n):
        actor = game.join(f"p{i}", None, None, object())[0]
        session = ServerSession()
        session.welcomed()
        clients.append(
            Client(object(), actor.id, session, message_bucket(now), *chat_buckets(now))  # type: ignore[arg-type]
        )
    actors = [world.actors[c.actor_id] for c in clients]
    payloads = [
        msgpack.packb({"t": "cmd", "seq": 100 * k, "c": "move", "d": list(DIRECTIONS[k % 8])})
        for k in range(64)
    ]
    commands = [decode_client(p) for p in payloads]
    message_now, route = server._message_now, server._route
    stages: dict[str, list[float]] = {"whole": [], "decode": [], "route": []}
    clock = time.process_time

    def refill() -> None:  # not timed: the next round finds room and tokens
        for a in actors:
            a.queue.clear()
        for c in clients:
            c.bucket.tokens = c.bucket.burst

    for r in range(rounds):
        payload, command = payloads[r % 64], commands[r % 64]
        if only == "refill":
            refill()
            continue
        if only == "whole":
            for c in clients:
                message_now(c, payload)
            refill()
            continue
        t0 = clock()
        for c in clients:
            message_now(c, payload)
        t1 = clock()
        refill()
        t2 = clock()
        for c in clients:
            route(c, command, payload)  # type: ignore[arg-type]
        t3 = clock()
        refill()
        t4 = clock()
        for c in clients:
            decode_client(payload)
        t5 = clock()
        for name, spent in (("whole", t1 - t0), ("route", t3 - t2), ("decode", t5 - t4)):
            stages[name].append(spent / n * 1e6)
    queued = sum(c.actions for c in clients)
    expected = {"": 2, "whole": 1, "refill": 0}[only] * n * rounds
    if queued != expected:  # every command reached the world (none dropped)
        raise RuntimeError(f"{queued} of {expected} commands were carried out")
    return stages


def count_instructions(tree: Path, n: int, rounds: int, only: str, scratch: Path) -> int:
    """Instructions callgrind counts for :func:`measure` with ``only`` in a
    subprocess importing from ``tree``.

    Raises:
        RuntimeError: the run failed or callgrind printed no total.
    """
    out = scratch / f"callgrind.{os.getpid()}.{tree.name}.{only}.{rounds}"
    args = ["--measure", "--only", only, "-n", str(n), "--rounds", str(rounds)]
    return callgrind(tree, [__file__, *args], out)


def instructions(trees: list[Path], specs: list[str], n: int, rounds: int) -> None:
    """Print each tree's instructions per command (:func:`count_instructions`
    of the whole stage less the refill between rounds, each the difference
    between 1 and ``1 + rounds`` rounds, so that the setup cancels)."""
    jobs = [(t, only, r) for t in trees for only in ("whole", "refill") for r in (1, 1 + rounds)]
    with (
        tempfile.TemporaryDirectory(prefix="underhall-receive-cg-") as tmp,
        concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool,
    ):
        counts = list(
            pool.map(lambda job: count_instructions(job[0], n, job[2], job[1], Path(tmp)), jobs)
        )
    print(f"players {n}, {rounds} rounds: instructions per command (callgrind)")
    for i, spec in enumerate(specs):
        whole_1, whole_k, refill_1, refill_k = counts[4 * i : 4 * i + 4]
        per = ((whole_k - whole_1) - (refill_k - refill_1)) / (rounds * n)
        print(f"{spec:>12}  {per:8.0f}")


def run_tree(tree: Path, n: int, rounds: int) -> dict[str, list[float]]:
    """:func:`measure` in a subprocess importing from ``tree``.

    Raises:
        RuntimeError: the subprocess failed.
    """
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONHASHSEED="0")
    done = subprocess.run(
        [sys.executable, __file__, "--measure", "-n", str(n), "--rounds", str(rounds)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"measuring {tree} failed:\n{done.stderr[-2000:]}")
    result: dict[str, list[float]] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="*", default=["."], help="git revisions or directories")
    parser.add_argument("-n", type=int, default=1000, help="seated players (default 1000)")
    parser.add_argument("--rounds", type=int, default=60, help="rounds per run (default 60)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per tree, alternated")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions under valgrind's callgrind instead of timing",
    )
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--only", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.n, args.rounds, args.only)))
        return
    with tempfile.TemporaryDirectory(prefix="underhall-receive-") as tmp:
        trees = [export_tree(s, Path(tmp) / f"tree{i}") for i, s in enumerate(args.trees)]
        if args.instructions:
            instructions(trees, args.trees, args.n, args.rounds)
            return
        runs: list[list[dict[str, Any]]] = [[] for _ in trees]
        for _ in range(args.repeat):
            for i, tree in enumerate(trees):
                runs[i].append(run_tree(tree, args.n, args.rounds))
    print(f"players {args.n}, {args.rounds} rounds a run, {args.repeat} runs a tree, alternated")
    print("µs per command: median of a run's rounds (fastest round), one column per run")
    for spec, tree_runs in zip(args.trees, runs, strict=True):
        for stage in ("whole", "decode", "route"):
            cells = "  ".join(
                f"{statistics.median(r[stage]):5.2f} ({min(r[stage]):4.2f})" for r in tree_runs
            )
            print(f"{spec:>12} {stage:>7}  {cells}")


if __name__ == "__main__":
    main()
