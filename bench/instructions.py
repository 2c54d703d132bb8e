"""Instructions per tick: an A/B of ``bench/tick.py`` that machine noise cannot move.

CPU time on a shared machine varies by 10-25% between runs of the same code,
more than most single changes to the tick save. This benchmark counts the
instructions the tick executes instead, under valgrind's callgrind tool:
the same code, seed and commands give the same count to within about 0.7%
(four runs of one tree at 2,000 crowded: 458.9-462.0 M a tick; addresses
differ from run to run, and with them some dict and set work),
whatever else the machine is doing.

For each source tree it runs ``bench/tick.py`` twice under callgrind, with
1 and with ``1 + TICKS`` measured ticks (same players, seed and warm-up), and
prints the difference divided by ``TICKS``: the instructions of one measured
tick, setup excluded. Trees are git revisions (exported with ``git archive``)
or directories; they run two at a time (valgrind uses one core each).

    python bench/instructions.py HEAD~1 HEAD
    python bench/instructions.py ec67657 . -n 4000 --spread --depths 10

An instruction is not a unit of time: memory stalls, branch misses and the
kernel's work (sockets) are not counted. Use it to compare two versions of
the pure-Python tick, and ``bench/scale.py`` for what a server spends live.
Needs ``valgrind`` on the PATH (Debian: ``apt-get install valgrind``); runs
take about 1.5 minutes for setup plus 8 seconds a tick at 2,000 players.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_COLLECTED = re.compile(r"Collected : (\d+)")


def export_tree(spec: str, into: Path) -> Path:
    """A directory holding the source tree ``spec``: an existing directory as
    is, else the git revision ``spec`` of this repository exported into
    ``into``.

    Raises:
        subprocess.CalledProcessError: ``spec`` is neither a directory nor a
            revision git knows.
    """
    path = Path(spec)
    if path.is_dir():
        return path.resolve()
    into.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", spec], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def count(tree: Path, ticks: int, tick_args: list[str], scratch: Path, tag: str) -> int:
    """Instructions callgrind counts for ``bench/tick.py --ticks TICKS`` run
    from ``tree`` (its own modules first on the path).

    Raises:
        RuntimeError: The run failed or callgrind printed no total.
    """
    script = ["bench/tick.py", "--ticks", str(ticks), *tick_args]
    return callgrind(tree, script, scratch / f"callgrind.{tag}")


def callgrind(tree: Path, script: list[str], out: Path) -> int:
    """Instructions callgrind counts for ``python SCRIPT...`` run in ``tree``
    with its own modules first on the path (hash seed fixed); ``out`` is
    callgrind's scratch file, deleted after.

    Raises:
        RuntimeError: The run failed or callgrind printed no total.
    """
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONHASHSEED="0")
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, *script],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    out.unlink(missing_ok=True)
    found = _COLLECTED.search(run.stderr)
    if run.returncode != 0 or found is None:
        raise RuntimeError(f"callgrind run in {tree} failed:\n{run.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="+", help="git revisions or directories, compared in order")
    parser.add_argument("--ticks", type=int, default=20, help="measured ticks (default 20)")
    parser.add_argument("-n", type=int, default=2000, help="players (default 2000)")
    parser.add_argument("--spread", action="store_true", help="bench/tick.py --spread")
    parser.add_argument("--depths", type=int, default=1, help="bench/tick.py --depths")
    parser.add_argument("--jobs", type=int, default=2, help="valgrind runs at once (default 2)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (Debian: apt-get install valgrind)")
    tick_args = ["-n", str(args.n), "--depths", str(args.depths)]
    if args.spread:
        tick_args.append("--spread")
    with tempfile.TemporaryDirectory(prefix="underhall-instr-") as tmp:
        scratch = Path(tmp)
        trees = [export_tree(spec, scratch / f"tree{i}") for i, spec in enumerate(args.trees)]
        jobs = [(tree, ticks) for tree in trees for ticks in (1, 1 + args.ticks)]
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            totals = list(
                pool.map(
                    lambda job: count(job[1][0], job[1][1], tick_args, scratch, str(job[0])),
                    enumerate(jobs),
                )
            )
    print(f"players {args.n}, measured ticks {args.ticks}{', spread' if args.spread else ''}")
    first: float | None = None
    for i, spec in enumerate(args.trees):
        setup, whole = totals[2 * i], totals[2 * i + 1]
        per_tick = (whole - setup) / args.ticks
        first = per_tick if first is None else first
        change = f"  ({(per_tick / first - 1) * 100:+.1f}%)" if i else ""
        print(f"{spec:>24}  {per_tick / 1e6:10.1f} M instructions a tick{change}")


if __name__ == "__main__":
    main()
