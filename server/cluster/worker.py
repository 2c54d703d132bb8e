"""A cluster worker: the tick of the levels it holds, players in and out.

A worker runs one :class:`~server.sim.world.World` (the same seed as every
other worker, so any level it generates is the level every worker would) and
steps it 10 times a second like ``underhall serve`` does, with the same
per-player views (:class:`~server.game.views.PlayerView`). What differs is
at the edges:

- it runs only levels it holds the lease of (:mod:`server.cluster.lease`);
  a lease it fails to renew is dropped at once, with every player on it,
  and nothing more is written for them;
- it holds each character under an epoch (:mod:`server.cluster.fence`);
  every save is fenced by it, and a refused save drops the character;
- a tick's frames go out as one NATS message per gateway
  (:func:`server.cluster.bus.batches`), not to sockets;
- it refuses the join of a banned name as ``serve`` does, from a copy of
  the cluster's bans kept fresh by notices (:mod:`server.cluster.bans`), and
  carries out the operators' ``ban``, ``unban`` and ``bans``;
- after each tick, a player standing on a level this worker does not hold
  (stairs, a respawn at depth 1, a level teleport) is handed off to the
  holder of that level (:meth:`Worker._hand_off`, the issue's seven steps).

Player ids are lasting (from the database), monsters' ids start at
:data:`MONSTER_IDS`, so the two never meet.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import hmac
import logging
import secrets
import signal
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import msgspec
import nats
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from websockets.asyncio.server import ServerConnection, serve

from protocol.codec import decode_client, encode_server
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import Chat, Command, Look, ServerMessage
from server.cluster.bans import ClusterBans
from server.cluster.bus import GATEWAY_SILENT_S, HEARTBEAT_S, LOBBY_EVERY_S, Subjects, batches
from server.cluster.fence import Character, Characters
from server.cluster.lease import LEASE_S, RENEW_S, Leases, open_bucket
from server.cluster.messages import (
    ADMIN_REQUEST,
    BAN_NOTICE,
    WORKER_REQUEST,
    AdmitReply,
    AdmitRequest,
    Claim,
    FromClient,
    Heartbeat,
    Holder,
    Inbound,
    JoinReply,
    JoinRequest,
    Leave,
    LobbyPlayer,
    LobbyReport,
    Lost,
    Moving,
    Presence,
    Release,
    Replaced,
    Route,
    decode,
    encode,
)
from server.cluster.watching import Watched, watch_worker_subject
from server.cluster.worker_metrics import WorkerFigures, WorkerMetrics
from server.game.game import NEW_CHARS_LIMITED
from server.game.host import Checkpoint, Host, Seat
from server.net import collector
from server.net.web import LOBBY_ROWS, lobby_order
from server.sim.events import Event, Joined, Left
from server.sim.world import COMMAND_QUEUE_LIMIT, World
from server.store import hash_token, open_store

log = logging.getLogger("underhall.worker")

MONSTER_IDS = 1 << 30
"""First id of a worker's own actors (monsters); players' lasting ids come
from the database's sequence and stay below it."""
ALIGN_WAIT_S = 1.1
"""Seconds a starting worker waits for another worker's heartbeat (one a
second), to start its world at the cluster's tick (:meth:`Worker._align_tick`)."""
HOLD_TICKS = 10
"""Ticks at most that a worker holds back the frames of a player handed to
it by a worker whose world was ahead, so that the player's ``tick`` never
goes back (docs/cluster.md, "The hand-off on the stairs")."""
SENT_KEPT = 2 * COMMAND_QUEUE_LIMIT
"""Commands kept per player as sent (:attr:`Link.sent`): more than can
wait in the world's queue."""
ADMIT_TIMEOUT_S = 1.0
"""Seconds a hand-off waits for one admission answer."""
ADMIT_TRIES = 5
"""Admission attempts before the sender takes the player back."""
FORWARD_TIMEOUT_S = 2.0
"""Seconds a forwarded join waits for the level's holder."""
CLAIM_TIMEOUT_S = 0.5
"""Seconds the claim queue has to answer before this worker claims itself."""
LEAVE_WAIT_S = 1.0
"""Seconds a join waits for the save of the same player's leave here (a
reconnect racing its own disconnect); within the forwarding timeout. A save
still running then makes the join answer ``retry`` (the gateway asks again)
rather than read a row that save is about to change."""
_DRAINING = JoinReply(ok=False, code="retry", detail="draining", retry=True, draining=True)
"""A join's answer from a draining worker: the gateway asks another
(``draining`` is what it reads; ``detail`` is for people)."""
_NO_ROOM = JoinReply(ok=False, code=ErrorCode.SERVER_FULL.value, detail="no room")
"""A join's answer when the player's level has no free cell left."""


def _name_taken(name: str) -> JoinReply:
    """The answer to a join with a missing or wrong token (serve's words)."""
    return JoinReply(
        ok=False,
        code=ErrorCode.NAME_TAKEN.value,
        detail=f"{name!r} belongs to someone; a token is needed",
    )


SAVE_INTERVAL_S = 3.0
NATS_GRACE_S = 5.0
"""Seconds a stopping worker waits on NATS for each of its last steps."""
SPARE_LEVELS = 64
"""Levels a worker keeps generated without holding them (see
:meth:`Worker._keep_spares`)."""
ANSWERS_KEPT = 10_000
"""Join answers remembered for gateways' retries."""


@dataclass(slots=True)
class Link:
    """A seated player's link to its front, in a worker (the host's
    :attr:`~server.game.host.Seat.session`): under which epoch it is held
    here and which gateway holds its connection."""

    epoch: int
    gateway: str
    hold_until: int = -1
    """No frame for the player while the world's tick is at or below this
    (the tick its last worker had reached), at most :data:`HOLD_TICKS`."""
    sent: deque[tuple[int, bytes]] = field(default_factory=lambda: deque(maxlen=SENT_KEPT))
    """The player's latest commands as its client sent them, by ``seq``: those
    still queued in the world when it leaves for another worker's level go
    with it (:meth:`Worker.queued_commands`)."""
    turns: int = 0
    """Commands its client sent this session (across hand-offs): the lobby's
    ``turns``, as ``serve`` counts them."""


WorkerSeat = Seat
"""A player this worker holds: the host's seat, whose ``session`` is its
:class:`Link` (the host's seats are not generic: mypyc compiles the host)."""


@dataclass
class WorkerStats:
    """Figures a bench reads from the log (and tests from the object)."""

    tick_ms: list[float] = field(default_factory=list)
    handoffs: int = 0
    handoff_ms: list[float] = field(default_factory=list)
    takebacks: int = 0
    refused_saves: int = 0
    frames: int = 0
    frame_bytes: int = 0


