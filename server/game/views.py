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

from protocol.fov import pack_cropped_fov
from protocol.messages import BACK_TICKS, Delta, Snapshot
from server.game.index import NO_ITEMS, Floor, TickIndex, bucket_of, buckets_in_window, put_item
from server.game.interest import Lists
from server.game.wire import FLAG_YOU, me_fields, rejections
from server.sim.actors import Actor, xp_for_level
from server.sim.casting import MEMORY_STEP
from server.sim.fov import FieldOfView
from server.sim.world import World

_NOBODY: frozenset[int] = frozenset()
SNAP_ONLY = frozenset({"x", "y"})
"""The ``me`` fields a snapshot carries and a delta never does: a delta moves
the player's own actor record instead (protocol 10; in a walking crowd the
same cell in ``me`` took about 2 bytes of every delta)."""


class _FovWire:
    """The wire form of fields of view, packed once per ``visible`` array.

    The world shares one read-only ``visible`` array among every field of
    view taken from the same cell (:meth:`World._cached_fov`), so in a crowd
    the same bits go to many players. The arrays are kept beside their
    bytes, so an id is not reused while its entry stands; both maps hold
    only ints, arrays and bytes, nothing the garbage collector tracks.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.arrays: dict[int, np.ndarray[Any, Any]] = {}
        self.wire: dict[int, list[Any]] = {}
        """By array id, the wire form with the window's corner relative to
        the field of view's (``x0``, ``y0`` as offsets)."""

    def packed(self, fov: FieldOfView) -> list[Any]:
        """``[x0, y0, fw, fh, bits]`` for ``fov``, cropped to the cells in
        view (:func:`protocol.fov.pack_cropped_fov`)."""
        visible = fov.visible
        key = id(visible)
        if self.arrays.get(key) is visible:
            rel = self.wire[key]
        else:
            rel = pack_cropped_fov(visible)
            if visible.flags.writeable:  # not a shared array: it may change
                return self._placed(rel, fov)
            if len(self.arrays) >= self.limit:
                self.arrays.clear()
                self.wire.clear()
            self.arrays[key] = visible
            self.wire[key] = rel
        return self._placed(rel, fov)

    @staticmethod
    def _placed(rel: list[Any], fov: FieldOfView) -> list[Any]:
        ox, oy, fw, fh, bits = rel
        if not fw:
            return [0, 0, 0, 0, b""]  # nothing in view
        return [fov.x0 + ox, fov.y0 + oy, fw, fh, bits]


_FOV_WIRE = _FovWire(limit=8192)


