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

import numpy as np
from numpy.typing import NDArray

from server.game.wire import FLAG_YOU, actor_flags, event_to_wire, span_to_wire, status_bits
from server.sim.events import (
    Attacked,
    Died,
    Equipped,
    Event,
    Flew,
    GainedXp,
    Harmed,
    Joined,
    Learned,
    Left,
    Notice,
    RayFired,
    Rejected,
    Respawned,
    TookStairs,
)
from server.sim.fov import FieldOfView
from server.sim.world import World

BUCKET = 32
"""Side of the squares items and events are bucketed in, in cells (>= the
17-cell view window, so a window overlaps at most 2×2 buckets)."""

ActorState = tuple[int, int, int, int, int, int]
"""``(x, y, hp, max_hp, flags, sts)`` of an actor as sent in ``upd`` (flags
without the viewer-specific "you" bit)."""
PRIVATE = (GainedXp, Equipped, Learned, Notice)
"""Events told only to the player they concern."""
Witnessed = tuple[int, list[Any]]
"""An event's position in the tick's order, and its wire form."""


def _buckets(fov: FieldOfView) -> Iterator[tuple[int, int]]:
    h, w = fov.visible.shape
    for by in range(fov.y0 // BUCKET, (fov.y0 + h - 1) // BUCKET + 1):
        for bx in range(fov.x0 // BUCKET, (fov.x0 + w - 1) // BUCKET + 1):
            yield bx, by


class TickIndex:
    """The tick's events, sorted for the views, and shared lookups.

    It also marks which cells changed since the ``previous`` tick's index
    (an actor moved, was hurt or changed mind there, an item or the terrain
    changed there, or something happened there), so a view that sees no
    changed cell — and whose own player did not change — is skipped.

    Args:
        world: The world just after :meth:`World.step`.
        events: What that step returned.
        previous: The index of the tick before, or None (everything changed).
    """

    def __init__(self, world: World, events: list[Event],
                 previous: TickIndex | None = None) -> None:
        self.world = world
        self.rejections: dict[int, list[Rejected]] = defaultdict(list)
        self.snapshot_for: set[int] = set()
        self.shared: list[tuple[int, Joined | Left]] = []
        self.involving: dict[int, list[Witnessed]] = defaultdict(list)
        self._placed: dict[int, dict[tuple[int, int], list[tuple[int, int, int, list[Any]]]]] = (
            defaultdict(lambda: defaultdict(list)))
        self._items: dict[int, dict[tuple[int, int], list[tuple[int, int, str]]]] = {}
        self._spans: dict[int, list[tuple[int, RayFired | Flew]]] = defaultdict(list)
        for order, event in enumerate(events):
            if isinstance(event, Rejected):
                self.rejections[event.actor].append(event)
                continue
            if isinstance(event, (Joined, Left)):
                self.shared.append((order, event))
                continue
            if isinstance(event, (RayFired, Flew)):
                self._spans[event.depth].append((order, event))
                continue
            wire = event_to_wire(event)
            if wire is None:
                continue
            if isinstance(event, PRIVATE):
                self.involving[event.actor].append((order, wire))
                continue
            if isinstance(event, (Respawned, TookStairs)):
                self.snapshot_for.add(event.actor)
            if isinstance(event, Attacked):
                involved = {event.attacker, event.target}
            elif isinstance(event, Harmed):
                involved = {event.target}  # the source learns of it only if it sees it
            elif hasattr(event, "actor"):
                involved = {event.actor}
            else:
                involved = set()
            if isinstance(event, Died) and event.killer is not None:
                involved.add(event.killer)
            for aid in involved:
                self.involving[aid].append((order, wire))
            key = (event.x // BUCKET, event.y // BUCKET)
            self._placed[event.depth][key].append((event.x, event.y, order, wire))

        self.states: dict[int, ActorState] = {}
        """Wire state of every living actor on a level with players."""
        self.where: dict[int, tuple[int, int, int]] = {}
        """``(depth, x, y)`` of the same actors."""
        active = [d for d in world.levels if world.players_on(d) > 0]
        for a in world.actors.values():
            if a.alive and world.players_on(a.depth) > 0:
                self.states[a.id] = (a.x, a.y, a.hp, a.max_hp, actor_flags(a, -1),
                                     status_bits(a))
                self.where[a.id] = (a.depth, a.x, a.y)
        self.tops: dict[int, dict[tuple[int, int], str]] = {
            d: {pos: pile[-1].key for pos, pile in world.levels[d].items.items() if pile}
            for d in active}
        """Top floor item by cell, per level with players."""
        self._all_dirty = previous is None
        self._dirty: dict[int, NDArray[np.bool_]] = {}
        self._find_changes(previous)

    def _mark(self, depth: int, x: int, y: int) -> None:
        grid = self._dirty.get(depth)
        if grid is None:
            level = self.world.levels.get(depth)
            if level is None:
                return
            grid = self._dirty[depth] = np.zeros(level.terrain.shape, dtype=np.bool_)
        grid[y, x] = True

    def _find_changes(self, previous: TickIndex | None) -> None:
        mark = self._mark
        for depth, placed in self._placed.items():
            for entries in placed.values():
                for x, y, _, _ in entries:
                    mark(depth, x, y)
        for depth, spans in self._spans.items():
            for _, span in spans:
                for x, y in span.cells:
                    mark(depth, x, y)
        for depth, level in self.world.levels.items():
            for x, y in level.changed:
                mark(depth, x, y)
            level.clear_changes()
        if previous is None:
            return
        before, was = previous.states, previous.where
        for aid, state in self.states.items():
            here = self.where[aid]
            if before.get(aid) != state or was.get(aid) != here:
                mark(*here)
                old = was.get(aid)
                if old is not None:
                    mark(*old)
        for aid in was.keys() - self.where.keys():
            mark(*was[aid])
        for depth, tops in self.tops.items():
            old_tops = previous.tops.get(depth, {})
            for x, y in tops.keys() ^ old_tops.keys():
                mark(depth, x, y)
            for (x, y), key in tops.items():
                if old_tops.get((x, y), key) != key:
                    mark(depth, x, y)

    def quiet(self, actor_id: int, depth: int, fov: FieldOfView | None) -> bool:
        """True if nothing a player could be told about changed this tick in
        its view: no cell it sees changed (an actor arrived, left, moved, was
        hurt or changed mind there, an item or the terrain changed there, or
        something happened there), it took part in no event, and nobody joined
        or left. (Its own state is the view's to check.)"""
        if self._all_dirty or self.shared or actor_id in self.involving:
            return False
        if fov is None:
            return True
        grid = self._dirty.get(depth)
        if grid is None:
            return True
        rows, cols = fov.slices()
        return not grid[rows, cols][fov.visible].any()

    def items_in_view(self, depth: int, fov: FieldOfView) -> dict[tuple[int, int], str]:
        """The top item of every cell in view that has one."""
        buckets = self._items.get(depth)
        if buckets is None:
            buckets = defaultdict(list)
            for (x, y), item in self.tops.get(depth, {}).items():
                buckets[(x // BUCKET, y // BUCKET)].append((x, y, item))
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
        for order, span in self._spans.get(depth, ()):
            concerned = self._concerns(span, actor_id)
            if fov is None and not concerned:
                continue
            wire = span_to_wire(span, fov.contains if fov is not None else _nowhere, actor_id)
            if wire[3] or concerned:
                found[order] = wire
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


    @staticmethod
    def _concerns(span: RayFired | Flew, actor_id: int) -> bool:
        """Whether the player ``actor_id`` fired the ray or was hit by it."""
        if isinstance(span, Flew):
            return False
        return span.source == actor_id or any(hit[0] == actor_id for hit in span.hits)


def _nowhere(x: int, y: int) -> bool:
    return False


def with_you(state: ActorState) -> ActorState:
    """``state`` with the "you" flag set (the viewer's own record)."""
    return (*state[:4], state[4] | FLAG_YOU, state[5])

