"""Hook points through which the game reports what it does (saves, database errors).

The game calls these; it does not know who listens. The network layer's
:class:`server.net.metrics.Metrics` subclasses :class:`GameHooks` to count
and time them for Prometheus; the base class does nothing but time and pass on.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager


class GameHooks:
    """Listener for game events; every method of the base class does nothing."""

    def saved(self, what: str, seconds: float) -> None:
        """A save of ``what`` (``"players"`` or ``"levels"``) took ``seconds``."""

    def db_error(self, what: str) -> None:
        """A database call for ``what`` raised (the exception goes on to the caller)."""

    @contextmanager
    def saving(self, what: str) -> Iterator[None]:
        """Time the database write in the ``with`` block and report it.

        Calls :meth:`saved` when the block ends normally, :meth:`db_error`
        when it raises; the exception is re-raised unchanged.
        """
        started = time.perf_counter()
        try:
            yield
        except Exception:
            self.db_error(what)
            raise
        self.saved(what, time.perf_counter() - started)