class Worker:
    """One worker process's state and loops.

    Args:
        nats_url: The NATS server (``nats://HOST:PORT``).
        db_url: The ``postgresql://`` database holding characters and levels.
        worker_id: This worker's id (letters, digits, ``-`` and ``_``).
        prefix: Subject and bucket prefix of the cluster.
        seed: World seed if the database has none yet.
        levels: Depths this worker claims at start and whenever free.
        tick_rate: Ticks per second.
        lease_s: Lease time in seconds (the lease bucket's max age).
        save_interval_s: Seconds between two checkpoints (rounded to whole
            ticks, at least one).
        monsters: Whether levels get monsters (tests and benches of the
            cluster's plumbing turn them off).
        metrics_port: Serve ``/metrics``, ``/healthz`` and ``/readyz`` on
            this TCP port (0 picks one: see :attr:`metrics_port` once
            ready; None, the default: no HTTP at all).
        metrics_host: The interface of ``metrics_port``.
        motd: The message of the day in each player's ``welcome``.

    Attributes:
        metrics: This worker's :class:`~server.cluster.worker_metrics.WorkerMetrics`.
    """

    def __init__(
        self,
        nats_url: str,
        db_url: str,
        *,
        worker_id: str,
        prefix: str = "uh",
        seed: int | None = None,
        levels: tuple[int, ...] = (),
        tick_rate: int = 10,
        lease_s: float = LEASE_S,
        save_interval_s: float = SAVE_INTERVAL_S,
        monsters: bool = True,
        metrics_port: int | None = None,
        metrics_host: str = "127.0.0.1",
        motd: str = "",
    ) -> None:
        self.motd = motd
        self.monsters = monsters
        self.metrics_port = metrics_port
        self.metrics_host = metrics_host
        self.metrics = WorkerMetrics(self)
        self._ticked = False
        """Whether a tick has run (ready from then on, :meth:`not_ready`)."""
        self.nats_url = nats_url
        self.db_url = db_url
        self.id = worker_id
        self.subjects = Subjects(prefix)
        self.seed = seed
        self.pinned = levels
        self.tick_rate = tick_rate
        self.lease_s = lease_s
        self.save_every = max(1, round(save_interval_s * tick_rate))
        self._no_seats: dict[int, WorkerSeat] = {}
        self.stats = WorkerStats()
        self.draining = False
        self._stop = asyncio.Event()
        self._extra: dict[str, list[tuple[int, int, bytes]]] = {}
        self._tasks: set[asyncio.Future[Any]] = set()
        self._cluster_tick: tuple[int, float] | None = None
        """The highest tick another worker's heartbeat said, and when it was heard."""
        self._saved_tick = 0
        """The latest tick the database held at start (:meth:`_align_tick`)."""
        self._quiet: set[int] = set()
        """Players whose next join or leave event in this world is a move
        between workers (a hand-off, a take-back, a stale copy released),
        not a player entering or leaving the dungeon: not announced."""
        self._heard: list[Event] = []
        """Joins and leaves on other workers, announced with the next tick's events."""
        self._admit_locks: dict[str, tuple[asyncio.Lock, list[int]]] = {}
        """Lower-cased name -> the lock its joins and admissions take, and how
        many hold or wait for it (see :meth:`_admitting`)."""
        self._gateway_beats: dict[str, float] = {}
        """Gateway id -> ``time.monotonic()`` of its last heartbeat."""
        self._answers: dict[str, JoinReply] = {}
        """Answers to recent joins by nonce (oldest first)."""
        self._saving = False
        self._spares: dict[int, None] = {}
        """Unheld, empty levels still generated here, oldest first."""
        self._leaving: dict[str, asyncio.Future[Any]] = {}
        """Lower-case name -> the save of a player who just left here."""
        self.fences: dict[int, int] = {}
        """Depth -> the level's fencing token this worker writes it under
        (:meth:`Characters.claim_level`)."""
        self.world: World
        self.chars: Characters
        self.nc: NatsClient
        self.leases: Leases
        self.bans: ClusterBans

    # ----------------------------------------------------------- lifecycle

    async def run(
        self, ready: asyncio.Future[str] | None = None, install_signals: bool = True
    ) -> None:
        """Serve until SIGTERM/SIGINT (or :meth:`drain`): then save every
        character, let go of the leases, and tell the gateways to seat the
        players elsewhere. With a :attr:`metrics_port`, its HTTP answers
        from the start (``/readyz`` says ``starting``) to the end of the drain.

        Raises:
            StoreError: The database cannot be opened.
            nats.errors.Error: NATS cannot be reached.
            OSError: The metrics port cannot be bound.
        """
        if self.metrics_port is None:
            await self._run(ready, install_signals)
            return
        async with serve(
            _no_websocket,
            self.metrics_host,
            self.metrics_port,
            process_request=self.metrics.process_request,
        ) as http_server:
            self.metrics_port = int(next(iter(http_server.sockets)).getsockname()[1])
            await self._run(ready, install_signals)

    async def _run(self, ready: asyncio.Future[str] | None, install_signals: bool) -> None:
        store = open_store(self.db_url, lock=False)  # applies the migrations
        try:
            stored = store.get_meta("seed")
            if stored is None:
                seed = self.seed if self.seed is not None else secrets.randbelow(2**31)
                store.set_meta("seed", str(seed))
                stored = store.get_meta("seed")  # a racing worker may have set it
            self.seed = int(stored or 0)
            saved_levels = store.load_levels()
            self._saved_tick = store.last_tick()
        finally:
            store.close()
        self.world = World(self.seed, first_id=MONSTER_IDS, populate=self.monsters)
        self.world.saved_levels.update(saved_levels)
        self.host = Host(self.world, tick_rate=self.tick_rate, motd=self.motd)
        """The seats, views, commands, chat and frames of the levels held
        here: the same host ``underhall serve`` runs."""
        self.chars = await Characters.connect(self.db_url)
        self.nc = await nats.connect(
            self.nats_url,
            name=f"worker {self.id}",
            max_reconnect_attempts=-1,
            error_cb=self._nats_error,
            disconnected_cb=self._nats_disconnected,
        )
        beats = await self.nc.subscribe(self.subjects.heartbeats, cb=self._on_worker_beat)
        self.bans = ClusterBans(self.db_url, self.nc, self.subjects)
        await self.bans.load()
        js = self.nc.jetstream()
        self.leases = Leases(
            await open_bucket(js, self.subjects.leases, self.lease_s), self.id, self.lease_s
        )
        await self._align_tick()  # before any lease: its time runs from the claim
        for depth in self.pinned:
            await self._claim(depth)
        subs = [
            beats,
            await self.nc.subscribe(self.subjects.join, "workers", cb=self._on_join),
            await self.nc.subscribe(self.subjects.join_at(self.id), cb=self._on_join),
            await self.nc.subscribe(self.subjects.claim, "workers", cb=self._on_claim),
            await self.nc.subscribe(self.subjects.worker(self.id), cb=self._on_request),
            await self.nc.subscribe(self.subjects.inbox(self.id), cb=self._on_inbox),
            await self.nc.subscribe(self.subjects.release, cb=self._on_release),
            await self.nc.subscribe(self.subjects.presence, cb=self._on_presence),
            await self.nc.subscribe(self.subjects.gateway_heartbeats, cb=self._on_gateway_beat),
            await self.nc.subscribe(self.subjects.admin, "workers", cb=self._on_admin),
            await self.nc.subscribe(self.subjects.bans, cb=self._on_bans),
            await self.nc.subscribe(
                watch_worker_subject(self.subjects.prefix, self.id), cb=self._on_watched
            ),
        ]
        if install_signals:
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, self.drain)
        loops = [
            asyncio.create_task(self._tick_loop()),
            asyncio.create_task(self._lease_loop()),
            asyncio.create_task(self._heartbeat_loop()),
            asyncio.create_task(self._lobby_loop()),
            asyncio.create_task(self.bans.keep_fresh()),
        ]
        log.info("worker %s ready (seed %d)", self.id, self.seed)
        if ready is not None and not ready.done():
            ready.set_result(self.id)
        await self._stop.wait()
        for sub in subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        for task in loops:
            task.cancel()
        await asyncio.gather(*loops, return_exceptions=True)
        await self._drain_out()
        with contextlib.suppress(Exception):  # NATS may be gone: do not hang
            await asyncio.wait_for(self.nc.drain(), NATS_GRACE_S)
        await self.chars.close()

    def drain(self) -> None:
        """Stop taking players, then save and hand every one back (see :meth:`run`)."""
        self.draining = True
        self._stop.set()

    def not_ready(self) -> str | None:
        """None while this worker takes players (``/readyz`` 200): connected
        to NATS and PostgreSQL, ticking, not draining; else why not."""
        if self.draining:
            return "draining"
        if not self._ticked:
            return "starting"
        if not self.nc.is_connected:
            return "nats disconnected"
        if self.chars.conn.broken or self.chars.conn.closed:
            return "database disconnected"
        return None

    def figures(self) -> WorkerFigures:
        """This worker's figures now (read by :attr:`metrics` when scraped)."""
        started = self._ticked
        st = self.stats
        return WorkerFigures(
            players=len(self.seats),
            levels_held=len(self.leases.held) if started else 0,
            tick=self.world.tick if started else 0,
            frame_messages=st.frames,
            frame_bytes=st.frame_bytes,
            refused_saves=st.refused_saves,
            nats_connected=started and self.nc.is_connected,
        )

    async def _nats_error(self, exc: Exception) -> None:
        """nats-py's error callback: an error on the connection itself."""
        self.metrics.count("nats_errors", "client")
        log.warning("worker %s: NATS: %r", self.id, exc)

    async def _nats_disconnected(self) -> None:
        if self._stop.is_set():
            return  # our own drain closed it
        self.metrics.count("nats_disconnects")
        log.warning("worker %s: NATS disconnected (reconnecting)", self.id)

    async def _drain_out(self) -> None:
        """Save every held character (fenced), tell its gateway to seat it
        again elsewhere, and release the leases (so another worker claims
        the levels at once instead of after the lease time)."""
        pending = [t for t in self._tasks if not t.done()]
        if pending:
            await asyncio.wait(pending, timeout=10.0)
        rows = self._character_rows()
        refused: set[str] = set()
        for attempt in range(10):
            try:
                refused = await self.chars.save(rows)
                break
            except Exception as exc:
                self.metrics.failed("final_save", exc)
                log.exception("final save failed (attempt %d)", attempt + 1)
                await asyncio.sleep(1.0)
        with contextlib.suppress(Exception):
            await self.chars.save_levels(self._level_rows(self.world.tick))
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.leases.release_all(), NATS_GRACE_S)
        for aid, seat in list(self.seats.items()):
            if seat.name not in refused:
                await self.nc.publish(
                    self.subjects.gateway(seat.session.gateway),
                    encode(Lost(aid, seat.session.epoch)),
                )
        log.info("worker %s drained: %d players saved", self.id, len(rows) - len(refused))
        self._report()
        self.host.seats.clear()
        self.host.by_name.clear()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.nc.flush(), NATS_GRACE_S)

    def _report(self) -> None:
        """Log this worker's figures since it started (bench/cluster.py reads
        the last such line)."""
        st = self.stats

        def pct(values: list[float], q: float) -> float:
            ordered = sorted(values)
            return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else 0.0

        log.info(
            "stats: players %d, ticks %d, tick ms p50 %.3f p99 %.3f, handoffs %d, "
            "handoff ms p50 %.1f p99 %.1f, takebacks %d, refused saves %d, "
            "frame messages %d, frame bytes %d",
            len(self.seats),
            len(st.tick_ms),
            pct(st.tick_ms, 0.5),
            pct(st.tick_ms, 0.99),
            st.handoffs,
            pct(st.handoff_ms, 0.5),
            pct(st.handoff_ms, 0.99),
            st.takebacks,
            st.refused_saves,
            st.frames,
            st.frame_bytes,
        )

    def _spawn(self, coro: Any) -> asyncio.Future[Any]:
        task: asyncio.Future[Any] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._spawned_done)
        return task

    def _spawned_done(self, task: asyncio.Future[Any]) -> None:
        """Forget a finished task of :meth:`_spawn`; log and count what it raised
        (a publish to a NATS connection that is down, most often)."""
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            assert exc is not None
            self.metrics.failed("background", exc)
            log.warning("worker %s: background step failed: %r", self.id, exc)

    def _leave(self, seat: WorkerSeat) -> None:
        """Take a player out and save it (fenced) off the tick; every worker
        tells its players it left (as ``serve`` tells everyone)."""
        self._announce(Presence(False, seat.actor_id, seat.name, self.id))
        record = self._unseat(seat.actor_id)
        self._saving_left(seat.name, self._spawn(self._save_left(seat, record)))

    def _saving_left(self, name: str, saved: asyncio.Future[Any]) -> None:
        """Note that player ``name`` left here and is being saved until
        ``saved`` is done. Meanwhile a join of the same name here waits for
        it (:meth:`_admit_join_now`): read before that save, the row would
        give the character as it was at the last checkpoint, and the save
        would then be refused (the join moved the epoch on)."""
        key = name.lower()
        self._leaving[key] = saved
        saved.add_done_callback(
            lambda f: self._leaving.pop(key) if self._leaving.get(key) is f else None
        )

    # ----------------------------------------------------------- leases

    async def _claim(self, depth: int) -> bool:
        """Take level ``depth`` if it is free, and run it from what was last
        saved of it: a copy this worker generated before (a player stepped
        onto it from here, or this worker held it once) is forgotten first.
        If the saved state cannot be read, the lease is given back (serving
        a level without it would overwrite its floors at the next save)."""
        if depth in self.leases.held:
            return True
        if self.draining or not await self.leases.claim(depth):
            return False
        try:
            fence, saved = await self.chars.claim_level(depth)
        except Exception as exc:
            self.metrics.failed("claim", exc)
            log.exception("worker %s cannot take level %d's token; giving it back", self.id, depth)
            with contextlib.suppress(Exception):
                await self.leases.release(depth)
            return False
        self.fences[depth] = fence
        if depth in self.world.levels and self.world.players_on(depth) == 0:
            self.world.forget_level(depth)
        if depth not in self.world.levels and saved is not None:
            self.world.saved_levels[depth] = saved
        log.info("worker %s holds level %d (token %d)", self.id, depth, fence)
        return True

    async def _lease_loop(self) -> None:
        while True:
            await asyncio.sleep(min(RENEW_S, self.lease_s / 5))
            try:
                lost = await self.leases.renew_all()
            except Exception:
                log.exception("renewing leases failed")
                continue
            self._drop_levels(lost)
            for depth in self.pinned:
                if depth not in self.leases.held:
                    with contextlib.suppress(Exception):
                        await self._claim(depth)

    def _drop_levels(self, depths: list[int]) -> None:
        """Stop serving ``depths`` at once: their players are dropped without
        a write and their gateways told to seat them again."""
        if not depths:
            return
        log.warning("worker %s lost levels %s", self.id, depths)
        self.metrics.count("levels_lost", by=len(depths))
        gone = set(depths)
        for depth in gone:
            self.fences.pop(depth, None)
        for aid, seat in list(self.seats.items()):
            if self.world.actors[aid].depth in gone:
                self._unseat(aid)
                self._spawn(
                    self.nc.publish(
                        self.subjects.gateway(seat.session.gateway),
                        encode(Lost(aid, seat.session.epoch)),
                    )
                )

    async def _owner_or_claim(self, depth: int) -> str | None:
        """The holder of level ``depth``; when none, some worker (any, by the
        claim queue) claims it, or this one if that queue does not answer in
        time (a stalled worker may be in it). None when a claim was lost to
        a racer not yet visible."""
        owner = await self.leases.owner_of(depth)
        if owner is not None:
            return owner
        try:
            reply = await self.nc.request(
                self.subjects.claim, encode(Claim(depth)), timeout=CLAIM_TIMEOUT_S
            )
            got = decode(reply.data, Holder).worker
            if got:
                return got
        except Exception:  # noqa: BLE001 - no worker answered in time
            log.info("claim queue silent for level %d: claiming it here", depth)
        if await self._claim(depth):
            return self.id
        return await self.leases.owner_of(depth)

    async def _on_claim(self, msg: Msg) -> None:
        try:
            depth = decode(msg.data, Claim).depth
        except ValueError:
            return
        if await self._claim(depth):
            await msg.respond(encode(Holder(self.id)))
        else:
            await msg.respond(encode(Holder(await self.leases.owner_of(depth))))

    # ----------------------------------------------------------- seats

    @property
    def seats(self) -> dict[int, WorkerSeat]:
        """The players held here, by actor id (:attr:`Host.seats`)."""
        return self.host.seats if hasattr(self, "host") else self._no_seats

    @property
    def by_name(self) -> dict[str, WorkerSeat]:
        """The players held here, by lower-cased name."""
        return self.host.by_name if hasattr(self, "host") else {}

    def _seat(self, name: str, actor_id: int, epoch: int, gateway: str) -> WorkerSeat:
        return self.host.add_seat(name, "", actor_id, Link(epoch, gateway))

    def _unseat(self, actor_id: int) -> dict[str, Any]:
        """Take a player out of the world and of the seats; its record."""
        return self.host.unseat(actor_id)[1]

    def _route(self, seat: WorkerSeat) -> None:
        """Tell the player's gateway it is held here now (before any frame)."""
        self._spawn(
            self.nc.publish(
                self.subjects.gateway(seat.session.gateway),
                encode(Route(seat.actor_id, self.id, seat.session.epoch)),
            )
        )

    # ----------------------------------------------------------- joining

    async def _on_join(self, msg: Msg) -> None:
        """A gateway's join (any worker takes it): find the level of the
        character and pass the join to that level's holder."""
        try:
            req = decode(msg.data, JoinRequest)
        except ValueError:
            log.warning("a join request that does not decode: dropped")
            return
        try:
            reply = await self._route_join(req)
        except Exception as exc:
            self.metrics.failed("join", exc)
            log.exception("join of %r failed", req.name)
            reply = JoinReply(ok=False, code="retry", detail=str(exc), retry=True)
        await msg.respond(encode(reply))

    async def _route_join(self, req: JoinRequest) -> JoinReply:
        if self.draining:
            return _DRAINING
        banned = self.bans.refusal(req.name)
        if banned is not None:  # as serve refuses it: the code, and the reason in the text
            return JoinReply(ok=False, code=banned[0], detail=banned[1])
        row = await self.chars.load(req.name)
        if row is not None:
            token = req.token
            if token is None or not hmac.compare_digest(row.token_hash, hash_token(token)):
                return _name_taken(req.name)
            depth = 1 if int(row.record.get("hp", 1)) <= 0 else max(1, int(row.record["depth"]))
        else:
            depth = 1
        owner = await self._owner_or_claim(depth)
        if owner is None:
            return JoinReply(ok=False, code="retry", detail="no holder", retry=True)
        if owner == self.id:
            key = req.name.lower()
            # Read once: the row just read is still the one to check when no
            # other join or save of this character is under way here
            # (take_charge checks its epoch again in the database).
            unchanged = key not in self._admit_locks and key not in self._leaving
            return await self._admit_join(req, row if unchanged else None)
        try:
            answer = await self.nc.request(
                self.subjects.worker(owner), encode(req), timeout=FORWARD_TIMEOUT_S
            )
            out = decode(answer.data, JoinReply)
        except Exception as exc:  # noqa: BLE001 - the holder may be dead: its lease will expire
            self.metrics.failed("request", exc)
            return JoinReply(ok=False, code="retry", detail=f"{owner} silent", retry=True)
        # The holder drains, not this worker: ask here again.
        return msgspec.structs.replace(out, draining=False) if out.draining else out

    @contextlib.asynccontextmanager
    async def _admitting(self, name: str) -> AsyncIterator[None]:
        """Hold the lock of ``name`` (any case): one join or admission of a
        character at a time, while those of other characters go on (their
        database reads and writes queue on the connection instead of each
        waiting for the one before to finish; one lock for all made a burst
        of joins a queue of about 40 a second per worker)."""
        key = name.lower()
        entry = self._admit_locks.get(key)
        if entry is None:
            entry = self._admit_locks[key] = (asyncio.Lock(), [0])
        lock, users = entry
        users[0] += 1
        try:
            async with lock:
                yield
        finally:
            users[0] -= 1
            if not users[0]:
                del self._admit_locks[key]

    async def _admit_join(self, req: JoinRequest, row: Character | None = None) -> JoinReply:
        """Seat a joining player here (this worker holds its level).

        A gateway's retry of a join whose answer it did not get in time
        carries the same ``nonce``: it gets the first answer again instead
        of a second take-over of the character. ``row``: the character's row
        as just read by this worker (None: read it here; a new character
        is always looked for again).
        """
        async with self._admitting(req.name):
            nonce = req.nonce
            if nonce in self._answers:
                return self._answers[nonce]
            answer = await self._admit_join_now(req, row)
            if answer.ok:
                self._answers[nonce] = answer
                while len(self._answers) > ANSWERS_KEPT:
                    del self._answers[next(iter(self._answers))]
            return answer

    async def _admit_join_now(self, req: JoinRequest, read: Character | None) -> JoinReply:
        if self.draining:
            return _DRAINING
        name, gateway, token = req.name, req.gw, req.token
        leaving = self._leaving.get(name.lower())
        if leaving is not None:  # it just left here: read it as that save left it
            await asyncio.wait([leaving], timeout=LEAVE_WAIT_S)
            if not leaving.done():  # the database is slow: the gateway asks again
                return JoinReply(ok=False, code="retry", detail="still saving", retry=True)
            read = None
        row = read if read is not None else await self.chars.load(name)
        if row is None:
            if not req.create:  # the gateway's new-characters cap
                return JoinReply(ok=False, code=ErrorCode.LIMITED.value, detail=NEW_CHARS_LIMITED)
            return await self._create(name, req.cls, gateway)
        if token is None or not hmac.compare_digest(row.token_hash, hash_token(token)):
            return _name_taken(name)
        taken = await self.chars.take_charge(row.name, row.epoch)
        if taken is None or taken.actor_id is None:
            return JoinReply(ok=False, code="retry", detail="raced", retry=True)
        held = self.by_name.get(row.name.lower())  # looked up after the await
        if held is not None:  # here already (a reconnect): keep its live state
            if held.session.gateway != gateway:  # through another gateway: close the old connection
                self._replaced(held)
            held.session.epoch, held.session.gateway = taken.epoch, gateway
            self.host.reseat(held, held.session)  # a fresh view: a snapshot next
            seat = held
        else:
            try:
                self.world.join(taken.name, record=taken.record, actor_id=taken.actor_id)
            except LookupError:
                return _NO_ROOM
            seat = self._seat(taken.name, taken.actor_id, taken.epoch, gateway)
            self._announce(Presence(True, taken.actor_id, taken.name, self.id))
        # Whoever else still holds it (under an older epoch) drops it.
        await self.nc.publish(self.subjects.release, encode(Release(taken.name, taken.epoch)))
        return self._joined(seat, token, resumed=True)

    async def _create(self, name: str, cls: str | None, gateway: str) -> JoinReply:
        key = cls or "warrior"
        klass = self.world.content.classes.get(key)
        if klass is None or klass.hidden:
            known = ", ".join(k for k, c in self.world.content.classes.items() if not c.hidden)
            detail = f"no class {key!r} (classes: {known})"
            return JoinReply(ok=False, code=ErrorCode.BAD_CLASS.value, detail=detail)
        aid = await self.chars.new_actor_id()
        try:
            actor = self.world.join(name, key, actor_id=aid)
        except LookupError:
            return _NO_ROOM
        token = secrets.token_urlsafe(24)
        if not await self.chars.create(
            name, hash_token(token), actor.to_record(), self.world.tick, aid
        ):
            self.world.leave(aid)
            return _name_taken(name)
        seat = self._seat(name, aid, 1, gateway)
        self._announce(Presence(True, aid, name, self.id))
        return self._joined(seat, token, resumed=False)

    def _joined(self, seat: WorkerSeat, token: str | None, resumed: bool) -> JoinReply:
        self._route(seat)
        welcome = encode_server(self.host.welcome(seat, token, resumed))
        self.metrics.count("joins", "resumed" if resumed else "new")
        log.info("%s joined on %s (epoch %d)", seat.name, self.id, seat.session.epoch)
        return JoinReply(
            ok=True, welcome=welcome, worker=self.id, epoch=seat.session.epoch, actor=seat.actor_id
        )

    async def _on_request(self, msg: Msg) -> None:
        try:
            req = WORKER_REQUEST.decode(msg.data)
        except ValueError:
            log.warning("a request that does not decode: dropped")
            return
        reply: JoinReply | AdmitReply
        try:
            if isinstance(req, JoinRequest):
                reply = await self._admit_join(req)
            else:
                reply = await self._admit_hand_off(req)
        except Exception as exc:
            admitting = isinstance(req, AdmitRequest)
            self.metrics.failed("admit" if admitting else "join", exc)
            log.exception("request %r failed", type(req).__name__)
            reply = (
                AdmitReply(ok=False, code=str(exc))
                if admitting
                else JoinReply(ok=False, code="retry", detail=str(exc), retry=True)
            )
        await msg.respond(encode(reply))

    async def _admit_hand_off(self, req: AdmitRequest) -> AdmitReply:
        """Admit a player handed off to a level of ours, keyed on (name,
        epoch): asking twice admits once and answers yes twice."""
        started = time.perf_counter()
        name, epoch = req.name, req.epoch
        async with self._admitting(name):
            held = self.by_name.get(name.lower())
            if held is not None and held.session.epoch == epoch:
                return AdmitReply(ok=True)  # asked again: admitted (and counted) once
            answer = await self._admit_hand_off_now(req, name, epoch, held)
        if answer.ok:
            self.metrics.count("handoffs", "in", "admitted")
            self.metrics.observe("handoff_seconds", time.perf_counter() - started, "in")
        else:
            self.metrics.count("handoffs", "in", "refused")
        return answer

    async def _admit_hand_off_now(
        self, req: AdmitRequest, name: str, epoch: int, held: WorkerSeat | None
    ) -> AdmitReply:
        """:meth:`_admit_hand_off` of a player not admitted yet (under the lock)."""
        if self.draining:
            return AdmitReply(ok=False, code="draining")
        row = await self.chars.load(name)
        if row is None or row.epoch != epoch or row.actor_id is None:
            return AdmitReply(ok=False, code="stale")
        depth = int(row.record["depth"])
        if depth not in self.leases.held:
            return AdmitReply(ok=False, code="not_holder")
        if held is not None:  # an older epoch of it is still here: that one is stale
            self._unseat(held.actor_id)
        try:
            self.world.join(row.name, record=row.record, actor_id=row.actor_id)
        except LookupError:
            return AdmitReply(ok=False, code="full")
        self.world.actors[row.actor_id].last_tag = req.ack
        self._quiet.add(row.actor_id)
        seat = self._seat(row.name, row.actor_id, epoch, req.gw)
        if 0 < req.tick - self.world.tick <= HOLD_TICKS:
            seat.session.hold_until = req.tick
        self._route(seat)
        self._resubmit(seat, req.pending)
        seat.session.turns = req.turns  # the commands resubmitted were counted there
        return AdmitReply(ok=True)

    async def _on_release(self, msg: Msg) -> None:
        try:
            release = decode(msg.data, Release)
        except ValueError:
            return
        name, epoch = release.name, release.epoch
        seat = self.by_name.get(name.lower())
        if seat is not None and seat.session.epoch < epoch:
            log.info("%s is held elsewhere now (epoch %d): dropped", seat.name, epoch)
            self._replaced(seat)
            self._quiet.add(seat.actor_id)
            self._unseat(seat.actor_id)

    # ----------------------------------------------------------- bans

    async def _on_admin(self, msg: Msg) -> None:
        """An operator's ``ban``, ``unban`` or ``bans`` from a gateway (``P.admin``)."""
        try:
            req = ADMIN_REQUEST.decode(msg.data)
        except ValueError:
            return
        answer = await self.bans.answer(req)
        if msg.reply:
            await msg.respond(encode(answer))

    async def _on_bans(self, msg: Msg) -> None:
        """The bans changed (``P.bans``): apply it, and read the list again."""
        with contextlib.suppress(ValueError):
            self.bans.heard(BAN_NOTICE.decode(msg.data))

    # ----------------------------------------------------------- players' messages

    async def _on_inbox(self, msg: Msg) -> None:
        try:
            events = decode(msg.data, Inbound).events
        except ValueError:
            return
        for event in events:
            seat = self.seats.get(event.actor)
            if seat is None or seat.session.epoch != event.epoch:
                continue  # not ours (any more): a late message of a moved player
            if isinstance(event, FromClient):
                self._client_message(seat, event.data)
            elif isinstance(event, Leave):
                self._leave(seat)
            else:
                seat.view.needs_snapshot = True

    async def _save_left(self, seat: WorkerSeat, record: dict[str, Any]) -> None:
        for _ in range(5):
            try:
                if await self.chars.save(
                    [(seat.name, seat.session.epoch, record, self.world.tick)]
                ):
                    self.stats.refused_saves += 1
                return
            except Exception as exc:
                self.metrics.failed("save", exc)
                log.exception("saving %s failed", seat.name)
                await asyncio.sleep(1.0)

    def _client_message(self, seat: WorkerSeat, raw: bytes) -> None:
        try:
            msg = decode_client(raw)
        except ProtocolError:
            return  # the gateway checked it: nothing to do
        if isinstance(msg, Command):
            seat.session.turns += 1
            with contextlib.suppress(ValueError, KeyError):
                if self.host.carry_out(seat.actor_id, msg):
                    seat.session.sent.append((msg.seq, raw))
        elif isinstance(msg, Look):
            self._extra_to(seat, self.host.look(seat.actor_id, msg.id))
        elif isinstance(msg, Chat):  # level chat (the gateway carries global and private)
            hearers, said = self.host.chat(seat.actor_id, msg.text, "level")
            out = encode_server(said)
            for aid in hearers:
                link = self.seats[aid].session
                self._extra.setdefault(link.gateway, []).append((aid, link.epoch, out))

    def _replaced(self, seat: WorkerSeat) -> None:
        """Tell ``seat``'s gateway its connection is replaced by a newer one
        of the character (a gateway whose player has a newer epoch ignores it)."""
        notice = encode(Replaced(seat.actor_id, seat.session.epoch))
        self._spawn(self._publish(self.subjects.gateway(seat.session.gateway), notice))

    def _announce(self, presence: Presence) -> None:
        """Tell the other workers a player entered or left the dungeon here
        (this world's own event tells this worker's players)."""
        self._spawn(self._publish(self.subjects.presence, encode(presence)))

    async def _publish(self, subject: str, data: bytes) -> None:
        with contextlib.suppress(Exception):  # NATS gone: the heartbeats tell
            await self.nc.publish(subject, data)

    async def _on_presence(self, msg: Msg) -> None:
        """A player entered or left the dungeon on some worker: this worker's
        players are told with the next tick, as ``serve`` tells everyone."""
        try:
            presence = decode(msg.data, Presence)
        except ValueError:
            return
        if presence.worker == self.id or presence.actor in self.seats:
            return  # told already by our world's own event; or stale
        kind = Joined if presence.joined else Left
        self._heard.append(kind(presence.actor, presence.name))

    def _presence(self, events: list[Event]) -> list[Event]:
        """The tick's ``events``, less the joins and leaves that are moves
        between workers, plus those heard from the other workers."""
        quiet = self._quiet
        if quiet:
            kept: list[Event] = []
            for e in events:
                if isinstance(e, Joined | Left) and e.actor in quiet:
                    quiet.discard(e.actor)
                    continue
                kept.append(e)
            events = kept
        if self._heard:  # heard before this tick's own: told first
            events = [*self._heard, *events]
            self._heard = []
        return events

    def _resubmit(self, seat: WorkerSeat, pending: list[bytes]) -> None:
        """Queue the commands a player brought from another level, in order."""
        for raw in pending:
            self._client_message(seat, raw)

    _watched_made: dict[int, tuple[int, list[str]]] | None = None

    @property
    def _watched(self) -> dict[int, tuple[int, list[str]]]:
        """Actor id -> the epoch and the gateways, besides the player's own,
        that get its frames: those holding spectators of it (protocol 12,
        :mod:`server.cluster.watching`), as the player's gateway said last."""
        if self._watched_made is None:
            self._watched_made = {}
        return self._watched_made

    async def _on_watched(self, msg: Msg) -> None:
        """The player's gateway says which other gateways get its frames (an
        epoch not the player's here is a late word: dropped)."""
        try:
            watched = decode(msg.data, Watched)
        except ValueError:
            return
        seat = self.seats.get(watched.actor)
        if watched.gateways and seat is not None and seat.session.epoch == watched.epoch:
            self._watched[watched.actor] = (watched.epoch, watched.gateways)
        else:
            self._watched.pop(watched.actor, None)
        for aid in [a for a in self._watched if a not in self.seats]:
            del self._watched[aid]  # left, or handed to another worker

    def _extra_to(self, seat: WorkerSeat, msg: ServerMessage) -> None:
        self._extra.setdefault(seat.session.gateway, []).append(
            (seat.actor_id, seat.session.epoch, encode_server(msg))
        )

    # ----------------------------------------------------------- ticking

    async def _on_worker_beat(self, msg: Msg) -> None:
        if msg.subject.rsplit(".", 1)[1] == self.id:
            return
        with contextlib.suppress(ValueError):
            tick = decode(msg.data, Heartbeat).tick
            if self._cluster_tick is None or tick > self._cluster_tick[0]:
                self._cluster_tick = (tick, time.monotonic())

    async def _align_tick(self) -> None:
        """Start this world at the cluster's tick: the highest another worker
        beat with, plus the ticks since (waiting up to :data:`ALIGN_WAIT_S`
        for one), or, when no worker beats, just after the latest tick the
        database holds (:meth:`~server.store.base.Store.last_tick`). Workers
        then tick at one rate, so a player handed from one to another sees
        its ``tick`` go on (each world had started at 0: a player's tick
        jumped back or ahead at the stairs), and a character's spells are
        forgotten on time across restarts."""
        deadline = time.monotonic() + ALIGN_WAIT_S
        while self._cluster_tick is None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if self._cluster_tick is not None:
            tick, heard = self._cluster_tick
            now = tick + int((time.monotonic() - heard) * self.tick_rate)
            if now > self.world.tick:
                log.info("worker %s starts at the cluster's tick %d", self.id, now)
                self.world.tick = now
        elif self._saved_tick > self.world.tick:
            # No worker beats: the cluster starts (again). Its clock goes on
            # from the database's latest, as a restarted serve's does.
            self.world.tick = self._saved_tick + 1
            log.info("worker %s starts after the saved tick %d", self.id, self._saved_tick)

    async def _on_gateway_beat(self, msg: Msg) -> None:
        self._gateway_beats[msg.subject.rsplit(".", 1)[1]] = time.monotonic()

    async def _heartbeat_loop(self) -> None:
        """Say that this worker lives; let go of the players of dead gateways."""
        while True:
            try:
                await self.nc.publish(
                    self.subjects.heartbeat(self.id),
                    encode(Heartbeat(self.world.tick, len(self.seats))),
                )
            except Exception as exc:  # noqa: BLE001 - NATS is down: counted, tried again
                self.metrics.failed("heartbeat", exc)
            now = time.monotonic()
            for aid, seat in list(self.seats.items()):
                # A gateway not heard of yet is given GATEWAY_SILENT_S from now.
                heard = self._gateway_beats.setdefault(seat.session.gateway, now)
                if now - heard > GATEWAY_SILENT_S:
                    log.warning(
                        "gateway %s silent: %s saved and unseated", seat.session.gateway, seat.name
                    )
                    self._leave(seat)
            await asyncio.sleep(HEARTBEAT_S)

    def lobby_report(self) -> LobbyReport:
        """Who plays here, for the gateways' lobby: every player held here
        counted, the first :data:`~server.net.web.LOBBY_ROWS` of them in
        :func:`~server.net.web.lobby_order` listed (name, class, level,
        depth, turns), as ``serve`` lists its own."""
        actors = self.world.actors
        rows = [
            LobbyPlayer(actor.name, actor.cls or "", actor.level, actor.depth, seat.session.turns)
            for aid, seat in self.seats.items()
            if (actor := actors.get(aid)) is not None
        ]
        if len(rows) > LOBBY_ROWS:
            rows = heapq.nsmallest(
                LOBBY_ROWS, rows, key=lambda r: lobby_order(r.level, r.depth, r.name)
            )
        return LobbyReport(len(self.seats), rows)

    async def _lobby_loop(self) -> None:
        """Publish :meth:`lobby_report` every :data:`~server.cluster.bus.LOBBY_EVERY_S`."""
        subject = self.subjects.lobby_report(self.id)
        while True:
            await self._publish(subject, encode(self.lobby_report()))
            await asyncio.sleep(LOBBY_EVERY_S)

    async def _tick_loop(self) -> None:
        loop = asyncio.get_running_loop()
        period = 1.0 / self.tick_rate
        next_t = loop.time()
        while True:
            next_t += period
            delay = next_t - loop.time()
            late = delay <= 0
            if not late:
                await asyncio.sleep(delay)
            else:
                if delay < -5 * period:
                    next_t = loop.time()
                await asyncio.sleep(0)
            started = time.perf_counter()
            try:
                # A collection that comes due while the tick builds every
                # player's frame would walk all of them: it waits for the
                # tick's end (as in `underhall serve`, whose collector is
                # also paced; a worker's stays automatic).
                with collector.held():
                    self._tick()
            except Exception:  # a bug in the rules must not take the worker down
                log.exception("tick %d failed", self.world.tick)
            seconds = time.perf_counter() - started
            self._ticked = True
            self.metrics.tick(seconds, late)
            self.stats.tick_ms.append(seconds * 1000.0)
            if len(self.stats.tick_ms) > 100_000:
                del self.stats.tick_ms[:50_000]

    def _tick(self) -> None:
        """One tick: step, hand off who left our levels, send the frames,
        checkpoint now and then."""
        self._drop_levels(self.leases.expired())  # a stalled loop must not act on old leases
        world = self.world
        out = self._extra
        self._extra = {}
        seats = self.seats
        tick = world.tick + 1  # the tick the step below makes
        # Its last worker was ahead: no frame of a tick of ours it has passed.
        held_back = {aid for aid, seat in seats.items() if tick <= seat.session.hold_until}

        watched = self._watched

        def send(batch: list[tuple[int, ServerMessage]]) -> None:
            for aid, msg in batch:
                link = seats[aid].session
                entry = (aid, link.epoch, encode_server(msg))
                out.setdefault(link.gateway, []).append(entry)
                if watched and aid in watched:
                    epoch, gateways = watched[aid]
                    if epoch == link.epoch:  # the same bytes to the spectators' gateways
                        for gateway in gateways:
                            out.setdefault(gateway, []).append(entry)

        self.host.step(held_back, send, events=self._presence, stepped=self._leave_levels)
        for gateway, frames in out.items():
            subject = self.subjects.gateway(gateway)
            for payload in batches(frames):
                self.stats.frames += 1
                self.stats.frame_bytes += len(payload)
                self._spawn(self.nc.publish(subject, payload))
        if world.tick % self.save_every == 0 and not self._saving:
            self._checkpoint()

    def _leave_levels(self) -> None:
        """After the world stepped: hand off every player now standing on a
        level this worker does not hold (before any frame is built for it),
        and keep the spare levels."""
        world = self.world
        held = self.leases.held
        for aid in [a for a in self.seats if world.actors[a].depth not in held]:
            seat = self.seats[aid]
            came_from = seat.view.depth
            pending = self.queued_commands(seat)
            ack = world.actors[aid].last_tag
            self._quiet.add(aid)
            record = self._unseat(aid)
            saved: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._saving_left(seat.name, saved)
            self._spawn(self._hand_off(seat, record, came_from, saved, pending, ack))
        self._keep_spares([d for d in world.levels if d not in held and world.players_on(d) == 0])

    def _keep_spares(self, spare: list[int]) -> None:
        """Forget all but the :data:`SPARE_LEVELS` newest of the levels
        this worker does not hold and nobody stands on (``spare``).

        Such a level was generated when a player stepped onto it from here;
        its holder runs it. It is kept a while because the next player to
        take the same stairs would need it again (generating a level costs
        several ms of the tick: forgetting every spare at once made each
        stair trip cost the sender a generation), and forgotten when more
        pile up; if this worker claims it, it is reloaded from what was
        saved (:meth:`_claim`)."""
        now = set(spare)
        for depth in [d for d in self._spares if d not in now]:
            del self._spares[depth]
        for depth in spare:
            self._spares.setdefault(depth, None)
        while len(self._spares) > SPARE_LEVELS:
            depth = next(iter(self._spares))
            del self._spares[depth]
            self.world.forget_level(depth)

    def _checkpoint(self) -> None:
        """Hand the database every held character and held level as they are
        at this tick (fenced; written off the tick). The records are taken
        as ``serve``'s checkpoints take them (:meth:`Host.take_record`): a
        map memory or steady record that did not change since the last
        checkpoint is not packed again."""
        self._saving = True
        self._spawn(
            self._write_checkpoint(self._character_rows(), self._level_rows(self.world.tick))
        )

    def _character_rows(self) -> list[tuple[str, int, bytes, int]]:
        """``(name, epoch, packed record, tick)`` of every held character, now."""
        tick = self.world.tick
        pending = Checkpoint(tick)
        epochs = []
        for seat in self.seats.values():
            self.host.take_record(seat, pending)
            epochs.append(seat.session.epoch)
        pending.compress(len(pending.parts), len(pending.names))
        return [
            (name, epoch, blob, tick)
            for name, epoch, blob in zip(pending.names, epochs, pending.blobs, strict=True)
        ]

    def _level_rows(self, tick: int) -> list[tuple[int, int, dict[str, Any], int]]:
        """``(depth, token, record, tick)`` of every held level generated here."""
        return [
            (d, self.fences[d], self.world.level_record(d), tick)
            for d in sorted(self.leases.held)
            if d in self.world.levels and d in self.fences
        ]

    async def _write_checkpoint(
        self,
        rows: list[tuple[str, int, bytes, int]],
        levels: list[tuple[int, int, dict[str, Any], int]],
    ) -> None:
        started = time.perf_counter()
        try:
            refused = await self.chars.save(rows)
            written = [lv for lv in levels if lv[0] in self.leases.held]
            taken = await self.chars.save_levels(written)
        except Exception as exc:
            self.metrics.failed("checkpoint", exc)
            log.exception("checkpoint failed")
            return
        finally:
            self._saving = False
        self.metrics.checkpoint(
            time.perf_counter() - started, len(rows) - len(refused), len(written) - len(taken)
        )
        tokens = {lv[0]: lv[1] for lv in levels}
        lost = [d for d in taken if self.fences.get(d) == tokens[d]]
        if lost:  # another worker took charge of them: our lease is gone too
            for depth in lost:
                self.stats.refused_saves += 1
                self.leases.forget(depth)
            log.warning("worker %s: level saves refused %s (taken over)", self.id, lost)
            self._drop_levels(lost)
        epochs = {r[0]: r[1] for r in rows}
        for name in refused:
            self.stats.refused_saves += 1
            seat = self.by_name.get(name.lower())
            if seat is not None and seat.session.epoch == epochs[name]:
                log.warning("%s: save refused (held elsewhere now): dropped", name)
                self._unseat(seat.actor_id)

    # ----------------------------------------------------------- hand-off

    def queued_commands(self, seat: WorkerSeat) -> list[bytes]:
        """The commands of ``seat`` still waiting in the world's queue, as its
        client sent them, in order: what a player who leaves for another
        worker's level asked for and has not had carried out (``serve``
        carries them out on the new level; docs/protocol.md, "The keys of a
        ``cmd``")."""
        actor = self.world.actors.get(seat.actor_id)
        if actor is None:
            return []
        waiting = {tag for tag, _ in actor.queue}
        return [raw for seq, raw in seat.session.sent if seq in waiting]

    async def _hand_off(
        self,
        seat: WorkerSeat,
        record: dict[str, Any],
        came_from: int,
        saved: asyncio.Future[None],
        pending: list[bytes],
        ack: int,
    ) -> None:
        """Pass a player who left our levels to the holder of its new level
        (issue 14's steps 1-7; step 1, taking it out of the world, is done),
        with the commands it still had queued (``pending``, as sent) and the
        ``seq`` of the last one carried out (``ack``: the new level's
        snapshot acknowledges it, as ``serve``'s does).
        ``saved`` is done once step 2's write is (see :meth:`_saving_left`)."""
        started = time.perf_counter()
        gw = self.subjects.gateway(seat.session.gateway)
        depth = int(record["depth"])
        try:
            await self.nc.publish(gw, encode(Moving(seat.actor_id, seat.session.epoch)))
            # step 2: save with the new depth under epoch + 1, fenced
            ok = await self.chars.hand_off(seat.name, seat.session.epoch, record, self.world.tick)
        except Exception as exc:
            self.metrics.failed("handoff", exc)
            log.exception("hand-off save of %s failed", seat.name)
            # The row may be as it was: keep the player, on its old level.
            await self._take_back(
                seat, seat.session.epoch, record, came_from, pending, ack, fenced=False
            )
            return
        finally:
            saved.set_result(None)
        if not ok:
            self.stats.refused_saves += 1
            self.metrics.count("handoffs", "out", "dropped")
            log.warning("%s: hand-off refused (held elsewhere now): dropped", seat.name)
            return
        epoch = seat.session.epoch + 1
        request = AdmitRequest(
            seat.name,
            epoch,
            seat.session.gateway,
            seat.actor_id,
            pending,
            ack,
            self.world.tick,
            seat.session.turns,
        )
        for attempt in range(ADMIT_TRIES):
            owner = await self._owner_or_claim(depth)  # step 3
            if owner is not None:
                try:  # step 4: admission, keyed on (name, epoch)
                    if owner == self.id:
                        answer = await self._admit_hand_off(request)
                    else:
                        reply = await self.nc.request(
                            self.subjects.worker(owner), encode(request), timeout=ADMIT_TIMEOUT_S
                        )
                        answer = decode(reply.data, AdmitReply)
                except Exception as exc:  # noqa: BLE001 - timed out: ask again
                    self.metrics.failed("handoff", exc)
                    answer = AdmitReply(ok=False, code=repr(exc))
                if answer.ok:  # steps 5 and 6: the holder routes and snapshots
                    seconds = time.perf_counter() - started
                    self.metrics.count("handoffs", "out", "admitted")
                    self.metrics.observe("handoff_seconds", seconds, "out")
                    self.stats.handoffs += 1
                    self.stats.handoff_ms.append(seconds * 1000.0)
                    if len(self.stats.handoff_ms) > 100_000:
                        del self.stats.handoff_ms[:50_000]
                    return
                if answer.code == "stale":
                    # Someone else took charge of it since. Should nobody hold
                    # it after all, its gateway (still on this epoch) seats it
                    # again; if another holds it, the gateway has moved on.
                    log.warning("%s: admission to %s refused: stale", seat.name, owner)
                    self.metrics.count("handoffs", "out", "dropped")
                    await self.nc.publish(gw, encode(Lost(seat.actor_id, seat.session.epoch)))
                    return
                log.warning(
                    "%s: admission to %s failed (%s), attempt %d",
                    seat.name, owner, answer.code, attempt + 1,
                )  # fmt: skip
            await asyncio.sleep(0.2 * (attempt + 1))
        await self._take_back(seat, epoch, record, came_from, pending, ack, fenced=True)  # step 7

    async def _take_back(
        self,
        seat: WorkerSeat,
        epoch: int,
        record: dict[str, Any],
        came_from: int,
        pending: list[bytes],
        ack: int,
        *,
        fenced: bool,
    ) -> None:
        """Seat the player again here, on the level it came from, under a new
        epoch (only if nobody admitted it meanwhile)."""
        back = {**record, "depth": came_from, "x": -1, "y": -1}
        if fenced:
            try:
                if not await self.chars.take_back(seat.name, epoch, back, self.world.tick):
                    self.metrics.count(
                        "handoffs", "out", "admitted"
                    )  # after all: the other holder has it
                    return
            except Exception as exc:
                self.metrics.failed("takeback", exc)
                self.metrics.count("handoffs", "out", "dropped")
                log.exception("take-back of %s failed", seat.name)
                return
            new_epoch = epoch + 1
        else:
            new_epoch = seat.session.epoch
        try:
            self.world.join(seat.name, record=back, actor_id=seat.actor_id)
        except (LookupError, ValueError):
            self.metrics.count("handoffs", "out", "dropped")
            log.exception("take-back of %s found no room", seat.name)
            await self.nc.publish(
                self.subjects.gateway(seat.session.gateway), encode(Lost(seat.actor_id, new_epoch))
            )
            return
        self.stats.takebacks += 1
        self.metrics.count("handoffs", "out", "taken_back")
        self.world.actors[seat.actor_id].last_tag = ack
        self._quiet.add(seat.actor_id)
        again = self._seat(seat.name, seat.actor_id, new_epoch, seat.session.gateway)
        self._route(again)
        self._resubmit(again, pending)
        again.session.turns = seat.session.turns  # the commands resubmitted were counted


async def _no_websocket(conn: ServerConnection) -> None:
    """The metrics port's websocket handler: never called, since
    :meth:`WorkerMetrics.process_request` answers every request."""
    await conn.close()