class PlayerView:
    """What one client has been told, for the player ``actor_id``.

    The view keeps the ids of the actors it sent, the floor items it sent
    (by cell), its field of view and ``me``, and what the client keeps of the
    actors that left its view (:attr:`kept`). The actors that came into
    view, left it, or changed in it are found for every player of the level
    at once (:meth:`TickIndex.view_changes`, :mod:`server.game.interest`),
    and a delta takes its player's lists from there; a player with
    invisible actors cut from its view, or whose view missed a tick, has
    them from set operations on the ids in view and the actors that changed
    this tick (:attr:`TickIndex.changed`) instead. The floor items are
    scanned only when the field of view moved or an item in it changed.
    """

    def __init__(self, actor_id: int) -> None:
        self.actor_id = actor_id
        self.needs_snapshot = True
        self.depth = 0
        self.ids: set[int] | frozenset[int] = _NOBODY
        self.objs: Floor = {}
        """The top floor items the client was told of (and not told gone),
        by bucket as the tick's index holds the level's: a bucket that is
        the same on both sides is skipped whole when the view moves."""
        self.fov: FieldOfView | None = None
        self.me: dict[str, Any] = {}
        self.me_key: tuple[Any, ...] = ()
        self.quiet: tuple[int, ...] | None = None
        """What :meth:`_me_delta` last found with nothing else to look at
        (health, energy, food, depth, level, spell-memory round),
        or None: the same again, with ``may_change`` False, means no change."""
        self.ack = -1
        """The ``ack`` the client was last given (absolute); a delta gives the
        next as the step from it (protocol 10)."""
        self.kept: dict[int, int] = {}
        """By id, the tick of the ``rm`` that took each actor out of view, for
        those that left in the last :data:`~protocol.messages.BACK_TICKS`
        ticks (or a little longer: it is pruned every that many ticks),
        whose records the client keeps. Ints only: the garbage collector
        never looks at it (a tuple per entry made a collection pause a tick
        for 63 ms with 2,000 players)."""
        self.prune_at = 0
        """The tick from which :attr:`kept` is next pruned of entries too old
        for ``back``."""
        self.sent_tick = -2
        """The tick of the last snapshot or delta built for the client: a
        delta for the tick after it leaves ``tick`` out (protocol 9)."""
        self.ids_tick = -2
        """The world's tick when :attr:`ids` was taken (the last message built)."""
        self.ids_whole = False
        """Whether :attr:`ids` was then the player's whole visible set
        (:meth:`World.sees_whole`): with that tick the one before, and the
        set whole now too, the level's arrays (:meth:`TickIndex.view_changes`)
        say what changed in view."""

    def _visible_ids(self, index: TickIndex) -> set[int] | frozenset[int]:
        """The actors in view: the world's own set (:attr:`World.sees`), which
        holds only living actors of the player's level and is replaced, never
        changed in place, so it is shared here read-only and an unchanged
        view is the same object as last tick."""
        return index.world.sees.get(self.actor_id) or _NOBODY

    def _record(self, index: TickIndex, aid: int) -> list[Any]:
        rec = index.record(aid)
        if aid == self.actor_id:
            rec = [*rec[:7], rec[7] | FLAG_YOU, rec[8]]
        return rec

    def _visible_objs(self, index: TickIndex, actor: Actor) -> dict[tuple[int, int], str]:
        if actor.fov is None or not actor.alive:
            return {}
        return index.items_in_view(actor.depth, actor.fov)

    def snapshot(self, index: TickIndex, actor: Actor, rej: list[Any] | None = None) -> Snapshot:
        """Everything the player sees and remembers; resets this view's state.

        Args:
            index: The tick's shared index.
            actor: This view's player.
            rej: The tick's refused commands, ``[ack − seq, code, ...]``, or None.

        The tick's events that the player witnessed ride along in ``ev`` (a
        player who arrived this tick still hears who else joined).
        """
        world = index.world
        level = world.level(actor.depth)
        memory = actor.memory.get(actor.depth)
        raw = b"\xff" * (level.width * level.height) if memory is None else memory.tobytes()
        self.needs_snapshot = False
        self.depth = actor.depth
        self.ids = self._visible_ids(index)
        self.ids_tick = world.tick
        self.ids_whole = world.sees_whole(self.actor_id)
        self.kept = {}  # a snapshot replaces all the client knows of actors
        self.sent_tick = world.tick
        self.prune_at = world.tick + BACK_TICKS
        seen = self._visible_objs(index, actor)
        self.objs = {}
        for pos, key in seen.items():
            put_item(self.objs, pos, key)
        self.fov = actor.fov
        self.me = me_fields(actor, xp_for_level(actor.level + 1), world.content, world.tick)
        self.me_key = _me_key(actor, world.tick)
        self.quiet = None
        self.ack = actor.last_tag
        ev = None
        if index.may_witness(self.actor_id, actor.depth):
            fov = actor.fov if actor.alive else None
            ev = index.witnessed(self.actor_id, actor.depth, fov, self.ids) or None
        return Snapshot(
            tick=world.tick,
            depth=actor.depth,
            w=level.width,
            h=level.height,
            map=raw,
            fov=self._packed_fov(actor),
            actors=[self._record(index, a) for a in sorted(self.ids)],
            objs=[v for (x, y), k in sorted(seen.items()) for v in (x, y, k)],
            me=dict(self.me),
            ack=actor.last_tag,
            rej=rej,
            ev=ev,
        )

    def answers(self, index: TickIndex, actor: Actor) -> bool:
        """Whether this tick's message answers one of the player's commands:
        one was carried out since the last message (an ``ack`` is due) or
        refused this tick (a ``rej``). Such messages go out first (issue 10:
        command to effect)."""
        return actor.last_tag != self.ack or self.actor_id in index.rejections

    def message(self, index: TickIndex, actor: Actor) -> Snapshot | Delta | None:
        """This tick's one message for the player: a snapshot when one is due
        (asked for, a level change, a respawn) else the delta, or None when
        nothing changed; the tick's refused commands ride in ``rej``."""
        refused = index.rejections.get(self.actor_id)
        rej = rejections(refused, actor.last_tag) if refused else None
        if self.needs_snapshot or self.actor_id in index.snapshot_for or self.depth != actor.depth:
            return self.snapshot(index, actor, rej)
        return self.delta(index, actor, rej)

    @staticmethod
    def _packed_fov(actor: Actor) -> list[Any]:
        fov = actor.fov
        if fov is None or not actor.alive:
            return [0, 0, 0, 0, b""]
        return _FOV_WIRE.packed(fov)

    def delta(self, index: TickIndex, actor: Actor, rej: list[Any] | None = None) -> Delta | None:
        """The changes since the last message, or None if there are none.

        Args:
            index: The tick's shared index (world after the tick, its events).
            actor: This view's player.
            rej: The tick's refused commands, ``[ack − seq, code, ...]``, or None.
        """
        world = index.world
        fov = actor.fov if actor.hp > 0 else None  # actor.alive, without the call
        fields: dict[str, Any] = {}
        if rej:
            fields["rej"] = rej
        if actor.last_tag != self.ack:  # as the step from the last one sent (protocol 10)
            fields["ack"] = actor.last_tag - self.ack
            self.ack = actor.last_tag
        if actor.seen_tiles:
            fields["tiles"] = actor.seen_tiles
        moved = fov is not self.fov
        if moved:
            if not _same_fov(fov, self.fov):
                fields["fov"] = self._packed_fov(actor)
            self.fov = fov
        old = self.ids
        now = world.sees.get(self.actor_id) or _NOBODY  # as _visible_ids gives it
        tick = world.tick
        whole = world.sees_whole(self.actor_id)
        level = index.view_changes(actor.depth) if whole and self.ids_whole else None
        if level is not None and self.ids_tick == tick - 1:
            # The level's arrays hold this player's lists, sorted and
            # gap-coded (server.game.interest).
            self._actor_lists(index, level.get(self.actor_id), fields)
        else:
            self._actor_sets(index, old, now, fields)
        self.ids = now
        self.ids_tick = tick
        self.ids_whole = whole
        if fov is not None and (moved or index.all_changed):
            changed_objs = self._objs_after_move(index, actor.depth, fov)
        elif fov is not None and actor.depth in index.item_changes:
            changed_objs = self._objs_changed(index, actor.depth, fov)
        else:
            changed_objs = []
        if changed_objs:
            fields["objs"] = changed_objs
        if index.may_witness(self.actor_id, actor.depth):
            ev = index.witnessed(self.actor_id, actor.depth, fov, now, old)
            if ev:
                fields["ev"] = ev
        self._me_delta(actor, world, fields, index.may_touch_me(self.actor_id))
        if not fields:
            return None
        implied = tick == self.sent_tick + 1  # protocol 9: the client counts on
        self.sent_tick = tick
        return Delta(tick=None if implied else tick, **fields)

    def _actor_sets(
        self,
        index: TickIndex,
        old: set[int] | frozenset[int],
        now: set[int] | frozenset[int],
        fields: dict[str, Any],
    ) -> None:
        """Put the delta's ``rm``, ``add``, ``back``, ``st``, ``mv`` and
        ``upd`` into ``fields`` from the sets of ids in view before
        (``old``) and now (``now``): for a player whose visible set had
        invisible actors cut from it, or whose view missed a tick."""
        world = index.world
        # The actors in view that changed (less, below, those just added):
        # a set intersection walks the smaller set, so this costs about the
        # number in view, not the number that changed on the level.
        upd_ids = now & index.changed
        if now is not old:  # a new set: the world rebuilt it because it differs
            rm = old - now
            add = now - old
            if rm:  # ids as gaps, the first from 0 (protocol 6)
                ids = sorted(rm)
                fields["rm"] = [b - a for a, b in zip([0, *ids], ids)]
                tick, kept = world.tick, self.kept  # the client keeps them (protocol 8)
                for aid in ids:
                    kept[aid] = tick
                if tick >= self.prune_at:
                    self.kept = {a: t for a, t in kept.items() if tick - t <= BACK_TICKS}
                    self.prune_at = tick + BACK_TICKS
            if add:
                self._came(index, sorted(add), fields)
                upd_ids -= add
        if upd_ids:
            # Position-only changes: one-cell steps go as st codes (gap × 8 +
            # direction: protocol 7), longer moves as flat mv triples (the id
            # as the gap from the one before: protocol 5), the rest as upd
            # rows. The client has every actor in view as it was last tick.
            step, move, rows = index.steps.get, index.moves.get, index.upd_rows
            st: list[int] = []
            mv: list[int] = []
            upd: list[list[Any]] = []
            last_st = last_mv = 0
            for aid in sorted(upd_ids):
                code = step(aid)
                if code is not None:
                    st.append(((aid - last_st) << 3) | code)
                    last_st = aid
                    continue
                cell = move(aid)
                if cell is None:
                    upd.append(rows[aid])
                else:
                    mv.append(aid - last_mv)
                    mv += cell
                    last_mv = aid
            if st:
                fields["st"] = st
            if mv:
                fields["mv"] = mv
            if upd:
                me = self.actor_id
                if me in upd_ids and me in rows:
                    i = next(i for i, r in enumerate(upd) if r[0] == me)
                    own = upd[i]
                    upd[i] = [*own[:5], own[5] | FLAG_YOU, own[6]]
                fields["upd"] = upd

    def _came(self, index: TickIndex, add: list[int], fields: dict[str, Any]) -> None:
        """Put the actors ``add`` (ids increasing) that came into view into
        ``fields``: as ``back`` those the client kept when they left in the
        last BACK_TICKS ticks, with health, flags and statuses unchanged
        since the tick before (TickIndex.looked: the kept record is current
        but for the cell), as ``[gap, x, y]`` (protocol 8); the others as
        whole records in ``add``."""
        kept, tick, looked, states = self.kept, index.world.tick, index.looked, index.states
        back: list[int] = []
        records: list[list[Any]] = []
        last = 0
        for aid in add:
            left = kept.pop(aid, None)
            if left is not None and tick - left <= BACK_TICKS and looked.get(aid, tick) < left:
                state = states[aid]
                back += (aid - last, state[0], state[1])
                last = aid
            else:
                records.append(self._record(index, aid))
        if records:
            fields["add"] = records
        if back:
            fields["back"] = back

    def _actor_lists(self, index: TickIndex, lists: Lists, fields: dict[str, Any]) -> None:
        """Put the delta's ``rm``, ``add``, ``back``, ``st``, ``mv`` and
        ``upd`` into ``fields`` from the player's lists, found for its whole
        level at once (:class:`~server.game.interest.ViewChanges`): only
        the actors that came back into view and the ``upd`` rows take a
        step per actor here."""
        rm, rm_ids, add, st, mv, upd_ids = lists
        tick = index.world.tick
        if rm is not None and rm_ids is not None:
            fields["rm"] = rm
            kept = self.kept  # the client keeps them (protocol 8)
            for aid in rm_ids:
                kept[aid] = tick
            if tick >= self.prune_at:
                self.kept = {a: t for a, t in kept.items() if tick - t <= BACK_TICKS}
                self.prune_at = tick + BACK_TICKS
        if add is not None:
            self._came(index, add, fields)
        if st is not None:
            fields["st"] = st
        if mv is not None:
            fields["mv"] = mv
        if upd_ids is not None:
            rows, me = index.upd_rows, self.actor_id
            upd = []
            for aid in upd_ids:
                row = rows[aid]
                if aid == me:
                    row = [*row[:5], row[5] | FLAG_YOU, row[6]]
                upd.append(row)
            fields["upd"] = upd

    def _objs_after_move(self, index: TickIndex, depth: int, fov: FieldOfView) -> list[Any]:
        """Floor changes when the field of view changed: every cell in view
        whose top item differs from what the client was told, as a flat
        ``[x, y, key, ...]`` list in cell order (``""``: nothing there now).

        A bucket whose items the client knows as they are is not looked at
        cell by cell: in a crowd that has seen its room's floor, nearly
        every bucket of nearly every view that moved."""
        level = index.item_buckets(depth)
        mine = self.objs
        contains = fov.contains
        changes: list[tuple[tuple[int, int], str]] = []
        for bucket in buckets_in_window(fov):
            there = level.get(bucket, NO_ITEMS)
            known = mine.get(bucket, NO_ITEMS)
            if there == known:
                continue
            for pos, key in there.items():
                if known.get(pos) != key and contains(*pos):
                    changes.append((pos, key))
            for pos in known:
                if pos not in there and contains(*pos):
                    changes.append((pos, ""))
        out: list[Any] = []
        for pos, key in sorted(changes):
            out += [pos[0], pos[1], key]
            if key:
                put_item(mine, pos, key)
            else:
                _drop(mine, pos)
        return out

    def _objs_changed(self, index: TickIndex, depth: int, fov: FieldOfView) -> list[Any]:
        """Floor changes when the field of view stayed: only cells whose top
        item changed this tick and that are in view."""
        tops = index.tops.get(depth, {})
        changed: list[Any] = []
        mine = self.objs
        for pos in index.item_changes[depth]:
            if not fov.contains(*pos):
                continue
            key = tops.get(pos, "")
            if mine.get(bucket_of(pos), NO_ITEMS).get(pos, "") != key:
                changed += [pos[0], pos[1], key]
                if key:
                    put_item(mine, pos, key)
                else:
                    _drop(mine, pos)
        return changed

    def _me_delta(
        self, actor: Actor, world: World, fields: dict[str, Any], may_change: bool
    ) -> None:
        """Put the changed ``me`` fields into ``fields["me"]``, but for
        :data:`SNAP_ONLY`: the player's cell travels in its own actor record.

        Health, energy and food change often and are compared one
        by one; the rest is rebuilt only when its fingerprint (:func:`_me_key`)
        changes, and the fingerprint is taken only when ``may_change`` (see
        :meth:`TickIndex.may_touch_me`), or depth, level, death or the
        spell-memory round changed.
        """
        hp, en, food = actor.hp, actor.en, actor.food
        memory_round = world.tick // MEMORY_STEP if actor.known_spells else 0
        quiet = (
            hp,
            en,
            food.nourishment,
            food.hunger,
            actor.depth,
            actor.level,
            memory_round,
        )
        if not may_change and quiet == self.quiet:
            return  # as last time, when the comparisons below found all in place
        self.quiet = None
        me = self.me
        diff: dict[str, Any] = {}
        if me["hp"] != hp:
            diff["hp"] = me["hp"] = hp
        if me["en"] != en:
            diff["en"] = me["en"] = en
        sent = me["food"]
        if sent[0] != food.nourishment or sent[1] != food.hunger:
            diff["food"] = me["food"] = [food.nourishment, food.hunger]
        if (
            not may_change
            and me["depth"] == actor.depth
            and me["level"] == actor.level
            and me["dead"] == (hp <= 0)
            and self.me_key[-1] == memory_round
        ):
            self.quiet = quiet
            if diff:
                fields["me"] = diff
            return
        me_key = _me_key(actor, world.tick)
        if me_key != self.me_key:
            self.me_key = me_key
            full = me_fields(actor, xp_for_level(actor.level + 1), world.content, world.tick)
            diff.update({k: v for k, v in full.items() if me.get(k) != v and k not in SNAP_ONLY})
            self.me = full
        if diff:
            fields["me"] = diff


