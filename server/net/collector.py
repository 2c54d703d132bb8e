"""Python's garbage collector, set for a server that ticks.

A tick allocates many short-lived containers (a view's id sets, ``upd`` rows,
message dicts), almost all freed by reference counting. With the default
thresholds (700 allocations) the cyclic collector ran about 80 times a tick
with 2,000 players and its older generations paused ticks for up to 100 ms
or more (issue 10). :func:`tune` freezes what start-up built (content tables,
generated levels) out of the collector's reach and raises the thresholds so
that young collections are rare and old ones rarer; :class:`PauseWatch`
measures every collection so the pauses are seen in the metrics and the tick
log rather than guessed. :func:`held` keeps the collector out of the tick
itself, where the tick's own short-lived containers (every player's message
and its lists) are all alive at once and a collection would have to walk
them.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

THRESHOLDS = (50_000, 20, 1_000)
"""``gc.set_threshold`` values: a young collection every 50,000 net container
allocations, a middle one every 20 young ones, a full one every 1,000 middle
ones (measured with ``bench/tick.py``-like play at 2,000 players: 81 young
and 3 middle collections in 100 ticks instead of about 8,000, and ~45 µs of
CPU per player-tick instead of ~57)."""


def tune() -> None:
    """Collect once, freeze the survivors (start-up data), raise the thresholds."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)


@contextmanager
def held() -> Iterator[None]:
    """Run the block (a tick) with the cyclic collector off, then turn it
    back on (if it was on), so that a collection falls due between ticks.

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
