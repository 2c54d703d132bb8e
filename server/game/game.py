"""The game: sessions of connected players bound to actors of one world.

This layer knows that a player connected, under which name and token, not how
(STYLE.md: the Portal/Server boundary). It turns protocol commands into
simulation commands, runs the world's ticks, cuts each tick down to one
message list per player, and saves characters in the :class:`Store`.

Saving (issue 11, items 2 and 3): every ``save_interval_s`` seconds the tick
takes a *checkpoint*: the record of every seated character, of every
character that left since the last one, and of every visited level, all as
they are at that one tick, handed to a :class:`StoreWriter` thread that
writes the changed ones in one transaction. (At that tick only the values
are taken: the map memory that changed is copied, the fast-changing part
of each record is kept as a tuple. The compressing and packing are done
over the next few ticks, :data:`CHECKPOINT_SPREAD_TICKS`, so no tick
carries all of it; the checkpoint goes to the writer after that.) A
character is therefore never saved with a pack that disagrees with the saved floors (an item picked up
is in the pack or on the floor, never both), and a crash loses at most one
interval of play (and those few ticks). A character that left is held in
memory until its checkpoint is written, so coming back at once resumes it
as it left.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from protocol.messages import ChatOut, Info, ServerMessage, Welcome
from server.game.bans import BanList
from server.game.hooks import GameHooks
from server.game.index import Carried, TickIndex
from server.game.views import PlayerView
from server.game.wire import describe_actor, to_command, welcome_message, welcome_tables
from server.sim.actors import Actor, MovingState, memory_entry, moving_record_of
from server.sim.world import World
from server.store import Store, hash_token, join_maps, map_pairs, pack_record, pack_value
from server.store.base import unpack_record
from server.store.writer import StoreWriter

SAVE_INTERVAL_S = 3.0
"""Default seconds of play between two checkpoints (at most this much is lost
to a crash, plus the time the write takes)."""
MEMORY_KEY = pack_value("memory")
"""The packed key under which a character record holds its map memory."""
CHECKPOINT_SPREAD_TICKS = 5
"""A checkpoint's map memory is compressed and its records packed over the
ticks after it, a slice each tick, so that no tick carries it all: over
this many ticks (fewer when checkpoints come closer together). The
checkpoint goes to the writer when that is done, so a crash loses at most
one interval plus these ticks."""
SEND_BATCH = 64
"""Messages :meth:`Game.step` hands to its ``send`` at a time. Writing each
frame as soon as it was built brought command→effect p99 down by about
20 ms (2,000 crowded clients), but on loopback it cost the server about 5%
more CPU, in the kernel: with frames trickling out every ~20 µs the
receiving side went idle between them and each write woke it. Batches of
this many frames (about 0.6 ms of building) keep most of the gain."""
SHUTDOWN_FLUSH_S = 30.0
"""How long :meth:`Game.save_all` waits for the database."""


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


NEW_CHARS_LIMITED = (
    "too many new characters from your address lately; "
    "try again later or resume a character with its token"
)
"""The ``limited`` refusal's text for a join over the new-characters cap."""


