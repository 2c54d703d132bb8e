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

from protocol.messages import Welcome
from server.game.bans import BanList
from server.game.hooks import GameHooks
from server.game.host import SEND_BATCH, Checkpoint, Host, Seat, look_in
from server.sim.world import World
from server.store import Store, hash_token, pack_record
from server.store.base import unpack_record
from server.store.writer import StoreWriter

__all__ = [
    "CHECKPOINT_SPREAD_TICKS",
    "NEW_CHARS_LIMITED",
    "SAVE_INTERVAL_S",
    "SEND_BATCH",
    "Game",
    "GameError",
    "Seat",
    "look_in",
]

SAVE_INTERVAL_S = 3.0
"""Default seconds of play between two checkpoints (at most this much is lost
to a crash, plus the time the write takes)."""
CHECKPOINT_SPREAD_TICKS = 5
"""A checkpoint's map memory is compressed and its records packed over the
ticks after it, a slice each tick, so that no tick carries it all: over
this many ticks (fewer when checkpoints come closer together). The
checkpoint goes to the writer when that is done, so a crash loses at most
one interval plus these ticks."""
SHUTDOWN_FLUSH_S = 30.0
"""How long :meth:`Game.save_all` waits for the database."""


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


class Game(Host):
    """All connected players in one world: the :class:`~server.game.host.Host`
    of ``underhall serve``, with joins, leaves and checkpoints in a
    :class:`Store`. A seat's ``session`` is the connection's session object.

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
        super().__init__(world, tick_rate=tick_rate, motd=motd)
        self.store = store
        self.max_players = max_players
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
        self._pending: Checkpoint | None = None
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
        last = store.last_tick() if world.tick == 0 else 0
        if last:  # a fresh world on a database that has been played: its clock goes on
            world.tick = last + 1

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
            self.reseat(online, session)
            return self.welcome(online, token, resumed=True), replaced
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
                actor = self.join_world(name, record=record)
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
                actor = self.join_world(name, key)
            except LookupError as exc:
                raise GameError("server_full", "no room at the entrance") from exc
            token = secrets.token_urlsafe(24)
            token_hash, resumed = hash_token(token), False
        seat = self.add_seat(name, token_hash, actor.id, session)
        self._left.pop(name, None)
        if not resumed:  # made from nothing: saving it alone keeps the floors consistent
            self.saver.submit(
                [(name, token_hash, pack_record(actor.to_record()), self.world.tick)], []
            )
        return self.welcome(seat, token, resumed), None

    def leave(self, actor_id: int, session: object) -> None:
        """Unseat a player (its connection ended); its character is saved by
        the next checkpoint, with the floors as they are then.

        Does nothing if the seat now belongs to another session (a reconnect
        replaced this one) or is already gone.
        """
        seat = self.seats.get(actor_id)
        if seat is None or seat.session is not session:
            return
        _, record = self.unseat(actor_id)
        self._left[seat.name] = (seat.token_hash, pack_record(record), 0)

    def ticked(self) -> None:
        """After each tick's frames (:meth:`Host.step`): go on with the
        checkpoint being packed, and take the next one when it is due."""
        pending = self._pending
        if pending is not None and pending.compress(pending.per_tick, pending.heads_per_tick):
            self._submit(pending)
        if self.world.tick % self.save_every == 0:
            self._take_checkpoint()

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
        pending = Checkpoint(tick)
        take = self.take_record
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

    def _submit(self, pending: Checkpoint) -> int:
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

    def save_all(self) -> None:
        """Checkpoint now and wait until it is written (at most
        ``SHUTDOWN_FLUSH_S``; a database that stays broken is logged by the
        writer)."""
        self.checkpoint()
        self.saver.flush(SHUTDOWN_FLUSH_S)
