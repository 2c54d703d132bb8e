"""Per-player views: what each client knows, and the delta that brings it up to date.

A :class:`PlayerView` holds what its client was told (field of view, actors,
floor items, own state). Each tick the host builds the frames of a level's
players together (:class:`LevelFrames`): what can be found for all of them
at once is (the actors that came, left or changed in each view, the fields
of view packed for the wire, the floor items in every moved view), and each
player's one ``delta`` then holds only its differences, or nothing at all
when nothing changed. The work per player is bounded by the view window
(17×17 cells) and the actors in it, never by the level's size or the number
of players.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from protocol.fov import pack_cropped_fov
from protocol.messages import BACK_TICKS, Delta, Snapshot
from server.game.index import FloorGrid, TickIndex
from server.game.interest import ViewChanges
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
    view taken from the same cell (a row of its level's
    :class:`~server.sim.sight.FovCache`, handed out by
    :meth:`World._new_fovs`), so in a crowd the same bits go to many
    players. The arrays are kept beside their
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

    def pack_all(self, arrays: list[np.ndarray[Any, Any]]) -> None:
        """Pack the shared (read-only) ``arrays`` not packed yet, all at
        once (:func:`pack_windows`), so that :meth:`packed` finds them."""
        have = self.arrays
        todo: dict[int, np.ndarray[Any, Any]] = {}
        for visible in arrays:
            key = id(visible)
            if have.get(key) is not visible and not visible.flags.writeable:
                todo[key] = visible
        if not todo:
            return
        if len(have) + len(todo) > self.limit:
            have.clear()
            self.wire.clear()
        have.update(todo)
        self.wire.update(zip(todo, pack_windows(list(todo.values())), strict=True))

    @staticmethod
    def _placed(rel: list[Any], fov: FieldOfView) -> list[Any]:
        ox, oy, fw, fh, bits = rel
        if not fw:
            return [0, 0, 0, 0, b""]  # nothing in view
        return [fov.x0 + ox, fov.y0 + oy, fw, fh, bits]


def pack_windows(arrays: list[np.ndarray[Any, Any]]) -> list[list[Any]]:
    """:func:`protocol.fov.pack_cropped_fov` of each of ``arrays`` (``bool[h,
    w]`` windows), with numpy calls per shape rather than per window.

    The windows of a shape are stacked; the rows and columns in view give
    each one's crop, and the cropped cells of all of them, each run padded
    to whole bytes, are packed in one ``packbits``.

    Returns:
        For each array, ``[i0, j0, fw, fh, bits]``: the crop's corner in the
        window, its size and its bits (``[0, 0, 0, 0, b""]`` if nothing is
        in view).
    """
    out: list[list[Any]] = [[0, 0, 0, 0, b""]] * len(arrays)
    by_shape: dict[tuple[int, ...], list[int]] = {}
    for i, a in enumerate(arrays):
        by_shape.setdefault(a.shape, []).append(i)
    for (h, w), which in by_shape.items():
        if len(which) == 1:
            out[which[0]] = pack_cropped_fov(arrays[which[0]])
            continue
        stack: NDArray[np.bool_] = np.stack([arrays[i] for i in which])  # bool[K, h, w]
        rows: NDArray[np.bool_] = np.logical_or.reduce(stack, axis=2)
        cols: NDArray[np.bool_] = np.logical_or.reduce(stack, axis=1)
        seen: NDArray[np.bool_] = np.logical_or.reduce(rows, axis=1)
        j0 = rows.argmax(axis=1)
        j1 = np.where(seen, h - rows[:, ::-1].argmax(axis=1), j0)
        i0 = cols.argmax(axis=1)
        i1 = np.where(seen, w - cols[:, ::-1].argmax(axis=1), i0)
        fh, fw = j1 - j0, i1 - i0
        cells = fh * fw
        jj = np.arange(h)[None, :, None]
        ii = np.arange(w)[None, None, :]
        box = (
            (jj >= j0[:, None, None])
            & (jj < j1[:, None, None])
            & (ii >= i0[:, None, None])
            & (ii < i1[:, None, None])
        )
        flat = stack[box]  # each crop's cells, row by row, window after window
        nbytes = (cells + 7) >> 3
        ends = np.cumsum(nbytes)
        starts = ends - nbytes
        shift = np.repeat(starts * 8 - (np.cumsum(cells) - cells), cells)
        bits = np.zeros(int(ends[-1]) * 8, dtype=np.bool_)
        bits[np.arange(len(flat)) + shift] = flat
        packed = np.packbits(bits, bitorder="little").tobytes()
        for i, x, y, cw, ch, b, e in zip(
            which,
            i0.tolist(),
            j0.tolist(),
            fw.tolist(),
            fh.tolist(),
            starts.tolist(),
            ends.tolist(),
            strict=True,
        ):
            if cw:
                out[i] = [x, y, cw, ch, packed[b:e]]
    return out


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
    looked at only when the field of view moved (for the level's moved
    views at once: :func:`floor_changes`) or an item in it changed.
    Its frames are built by :class:`LevelFrames`.
    """

    __slots__ = (
        "ack",
        "actor_id",
        "depth",
        "fov",
        "ids",
        "ids_tick",
        "ids_whole",
        "kept",
        "me",
        "me_key",
        "needs_snapshot",
        "objs",
        "prune_at",
        "quiet",
        "sent_tick",
    )

    def __init__(self, actor_id: int) -> None:
        self.actor_id = actor_id
        self.needs_snapshot = True
        self.depth = 0
        self.ids: set[int] | frozenset[int] = _NOBODY
        self.objs: dict[tuple[int, int], str] = {}
        """The top floor items the client was told of (and not told gone),
        by cell. Every cell in the field of view last sent holds what the
        level holds there (a view that moves need only look at the cells
        with items, or that had some: :meth:`LevelFrames.floor_changes`)."""
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
        self.objs = dict(seen)
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

    @staticmethod
    def _packed_fov(actor: Actor) -> list[Any]:
        fov = actor.fov
        if fov is None or not actor.alive:
            return [0, 0, 0, 0, b""]
        return _FOV_WIRE.packed(fov)

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
                self._keep(ids, world.tick)  # the client keeps them (protocol 8)
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

    def _keep(self, rm_ids: list[int], tick: int) -> None:
        """Note that the actors ``rm_ids`` left the view at ``tick``: the
        client keeps their records (protocol 8)."""
        kept = self.kept
        for aid in rm_ids:
            kept[aid] = tick
        if tick >= self.prune_at:
            self.kept = {a: t for a, t in kept.items() if tick - t <= BACK_TICKS}
            self.prune_at = tick + BACK_TICKS

    def _rows(self, index: TickIndex, upd_ids: list[int]) -> list[list[Any]]:
        """The ``upd`` rows of ``upd_ids`` (ids increasing), the player's
        own with the "you" flag."""
        rows, me = index.upd_rows, self.actor_id
        upd = []
        for aid in upd_ids:
            row = rows[aid]
            if aid == me:
                row = [*row[:5], row[5] | FLAG_YOU, row[6]]
            upd.append(row)
        return upd

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
            if mine.get(pos, "") != key:
                changed += [pos[0], pos[1], key]
                if key:
                    mine[pos] = key
                else:
                    del mine[pos]
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


