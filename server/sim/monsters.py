"""Monster behaviour and population (seed 001: courage; seed 002: noticing).

A monster is in one of four minds:

- ASLEEP: each of its actions, if a player it can see stands within its sight,
  it wakes with chance ``WAKE_CHANCE`` and starts HUNTING that player.
- WANDERING: walks towards a randomly chosen room; notices any player it can
  see at once and starts HUNTING.
- HUNTING: attacks its target when adjacent, otherwise walks a tcod path
  towards it (or towards where it last saw it); gives up after
  ``GIVE_UP_ACTIONS`` actions without sight and goes back to WANDERING.
- FLEEING: below its courage fraction of health (seed 001) it moves to the
  neighbouring cell farthest from the nearest player it sees; cornered, it
  fights. It recovers once regeneration brings it to twice that fraction.

"Can see" uses the players' fields of view (symmetric shadowcasting): a
monster sees a player when the player sees the monster and the distance is
within the monster's ``sight``. Immobile monsters only attack what is adjacent.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from server.content import Content, MonsterDef, Terrain
from server.sim import casting, zapping
from server.sim.actors import Actor, Mind, new_monster
from server.sim.commands import DIRECTIONS
from server.sim.events import DoorChanged, Event, Noticed
from server.sim.level import Level
from server.sim.status import action_delay, can_act, can_melee
from server.sim.terrain import MOVE_FLAGS, walkable_cells, walkable_for

if TYPE_CHECKING:
    from server.sim.fov import FieldOfView
    from server.sim.world import World

WAKE_CHANCE = 0.25
"""Chance per action that a sleeping monster in sight of a player wakes."""
GIVE_UP_ACTIONS = 12
RANGED_CHANCE_IN = 3
"""A breather or caster that sees its target attacks from afar one action in this many."""
"""Actions a hunter keeps searching after losing sight of its target."""
SLEEP_CHANCE = 0.6
"""Chance that a monster placed at level generation is asleep (else wandering)."""
PATH_MARGIN = 6
"""Cells of slack around hunter and target when cropping the path-finding window."""


def monsters_for_level(depth: int, width: int = 80, height: int = 21) -> int:
    """How many monsters a level holds when stocked: 6 + depth per 80×21 cells of area."""
    return max(1, round((6 + depth) * width * height / (80 * 21)))


def spawn_pool(content: Content, depth: int) -> list[MonsterDef]:
    """The kinds random spawning may place at ``depth``, in file order, each
    drawn with weight ``1 / rarity``; uniques never (seed 003: one of a kind,
    placed by :func:`place_uniques` instead)."""
    return [
        m
        for m in content.monsters.values()
        if m.depth_min <= depth <= m.depth_max and "unique" not in m.flags
    ]


def _choose_kind(world: World, depth: int, rng: np.random.Generator) -> str | None:
    kinds = spawn_pool(world.content, depth)
    if not kinds:
        return None
    weights = np.array([1.0 / m.rarity for m in kinds])
    return kinds[int(rng.choice(len(kinds), p=weights / weights.sum()))].key


def unique_pool(content: Content, depth: int) -> list[MonsterDef]:
    """The uniques whose depths include ``depth``, in file order."""
    return [
        m
        for m in content.monsters.values()
        if m.depth_min <= depth <= m.depth_max and "unique" in m.flags
    ]


def unique_depth(seed: int, mdef: MonsterDef) -> int:
    """The one level of a world where the unique ``mdef`` lives (seed 003: one
    of a kind, met at its depth): uniform on its ``depth_min..depth_max``,
    drawn from a generator seeded by the world's seed and the unique's key
    only, so it does not depend on the order of play or of the data file."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 3, *mdef.key.encode()]))
    return int(rng.integers(mdef.depth_min, mdef.depth_max + 1))