class GameError(Exception):
    """A join refused by the game; ``code`` is a protocol error code."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


class _MemoryPart:
    """One depth's map memory in a checkpoint's character records: a copy of
    the grid's bytes as they were when taken, compressed into the record's
    packed ``str(depth)`` key and :func:`~server.sim.actors.memory_entry`
    value by the first call of :meth:`pairs`."""

    __slots__ = ("_depth", "_pairs", "_raw", "_shape")

    def __init__(self, depth: int, grid: NDArray[np.uint8]) -> None:
        self._depth = depth
        self._shape: tuple[int, ...] = grid.shape
        self._raw = grid.tobytes()
        self._pairs: bytes | None = None

    def pairs(self) -> bytes:
        """The packed key and value (compressing the copy on the first call)."""
        if self._pairs is None:
            entry = memory_entry(self._shape, self._raw)
            self._pairs = pack_value(str(self._depth)) + pack_value(entry)
            self._raw = b""
        return self._pairs


@dataclass(slots=True)
class _Checkpoint:
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
    memory: list[list[_MemoryPart]] = field(default_factory=list)
    """Each character's map memory, a part per depth in depth order (lists
    shared read-only with :attr:`Seat.memory_list`)."""
    left: list[tuple[str, tuple[str, bytes, int]]] = field(default_factory=list)
    """Characters that left since the last checkpoint: name and their
    :attr:`Game._left` entry as taken."""
    levels: list[tuple[int, bytes, int]] = field(default_factory=list)
    parts: list[_MemoryPart] = field(default_factory=list)
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


@dataclass(slots=True)
class Seat:
    """One connected player: its name, token hash, actor and view."""

    name: str
    token_hash: str
    actor_id: int
    view: PlayerView
    session: Any  # object; mypyc cannot compile a field annotated `object` (issue 10)
    memory_parts: dict[int, _MemoryPart] = field(default_factory=dict)
    """The character's map memory of each depth as taken for a checkpoint;
    a depth's part is dropped once a tick wrote cells into that depth's
    memory (gave the player ``seen_tiles`` there)."""
    memory_list: list[_MemoryPart] | None = None
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


class Game:
    """All connected players in one world.

    Args:
        world: The world to run.
        store: Where characters persist.
        tick_rate: Ticks per second (told to clients in ``welcome``).
        max_players: Joins beyond this are refused with ``server_full``.
        motd: Message of the day sent in ``welcome``.
        save_interval_s: Seconds between two checkpoints (rounded to whole
            ticks, at least one).
    """

    def __init__(
        self,
        world: World,
        store: Store,
        *,
        tick_rate: int = 10,
        max_players: int = 5000,
        motd: str = "",
        save_interval_s: float = SAVE_INTERVAL_S,
    ) -> None:
        self.world = world
        self.store = store
        self.tick_rate = tick_rate
        self.max_players = max_players
        self.motd = motd
        self.seats: dict[int, Seat] = {}
        self.by_name: dict[str, Seat] = {}
        self._tables = welcome_tables(world.content)
        self._carried: Carried | None = None
        self.keep_index = False
        """Keep each tick's whole index in :attr:`last_index` (for tests that
        look into it); off, only what the next tick needs is kept, so the
        rest is freed with the tick's messages."""
        self.last_index: TickIndex | None = None
        self.saver = StoreWriter(store)
        self.save_every = max(1, round(save_interval_s * tick_rate))
        """Ticks between two checkpoints."""
        self._left: dict[str, tuple[str, bytes, int]] = {}
        """Characters that left and may not be in the database yet: name ->
        (token hash, record packed with :func:`pack_record`, number of the
        submission holding it; 0 before the next checkpoint, -1 while that
        checkpoint is compressed). Packed when the character leaves: as a
        dict it held thirteen lists and dicts per character for the garbage
        collector to walk until the checkpoint (4,000 players leaving at once
        left 52,000 young containers, a collection of 10-13 ms)."""
        self._pending: _Checkpoint | None = None
        """A checkpoint taken and not yet handed to the writer."""
        self.hooks = GameHooks()  # the server puts its metrics here
        self.saver.on_saved = lambda what, seconds: self.hooks.saved(what, seconds)
        self.saver.on_error = lambda what: self.hooks.db_error(what)
        self.bans = BanList()  # the server's command line puts the persistent list here
        world.saved_levels.update(
            {
                depth: record
                for depth, record in store.load_levels().items()
                if depth not in world.levels
            }
        )

    def join(
        self,
        name: str,
        token: str | None,
        class_key: str | None,
        session: object,
        *,
        may_create: bool = True,
    ) -> tuple[Welcome, object | None]:
        """Seat a player: resume a saved character, or create a new one.

        Names are compared without case (``Ann`` and ``ANN`` are one
        character); the character keeps the spelling it was created with.

        Args:
            may_create: False to refuse (``limited``) a join that would create
                a new character; resuming is still allowed.

        Returns:
            The ``welcome`` message, and the session object this join replaced
            (the same name was still connected from elsewhere with the right
            token: the caller should close that connection), or None.

        Raises:
            GameError: ``name_taken`` (known name, token missing or wrong: one
                message whether its owner is online or not), ``bad_class``
                (unknown class), ``server_full``, ``limited``, ``banned``,
                ``kicked`` (see :class:`~server.game.bans.BanList`).
        """
        refused = self.bans.refusal(name)
        if refused is not None:
            raise GameError(*refused)
        taken = GameError("name_taken", f"{name!r} belongs to someone; a token is needed")
        online = self.by_name.get(name.lower())
        if online is not None:
            if token is None or not hmac.compare_digest(online.token_hash, hash_token(token)):
                raise taken
            replaced = online.session
            online.session = session
            online.view = PlayerView(online.actor_id)
            return self._welcome(online, token, resumed=True), replaced
        if len(self.seats) >= self.max_players:
            raise GameError("server_full", f"the server holds {self.max_players} players")
        left = next((v for k, v in self._left.items() if k.lower() == name.lower()), None)
        saved = self.store.load_player(name) if left is None else (left[0], unpack_record(left[1]))
        if saved is not None:
            ok = token is not None and saved[0] == hash_token(token)
            record = saved[1] if ok else None
            if record is None:
                raise taken
            name = str(record.get("name", name))  # the spelling it was created with
            try:
                actor = self.world.join(name, record=record)
            except LookupError as exc:
                raise GameError("server_full", "no room near your last place") from exc
            token_hash, resumed = saved[0], True
        else:
            if not may_create:
                raise GameError("limited", NEW_CHARS_LIMITED)
            key = class_key or "warrior"
            cls = self.world.content.classes.get(key)
            if cls is None or cls.hidden:
                known = ", ".join(k for k, c in self.world.content.classes.items() if not c.hidden)
                raise GameError("bad_class", f"no class {key!r} (classes: {known})")
            try:
                actor = self.world.join(name, key)
            except LookupError as exc:
                raise GameError("server_full", "no room at the entrance") from exc
            token = secrets.token_urlsafe(24)
            token_hash, resumed = hash_token(token), False
        seat = Seat(name, token_hash, actor.id, PlayerView(actor.id), session)
        self.seats[actor.id] = seat
        self.by_name[name.lower()] = seat
        self._left.pop(name, None)
        if not resumed:  # made from nothing: saving it alone keeps the floors consistent
            self.saver.submit(
                [(name, token_hash, pack_record(actor.to_record()), self.world.tick)], []
            )
        return self._welcome(seat, token, resumed), None

    def _welcome(self, seat: Seat, token: str | None, resumed: bool) -> Welcome:
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

    def leave(self, actor_id: int, session: object) -> None:
        """Unseat a player (its connection ended); its character is saved by
        the next checkpoint, with the floors as they are then.

        Does nothing if the seat now belongs to another session (a reconnect
        replaced this one) or is already gone.
        """
        seat = self.seats.get(actor_id)
        if seat is None or seat.session is not session:
            return
        record = self.world.leave(actor_id)
        del self.seats[actor_id]
        del self.by_name[seat.name.lower()]
        self._left[seat.name] = (seat.token_hash, pack_record(record), 0)

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
    ) -> None:
        """Queue a protocol command for the player (a full queue is rejected later).

        Raises:
            ValueError: The command and its keys do not form a valid command.
        """
        self.world.submit(
            actor_id, to_command(name, d, item=item, at=at, spell=spell, opt=opt), seq
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
                the speaker. When nobody of that name is playing, only the
                speaker gets a notice saying so.

        Returns:
            The recipients' actor ids (ascending) and the ``chat`` message.
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

    def step(
        self,
        skip: set[int] | frozenset[int] = frozenset(),
        send: Callable[[list[tuple[int, ServerMessage]]], object] | None = None,
    ) -> dict[int, list[ServerMessage]]:
        """Run one tick; return the messages for each seated player: one
        ``snap`` or ``delta`` (with the tick's refused commands in ``rej``),
        or none when nothing changed for that player (protocol 3: one frame
        per player per tick).

        The players whose command was carried out or refused this tick (an
        ``ack`` or ``rej`` is due) come first, the others after them, so that
        a player who acted sees the effect as early in the tick as can be
        (issue 10: command to effect). The messages are the same in any order.

        Args:
            skip: Players whose clients are behind: nothing is built for them
                and their next message will be a snapshot.
            send: If given, called with ``[(actor_id, message), ...]`` each
                time :data:`SEND_BATCH` messages are built (and with the rest
                at the end of each of the two groups), so they can be written
                while the others are built; the returned dict is then empty.
        """
        index = TickIndex(self.world, self.world.step(), self._carried)
        self._carried = index.carried()
        if self.keep_index:
            self.last_index = index
        out: dict[int, list[ServerMessage]] = {}
        actors = self.world.actors
        seats = self.seats
        for actor_id in index.steady_touched(seats):
            seats[actor_id].steady_blob = None
        first: list[tuple[int, PlayerView, Actor]] = []
        later: list[tuple[int, PlayerView, Actor]] = []
        rejections = index.rejections
        # One pass over every seat, so it is kept lean: what
        # PlayerView.answers says, inline.
        for actor_id, seat in seats.items():
            actor = actors[actor_id]
            if actor.seen_tiles:  # written at the depth the player is on after the tick
                seat.memory_parts.pop(actor.depth, None)
                seat.memory_list = None
            view = seat.view
            if actor_id in skip:
                view.needs_snapshot = True
                continue
            if actor.last_tag != view.ack or actor_id in rejections:
                first.append((actor_id, view, actor))
            else:
                later.append((actor_id, view, actor))
        for group in (first, later):
            batch: list[tuple[int, ServerMessage]] = []
            for actor_id, view, actor in group:
                msg = view.message(index, actor)
                if msg is None:
                    continue
                if send is None:
                    out[actor_id] = [msg]
                    continue
                batch.append((actor_id, msg))
                if len(batch) >= SEND_BATCH:
                    send(batch)
                    batch = []
            if batch and send is not None:
                send(batch)
        pending = self._pending
        if pending is not None and pending.compress(pending.per_tick, pending.heads_per_tick):
            self._submit(pending)
        if self.world.tick % self.save_every == 0:
            self._take_checkpoint()
        return out

    def checkpoint(self) -> int:
        """Hand the writer every seated and recently left character and every
        visited level, as they are now, to be written in one transaction
        (a tick's checkpoint still being compressed is handed over first).

        Returns:
            The submission's number (see :attr:`StoreWriter.committed`).
        """
        return self._take_checkpoint(at_once=True)

    def _take_checkpoint(self, at_once: bool = False) -> int:
        """Take the records of a checkpoint at this tick (see :meth:`checkpoint`).

        Map memory that changed since the last checkpoint is copied now and
        compressed over the next ticks (:data:`CHECKPOINT_SPREAD_TICKS`, a
        share each tick); then the whole checkpoint goes to the writer,
        everything in it still as it was at this tick. With ``at_once``, or
        nothing to compress, it goes at once.

        Returns:
            The submission's number if it went at once, else 0.
        """
        if self._pending is not None:  # (a checkpoint every tick or so)
            self._submit(self._pending)
        tick = self.world.tick
        done = self.saver.committed
        self._left = {n: v for n, v in self._left.items() if v[2] <= 0 or v[2] > done}
        pending = _Checkpoint(tick)
        take = self._take_record
        for seat in self.seats.values():
            take(seat, pending)
        for name, entry in self._left.items():
            if entry[2] == 0:
                pending.left.append((name, entry))
                self._left[name] = (entry[0], entry[1], -1)
        pending.levels = [
            (d, pack_record(self.world.level_record(d)), tick) for d in sorted(self.world.levels)
        ]
        self._pending = pending
        spread = 1 if at_once else max(1, min(CHECKPOINT_SPREAD_TICKS, self.save_every // 2))
        pending.per_tick = -(-len(pending.parts) // spread)
        pending.heads_per_tick = -(-len(pending.names) // spread)
        if spread == 1:
            return self._submit(pending)
        return 0

    def _submit(self, pending: _Checkpoint) -> int:
        """Compress what is left of ``pending``'s map memory, pack its records
        and hand them to the writer; returns the submission's number."""
        pending.compress(len(pending.parts), len(pending.names))
        tick = pending.tick
        players = [
            (name, token_hash, blob, tick)
            for name, token_hash, blob in zip(
                pending.names, pending.token_hashes, pending.blobs, strict=True
            )
        ]
        players += [(n, entry[0], entry[1], tick) for n, entry in pending.left]
        forget = {n for n, _ in pending.left}
        seq = self.saver.submit(players, pending.levels, forget=forget, checkpoint_tick=tick)
        for name, entry in pending.left:
            now = self._left.get(name)
            if now is not None and now[1] is entry[1] and now[2] == -1:
                self._left[name] = (entry[0], entry[1], seq)
        self._pending = None
        return seq

    def _take_record(self, seat: Seat, pending: _Checkpoint) -> None:
        """Add a seated character's record as of now to ``pending``, to be
        packed by :meth:`_Checkpoint.compress` into a msgpack map equal to
        ``pack_record(actor.to_record())`` at this tick.

        Only the :meth:`~server.sim.actors.Actor.moving_state` is taken now,
        and the steady record is packed again only when a tick may have
        changed it since the last checkpoint (else its bytes are reused). A
        depth's map memory that a tick wrote to since the last checkpoint is
        copied now, and added to ``pending.parts`` to be compressed over the
        next ticks; a compressed part is reused until the memory changes
        again."""
        actor = self.world.actors[seat.actor_id]
        memory = actor.memory
        listed = seat.memory_list
        if listed is None or len(listed) != len(memory):
            parts = seat.memory_parts
            for depth, grid in memory.items():
                if depth not in parts:
                    part = parts[depth] = _MemoryPart(depth, grid)
                    pending.parts.append(part)
            listed = seat.memory_list = [parts[d] for d in sorted(memory)]
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

    def save_all(self) -> None:
        """Checkpoint now and wait until it is written (at most
        ``SHUTDOWN_FLUSH_S``; a database that stays broken is logged by the
        writer)."""
        self.checkpoint()
        self.saver.flush(SHUTDOWN_FLUSH_S)
