"""Measure thrown darts in the running simulation against seed 001's formulas.

A thrower stands two cells from an awake, rooted, unkillable rat in a
corridor and throws darts at it, one at a time, each flying through the world
as a projectile. For a few thrower levels and classes it prints the measured
miss rate next to seed 001's (M + 40%) / (1 + 0.5 L) (``L // 2`` for ½L, see
docs/rules.md) with a 4.5-standard-deviation band, and the mean damage of the
hits next to its exact mean (the dice at full energy, with criticals).

Usage: ``.venv/bin/python bench/throws.py [-n THROWS]``.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time

from server.content import default_content
from server.sim.actors import Mind, new_monster
from server.sim.combat import CRITICAL_CHANCE, AttackOutcome, scale_by_energy
from server.sim.events import Event, Harmed
from server.sim.items import Item, add_to_pack
from server.sim.level import Level
from server.sim.projectiles import advance, throw
from server.sim.throwing import throw_dice, throw_miss_chance
from server.sim.world import World

CORRIDOR = """
#######
#<....#
#######
"""


def measure(class_key: str, level: int, n: int, *, marksman: bool) -> tuple[float, float, int]:
    """Return (miss rate, mean damage of hits, hits) over ``n`` throws."""
    world = World(level * 7 + 1, levels={1: Level.from_ascii(CORRIDOR, depth=1)}, populate=False)
    content = world.content
    thrower = world.join("bench", class_key)
    thrower.level = level
    if marksman:
        thrower.abilities.add("marksman")
    mdef = content.monsters["rat"]
    rat = world.add_actor(lambda aid: new_monster(aid, mdef, 1, 3, 1, Mind.HUNTING), 1, 3, 1)
    rat.flags = rat.flags | {"immobile"}
    rat.hp = rat.max_hp = 10**9
    rat.defence = 0
    darts = add_to_pack(thrower.inventory, Item("dart", n), content)
    assert darts is not None
    world.step()
    rat.mind, rat.target = Mind.HUNTING, thrower.id
    misses = hits = damage = 0
    for _ in range(n):
        events: list[Event] = []
        thrower.en = thrower.max_en
        if throw(world, thrower, darts.letter, (rat.x, rat.y), events) is not None:
            raise RuntimeError("the throw was refused")
        while world.projectiles:
            advance(world, events)
        (harm,) = [e for e in events if isinstance(e, Harmed) and e.target == rat.id]
        if harm.outcome == AttackOutcome.MISS:
            misses += 1
        else:
            hits += 1
            damage += harm.damage
        world.levels[1].items.clear()
    return misses / n, damage / max(hits, 1), hits


def exact_mean_hit(level: int, power: int, max_energy: int) -> float:
    """The exact mean damage of a hit at full energy against 0 defence: every
    outcome of the dice (seed 001: max(1, L // 2) d power), scaled by energy as
    in melee, then the 10% critical doubling it."""
    dice = throw_dice(level)
    outcomes = itertools.product(range(1, power + 1), repeat=dice)
    scaled = [scale_by_energy(sum(roll), max_energy, max_energy) for roll in outcomes]
    mean = sum(scaled) / len(scaled)
    return (1 - CRITICAL_CHANCE) * mean + CRITICAL_CHANCE * 2 * mean


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=10_000, help="throws per row (default 10000)")
    args = parser.parse_args()
    n = args.n
    content = default_content()
    dart = content.items["dart"]
    started = time.perf_counter()
    ok = True
    print(f"darts (power {dart.power}) at an awake rat with 0 defence, {n:,} throws per row\n")
    print(
        f"  {'thrower':<24}{'miss':>8}{'exact':>8}   band (4.5 sd)       "
        f"{'mean hit':>9}{'exact':>8}"
    )
    for class_key, level, marksman in (
        ("warrior", 1, False),
        ("warrior", 5, False),
        ("monk", 5, False),
        ("warrior", 10, False),
        ("warrior", 10, True),
    ):
        miss, mean, hits = measure(class_key, level, n, marksman=marksman)
        p = throw_miss_chance(content.classes[class_key].miss_chance, level, marksman=marksman)
        sd = math.sqrt(p * (1 - p) / n)
        inside = abs(miss - p) <= 4.5 * sd
        ok &= inside
        who = f"{class_key} L{level}" + (" marksman" if marksman else "")
        exact = exact_mean_hit(level, dart.power or 0, content.classes[class_key].energy)
        print(
            f"  {who:<24}{miss:>8.4f}{p:>8.4f}   [{p - 4.5 * sd:.4f}, {p + 4.5 * sd:.4f}]"
            f"{'' if inside else ' OUTSIDE'}{mean:>10.2f}{exact:>8.2f}  ({hits:,} hits)"
        )
    print(
        f"\n{'all inside their bands' if ok else 'SOME OUTSIDE THEIR BANDS'}; "
        f"{time.perf_counter() - started:.1f} s"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