def place_uniques(world: World, level: Level, rng: np.random.Generator) -> list[Actor]:
    """Place each unique whose home (:func:`unique_depth`) is this level, asleep
    or wandering as any monster placed at generation, after the level's other
    monsters, drawing from the level's own ``rng``. Returns those placed."""
    placed = []
    for mdef in unique_pool(world.content, level.depth):
        if unique_depth(world.seed, mdef) != level.depth:
            continue
        mind = Mind.ASLEEP if rng.random() < SLEEP_CHANCE else Mind.WANDERING
        monster = _spawn(world, level, rng, mind, avoid_seen=False, key=mdef.key)
        if monster is not None:
            placed.append(monster)
    return placed


def _spawn(
    world: World,
    level: Level,
    rng: np.random.Generator,
    mind: Mind,
    avoid_seen: bool,
    key: str | None = None,
) -> Actor | None:
    """Place one monster of a kind fit for the level in a random room cell.

    Its first action falls on a random tick of its first turn,
    ``tick + rng.integers(speed)``, as the Angband family gives a new monster
    a random starting energy: the monsters of a level generated at once then
    do not all act on the same tick (issue 10: a tick of every monster every
    few ticks set the tick's p99).

    Draw order: the kind (none when ``key`` names it), then per try a room
    and a cell in it (up to 20 tries), then the first-action draw. Returns
    None when no try found a free cell.
    """
    if key is None:
        key = _choose_kind(world, level.depth, rng)
    if key is None or not level.rooms:
        return None
    occ = world.occupancy(level.depth)
    watchers: list[FieldOfView] | None = None  # found at the first cell that needs them
    for _ in range(20):
        room = level.rooms[int(rng.integers(len(level.rooms)))]
        x = room.x + int(rng.integers(room.w))
        y = room.y + int(rng.integers(room.h))
        if not level.passable[y, x] or occ[y, x] >= 0:
            continue
        if level.terrain[y, x] in (Terrain.STAIRS_UP, Terrain.STAIRS_DOWN):
            continue
        if avoid_seen:
            if watchers is None:
                watchers = _views_on(world, level.depth)
            if any(fov.contains(x, y) for fov in watchers):
                continue
        if level.stairs_up and level.depth == 1 and _dist((x, y), level.stairs_up) < 8:
            continue
        mdef = world.content.monsters[key]
        monster = world.add_actor(
            partial(new_monster, mdef=mdef, depth=level.depth, x=x, y=y, mind=mind),
            level.depth,
            x,
            y,
        )
        monster.next_act = world.tick + int(rng.integers(monster.speed))
        return monster
    return None


def _views_on(world: World, depth: int) -> list[FieldOfView]:
    """The fields of view of the players on ``depth`` (one pass over the
    actors for all of a spawn's tries, not one per try: with 4,000 players
    each pass is about half a millisecond)."""
    return [
        actor.fov
        for actor in world.actors.values()
        if actor.is_player and actor.depth == depth and actor.fov is not None
    ]


def populate(world: World, level: Level, rng: np.random.Generator) -> None:
    """Stock a newly generated level, drawing only from the level's own ``rng``."""
    for _ in range(monsters_for_level(level.depth, level.width, level.height)):
        mind = Mind.ASLEEP if rng.random() < SLEEP_CHANCE else Mind.WANDERING
        _spawn(world, level, rng, mind, avoid_seen=False)
    place_uniques(world, level, rng)


def restock(world: World, depth: int) -> None:
    """Add one wandering monster out of every player's view if the level is short."""
    level = world.level(depth)
    if world.monsters_on(depth) < monsters_for_level(depth, level.width, level.height):
        _spawn(world, level, world.rng, Mind.WANDERING, avoid_seen=True)


def forget(world: World, player_id: int) -> None:
    """Make every monster hunting ``player_id`` lose it (it left, died or moved level).

    Only monsters hunt, so only they are looked at. A pass over every actor
    cost about 0.1 ms a call with 4,000 players in the world: 2,000 of them
    leaving at once (their connections dropped together) took 270 ms of the
    server's one thread in ``Game.leave``, 98 ms with this pass (in-process,
    116 monsters)."""
    for actor in world.monsters():
        if actor.target == player_id:
            actor.target = None
            actor.target_seen = None
            if actor.mind == Mind.HUNTING:
                actor.mind = Mind.WANDERING


