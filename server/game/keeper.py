"""Levels nobody has been on for a while are put away (issue 48).

A level in memory costs its terrain and the arrays derived from it, the
occupancy grid, the sight windows, its monsters and the path finders' and
views' caches: about 0.3-0.5 MB (docs/operating.md, "Memory"). A world keeps
every level anyone visited, and with fifty depths and players who wander
down and die, a long game ends up holding every depth. :class:`LevelKeeper`
puts away a level on which no player has been (alive, or dead awaiting
respawn) and nothing has flown for :data:`IDLE_TICKS`: its record (terrain
and floor items, :meth:`~server.sim.world.World.level_record`) is handed to
the store's writer and kept in :attr:`~server.sim.world.World.saved_levels`,
and the level is forgotten (:meth:`~server.sim.world.World.forget_level`).
The next player to arrive finds it as it was left, the floor's items
included; its monsters are stocked afresh, as after a restart of the
server (docs/rules.md, "Levels put away").

The decision depends on ticks only (no clock), so a world and its keeper
replay alike from the same commands.
"""

from __future__ import annotations

from server.sim.world import World
from server.store import pack_record
from server.store.writer import StoreWriter

IDLE_TICKS = 3000
"""Ticks a level must stay without players before it is put away: five
minutes at 10 ticks/s, a hundred checkpoints (so the last checkpoint that
saved it saved it as it is)."""
CHECK_EVERY_TICKS = 50
"""Ticks between two looks at the levels (each look is a pass over the
levels in memory, at most fifty)."""


class LevelKeeper:
    """Puts away the levels of ``world`` nobody has been on for ``idle_ticks``.

    Args:
        world: The world whose levels it watches.
        saver: Where a level's last record goes before it is forgotten (rows
            already written as they are are skipped by the writer); None: not
            saved here (the caller's checkpoints save it).
        idle_ticks: Ticks without players (and projectiles) before a level
            is put away; 0: never put one away.
    """

    def __init__(
        self, world: World, saver: StoreWriter | None = None, idle_ticks: int = IDLE_TICKS
    ) -> None:
        self.world = world
        self.saver = saver
        self.idle_ticks = max(0, idle_ticks)
        self.put_away = 0
        """Levels put away so far."""
        self._since: dict[int, int] = {}
        """Depth -> the tick from which it has had no player, for levels in memory."""

    def after_tick(self) -> list[int]:
        """Look at the levels (every :data:`CHECK_EVERY_TICKS` ticks) and put
        away those idle for ``idle_ticks``; return their depths, ascending.
        Call once after each tick's step."""
        world = self.world
        tick = world.tick
        if tick % CHECK_EVERY_TICKS or not self.idle_ticks:
            return []
        busy = {fly.depth for fly in world.projectiles.values()}
        since = self._since
        gone: list[int] = []
        for depth in sorted(world.levels):
            if world.players_on(depth) or depth in busy:
                since.pop(depth, None)
                continue
            if tick - since.setdefault(depth, tick) < self.idle_ticks:
                continue
            record = world.level_record(depth)
            if self.saver is not None:
                self.saver.submit([], [(depth, pack_record(record), tick)])
            world.saved_levels[depth] = record
            world.forget_level(depth)
            del since[depth]
            gone.append(depth)
        for depth in [d for d in since if d not in world.levels]:
            del since[depth]
        self.put_away += len(gone)
        return gone
