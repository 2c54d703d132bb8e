"""The world: levels, actors, the tick, and the order in which things happen.

Pure and deterministic (STYLE.md): no clock, no global random. ``World(seed)``
plus the same sequence of ``join`` / ``leave`` / ``submit`` / ``step`` calls
yields the same events. Levels depend only on ``(seed, depth)``; everything
that happens during play draws from ``world.rng``.

Order within a tick (RULES.md "one time model", STYLE.md "order is explicit"):

1. queued rejections from :meth:`World.submit` are emitted;
2. dead players whose respawn tick has come respawn;
3. every actor on a level with a player, in id order, acts if
   ``actor.next_act <= tick``: a player carries out its oldest queued command,
   a monster runs its behaviour (:mod:`server.sim.monsters`); a monster due
   on a level without players only moves its ``next_act`` on by its speed;
4. health and energy regenerate (each actor on its own clock: :class:`PhaseBuckets`);
5. every living player's field of view, map memory and visible set (and
   with them the monsters' ``seen_by``) are brought up to date;
6. levels with players are restocked with monsters now and then;
7. ``tick`` advances by one.
"""

from __future__ import annotations

from bisect import insort
from collections import Counter, deque
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from server.content import MONSTER_FLAGS, Content, Terrain, default_content
from server.content.spells import check_spell_references, default_spells
from server.content.statuses import StatusKind, default_statuses
from server.sim import (
    casting,
    fighting,
    harm,
    hunger,
    inventory,
    monsters,
    projectiles,
    upkeep,
    use,
    zapping,
)
from server.sim import damage as dmg
from server.sim.actors import Actor, Mind, new_player, player_from_record, xp_for_level
from server.sim.commands import (
    DIRECTIONS,
    Ascend,
    Cast,
    Choose,
    CloseDoor,
    Command,
    Descend,
    Drop,
    Eat,
    Move,
    OpenDoor,
    PickUp,
    Quaff,
    Read,
    Rest,
    TakeOff,
    Throw,
    Upgrade,
    Wait,
    Wear,
    Wield,
    Zap,
)
from server.sim.events import (
    Died,
    DoorChanged,
    Event,
    Fled,
    GainedXp,
    Joined,
    Left,
    LevelledUp,
    Notice,
    Rejected,
    RejectReason,
    Respawned,
    TookStairs,
)
from server.sim.fov import FOV_RADIUS, FieldOfView, padded_mask
from server.sim.items import Item
from server.sim.level import Level
from server.sim.levelgen import generate_level
from server.sim.paths import PathFinders
from server.sim.sight import (
    ID_MASK,
    NO_PAIRS,
    PAIR_SHIFT,
    FovCache,
    Sight,
    in_sorted,
    owned_by,
    pair_keys,
    remember_windows,
)
from server.sim.status import (
    StatusEffect,
    Statuses,
    action_delay,
    can_act,
    can_melee,
    confused_direction,
)

COMMAND_QUEUE_LIMIT = 8
"""Commands that may wait per player; more are rejected with QUEUE_FULL."""
RESPAWN_TICKS = 30
"""Ticks a dead player waits before coming back at the top of the dungeon."""
RESTOCK_TICKS = 300
"""Ticks between restocking attempts on a level that has players."""
_MONSTER_FLAGS = frozenset(MONSTER_FLAGS)
_HELD = (StatusKind.PARALYSED, StatusKind.FROZEN, StatusKind.WEBBED)
"""Statuses that make an attack on a sleeping player a surprise all the same (seed 002)."""
_FLIGHT_BLOCKERS = np.array([Terrain.ROCK, Terrain.WALL, Terrain.DOOR_CLOSED], dtype=np.uint8)
ENTRANCE_DEPTHS = 10
"""Deepest level a new or respawning player may arrive on when the levels
above it are full (:meth:`World._entrance`)."""
SEARCH_ORDERS_KEPT = 64
"""Starting cells whose search order :meth:`World.free_cell_near` keeps."""
DEFAULT_SIZE = (198, 66)
"""Width and height of generated levels, in cells: Angband's dungeon size, room
for a crowd (about 2,200 walkable cells, 60 rooms) while the per-player cost
stays bounded by the view window."""
FOV_CACHE_CELLS = 4096
"""Cells per level whose field of view :meth:`World._new_fovs` keeps (about
470 bytes each: :class:`~server.sim.sight.FovCache`); past this the level's
cache starts afresh. A default level has about 2,200 walkable cells, so in
play it never fills."""


class PhaseBuckets:
    """The actors split by ``id % period``, each bucket in the order the
    actors were added to the world: the actors whose own clock of that period
    falls due at a tick, ``(tick + id) % period == 0``.

    The upkeep round and regeneration run on such per-actor clocks rather
    than on one clock for everyone (``tick % period == 0``): each actor still
    gets one round every ``round_ticks`` ticks and one point of health every
    ``health_ticks``, at an offset of its own, so a tick handles a
    ``1 / period`` share of the actors instead of every ``period``-th tick
    handling all of them (issue 10: with 4,000 players the tick that raised
    every wounded actor's health took 25 ms more than the others, and the
    round's tick 12 ms more). The seeds give rates ("slowly increase over
    time", one round per action at normal speed), not a shared phase.

    Args:
        period: Ticks between two turns of one actor's clock (>= 1).
    """

    __slots__ = ("_buckets", "period")

    def __init__(self, period: int) -> None:
        self.period = period
        self._buckets: list[dict[int, Actor]] = [{} for _ in range(period)]

    def add(self, actor: Actor) -> None:
        """Put ``actor`` in the bucket of its id."""
        self._buckets[actor.id % self.period][actor.id] = actor

    def discard(self, actor: Actor) -> None:
        """Take ``actor`` out (nothing if it is not in)."""
        self._buckets[actor.id % self.period].pop(actor.id, None)

    def due(self, tick: int) -> dict[int, Actor]:
        """The actors whose clock falls due at ``tick``, by id, in the order
        they were added (read-only: the bucket itself)."""
        return self._buckets[-tick % self.period]


