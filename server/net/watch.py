"""Spectators: who watches whom through a front, and their frames (protocol 12).

A spectator watches one player (docs/protocol.md, "Watching a player"): it
is written the very frames the player is written, byte for byte, from the
player's next snapshot on, and nothing is built for it. ``underhall serve``
(:class:`~server.net.server.GameServer`) and a cluster gateway
(:class:`~server.cluster.gateway.Gateway`) share what is here:

- :class:`Spectator`, one watching connection;
- :class:`Audience`, the spectators of each player through this front, by
  the watched player's actor id, and the players who refuse to be watched;
- :meth:`Audience.forward`, the one place a player's frame reaches its
  spectators: the front calls it with the bytes it has just written to the
  player (``serve``), or that a worker sent for the player (a gateway);
- :func:`spectator_welcome`, a spectator's ``welcome`` from the player's.

Holds no game rule and does no I/O of its own but writing frames.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from websockets.asyncio.server import ServerConnection

from protocol.messages import Welcome
from protocol.session import ServerSession
from server.net.guard import buffered_output, send_binary
from server.net.ratelimit import TokenBucket

SPECTATOR_OUTBOX_BYTES = 256 * 1024
"""A spectator's socket write buffer above which it is behind: it gets no
frame until the player's next snapshot (as a player that is behind)."""


@dataclass(eq=False, slots=True)
class Spectator:
    """One watching connection.

    Attributes:
        ws: Its websocket.
        session: Its protocol session (``watching``).
        bucket: Its message rate.
        chat: Its chat rate.
        global_chat: Its global chat rate (a spectator sends no global line;
            kept so that it is a :class:`~server.net.front.Seated` as a
            player is).
        name: Its own name, as it said in ``hello`` (the ``from`` of its
            chat lines).
        watched: The watched player's name, as the player spells it.
        actor_id: The watched player's actor id.
        synced: Whether it has been written a snapshot of the player and
            every frame of the player since (False: it waits for the next
            snapshot).
        asked: Whether a snapshot of the player was asked for it and has
            not come yet.
        epoch: In a cluster, the epoch of the player's frames it was last
            written (a frame of a later epoch comes from the player's next
            worker).
        holder: In a cluster, the gateway that holds the player (``""``:
            this front).
    """

    ws: ServerConnection
    session: ServerSession
    bucket: TokenBucket
    chat: TokenBucket
    global_chat: TokenBucket
    name: str
    watched: str
    actor_id: int
    synced: bool = False
    asked: bool = False
    epoch: int = -1
    holder: str = ""


class Audience:
    """The spectators of each player through one front, and the players
    (of this front) who refuse to be watched.

    Attributes:
        by_actor: Watched actor id -> its spectators here, in arrival order.
        refusing: Actor ids of players seated through this front whose
            connection sent ``spectators`` with ``allow`` false (forgotten
            when that connection ends: a new one allows spectators).
    """

    def __init__(self) -> None:
        self.by_actor: dict[int, list[Spectator]] = {}
        self.refusing: set[int] = set()

    def __len__(self) -> int:
        """How many spectators watch through this front."""
        return sum(len(s) for s in self.by_actor.values())

    def add(self, spectator: Spectator) -> int:
        """Add a spectator; the number of spectators of its player here now."""
        watching = self.by_actor.setdefault(spectator.actor_id, [])
        watching.append(spectator)
        return len(watching)

    def remove(self, spectator: Spectator) -> int | None:
        """Take a spectator out; the number of spectators of its player here
        now, or None if it was not here (already taken out)."""
        watching = self.by_actor.get(spectator.actor_id)
        if watching is None or spectator not in watching:
            return None
        watching.remove(spectator)
        if not watching:
            del self.by_actor[spectator.actor_id]
        return len(watching)

    def count(self, actor_id: int) -> int:
        """How many spectators watch player ``actor_id`` through this front."""
        return len(self.by_actor.get(actor_id, ()))

    def take(self, actor_id: int) -> list[Spectator]:
        """Take out every spectator of player ``actor_id``; those spectators."""
        return self.by_actor.pop(actor_id, [])

    def forward(self, actor_id: int, data: bytes, snapshot: bool, epoch: int = -1) -> bool:
        """Write one frame of player ``actor_id`` (``data``, as written to the
        player; ``snapshot`` whether it is a ``snap``) to its spectators.

        A spectator is written the frame if it is in step (``synced``), or if
        the frame is a snapshot; one whose output is over
        :data:`SPECTATOR_OUTBOX_BYTES` (or cut off) is not, and waits for the
        next snapshot. A frame of a later ``epoch`` than a spectator's last
        one (a cluster's hand-off to another worker) puts it out of step
        unless it is a snapshot.

        Returns:
            True when a spectator waits for a snapshot that nobody asked for
            yet (it fell behind, or caught up since): the caller asks the
            host to make the player's next frame a snapshot (its view's
            resync), and the spectator is marked ``asked``.
        """
        wanted = False
        for s in self.by_actor.get(actor_id, ()):
            if epoch != s.epoch:
                if not snapshot:
                    s.synced = False
                s.epoch = epoch
            if not _writable(s.ws):
                s.synced = False
                if snapshot:
                    s.asked = False  # the snapshot it waited for went by
            elif snapshot:
                s.synced = True
                s.asked = False
                send_binary(s.ws, data)
            elif s.synced:
                send_binary(s.ws, data)
            elif not s.asked:
                s.asked = wanted = True
        return wanted


def _writable(ws: ServerConnection) -> bool:
    """Whether a frame may be written to ``ws`` now: open, not cut off, its
    output at or under :data:`SPECTATOR_OUTBOX_BYTES`."""
    buffered = buffered_output(ws)
    return buffered is not None and buffered <= SPECTATOR_OUTBOX_BYTES


def spectator_welcome(welcome: Welcome) -> Welcome:
    """A spectator's ``welcome`` from the watched player's (protocol 12): the
    same tables, actor id and name, but an empty ``token``, ``resumed``
    false and ``watch`` the player's name."""
    return replace(welcome, token="", resumed=False, watch=welcome.name)


def spectator_welcome_map(
    welcome: dict[str, Any], actor_id: int, name: str, tick: int
) -> dict[str, Any]:
    """:func:`spectator_welcome` as a decoded map, made from any player's
    ``welcome`` (a decoded map: a gateway has its players' as the workers
    packed them; the tables are every player's) for the player of actor
    ``actor_id`` called ``name``, at ``tick``."""
    return {
        **welcome,
        "id": actor_id,
        "name": name,
        "token": "",
        "resumed": False,
        "tick": tick,
        "watch": name,
    }
