"""The host: seats bound to the actors of one world, and each tick's frames.

One host exists for both ways of running (issue 43, item 1; STYLE.md's
Portal/Server split). ``underhall serve`` runs one for the whole dungeon
(:class:`~server.game.game.Game` extends it with the store: joins,
leaves and checkpoints); a cluster worker runs one for the levels it
leases (:class:`~server.cluster.worker.Worker` adds leases, fences and
hand-offs around it). What the host does is the same in both:

- seats ↔ actors: :attr:`Host.seats` by actor id, :attr:`Host.by_name` by
  lower-cased name; :meth:`Host.add_seat`, :meth:`Host.unseat`;
- the ``welcome`` (:meth:`Host.welcome`);
- command translation, ``look``, resync (:meth:`Host.command`,
  :meth:`Host.look`, :meth:`Host.resync`);
- level, global and private chat (:meth:`Host.chat`);
- the tick and its frame order (:meth:`Host.step`): one ``snap`` or ``delta``
  per player per tick, a snapshot first, those that answer a command before
  the others.

A seat's :attr:`Seat.session` is whatever the front links it by: a
connection's session in ``serve``, a :class:`~server.cluster.worker.Link`
(epoch and gateway) in a worker. The host never looks into it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from protocol.messages import ChatOut, Command, Info, ServerMessage, Welcome
from server.game.index import Carried, TickIndex
from server.game.views import LevelFrames, Member, PlayerView
from server.game.wire import describe_actor, to_command, welcome_message, welcome_tables
from server.game.worldrecord import WorldRecorder
from server.sim.actors import Actor, MapMemory, MovingState, memory_entry, moving_record_of
from server.sim.events import Event
from server.sim.world import World
from server.store import join_maps, map_pairs, pack_record, pack_value

SEND_BATCH = 64
"""Messages :meth:`Host.step` hands to its ``send`` at a time. Writing each
frame as soon as it was built brought command→effect p99 down by about
20 ms (2,000 crowded clients), but on loopback it cost the server about 5%
more CPU, in the kernel: with frames trickling out every ~20 µs the
receiving side went idle between them and each write woke it. Batches of
this many frames (about 0.6 ms of building) keep most of the gain."""

MEMORY_KEY = pack_value("memory")
"""The packed key under which a character record holds its map memory."""
ZLIB_TAIL = pack_value("zlib")
"""The packed last field of a map memory entry (its coding)."""


def look_in(world: World, actor_id: int, target_id: int) -> Info:
    """The ``info`` answer to player ``actor_id``'s ``look`` at actor
    ``target_id`` (seed 001's look command): found only if that actor is in
    the asker's view."""
    me = world.actors.get(actor_id)
    target = world.actors.get(target_id)
    if (
        me is None
        or target is None
        or not target.alive
        or target_id not in world.sees.get(actor_id, ())
    ):
        return Info(id=target_id, found=False, about={})
    return Info(id=target_id, found=True, about=describe_actor(target, me, world.content))


class MemoryPart:
    """One depth's map memory in a checkpoint's character records, as the
    record's packed ``str(depth)`` key and
    :func:`~server.sim.actors.memory_entry` value (:meth:`pairs`).

    The depth the player is on (:attr:`~server.sim.actors.MapMemory.live_depth`)
    is copied as it is when taken and compressed by the first call of
    :meth:`pairs` (:attr:`copied` is True). A depth put away is
    already compressed: the part holds the map memory's own bytes (shared,
    not copied) and joins them to the packed key and the entry's other
    fields on each call."""

    __slots__ = ("_depth", "_head", "_pairs", "_raw", "_shape", "_zipped", "copied")

    def __init__(self, depth: int, memory: MapMemory) -> None:
        self._depth = depth
        self._head = b""
        self._pairs: bytes | None = None
        self._raw = b""
        self._zipped = b""
        packed = memory.packed(depth)
        if packed is None:
            grid = memory[depth]
            self._shape: tuple[int, ...] = grid.shape
            self._raw = grid.tobytes()
            self.copied = True
        else:
            self._shape, self._zipped = packed
            whole = pack_value(str(depth)) + pack_value([list(self._shape), self._zipped, "zlib"])
            self._head = whole[: len(whole) - len(self._zipped) - len(ZLIB_TAIL)]
            self.copied = False

    def pairs(self) -> bytes:
        """The packed key and value (compressing the copy on the first call)."""
        if not self.copied:
            return self._head + self._zipped + ZLIB_TAIL
        if self._pairs is None:
            entry = memory_entry(self._shape, self._raw)
            self._pairs = pack_value(str(self._depth)) + pack_value(entry)
            self._raw = b""
        return self._pairs


@dataclass(slots=True)
class Seat:
    """One seated player: its name, token hash, actor, view and the front's
    link to it (``session``)."""

    name: str
    token_hash: str
    actor_id: int
    view: PlayerView
    session: Any  # mypyc: a compiled generic slotted dataclass does not import
    memory_parts: dict[int, MemoryPart] = field(default_factory=dict)
    """The character's map memory of each depth as taken for a checkpoint;
    a depth's part is dropped once a tick wrote cells into that depth's
    memory (gave the player ``seen_tiles`` there)."""
    memory_list: list[MemoryPart] | None = None
    """``memory_parts`` in depth order as the last checkpoint took them,
    shared read-only with that checkpoint's records (replaced, never changed
    in place); None once a part was dropped. Depths are never forgotten, so
    a list as long as the memory still names every depth."""
    steady_blob: bytes | None = None
    """The character's :meth:`~server.sim.actors.Actor.steady_record` as last
    packed for a checkpoint (the pairs of a msgpack map, no header); None
    once a tick may have changed it
    (:meth:`~server.game.index.TickIndex.steady_touched`)."""
    steady_count: int = 0
    """How many pairs ``steady_blob`` holds."""


@dataclass(slots=True)
class Checkpoint:
    """A checkpoint taken at ``tick`` whose records are being packed.

    Each seated character's record, as it was at the checkpoint's tick, is
    a msgpack map equal to ``pack_record(actor.to_record())`` at that tick.
    The tick takes only the :meth:`~server.sim.actors.Actor.moving_state`,
    the packed steady record and the memory parts; :meth:`compress` packs
    the rest over the ticks after. The characters are held in parallel
    lists (index ``i`` is one character) rather than an object and a tuple
    each: what a checkpoint keeps alive over those ticks is walked by every
    young collection meanwhile (:mod:`server.net.collector`), and at 4,000
    players per-character objects made the collections that followed a
    checkpoint the longest of all."""

    tick: int
    names: list[str] = field(default_factory=list)
    token_hashes: list[str] = field(default_factory=list)
    moving: list[MovingState] = field(default_factory=list)
    """Each character's moving state at the tick."""
    steady: list[bytes] = field(default_factory=list)
    """Each character's packed steady record (the pairs of a map, no header)."""
    steady_counts: list[int] = field(default_factory=list)
    """How many pairs each of ``steady`` holds."""
    memory: list[list[MemoryPart]] = field(default_factory=list)
    """Each character's map memory, a part per depth in depth order (lists
    shared read-only with :attr:`Seat.memory_list`)."""
    left: list[tuple[str, tuple[str, bytes, int]]] = field(default_factory=list)
    """Characters that left since the last checkpoint: name and their
    :attr:`~server.game.game.Game._left` entry as taken."""
    levels: list[tuple[int, bytes, int]] = field(default_factory=list)
    parts: list[MemoryPart] = field(default_factory=list)
    """The memory parts the records need compressed."""
    done: int = 0
    """How many of ``parts`` are compressed."""
    per_tick: int = 0
    """How many parts each tick compresses."""
    heads: list[bytes] = field(default_factory=list)
    """The packed header and every entry but the map memory of the first
    ``len(heads)`` characters' records."""
    heads_per_tick: int = 0
    """How many heads each tick packs."""
    needs: list[int] = field(default_factory=list)
    """For each character, how many of ``parts`` must be compressed before
    its whole record can be packed (the parts it brought come before that
    number; the list never decreases)."""
    blobs: list[bytes] = field(default_factory=list)
    """The whole packed records of the first ``len(blobs)`` characters."""

    def compress(self, count: int, heads: int = 0) -> bool:
        """Compress up to ``count`` more parts and pack up to ``heads`` more
        record heads, then the whole record of each character whose head and
        parts are done (so that the tick handing them to the writer only
        collects them); True once all parts are compressed and all records
        packed."""
        end = min(len(self.parts), self.done + count)
        for part in self.parts[self.done : end]:
            part.pairs()
        self.done = end
        packed = self.heads
        last = min(len(self.names), len(packed) + heads)
        for i in range(len(packed), last):
            moving = moving_record_of(self.moving[i])
            packed.append(
                join_maps(
                    len(moving) + self.steady_counts[i] + 1,
                    map_pairs(pack_record(moving)),
                    self.steady[i],
                    MEMORY_KEY,
                )
            )
        blobs, needs, memory = self.blobs, self.needs, self.memory
        i = len(blobs)
        while i < last and needs[i] <= end:
            parts = memory[i]
            blobs.append(packed[i] + join_maps(len(parts), *(p.pairs() for p in parts)))
            i += 1
        return end == len(self.parts) and len(blobs) == len(self.names)


class Host:
    """The seated players of one world, and its tick.

    Args:
        world: The world to run.
        tick_rate: Ticks per second (told to clients in ``welcome``).
        motd: Message of the day sent in ``welcome``.
    """

    def __init__(self, world: World, *, tick_rate: int = 10, motd: str = "") -> None:
        self.world = world
        self.tick_rate = tick_rate
        self.motd = motd
        self.seats: dict[int, Seat] = {}
        self.by_name: dict[str, Seat] = {}
        """Seats by lower-cased name (names are one character in any case)."""
        self._tables = welcome_tables(world.content)
        self._carried: Carried | None = None
        self.keep_index = False
        """Keep each tick's whole index in :attr:`last_index` (for tests that
        look into it); off, only what the next tick needs is kept, so the
        rest is freed with the tick's messages."""
        self.last_index: TickIndex | None = None
        self.recorder: WorldRecorder | None = None
        """If set, notes every join, leave, command and tick of the world
        (``serve --record-world``; :mod:`server.game.worldrecord`)."""

    # ----------------------------------------------------------- seats

    def add_seat(self, name: str, token_hash: str, actor_id: int, session: Any) -> Seat:
        """Seat the player of actor ``actor_id`` (already in the world) under
        ``name``, with a fresh view (its first frame is a snapshot)."""
        seat = Seat(name, token_hash, actor_id, PlayerView(actor_id), session)
        self.seats[actor_id] = seat
        self.by_name[name.lower()] = seat
        return seat

    def unseat(self, actor_id: int) -> tuple[Seat, dict[str, Any]]:
        """Take a player out of the seats and its actor out of the world.

        Returns:
            The seat and the character's record (:meth:`World.leave`).

        Raises:
            KeyError: No such seat.
        """
        seat = self.seats.pop(actor_id)
        key = seat.name.lower()
        if self.by_name.get(key) is seat:
            del self.by_name[key]
        if self.recorder is not None:
            self.recorder.left(actor_id)
        return seat, self.world.leave(actor_id)

    def join_world(
        self, name: str, class_key: str = "warrior", record: dict[str, Any] | None = None
    ) -> Actor:
        """:meth:`World.join <server.sim.world.World.join>`, noted by the
        :attr:`recorder` if there is one.

        Raises:
            KeyError, LookupError: as :meth:`World.join` does.
        """
        if self.recorder is not None:
            return self.recorder.join(self.world, name, class_key, record)
        return self.world.join(name, class_key, record)

    def reseat(self, seat: Seat, session: Any) -> None:
        """Link ``seat`` to a new session (a reconnect): its view starts
        afresh, so its next frame is a snapshot."""
        seat.session = session
        seat.view = PlayerView(seat.actor_id)

    def welcome(self, seat: Seat, token: str | None, resumed: bool) -> Welcome:
        """The ``welcome`` for ``seat`` (``token`` is told only to the player
        it was made for: None sends an empty one)."""
        return welcome_message(
            self._tables,
            actor_id=seat.actor_id,
            name=seat.name,
            token=token or "",
            resumed=resumed,
            tick=self.world.tick,
            tick_rate=self.tick_rate,
            motd=self.motd,
        )

    # ----------------------------------------------------------- what players ask

    def command(
        self,
        actor_id: int,
        seq: int,
        name: str,
        d: tuple[int, int] | None = None,
        *,
        item: str | None = None,
        at: tuple[int, int] | None = None,
        spell: str | None = None,
        opt: str | None = None,
    ) -> bool:
        """Queue a protocol command for the player.

        Returns:
            False when the player's queue was full (the command is refused
            with ``queue_full`` on the next tick).

        Raises:
            ValueError: The command and its keys do not form a valid command.
            KeyError: The actor is not in the world.
        """
        command = to_command(name, d, item=item, at=at, spell=spell, opt=opt)
        if self.recorder is not None:
            self.recorder.command(actor_id, seq, name, d, item, at, spell, opt)
        return self.world.submit(actor_id, command, seq)

    def carry_out(self, actor_id: int, msg: Command) -> bool:
        """Queue a ``cmd`` message for the player (:meth:`command` with its keys).

        Returns:
            False when the player's queue was full.

        Raises:
            ValueError: The command and its keys do not form a valid command.
            KeyError: The actor is not in the world.
        """
        return self.command(
            actor_id,
            msg.seq,
            msg.c._value_,  # the wire name (.value, an Enum property, costs 0.2 us)
            msg.d,
            item=msg.item,
            at=msg.at,
            spell=msg.spell,
            opt=msg.opt,
        )

    def look(self, actor_id: int, target_id: int) -> Info:
        """The ``info`` answer to a ``look`` (:func:`look_in`)."""
        return look_in(self.world, actor_id, target_id)

    def chat(
        self, actor_id: int, text: str, scope: str = "level", to: str | None = None
    ) -> tuple[list[int], ChatOut]:
        """Who hears ``text`` said by the player, and the one message they all get.

        Args:
            scope: ``"level"`` (seated players on the speaker's level) or
                ``"global"`` (every seated player); ignored when ``to`` is set.
            to: a name (any case): a private line to that player and back to
                the speaker. When nobody of that name is seated here, only
                the speaker gets a notice saying so.

        Returns:
            The recipients' actor ids (ascending) and the ``chat`` message.

        Raises:
            KeyError: The speaker is not seated.
        """
        seat = self.seats[actor_id]
        tick = self.world.tick
        if to is not None:
            target = self.by_name.get(to.lower())
            if target is None:
                return [actor_id], ChatOut(
                    sender="", text=f"nobody called {to} is playing", tick=tick
                )
            return (
                sorted({actor_id, target.actor_id}),
                ChatOut(sender=seat.name, text=text, tick=tick, scope="private", to=target.name),
            )
        if scope == "global":
            return sorted(self.seats), ChatOut(
                sender=seat.name, text=text, tick=tick, scope="global"
            )
        here = self.world.actors.get(actor_id)
        depth = here.depth if here is not None else None
        hearers = [
            a
            for a in sorted(self.seats)
            if (other := self.world.actors.get(a)) is not None and other.depth == depth
        ]
        return hearers, ChatOut(sender=seat.name, text=text, tick=tick, scope="level")

    def resync(self, actor_id: int) -> None:
        """Make the player's next message a full snapshot (after skipped deltas)."""
        seat = self.seats.get(actor_id)
        if seat is not None:
            seat.view.needs_snapshot = True

    # ----------------------------------------------------------- checkpoints

    def take_record(self, seat: Seat, pending: Checkpoint) -> None:
        """Add a seated character's record as of now to ``pending``, to be
        packed by :meth:`_Checkpoint.compress` into a msgpack map equal to
        ``pack_record(actor.to_record())`` at this tick.

        Only the :meth:`~server.sim.actors.Actor.moving_state` is taken now,
        and the steady record is packed again only when a tick may have
        changed it since the last checkpoint (else its bytes are reused). A
        depth's map memory that a tick wrote to since the last checkpoint is
        copied now, and added to ``pending.parts`` to be compressed over the
        next ticks; a compressed part is reused until the memory changes
        again. The depths put away (:class:`~server.sim.actors.MapMemory`)
        are compressed already: their parts hold the map memory's bytes."""
        actor = self.world.actors[seat.actor_id]
        memory = actor.memory
        listed = seat.memory_list
        if listed is None or len(listed) != len(memory):
            parts = seat.memory_parts
            live = memory.live_depth
            depths = memory.depths()
            for depth in depths:
                part = parts.get(depth)
                if part is None or (part.copied and depth != live):
                    # (a copy of a depth since put away: the map memory's own bytes instead)
                    part = parts[depth] = MemoryPart(depth, memory)
                    if part.copied:
                        pending.parts.append(part)
            listed = seat.memory_list = [parts[d] for d in depths]
        steady = seat.steady_blob
        if steady is None:
            record = actor.steady_record()
            steady = seat.steady_blob = map_pairs(pack_record(record))
            seat.steady_count = len(record)
        pending.names.append(seat.name)
        pending.token_hashes.append(seat.token_hash)
        pending.moving.append(actor.moving_state())
        pending.steady.append(steady)
        pending.steady_counts.append(seat.steady_count)
        pending.memory.append(listed)
        pending.needs.append(len(pending.parts))

    # ----------------------------------------------------------- the tick

    def step(
        self,
        skip: set[int] | frozenset[int] = frozenset(),
        send: Callable[[list[tuple[int, ServerMessage]]], object] | None = None,
        *,
        events: Callable[[list[Event]], list[Event]] | None = None,
        stepped: Callable[[], object] | None = None,
    ) -> dict[int, list[ServerMessage]]:
        """Run one tick; return the messages for each seated player: one
        ``snap`` or ``delta`` (with the tick's refused commands in ``rej``),
        or none when nothing changed for that player (protocol 3: one frame
        per player per tick).

        The players whose command was carried out or refused this tick (an
        ``ack`` or ``rej`` is due) come first, the others after them, so that
        a player who acted sees the effect as early in the tick as can be
        (issue 10: command to effect). The messages are the same in any order.
        The frames of a level's players are built together
        (:class:`~server.game.views.LevelFrames`: what they share is found
        once for the level), :data:`SEND_BATCH` players at a time.

        Args:
            skip: Players whose frames are not built this tick (a client that
                is behind, a player held back after a hand-off): their next
                message will be a snapshot.
            send: If given, called with ``[(actor_id, message), ...]`` each
                time :data:`SEND_BATCH` messages are built (and with the rest
                at the end of each of the two groups), so they can be written
                while the others are built; the returned dict is then empty.
            events: If given, the world's events of the tick pass through it
                before the views see them (a worker drops the joins and
                leaves that are moves between workers, and adds those heard
                from others).
            stepped: If given, called after the world stepped and before any
                frame is built (a worker hands off the players who left its
                levels then: they get no frame here).
        """
        world = self.world
        recorder = self.recorder
        happened = world.step() if recorder is None else recorder.step(world)
        if events is not None:
            happened = events(happened)
        index = TickIndex(world, happened, self._carried)
        self._carried = index.carried()
        if self.keep_index:
            self.last_index = index
        if stepped is not None:
            stepped()
        out: dict[int, list[ServerMessage]] = {}
        actors = world.actors
        seats = self.seats
        for actor_id in index.steady_touched(seats):
            seats[actor_id].steady_blob = None
        # Each group's players by level, in seat order: a level's frames are
        # built together (LevelFrames), SEND_BATCH at a time.
        first: dict[int, list[Member]] = {}
        later: dict[int, list[Member]] = {}
        on_level: dict[int, list[Member]] = {}
        rejections = index.rejections
        # One pass over every seat, so it is kept lean: whether an ack or a
        # rej is due, inline.
        for actor_id, seat in seats.items():
            actor = actors[actor_id]
            if actor.seen_tiles:  # written at the depth the player is on after the tick
                seat.memory_parts.pop(actor.depth, None)
                seat.memory_list = None
            view = seat.view
            if actor_id in skip:
                view.needs_snapshot = True
                continue
            depth = actor.depth
            group = first if actor.last_tag != view.ack or actor_id in rejections else later
            member = (actor_id, view, actor)
            members = group.get(depth)
            if members is None:
                members = group[depth] = []
            members.append(member)
            members = on_level.get(depth)
            if members is None:
                members = on_level[depth] = []
            members.append(member)
        levels = {depth: LevelFrames(index, depth, members) for depth, members in on_level.items()}
        for group in (first, later):
            batch: list[tuple[int, ServerMessage]] = []
            for depth, members in group.items():
                frames = levels[depth]
                for at in range(0, len(members), SEND_BATCH):
                    built = frames.build(members[at : at + SEND_BATCH])
                    if send is None:
                        for actor_id, msg in built:
                            out[actor_id] = [msg]
                        continue
                    batch += built
                    while len(batch) >= SEND_BATCH:
                        send(batch[:SEND_BATCH])
                        batch = batch[SEND_BATCH:]
            if batch and send is not None:
                send(batch)
        self.ticked()
        return out

    def ticked(self) -> None:
        """Called at the end of each :meth:`step`, after the frames: nothing
        here; ``serve``'s :class:`~server.game.game.Game` packs and takes
        its checkpoints then."""