Frame = tuple[int, Snapshot | Delta]
"""A player's actor id and its message of the tick."""
Member = tuple[int, PlayerView, Actor]
"""A seated player of a level: its actor id, view and actor."""


class LevelFrames:
    """The tick's frames for the seated players of one level, built together.

    What the players of the level share is found once per level rather
    than once per player: the level's view changes
    (:meth:`TickIndex.view_changes`), every new field of view packed for
    the wire (:func:`pack_windows`, in one call for the level), who may
    have witnessed an event (:meth:`TickIndex.witnesses`) and whose ``me``
    may have changed beyond health, energy and food
    (:meth:`TickIndex.me_touched`). What is left per player is that
    player's own rows.

    Args:
        index: The tick's shared index.
        depth: The level.
        members: Every player of the level whose frame is built this tick
            (:meth:`build` then takes them in any groups).
    """

    __slots__ = ("_changes", "_looked_up", "depth", "floor", "index", "touched", "witnesses")

    def __init__(self, index: TickIndex, depth: int, members: list[Member]) -> None:
        self.index = index
        self.depth = depth
        self._changes: ViewChanges | None = None
        self._looked_up = False
        self.witnesses = index.witnesses(depth)
        self.touched = index.me_touched()
        # The fields of view sent this tick, packed together before any
        # player's frame looks its own up.
        windows = [
            actor.fov.visible
            for _, view, actor in members
            if actor.fov is not view.fov and actor.fov is not None
        ]
        if windows:
            _FOV_WIRE.pack_all(windows)
        self.floor: dict[int, list[Any]] = {}
        """By player, the ``objs`` of each player whose field of view moved
        (:meth:`floor_changes`); absent when there are none."""
        grid = index.floors.get(depth)
        if grid is not None and grid.ever.any():
            snapshot_for, all_changed = index.snapshot_for, index.all_changed
            moved = []
            for aid, view, actor in members:
                fov = actor.fov if actor.hp > 0 else None
                if (
                    fov is not None
                    and (fov is not view.fov or all_changed)
                    and not (view.needs_snapshot or aid in snapshot_for or view.depth != depth)
                ):
                    moved.append((aid, view, fov))
            if moved:
                self.floor = floor_changes(grid, moved)

    def changes(self) -> ViewChanges | None:
        """:meth:`TickIndex.view_changes` of the level, asked once."""
        if not self._looked_up:
            self._changes = self.index.view_changes(self.depth)
            self._looked_up = True
        return self._changes

    def build(self, members: list[Member]) -> list[Frame]:
        """This tick's one message for each of ``members`` (players on this
        level, among those it was made with), in their order: a snapshot
        when one is due (asked for, a level change, a respawn), else the
        delta, or nothing for a player whose view did not change; the
        tick's refused commands ride in ``rej``.

        Raises:
            KeyError: A member's actor is not in the world.
        """
        index = self.index
        world = index.world
        tick = world.tick
        sees = world.sees
        sees_whole = world.sees_whole
        refusals = index.rejections
        snapshot_for = index.snapshot_for
        all_changed = index.all_changed
        item_changed = self.depth in index.item_changes
        witnesses = self.witnesses
        touched = self.touched
        floor = self.floor
        out: list[Frame] = []
        for aid, view, actor in members:
            refused = refusals.get(aid)
            rej = rejections(refused, actor.last_tag) if refused else None
            if view.needs_snapshot or aid in snapshot_for or view.depth != actor.depth:
                out.append((aid, view.snapshot(index, actor, rej)))
                continue
            fov = actor.fov if actor.hp > 0 else None  # actor.alive, without the call
            fields: dict[str, Any] = {}
            if rej:
                fields["rej"] = rej
            if actor.last_tag != view.ack:  # as the step from the last one sent (protocol 10)
                fields["ack"] = actor.last_tag - view.ack
                view.ack = actor.last_tag
            if actor.seen_tiles:
                fields["tiles"] = actor.seen_tiles
            moved = fov is not view.fov
            if moved:
                if not _same_fov(fov, view.fov):
                    fields["fov"] = view._packed_fov(actor)
                view.fov = fov
            old = view.ids
            now = sees.get(aid) or _NOBODY  # as PlayerView._visible_ids gives it
            whole = sees_whole(aid)
            level = self.changes() if whole and view.ids_whole else None
            if level is not None and view.ids_tick == tick - 1:
                # The level's arrays hold this player's lists, sorted and
                # gap-coded (server.game.interest).
                rm = level.rm.get(aid)
                if rm is not None:
                    fields["rm"] = rm
                    view._keep(level.rm_ids[aid], tick)
                add = level.add.get(aid)
                if add is not None:
                    view._came(index, add, fields)
                st = level.st.get(aid)
                if st is not None:
                    fields["st"] = st
                mv = level.mv.get(aid)
                if mv is not None:
                    fields["mv"] = mv
                upd_ids = level.upd.get(aid)
                if upd_ids is not None:
                    fields["upd"] = view._rows(index, upd_ids)
            else:
                view._actor_sets(index, old, now, fields)
            view.ids = now
            view.ids_tick = tick
            view.ids_whole = whole
            if fov is not None:
                if moved or all_changed:
                    changed_objs = floor.get(aid)
                    if changed_objs:
                        fields["objs"] = changed_objs
                elif item_changed:
                    changed_objs = view._objs_changed(index, actor.depth, fov)
                    if changed_objs:
                        fields["objs"] = changed_objs
            if witnesses is None or aid in witnesses:
                ev = index.witnessed(aid, actor.depth, fov, now, old)
                if ev:
                    fields["ev"] = ev
            view._me_delta(actor, world, fields, touched is None or aid in touched)
            if not fields:
                continue
            implied = tick == view.sent_tick + 1  # protocol 9: the client counts on
            view.sent_tick = tick
            out.append((aid, Delta(tick=None if implied else tick, **fields)))
        return out


