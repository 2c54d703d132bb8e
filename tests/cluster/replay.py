"""Replaying a tripper's moves in one process, and a digest of a character.

Issue 14 asks that stair trips through the cluster lose and duplicate
nothing: "a hash of every character's data agrees with a replay of its
moves". :func:`replay` plays the commands that took effect for one client
(:attr:`tests.cluster.trips.TripResult.moves`) in a single
:class:`~server.sim.world.World` of the same seed, without monsters, from
the record the character was planted with; :func:`digest` hashes what the
trips must keep exactly: class, scores, pack and equipment, spells, place
and experience, and the map memory of every level (which a hand-off that
dropped or doubled a character's state would change). Health, energy, food
and statuses are left out: they follow the clock, and the cluster's ticks
are not the replay's.
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgpack  # type: ignore[import-untyped]

from server.game.wire import to_command
from server.sim.actors import Actor
from server.sim.events import Rejected
from server.sim.world import World

TICKS_PER_MOVE = 50
"""Ticks one replayed command may take before the replay gives up."""


def replay(
    seed: int, record: dict[str, Any], moves: list[tuple[str, tuple[int, int] | None]]
) -> Actor:
    """The character saved as ``record``, after ``moves`` in a fresh world.

    Args:
        seed: The cluster's world seed.
        record: The character's record before its first move.
        moves: ``(command, direction)`` pairs, in order.

    Raises:
        AssertionError: A command was not carried out within
            :data:`TICKS_PER_MOVE` ticks, or was refused.
    """
    world = World(seed, populate=False)
    aid = world.join(str(record["name"]), record=record).id
    for tag, (name, d) in enumerate(moves, start=1):
        world.submit(aid, to_command(name, d), tag)
        for _ in range(TICKS_PER_MOVE):
            events = world.step()
            refused = [e for e in events if isinstance(e, Rejected) and e.tag == tag]
            assert not refused, f"replay of move {tag} {name} {d} refused: {refused}"
            if world.actors[aid].last_tag == tag:
                break
        else:
            raise AssertionError(f"replay of move {tag} {name} {d} not carried out")
    return world.actors[aid]


def digest(actor: Actor) -> str:
    """SHA-256 (hex) of what stair trips must keep of ``actor`` exactly."""
    steady = actor.steady_record()
    data = {
        "steady": steady,
        "place": [actor.depth, actor.x, actor.y],
        "xp": actor.xp,
        "memory": {str(d): m.tobytes() for d, m in sorted(actor.memory.items())},
    }
    return hashlib.sha256(msgpack.packb(data, use_bin_type=True)).hexdigest()
