"""Load-test bots: N scripted players in one process.

Each bot is a real client: its own :class:`~client.connection.Connection` and
:class:`~client.model.GameModel`, fed by the server like the terminal UI's
model. A bot acts only when its previous command was answered (acknowledged
or rejected) or after :data:`ACK_TIMEOUT_S`, and, after an acknowledgement,
not before its character can act again (``me.speed`` ticks later, less a
random part of one tick, as a player pressing a key when ready would): so it
plays at its character's own speed instead of filling the server's command
queue, and the latency it reports is from a key press to its effect, not time
spent waiting in the queue. What it does is
decided by :class:`client.botpolicy.Policy`, the bots of a run sharing one
:class:`client.botmap.PartyMap`; what the run measured is a
:class:`client.botreport.BotReport`.

Entry points: :func:`run_bots` (blocking, for the ``underhall bots`` command;
returns an exit status) and :func:`run_bots_async` (returns a
:class:`BotReport`).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Coroutine
from typing import Any

import numpy as np

from client.botmap import PartyMap
from client.botpolicy import Policy
from client.botreport import BotReport, Totals, build_report, keep_message
from client.connection import Connection, ConnectionClosed, load_token, save_token
from client.model import GameModel
from protocol.errors import ProtocolError
from protocol.limits import NAME_RE
from protocol.messages import Delta, Error, Reject, Snapshot

__all__ = ["ACK_TIMEOUT_S", "BotReport", "run_bots", "run_bots_async"]

ACK_TIMEOUT_S = 1.0
"""Seconds a bot waits for its last command to be answered before acting anyway."""

BOT_CLASSES: tuple[str, ...] = ("warrior", "warrior", "mage")
"""Classes of new bot characters, bot ``i`` taking ``BOT_CLASSES[i % len]``: mages
start with a wand, so a load test also fires rays (resumed characters keep theirs)."""


# --- one bot -------------------------------------------------------------------


class _Bot:
    """A connection, its model, its policy and its pacing state."""

    def __init__(
        self,
        index: int,
        name: str,
        seed: int,
        totals: Totals,
        cls_key: str | None = None,
        party: PartyMap | None = None,
    ) -> None:
        self.name = name
        self.cls_key = cls_key
        self.policy = Policy(np.random.default_rng([seed, index]), party)
        self.pace_rng = np.random.default_rng([seed, index, 1])
        self.ready_at = 0.0
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
        self.depth: int | None = None
        self.deepest = 0

    def crash(self, exc: Exception) -> None:
        """Record a bug in this bot (an exception from its own code); it stops."""
        if self.closed_at is None:
            self.closed_at = time.perf_counter()
        keep_message(self.totals.bot_error_messages, f"{self.name}: {type(exc).__name__}: {exc}")
        self.totals.bot_errors += 1

    def ready(self, now: float) -> bool:
        """Whether the bot may send its next command now."""
        if self.busy or self.model is None:
            return False
        if self.answered:
            return now >= self.ready_at
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
            seq = await conn.command(
                action.c, action.d, item=action.item, at=action.at, spell=action.spell,
                opt=action.opt,
            )  # fmt: skip
        except ConnectionClosed:
            return
        finally:
            self.busy = False
        self.last_seq = seq
        self.answered = False
        self.sent_t = conn.sent_at.get(seq, time.perf_counter())
        self.pending.append(seq)
        self.totals.commands += 1
        if action.c in ("throw", "zap"):
            self.totals.ranged += 1
        elif action.c == "pickup":
            self.totals.pickups += 1
        by_kind = self.totals.by_kind
        by_kind[action.c] = by_kind.get(action.c, 0) + 1

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
                self._arrive(model.depth)
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
            for a in model.actors.values():
                if not a.is_player:
                    totals.monster_kinds.add(a.kind)
            for ev in events:
                if (
                    ev
                    and ev[0] == "die"
                    and len(ev) > 1
                    and isinstance(ev[1], int)
                    and ev[1] not in totals.player_ids
                ):
                    totals.kills.add((model.depth, int(ev[1])))
                else:
                    totals.own_event(ev, model.player_id)
        elif isinstance(msg, Reject):
            totals.rejects += 1
            totals.reasons[msg.reason] = totals.reasons.get(msg.reason, 0) + 1
            if msg.seq == self.last_seq:
                self.answered = True
                self.policy.on_reject(msg.reason)
        elif isinstance(msg, Error):
            totals.protocol_error(f"error {msg.code}: {msg.msg}")
            if msg.fatal:
                self.fatal = True

    def _arrive(self, depth: int) -> None:
        """Count a snapshot's depth: the deepest reached, and a descent."""
        if self.depth is not None and depth > self.depth:
            self.totals.descents += 1
        self.depth = depth
        self.deepest = max(self.deepest, depth)

    def _settle_acks(self, ack: int, now: float) -> None:
        pending = self.pending
        if not pending or pending[0] > ack:
            return
        if self.last_seq is not None and ack >= self.last_seq and not self.answered:
            self.answered = True
            model, conn = self.model, self.conn
            speed = int(model.me.get("speed", 1)) if model is not None else 1
            rate = conn.welcome.tick_rate if conn is not None else 10
            self.ready_at = now + (max(1, speed) - 1 + float(self.pace_rng.random())) / rate
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
            url,
            bot.name,
            cls_key=bot.cls_key,
            token=load_token(url, bot.name),
            open_timeout=timeout,
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


async def _watchdog(bots: list[_Bot], period: float = 0.01) -> None:
    """Let bots act once their character is ready again, or once their last
    command went unanswered for too long."""
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


async def run_bots_async(
    url: str,
    n: int,
    duration: float,
    *,
    name_prefix: str = "bot",
    seed: int = 0,
    ramp: float | None = None,
    open_timeout: float = 5.0,
    classes: tuple[str, ...] | None = None,
) -> BotReport:
    """Run ``n`` bots against the server at ``url`` for ``duration`` seconds.

    Bot ``i`` is named ``f"{name_prefix}{i}"`` and connects at ``i / n`` of
    the ramp (default ``min(2 s, duration / 4)``); the run ends ``duration``
    seconds after the first connect, whatever the ramp, then every
    connection is closed. A new bot character takes its class from
    ``classes`` in turn (default :data:`BOT_CLASSES`; ``()`` for the
    server's default class).

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
    totals = Totals()
    rotation = BOT_CLASSES if classes is None else classes
    party = PartyMap()
    bots = [
        _Bot(
            i,
            f"{name_prefix}{i}",
            seed,
            totals,
            rotation[i % len(rotation)] if rotation else None,
            party,
        )
        for i in range(n)
    ]
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
    return build_report(bots, totals, started, ended)


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
