"""Names an operator has banned (for good) or kicked (kept out for a while).

Bans persist as one JSON document under a metadata key of the world's store
(:meth:`BanList.from_meta`), so they survive restarts and travel with the
world whichever database backend holds it. Kicks are kept in memory only: a
kicked player may come back after :data:`KICK_HOLD_S` seconds (without that
hold, a client that reconnects by itself would be back at once).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

KICK_HOLD_S = 60.0
"""Seconds during which a kicked name is refused (with ``kicked``)."""

META_KEY = "bans"
"""Metadata key under which :meth:`BanList.from_meta` keeps the bans."""


@dataclass(frozen=True, slots=True)
class Ban:
    """One banned name: why, by whom, and when (Unix seconds)."""

    name: str
    reason: str
    by: str
    at: float


class BanList:
    """Banned and kicked names, checked at every join.

    Args:
        load: Returns the saved JSON document, or None when there is none.
        save: Stores the JSON document (called after every ban and unban).
        clock: Seconds for kick holds (monotonic).

    A saved document that is not valid JSON (edited by hand) raises
    ``ValueError`` naming the key, rather than dropping every ban silently.
    """

    def __init__(
        self,
        load: Callable[[], str | None] | None = None,
        save: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._save = save
        self._clock = clock
        self._bans: dict[str, Ban] = {}
        self._kicked: dict[str, float] = {}
        text = load() if load is not None else None
        if text:
            try:
                rows: Any = json.loads(text)
                self._bans = {
                    str(r["name"]).lower(): Ban(
                        str(r["name"]), str(r["reason"]), str(r["by"]), float(r["at"])
                    )
                    for r in rows
                }
            except (ValueError, TypeError, KeyError) as exc:
                raise ValueError(f"metadata {META_KEY!r} is not a list of bans: {exc}") from exc

    @classmethod
    def from_meta(cls, store: Any) -> BanList:
        """Bans kept in ``store``'s metadata (anything with ``get_meta``/``set_meta``)."""
        return cls(lambda: store.get_meta(META_KEY), lambda text: store.set_meta(META_KEY, text))

    def refusal(self, name: str) -> tuple[str, str] | None:
        """Why ``name`` (any case: names are compared without case) may not join
        now: ``(code, text)``, or None if it may."""
        ban = self._bans.get(name.lower())
        if ban is not None:
            return "banned", f"{name!r} is banned" + (f": {ban.reason}" if ban.reason else "")
        until = self._kicked.get(name.lower())
        if until is not None:
            left = until - self._clock()
            if left > 0:
                return "kicked", f"{name!r} was kicked; try again in {left:.0f} s"
            del self._kicked[name.lower()]
        return None

    def ban(self, name: str, reason: str = "", by: str = "admin") -> Ban:
        """Ban ``name`` (replacing an earlier ban of it) and save the list."""
        entry = Ban(name, reason, by, time.time())
        self._bans[name.lower()] = entry
        self._write()
        return entry

    def unban(self, name: str) -> bool:
        """Lift a ban (and a kick hold); return whether ``name`` was banned."""
        self._kicked.pop(name.lower(), None)
        found = self._bans.pop(name.lower(), None) is not None
        if found:
            self._write()
        return found

    def kick(self, name: str, hold_s: float = KICK_HOLD_S) -> None:
        """Keep ``name`` out for ``hold_s`` seconds (in memory only)."""
        self._kicked[name.lower()] = self._clock() + hold_s

    def bans(self) -> list[Ban]:
        """Every ban, by name."""
        return [self._bans[n] for n in sorted(self._bans)]

    def _write(self) -> None:
        if self._save is not None:
            self._save(json.dumps([asdict(b) for b in self.bans()], sort_keys=True))