class World:
    """The authoritative game state and rules loop.

    Args:
        seed: The world seed (any non-negative int).
        content: Rules data; the shipped data when None.
        size: ``(width, height)`` of generated levels in cells.
        levels: Ready-made levels by depth (tests build them with
            ``Level.from_ascii``); other depths are generated.
        populate: Whether generated levels get monsters.
        first_id: The id :meth:`add_actor` gives the first actor made without
            an explicit id (later ones count up from it). Several worlds that
            pass players between them start their monsters high (e.g.
            ``2**30``) and give players ids from below that.

    Raises:
        ContentError: ``content`` names a spell or casting role that the spell
            data does not have.
    """

    def __init__(
        self,
        seed: int,
        content: Content | None = None,
        *,
        size: tuple[int, int] = DEFAULT_SIZE,
        levels: dict[int, Level] | None = None,
        populate: bool = True,
        first_id: int = 1,
    ) -> None:
        self.seed = seed
        self.content = content or default_content()
        check_spell_references(self.content, default_spells())
        self.status_rules = default_statuses()
        self.round_clock = PhaseBuckets(self.status_rules.round_ticks)
        """Each actor's upkeep round falls due on its own tick
        (:func:`server.sim.upkeep.run_round`)."""
        self.regen_clock = PhaseBuckets(upkeep.regeneration_period(self.status_rules.regeneration))
        """Each actor's health and energy regeneration can only fall due on the
        ticks of this clock (:func:`server.sim.upkeep.regenerate`)."""
        self.size = size
        self.populate = populate
        self.tick = 0
        self.rng = np.random.default_rng(np.random.SeedSequence([seed, 1]))
        self.actors: dict[int, Actor] = {}
        self.levels: dict[int, Level] = dict(levels or {})
        self.sees: dict[int, set[int]] = {}
        """Player id -> ids of the actors in its view that it can see (itself
        included; invisible ones only if it sees invisible)."""
        self.seen_by: dict[int, list[int]] = {}
        """Monster id -> ids of the players in whose field of view it stands
        (in id order; sight is symmetric, so also the players it could see,
        invisibility aside: :func:`server.sim.monsters.visible_players`)."""
        self._next_id = first_id
        self._occ: dict[int, NDArray[np.int32]] = {}
        self._version: Counter[int] = Counter()
        self._players_on: Counter[int] = Counter()
        self._pending: list[Event] = []
        self._monster_ids: set[int] = set()
        self._players: dict[int, Actor] = {}
        """The players (alive or awaiting respawn) by id, in id order."""
        self.touched: set[int] = set()
        """Ids of the players whose pack, equipment, statuses or spells may
        have changed during the last :meth:`step` without an event naming
        them: they carried out a command other than a step, were given or lost
        a status, or a round's upkeep ticked their statuses (what the
        per-player views rely on to skip the rest). Food, like position,
        health and energy, is not noted here: the views compare it on its own."""
        self.commanded: set[int] = set()
        """Ids of the players who carried out (or were refused) a command other
        than a step during the last :meth:`step`: with the events naming a
        player, what may change its steady record (pack, level, scores,
        spells: :meth:`~server.game.index.TickIndex.steady_touched`)."""
        self._search_orders: dict[
            tuple[int, int, int], tuple[NDArray[np.bool_], NDArray[np.intp]]
        ] = {}
        """Breadth-first search orders by ``(depth, x, y)`` (:meth:`free_cell_near`)."""
        self.saved_levels: dict[int, dict[str, Any]] = {}
        """Saved :meth:`level_record` s by depth, laid over each level when it is
        first generated (a restarted server; set before play begins)."""
        self.paths = PathFinders()
        """Monsters' path finders, kept between steps (:mod:`server.sim.paths`)."""
        self.projectiles: dict[int, projectiles.Projectile] = {}
        """Projectiles in flight by id (:mod:`server.sim.projectiles`)."""
        self._next_projectile_id = 1
        self._sight: dict[int, Sight] = {}
        """Per depth, the occupancy the visible sets were last built from."""
        self._fov_cache: dict[int, FovCache] = {}
        """Per depth, the field of view and its padded mask computed from each
        cell since the terrain within ``FOV_RADIUS`` of it last changed
        (:meth:`_new_fovs`). A field of view depends only on the
        transparency of its window, and walkers keep returning to the same
        cells: in a crowd most steps find theirs here."""
        self._raw_sees: dict[int, set[int]] = {}
        """Player id -> ids of every actor in its field of view, invisible
        ones included (what :attr:`sees` is cut from)."""
        self._sees_monsters: dict[int, set[int]] = {}
        """Player id -> the monsters in its ``_raw_sees`` (its entries in
        :attr:`seen_by`)."""
        self._slots: dict[int, tuple[int, int, FieldOfView]] = {}
        """Living player id -> ``(depth, slot)`` of its field of view in that
        level's :class:`~server.sim.sight.Sight`, and the field of view put there."""
        self._told_tiles: list[int] = []
        """Players given ``seen_tiles`` by the last :meth:`_update_views`
        (emptied by the next one)."""
        self._revealing: set[int] = set()
        """Players given a :meth:`reveal_map` since the last :meth:`_update_views`."""
        self._unseen: set[int] = set()
        """Ids of the invisible actors when the views were last updated."""
        self._sees_invisible: dict[int, bool] = {}
        """Player id -> whether it saw invisible when its :attr:`sees` was last
        cut, for the players with an invisible actor in view."""
        for depth, level in self.levels.items():
            self._occ[depth] = np.full(level.terrain.shape, -1, dtype=np.int32)

    # ----------------------------------------------------------- levels

    def level(self, depth: int) -> Level:
        """Return the level at ``depth`` (>= 1), generating it on first use.

        Generation draws from a generator seeded by ``(seed, depth)`` only, so
        a level does not depend on when it was first visited.
        """
        level = self.levels.get(depth)
        if level is None:
            rng = np.random.default_rng(np.random.SeedSequence([self.seed, 2, depth]))
            level = generate_level(rng, depth, self.size[0], self.size[1])
            self.levels[depth] = level
            self._occ[depth] = np.full(level.terrain.shape, -1, dtype=np.int32)
            saved = self.saved_levels.pop(depth, None)
            if saved is not None:
                self._restore(level, saved)
            if self.populate:
                monsters.populate(self, level, rng)
        return level

    def forget_level(self, depth: int) -> None:
        """Forget the generated level ``depth``: its terrain, floor items,
        monsters and projectiles go, and its next use generates it afresh
        from ``(seed, depth)``, with :attr:`saved_levels` laid over it then.
        (A process that stops running a level, and may later run it again
        from what another one saved, must not keep an old copy.) Does
        nothing for a level not generated.

        Raises:
            ValueError: A player (alive or awaiting respawn) is on it.
        """
        if depth not in self.levels:
            return
        if any(p.depth == depth for p in self._players.values()):
            raise ValueError(f"players are on depth {depth}")
        for actor in [a for a in self.actors.values() if a.depth == depth]:
            self._remove(actor)
        for pid in [p for p, fly in self.projectiles.items() if fly.depth == depth]:
            del self.projectiles[pid]
        del self.levels[depth]
        del self._occ[depth]
        self._sight.pop(depth, None)
        self._fov_cache.pop(depth, None)
        for key in [k for k in self._search_orders if k[0] == depth]:
            del self._search_orders[key]

    def level_record(self, depth: int) -> dict[str, Any]:
        """What to save of a visited level so a restart finds it as it was left:
        its terrain (``shape`` ``[H, W]`` and ``uint8`` bytes row by row) and
        the items on its floor, ``[[x, y, [item record, ...]], ...]`` (bottom of
        each pile first). Monsters are not saved: a level is restocked afresh.

        Raises:
            KeyError: ``depth`` has not been visited.
        """
        level = self.levels[depth]
        return {
            "shape": list(level.terrain.shape),
            "terrain": level.terrain.tobytes(),
            "items": [
                [x, y, [item.to_record() for item in pile]]
                for (x, y), pile in sorted(level.items.items())
                if pile
            ],
        }

    def _restore(self, level: Level, record: dict[str, Any]) -> None:
        """Lay a saved :meth:`level_record` over a freshly generated level. A
        record of another size (the world's size changed) is ignored."""
        shape = tuple(int(n) for n in record["shape"])
        if shape != level.terrain.shape:
            return
        saved = np.frombuffer(record["terrain"], dtype=np.uint8).reshape(shape)
        if saved.max(initial=0) >= len(Terrain):
            return
        ys, xs = np.nonzero(saved != level.terrain)
        for x, y in zip(xs.tolist(), ys.tolist(), strict=True):
            level.set_terrain(x, y, Terrain(int(saved[y, x])))
        level.clear_changes()
        level.items = {
            (int(x), int(y)): [Item.from_record(r) for r in pile]
            for x, y, pile in record["items"]
            if pile
        }

    def occupancy(self, depth: int) -> NDArray[np.int32]:
        """Return ``int32[H, W]`` of actor ids by cell on ``depth``, −1 where empty."""
        self.level(depth)
        return self._occ[depth]

    def actor_at(self, depth: int, x: int, y: int) -> Actor | None:
        """Return the living actor standing on ``(x, y)`` of ``depth``, if any."""
        aid = int(self.occupancy(depth)[y, x])
        return None if aid < 0 else self.actors[aid]

    def set_terrain(self, depth: int, x: int, y: int, terrain: Terrain) -> None:
        """Change one cell and invalidate the fields of view on that level."""
        self.level(depth).set_terrain(x, y, terrain)
        self._version[depth] += 1

    def flight_blocked(self, depth: int) -> NDArray[np.bool_]:
        """``bool[H, W]``: cells a projectile cannot enter on ``depth`` (rock,
        walls, closed doors; it flies over water, lava, rubble and trees)."""
        terrain = self.level(depth).terrain
        return np.isin(terrain, _FLIGHT_BLOCKERS)

    def new_projectile_id(self) -> int:
        """A fresh projectile id (ids are never reused while the world runs)."""
        pid = self._next_projectile_id
        self._next_projectile_id += 1
        return pid

    def drop_item(self, depth: int, x: int, y: int, item: Item) -> None:
        """Put ``item`` on the floor at ``(x, y)`` of ``depth`` (top of the pile)."""
        inventory.place_item(self, depth, x, y, item)

    def players_on(self, depth: int) -> int:
        """Number of players (alive or awaiting respawn) on ``depth``."""
        return self._players_on[depth]

    def monsters(self) -> list[Actor]:
        """Every monster of every level, in no set order: a pass over the
        monsters only (with 4,000 players crowding depth 1, 116 of the 4,116
        actors)."""
        actors = self.actors
        return [actors[aid] for aid in self._monster_ids]

    def monsters_on(self, depth: int) -> int:
        """Number of monsters on ``depth`` (a pass over the monsters only, not
        over every actor: with 4,000 players a pass over all actors for each
        of ten levels took 20 ms of a restocking tick)."""
        return sum(1 for monster in self.monsters() if monster.depth == depth)

    def cell_viewers(
        self, depth: int, xs: NDArray[np.intp], ys: NDArray[np.intp]
    ) -> tuple[NDArray[np.int64], NDArray[np.intp]]:
        """Which living players of ``depth`` have which of the cells
        ``(xs[i], ys[i])`` in their field of view, as of the last step.

        Args:
            depth: The level.
            xs: Cell columns, ``intp[E]``.
            ys: Cell rows, ``intp[E]``.

        Returns:
            ``(players, cells)``, two arrays of equal length: player
            ``players[k]`` sees cell ``cells[k]`` (an index into ``xs``). The
            same answer as ``world.actors[p].fov.contains(xs[i], ys[i])`` over
            every living player ``p`` on ``depth``, found with one numpy pass
            over the level's fields of view instead of one call per pair.
        """
        sight = self._sight.get(depth)
        if sight is None or not sight.count or not len(xs):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.intp)
        active = sight.active()
        side = 2 * FOV_RADIUS + 1
        dx = xs[None, :] - sight.xs[active][:, None] + FOV_RADIUS  # [players, cells]
        dy = ys[None, :] - sight.ys[active][:, None] + FOV_RADIUS
        near = (dx >= 0) & (dx < side) & (dy >= 0) & (dy < side)
        pi, ci = near.nonzero()  # the method: np.nonzero adds a Python-level dispatch
        seen = sight.masks[active[pi], dy[pi, ci], dx[pi, ci]]
        return sight.owners[active[pi[seen]]], ci[seen]

    def visible_pairs(
        self, depth: int
    ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]] | None:
        """Who sees whom on ``depth`` as of the last step, for all its
        players at once, or None if none of them has a field of view.

        Returns:
            ``(pairs, gained, lost)``, sorted ``int64`` arrays of
            :func:`~server.sim.sight.pair_keys` (player id in the high 32
            bits, seen actor id in the low): every living player's whole
            visible set (invisible actors included: what :attr:`sees` holds
            when :meth:`sees_whole`), and the pairs the last step added and
            took away (of players who left the level too). Read-only; later
            steps replace them.
        """
        sight = self._sight.get(depth)
        if sight is None:
            return None
        if sight.changed_at == self.tick - 1:
            return sight.pairs, sight.gained, sight.lost
        return sight.pairs, NO_PAIRS, NO_PAIRS

    def sees_whole(self, pid: int) -> bool:
        """Whether living player ``pid``'s :attr:`sees` is its whole visible
        set, its run in :meth:`visible_pairs` (no invisible actor cut from
        it); False for a dead player or one not in the world."""
        raw = self._raw_sees.get(pid)
        return raw is not None and self.sees.get(pid) is raw

    def free_cell_near(self, depth: int, x: int, y: int) -> tuple[int, int]:
        """Return the free cell nearest to ``(x, y)`` by walking distance.

        A breadth-first search from ``(x, y)`` over passable cells and closed
        doors (8 directions, in the fixed order of ``DIRECTIONS``) returns the
        first passable, unoccupied cell it reaches, so a crowd at the stairs
        spills into the corridors beyond rather than through walls.

        The search's order of cells depends only on the level's walkable
        cells, so it is kept per starting cell (until digging or a terrain
        change alters what is walkable): a thousand arrivals at the same
        staircase cost one search and a thousand array look-ups.

        Raises:
            LookupError: If every reachable cell is occupied.
        """
        level = self.level(depth)
        occ = self._occ[depth]
        passable = level.passable
        if level.in_bounds(x, y) and passable[y, x] and occ[y, x] < 0:
            return x, y
        walkable = passable | (level.terrain == Terrain.DOOR_CLOSED)
        cached = self._search_orders.get((depth, x, y))
        if cached is None or not np.array_equal(cached[0], walkable):
            if len(self._search_orders) >= SEARCH_ORDERS_KEPT:
                self._search_orders.clear()
            cached = (walkable, _search_order(walkable, x, y))
            self._search_orders[(depth, x, y)] = cached
        order = cached[1]
        free = passable.ravel()[order] & (occ.ravel()[order] < 0)
        first = int(np.argmax(free)) if len(free) else 0
        if not len(free) or not free[first]:
            raise LookupError(f"no free cell reachable from ({x}, {y}) on depth {depth}")
        cy, cx = divmod(int(order[first]), level.width)
        return cx, cy

    # ----------------------------------------------------------- actors

    def add_actor(
        self,
        make: Callable[[int], Actor],
        depth: int,
        x: int,
        y: int,
        *,
        actor_id: int | None = None,
    ) -> Actor:
        """Create an actor with ``make(actor_id)`` and place it on a free cell.

        Args:
            actor_id: The id to give it (a player that keeps its id from one
                world to another); None for the next id of this world's own.

        Raises:
            ValueError: If ``(x, y)`` is occupied or not passable, or
                ``actor_id`` belongs to an actor of this world.
        """
        self.level(depth)
        occ = self._occ[depth]
        if occ[y, x] >= 0 or not self.levels[depth].passable[y, x]:
            raise ValueError(f"cell ({x}, {y}) on depth {depth} is not free")
        if actor_id is not None and actor_id in self.actors:
            raise ValueError(f"actor id {actor_id} is taken")
        if actor_id is None:
            actor_id = self._next_id
            self._next_id += 1
        actor: Actor = make(actor_id)
        actor.depth, actor.x, actor.y = depth, x, y
        actor.next_act = self.tick
        self.actors[actor.id] = actor
        self.round_clock.add(actor)
        self.regen_clock.add(actor)
        occ[y, x] = actor.id
        if actor.is_player:
            self._players_on[depth] += 1
            self.sees[actor.id] = set()
            self._players[actor.id] = actor
        else:
            self._monster_ids.add(actor.id)
        return actor

    def join(
        self,
        name: str,
        class_key: str = "warrior",
        record: dict[str, Any] | None = None,
        *,
        actor_id: int | None = None,
    ) -> Actor:
        """Bring a player into the world: new, or resumed from a saved record.

        A new player starts by the up staircase of depth 1 (or of the first
        level below with room, when depth 1 is full: :meth:`_entrance`); a
        resumed one at its saved place (or the nearest free cell), except that
        one saved while dead comes back as a respawn would, with full health.
        Emits :class:`Joined`.

        Args:
            actor_id: The player's id, when it keeps one across worlds (see
                :meth:`add_actor`); None for the next id.

        Raises:
            KeyError: Unknown ``class_key`` (new players only).
            LookupError: No free cell near the starting point.
            ValueError: ``actor_id`` is taken in this world.
        """
        if record is not None:
            dead = int(record["hp"]) <= 0
            depth = 1 if dead else max(1, int(record["depth"]))
            level = self.level(depth)
            sx, sy = int(record["x"]), int(record["y"])
            if dead or not level.in_bounds(sx, sy):
                depth, x, y = (
                    self._entrance() if dead else (depth, *self._arrival(depth, Terrain.STAIRS_UP))
                )
            else:
                if level.terrain_at(sx, sy) == Terrain.DOOR_CLOSED:
                    # Saved standing in a doorway; the regenerated level has
                    # the door shut: it opens for the returning player.
                    self.set_terrain(depth, sx, sy, Terrain.DOOR_OPEN)
                x, y = self.free_cell_near(depth, sx, sy)

            def make(aid: int) -> Actor:
                return player_from_record(aid, record)
        else:
            cls = self.content.classes[class_key]
            depth, x, y = self._entrance()

            def make(aid: int) -> Actor:
                return new_player(aid, name, cls, depth, x, y)

        actor = self.add_actor(make, depth, x, y, actor_id=actor_id)
        if record is None:
            inventory.outfit(
                actor, self.content.classes[class_key].start_items, self.content, self.rng
            )
        else:
            inventory.settle_letters(actor, self.content)
            inventory.refresh_bonus(actor, self.content)
        if not actor.alive:
            actor.hp, actor.en, actor.respawn_tick = actor.max_hp, actor.max_en, 0
        self._pending.append(Joined(actor.id, actor.name))
        return actor

    def leave(self, actor_id: int) -> dict[str, Any]:
        """Take a player out of the world and return its record for saving.

        Emits :class:`Left`. Raises KeyError for an unknown id.
        """
        actor = self.actors[actor_id]
        record = actor.to_record()
        self._remove(actor)
        self._pending.append(Left(actor.id, actor.name))
        return record

    def remove_monster(self, monster: Actor) -> None:
        """Take a monster out of the world without a death (it changed shape)."""
        if monster.is_player:
            raise ValueError("players leave with leave()")
        self._remove(monster)

    def _remove(self, actor: Actor) -> None:
        if self._occ[actor.depth][actor.y, actor.x] == actor.id:
            self._occ[actor.depth][actor.y, actor.x] = -1
        del self.actors[actor.id]
        self.round_clock.discard(actor)
        self.regen_clock.discard(actor)
        self._monster_ids.discard(actor.id)
        if actor.is_player:
            self._players_on[actor.depth] -= 1
            self.sees.pop(actor.id, None)
            del self._players[actor.id]
            self._drop_sight(actor.id)
            monsters.forget(self, actor.id)

    def submit(self, actor_id: int, command: Command, tag: int) -> bool:
        """Queue ``command`` for the player ``actor_id``.

        ``tag`` (the wire ``seq``) comes back in :class:`Rejected` and as
        ``actor.last_tag`` once the command was carried out or refused.

        Returns:
            False if the queue already held ``COMMAND_QUEUE_LIMIT`` commands
            (a :class:`Rejected` with QUEUE_FULL is emitted on the next step).

        Raises:
            KeyError: If ``actor_id`` is not in the world.
        """
        actor = self.actors[actor_id]
        if len(actor.queue) >= COMMAND_QUEUE_LIMIT:
            self._pending.append(Rejected(actor_id, tag, RejectReason.QUEUE_FULL))
            return False
        actor.queue.append((tag, command))
        return True

    # ----------------------------------------------------------- the tick

    def step(self) -> list[Event]:
        """Advance the world by one tick and return what happened, in order."""
        events: list[Event] = self._pending
        self._pending = []
        self.touched = set()
        self.commanded = set()
        tick = self.tick
        for actor in list(self._players.values()):  # (the players in the actors' order)
            if actor.hp <= 0 and actor.respawn_tick <= tick:
                self._respawn(actor, events)
        actors = self.actors
        for actor in list(actors.values()):
            if not actor.queue and (actor.next_act > tick or actor.is_player):
                continue  # most actors, most ticks: nothing due, nothing to do or refuse
            if actor.id not in actors:
                continue
            if actor.is_player and not actor.alive:
                self._reject_queue(actor, RejectReason.DEAD, events)
                continue
            if actor.next_act > tick:
                continue
            if actor.is_player:
                if actor.queue and can_act(actor.statuses):
                    tag, command = actor.queue.popleft()
                    self._do(actor, command, tag, events)
            elif actor.alive and self._players_on[actor.depth] > 0:
                monsters.act(self, actor, events)
            elif actor.alive:
                # Nobody on its level: it does nothing, but keeps its place in
                # the turn, so a level's monsters do not all act on the tick a
                # player arrives.
                actor.next_act = tick + actor.speed
        if self.projectiles:
            projectiles.advance(self, events)
        upkeep.run_round(self, events)
        upkeep.regenerate(self)
        self._update_views()
        if self.populate and tick % RESTOCK_TICKS == RESTOCK_TICKS - 1:
            for depth in sorted(d for d, n in self._players_on.items() if n > 0):
                monsters.restock(self, depth)
        self.tick += 1
        return events

    def _reject(self, actor: Actor, tag: int, reason: RejectReason, events: list[Event]) -> None:
        actor.last_tag = tag
        events.append(Rejected(actor.id, tag, reason))

    def _reject_queue(self, actor: Actor, reason: RejectReason, events: list[Event]) -> None:
        """Refuse every command waiting in ``actor``'s queue, oldest first."""
        while actor.queue:
            tag, _ = actor.queue.popleft()
            self._reject(actor, tag, reason, events)

    def _do(self, actor: Actor, command: Command, tag: int, events: list[Event]) -> None:
        if not isinstance(command, Move):  # a step changes only the place (or attacks)
            self.touched.add(actor.id)
            self.commanded.add(actor.id)
        before = actor.last_tag
        reason = self._carry_out(actor, command, events)
        if reason is not None:
            self._reject(actor, tag, reason, events)
            return
        if actor.last_tag == before:
            # (If the command killed its own actor, say a bounced ray, the
            # commands queued behind it were refused and acknowledged already:
            # the ack must not go back to this one.)
            actor.last_tag = tag
        actor.next_act = self.tick + action_delay(actor.statuses, actor.speed)

    def _carry_out(
        self, actor: Actor, command: Command, events: list[Event]
    ) -> RejectReason | None:
        """Carry out one player command; return why not, or None if done."""
        level = self.levels[actor.depth]
        if isinstance(command, (Move, OpenDoor, CloseDoor)):
            nx, ny = actor.x + command.dx, actor.y + command.dy
            if not level.in_bounds(nx, ny):
                return RejectReason.BLOCKED
            if isinstance(command, Move):
                dx, dy = confused_direction(self.rng, (command.dx, command.dy), actor.statuses)
                nx, ny = actor.x + dx, actor.y + dy
                if not level.in_bounds(nx, ny):
                    return None  # a confused step into the edge: the action is spent
                return self._move_or_attack(actor, nx, ny, events)
            if isinstance(command, OpenDoor):
                if level.terrain_at(nx, ny) != Terrain.DOOR_CLOSED:
                    return RejectReason.NO_DOOR
                self._set_door(actor, nx, ny, True, events)
                return None
            if level.terrain_at(nx, ny) != Terrain.DOOR_OPEN:
                return RejectReason.NO_DOOR
            if self._occ[actor.depth][ny, nx] >= 0 or level.items.get((nx, ny)):
                return RejectReason.DOOR_BLOCKED
            self._set_door(actor, nx, ny, False, events)
            return None
        if isinstance(command, Wait):
            return None
        if isinstance(command, Rest):
            return upkeep.rest(self, actor, events)
        if isinstance(command, PickUp):
            return inventory.pick_up(self, actor, events)
        if isinstance(command, Drop):
            return inventory.drop(self, actor, command.letter, events)
        if isinstance(command, Wield):
            return inventory.wield(self, actor, command.letter, events)
        if isinstance(command, Wear):
            return inventory.wear(self, actor, command.letter, events)
        if isinstance(command, TakeOff):
            return inventory.take_off(self, actor, command.letter, events)
        if isinstance(command, Throw):
            return projectiles.throw(self, actor, command.letter, (command.x, command.y), events)
        if isinstance(command, Zap):
            return zapping.zap(self, actor, command.letter, (command.dx, command.dy), events)
        if isinstance(command, Cast):
            return casting.cast(self, actor, command, events)
        if isinstance(command, Eat):
            return use.eat(self, actor, command.letter, events)
        if isinstance(command, Quaff):
            return use.quaff(self, actor, command.letter, events)
        if isinstance(command, Read):
            return use.read(self, actor, command.letter, events)
        if isinstance(command, Choose):
            return use.choose(self, actor, command.option, events)
        if isinstance(command, Upgrade):
            return casting.upgrade_spell(self, actor, command.spell, events)
        if isinstance(command, Descend):
            if level.terrain_at(actor.x, actor.y) != Terrain.STAIRS_DOWN:
                return RejectReason.NO_STAIRS
            return self._change_level(actor, actor.depth + 1, events)
        if isinstance(command, Ascend):
            if level.terrain_at(actor.x, actor.y) != Terrain.STAIRS_UP:
                return RejectReason.NO_STAIRS
            if actor.depth == 1:
                return RejectReason.SEALED
            return self._change_level(actor, actor.depth - 1, events)
        raise TypeError(f"not a command: {command!r}")

    def _move_or_attack(
        self, actor: Actor, nx: int, ny: int, events: list[Event]
    ) -> RejectReason | None:
        level = self.levels[actor.depth]
        other = self.actor_at(actor.depth, nx, ny)
        if other is not None:
            if other.is_player:
                if other.queue or other.next_act > self.tick:
                    return RejectReason.OCCUPIED
                self._swap(actor, other)
                return None
            if not can_melee(actor.statuses):
                return RejectReason.AFRAID
            self.melee(actor, other, events)
            return None
        terrain = level.terrain_at(nx, ny)
        if terrain == Terrain.DOOR_CLOSED:
            self._set_door(actor, nx, ny, True, events)
            return None
        if terrain == Terrain.LAVA:
            return RejectReason.LAVA
        if not level.passable[ny, nx]:
            return RejectReason.BLOCKED
        self.move_actor(actor, nx, ny)
        return None

    def move_actor(self, actor: Actor, nx: int, ny: int) -> None:
        """Move ``actor`` to the free cell ``(nx, ny)`` of its level."""
        occ = self._occ[actor.depth]
        occ[actor.y, actor.x] = -1
        occ[ny, nx] = actor.id
        actor.x, actor.y = nx, ny

    def _swap(self, actor: Actor, other: Actor) -> None:
        """Trade places with an idle player (nothing queued, not mid-action), so
        a crowd in a corridor does not jam; a busy player still blocks."""
        occ = self._occ[actor.depth]
        actor.x, other.x = other.x, actor.x
        actor.y, other.y = other.y, actor.y
        occ[actor.y, actor.x] = actor.id
        occ[other.y, other.x] = other.id

    def _set_door(self, actor: Actor, x: int, y: int, opened: bool, events: list[Event]) -> None:
        self.set_terrain(actor.depth, x, y, Terrain.DOOR_OPEN if opened else Terrain.DOOR_CLOSED)
        events.append(DoorChanged(actor.depth, x, y, actor.id, opened))

    def _change_level(self, actor: Actor, depth: int, events: list[Event]) -> RejectReason | None:
        arrive_on = Terrain.STAIRS_UP if depth > actor.depth else Terrain.STAIRS_DOWN
        try:
            x, y = self._arrival(depth, arrive_on)
        except LookupError:
            return RejectReason.OCCUPIED
        events.append(TookStairs(actor.depth, actor.x, actor.y, actor.id, depth))
        self._relocate(actor, depth, x, y)
        return None

    def _arrival(self, depth: int, arrive_on: Terrain) -> tuple[int, int]:
        """The free cell nearest the staircase ``arrive_on`` of ``depth``.

        Raises:
            LookupError: The level has no free cell reachable from there.
        """
        level = self.level(depth)
        targets = level.find(arrive_on) or level.find(Terrain.FLOOR)
        return self.free_cell_near(depth, *targets[0])

    def _entrance(self) -> tuple[int, int, int]:
        """Where a new or respawning player arrives: ``(depth, x, y)``.

        The free cell nearest the up staircase of depth 1; when depth 1 is
        full (a level seats a couple of thousand players), the next depth's,
        and so on down to :data:`ENTRANCE_DEPTHS`.

        Raises:
            LookupError: Every one of those levels is full.
        """
        for depth in range(1, ENTRANCE_DEPTHS + 1):
            try:
                return (depth, *self._arrival(depth, Terrain.STAIRS_UP))
            except LookupError:
                continue
        raise LookupError(f"no free cell on depths 1-{ENTRANCE_DEPTHS}")

    def _relocate(self, actor: Actor, depth: int, x: int, y: int) -> None:
        """Move ``actor`` to the free cell ``(x, y)`` of level ``depth``."""
        if self._occ[actor.depth][actor.y, actor.x] == actor.id:
            self._occ[actor.depth][actor.y, actor.x] = -1
        self._players_on[actor.depth] -= 1
        monsters.forget(self, actor.id)
        actor.depth, actor.x, actor.y = depth, x, y
        self._occ[depth][y, x] = actor.id
        self._players_on[depth] += 1
        actor.fov_key = None

    def _respawn(self, actor: Actor, events: list[Event]) -> None:
        try:
            depth, x, y = self._entrance()
        except LookupError:
            actor.respawn_tick = self.tick + RESPAWN_TICKS
            return
        actor.hp, actor.en, actor.respawn_tick = actor.max_hp, actor.max_en, 0
        avatar = actor.statuses.rounds(StatusKind.AVATAR)
        actor.statuses = Statuses(self.status_rules)
        if avatar:  # seed 001's avatar outlives the death it softens
            actor.statuses.add(StatusKind.AVATAR, avatar)
        hunger.reset_on_death(actor.food, avatar=avatar > 0, rules=self.status_rules.hunger)
        self._relocate(actor, depth, x, y)
        actor.next_act = self.tick
        events.append(Respawned(actor.depth, actor.x, actor.y, actor.id))

    # ----------------------------------------------------------- combat

    def is_surprise(self, attacker: Actor, defender: Actor) -> bool:
        """Seed 002's surprise attack: the defender is asleep, paralysed, frozen
        or webbed (cannot act), or wandering, or
        the attacker was not in the defender's view at the end of the last tick
        (it has just come into view — which covers the door trick). A sleeping
        player is never surprised (seed 002: the hero "can't get surprise-attacked
        while sleeping", being warned of what is in view); only paralysis,
        freezing or a web make an attack on it a surprise."""
        if defender.is_player and defender.statuses.has(StatusKind.ASLEEP):
            return any(defender.statuses.has(kind) for kind in _HELD)
        if defender.mind in (Mind.ASLEEP, Mind.WANDERING) or not can_act(defender.statuses):
            return True
        if defender.is_player:
            return attacker.id not in self.sees.get(defender.id, ())
        if attacker.is_player:
            return defender.id not in self.sees.get(attacker.id, ())
        return False

    def melee(self, attacker: Actor, defender: Actor, events: list[Event]) -> None:
        """Resolve one melee attack (:func:`server.sim.fighting.melee`)."""
        fighting.melee(self, attacker, defender, events)

    def after_harm(self, victim: Actor, source: Actor | None, events: list[Event]) -> None:
        """What follows damage to ``victim`` (its ``hp`` already lowered): a
        monster is provoked by ``source``, a victim at 0 health dies, a monster
        below its courage flees (seed 001). A unique monster takes no killing
        blow from another monster (seed 003): it is left at 1 health."""
        if (
            not victim.alive
            and "unique" in victim.flags
            and (source is None or not source.is_player)
        ):
            victim.hp = 1
        if not victim.alive:
            self._kill(victim, source, events)
            return
        if victim.is_player:
            return
        if source is not None and source.is_player and source.id in self.actors:
            monsters.provoked(self, victim, source, events)
        if victim.mind != Mind.FLEEING and victim.hp < victim.courage * victim.max_hp:
            victim.mind = Mind.FLEEING
            events.append(Fled(victim.depth, victim.x, victim.y, victim.id))

    def _kill(self, victim: Actor, killer: Actor | None, events: list[Event]) -> None:
        events.append(
            Died(victim.depth, victim.x, victim.y, victim.id, None if killer is None else killer.id)
        )
        if victim.is_player:
            self._occ[victim.depth][victim.y, victim.x] = -1
            victim.hp = 0
            victim.respawn_tick = self.tick + RESPAWN_TICKS
            self._reject_queue(victim, RejectReason.DEAD, events)  # answered, even by death
            monsters.forget(self, victim.id)
        else:
            self._remove(victim)
        if killer is not None and killer.is_player and victim.xp_value > 0:
            self.gain_xp(killer, victim.xp_value, events)

    def gain_xp(self, actor: Actor, amount: int, events: list[Event]) -> None:
        """Add experience and apply level-ups with the class's boosts."""
        actor.xp += amount
        events.append(GainedXp(actor.id, amount))
        if actor.cls is None:
            return
        boosts = self.content.classes[actor.cls].boosts
        while actor.xp >= xp_for_level(actor.level + 1):
            actor.level += 1
            actor.max_hp += boosts.health
            actor.hp += boosts.health
            actor.max_en += boosts.energy
            actor.en += boosts.energy
            actor.power += boosts.power
            actor.defence += boosts.defence
            actor.accuracy += boosts.accuracy
            actor.dodge += boosts.dodge
            events.append(LevelledUp(actor.depth, actor.x, actor.y, actor.id, actor.level))
            if actor.level % 5 == 0:
                actor.choices_owed += 1
                events.append(Notice(actor.id, "choice", ()))

    # ----------------------------------------------------------- upkeep

    # ----------------------------------------------------------- effects

    def harm_typed(
        self,
        target: Actor,
        raw: int,
        damage_type: str | None,
        source: Actor | None,
        cause: str,
        events: list[Event],
    ) -> int:
        """Typed damage with terrain, resistance and side effects (:mod:`server.sim.harm`)."""
        return harm.harm_typed(self, target, raw, damage_type, source, cause, events)

    def resist_adjusted(self, target: Actor, amount: int, damage_type: str) -> int:
        """``amount`` after ``target``'s resistance to ``damage_type`` (seed 003)."""
        return dmg.resist_damage(
            self.rng,
            max(0, amount),
            damage_type,
            resist_level=target.resistance(damage_type),
            flags=target.flags & _MONSTER_FLAGS,
        )

    def burn_floor_items(
        self,
        depth: int,
        cells: list[tuple[int, int]],
        damage_type: str,
        events: list[Event],
        damage: int = 20,
    ) -> None:
        """Destroy items on ``cells`` hurt by ``damage_type`` (seed 003)."""
        harm.burn_floor_items(self, depth, cells, damage_type, damage, events)

    def add_status(self, actor: Actor, kind: StatusKind, rounds: int, events: list[Event]) -> None:
        """Give ``actor`` ``rounds`` of status ``kind`` (seed 001 stacking rules)."""
        if rounds <= 0 or not actor.alive:
            return
        self.touched.add(actor.id)
        self.report_status(actor, actor.statuses.add(kind, rounds), events)

    def report_status(self, actor: Actor, effects: list[StatusEffect], events: list[Event]) -> None:
        """Emit the events of status changes on ``actor``."""
        if effects:
            self.touched.add(actor.id)
        upkeep.report_status(self, actor, effects, events)

    def provoke(self, victim: Actor, source: Actor | None, events: list[Event]) -> None:
        """A monster targeted by a player's spell wakes and hunts the caster."""
        if victim.alive and not victim.is_player and source is not None and source.is_player:
            monsters.provoked(self, victim, source, events)

    def potion_splash(
        self, target: Actor, item: Item, source: Actor | None, events: list[Event]
    ) -> None:
        """A thrown fragile item shatters on ``target``: a potion's effect (seed 001)."""
        use.potion_effect(self, target, self.content.items[item.key], source, events)

    def refresh_bonus(self, actor: Actor) -> None:
        """Recompute what ``actor``'s equipment gives it."""
        inventory.refresh_bonus(actor, self.content)

    def teleport_random(self, actor: Actor) -> None:
        """Move ``actor`` to a random free floor cell of its level (one draw)."""
        level = self.levels[actor.depth]
        free = np.flatnonzero(level.passable & (self._occ[actor.depth] < 0))
        if free.size:
            y, x = divmod(int(free[int(self.rng.integers(free.size))]), level.width)
            self.move_actor(actor, x, y)

    def reveal_map(self, actor: Actor, radius: int) -> None:
        """Teach ``actor``'s map memory the terrain within ``radius`` cells."""
        actor.reveal = max(actor.reveal, radius)
        self._revealing.add(actor.id)

    def nearest_actor(
        self, depth: int, at: tuple[int, int], radius: int, exclude: set[int]
    ) -> Actor | None:
        """The living actor nearest ``at`` within ``radius`` (Chebyshev; ties by id)."""
        occ = self.occupancy(depth)
        h, w = occ.shape
        x0, y0 = max(0, at[0] - radius), max(0, at[1] - radius)
        window = occ[y0 : min(h, at[1] + radius + 1), x0 : min(w, at[0] + radius + 1)]
        best: tuple[int, int] | None = None
        for aid in window[window >= 0].tolist():
            if aid in exclude:
                continue
            other = self.actors[aid]
            d = max(abs(other.x - at[0]), abs(other.y - at[1]))
            if best is None or (d, aid) < best:
                best = (d, aid)
        return None if best is None else self.actors[best[1]]

    def _update_views(self) -> None:
        """Bring every living player's field of view, map memory, visible set
        (:attr:`sees`) and the monsters' :attr:`seen_by` up to date.

        A field of view is recomputed only when its player moved, changed
        level, or terrain changed in its window; a player for whom none of
        that happened is not looked at (:meth:`_players_to_look_at`). A visible set is rebuilt
        only for a player whose field of view changed or who has, in view, a
        cell whose occupant changed since the last update, and it replaces
        the kept one only if it differs; a level's rebuilds are done together
        in numpy (:meth:`_visible_sets`). :attr:`seen_by` follows the sets
        that changed.
        """
        # Invisibility needs the ability or a status: the cheap test first.
        unseen = {
            aid
            for aid, a in self.actors.items()
            if (a.statuses.kinds or "invisible" in a.abilities) and a.unseen
        }
        turned = unseen ^ self._unseen  # became invisible or visible (or came or went)
        self._unseen = unseen
        self._prune_fov_cache()
        players = self._players
        for pid in self._told_tiles:
            actor = players.get(pid)
            if actor is not None:
                actor.seen_tiles = []
        self._told_tiles = []
        taken: set[int] = set()
        moved: dict[int, list[Actor]] = {}
        for actor in self._players_to_look_at(taken):
            if not actor.alive:
                if actor.id in self._slots or self.sees[actor.id]:
                    self.sees[actor.id] = set()
                    self._drop_sight(actor.id)
                continue
            key = actor.fov_key
            if (
                key is None
                or key[1] != actor.x
                or key[2] != actor.y
                or key[0] != actor.depth
                or actor.fov is None
            ):
                moved.setdefault(actor.depth, []).append(actor)  # a new field of view
            elif (
                key[3] == self._version.get(actor.depth, 0)
                and not actor.reveal
                and actor.id in self._slots
            ):
                continue  # in place, terrain unchanged: nothing to do
            elif self._needs_fov(actor):
                moved.setdefault(actor.depth, []).append(actor)
            else:
                self._update_fov(actor)
        for depth, group in moved.items():
            self._new_fovs(depth, group)
        for depth, sight in self._sight.items():
            if depth not in taken:  # a level this update gave its first slot
                sight.update(self._occ[depth])
            if sight.count or sight.pairs.size:
                self._visible_sets(depth, sight)
        self._cut_invisible(turned)
        for lv in self.levels.values():  # every living player's view is now up to date
            lv.clear_changes()

    def _players_to_look_at(self, taken: set[int]) -> list[Actor]:
        """The players whose field of view, map memory or slot may need
        bringing up to date (:meth:`_update_views`), in id order; the others
        stand where their field of view was placed, on a level whose terrain
        did not change near them, and need nothing.

        Every living player with a slot stands, or stood, on the cell where
        its slot was placed: a player who moved, changed level, died or left
        since changed the occupant of that cell, which the slot's level sees
        when it takes the occupancy (:meth:`Sight.update`, done here for
        every level before any field of view changes, as none moves after).
        To those are added the players whose window a terrain change touched
        (:meth:`_keep_fovs`), those with no slot (new, dead, or arrived on a
        level), and those given a :meth:`reveal_map`. The depths whose
        occupancy was taken are added to ``taken``.
        """
        look: set[int] = set(self._revealing)
        self._revealing.clear()
        version = self._version
        occ = self._occ
        r = FOV_RADIUS
        for depth, sight in self._sight.items():
            if sight.version != version.get(depth, 0):
                look.update(self._keep_fovs(depth, sight))
            sight.update(occ[depth])
            taken.add(depth)
            if sight.any_change and sight.count:
                active = sight.active()
                stood = sight.changed[sight.ys[active] + r, sight.xs[active] + r]
                look.update(sight.owners[active[stood]].tolist())
        players = self._players
        look.update(players.keys() - self._slots.keys())
        return [players[pid] for pid in sorted(look) if pid in players]

    def _keep_fovs(self, depth: int, sight: Sight) -> list[int]:
        """Terrain changed on ``depth`` since the last update: mark the fields
        of view whose window holds none of the changed cells (and whose
        player did not move) as still good, so only the others are looked at
        again (:meth:`_update_fov`); return the ids of those others (the
        players whose window holds a changed cell)."""
        version = self._version[depth]
        sight.version = version
        active = sight.active()
        if not active.size:
            return []
        xs, ys = sight.xs[active], sight.ys[active]
        near = np.zeros(len(active), dtype=np.bool_)
        for cx, cy in self.levels[depth].changed:
            near |= (np.abs(xs - cx) <= FOV_RADIUS) & (np.abs(ys - cy) <= FOV_RADIUS)
        players = self._players
        for pid in sight.owners[active[~near]].tolist():
            actor = players[pid]
            key = actor.fov_key
            if key is not None and key[0] == depth and key[1] == actor.x and key[2] == actor.y:
                actor.fov_key = (depth, actor.x, actor.y, version)
        return list(sight.owners[active[near]].tolist())

    def _needs_fov(self, actor: Actor) -> bool:
        """Whether living player ``actor`` needs a new field of view: it moved
        or changed level since its last, or terrain changed in its window
        (if terrain changed elsewhere on the level only, its key is brought
        up to date)."""
        key = (actor.depth, actor.x, actor.y, self._version[actor.depth])
        if (
            key != actor.fov_key
            and actor.fov is not None
            and actor.fov_key is not None
            and key[:3] == actor.fov_key[:3]
            and not _touches(actor.fov, self.levels[actor.depth].changed)
        ):
            actor.fov_key = key  # terrain changed elsewhere on the level only
        return key != actor.fov_key or actor.fov is None

    def _update_fov(self, actor: Actor) -> None:
        """Bring living player ``actor``'s map memory (a :meth:`reveal_map`)
        and its slot in its level's :class:`~server.sim.sight.Sight` up to
        date, its field of view being so (:meth:`_needs_fov`)."""
        assert actor.fov is not None
        if actor.reveal > 0:
            actor.seen_tiles += self._reveal(actor, self.levels[actor.depth])
            if actor.seen_tiles:
                self._told_tiles.append(actor.id)
        placed = self._slots.get(actor.id)
        if placed is not None and placed[0] == actor.depth and placed[2] is actor.fov:
            return
        if placed is not None and placed[0] != actor.depth:
            self._sight[placed[0]].release(placed[1])
            placed = None
        sight = self._sight.get(actor.depth)
        if sight is None:
            sight = self._sight[actor.depth] = Sight(self._occ[actor.depth].shape)
        mask = padded_mask(actor.fov, actor.x, actor.y, FOV_RADIUS)
        slot = sight.place(actor.id, actor.x, actor.y, mask, None if placed is None else placed[1])
        self._slots[actor.id] = (actor.depth, slot, actor.fov)

    def _new_fovs(self, depth: int, group: list[Actor]) -> None:
        """Give the living players ``group``, all on ``depth``, the fields of
        view from their cells (each computed at most once while the terrain
        around the cell stays as it is: :class:`~server.sim.sight.FovCache`,
        entries near a changed cell dropped by :meth:`_prune_fov_cache`
        first), their map memory of the cells they see, and their slots in
        the level's :class:`~server.sim.sight.Sight`: a few numpy calls for
        all of them, and a few steps per player to hand out the results."""
        level = self.levels[depth]
        cache = self._fov_cache.get(depth)
        if cache is None:
            cache = self._fov_cache[depth] = FovCache(level.height, level.width, FOV_CACHE_CELLS)
        sight = self._sight.get(depth)
        if sight is None:
            sight = self._sight[depth] = Sight(self._occ[depth].shape)
        xl, yl = [a.x for a in group], [a.y for a in group]
        xs, ys = np.array(xl, dtype=np.intp), np.array(yl, dtype=np.intp)
        rows = cache.rows_of(level.transparent, xs, ys)
        masks = cache.masks(rows)
        fovs = cache.fovs(rows.tolist(), xl, yl)
        grids: list[NDArray[np.uint8]] = []
        slots: list[int] = []
        version, placed_at = self._version[depth], self._slots
        for actor, fov in zip(group, fovs, strict=True):
            actor.fov_key = (depth, actor.x, actor.y, version)
            actor.fov = fov
            grid = actor.memory.get(depth)
            if grid is None:
                grid = actor.memory[depth] = np.full(level.terrain.shape, 255, dtype=np.uint8)
            grids.append(grid)
            placed = placed_at.get(actor.id)
            if placed is not None and placed[0] != depth:
                self._sight[placed[0]].release(placed[1])
                placed = None
            slots.append(-1 if placed is None else placed[1])
        terrain = cache.terrain_windows(level.terrain, xs, ys)
        counts, cells = remember_windows(grids, terrain, masks, xl, yl)
        taken = sight.place_many([a.id for a in group], xs, ys, masks, np.array(slots, np.intp))
        at = 0
        for actor, fov, slot, count in zip(group, fovs, taken.tolist(), counts, strict=True):
            placed_at[actor.id] = (depth, slot, fov)
            if count:
                actor.seen_tiles = cells[at : at + 3 * count]
                at += 3 * count
            if actor.reveal > 0:
                actor.seen_tiles += self._reveal(actor, level)
            if actor.seen_tiles:
                self._told_tiles.append(actor.id)

    def _prune_fov_cache(self) -> None:
        """Drop the cached fields of view that a terrain change since the last
        update may have changed (those from cells within ``FOV_RADIUS`` of a
        changed cell: :attr:`Level.changed`), and the caches of levels
        without players."""
        for depth in list(self._fov_cache):
            level = self.levels.get(depth)
            if level is None or not self._players_on[depth]:
                del self._fov_cache[depth]
                continue
            cache = self._fov_cache[depth]
            if level.changed and len(cache):
                cache.drop_near(level.changed, FOV_RADIUS)

    def _visible_sets(self, depth: int, sight: Sight) -> None:
        """Rebuild the visible sets of the living players of ``depth`` (fields
        of view and slots up to date) that need it: a new field of view, or a
        cell in view whose occupant changed since the last call.

        Each player's window of the occupancy is read through a padded copy
        (``FOV_RADIUS`` cells of nothing around the level), so every window
        is ``SIDE × SIDE`` and one numpy gather serves the whole level. The
        rebuilt sets become the level's pairs (:attr:`Sight.pairs
        <server.sim.sight.Sight.pairs>`), and only the players whose set
        differs from the one they had (found from the arrays,
        :meth:`~server.sim.sight.Sight.replace_pairs`) are given a new one.
        """
        fresh = sight.take_fresh()  # the occupancy was taken first (_players_to_look_at)
        if sight.any_change and sight.count:
            active = sight.active()
            seen = sight.changed_windows[sight.ys[active], sight.xs[active]]
            seen &= sight.masks[active]
            need = active[seen.any(axis=(1, 2))]
            if 5 * len(need) > 4 * sight.count:
                chosen = active  # a crowd: every set, so none is cut out of the pairs
            elif fresh.size:  # both sorted slot numbers: one mask, not a sort
                pick = np.zeros(len(sight.owners), dtype=np.bool_)
                pick[need] = True
                pick[fresh] = True
                chosen = np.flatnonzero(pick)
            else:
                chosen = need
        else:
            chosen = fresh
        if not chosen.size and not sight.released():
            return
        windows = sight.occupant_windows[sight.ys[chosen], sight.xs[chosen]]
        stack = sight.masks[chosen]
        stack &= windows >= 0
        counts = stack.sum(axis=(1, 2))
        # Every chosen player's pairs, sorted: by player, then seen id.
        pairs = pair_keys(np.repeat(sight.owners[chosen], counts), windows[stack])
        pairs.sort()
        changed = sight.replace_pairs(chosen, pairs, self.tick)
        if not changed.size:
            return
        rows = pairs[owned_by(pairs, changed)]  # only these become Python ints
        owners = rows >> PAIR_SHIFT
        begins = np.searchsorted(owners, changed, "left").tolist()
        ends = np.searchsorted(owners, changed, "right").tolist()
        ids = rows & ID_MASK
        monsters = np.fromiter(self._monster_ids, np.int64, len(self._monster_ids))
        monsters.sort()
        watching = set(owners[in_sorted(ids, monsters)].tolist())
        self._set_raw_sees(changed.tolist(), ids.tolist(), begins, ends, watching)

    def _cut_invisible(self, turned: set[int]) -> None:
        """Cut the invisible actors from the visible sets that were not rebuilt
        this update but whose cut may differ: their player sees an actor of
        ``turned`` (one that became invisible or visible; for a player, every
        set on its level is cut again), or sees an invisible actor and may
        have gained or lost the sight of the invisible."""
        again: set[int] = set()
        for aid in turned:
            actor = self.actors.get(aid)
            if actor is None:
                continue  # gone: the sets that held it were rebuilt
            if actor.is_player:
                again.update(pid for pid, a in self._players.items() if a.depth == actor.depth)
            else:
                again.update(self.seen_by.get(aid, ()))
        for pid, sight in self._sees_invisible.items():
            if self._players[pid].sees_invisible() != sight:
                again.add(pid)
        for pid in again:
            raw = self._raw_sees.get(pid)
            if raw is not None:
                self._cut(pid, raw)

    def _cut(self, pid: int, raw: set[int]) -> None:
        """Set :attr:`sees` of living player ``pid`` from ``raw``: the actors
        in its field of view but the invisible ones (itself aside), unless it
        sees invisible."""
        hidden = raw & self._unseen
        hidden.discard(pid)
        if not hidden:
            self._sees_invisible.pop(pid, None)
            self.sees[pid] = raw
            return
        sight = self._sees_invisible[pid] = self._players[pid].sees_invisible()
        self.sees[pid] = raw if sight else raw - hidden

    def _set_raw_sees(
        self,
        pids: list[int],
        ids: list[int],
        begins: list[int],
        ends: list[int],
        watching: set[int],
    ) -> None:
        """Record that each living player ``pids[i]`` has the actors
        ``ids[begins[i]:ends[i]]`` in its field of view: its :attr:`sees`
        (:meth:`_cut`) and its entries in :attr:`seen_by`; ``watching`` holds
        those of ``pids`` who have a monster among them."""
        raw_sees, sees, sees_monsters = self._raw_sees, self.sees, self._sees_monsters
        seen_by = self.seen_by
        cut = self._cut if self._unseen else None
        forget_cut = self._sees_invisible.pop
        monster_ids = self._monster_ids
        for pid, begin, end in zip(pids, begins, ends, strict=True):
            raw = set(ids[begin:end])
            raw_sees[pid] = raw
            if cut is not None:
                cut(pid, raw)
            else:
                forget_cut(pid, None)
                sees[pid] = raw
            old = sees_monsters.get(pid)
            if pid in watching:
                mons = raw & monster_ids
            elif old is None:
                sees_monsters[pid] = set()
                continue
            elif not old:
                continue
            else:
                mons = set()
            if old == mons:
                continue
            sees_monsters[pid] = mons
            if old:
                for mid in old - mons:
                    watchers = seen_by.get(mid)
                    if watchers is not None:
                        watchers.remove(pid)
                        if not watchers:
                            del seen_by[mid]
                mons = mons - old
            for mid in mons:
                watchers = seen_by.get(mid)
                if watchers is None:
                    seen_by[mid] = [pid]
                else:
                    insort(watchers, pid)

    def _drop_sight(self, pid: int) -> None:
        """Forget what player ``pid`` saw (it died or left): its entries in
        :attr:`seen_by` go."""
        self._raw_sees.pop(pid, None)
        self._sees_invisible.pop(pid, None)
        placed = self._slots.pop(pid, None)
        if placed is not None:
            self._sight[placed[0]].release(placed[1])
        old = self._sees_monsters.pop(pid, None)
        for mid in old or ():
            watchers = self.seen_by.get(mid)
            if watchers is not None and pid in watchers:
                watchers.remove(pid)
                if not watchers:
                    del self.seen_by[mid]

    def _reveal(self, actor: Actor, level: Level) -> list[int]:
        """Write the terrain within ``actor.reveal`` cells into its memory; return
        the changed cells as a flat ``[x, y, code, ...]`` list (for ``tiles``)."""
        radius, actor.reveal = actor.reveal, 0
        memory = actor.memory.setdefault(
            actor.depth, np.full(level.terrain.shape, 255, dtype=np.uint8)
        )
        y0, x0 = max(0, actor.y - radius), max(0, actor.x - radius)
        rows = slice(y0, min(level.height, actor.y + radius + 1))
        cols = slice(x0, min(level.width, actor.x + radius + 1))
        window = level.terrain[rows, cols]
        mem = memory[rows, cols]
        fresh = mem != window
        fresh &= window != Terrain.ROCK
        if not _any_set(fresh):
            return []
        return _remember(mem, window, fresh, x0, y0)


