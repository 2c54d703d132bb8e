"""What all the views of one tick share, computed once per tick.

A crowd makes the naive way quadratic: 200 players who all see each other
would each recompute 200 actor states, scan every item and every event of
the level. :class:`TickIndex` computes each actor's wire state once, and
buckets items and events into ``BUCKET × BUCKET`` squares so a view reads
only the (at most four) buckets its window overlaps.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Collection, Container, Iterable, Iterator
from typing import Any

import numpy as np

from protocol.messages import BACK_TICKS, STEP_CODES
from server.game.interest import ChangedActors, ViewChanges
from server.game.wire import (
    actor_record,
    event_to_wire,
    kind_codes,
    span_to_wire,
    wire_kind,
    wire_states,
)
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
PRESENCE_PER_TICK = 8
"""At most this many join and leave notices reach a player per tick (the
first ones in tick order): a burst of arrivals, such as everyone coming back
after a restart, would otherwise send every player hundreds of names per
tick, a cost that grows with the square of the players."""
Witnessed = tuple[int, list[Any]]
"""An event's position in the tick's order, and its wire form."""


NO_ITEMS: dict[tuple[int, int], str] = {}
"""An empty bucket of :meth:`TickIndex.item_buckets` (read-only)."""


def bucket_of(pos: tuple[int, int]) -> tuple[int, int]:
    """The ``(x // BUCKET, y // BUCKET)`` square of cell ``pos = (x, y)``."""
    return pos[0] // BUCKET, pos[1] // BUCKET


Floor = dict[tuple[int, int], dict[tuple[int, int], str]]
"""Floor items by bucket, ``{(x // BUCKET, y // BUCKET): {(x, y): key}}``,
as :meth:`TickIndex.item_buckets` gives a level's."""


def put_item(floor: Floor, pos: tuple[int, int], key: str) -> None:
    """Note item ``key`` on top at cell ``pos`` of ``floor``."""
    square = bucket_of(pos)
    items = floor.get(square)
    if items is None:
        items = floor[square] = {}
    items[pos] = key


def buckets_in_window(fov: FieldOfView) -> Iterator[tuple[int, int]]:
    """The ``(x // BUCKET, y // BUCKET)`` squares that the window of ``fov``
    overlaps (one to four)."""
    h, w = fov.visible.shape
    for by in range(fov.y0 // BUCKET, (fov.y0 + h - 1) // BUCKET + 1):
        for bx in range(fov.x0 // BUCKET, (fov.x0 + w - 1) // BUCKET + 1):
            yield bx, by


class FloorGrid:
    """A level's top floor items as a grid of codes, for every player's
    field of view at once (:class:`~server.game.views.LevelFrames`).

    Args:
        shape: The level's ``(H, W)``.
        tops: Its top item by cell now.
    """

    __slots__ = ("code_of", "codes", "ever", "keys")

    def __init__(self, shape: tuple[int, ...], tops: dict[tuple[int, int], str]) -> None:
        self.codes = np.zeros(shape, dtype=np.int32)
        """``int32[H, W]``, indexed ``[y, x]``: the top item's code
        (:attr:`keys`), 0 where there is none."""
        self.ever = np.zeros(shape, dtype=np.bool_)
        """``bool[H, W]``: True where an item lies, or lay since the grid was
        made (a client that saw it there is told it went). A player knows
        an item only where this is True: a grid lives as long as its level
        has players, and a player who comes to the level gets a snapshot."""
        self.keys: list[str] = [""]
        """Item keys by code."""
        self.code_of: dict[str, int] = {"": 0}
        self.note(tops, tops)

    def note(self, cells: Iterable[tuple[int, int]], tops: dict[tuple[int, int], str]) -> None:
        """Write ``cells``' top items as ``tops`` now has them."""
        codes, ever, code_of = self.codes, self.ever, self.code_of
        for x, y in cells:
            key = tops.get((x, y), "")
            code = code_of.get(key)
            if code is None:
                code = code_of[key] = len(self.keys)
                self.keys.append(key)
            codes[y, x] = code
            ever[y, x] = True


class Carried:
    """What the next tick's :class:`TickIndex` reads of this one: the wire
    states, the ``looked`` ticks and the floor's top items.

    A game keeps this between ticks instead of the whole index, so that the
    tick's other containers (events by viewer, rejections, records, rows)
    are freed as soon as its messages are written. What a tick leaves alive
    is what the next young collection must walk (see
    :mod:`server.net.collector`): at 1,000 crowded players, keeping the whole
    index left 4,400 new containers alive after each tick, and this 3,100
    (2,300 once unchanged states keep their old tuples).
    """

    def __init__(
        self,
        states: dict[int, ActorState],
        looked: dict[int, int],
        tops: dict[int, dict[tuple[int, int], str]],
        floors: dict[int, FloorGrid] | None = None,
    ) -> None:
        self.states = states
        self.looked = looked
        self.tops = tops
        self.floors: dict[int, FloorGrid] = {} if floors is None else floors
        """The levels' :class:`FloorGrid`, brought up to date by the next
        tick's index."""


class TickIndex:
    """The tick's events, sorted for the views, and shared lookups.

    Besides each living actor's wire state it records what changed since
    the ``previous`` tick's index: the actors whose state or place changed
    (:attr:`changed`) and the cells whose top floor item changed
    (:attr:`item_changes`), so a view touches only what it sees *and* what
    changed (issue 10: per-player work proportional to change).

    Args:
        world: The world just after :meth:`World.step`.
        events: What that step returned.
        previous: What the tick before's index carried over
            (:meth:`carried`), or None (everything changed).
    """

    def __init__(self, world: World, events: list[Event], previous: Carried | None = None) -> None:
        self.world = world
        self.rejections: dict[int, list[Rejected]] = defaultdict(list)
        self.snapshot_for: set[int] = set()
        self.shared: list[tuple[int, Joined | Left]] = []
        self.involving: dict[int, list[Witnessed]] = defaultdict(list)
        self._steady: set[int] = set()
        """Actors named by one of the tick's events other than an attack
        (:meth:`steady_touched`)."""
        self._placed: dict[int, list[tuple[int, int, int, list[Any]]]] = defaultdict(list)
        """Per depth, the tick's events seen by whoever sees their cell:
        ``(x, y, order, wire)``."""
        self._items: dict[int, Floor] = {}
        """Per depth, :attr:`tops` by bucket (:meth:`item_buckets`), built when first asked."""
        self._spans: dict[int, list[tuple[int, RayFired | Flew, int, int, int, int]]] = defaultdict(
            list
        )
        """Per depth, the tick's rays and flights with their order and the
        bounding box of their cells ``(x_min, y_min, x_max, y_max)``."""
        self._names: dict[int, frozenset[int]] = {}
        """By order, the actor ids that each event other than a ray, a flight,
        a join or a leave names (:meth:`witnessed`'s quick test)."""
        for order, event in enumerate(events):
            if isinstance(event, Rejected):
                self.rejections[event.actor].append(event)
                continue
            if isinstance(event, (Joined, Left)):
                self.shared.append((order, event))
                continue
            if isinstance(event, (RayFired, Flew)):
                if event.cells:
                    xs = [c[0] for c in event.cells]
                    ys = [c[1] for c in event.cells]
                    box = (min(xs), min(ys), max(xs), max(ys))
                else:
                    box = (0, 0, -1, -1)  # x_max -1: left of every window (x0 >= 0)
                self._spans[event.depth].append((order, event, *box))
                continue
            wire = event_to_wire(event)
            if wire is None:
                continue
            if isinstance(event, PRIVATE):
                self._names[order] = _named(wire)
                self.involving[event.actor].append((order, wire))
                self._steady.add(event.actor)
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
            self._names[order] = _named(wire)
            for aid in involved:
                self.involving[aid].append((order, wire))
            if not isinstance(event, Attacked):
                self._steady.update(involved)
            self._placed[event.depth].append((event.x, event.y, order, wire))

        self._seen: dict[int, list[tuple[int, list[Any]]]] = defaultdict(list)
        """Per player, the placed events whose cell it sees, in tick order:
        found for all players of a level at once (:meth:`World.cell_viewers`),
        so a player who saw none of them costs nothing here."""
        for depth, placed in self._placed.items():
            cols = np.fromiter((p[0] for p in placed), np.intp, len(placed))
            rows = np.fromiter((p[1] for p in placed), np.intp, len(placed))
            viewers, seen_cells = world.cell_viewers(depth, cols, rows)
            seen = self._seen
            for pid, i in zip(viewers.tolist(), seen_cells.tolist(), strict=True):
                _, _, order, wire = placed[i]
                seen[pid].append((order, wire))
        self._shared_orders = [order for order, _ in self.shared]
        self._shared_wires: list[list[Any]] = [
            ["join" if isinstance(e, Joined) else "leave", e.name] for _, e in self.shared
        ]
        """Joins and leaves as every player is told of them: built once per
        tick, not once per player (a burst of joins into a crowd would cost
        joins × players Python steps); they name no actor id, so no player's
        copy needs anonymising."""
        self._shared_own: dict[int, list[int]] = defaultdict(list)
        """Positions in :attr:`shared` of each actor's own join or leave (not told to it)."""
        for i, (_, e) in enumerate(self.shared):
            self._shared_own[e.actor].append(i)

        players_on = world.players_on
        active = [d for d in world.levels if players_on(d) > 0]
        self.states: dict[int, ActorState] = wire_states(world.actors.values(), set(active))
        """Wire state of every living actor on a level with players."""
        states = self.states
        self._kinds = kind_codes(world.content)
        self.records: dict[int, list[Any]] = {}
        """Actor records (``add``) built so far this tick, by id, without the
        "you" flag: each is built once however many players see it."""
        self.tops: dict[int, dict[tuple[int, int], str]] = {
            d: {pos: pile[-1].key for pos, pile in world.levels[d].items.items() if pile}
            for d in active
        }
        """Top floor item by cell, per level with players."""
        self.upd_rows: dict[int, list[Any]] = {}
        """The ``upd`` row ``[id, x, y, hp, max_hp, flags, sts]`` (no "you"
        flag) of every actor in :attr:`changed` but those in :attr:`steps`
        and :attr:`moves`,
        built once for all viewers."""
        self.steps: dict[int, int] = {}
        """The direction code (:data:`~protocol.messages.STEP_DIRECTIONS`)
        of every actor in :attr:`changed` whose position alone changed since
        the previous tick, by one cell (an ``st`` entry: protocol 7)."""
        self.moves: dict[int, tuple[int, int]] = {}
        """``(x, y)`` of every actor in :attr:`changed` whose position alone
        changed since the previous tick, by more than one cell (an ``mv``
        entry: protocol 4)."""
        self.all_changed = previous is None
        """True on the first tick: every view must look at everything."""
        self.changed: set[int] = set()
        """Ids of the actors whose wire state differs from the previous
        tick's (new ones included)."""
        self.item_changes: dict[int, list[tuple[int, int]]] = {}
        """Per depth, the cells whose top floor item appeared, changed or
        went since the previous tick."""
        self._views: dict[int, ViewChanges | None] = {}
        """Per depth, :meth:`view_changes`, made when first asked."""
        self._changed_actors: ChangedActors | None = None
        tick = world.tick
        self.floors: dict[int, FloorGrid] = {}
        """Per level with players, its :class:`FloorGrid` as of this tick."""
        for depth in active:
            grid = None if previous is None else previous.floors.get(depth)
            level = world.levels[depth]
            if grid is None or grid.codes.shape != level.terrain.shape:
                self.floors[depth] = FloorGrid(level.terrain.shape, self.tops[depth])
            else:
                self.floors[depth] = grid  # brought up to date below
        self.looked: dict[int, int] = {} if previous is None else previous.looked
        """By id, the last tick in which each living actor of a level with
        players had its health, flags or statuses change, or appeared (its
        id in :attr:`upd_rows`): a view sends an actor that comes back into
        view as ``back`` only if this is before the tick it left, so that
        the client's kept record is current but for the cell (protocol 8).
        One dict of ints, carried from tick to tick; the ids no longer in
        :attr:`states` are dropped every
        :data:`~protocol.messages.BACK_TICKS` ticks (one that comes back is
        in :attr:`upd_rows` again)."""
        if previous is None:
            self.upd_rows = {aid: [aid, *state] for aid, state in states.items()}
            self.changed = set(states)
            self.looked.update(dict.fromkeys(states, tick))
            return
        before = previous.states
        upd_rows, steps, moves = self.upd_rows, self.steps, self.moves
        code = STEP_CODES.get
        changed_ids: list[int] = []
        # The states as Python objects (Any): compiled code would otherwise
        # unpack each tuple and box a new one when storing it back.
        now_any: dict[int, Any] = states
        before_any: dict[int, Any] = before
        for aid, state in now_any.items():
            was = before_any.get(aid)
            if was is not None and was == state:
                # The tuple the last tick made, not this tick's equal one: it
                # is older than the collector's last look, so it is not
                # walked again, and this tick's is freed now.
                now_any[aid] = was
            else:
                changed_ids.append(aid)
        for aid in changed_ids:
            state, old = states[aid], before.get(aid)
            if old is not None and old[2:] == state[2:]:
                x, y = state[0], state[1]
                step = code((x - old[0], y - old[1]))
                if step is None:
                    moves[aid] = (x, y)
                else:
                    steps[aid] = step
            else:
                upd_rows[aid] = [aid, *state]
        self.changed = upd_rows.keys() | steps.keys() | moves.keys()
        looked = self.looked
        for aid in upd_rows:
            looked[aid] = tick
        if tick % BACK_TICKS == 0:
            for aid in [aid for aid in looked if aid not in states]:
                del looked[aid]
        for depth, tops in self.tops.items():
            old_tops = previous.tops.get(depth, {})
            if tops == old_tops:
                continue
            cells = [pos for pos in tops.keys() ^ old_tops.keys()]
            cells += [pos for pos, key in tops.items() if pos in old_tops and old_tops[pos] != key]
            if cells:
                self.item_changes[depth] = sorted(cells)
                if depth in previous.floors:  # (a new grid was made from this tick's items)
                    self.floors[depth].note(cells, tops)

    def view_changes(self, depth: int) -> ViewChanges | None:
        """What changed in the view of every player of ``depth`` whose
        visible set is whole (:mod:`server.game.interest`), made at the
        first call for the level; None on the first tick (everything
        changed) or when no player there has a field of view."""
        if depth in self._views:
            return self._views[depth]
        found = None
        sight = None if self.all_changed else self.world.visible_pairs(depth)
        if sight is not None:
            changed = self._changed_actors
            if changed is None:
                changed = self._changed_actors = ChangedActors(
                    self.steps, self.moves, list(self.upd_rows)
                )
            found = ViewChanges(*sight, changed)
        self._views[depth] = found
        return found

    def carried(self) -> Carried:
        """What the next tick's index needs of this one."""
        return Carried(self.states, self.looked, self.tops, self.floors)

    def may_touch_me(self, actor_id: int) -> bool:
        """Whether the player's ``me`` fields other than position, health,
        energy and food may have changed this tick: on the first tick, when
        the world says so (:attr:`World.touched`: a command other than a
        step, a status given or changed, a round's upkeep of its statuses),
        or when an event other than a melee attack names it (a harm, xp, an
        item...).
        An attack alone changes health and energy on either side; a status it
        gives is in :attr:`World.touched`, and a death, experience or a
        shield's burn come with events of their own (as for
        :meth:`steady_touched`)."""
        return self.all_changed or actor_id in self.world.touched or actor_id in self._steady

    def me_touched(self) -> Container[int] | None:
        """The players for whom :meth:`may_touch_me` is True, for all of
        them at once, or None when it is True for every player (the first
        tick)."""
        if self.all_changed:
            return None
        return self.world.touched | self._steady

    def steady_touched(self, seated: Collection[int]) -> list[int]:
        """The ids of ``seated`` whose steady record
        (:meth:`~server.sim.actors.Actor.steady_record`: pack, equipment,
        level, scores, spells, skills) may have changed this tick: all of
        them on the first tick, else those that carried out a command other
        than a step (:attr:`World.commanded`) or that an event other than a
        melee attack names. An attack changes only health, energy and
        statuses (the moving record) on either side; what may follow it
        comes with events of its own: a death, experience and a level, a
        shield's burn, a harm's rusting (seeds 001-003 as
        :mod:`server.sim.fighting` and :mod:`server.sim.harm` apply them).
        Found from those few ids rather than asked of each seat."""
        if self.all_changed:
            return list(seated)
        return [a for a in self.world.commanded | self._steady if a in seated]

    def record(self, aid: int) -> list[Any]:
        """The ``add`` record of living actor ``aid`` (no "you" flag), built
        at most once per tick."""
        rec = self.records.get(aid)
        if rec is None:
            actor = self.world.actors[aid]
            state = self.states.get(aid)
            if state is None:  # (every living actor of a level with players has one)
                rec = actor_record(actor, -1, self.world.content)
            else:  # the record's last six fields are the wire state's
                rec = [aid, self._kinds[wire_kind(actor, self.world.content)], actor.name, *state]
            self.records[aid] = rec
        return rec

    def item_buckets(self, depth: int) -> Floor:
        """The top floor items of ``depth`` (:attr:`tops`) as
        ``{(x // BUCKET, y // BUCKET): {(x, y): key}}``, built once per tick
        and level; read-only. A bucket without items is absent."""
        buckets = self._items.get(depth)
        if buckets is not None:
            return buckets
        buckets = {}
        for pos, item in self.tops.get(depth, {}).items():
            put_item(buckets, pos, item)
        self._items[depth] = buckets
        return buckets

    def items_in_view(self, depth: int, fov: FieldOfView) -> dict[tuple[int, int], str]:
        """The top item of every cell in view that has one."""
        buckets = self.item_buckets(depth)
        out: dict[tuple[int, int], str] = {}
        for key in buckets_in_window(fov):
            for (x, y), item in buckets.get(key, NO_ITEMS).items():
                if fov.contains(x, y):
                    out[(x, y)] = item
        return out

    def may_witness(self, actor_id: int, depth: int) -> bool:
        """False only if :meth:`witnessed` is sure to be empty for this player."""
        return bool(
            self.shared
            or actor_id in self.involving
            or depth in self._spans
            or actor_id in self._seen
        )

    def witnesses(self, depth: int) -> Container[int] | None:
        """The players of ``depth`` for whom :meth:`witnessed` may be
        non-empty (:meth:`may_witness` for the whole level at once), or None
        when that is every player there."""
        if self.shared or depth in self._spans:
            return None
        return self.involving.keys() | self._seen.keys()

    def witnessed(
        self,
        actor_id: int,
        depth: int,
        fov: FieldOfView | None,
        now: set[int] | frozenset[int],
        before: set[int] | frozenset[int] = frozenset(),
    ) -> list[list[Any]]:
        """Wire forms of the events a player saw or took part in, in tick order.

        An event never names an actor the player was not sent (issue 11):
        only the player itself and the actors in ``now`` or ``before`` are
        named, every other actor id is replaced by nil. An event naming only
        actors in ``now`` (the usual case) is told as it is, unchecked id by id.

        Args:
            actor_id: The viewer.
            depth: Its level.
            fov: Its field of view, or None (dead).
            now: Ids of the actors in its view after this tick.
            before: Ids of those in its view before this tick (a snapshot
                has none).
        """

        def known(aid: int) -> bool:
            return aid == actor_id or aid in now or aid in before

        found: dict[int, list[Any]] = dict(self.involving.get(actor_id, ()))
        spans = self._spans.get(depth, ())
        if spans and fov is not None:  # the window, read only when there are rays or flights
            h, w = fov.visible.shape
            x0, y0 = fov.x0, fov.y0
            x1, y1 = x0 + w - 1, y0 + h - 1
        for order, span, bx0, by0, bx1, by1 in spans:
            concerned = self._concerns(span, actor_id)
            if not concerned and (fov is None or bx1 < x0 or bx0 > x1 or by1 < y0 or by0 > y1):
                continue  # none of its cells in the window: nothing to tell
            wire = span_to_wire(span, fov.contains if fov is not None else _nowhere, actor_id)
            if wire[3] or concerned:
                found[order] = wire
        if fov is not None:
            for order, wire in self._seen.get(actor_id, ()):
                if order not in found:
                    found[order] = wire
        # An event is told as it is when it names only actors in view now,
        # else with the ids the viewer does not know made nil. The test is
        # written out in both loops below: a helper call per event cost 0.3 µs
        # of a 2.5 µs call.
        names = self._names
        if not self.shared:
            out: list[list[Any]] = []
            for o in sorted(found):
                wire = found[o]
                named = names.get(o)
                out.append(wire if named is not None and named <= now else anonymise(wire, known))
            return out
        orders, wires = self._shared_orders, self._shared_wires
        own = self._shared_own.get(actor_id)
        if own:  # its own join (or leave) is not told to the player itself
            first = PRESENCE_PER_TICK + len(own)
            keep = [i for i in range(min(first, len(orders))) if i not in own]
            keep = keep[:PRESENCE_PER_TICK]
            orders = [orders[i] for i in keep]
            wires = [wires[i] for i in keep]
        else:
            orders, wires = orders[:PRESENCE_PER_TICK], wires[:PRESENCE_PER_TICK]
        # Merge the few events of this player into the tick's joins and
        # leaves by order; the shared runs between them are copied as slices.
        out = []
        at = 0
        for o in sorted(found):
            cut = bisect_left(orders, o, at)
            out += wires[at:cut]
            wire = found[o]
            named = names.get(o)
            out.append(wire if named is not None and named <= now else anonymise(wire, known))
            at = cut
        out += wires[at:]
        return out

    @staticmethod
    def _concerns(span: RayFired | Flew, actor_id: int) -> bool:
        """Whether the player ``actor_id`` fired the ray or was hit by it."""
        if isinstance(span, Flew):
            return False
        return span.source == actor_id or any(hit[0] == actor_id for hit in span.hits)


ACTOR_FIELDS: dict[str, tuple[int, ...]] = {
    "atk": (1, 2),
    "die": (1, 2),
    "door": (1,),
    "pick": (1,),
    "wake": (1,),
    "flee": (1,),
    "lvl": (1,),
    "stairs": (1,),
    "respawn": (1,),
    "xp": (1,),
    "drop": (1,),
    "use": (1,),
    "throw": (1,),
    "harm": (1, 2),
    "boom": (1,),
    "status": (1,),
    "poly": (1, 2),
    "cast": (1,),
    "ray": (1,),
}
"""Positions of actor ids in each event's wire list (docs/protocol.md); a
``ray``'s hits (index 5) are ``[id, reflected]`` pairs as well."""


def _named(wire: list[Any]) -> frozenset[int]:
    """The actor ids an event's wire form names (not a ray's hits)."""
    return frozenset(wire[i] for i in ACTOR_FIELDS.get(wire[0], ()) if wire[i] is not None)


def anonymise(wire: list[Any], known: Callable[[int], bool]) -> list[Any]:
    """``wire`` with every actor id that ``known`` rejects replaced by nil.

    Returns ``wire`` itself when nothing is replaced (the shared list must
    not be changed), else a copy.
    """
    fields = ACTOR_FIELDS.get(wire[0])
    if fields is None:
        return wire
    out: list[Any] | None = None
    for i in fields:
        aid = wire[i]
        if aid is not None and not known(aid):
            if out is None:
                out = list(wire)
            out[i] = None
    if wire[0] == "ray" and any(not known(h[0]) for h in wire[5] if h[0] is not None):
        if out is None:
            out = list(wire)
        out[5] = [[h[0] if h[0] is None or known(h[0]) else None, h[1]] for h in wire[5]]
    return wire if out is None else out


def _nowhere(x: int, y: int) -> bool:
    return False
