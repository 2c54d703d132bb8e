"""Spectators in a cluster: the bus messages that let a spectator watch a
player through any gateway (protocol 12; docs/protocol.md, "Watching a
player"; docs/cluster.md, "Spectators").

The player's own gateway (its *holder*) keeps the spectators' books: which
other gateways have spectators of its player and how many, and whether the
player refuses them. A spectator's gateway finds the holder by asking every
gateway (``P.watch``); the holder answers with the spectator's ``welcome``,
counts it, and tells the player's worker which gateways besides itself get
the player's frames (:class:`Watched`, on ``P.watchw.W``). The worker then
puts each frame of that player in those gateways' batches as well, the same
bytes (nothing is built twice), and each gateway writes them to its
spectators (:meth:`server.net.watch.Audience.forward`). When the player moves
to another worker the holder tells the new one. Spectators' gateways tell the
holder how many they hold (:class:`WatchCount`, on ``P.watchg.G``); the
holder tells them when the player leaves or refuses spectators
(:class:`WatchEnd`).

Subjects (``P`` is the cluster's prefix):

- ``P.watch`` (every gateway): :class:`WatchAsk`; the holder answers with
  :class:`WatchAnswer` (the others stay silent).
- ``P.watchg.G`` (one gateway): :class:`WatchCount` and :class:`WatchEnd`.
- ``P.watchw.W`` (one worker): :class:`Watched`.
"""

from __future__ import annotations

import msgspec

from server.cluster.messages import _Message

WATCH_ASK_TIMEOUT_S = 2.0
"""Seconds a spectator's gateway waits for the holder's answer: nobody
answering means nobody of that name plays (``not_playing``)."""


def watch_subject(prefix: str) -> str:
    """``P.watch``: asks for a player's holder, to every gateway."""
    return f"{prefix}.watch"


def watch_gateway_subject(prefix: str, gateway_id: str) -> str:
    """``P.watchg.G``: spectators' notices for one gateway."""
    return f"{prefix}.watchg.{gateway_id}"


def watch_worker_subject(prefix: str, worker_id: str) -> str:
    """``P.watchw.W``: which gateways get a player's frames, for one worker."""
    return f"{prefix}.watchw.{worker_id}"


class WatchAsk(_Message, frozen=True):
    """``P.watch``: a spectator on ``gateway`` would watch the player called
    ``name`` (any case); the gateway holding that player answers."""

    name: str
    gateway: str


class WatchAnswer(_Message, frozen=True):
    """The holder's answer to :class:`WatchAsk`.

    Attributes:
        ok: Whether the spectator may watch (the holder has counted it).
        code: When not ``ok``: the error code (``not_watchable``).
        detail: When not ``ok``: the error's text.
        actor: The player's actor id.
        holder: The id of the gateway holding the player.
        welcome: The spectator's ``welcome``, encoded for the client.
    """

    ok: bool
    code: str = ""
    detail: str = ""
    actor: int = -1
    holder: str = ""
    welcome: bytes = b""


class WatchCount(_Message, frozen=True, tag="count"):
    """``P.watchg.G`` (to the holder): ``gateway`` holds ``count`` spectators
    of player ``actor`` now; ``resync``: one of them waits for a snapshot."""

    actor: int
    gateway: str
    count: int
    resync: bool = False


class WatchEnd(_Message, frozen=True, tag="end"):
    """``P.watchg.G`` (from the holder): close the spectators of player
    ``actor`` with the fatal error ``code`` (``gone``, ``not_watchable``)
    and ``text``."""

    actor: int
    code: str
    text: str


WatchNotice = WatchCount | WatchEnd
"""What ``P.watchg.G`` carries."""


class Watched(_Message, frozen=True):
    """``P.watchw.W``: the gateways, besides the player's own, that get the
    frames of player ``actor`` held under ``epoch`` (empty: none)."""

    actor: int
    epoch: int
    gateways: list[str]


WATCH_NOTICE: msgspec.msgpack.Decoder[WatchNotice] = msgspec.msgpack.Decoder(WatchNotice)
"""Decoder of :data:`WatchNotice` (``.decode(data)`` raises ``ValueError``)."""