def provoked(world: World, monster: Actor, attacker: Actor, events: list[Event]) -> None:
    """A monster that is attacked wakes and hunts its attacker."""
    if monster.mind in (Mind.ASLEEP, Mind.WANDERING):
        monster.mind = Mind.HUNTING
        events.append(Noticed(monster.depth, monster.x, monster.y, monster.id, attacker.id))
    if monster.mind == Mind.HUNTING:
        monster.target = attacker.id
        monster.target_seen = (attacker.x, attacker.y)
        monster.lost_for = 0


def _dist(a: tuple[int, int], b: tuple[int, int]) -> int:
    return max(abs(a[0] - b[0]), abs(a[1] - b[1]))


def visible_players(world: World, monster: Actor) -> list[Actor]:
    """Players the monster can see, nearest first (ties by id); an invisible
    player is seen only by a monster that sees invisible.

    The candidates are the players in whose field of view the monster stood
    at the end of the last tick (:attr:`World.seen_by`), still alive, on its
    level and within its ``sight`` (Chebyshev distance) now. Called for
    every monster action, so the cheap tests come first."""
    found: list[tuple[int, int, Actor]] = []
    watchers = world.seen_by.get(monster.id)
    if not watchers:
        return []
    actors = world.actors
    mx, my, depth, sight = monster.x, monster.y, monster.depth, monster.sight
    sees_invisible: bool | None = None
    for pid in watchers:
        player = actors.get(pid)
        if player is None or player.depth != depth or not player.alive:
            continue
        d = max(abs(player.x - mx), abs(player.y - my))
        if d > sight:
            continue
        if (player.statuses.kinds or "invisible" in player.abilities) and player.unseen:
            if sees_invisible is None:
                sees_invisible = monster.sees_invisible()
            if not sees_invisible:
                continue
        found.append((d, pid, player))
    found.sort()  # by distance, then id (ids are unique: players are never compared)
    return [p for _, _, p in found]


def act(world: World, monster: Actor, events: list[Event]) -> None:
    """Run one action of ``monster``; it always spends its action delay
    (``speed`` ticks, changed by haste and slowness)."""
    monster.next_act = world.tick + action_delay(monster.statuses, monster.speed)
    if not can_act(monster.statuses):
        return
    seen = visible_players(world, monster)
    if monster.mind == Mind.ASLEEP:
        if seen and world.rng.random() < WAKE_CHANCE:
            _notice(monster, seen[0], events)
        return
    if monster.mind == Mind.WANDERING and seen:
        _notice(monster, seen[0], events)
    if monster.mind == Mind.FLEEING:
        _flee(world, monster, seen, events)
        return
    if monster.mind == Mind.HUNTING:
        _hunt(world, monster, seen, events)
        return
    if not monster.immobile:
        _wander(world, monster, events)


def ranged_attack(world: World, monster: Actor, target: Actor, events: list[Event]) -> bool:
    """A breather or spellcaster may attack from afar instead of closing in.

    One in :data:`RANGED_CHANCE_IN` actions while it sees its target: a
    breather lined up with it breathes (a ray, seed 000); otherwise a caster
    casts one of its spells at it (chosen uniformly) if it has the energy.
    Draw order: one ``rng.integers(RANGED_CHANCE_IN)``; then the breath's or
    spell's draws (a spell choice is one ``rng.integers(len(spells))``).

    Returns:
        True if it attacked (its action is spent).
    """
    mdef = world.content.monsters.get(monster.kind)
    if mdef is None or (mdef.breath is None and not mdef.spells):
        return False
    if int(world.rng.integers(RANGED_CHANCE_IN)) != 0:
        return False
    if mdef.breath is not None and zapping.breathe(world, monster, target, events):
        return True
    if mdef.spells:
        key = mdef.spells[int(world.rng.integers(len(mdef.spells)))]
        return casting.monster_cast(world, monster, key, target, events)
    return False