def _me_key(actor: Actor, tick: int) -> tuple[Any, ...]:
    """A cheap fingerprint of the ``me`` fields other than ``x`` and ``y`` (never
    in a delta), ``hp``, ``en`` and ``food`` (compared one by one): rebuild
    them only when it changes.

    Spell failure rates and forgetting depend on time only through whole
    rounds of :data:`server.sim.casting.MEMORY_STEP` ticks, so the key holds
    that quotient rather than the tick."""
    return (
        actor.depth,
        actor.level,
        actor.xp,
        actor.max_hp,
        actor.max_en,
        actor.power,
        actor.defence,
        actor.accuracy,
        actor.dodge,
        actor.speed,
        actor.respawn_tick,
        actor.bonus,
        actor.strength,
        tuple((i.letter, i.key, i.count, i.charges, i.known) for i in actor.inventory),
        tuple(id(i) for i in actor.equipment.values()),
        actor.statuses.snapshot(),
        tuple(actor.known_spells.items()),
        tuple(sorted(actor.skills.items())),
        actor.choices_owed,
        _memory_round(actor, tick),
    )


def _memory_round(actor: Actor, tick: int) -> int:
    """Spell failure rates and forgetting change only with this number."""
    return tick // MEMORY_STEP if actor.known_spells else 0


def _drop(floor: Floor, pos: tuple[int, int]) -> None:
    """Note that cell ``pos`` of ``floor`` has no item (it had one); an
    emptied bucket goes, as the level's index has none."""
    bucket = bucket_of(pos)
    items = floor[bucket]
    del items[pos]
    if not items:
        del floor[bucket]


def _same_fov(a: FieldOfView | None, b: FieldOfView | None) -> bool:
    """True if two fields of view cover the same cells (recomputed after a
    terrain change elsewhere on the level, a field of view is often unchanged)."""
    if a is None or b is None:
        return a is b
    if (a.x0, a.y0) != (b.x0, b.y0):
        return False
    # both boolean: equal shapes and bytes (np.array_equal is a Python function)
    return a.visible is b.visible or (
        a.visible.shape == b.visible.shape and a.visible.tobytes() == b.visible.tobytes()
    )
