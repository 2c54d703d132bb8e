"""The game: sessions of connected players bound to actors of one world.

This layer knows that a player connected, under which name and token, not how
(STYLE.md: the Portal/Server boundary). It turns protocol commands into
simulation commands, runs the world's ticks, cuts each tick down to one
message list per player, and saves characters in the :class:`Store`.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from protocol.messages import ChatOut, Info, Reject, ServerMessage, Welcome
from protocol.version import PROTOCOL_VERSION
from server.game.index import TickIndex
from server.game.store import Store, hash_token
from server.game.views import PlayerView
from server.game.wire import describe_actor, to_command, welcome_tables
from server.sim.world import World

AUTOSAVE_TICKS = 300
"""Ticks between two saves of a connected character (30 s at 10 Hz); the
characters are spread over those ticks."""


class GameError(Exception):
    """A join refused by the game; ``code`` is a protocol error code."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


@dataclass(slots=True)
class Seat:
    """One connected player: its name, token hash, actor and view."""

    name: str
    token_hash: str
    actor_id: int
    view: PlayerView
    session: object


class Game:
    """All connected players in one world.

    Args:
        world: The world to run.
        store: Where characters persist.
        tick_rate: Ticks per second (told to clients in ``welcome``).
        max_players: Joins beyond this are refused with ``server_full``.
        motd: Message of the day sent in ``welcome``.
    """

    def __init__(self, world: World, store: Store, *, tick_rate: int = 10,
                 max_players: int = 5000, motd: str = "") -> None:
        self.world = world
        self.store = store
        self.tick_rate = tick_rate
        self.max_players = max_players
        self.motd = motd
        self.seats: dict[int, Seat] = {}
        self.by_name: dict[str, Seat] = {}
        self._tables = welcome_tables(world.content)
        self._last_index: TickIndex | None = None
        world.saved_levels.update({depth: record for depth, record in store.load_levels().items()
                                   if depth not in world.levels})

    def join(self, name: str, token: str | None, class_key: str | None,
             session: object) -> tuple[Welcome, object | None]:
        """Seat a player: resume a saved character, or create a new one.

        Returns:
            The ``welcome`` message, and the session object this join replaced
            (the same name was still connected from elsewhere with the right
            token: the caller should close that connection), or None.

        Raises:
            GameError: ``name_taken`` (known name, token missing or wrong),
                ``bad_class`` (unknown class), ``server_full``.
        """
        online = self.by_name.get(name)
        if online is not None:
            if token is None or online.token_hash != hash_token(token):
                raise GameError("name_taken", f"{name!r} is playing; a token is needed")
            replaced = online.session
            online.session = session
            online.view = PlayerView(online.actor_id)
            return self._welcome(online, token, resumed=True), replaced
        if len(self.seats) >= self.max_players:
            raise GameError("server_full", f"the server holds {self.max_players} players")
        saved = self.store.load_player(name)
        if saved is not None:
            record = self.store.check_token(name, token)
            if record is None:
                raise GameError("name_taken", f"{name!r} belongs to someone; a token is needed")
            try:
                actor = self.world.join(name, record=record)
            except LookupError as exc:
                raise GameError("server_full", "no room near your last place") from exc
            token_hash, resumed = saved[0], True
        else:
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
        self.by_name[name] = seat
        self.store.save_players([(name, token_hash, actor.to_record(), self.world.tick)])
        return self._welcome(seat, token, resumed), None

    def _welcome(self, seat: Seat, token: str | None, resumed: bool) -> Welcome:
        return Welcome(
            v=PROTOCOL_VERSION, id=seat.actor_id, name=seat.name, token=token or "",
            resumed=resumed, tick=self.world.tick, tick_rate=self.tick_rate,
            terrain=self._tables["terrain"], kinds=self._tables["kinds"],
            items=self._tables["items"], classes=self._tables["classes"], motd=self.motd,
            spells=self._tables["spells"], statuses=self._tables["statuses"],
            damage_types=self._tables["damage_types"],
        )

    def leave(self, actor_id: int, session: object) -> None:
        """Unseat a player (its connection ended) and save its character.

        Does nothing if the seat now belongs to another session (a reconnect
        replaced this one) or is already gone.
        """
        seat = self.seats.get(actor_id)
        if seat is None or seat.session is not session:
            return
        record = self.world.leave(actor_id)
        del self.seats[actor_id]
        del self.by_name[seat.name]
        self.store.save_players([(seat.name, seat.token_hash, record, self.world.tick)])

    def command(self, actor_id: int, seq: int, name: str, d: tuple[int, int] | None = None, *,
                item: str | None = None, at: tuple[int, int] | None = None,
                spell: str | None = None, opt: str | None = None) -> None:
        """Queue a protocol command for the player (a full queue is rejected later).

        Raises:
            ValueError: The command and its keys do not form a valid command.
        """
        self.world.submit(actor_id, to_command(name, d, item=item, at=at, spell=spell, opt=opt),
                          seq)

    def look(self, actor_id: int, target_id: int) -> Info:
        """The ``info`` answer to a ``look`` at actor ``target_id`` (seed 001's
        look command): found only if that actor is in the asker's view."""
        me = self.world.actors.get(actor_id)
        target = self.world.actors.get(target_id)
        if (me is None or target is None or not target.alive
                or target_id not in self.world.sees.get(actor_id, ())):
            return Info(id=target_id, found=False, about={})
        return Info(id=target_id, found=True, about=describe_actor(target, me, self.world.content))

    def chat(self, actor_id: int, text: str) -> ChatOut:
        """The chat message to send to everyone for ``text`` said by the player."""
        return ChatOut(sender=self.seats[actor_id].name, text=text, tick=self.world.tick)

    def resync(self, actor_id: int) -> None:
        """Make the player's next message a full snapshot (after skipped deltas)."""
        seat = self.seats.get(actor_id)
        if seat is not None:
            seat.view.needs_snapshot = True

    def step(self, skip: set[int] | frozenset[int] = frozenset()) -> dict[int, list[ServerMessage]]:
        """Run one tick; return the messages for each seated player.

        Args:
            skip: Players whose clients are behind: nothing is built for them
                and their next message will be a snapshot.
        """
        index = TickIndex(self.world, self.world.step(), self._last_index)
        self._last_index = index
        out: dict[int, list[ServerMessage]] = {}
        for actor_id, seat in self.seats.items():
            if actor_id in skip:
                seat.view.needs_snapshot = True
                continue
            actor = self.world.actors[actor_id]
            msgs: list[ServerMessage] = [
                Reject(seq=e.tag, reason=e.reason.name.lower())
                for e in index.rejections.get(actor_id, ())]
            view = seat.view
            if (view.needs_snapshot or actor_id in index.snapshot_for
                    or view.depth != actor.depth):
                msgs.append(view.snapshot(index, actor))
            else:
                delta = view.delta(index, actor)
                if delta is not None:
                    msgs.append(delta)
            if msgs:
                out[actor_id] = msgs
        self._autosave_slice()
        return out

    def _autosave_slice(self) -> None:
        """Save the players whose turn it is this tick.

        Each player is saved once every ``AUTOSAVE_TICKS`` ticks, a slice of
        them per tick, so no single tick pays for writing everyone; the
        visited levels are saved once in that period, half-way through it.
        """
        phase = self.world.tick % AUTOSAVE_TICKS
        self._save([a for a in self.seats if a % AUTOSAVE_TICKS == phase])
        if phase == AUTOSAVE_TICKS // 2:
            self.save_levels()

    def save_all(self) -> None:
        """Save every seated player's character and every visited level."""
        self._save(list(self.seats))
        self.save_levels()

    def save_levels(self) -> None:
        """Save the terrain and floor items of every level visited so far."""
        tick = self.world.tick
        self.store.save_levels([(depth, self.world.level_record(depth), tick)
                                for depth in sorted(self.world.levels)])

    def _save(self, actor_ids: list[int]) -> None:
        rows: list[tuple[str, str, dict[str, Any], int]] = [
            (self.seats[a].name, self.seats[a].token_hash, self.world.actors[a].to_record(),
             self.world.tick) for a in actor_ids]
        if rows:
            self.store.save_players(rows)