def _search_order(walkable: NDArray[np.bool_], x: int, y: int) -> NDArray[np.intp]:
    """Flat indices (``y * W + x``) of the cells a breadth-first search from
    ``(x, y)`` over ``walkable`` (``bool[H, W]``) discovers, in the order it
    discovers them (8 directions in ``DIRECTIONS`` order); ``(x, y)`` itself
    is not included."""
    height, width = walkable.shape
    seen = {(x, y)}
    queue = deque([(x, y)])
    found: list[int] = []
    while queue:
        cx, cy = queue.popleft()
        for dx, dy in DIRECTIONS:
            nx, ny = cx + dx, cy + dy
            if not (0 <= nx < width and 0 <= ny < height) or (nx, ny) in seen:
                continue
            if not walkable[ny, nx]:
                continue
            seen.add((nx, ny))
            queue.append((nx, ny))
            found.append(ny * width + nx)
    return np.array(found, dtype=np.intp)


def _any_set(mask: NDArray[np.bool_]) -> bool:
    """Whether any cell of the boolean array ``mask`` is True: its bytes
    hold a 1 (``bool`` arrays are one byte a cell, 0 or 1). For the 17×17
    windows of map memory, 0.3 µs where ``mask.any()`` takes 2.6
    (numpy's reduction machinery; timed on the 2-core machine)."""
    return mask.tobytes().find(1) >= 0


def _touches(fov: FieldOfView, cells: Iterable[tuple[int, int]]) -> bool:
    """Whether any of ``cells`` lies in the window of ``fov`` (its terrain
    change may change what is seen or remembered there)."""
    h, w = fov.visible.shape
    x0, y0 = fov.x0, fov.y0
    return any(x0 <= x < x0 + w and y0 <= y < y0 + h for x, y in cells)


def _remember(
    mem: NDArray[np.uint8], window: NDArray[np.uint8], fresh: NDArray[np.bool_], x0: int, y0: int
) -> list[int]:
    """Write the ``fresh`` cells of ``window`` into ``mem`` (both views of the
    same ``[y, x]`` rectangle whose top-left cell is ``(x0, y0)``); return them
    as a flat ``[x, y, code, ...]`` list for the ``tiles`` of a delta."""
    mem[fresh] = window[fresh]
    ys, xs = fresh.nonzero()
    flat = np.empty(3 * len(xs), dtype=np.int64)
    flat[0::3] = xs + x0
    flat[1::3] = ys + y0
    flat[2::3] = window[fresh]
    return list(flat.tolist())
