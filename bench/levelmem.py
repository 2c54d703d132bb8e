"""What a level costs in memory, measured in one process (issue 48).

Builds a :class:`~server.sim.world.World` and brings ``-k`` levels into
play one after another, first with nobody on them, then with ``-n``
players on each who walk at random for ``--ticks`` ticks (their fields of
view cached, monsters hunting them). After each stage it takes a
``tracemalloc`` snapshot and the process's resident memory
(``/proc/self/statm``), and prints, per level: resident memory, the bytes
``tracemalloc`` saw allocated, and those bytes by allocation site
(file:line, the sites that grew most), together with what the census
(:mod:`server.game.census`) names for the world, so that what a level
holds and what the census does not name can be told apart.

Usage::

    .venv/bin/python bench/levelmem.py [-k 5] [-n 20] [--ticks 600] [--seed 1]
        [--sites 25] [--json]

Linux only (``/proc``). Takes about a minute with the defaults.
"""

from __future__ import annotations

import argparse
import ast
import gc
import itertools
import json
import os
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np

from server.content import Terrain
from server.game.census import level_census, world_census
from server.sim.commands import DIRECTIONS, Move
from server.sim.world import World

ROOT = Path(__file__).resolve().parents[1]

PAGE = os.sysconf("SC_PAGE_SIZE")
FRAMES = 12
"""Frames kept per allocation: enough to reach the project's caller of numpy or tcod."""


