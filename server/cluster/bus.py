"""The cluster's NATS subjects and the packing of what travels on them.

Every name starts with a *prefix* (``uh`` by default), so several clusters,
or several tests, can share one NATS server. Payloads are the typed messages
of :mod:`server.cluster.messages`, each a msgpack array whose first element
names the kind where a subject carries several; the lists below show them
as those arrays.

Subjects (``P`` is the prefix, ``W`` a worker id, ``G`` a gateway id), and
the messages each carries:

- ``P.join`` (queue group ``workers``): a gateway's request to seat a player
  (``JoinRequest``); the reply is a ``JoinReply``.
- ``P.w.W.join``: the same request addressed to one worker, which a
  gateway sends to a worker it has heard from lately (the queue is used
  only when it has heard from none: a stalled worker keeps its place in a
  queue group).
- ``P.claim`` (queue group ``workers``): "someone take level *d*"
  (``Claim``); the reply is a ``Holder``.
- ``P.w.W`` (requests to one worker): a ``JoinRequest`` forwarded to the
  level's holder (reply ``JoinReply``), or a hand-off's ``AdmitRequest``,
  keyed on name and epoch (reply ``AdmitReply``).
- ``P.w.W.in`` (published by gateways): ``Inbound``, what one turn of a
  gateway's event loop queued for the worker, in order: ``FromClient`` (a
  raw client message), ``Leave``, ``Resync``.
- ``P.g.G`` (published by workers, one subscription so their order holds):
  ``Frames`` (a tick's frames for this gateway's players, each already
  encoded for the client), ``Route`` (the player is now held there),
  ``Moving`` (a hand-off began: buffer its commands), ``Lost`` (its worker
  let it go: join it again).
- ``P.chat`` (every gateway): ``ChatLine``, global and private lines and
  operators' notices.
- ``P.release`` (every worker): ``Release``: whoever holds the character
  under an older epoch drops it without writing.
- ``P.presence`` (every worker): ``Presence``: a player entered or left the
  dungeon on a worker (not a move between workers); every other worker
  tells its players, as ``serve`` tells everyone.
- ``P.admin`` (queue group ``workers``): an operator's ``Ban`` (with the
  inbox where the gateways answer its notice), ``Unban`` or ``ListBans``
  from a gateway's admin socket; the worker that takes it writes the bans in
  PostgreSQL (:mod:`server.cluster.bans`) and replies with an ``AdminReply``.
- ``P.bans`` (every worker and gateway): ``Ban`` or ``Unban``, published
  after the change is committed. Workers read the list again; gateways
  disconnect a banned player (and lift a kick hold on an unban). A ban's
  notice has a reply subject: each gateway answers ``Closed`` there.
- ``P.kick`` (every gateway): ``Kick``, reply subject set: each gateway
  holds the name out, disconnects the player if it is there, and answers
  ``Closed``.
- ``P.who`` (every gateway): ``Who``, reply subject set: each gateway
  answers ``Present`` (its players, whether it drains).
- ``P.seek`` (every gateway): ``Seek``, reply subject set: each gateway
  answers ``Found`` (its player's spelling of the name, or None); a private
  chat line goes out only once its addressee is found somewhere.
- ``P.hb.W``: a worker's ``Heartbeat`` (tick, players), once a second.
- ``P.lobby.W`` (every gateway): a worker's ``LobbyReport`` (how many players
  it holds, and the first hundred of them by level with their class, depth
  and turns), every :data:`LOBBY_EVERY_S`: what the gateways' ``/lobby.json``
  lists.
- ``P.ghb.G``: a gateway's ``GatewayBeat`` (players), once a second
  (workers let go of the players of a gateway silent for
  :data:`GATEWAY_SILENT_S`).

Buckets: ``P_leases`` (:mod:`server.cluster.lease`).
"""

from __future__ import annotations

from server.cluster.messages import Frames, encode

DEFAULT_PREFIX = "uh"
HEARTBEAT_S = 1.0
"""Seconds between two heartbeats of a worker."""
SILENT_S = 3.5
"""Seconds without a heartbeat after which a gateway deems a worker dead."""
GATEWAY_SILENT_S = 7.0
"""Seconds without a heartbeat after which a worker deems a gateway dead and
saves and unseats its players."""
LOBBY_EVERY_S = 2.0
"""Seconds between two lobby reports of a worker; a gateway forgets the
report of a worker not heard from within :data:`SILENT_S` after that."""
MAX_BATCH_BYTES = 512 * 1024
"""A tick's frames for one gateway are split into messages of about this
size at most (NATS's default payload limit is 1 MiB)."""


class Subjects:
    """The subject and bucket names under one prefix."""

    def __init__(self, prefix: str = DEFAULT_PREFIX) -> None:
        self.prefix = prefix
        self.join = f"{prefix}.join"
        self.claim = f"{prefix}.claim"
        self.chat = f"{prefix}.chat"
        self.release = f"{prefix}.release"
        self.admin = f"{prefix}.admin"
        self.bans = f"{prefix}.bans"
        self.kick = f"{prefix}.kick"
        self.who = f"{prefix}.who"
        self.seek = f"{prefix}.seek"
        self.presence = f"{prefix}.presence"
        self.heartbeats = f"{prefix}.hb.*"
        self.gateway_heartbeats = f"{prefix}.ghb.*"
        self.lobby_reports = f"{prefix}.lobby.*"
        self.leases = f"{prefix}_leases"

    def worker(self, worker_id: str) -> str:
        """Requests to one worker."""
        return f"{self.prefix}.w.{worker_id}"

    def join_at(self, worker_id: str) -> str:
        """Joins a gateway addresses to one worker (as on :attr:`join`)."""
        return f"{self.prefix}.w.{worker_id}.join"

    def inbox(self, worker_id: str) -> str:
        """Players' messages for one worker."""
        return f"{self.prefix}.w.{worker_id}.in"

    def gateway(self, gateway_id: str) -> str:
        """Everything workers send one gateway."""
        return f"{self.prefix}.g.{gateway_id}"

    def heartbeat(self, worker_id: str) -> str:
        """One worker's heartbeat."""
        return f"{self.prefix}.hb.{worker_id}"

    def gateway_heartbeat(self, gateway_id: str) -> str:
        """One gateway's heartbeat."""
        return f"{self.prefix}.ghb.{gateway_id}"

    def lobby_report(self, worker_id: str) -> str:
        """One worker's lobby reports."""
        return f"{self.prefix}.lobby.{worker_id}"


def batches(frames: list[tuple[int, int, bytes]]) -> list[bytes]:
    """Pack a tick's ``(actor, epoch, frame)`` entries for one gateway into
    :class:`~server.cluster.messages.Frames` messages of at most about
    :data:`MAX_BATCH_BYTES`."""
    out: list[bytes] = []
    chunk: list[tuple[int, int, bytes]] = []
    size = 0
    for entry in frames:
        n = len(entry[2]) + 16
        if chunk and size + n > MAX_BATCH_BYTES:
            out.append(encode(Frames(chunk)))
            chunk, size = [], 0
        chunk.append(entry)
        size += n
    if chunk:
        out.append(encode(Frames(chunk)))
    return out
