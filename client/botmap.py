"""The party map: what the bots of one run saw of each level, merged.

Bots of one ``underhall bots`` run play as a party that shares its maps, as
players who tell each other where the stairs are: each bot, when it decides,
adds what it remembers of its level to the party's copy and plans on the
merged map (its own memory wins where both know a cell, being written last).
Only planning changes: every step is still one ordinary command the server
judges, and a cell remembered wrongly is answered by a refusal.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

UNKNOWN = 255
"""Terrain code of a cell never seen (docs/protocol.md)."""


class PartyMap:
    """The merged maps of a party, one per depth (grids ``[y, x]``)."""

    __slots__ = ("_levels",)

    def __init__(self) -> None:
        self._levels: dict[int, tuple[NDArray[np.uint8], NDArray[np.bool_]]] = {}

    def merge(
        self, depth: int, known: NDArray[np.uint8], passable: NDArray[np.bool_]
    ) -> tuple[NDArray[np.uint8], NDArray[np.bool_]]:
        """Add one bot's memory of level ``depth`` and return the party's.

        Args:
            depth: the level's number.
            known: ``uint8[H, W]`` the bot's remembered terrain codes, 255 unknown.
            passable: ``bool[H, W]`` the bot's remembered passable cells.

        Returns:
            The party's ``(known, passable)`` of that level, every cell the
            bot knows as it knows it. They are the party's own arrays: read
            them, do not change them. A level whose size changed starts over
            from this bot's memory.
        """
        entry = self._levels.get(depth)
        if entry is None or entry[0].shape != known.shape:
            entry = (known.copy(), passable.copy())
            self._levels[depth] = entry
            return entry
        team_known, team_pass = entry
        seen = known != UNKNOWN
        team_known[seen] = known[seen]
        team_pass[seen] = passable[seen]
        return entry
