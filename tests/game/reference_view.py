"""A straightforward per-player view, for checking the fast one.

:class:`ReferenceView` rebuilds everything a player sees every tick — every
visible actor's record, every floor item in view, every event of the level,
the whole ``me`` map — and diffs it against what it sent before, with no
index of changes and no shortcut. It must produce exactly the messages of
:class:`server.game.views.PlayerView`.
"""

from __future__ import annotations

from typing import Any

from protocol.messages import BACK_TICKS, STEP_CODES, Delta, ServerMessage
from server.game.game import Game
from server.game.index import PRESENCE_PER_TICK, TickIndex, anonymise
from server.game.views import PlayerView
from server.game.wire import REASONS, actor_record, me_fields, span_to_wire
from server.sim.actors import Actor, xp_for_level
from server.sim.events import Joined


class ReferenceView:
    """What one client has been told, rebuilt from scratch each tick."""

    def __init__(self, actor_id: int) -> None:
        self.actor_id = actor_id
        self.actors: dict[int, list[Any]] = {}
        self.kept: dict[int, tuple[list[Any], int]] = {}
        """Records of actors removed, with the tick of the rm (protocol 8)."""
        self.looks: dict[int, list[Any]] = {}
        """Health, maximum health, flags and statuses of every living actor
        of a level with players, as of the last call."""
        self.changed_at: dict[int, int] = {}
        """The last tick each of those changed them or appeared."""
        self.objs: dict[tuple[int, int], str] = {}
        self.fov: Any = None
        self.me: dict[str, Any] = {}
        self.ack = -1
        self.depth = 0
        self.sent_tick = -2
        """The tick of the last snap or delta (protocol 9)."""

    def _actors(self, game: Game) -> dict[int, list[Any]]:
        world = game.world
        return {
            aid: actor_record(world.actors[aid], self.actor_id, world.content)
            for aid in world.sees.get(self.actor_id, ())
            if world.actors[aid].alive
        }

    def _objs(self, game: Game, actor: Actor) -> dict[tuple[int, int], str]:
        if actor.fov is None or not actor.alive:
            return {}
        level = game.world.levels[actor.depth]
        return {
            pos: pile[-1].key
            for pos, pile in level.items.items()
            if pile and actor.fov.contains(*pos)
        }

    def _note_looks(self, game: Game) -> None:
        """Note which actors' health, flags or statuses changed this tick, or
        appeared, looking at every actor (protocol 8's ``back``)."""
        world = game.world
        looks = {
            a.id: actor_record(a, -1, world.content)[5:]
            for a in world.actors.values()
            if a.hp > 0 and world.players_on(a.depth) > 0
        }
        for aid, look in looks.items():
            if self.looks.get(aid) != look:
                self.changed_at[aid] = world.tick
        self.looks = looks

    def messages(self, game: Game, index: TickIndex, snapshot: bool) -> list[ServerMessage]:
        """This tick's messages for the player (``snapshot``: the game sends
        one); called every tick."""
        self._note_looks(game)
        world = game.world
        actor = world.actors[self.actor_id]
        # protocol 6: flat pairs, a code the index of welcome.reasons;
        # protocol 10: each seq counted back from the frame's ack once applied
        rej = [
            v
            for e in index.rejections.get(self.actor_id, ())
            for v in (actor.last_tag - e.tag, REASONS.index(e.reason.name.lower()))
        ]
        actors = self._actors(game)
        objs = self._objs(game, actor)
        me = me_fields(actor, xp_for_level(actor.level + 1), world.content, world.tick)
        if snapshot:
            self.actors, self.objs, self.me = actors, dict(objs), me
            self.kept = {}
            self.sent_tick = world.tick
            self.ack, self.fov, self.depth = actor.last_tag, actor.fov, actor.depth
            return [PlayerView(self.actor_id).snapshot(index, actor, rej or None)]
        fields: dict[str, Any] = {}
        if rej:
            fields["rej"] = rej
        if actor.last_tag != self.ack:  # protocol 10: the step from the last ack sent
            fields["ack"] = actor.last_tag - self.ack
            self.ack = actor.last_tag
        if actor.seen_tiles:
            fields["tiles"] = actor.seen_tiles
        fov = actor.fov if actor.alive else None
        if not _same(fov, self.fov):
            fields["fov"] = PlayerView._packed_fov(actor)
        self.fov = fov
        gone = sorted(a for a in self.actors if a not in actors)
        rm = [a - b for a, b in zip(gone, [0, *gone])]  # protocol 6: ids as gaps
        for a in gone:
            self.kept[a] = (self.actors[a], world.tick)
        # Protocol 8: an actor removed in the last BACK_TICKS ticks whose
        # health, flags and statuses have not changed since the tick before
        # (so the record the client kept is current but for the cell) comes back.
        add: list[Any] = []
        back: list[Any] = []
        last_back = 0
        for a in sorted(actors):
            if a in self.actors:
                continue
            kept, left = self.kept.pop(a, (None, 0))
            rec = actors[a]
            if (
                kept is not None
                and world.tick - left <= BACK_TICKS
                and self.changed_at.get(a, world.tick) < left
            ):
                assert kept[:3] + kept[5:] == rec[:3] + rec[5:], (kept, rec)
                back += [a - last_back, rec[3], rec[4]]
                last_back = a
            else:
                add.append(rec)
        differ = [a for a in sorted(actors) if a in self.actors and self.actors[a] != actors[a]]
        # Position alone changed (health, flags, statuses as sent): one step
        # from where the client has it is an st code, a longer move an mv triple.
        moved = {a for a in differ if self.actors[a][5:] == actors[a][5:]}
        upd = [[a, *actors[a][3:]] for a in differ if a not in moved]
        mv: list[Any] = []
        st: list[Any] = []
        last_mv = last_st = 0  # protocol 5: each id as the gap from the one before
        for a in differ:
            if a not in moved:
                continue
            (x0, y0), (x, y) = self.actors[a][3:5], actors[a][3:5]
            if (x - x0, y - y0) in STEP_CODES:  # protocol 7: gap × 8 + direction
                st.append((a - last_st) * 8 + STEP_CODES[(x - x0, y - y0)])
                last_st = a
            else:
                mv += [a - last_mv, x, y]
                last_mv = a
        fields_in_order = (
            ("rm", rm),
            ("add", add),
            ("upd", upd),
            ("mv", mv),
            ("st", st),
            ("back", back),
        )
        for key, value in fields_in_order:
            if value:
                fields[key] = value
        cells = {pos: key for pos, key in objs.items() if self.objs.get(pos) != key}
        if fov is not None:
            cells.update((pos, "") for pos in self.objs if pos not in objs and fov.contains(*pos))
        changed: list[Any] = []
        for pos, key in sorted(cells.items()):
            changed += [pos[0], pos[1], key]
            if key:
                self.objs[pos] = key
            else:
                del self.objs[pos]
        ev = self._events(index, actor, fov, set(self.actors) | set(actors))
        self.actors = actors
        # Protocol 10: a delta's me never has x, y (the own record moves)
        diff = {k: v for k, v in me.items() if self.me.get(k) != v and k not in ("x", "y")}
        self.me = me
        if changed:
            fields["objs"] = changed
        if ev:
            fields["ev"] = ev
        if diff:
            fields["me"] = diff
        if not fields:
            return []
        # Protocol 9: no tick in a delta for the tick after the last message's.
        tick = None if world.tick == self.sent_tick + 1 else world.tick
        self.sent_tick = world.tick
        return [Delta(tick=tick, **fields)]

    def _events(self, index: TickIndex, actor: Actor, fov: Any, known: set[int]) -> list[list[Any]]:
        """Every event of the tick the player saw or took part in, found by a
        scan of all of them (the index is used only for its event list)."""
        me = self.actor_id
        found: dict[int, list[Any]] = {o: w for o, w in index.involving.get(me, ())}
        for order, span, *_box in index._spans.get(actor.depth, ()):
            concerned = index._concerns(span, me)
            if fov is None and not concerned:
                continue
            wire = span_to_wire(span, fov.contains if fov is not None else (lambda x, y: False), me)
            if wire[3] or concerned:
                found[order] = wire
        others = [(o, e) for o, e in index.shared if e.actor != me]
        for order, event in others[:PRESENCE_PER_TICK]:
            found[order] = ["join" if isinstance(event, Joined) else "leave", event.name]
        if fov is not None:
            for x, y, order, wire in index._placed.get(actor.depth, ()):
                if order not in found and fov.contains(x, y):
                    found[order] = wire
        return [anonymise(found[o], lambda a: a == me or a in known) for o in sorted(found)]


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    return bool(
        (a.x0, a.y0) == (b.x0, b.y0)
        and a.visible.shape == b.visible.shape
        and (a.visible == b.visible).all()
    )
