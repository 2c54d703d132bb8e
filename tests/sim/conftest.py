"""Helpers for simulation tests: tiny worlds from ASCII maps, stepping them,
picking events out, and the statistical tolerances of the seeded checks."""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from server.content import default_content
from server.content.statuses import StatusKind
from server.sim.actors import Actor, Mind, new_monster
from server.sim.commands import Command
from server.sim.events import Event, Harmed
from server.sim.level import Level
from server.sim.status import Statuses
from server.sim.world import World

ROOM = """
#########
#<......#
#.......#
#.......+
#.......#
#########
"""

Z = 4.5
"""Standard deviations allowed in a statistical check (two-sided p ~ 7e-6)."""


# --- worlds and actors ------------------------------------------------------------------


def make_world(*maps: str, seed: int = 1) -> World:
    """A world whose depths 1.. are the given ASCII maps, with no random monsters."""
    levels = {d: Level.from_ascii(text, depth=d) for d, text in enumerate(maps, start=1)}
    return World(seed, levels=levels, populate=False)


def spawn(
    world: World, kind: str, x: int, y: int, mind: Mind = Mind.ASLEEP, depth: int = 1
) -> Actor:
    """Put a monster of ``kind`` at ``(x, y)``."""
    mdef = default_content().monsters[kind]
    return world.add_actor(lambda aid: new_monster(aid, mdef, depth, x, y, mind), depth, x, y)


def hardy(actor: Actor) -> Actor:
    """Make ``actor`` a steady mark: it never dodges and survives any single blow (1000 health)."""
    actor.dodge = 0.0
    actor.hp = actor.max_hp = 1000
    return actor


def hardy_monster(world: World, kind: str, x: int, y: int, mind: Mind = Mind.HUNTING) -> Actor:
    """A :func:`hardy` monster of ``kind`` at ``(x, y)``, hunting unless told otherwise."""
    return hardy(spawn(world, kind, x, y, mind))


def with_statuses(*kinds: StatusKind) -> Statuses:
    """A status set holding each of ``kinds`` for 5 rounds."""
    s = Statuses()
    for kind in kinds:
        s.add(kind, 5)
    return s


# --- stepping the world and reading its events ------------------------------------------


def run(world: World, ticks: int) -> list[Event]:
    """Step ``ticks`` ticks; every event, in order."""
    events: list[Event] = []
    for _ in range(ticks):
        events += world.step()
    return events


def act(world: World, actor_id: int, command: Command, tag: int = 0) -> list[Event]:
    """Submit one command once the actor is ready and step until it has carried it out."""
    actor = world.actors[actor_id]
    while actor.next_act > world.tick:
        world.step()
    world.submit(actor_id, command, tag)
    events: list[Event] = []
    while actor.queue:
        events += world.step()
    return events


def submit_and_step(world: World, actor_id: int, command: Command, tag: int = 0) -> list[Event]:
    """Submit one command at once (it waits in the queue if the actor is busy)
    and step until the actor has carried it out or refused it."""
    actor = world.actors[actor_id]
    world.submit(actor_id, command, tag)
    events: list[Event] = []
    while actor.queue or actor.next_act > world.tick:
        events += world.step()
        if not actor.queue:
            break
    return events


def harms(
    events: list[Event], actor: Actor | None = None, cause: str | None = None
) -> list[Harmed]:
    """The ``Harmed`` events, of ``actor`` only and of ``cause`` only when given."""
    return [
        e
        for e in events
        if isinstance(e, Harmed)
        and (actor is None or e.target == actor.id)
        and (cause is None or e.cause == cause)
    ]


# --- statistics and purity --------------------------------------------------------------


def binomial_tolerance(p: float, n: int, z: float = Z) -> float:
    """Allowed |p_hat - p| for n Bernoulli(p) trials: z binomial std devs."""
    return z * math.sqrt(p * (1.0 - p) / n)


def tally(draw: Callable[[], int], n: int, size: int) -> list[int]:
    """Call ``draw`` ``n`` times; ``counts[v]`` is how often it gave ``v`` (``0 <= v < size``)."""
    counts = [0] * size
    for _ in range(n):
        counts[draw()] += 1
    return counts


def within(observed: int, n: int, p: float) -> bool:
    """Observed count agrees with probability p over n trials (Z binomial sigmas)."""
    return abs(observed / n - p) <= binomial_tolerance(p, n)


def imported_roots(module: ModuleType) -> set[str]:
    """The top-level package names ``module``'s source imports (``numpy``, ``math``, ...)."""
    source = Path(str(module.__file__))
    tree = ast.parse(source.read_text(encoding="utf-8"))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            roots.add(node.module.split(".")[0])
    return roots