def _notice(monster: Actor, player: Actor, events: list[Event]) -> None:
    monster.mind = Mind.HUNTING
    monster.target = player.id
    monster.target_seen = (player.x, player.y)
    monster.lost_for = 0
    events.append(Noticed(monster.depth, monster.x, monster.y, monster.id, player.id))


def _hunt(world: World, monster: Actor, seen: list[Actor], events: list[Event]) -> None:
    target = world.actors.get(monster.target) if monster.target is not None else None
    if target is not None and target in seen:
        monster.target_seen = (target.x, target.y)
        monster.lost_for = 0
    elif seen:
        target = seen[0]
        monster.target = target.id
        monster.target_seen = (target.x, target.y)
        monster.lost_for = 0
    else:
        target = None
        monster.lost_for += 1
    if target is not None and _dist((monster.x, monster.y), (target.x, target.y)) == 1:
        if can_melee(monster.statuses):
            world.melee(monster, target, events)
        return
    if target is not None and ranged_attack(world, monster, target, events):
        return
    if monster.immobile:
        return
    goal = monster.target_seen
    if (
        goal is None
        or monster.lost_for > GIVE_UP_ACTIONS
        or (target is None and (monster.x, monster.y) == goal)
    ):
        monster.mind = Mind.WANDERING
        monster.target = None
        monster.target_seen = None
        return
    _walk(world, monster, goal, events)


def _flee(world: World, monster: Actor, seen: list[Actor], events: list[Event]) -> None:
    if not seen:
        return
    threat = seen[0]
    here = _dist((monster.x, monster.y), (threat.x, threat.y))
    best: tuple[int, int] | None = None
    best_d = here
    level = world.levels[monster.depth]
    occ = world.occupancy(monster.depth)
    for dx, dy in DIRECTIONS:
        nx, ny = monster.x + dx, monster.y + dy
        if (
            not level.in_bounds(nx, ny)
            or not _can_enter(level, monster, nx, ny)
            or occ[ny, nx] >= 0
        ):
            continue
        d = _dist((nx, ny), (threat.x, threat.y))
        if d > best_d:
            best, best_d = (nx, ny), d
    if best is not None:
        world.move_actor(monster, *best)
    elif here == 1:
        world.melee(monster, threat, events)


