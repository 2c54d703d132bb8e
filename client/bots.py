"""Load-test bots: N scripted players in one process, and the report they produce.

Each bot is a real client: its own :class:`~client.connection.Connection` and
:class:`~client.model.GameModel`, fed by the server like the terminal UI's
model. A bot acts only when its previous command was answered (acknowledged
or rejected) or after :data:`ACK_TIMEOUT_S`, so it plays at its character's
own speed instead of filling the server's command queue.

The policy (:class:`Policy`) is explore-and-fight: attack an adjacent monster,
else step toward the nearest visible monster, else toward the nearest
reachable unknown cell (the frontier), else toward known down stairs, else a
random step. Path finding is python-tcod's Dijkstra over the remembered map
(``[y, x]``, 8-directional), run only when the bot is about to act; a frontier
path is reused until its goal is seen or its next cell is blocked.

Entry points: :func:`run_bots` (blocking, for the ``underhall bots`` command;
returns an exit status) and :func:`run_bots_async` (returns a
:class:`BotReport`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from array import array
from collections import deque
from collections.abc import Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import tcod.path
from numpy.typing import NDArray

from client.connection import Connection, ConnectionClosed, load_token, save_token
from client.model import GameModel
from protocol.errors import ProtocolError
from protocol.limits import NAME_RE
from protocol.messages import Delta, Error, Reject, Snapshot

ACK_TIMEOUT_S = 1.0
"""Seconds a bot waits for its last command to be answered before acting anyway."""

STAIRS_CHANCE = 0.25
"""Chance that a bot standing on down stairs takes them when it acts."""

REST_BELOW = 0.3
"""A bot with no monster in view rests while its hp is below this share of max."""

CHASE_RADIUS = 10
"""Cells around the bot searched when stepping toward a visible monster."""

CROWD_COST = 5
"""Path cost of a cell another player stands on; a free cell costs 1."""

FRONTIER_SPREAD = 8
"""Largest random handicap (steps) of a frontier cell, so bots fan out."""

MAX_ERROR_MESSAGES = 5
"""Distinct protocol error messages kept for the report."""

UNKNOWN = 255
DOOR_CLOSED = 3
LAVA = 6
STAIRS_DOWN = 12

DIRECTIONS: tuple[tuple[int, int], ...] = (
    (0, -1), (1, -1), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1),
)  # fmt: skip
"""The eight ``(dx, dy)`` steps, clockwise from north."""

Cell = tuple[int, int]
"""A cell as ``(x, y)``."""

BoolGrid = NDArray[np.bool_]

_UNREACHED = int(np.iinfo(np.int32).max)


# --- policy: pure parts -------------------------------------------------------


class ActorLike(Protocol):
    """What the policy reads of an actor record (:class:`client.model.ActorView`)."""

    @property
    def id(self) -> int: ...
    @property
    def x(self) -> int: ...
    @property
    def y(self) -> int: ...
    @property
    def hp(self) -> int: ...
    @property
    def is_self(self) -> bool: ...
    @property
    def is_player(self) -> bool: ...


class ModelLike(Protocol):
    """What the policy reads of a :class:`client.model.GameModel`."""

    @property
    def known(self) -> NDArray[np.uint8]: ...
    @property
    def actors(self) -> Mapping[int, ActorLike]: ...
    @property
    def me(self) -> Mapping[str, Any]: ...
    @property
    def position(self) -> Cell | None: ...
    def passable(self) -> BoolGrid: ...


@dataclass(frozen=True, slots=True)
class Action:
    """A command to send: ``c`` plus an optional direction ``d = (dx, dy)``."""

    c: str
    d: Cell | None = None


def walkable_cells(known: NDArray[np.uint8], passable: BoolGrid) -> BoolGrid:
    """Cells a bot may plan to step on: ``bool[H, W]``, indexed ``[y, x]``.

    Known passable cells plus closed doors (moving into one opens it), minus
    lava (the server refuses to step into it). Unknown cells are never walkable.
    """
    walk: BoolGrid = passable | (known == DOOR_CLOSED)
    walk &= known != LAVA
    walk &= known != UNKNOWN
    return walk


def frontier_cells(known: NDArray[np.uint8], walkable: BoolGrid) -> BoolGrid:
    """Unknown cells 8-adjacent to a walkable cell: ``bool[H, W]``, ``[y, x]``."""
    near = walkable.copy()
    near[1:, :] |= walkable[:-1, :]
    near[:-1, :] |= walkable[1:, :]
    grown = near.copy()
    grown[:, 1:] |= near[:, :-1]
    grown[:, :-1] |= near[:, 1:]
    result: BoolGrid = grown & (known == UNKNOWN)
    return result


def step_costs(walkable: BoolGrid, players: Iterable[Cell]) -> NDArray[np.int8]:
    """Path costs ``int8[H, W]`` (``[y, x]``): 0 blocked, 1 free, :data:`CROWD_COST` for
    a walkable cell another player stands on.

    Paths go around players where they can and through a crowd where they
    must: stepping into an idle player swaps places with it, a busy one
    answers ``occupied`` and the bot tries again.
    """
    cost = walkable.astype(np.int8)
    for x, y in players:
        if cost[y, x]:
            cost[y, x] = CROWD_COST
    return cost


def path_to_nearest(
    cost: NDArray[np.int8],
    goals: BoolGrid,
    start: Cell,
    radius: int | None = None,
    *,
    spread: int = 0,
    rng: np.random.Generator | None = None,
) -> list[Cell] | None:
    """Cheapest 8-directional path from ``start`` to the nearest goal cell.

    Uses python-tcod's Dijkstra map from all goals at once, then climbs it
    down from ``start``. With ``spread``, each goal starts with a random
    handicap of 0 to ``spread`` steps, so bots standing together pick
    different goals instead of queueing for the same one.

    Args:
        cost: ``int[H, W]`` cost of entering each cell, 0 = blocked (``[y, x]``).
        goals: ``bool[H, W]`` target cells; a goal need not be enterable (an
            unknown cell, a monster): the path ends on it.
        start: the ``(x, y)`` cell to leave from.
        radius: if given, search only the square window of this many cells
            around ``start``.
        spread: the largest handicap, in steps (needs ``rng``).
        rng: draws the handicaps.

    Returns:
        The cells ``(x, y)`` to step on in order, excluding ``start`` and
        ending on a goal; ``[]`` if ``start`` is a goal; None if no goal is
        reachable.
    """
    sx, sy = start
    x0 = y0 = 0
    if radius is not None:
        h, w = cost.shape
        x0, y0 = max(sx - radius, 0), max(sy - radius, 0)
        x1, y1 = min(sx + radius + 1, w), min(sy + radius + 1, h)
        cost = cost[y0:y1, x0:x1]
        goals = goals[y0:y1, x0:x1]
    if not goals.any():
        return None
    dist = tcod.path.maxarray(cost.shape, dtype=np.int32)
    if spread > 0 and rng is not None:
        dist[goals] = rng.integers(0, spread + 1, size=int(np.count_nonzero(goals)))
    else:
        dist[goals] = 0
    tcod.path.dijkstra2d(dist, cost, 1, 1, out=dist)
    local = (sy - y0, sx - x0)
    if dist[local] == _UNREACHED:
        return None
    steps = tcod.path.hillclimb2d(dist, local, True, True)
    return [(int(j) + x0, int(i) + y0) for i, j in steps[1:]]


def adjacent_monster(pos: Cell, monsters: Iterable[ActorLike]) -> Cell | None:
    """The direction ``(dx, dy)`` of the weakest monster next to ``pos``, if any.

    Ties on hp go to the lowest actor id, so the choice is deterministic.
    """
    best: tuple[int, int, Cell] | None = None
    for actor in monsters:
        dx, dy = actor.x - pos[0], actor.y - pos[1]
        if max(abs(dx), abs(dy)) != 1:
            continue
        key = (actor.hp, actor.id, (dx, dy))
        if best is None or key < best:
            best = key
    return None if best is None else best[2]


def direction(pos: Cell, nxt: Cell) -> Cell | None:
    """The step ``(dx, dy)`` from ``pos`` to the 8-adjacent ``nxt``, else None."""
    dx, dy = nxt[0] - pos[0], nxt[1] - pos[1]
    if max(abs(dx), abs(dy)) != 1:
        return None
    return (dx, dy)


def random_step(cost: NDArray[np.int8], pos: Cell, rng: np.random.Generator) -> Cell | None:
    """A uniformly chosen direction to a free neighbour of ``pos`` (cost 1), or None."""
    h, w = cost.shape
    x, y = pos
    options = [
        (dx, dy)
        for dx, dy in DIRECTIONS
        if 0 <= x + dx < w and 0 <= y + dy < h and cost[y + dy, x + dx] == 1
    ]
    if not options:
        return None
    return options[int(rng.integers(len(options)))]


class Policy:
    """One bot's decisions. Holds its RNG and its current frontier path.

    Args:
        rng: the bot's own generator (seeded per bot; never the global one).
    """

    __slots__ = ("_goal", "_path", "_wander", "rng")

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self._path: list[Cell] = []  # reversed: the next cell is the last item
        self._goal: Cell | None = None
        self._wander = False

    def reset(self) -> None:
        """Forget the plan (the level was replaced by a snapshot)."""
        self._path.clear()
        self._goal = None

    def on_reject(self) -> None:
        """The last command was refused: drop the plan, take a random step next."""
        self._path.clear()
        self._goal = None
        self._wander = True

    def decide(self, model: ModelLike) -> Action | None:
        """Choose the next command for the state in ``model``; None to do nothing.

        Nothing is chosen while the character is dead or not yet placed.
        """
        me = model.me
        pos = model.position
        if pos is None or me.get("dead", False):
            return None
        known = model.known
        actors = model.actors
        monsters = [a for a in actors.values() if not a.is_player and not a.is_self]

        target = adjacent_monster(pos, monsters)
        if target is not None:
            return Action("move", target)

        if known[pos[1], pos[0]] == STAIRS_DOWN and self.rng.random() < STAIRS_CHANCE:
            self._path.clear()
            self._goal = None
            return Action("down")

        max_hp = int(me.get("max_hp", 0))
        if not monsters and max_hp > 0 and int(me.get("hp", max_hp)) < REST_BELOW * max_hp:
            return Action("rest")

        others = [(a.x, a.y) for a in actors.values() if a.is_player and not a.is_self]
        cost = step_costs(walkable_cells(known, model.passable()), others)

        if self._wander:
            self._wander = False
            return self._random(cost, pos)

        if monsters:
            goals = np.zeros(cost.shape, dtype=np.bool_)
            for a in monsters:
                goals[a.y, a.x] = True
            path = path_to_nearest(cost, goals, pos, CHASE_RADIUS)
            if path:
                return self._step_to(path[0], cost, pos)

        nxt = self._frontier_step(known, cost, pos)
        if nxt is not None:
            return self._step_to(nxt, cost, pos, allow_unknown=True)

        path = path_to_nearest(cost, known == STAIRS_DOWN, pos)
        if path is not None:  # all explored: go down
            return self._step_to(path[0], cost, pos) if path else Action("down")
        return self._random(cost, pos)

    def _random(self, cost: NDArray[np.int8], pos: Cell) -> Action:
        step = random_step(cost, pos, self.rng)
        return Action("wait") if step is None else Action("move", step)

    def _step_to(
        self, nxt: Cell, cost: NDArray[np.int8], pos: Cell, *, allow_unknown: bool = False
    ) -> Action:
        """Step onto ``nxt`` (into a player: the server swaps us if it is idle)."""
        step = direction(pos, nxt)
        c = cost[nxt[1], nxt[0]]
        if step is None or not (c in (1, CROWD_COST) or (c == 0 and allow_unknown)):
            return self._random(cost, pos)
        return Action("move", step)

    def _frontier_step(
        self, known: NDArray[np.uint8], cost: NDArray[np.int8], pos: Cell
    ) -> Cell | None:
        """The next cell toward the nearest frontier, reusing the cached path.

        The path is kept while its goal is still unknown and its next cell is
        adjacent and enterable; otherwise it is searched again.
        """
        path = self._path
        while path and path[-1] == pos:
            path.pop()
        goal = self._goal
        if path and goal is not None and known[goal[1], goal[0]] == UNKNOWN:
            nxt = path[-1]
            if direction(pos, nxt) is not None and (cost[nxt[1], nxt[0]] > 0 or nxt == goal):
                return nxt
        frontier = frontier_cells(known, cost > 0)
        found = path_to_nearest(cost, frontier, pos, spread=FRONTIER_SPREAD, rng=self.rng)
        if not found:
            path.clear()
            self._goal = None
            return None
        self._goal = found[-1]
        self._path = found[::-1]
        return found[0]


# --- report --------------------------------------------------------------------


@dataclass(slots=True)
class BotReport:
    """What a bot run measured. Times in seconds or ms as named; bytes in B."""

    clients_requested: int = 0
    clients_connected: int = 0
    clients_at_end: int = 0
    duration_s: float = 0.0
    commands_sent: int = 0
    acks_received: int = 0
    rejects: int = 0
    deltas_received: int = 0
    snapshots_received: int = 0
    messages_received: int = 0
    bytes_received: int = 0
    bytes_per_client_s: float = 0.0
    messages_per_client_s: float = 0.0
    latency_samples: int = 0
    latency_p50_ms: float | None = None
    latency_p99_ms: float | None = None
    latency_max_ms: float | None = None
    protocol_errors: int = 0
    protocol_error_messages: list[str] = field(default_factory=list)
    connect_failures: int = 0
    connect_failure_messages: list[str] = field(default_factory=list)
    bot_errors: int = 0
    bot_error_messages: list[str] = field(default_factory=list)
    bots_moved: int = 0
    bots_saw_player: int = 0
    monsters_killed_witnessed: int = 0
    deaths: int = 0

    @property
    def ok(self) -> bool:
        """True when some client connected and no protocol error or bot bug happened."""
        return self.clients_connected > 0 and self.protocol_errors == 0 and self.bot_errors == 0

    def to_json(self) -> str:
        """The report as one JSON object on one line."""
        return json.dumps(dataclasses.asdict(self), separators=(",", ":"))

    def format_table(self) -> str:
        """The report as a readable table."""

        def ms(v: float | None) -> str:
            return "-" if v is None else f"{v:.1f}"

        def counted(n: int, messages: list[str]) -> str:
            return f"{n}  ({'; '.join(messages)})" if messages else f"{n}"

        connected = self.clients_connected
        clients = (
            f"{self.clients_requested} requested, {connected} connected, "
            f"{self.clients_at_end} still connected at end"
        )
        commands = f"{self.commands_sent} sent, {self.acks_received} acked, {self.rejects} rejected"
        messages = (
            f"{self.deltas_received} deltas, {self.snapshots_received} snapshots, "
            f"{self.messages_received} in all"
        )
        nbytes = f"{self.bytes_received:,} B in all, {self.bytes_per_client_s:,.0f} B/s per client"
        latency = (
            f"p50 {ms(self.latency_p50_ms)}  p99 {ms(self.latency_p99_ms)}  "
            f"max {ms(self.latency_max_ms)}  (n={self.latency_samples})"
        )
        rows = [
            ("clients", clients),
            ("connect failures", counted(self.connect_failures, self.connect_failure_messages)),
            ("duration", f"{self.duration_s:.1f} s"),
            ("commands", commands),
            ("messages", messages),
            ("bytes received", nbytes),
            ("message rate", f"{self.messages_per_client_s:.1f} per client per s"),
            ("cmd->effect ms", latency),
            ("protocol errors", counted(self.protocol_errors, self.protocol_error_messages)),
            ("bot errors", counted(self.bot_errors, self.bot_error_messages)),
            ("bots moved", f"{self.bots_moved} of {connected}"),
            ("saw a player", f"{self.bots_saw_player} of {connected}"),
            ("monsters killed", f"{self.monsters_killed_witnessed} (witnessed)"),
            ("deaths", f"{self.deaths}"),
        ]
        width = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


class _Totals:
    """Counters shared by all bots of a run (one event loop, so no locking)."""

    def __init__(self) -> None:
        self.commands = 0
        self.acks = 0
        self.rejects = 0
        self.deltas = 0
        self.snapshots = 0
        self.latencies = array("d")
        self.errors = 0
        self.error_messages: list[str] = []
        self.connect_failures = 0
        self.connect_messages: list[str] = []
        self.bot_errors = 0
        self.bot_error_messages: list[str] = []
        self.player_ids: set[int] = set()
        self.kills: set[tuple[int, int]] = set()  # (depth, monster id)
        self.deaths = 0

    def protocol_error(self, text: str) -> None:
        self.errors += 1
        _keep(self.error_messages, text)

    def connect_failure(self, text: str, *, protocol: bool) -> None:
        self.connect_failures += 1
        _keep(self.connect_messages, text)
        if protocol:
            self.protocol_error(f"connect: {text}")


def _keep(messages: list[str], text: str) -> None:
    """Append ``text`` to ``messages`` if new and fewer than the maximum are kept."""
    if len(messages) < MAX_ERROR_MESSAGES and text not in messages:
        messages.append(text)


# --- one bot -------------------------------------------------------------------


class _Bot:
    """A connection, its model, its policy and its pacing state."""

    def __init__(self, index: int, name: str, seed: int, totals: _Totals) -> None:
        self.name = name
        self.policy = Policy(np.random.default_rng([seed, index]))
        self.totals = totals
        self.conn: Connection | None = None
        self.model: GameModel | None = None
        self.connected_at = 0.0
        self.closed_at: float | None = None  # the server closed us before the end
        self.fatal = False
        self.busy = False
        self.last_seq: int | None = None
        self.answered = True
        self.sent_t = 0.0
        self.pending: deque[int] = deque()
        self.moved = False
        self.saw_player = False
        self.was_dead = False

    def crash(self, exc: Exception) -> None:
        """Record a bug in this bot (an exception from its own code); it stops."""
        if self.closed_at is None:
            self.closed_at = time.perf_counter()
        _keep(self.totals.bot_error_messages, f"{self.name}: {type(exc).__name__}: {exc}")
        self.totals.bot_errors += 1

    def ready(self, now: float) -> bool:
        """Whether the bot may send its next command now."""
        if self.busy or self.model is None:
            return False
        if self.answered:
            return True
        last = self.last_seq
        if last is not None and self.model.ack >= last:
            self.answered = True
            return True
        return now - self.sent_t >= ACK_TIMEOUT_S

    async def act(self) -> None:
        """If :meth:`ready`, decide and send one command (if the policy chooses one)."""
        conn, model = self.conn, self.model
        if conn is None or model is None or not self.ready(time.perf_counter()):
            return  # e.g. the reader acted while this call waited to run
        action = self.policy.decide(model)
        if action is None:
            return
        self.busy = True
        try:
            seq = await conn.command(action.c, action.d)
        except ConnectionClosed:
            return
        finally:
            self.busy = False
        self.last_seq = seq
        self.answered = False
        self.sent_t = conn.sent_at.get(seq, time.perf_counter())
        self.pending.append(seq)
        self.totals.commands += 1

    def handle(self, msg: object, now: float) -> None:
        """Apply one server message to the model and the run's counters."""
        model = self.model
        totals = self.totals
        if model is None:
            return
        if isinstance(msg, (Snapshot, Delta)):
            before = model.position
            events = model.apply(msg)
            if isinstance(msg, Delta):
                totals.deltas += 1
                if not self.moved and before is not None and model.position != before:
                    self.moved = True
            else:
                totals.snapshots += 1
                self.policy.reset()
            self._settle_acks(model.ack, now)
            if not self.saw_player:
                for a in model.actors.values():
                    if a.is_player and not a.is_self:
                        self.saw_player = True
                        totals.player_ids.add(a.id)
            dead = bool(model.me.get("dead", False))
            if dead and not self.was_dead:
                totals.deaths += 1
            self.was_dead = dead
            for ev in events:
                if ev and ev[0] == "die" and len(ev) > 1 and ev[1] not in totals.player_ids:
                    totals.kills.add((model.depth, int(ev[1])))
        elif isinstance(msg, Reject):
            totals.rejects += 1
            if msg.seq == self.last_seq:
                self.answered = True
                self.policy.on_reject()
        elif isinstance(msg, Error):
            totals.protocol_error(f"error {msg.code}: {msg.msg}")
            if msg.fatal:
                self.fatal = True

    def _settle_acks(self, ack: int, now: float) -> None:
        pending = self.pending
        if not pending or pending[0] > ack:
            return
        sent_at = self.conn.sent_at if self.conn is not None else {}
        lat = self.totals.latencies
        while pending and pending[0] <= ack:
            seq = pending.popleft()
            self.totals.acks += 1
            t = sent_at.pop(seq, None)
            if t is not None:
                lat.append(now - t)