def floor_changes(
    grid: FloorGrid, moved: list[tuple[int, PlayerView, FieldOfView]]
) -> dict[int, list[Any]]:
    """The ``objs`` of every player in ``moved`` (actor id, view, its new
    field of view) whose view of the floor changed, found together: each
    cell in view that holds an item, or held one (:attr:`FloorGrid.ever`),
    and whose top item differs from what the client was told, as a flat
    ``[x, y, key, ...]`` list in cell order (``""``: nothing there now).
    The views' :attr:`PlayerView.objs` are brought up to date.

    The windows are stacked (``bool[M, 17, 17]``, zero beyond a cropped
    window) and laid over the grid's cells at once; only the cells found
    in view that ever held an item are compared, one by one, with what each
    client knows. Cells whose items never changed in a view that stayed
    need no look: the last message left every cell in view as it is.
    """
    count = len(moved)
    size = max(max(fov.visible.shape) for _, _, fov in moved)
    windows = np.zeros((count, size, size), dtype=np.bool_)
    by_shape: dict[tuple[int, ...], list[int]] = {}
    for i, (_, _, fov) in enumerate(moved):
        by_shape.setdefault(fov.visible.shape, []).append(i)
    for (h, w), which in by_shape.items():
        windows[which, :h, :w] = np.stack([moved[i][2].visible for i in which])
    x0 = np.fromiter((fov.x0 for _, _, fov in moved), np.intp, count)
    y0 = np.fromiter((fov.y0 for _, _, fov in moved), np.intp, count)
    height, width = grid.ever.shape
    span = np.arange(size)
    rows = np.minimum(y0[:, None] + span, height - 1)  # beyond the level: never in view
    cols = np.minimum(x0[:, None] + span, width - 1)
    seen = grid.ever[rows[:, :, None], cols[:, None, :]]
    seen &= windows
    who, dy, dx = np.nonzero(seen)
    if not who.size:
        return {}
    xs = x0[who] + dx
    ys = y0[who] + dy
    codes = grid.codes[ys, xs].tolist()
    keys = grid.keys
    out: dict[int, list[Any]] = {}
    changes: list[tuple[int, int, str]] = []
    last = -1
    for m, x, y, code in zip(who.tolist(), xs.tolist(), ys.tolist(), codes, strict=True):
        if m != last:
            if changes:
                _told(moved[last], changes, out)
                changes = []
            last = m
            known = moved[m][1].objs
        key = keys[code]
        if known.get((x, y), "") != key:
            changes.append((x, y, key))
    if changes:
        _told(moved[last], changes, out)
    return out


def _told(
    member: tuple[int, PlayerView, FieldOfView],
    changes: list[tuple[int, int, str]],
    out: dict[int, list[Any]],
) -> None:
    """Note ``changes`` (cells of one player's view, ``(x, y, key)``) as
    told: the player's ``objs`` in cell order, and its view's
    :attr:`PlayerView.objs`."""
    aid, view, _ = member
    known = view.objs
    flat: list[Any] = []
    for x, y, key in sorted(changes):
        flat += (x, y, key)
        if key:
            known[(x, y)] = key
        else:
            del known[(x, y)]
    out[aid] = flat