def rss_bytes() -> int:
    """This process's resident memory (``/proc/self/statm``)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def put_on(world: World, name: str, depth: int, rng: np.random.Generator) -> int:
    """A new player brought to a floor cell of ``depth`` drawn with ``rng``
    (joined at depth 1, saved, and joined again from its record moved
    there); its id."""
    actor = world.join(name)
    record = world.leave(actor.id)
    floor = world.level(depth).find(Terrain.FLOOR)
    x, y = floor[int(rng.integers(len(floor)))]
    record["depth"], record["x"], record["y"] = depth, x, y
    return world.join(name, record=record).id


def walk(world: World, ids: list[int], ticks: int, rng: np.random.Generator) -> None:
    """Step ``ticks`` ticks, each player told a random step whenever it has
    no command waiting (steps into walls are refused, as a wanderer's are)."""
    for _ in range(ticks):
        for aid in ids:
            actor = world.actors.get(aid)
            if actor is None or actor.queue:
                continue
            level = world.levels[actor.depth]
            dirs = [
                (dx, dy)
                for dx, dy in DIRECTIONS
                if level.in_bounds(actor.x + dx, actor.y + dy)
                and level.passable[actor.y + dy, actor.x + dx]
            ]
            if dirs:
                dx, dy = dirs[int(rng.integers(len(dirs)))]
                world.submit(aid, Move(dx, dy), 0)
        world.step()


def sample(label: str) -> dict[str, Any]:
    gc.collect()
    snap = tracemalloc.take_snapshot() if tracemalloc.is_tracing() else None
    return {"label": label, "rss": rss_bytes(), "snap": snap}


def _site(trace: tracemalloc.Trace) -> str:
    """The allocation's innermost frame in the project's own code (the
    caller of numpy or tcod), else its innermost frame."""
    frames = list(trace.traceback)  # oldest first
    for frame in reversed(frames):
        if frame.filename.startswith(str(ROOT / "server")):
            break
    else:
        frame = frames[-1]
    return f"{frame.filename.replace(str(ROOT) + '/', '')}:{frame.lineno}"


_FUNCTIONS: dict[str, list[tuple[int, int, str]]] = {}


def _function(site: str) -> str:
    """``file:function`` of a ``file:line`` site (the innermost definition
    holding that line, read from the file as it is now), else the site."""
    path, _, line = site.rpartition(":")
    spans = _FUNCTIONS.get(path)
    if spans is None:
        spans = _FUNCTIONS[path] = []
        full = ROOT / path
        if full.is_file():
            for node in ast.walk(ast.parse(full.read_text())):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    spans.append((node.lineno, node.end_lineno or node.lineno, node.name))
    inner = [(a, b, n) for a, b, n in spans if a <= int(line or 0) <= b]
    return f"{path}:{max(inner)[2]}" if inner else site


def by_site(snap: tracemalloc.Snapshot, functions: bool = False) -> dict[str, tuple[int, int]]:
    """Bytes and blocks held, by :func:`_site` (or its :func:`_function`)."""
    out: dict[str, tuple[int, int]] = {}
    for trace in snap.traces:
        key = _site(trace)
        if functions:
            key = _function(key)
        size, count = out.get(key, (0, 0))
        out[key] = (size + trace.size, count + 1)
    return out


def sites(
    before: dict[str, Any], after: dict[str, Any], count: int, functions: bool = False
) -> list[tuple[str, int, int]]:
    """The ``count`` allocation sites that grew most: ``(file:line, bytes,
    blocks)`` (``file:function`` if ``functions``)."""
    if before["snap"] is None:
        return []
    old, new = by_site(before["snap"], functions), by_site(after["snap"], functions)
    diff = [
        (key, new.get(key, (0, 0))[0] - old.get(key, (0, 0))[0],
         new.get(key, (0, 0))[1] - old.get(key, (0, 0))[1])
        for key in set(old) | set(new)
    ]  # fmt: skip
    return sorted(diff, key=lambda d: -d[1])[:count]


def traced(s: dict[str, Any]) -> int:
    """Bytes ``tracemalloc`` saw held at sample ``s`` (0 if not tracing)."""
    snap = s["snap"]
    return 0 if snap is None else int(sum(st.size for st in snap.statistics("filename")))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-k", type=int, default=5, help="levels brought into play")
    ap.add_argument("-n", type=int, default=20, help="players on each level")
    ap.add_argument("--ticks", type=int, default=600, help="ticks the players walk")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sites", type=int, default=25, help="allocation sites listed per stage")
    ap.add_argument(
        "--rss-only", action="store_true",
        help="no tracemalloc (whose own records inflate resident memory): RSS only",
    )  # fmt: skip
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = ap.parse_args()
    if not args.rss_only:
        tracemalloc.start(FRAMES)
    # What the first game imports and builds once is left out: a game of one
    # player, kept (were it freed, the levels measured would reuse its pages).
    warm = World(args.seed + 1)
    warm_rng = np.random.default_rng(args.seed)
    walk(warm, [put_on(warm, "warm", 2, warm_rng)], 50, warm_rng)
    start = sample("start")
    world = World(args.seed)
    made = sample("world made")
    depths = list(range(1, args.k + 1))
    for depth in depths:
        world.level(depth)
    bare = sample(f"{args.k} levels, nobody on them")
    rng = np.random.default_rng(args.seed)
    ids = [put_on(world, f"p{d}_{i}", d, rng) for d in depths for i in range(args.n)]
    world.step()
    joined = sample(f"{args.n} players on each")
    walk(world, ids, args.ticks, rng)
    walked = sample(f"after {args.ticks} ticks of walking")
    started = time.perf_counter()
    census = world_census(world)
    levels = level_census(world)
    census_ms = (time.perf_counter() - started) * 1000
    per_level = {entry["depth"]: entry.get("bytes", {"total": 0}) for entry in levels}
    stages = [start, made, bare, joined, walked]
    del warm
    report: dict[str, Any] = {"k": args.k, "n": args.n, "ticks": args.ticks, "stages": []}
    for before, after in itertools.pairwise(stages):
        report["stages"].append(
            {
                "stage": after["label"],
                "rss_bytes": after["rss"] - before["rss"],
                "traced_bytes": traced(after) - traced(before),
                "sites": sites(before, after, args.sites),
            }
        )
    report["functions"] = sites(made, walked, args.sites, functions=True)
    report["census"] = census
    report["census_ms"] = census_ms
    report["level_bytes"] = per_level
    report["per_level"] = {
        "bare_rss": (bare["rss"] - made["rss"]) / args.k,
        "bare_traced": (traced(bare) - traced(made)) / args.k,
        "played_rss": (walked["rss"] - made["rss"]) / args.k,
        "played_traced": (traced(walked) - traced(made)) / args.k,
        "census_bytes": sum(v["total"] for v in per_level.values()) / args.k,
        "path_finder_bytes": (census.get("path_finder_bytes") or 0) / args.k,
        "view_set_bytes": (census.get("view_set_bytes") or 0) / args.k,
        "player_bytes": (census.get("player_bytes") or 0) / args.k,
        "memory_bytes": census["memory_bytes"] / args.k,
    }
    if args.json:
        print(json.dumps(report, default=str))
        return 0
    mb = 1e6
    for st in report["stages"]:
        print(
            f"== {st['stage']}: RSS {st['rss_bytes'] / mb:+.2f} MB, "
            f"traced {st['traced_bytes'] / mb:+.2f} MB"
        )
        for site, size, blocks in st["sites"]:
            print(f"   {size / 1e3:+10.1f} kB {blocks:+8d} blocks  {site}")
    print(f"== {args.k} levels played on, by function (world made -> after walking):")
    for site, size, blocks in report["functions"]:
        print(f"   {size / 1e3:+10.1f} kB {blocks:+8d} blocks  {site}")
    print(f"== what the census names per level (kB; the census took {census_ms:.1f} ms):")
    for depth, parts in per_level.items():
        print(f"   depth {depth}: " + ", ".join(f"{k} {v / 1e3:.0f}" for k, v in parts.items()))
    pl = report["per_level"]
    named = sum(
        pl[k]
        for k in (
            "census_bytes",
            "path_finder_bytes",
            "view_set_bytes",
            "memory_bytes",
            "player_bytes",
        )
    )
    print(
        f"== per level: nobody on it: RSS {pl['bare_rss'] / mb:.2f} MB, traced "
        f"{pl['bare_traced'] / mb:.2f} MB; with {args.n} players after {args.ticks} ticks: "
        f"RSS {pl['played_rss'] / mb:.2f} MB, traced {pl['played_traced'] / mb:.2f} MB; "
        f"named by the census {named / mb:.2f} MB: the level's own "
        f"{pl['census_bytes'] / mb:.2f}, a k-th of the world's path finders "
        f"{pl['path_finder_bytes'] / mb:.2f}, of the players' characters "
        f"{pl['player_bytes'] / mb:.2f}, visible sets {pl['view_set_bytes'] / mb:.2f} "
        f"and map memory {pl['memory_bytes'] / mb:.2f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