async def _bot_life(
    bot: _Bot, url: str, start_at: float, deadline: float, open_timeout: float
) -> None:
    """Connect at ``start_at`` (perf_counter s), then read and act until cancelled."""
    totals = bot.totals
    delay = start_at - time.perf_counter()
    if delay > 0:
        await asyncio.sleep(delay)
    timeout = max(0.1, min(open_timeout, deadline - time.perf_counter()))
    try:
        conn = await Connection.open(
            url, bot.name, token=load_token(url, bot.name), open_timeout=timeout
        )
    except ConnectionClosed as exc:
        # Unreachable or too slow is a load failure; a refusal or a bad reply
        # from the server is a protocol error.
        unreachable = isinstance(exc.__cause__, (OSError, TimeoutError))
        totals.connect_failure(exc.reason, protocol=not unreachable)
        return
    if conn.welcome.token:
        # The next run with the same names resumes these characters.
        save_token(url, bot.name, conn.welcome.token)
    bot.conn = conn
    bot.model = GameModel(conn.welcome)
    bot.connected_at = time.perf_counter()
    totals.player_ids.add(conn.welcome.id)
    try:
        while True:
            try:
                msg = await conn.recv()
                now = time.perf_counter()
                bot.handle(msg, now)
            except ProtocolError as exc:  # undecodable, or a snap the model refused
                totals.protocol_error(f"bad message: {exc}")
                continue
            if bot.ready(now):
                await bot.act()
    except ConnectionClosed as exc:
        bot.closed_at = time.perf_counter()
        if not bot.fatal:
            totals.protocol_error(f"closed by server: {exc.reason}")
    except Exception as exc:  # noqa: BLE001 -- a bug in the bot: reported, this bot stops
        bot.crash(exc)
        await conn.close()