def _wander(world: World, monster: Actor, events: list[Event]) -> None:
    """Walk towards a random room's centre (a new one on arrival, or one time
    in 50), along the path found when the goal was chosen (:func:`_walk`)."""
    level = world.levels[monster.depth]
    goal = monster.target_seen
    if goal is None or (monster.x, monster.y) == goal or world.rng.random() < 0.02:
        if not level.rooms:
            return
        room = level.rooms[int(world.rng.integers(len(level.rooms)))]
        goal = (room.x + room.w // 2, room.y + room.h // 2)
        monster.target_seen = goal
    if not _walk(world, monster, goal, events):
        monster.target_seen = None


def _walk(world: World, monster: Actor, goal: tuple[int, int], events: list[Event]) -> bool:
    """One step towards ``goal``: along the path found before while the goal
    has not moved and that path's next cell is free (:func:`_follow`), else
    along a path found now (:func:`_step_towards`, kept for the next steps).
    False when no path reaches the goal."""
    route = monster.route
    if route and route[-1] == goal and _follow(world, monster, route, events):
        return True
    return _step_towards(world, monster, goal, events, keep_route=True)


def _follow(
    world: World, monster: Actor, route: list[tuple[int, int]], events: list[Event]
) -> bool:
    """Take the next step of ``route`` (``(x, y)`` cells, next first) when it
    is still one step away and free: a closed door on it is opened (that is
    the step), an open cell entered. False, changing nothing, when the path
    must be found again (another actor stands there, the terrain changed, or
    the monster was moved off it)."""
    nx, ny = route[0]
    if max(abs(nx - monster.x), abs(ny - monster.y)) != 1:
        return False
    if world.occupancy(monster.depth)[ny, nx] >= 0:
        return False
    level = world.levels[monster.depth]
    if level.terrain[ny, nx] == Terrain.DOOR_CLOSED:
        world.set_terrain(monster.depth, nx, ny, Terrain.DOOR_OPEN)
        events.append(DoorChanged(monster.depth, nx, ny, monster.id, True))
        return True
    if not _can_enter(level, monster, nx, ny):
        return False
    del route[0]
    world.move_actor(monster, nx, ny)
    return True


def _step_towards(
    world: World,
    monster: Actor,
    goal: tuple[int, int],
    events: list[Event],
    *,
    keep_route: bool = False,
) -> bool:
    """Take one step along a tcod path to ``goal``; return False if none exists
    (found by :attr:`World.paths`: the path ``tcod.path.path2d`` finds).

    The path is searched in a window around monster and goal. Closed doors
    cost more (opening takes the step); other actors are costly to pass, so
    monsters walk around each other where they can and wait where they cannot.
    With ``keep_route``, the rest of the path is kept in :attr:`Actor.route`
    (as ``(x, y)`` cells) for :func:`_follow`; else the route is dropped.
    """
    level = world.levels[monster.depth]
    occ = world.occupancy(monster.depth)
    x0 = max(0, min(monster.x, goal[0]) - PATH_MARGIN)
    y0 = max(0, min(monster.y, goal[1]) - PATH_MARGIN)
    x1 = min(level.width, max(monster.x, goal[0]) + PATH_MARGIN + 1)
    y1 = min(level.height, max(monster.y, goal[1]) + PATH_MARGIN + 1)
    terrain = level.terrain[y0:y1, x0:x1]
    walk = walkable_cells(terrain, level.passable[y0:y1, x0:x1], monster.flags)
    cost = np.where(walk, 1, 0).astype(np.int32)
    if monster.flags & MOVE_FLAGS:
        _shut_rim(cost, x0, y0, level.width, level.height)
    cost[terrain == Terrain.DOOR_CLOSED] = 2
    cost[(occ[y0:y1, x0:x1] >= 0) & (cost > 0)] += 8
    path = world.paths.path(cost, (monster.y - y0, monster.x - x0), (goal[1] - y0, goal[0] - x0))
    monster.route = None
    if not path:
        return False
    ny, nx = path[0][0] + y0, path[0][1] + x0
    if keep_route:
        monster.route = [(col + x0, row + y0) for row, col in path]
    if level.terrain[ny, nx] == Terrain.DOOR_CLOSED:
        world.set_terrain(monster.depth, nx, ny, Terrain.DOOR_OPEN)
        events.append(DoorChanged(monster.depth, nx, ny, monster.id, True))
        return True
    if occ[ny, nx] >= 0 or not _can_enter(level, monster, nx, ny):
        return True
    if monster.route is not None:
        del monster.route[0]
    world.move_actor(monster, nx, ny)
    return True


def _can_enter(level: Level, monster: Actor, x: int, y: int) -> bool:
    """Whether ``monster`` may step into ``(x, y)``: a walker where the level is
    passable; a flier over water and lava too; a wallwalker through rock,
    walls and closed doors, but never onto the level's outer rim
    (:func:`server.sim.terrain.walkable_for`)."""
    if level.passable[y, x]:
        return True
    if not monster.flags & MOVE_FLAGS:
        return False
    if x <= 0 or y <= 0 or x >= level.width - 1 or y >= level.height - 1:
        return False
    return bool(walkable_for(monster.flags)[level.terrain[y, x]])


def _shut_rim(cost: NDArray[np.int32], x0: int, y0: int, width: int, height: int) -> None:
    """Zero the cost of the level's outer rim inside a window at ``(x0, y0)``."""
    h, w = cost.shape
    if x0 == 0:
        cost[:, 0] = 0
    if y0 == 0:
        cost[0, :] = 0
    if x0 + w == width:
        cost[:, w - 1] = 0
    if y0 + h == height:
        cost[h - 1, :] = 0
