"""Helpers for simulation tests: tiny worlds from ASCII maps."""

from __future__ import annotations

from server.content import default_content
from server.sim.actors import Actor, Mind, new_monster
from server.sim.level import Level
from server.sim.world import World

ROOM = """
#########
#<......#
#.......#
#.......+
#.......#
#########
"""


def make_world(*maps: str, seed: int = 1) -> World:
    """A world whose depths 1.. are the given ASCII maps, with no random monsters."""
    levels = {d: Level.from_ascii(text, depth=d) for d, text in enumerate(maps, start=1)}
    return World(seed, levels=levels, populate=False)


def spawn(world: World, kind: str, x: int, y: int, mind: Mind = Mind.ASLEEP,
          depth: int = 1) -> Actor:
    """Put a monster of ``kind`` at ``(x, y)``."""
    mdef = default_content().monsters[kind]
    return world.add_actor(lambda aid: new_monster(aid, mdef, depth, x, y, mind), depth, x, y)