async def _act_guarded(bot: _Bot) -> None:
    """:meth:`_Bot.act` for a task of its own: a bug is reported, not lost."""
    try:
        await bot.act()
    except Exception as exc:  # noqa: BLE001 -- reported in the run's report
        bot.crash(exc)
        if bot.conn is not None:
            await bot.conn.close()


async def _watchdog(bots: list[_Bot], period: float = 0.1) -> None:
    """Let bots whose last command went unanswered for too long act anyway."""
    acting: set[asyncio.Task[None]] = set()
    try:
        while True:
            await asyncio.sleep(period)
            now = time.perf_counter()
            for bot in bots:
                if bot.conn is not None and bot.closed_at is None and bot.ready(now):
                    task = asyncio.create_task(_act_guarded(bot))
                    acting.add(task)
                    task.add_done_callback(acting.discard)
    finally:
        for task in acting:
            task.cancel()


async def _close_all(bots: list[_Bot], timeout: float) -> None:
    conns = [b.conn for b in bots if b.conn is not None and b.closed_at is None]
    if not conns:
        return
    closing = asyncio.gather(*(c.close() for c in conns), return_exceptions=True)
    try:
        await asyncio.wait_for(closing, timeout)
    except TimeoutError:
        pass


def _report(bots: list[_Bot], totals: _Totals, started: float, ended: float) -> BotReport:
    connected = [b for b in bots if b.conn is not None]
    client_s = sum((b.closed_at or ended) - b.connected_at for b in connected)
    nbytes = sum(b.conn.bytes_received for b in connected if b.conn is not None)
    nmsgs = sum(b.conn.messages_received for b in connected if b.conn is not None)
    report = BotReport(
        clients_requested=len(bots),
        clients_connected=len(connected),
        clients_at_end=sum(1 for b in connected if b.closed_at is None),
        duration_s=round(ended - started, 3),
        commands_sent=totals.commands,
        acks_received=totals.acks,
        rejects=totals.rejects,
        deltas_received=totals.deltas,
        snapshots_received=totals.snapshots,
        messages_received=nmsgs,
        bytes_received=nbytes,
        bytes_per_client_s=round(nbytes / client_s, 1) if client_s > 0 else 0.0,
        messages_per_client_s=round(nmsgs / client_s, 2) if client_s > 0 else 0.0,
        latency_samples=len(totals.latencies),
        protocol_errors=totals.errors,
        protocol_error_messages=list(totals.error_messages),
        connect_failures=totals.connect_failures,
        connect_failure_messages=list(totals.connect_messages),
        bot_errors=totals.bot_errors,
        bot_error_messages=list(totals.bot_error_messages),
        bots_moved=sum(1 for b in connected if b.moved),
        bots_saw_player=sum(1 for b in connected if b.saw_player),
        monsters_killed_witnessed=len(totals.kills),
        deaths=totals.deaths,
    )
    if totals.latencies:
        lat_ms = np.frombuffer(totals.latencies, dtype=np.float64) * 1000.0
        p50, p99 = np.percentile(lat_ms, [50, 99])
        report.latency_p50_ms = round(float(p50), 2)
        report.latency_p99_ms = round(float(p99), 2)
        report.latency_max_ms = round(float(lat_ms.max()), 2)
    return report


