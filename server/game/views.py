"""Per-player views: what each client knows, and the delta that brings it up to date.

Each tick a :class:`PlayerView` compares what its player can see now (field of
view, actors, floor items, own state) with what it last sent, and builds one
``delta`` with only the differences, or nothing at all when nothing changed.
The work per player is bounded by the view window (17×17 cells) and the
actors in it, never by the level's size or the number of players.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from protocol.fov import pack_fov
from protocol.messages import Delta, Snapshot
from server.game.index import ActorState, TickIndex, with_you
from server.game.wire import actor_record, me_fields
from server.sim.actors import Actor, xp_for_level
from server.sim.casting import MEMORY_STEP
from server.sim.fov import FieldOfView


class PlayerView:
    """What one client has been told, for the player ``actor_id``."""

    def __init__(self, actor_id: int) -> None:
        self.actor_id = actor_id
        self.needs_snapshot = True
        self.depth = 0
        self.actors: dict[int, ActorState] = {}
        self.objs: dict[tuple[int, int], str] = {}
        self.fov: FieldOfView | None = None
        self.me: dict[str, Any] = {}
        self.me_key: tuple[Any, ...] = ()
        self.ack = -1

    def _visible_actors(self, index: TickIndex) -> dict[int, ActorState]:
        me = self.actor_id
        states = index.states
        now = {aid: states[aid] for aid in index.world.sees.get(me, ()) if aid in states}
        own = now.get(me)
        if own is not None:
            now[me] = with_you(own)
        return now

    def _visible_objs(self, index: TickIndex, actor: Actor) -> dict[tuple[int, int], str]:
        if actor.fov is None or not actor.alive:
            return {}
        return index.items_in_view(actor.depth, actor.fov)

    def snapshot(self, index: TickIndex, actor: Actor) -> Snapshot:
        """Everything the player sees and remembers; resets this view's state."""
        world = index.world
        level = world.level(actor.depth)
        memory = actor.memory.get(actor.depth)
        raw = b"\xff" * (level.width * level.height) if memory is None else memory.tobytes()
        self.needs_snapshot = False
        self.depth = actor.depth
        self.actors = self._visible_actors(index)
        seen = self._visible_objs(index, actor)
        self.objs = dict(seen)
        self.fov = actor.fov
        self.me = me_fields(actor, xp_for_level(actor.level + 1), world.content, world.tick)
        self.me_key = _me_key(actor, world.tick)
        self.ack = actor.last_tag
        return Snapshot(
            tick=world.tick, depth=actor.depth, w=level.width, h=level.height, map=raw,
            fov=self._packed_fov(actor),
            actors=[actor_record(world.actors[a], self.actor_id, world.content)
                    for a in sorted(self.actors)],
            objs=[v for (x, y), k in sorted(seen.items()) for v in (x, y, k)],
            me=dict(self.me), ack=actor.last_tag,
        )

    @staticmethod
    def _packed_fov(actor: Actor) -> list[Any]:
        if actor.fov is None or not actor.alive:
            return [0, 0, 0, 0, b""]
        return pack_fov(actor.fov.visible, actor.fov.x0, actor.fov.y0)

    def delta(self, index: TickIndex, actor: Actor) -> Delta | None:
        """The changes since the last message, or None if there are none.

        Args:
            index: The tick's shared index (world after the tick, its events).
            actor: This view's player.
        """
        world = index.world
        fov = actor.fov if actor.alive else None
        if (fov is self.fov and actor.last_tag == self.ack and not actor.seen_tiles
                and index.quiet(self.actor_id, actor.depth, fov)
                and _me_key(actor, world.tick) == self.me_key):
            return None
        fields: dict[str, Any] = {}
        if actor.last_tag != self.ack:
            self.ack = actor.last_tag
            fields["ack"] = actor.last_tag
        if actor.seen_tiles:
            fields["tiles"] = actor.seen_tiles
        if fov is not self.fov:
            if not _same_fov(fov, self.fov):
                fields["fov"] = self._packed_fov(actor)
            self.fov = fov
        now = self._visible_actors(index)
        old = self.actors
        rm = [aid for aid in old if aid not in now]
        add = [actor_record(world.actors[aid], self.actor_id, world.content)
               for aid in now if aid not in old]
        upd = [[aid, *state] for aid, state in now.items()
               if aid in old and old[aid] != state]
        self.actors = now
        if rm:
            fields["rm"] = rm
        if add:
            fields["add"] = add
        if upd:
            fields["upd"] = upd
        objs = self._visible_objs(index, actor)
        changed: list[Any] = []
        for pos, key in objs.items():
            if self.objs.get(pos) != key:
                changed += [pos[0], pos[1], key]
                self.objs[pos] = key
        if fov is not None:
            for pos in [p for p in self.objs if p not in objs and fov.contains(*p)]:
                changed += [pos[0], pos[1], ""]
                del self.objs[pos]
        if changed:
            fields["objs"] = changed
        ev = index.witnessed(self.actor_id, actor.depth, fov)
        if ev:
            fields["ev"] = ev
        me_key = _me_key(actor, world.tick)
        if me_key != self.me_key:
            self.me_key = me_key
            me = me_fields(actor, xp_for_level(actor.level + 1), world.content, world.tick)
            diff = {k: v for k, v in me.items() if self.me.get(k) != v}
            if diff:
                self.me = me
                fields["me"] = diff
        if not fields:
            return None
        return Delta(tick=world.tick, **fields)


def _me_key(actor: Actor, tick: int) -> tuple[Any, ...]:
    """A cheap fingerprint of the ``me`` fields: rebuild them only when it changes.

    Spell failure rates and forgetting depend on time only through whole
    rounds of :data:`server.sim.casting.MEMORY_STEP` ticks, so the key holds
    that quotient rather than the tick."""
    return (actor.hp, actor.en, actor.x, actor.y, actor.depth, actor.level, actor.xp,
            actor.max_hp, actor.max_en, actor.power, actor.defence, actor.accuracy,
            actor.dodge, actor.speed, actor.respawn_tick, actor.bonus, actor.strength,
            tuple((i.letter, i.key, i.count, i.charges, i.known) for i in actor.inventory),
            tuple(id(i) for i in actor.equipment.values()), actor.statuses.snapshot(),
            actor.food.nourishment, actor.food.hunger, tuple(actor.known_spells.items()),
            tuple(sorted(actor.skills.items())), actor.choices_owed,
            tick // MEMORY_STEP if actor.known_spells else 0)


def _same_fov(a: FieldOfView | None, b: FieldOfView | None) -> bool:
    """True if two fields of view cover the same cells (recomputed after a
    terrain change elsewhere on the level, a field of view is often unchanged)."""
    if a is None or b is None:
        return a is b
    return (a.x0, a.y0) == (b.x0, b.y0) and np.array_equal(a.visible, b.visible)
