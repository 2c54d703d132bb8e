"""Python's garbage collector, run on the tick's schedule.

A tick allocates many short-lived containers (a view's id sets, ``upd``
rows, message dicts), almost all freed by reference counting. The cyclic
collector exists for what reference counting cannot free, and CPython runs
it when the count of container allocations minus deallocations passes a
threshold. For a server that ticks, that rule goes wrong (issue 10): a
young collection walks every container made since the last one and still
alive, and the count does not bound how many those are, since each old
container freed cancels a new one made. A world that replaces its
long-lived rows as it plays (as many alive, new ones every tick) piles up
young containers while the count stands still: 68,000 of them with the
count at 15,000 (2,000 clients), and when growth (joins) brought the count
to its threshold, one collection walked them all: 8-25 ms at 250 crowded
clients, and once 47 ms at 2,000. What survives is then walked again by the
middle and full collections, in proportion to all they hold.

So the server turns automatic collection off (:func:`tune`) and runs the
collector itself between ticks (:class:`Pacer`): a young collection, which
walks only what was made since the last one and is still alive, then
:func:`gc.freeze`, which moves the survivors out of the collector's reach
for good, so no collection walks the long-lived heap again. The pacer
spaces its collections by the pauses it measures.

Freezing is safe for whatever reference counting frees (a frozen object
whose last reference goes is freed at once), and keeps only reference
cycles that become garbage after surviving a collection. The server makes
none in play: ``tests/net/test_collector.py`` plays, resumes, cuts and
closes connections with the collector off and finds none of the server's
objects in garbage (a closed connection breaks its own three cycles,
``server.net.guard``). As a backstop, a full collection of everything,
frozen included, runs when no client is connected and the frozen heap has
grown by :data:`FULL_GROWTH` since the last: a pause then holds nobody up.

:func:`held` keeps any collection out of the tick where automatic
collection is still on (a server run without :func:`tune`, as the tests
run it). :class:`PauseWatch` measures every collection so the pauses are
seen in the metrics and the tick log.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

PAUSE_BUDGET_S = 0.004
"""The young collection :class:`Pacer` aims for (seconds). The pauses it
gets scatter above its aim (aiming at 8 ms gave up to 14 ms at 2,000
crowded clients and 20 ms at 4,000 spread), so it aims well under the
10 ms issue 10 allows."""

MAX_EVERY_TICKS = 50
"""The most ticks :class:`Pacer` lets pass between two collections."""

CLOSE_BURST = 100
"""Connections lost since the last tick that make :class:`Pacer` put off its
collection: what a closing connection leaves (its close frame, parser and
the event loop's callbacks for it) lives until the loop has run those
callbacks, and a collection taken meanwhile walks it all (4,000 clients
closing at once: 50,000 containers, 12-25 ms)."""

MAX_PUT_OFF_TICKS = 5
"""The most ticks in a row :class:`Pacer` puts a collection off for
:data:`CLOSE_BURST`."""

FULL_GROWTH = 0.25
"""With no client connected, a full collection runs once the frozen heap has
grown by this fraction since the last one (CPython's own rule for full
collections, applied when a pause costs nothing)."""


def tune() -> None:
    """Collect once, freeze the survivors (start-up data), and turn automatic
    collection off: from here :class:`Pacer` runs the collector."""
    gc.collect()
    gc.freeze()
    gc.disable()


class Pacer:
    """Runs the collector between ticks, when :func:`tune` has turned
    automatic collection off (otherwise it does nothing).

    Every :attr:`every` ticks: a young collection, then :func:`gc.freeze`.
    :attr:`every` adapts to the pauses measured: it grows by one while the
    pause it predicts for one tick more (the last pause scaled by
    ``(every + 1) / every``) stays within :data:`PAUSE_BUDGET_S`, and halves
    when a pause goes over. A young collection walks what was made since
    the last one and is still alive, so a busy world collects every tick or
    two (a tick at 1,000 crowded clients leaves about 2,300 containers
    alive) and a quiet one every few seconds. A collection due just after a
    burst of closed connections waits a tick (:data:`CLOSE_BURST`).

    Attributes:
        every: Ticks between collections now, 1..:data:`MAX_EVERY_TICKS`.
        last_pause_s: The last young collection's length (seconds).
        full_runs: Full collections run (see :meth:`full`).
    """

    def __init__(self) -> None:
        self.every = 1
        self.last_pause_s = 0.0
        self.full_runs = 0
        self.put_off = 0
        """Collections put off so far for a burst of closed connections."""
        self._since = 0
        self._frozen_at_full = -1  # read at the first collection, after tune()
        self._lost = 0
        self._off_in_row = 0

    def after_tick(self, clients: int, lost: int = 0) -> None:
        """Call once the tick has returned and its messages are freed.

        Args:
            clients: Connected clients: with none, and the frozen heap grown
                by :data:`FULL_GROWTH` since the last full collection, a
                full one runs (:meth:`full`).
            lost: Connections lost since the server started (never
                decreases): when :data:`CLOSE_BURST` or more were lost since
                the last call, a collection due waits a tick (at most
                :data:`MAX_PUT_OFF_TICKS` in a row), so that what they left
                queued is freed first.
        """
        if gc.isenabled():
            return  # not tuned: CPython collects on its own
        if self._frozen_at_full < 0:
            self._frozen_at_full = gc.get_freeze_count()
        burst = lost - self._lost >= CLOSE_BURST
        self._lost = lost
        self._since += 1
        if self._since < self.every:
            return
        if burst and self._off_in_row < MAX_PUT_OFF_TICKS:
            self._off_in_row += 1
            self.put_off += 1
            return
        self._off_in_row = 0
        self._since = 0
        started = time.perf_counter()
        gc.collect(0)
        gc.freeze()
        took = self.last_pause_s = time.perf_counter() - started
        every = self.every
        if took > PAUSE_BUDGET_S:
            self.every = max(1, every // 2)
        elif every < MAX_EVERY_TICKS and took * (every + 1) <= PAUSE_BUDGET_S * every:
            self.every = every + 1
        if clients == 0 and gc.get_freeze_count() > self._frozen_at_full * (1.0 + FULL_GROWTH):
            self.full()

    def full(self) -> None:
        """Collect everything, the frozen heap included, and freeze the rest
        again: a pause in proportion to the whole heap (10-30 ms for an
        empty server, hundreds of ms for thousands of players)."""
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self._frozen_at_full = gc.get_freeze_count()
        self.full_runs += 1


@contextmanager
def held() -> Iterator[None]:
    """Run the block (a tick) with automatic collection off, then turn it
    back on (if it was on), so that a collection falls due between ticks.
    (With :func:`tune` it is off already; this serves a server run without.)

    A tick builds every player's message, each with its lists, and writes
    them all before it frees any: with 4,000 walking players on one level
    about 100,000 young containers are alive at the tick's peak, and a
    young collection that came due then walked all of them, 20–70 ms of
    pause (``bench/scale.py -n 4000 --scene crowded``). Once the tick has
    returned they are freed by reference counting, and the collection that
    comes due at the next allocation walks what is left. Objects are
    counted while the collector is off, as when it is on: no collection is
    skipped, only moved.
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


class PauseWatch:
    """Times every collection through ``gc.callbacks``.

    Args:
        observe: Called with ``(generation, seconds)`` after each collection.

    Attributes:
        worst_s: The longest pause since :meth:`take_worst` was last called.
    """

    def __init__(self, observe: Callable[[int, float], None] | None = None) -> None:
        self._observe = observe
        self._started = 0.0
        self.worst_s = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        took = time.perf_counter() - self._started
        self.worst_s = max(self.worst_s, took)
        if self._observe is not None:
            self._observe(int(info.get("generation", 0)), took)

    def take_worst(self) -> float:
        """The longest pause (seconds) since the last call; resets it."""
        worst, self.worst_s = self.worst_s, 0.0
        return worst

    def close(self) -> None:
        """Stop watching."""
        if self._callback in gc.callbacks:
            gc.callbacks.remove(self._callback)