async def run_bots_async(
    url: str,
    n: int,
    duration: float,
    *,
    name_prefix: str = "bot",
    seed: int = 0,
    ramp: float | None = None,
    open_timeout: float = 5.0,
) -> BotReport:
    """Run ``n`` bots against the server at ``url`` for ``duration`` seconds.

    Bot ``i`` is named ``f"{name_prefix}{i}"`` and connects at ``i / n`` of
    the ramp (default ``min(2 s, duration / 4)``); the run ends ``duration``
    seconds after the first connect, whatever the ramp, then every
    connection is closed.

    Raises:
        ValueError: ``n`` is negative, ``duration`` is not positive, or a bot
            name would not be a valid player name.
    """
    if n < 0 or duration <= 0:
        raise ValueError(f"need n >= 0 and duration > 0, not n={n}, duration={duration}")
    for i in {0, max(n - 1, 0)}:
        if not NAME_RE.fullmatch(f"{name_prefix}{i}"):
            raise ValueError(f"bot name {name_prefix}{i!s} is not a valid player name")
    ramp_s = min(2.0, duration / 4) if ramp is None else max(0.0, ramp)
    totals = _Totals()
    bots = [_Bot(i, f"{name_prefix}{i}", seed, totals) for i in range(n)]
    started = time.perf_counter()
    deadline = started + duration
    lives = [
        asyncio.create_task(_bot_life(b, url, started + ramp_s * i / n, deadline, open_timeout))
        for i, b in enumerate(bots)
    ]
    dog = asyncio.create_task(_watchdog(bots))
    try:
        await asyncio.sleep(max(0.0, deadline - time.perf_counter()))
    finally:
        ended = time.perf_counter()
        for task in (*lives, dog):
            task.cancel()
        await asyncio.gather(*lives, dog, return_exceptions=True)
        await _close_all(bots, timeout=5.0)
    return _report(bots, totals, started, ended)


def _run(coro: Coroutine[Any, Any, BotReport]) -> BotReport:
    """Run ``coro`` on uvloop when it is installed, else on asyncio's loop."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coro)


def run_bots(
    url: str,
    n: int,
    duration: float,
    *,
    as_json: bool = False,
    name_prefix: str = "bot",
    seed: int = 0,
    ramp: float | None = None,
) -> int:
    """Run the bots (see :func:`run_bots_async`), print the report, return an exit status.

    The report is printed to stdout as a table, or with ``as_json`` as one
    JSON object on one line.

    Returns:
        0 if some client connected and no protocol error happened (no
        ``error`` message, undecodable message, or close by the server),
        else 1.

    Raises:
        ValueError: as :func:`run_bots_async`.
    """
    report = _run(run_bots_async(url, n, duration, name_prefix=name_prefix, seed=seed, ramp=ramp))
    print(report.to_json() if as_json else report.format_table(), flush=True)
    return 0 if report.ok else 1
