"""What all the views of one tick share, computed once per tick.

A crowd makes the naive way quadratic: 200 players who all see each other
would each recompute 200 actor states, scan every item and every event of
the level. :class:`TickIndex` computes each actor's wire state once, and
buckets items and events into ``BUCKET × BUCKET`` squares so a view reads
only the (at most four) buckets its window overlaps.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from server.game.wire import FLAG_YOU, actor_flags, event_to_wire
from server.sim.events import (
    Attacked,
    Died,
    Event,
    GainedXp,
    Joined,
    Left,
    Rejected,
    Respawned,
    TookStairs,
)
from server.sim.fov import FieldOfView
from server.sim.world import World

BUCKET = 32
"""Side of the squares items and events are bucketed in, in cells (>= the
17-cell view window, so a window overlaps at most 2×2 buckets)."""

ActorState = tuple[int, int, int, int, int]
"""``(x, y, hp, max_hp, flags)`` of an actor as sent in ``upd`` (flags without
the viewer-specific "you" bit)."""
Witnessed = tuple[int, list[Any]]
"""An event's position in the tick's order, and its wire form."""


def _buckets(fov: FieldOfView) -> Iterator[tuple[int, int]]:
    h, w = fov.visible.shape
    for by in range(fov.y0 // BUCKET, (fov.y0 + h - 1) // BUCKET + 1):
        for bx in range(fov.x0 // BUCKET, (fov.x0 + w - 1) // BUCKET + 1):
            yield bx, by


class TickIndex:
    """The tick's events, sorted for the views, and shared lookups.

    Args:
        world: The world just after :meth:`World.step`.
        events: What that step returned.
    """

    def __init__(self, world: World, events: list[Event]) -> None:
        self.world = world
        self.rejections: dict[int, list[Rejected]] = defaultdict(list)
        self.snapshot_for: set[int] = set()
        self.shared: list[tuple[int, Joined | Left]] = []
        self.involving: dict[int, list[Witnessed]] = defaultdict(list)
        self._placed: dict[int, dict[tuple[int, int], list[tuple[int, int, int, list[Any]]]]] = (
            defaultdict(lambda: defaultdict(list)))
        self._states: dict[int, ActorState] | None = None
        self._items: dict[int, dict[tuple[int, int], list[tuple[int, int, str]]]] = {}
        for order, event in enumerate(events):
            if isinstance(event, Rejected):
                self.rejections[event.actor].append(event)
                continue
            if isinstance(event, (Joined, Left)):
                self.shared.append((order, event))
                continue
            wire = event_to_wire(event)
            if wire is None:
                continue
            if isinstance(event, GainedXp):
                self.involving[event.actor].append((order, wire))
                continue
            if isinstance(event, (Respawned, TookStairs)):
                self.snapshot_for.add(event.actor)
            involved = {event.actor} if not isinstance(event, Attacked) else {
                event.attacker, event.target}
            if isinstance(event, Died) and event.killer is not None:
                involved.add(event.killer)
            for aid in involved:
                self.involving[aid].append((order, wire))
            key = (event.x // BUCKET, event.y // BUCKET)
            self._placed[event.depth][key].append((event.x, event.y, order, wire))

    @property
    def states(self) -> dict[int, ActorState]:
        """Wire state of every living actor on a level with players, built once."""
        states = self._states
        if states is None:
            world = self.world
            states = self._states = {
                a.id: (a.x, a.y, a.hp, a.max_hp, actor_flags(a, -1))
                for a in world.actors.values()
                if a.alive and world.players_on(a.depth) > 0}
        return states

    def items_in_view(self, depth: int, fov: FieldOfView) -> dict[tuple[int, int], str]:
        """The top item of every cell in view that has one."""
        buckets = self._items.get(depth)
        if buckets is None:
            buckets = defaultdict(list)
            for (x, y), pile in self.world.levels[depth].items.items():
                if pile:
                    buckets[(x // BUCKET, y // BUCKET)].append((x, y, pile[-1]))
            self._items[depth] = buckets
        out: dict[tuple[int, int], str] = {}
        for key in _buckets(fov):
            for x, y, item in buckets.get(key, ()):
                if fov.contains(x, y):
                    out[(x, y)] = item
        return out

    def witnessed(self, actor_id: int, depth: int, fov: FieldOfView | None) -> list[list[Any]]:
        """Wire forms of the events a player saw or took part in, in tick order."""
        found: dict[int, list[Any]] = {o: w for o, w in self.involving.get(actor_id, ())}
        for order, event in self.shared:
            if event.actor != actor_id:
                found[order] = ["join" if isinstance(event, Joined) else "leave", event.name]
        if fov is not None:
            placed = self._placed.get(depth)
            if placed:
                for key in _buckets(fov):
                    for x, y, order, wire in placed.get(key, ()):
                        if order not in found and fov.contains(x, y):
                            found[order] = wire
        return [found[o] for o in sorted(found)]


def with_you(state: ActorState) -> ActorState:
    """``state`` with the "you" flag set (the viewer's own record)."""
    return (*state[:4], state[4] | FLAG_YOU)

