"""Scripted stair trips through a cluster, for tests/cluster and bench/cluster.py.

A *tripper* is a real client (:class:`client.connection.Connection` and
:class:`client.model.GameModel`) that shuttles between the down staircase of
level ``upper`` and the up staircase of ``upper + 1``: on the stairs it takes
them, else it steps toward them, and it counts a trip each time a snapshot
of the other level arrives. With each player given its own pair of
staircases, and the levels shared out round robin over the workers, every
trip is a hand-off from one worker to another.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import numpy as np

from client.connection import Connection
from client.model import GameModel
from protocol.messages import Chat, ChatOut, CommandName, Delta, Reject, ServerMessage, Snapshot
from server.content import Terrain

TRIP_TIMEOUT_S = 15.0
"""Seconds one trip (or one step) may take before the tripper gives up."""


@dataclass
class TripResult:
    """What one tripper did."""

    name: str
    actor_id: int
    trips: int = 0
    steps: int = 0
    trip_ms: list[float] = field(default_factory=list)
    """Seconds from sending ``down``/``up`` to the new level's snapshot, in ms."""
    ids_seen: set[int] = field(default_factory=set)
    """Player ids the welcome and every snapshot's own actor carried."""
    depth: int = 0
    position: tuple[int, int] | None = None
    error: str | None = None
    frames: int = 0
    refusals: list[str] = field(default_factory=list)
    said: int = 0
    """Timed global chat lines this client said."""
    chat_ms: list[float] = field(default_factory=list)
    """Delays of the timed global chat lines heard (``t=<unix time>``), in ms."""
    moves: list[tuple[str, tuple[int, int] | None]] = field(default_factory=list)
    """The commands that took effect, in order, as ``(command, direction)``:
    a step acknowledged without refusal, a staircase taken (the other
    level's snapshot came); what :func:`tests.cluster.replay.replay` plays
    again in one process."""


def _target(model: GameModel, upper: int) -> tuple[Terrain, CommandName]:
    if model.depth == upper:
        return Terrain.STAIRS_DOWN, CommandName.DOWN
    return Terrain.STAIRS_UP, CommandName.UP


def _step_toward(model: GameModel, terrain: Terrain) -> tuple[int, int] | None:
    pos = model.position
    if pos is None:
        return None
    ys, xs = np.nonzero(model.known == int(terrain))
    if not len(xs):
        return None
    k = int(np.argmin(np.abs(xs - pos[0]) + np.abs(ys - pos[1])))
    dx, dy = int(np.sign(xs[k] - pos[0])), int(np.sign(ys[k] - pos[1]))
    return (dx, dy) if (dx, dy) != (0, 0) else None


async def _read_on(conn: Connection, model: GameModel, result: TripResult) -> None:
    while True:
        await _recv(conn, model, result)


def _refused(msg: ServerMessage, seq: int) -> str | None:
    """The reason ``msg`` gives for refusing command ``seq``, or None.
    :meth:`Connection.recv` hands each refusal in a frame's ``rej`` out as a
    :class:`Reject`, named from ``welcome.reasons``, before the frame itself."""
    if isinstance(msg, Reject) and msg.seq == seq:
        return msg.reason
    return None


async def _recv(conn: Connection, model: GameModel, result: TripResult) -> ServerMessage:
    msg = await conn.recv()
    model.apply(msg)
    result.frames += 1
    if isinstance(msg, ChatOut) and msg.scope == "global" and msg.text.startswith("t="):
        result.chat_ms.append((time.time() - float(msg.text[2:])) * 1000.0)
    if isinstance(msg, Snapshot):
        result.ids_seen.update(a.id for a in model.actors.values() if a.is_self)
    return msg


async def trip(
    url: str,
    name: str,
    token: str,
    upper: int,
    count: int,
    *,
    pause_s: float = 0.0,
    chat_every_s: float = 0.0,
    linger: Callable[[], Awaitable[object]] | None = None,
) -> TripResult:
    """Join as ``name`` and make ``count`` stair trips between ``upper`` and
    ``upper + 1``; the result (``error`` set if it stopped early).

    Args:
        pause_s: Seconds to rest after each trip.
        chat_every_s: Say a timed global chat line (``t=<unix time>``) after
            a trip when this many seconds have passed since the last (0:
            never; the protocol allows one global line per 5 s).
        linger: Once the trips are made, keep reading (and hearing chat)
            until this returns, then one second more.
    """
    conn = await Connection.open(url, name, token=token, open_timeout=30.0)
    model = GameModel(conn.welcome)
    result = TripResult(name, conn.welcome.id)
    result.ids_seen.add(conn.welcome.id)
    last_chat = time.monotonic()
    try:
        async with asyncio.timeout(TRIP_TIMEOUT_S):
            while not isinstance(await _recv(conn, model, result), Snapshot):
                pass
        while result.trips < count:
            terrain, command = _target(model, upper)
            pos = model.position
            here = int(model.known[pos[1], pos[0]]) if pos is not None else -1
            async with asyncio.timeout(TRIP_TIMEOUT_S):
                if here == int(terrain):
                    depth = model.depth
                    sent = time.perf_counter()
                    seq = await conn.command(command)
                    while True:
                        msg = await _recv(conn, model, result)
                        if isinstance(msg, Snapshot) and msg.depth != depth:
                            break
                        refused = _refused(msg, seq)
                        if refused is not None:
                            result.refusals.append(refused)
                            if len(result.refusals) > 50:
                                raise RuntimeError(f"refused again and again: {refused}")
                            break
                    if model.depth == depth:
                        continue
                    result.moves.append((command.value, None))
                    result.trip_ms.append((time.perf_counter() - sent) * 1000.0)
                    result.trips += 1
                    if chat_every_s and time.monotonic() - last_chat >= chat_every_s:
                        last_chat = time.monotonic()
                        result.said += 1
                        await conn.send(Chat(text=f"t={time.time():.6f}", scope="global"))
                    if pause_s:  # rest, still reading (and hearing chat)
                        with contextlib.suppress(TimeoutError):
                            async with asyncio.timeout(pause_s):
                                await _read_on(conn, model, result)
                    continue
                d = _step_toward(model, terrain)
                step = CommandName.MOVE if d else CommandName.WAIT
                seq = await conn.command(step, d)
                result.steps += 1
                while True:
                    msg = await _recv(conn, model, result)
                    if _refused(msg, seq) is not None:
                        break
                    if (
                        isinstance(msg, Delta | Snapshot)
                        and msg.ack is not None
                        and conn.ack >= seq
                    ):
                        result.moves.append((step.value, d))
                        break
        if linger is not None:
            reader = asyncio.create_task(_read_on(conn, model, result))
            await linger()
            linger = None
            await asyncio.sleep(1.0)
            reader.cancel()
    except (TimeoutError, Exception) as exc:  # noqa: BLE001 - reported, not raised
        result.error = f"{type(exc).__name__}: {exc} after {result.trips} trips"
    finally:
        if linger is not None:  # stopped early: do not keep the others waiting
            await linger()
        result.depth = model.depth
        result.position = model.position
        await conn.close()
    return result
