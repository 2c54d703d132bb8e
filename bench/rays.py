"""Measure how rays bounce and how far they fly, against seed 000's exact numbers.

Traces many rays with ``server.sim.trace_ray`` on three small levels and
prints, for each outcome, the count, the measured frequency, the exact
probability and the allowed band (4.5 binomial standard deviations):

* a diagonal ray meeting a convex (outer) corner: straight back 1/20, turning
  "left" 19/40, turning "right" 19/40;
* a diagonal ray meeting a flat wall: straight back 1/20, deflected 19/20;
* a diagonal ray meeting a concave (inner) corner: back 1;
* the drawn range of a ray (7..13, 1/7 each), a beam (6..13, 1/8 each) and a
  digging ray (8..25, 1/18 each).

Usage: ``.venv/bin/python bench/rays.py [-n RAYS] [--seed SEED]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import Counter

import numpy as np

from server.sim import Level, trace_beam, trace_ray

CONVEX = """
        ------
        |....|
        |....|
        |....|
    -----....|
    |........|
    |........|
    |........|
    ----------
"""
"""The seed's convex-corner diagram (indented lines are dedented on loading):
a ray fired up-left from (7, 7) meets the outer corner at (4, 4)."""

FLAT = """
    ------------
    |..........|
    |..........|
    |..........|
    ------------
"""

CONCAVE = """
------
|....|
|....|
|....|
------
"""


def band(n: int, p: float) -> tuple[float, float]:
    """The frequencies within 4.5 standard deviations of ``p`` over ``n`` trials."""
    sd = math.sqrt(p * (1 - p) / n) if 0 < p < 1 else 0.0
    return p - 4.5 * sd, p + 4.5 * sd


def report(title: str, counts: Counter[str], n: int, expected: dict[str, float]) -> bool:
    """Print one table; return whether every outcome fell inside its band."""
    print(f"\n{title} ({n:,} rays)")
    print(f"  {'outcome':<22}{'count':>8}{'measured':>11}{'exact':>9}   band (4.5 sd)")
    ok = True
    for name, p in expected.items():
        got = counts[name] / n
        lo, hi = band(n, p)
        inside = lo <= got <= hi
        ok &= inside
        mark = "" if inside else "   OUTSIDE"
        print(f"  {name:<22}{counts[name]:>8,}{got:>11.4f}{p:>9.4f}   [{lo:.4f}, {hi:.4f}]{mark}")
    stray = sum(c for k, c in counts.items() if k not in expected)
    if stray:
        ok = False
        print(f"  unexpected outcomes: {stray}")
    return ok


def bounce_outcome(level: Level, origin: tuple[int, int], rng: np.random.Generator) -> str:
    """Trace one up-left ray and name what it did at its first bounce."""
    trace = trace_ray(level, origin, (-1, -1), rng, range=6)
    wall = trace.bounces[0] if trace.bounces else None
    after = next(step[2:] for step in trace.steps if wall is not None and step[:2] == wall)
    return {(1, 1): "straight back", (1, -1): "left (dy flips)", (-1, 1): "right (dx flips)"}[after]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=20_000, help="rays per table (default 20000)")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    n = args.n
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    ok = True

    convex = Level.from_ascii(CONVEX)
    counts = Counter(bounce_outcome(convex, (7, 7), rng) for _ in range(n))
    ok &= report(
        "Convex (outer) corner",
        counts,
        n,
        {"straight back": 1 / 20, "left (dy flips)": 19 / 40, "right (dx flips)": 19 / 40},
    )

    flat = Level.from_ascii(FLAT)
    counts = Counter(bounce_outcome(flat, (6, 3), rng) for _ in range(n))
    counts = Counter(
        {"straight back": counts["straight back"], "deflected": n - counts["straight back"]}
    )
    ok &= report("Flat wall", counts, n, {"straight back": 1 / 20, "deflected": 19 / 20})

    concave = Level.from_ascii(CONCAVE)
    counts = Counter(bounce_outcome(concave, (3, 3), rng) for _ in range(n))
    ok &= report("Concave (inner) corner", counts, n, {"straight back": 1.0})

    hall = Level.from_ascii("\n".join(["#" * 60] + ["#" + "." * 58 + "#"] * 3 + ["#" * 60]))

    def ray(r: np.random.Generator) -> int:
        return trace_ray(hall, (1, 2), (1, 0), r).initial_range

    def beam(r: np.random.Generator) -> int:
        return trace_beam(hall, (1, 2), (1, 0), r).initial_range

    def dig(r: np.random.Generator) -> int:
        return trace_ray(hall, (1, 2), (1, 0), r, digging=True).initial_range

    for title, draw, lo, hi in (
        ("Ray range (traced)", ray, 7, 13),
        ("Beam range (traced)", beam, 6, 13),
        ("Digging range (traced)", dig, 8, 25),
    ):
        counts = Counter(f"{draw(rng)} cells" for _ in range(n))
        ok &= report(title, counts, n, {f"{r} cells": 1 / (hi - lo + 1) for r in range(lo, hi + 1)})

    print(
        f"\n{'all inside their bands' if ok else 'SOME OUTSIDE THEIR BANDS'}; "
        f"{time.perf_counter() - started:.1f} s"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
