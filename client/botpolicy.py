"""The load-test bots' decisions: pure, I/O-free, one :class:`Policy` per bot.

The policy plays like an explorer. In order: below :data:`PANIC_HP` of its max
hp in a fight, quaff a healing potion; sometimes (:data:`CAST_CHANCE`)
cast a known spell at a monster in view or on itself (:mod:`client.botuse`);
attack an adjacent monster; sometimes (:data:`RANGED_CHANCE`) throw a thrown
weapon at, or zap a wand or horn toward, a monster a few cells away with a
clear line (the seed-002 path of :mod:`client.aim`); pick up a useful item it
stands on (:data:`PICK_UP`); take a level-up reward owed; with no monster in
view, eat when hungry, wear a spellbook, read scrolls and spellbooks and
quaff potions; take the down stairs it stands on (at once after
:data:`LEVEL_TURNS` decisions on the level or on a level it was on before,
else with
:data:`STAIRS_CHANCE`), never below :data:`DESCEND_HP` of its max hp; rest
when hurt; then step toward the nearest visible monster, else (after
:data:`LEVEL_TURNS`) toward known down stairs, else toward a remembered item,
else toward the nearest reachable unknown cell (the frontier), else toward
known down stairs, else a random step. Path finding is python-tcod's
Dijkstra over the remembered map (``[y, x]``, 8-directional), run only when
the bot is about to act; a frontier path is reused until its goal is seen or
its next cell is blocked. Given a :class:`client.botmap.PartyMap`, a bot
plans on what all bots of its run saw of the level.

Nothing here touches a socket, a clock or the global RNG: :meth:`Policy.decide`
reads a model (:class:`ModelLike`, in play a :class:`client.model.GameModel`)
and draws from the bot's own generator. :mod:`client.bots` runs the bots.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import tcod.path
from numpy.typing import NDArray

from client.aim import bolt_path
from client.botmap import PartyMap
from client.botuse import (
    Placed,
    UsedMark,
    castable,
    healing_potion,
    item_use,
    self_spell,
    spell_shots,
    straight_direction,
)
from client.records import InvItem, KnownSpell
from protocol.messages import STEP_DIRECTIONS

STAIRS_CHANCE = 0.25
"""Chance that a bot standing on down stairs takes them when it acts."""

REST_BELOW = 0.3
"""A bot with no monster in view starts resting when its hp is below this share of max."""

REST_UNTIL = 0.9
"""A resting bot goes on resting until its hp reaches this share of max."""

REST_MAX = 200
"""Most rests in a row (a starving character does not regenerate)."""

DESCEND_HP = 0.6
"""A bot takes the down stairs only with at least this share of its max hp."""

LEVEL_TURNS = 50
"""Decisions on a level after which a bot heads for known down stairs (at once
on a level it was on before, e.g. walking down again after dying)."""

PANIC_HP = 0.3
"""Share of max hp below which a bot in a fight quaffs a healing potion."""

CAST_CHANCE = 0.5
"""Chance that a bot with a castable spell worth casting casts it."""

CAST_PAUSE = 20
"""Decisions without casting after a cast refused for another reason than reach."""

ITEM_RADIUS = 12
"""Cells around the bot searched for a remembered item to pick up."""

CHASE_RADIUS = 10
"""Cells around the bot searched when stepping toward a visible monster."""

CROWD_COST = 5
"""Path cost of a cell another player stands on; a free cell costs 1."""

FRONTIER_SPREAD = 8
"""Largest random handicap (steps) of a frontier cell, so bots fan out."""

RANGED_CHANCE = 0.5
"""Chance that a bot with a missile or a wand and a monster in line uses them."""

RANGED_REACH = (2, 4)
"""Chebyshev distances (cells) at which a bot throws or zaps."""

MISSILES = frozenset({"thrown"})
"""Item categories a bot throws."""

ZAPPABLE = frozenset({"wand", "horn"})
"""Item categories a bot zaps."""

PICK_UP = MISSILES | ZAPPABLE | frozenset({"food", "potion", "scroll", "spellbook"})
"""Item categories a bot picks up (heavy weapons and armour would hamper casting)."""

UNKNOWN = 255
DOOR_CLOSED = 3
LAVA = 6
STAIRS_DOWN = 12

DIRECTIONS: tuple[tuple[int, int], ...] = STEP_DIRECTIONS
"""The eight ``(dx, dy)`` steps, clockwise from north (the protocol's step
directions)."""

Cell = tuple[int, int]
"""A cell as ``(x, y)``."""

BoolGrid = NDArray[np.bool_]

_UNREACHED = int(np.iinfo(np.int32).max)


class ActorLike(Placed, Protocol):
    """What the policy reads of an actor record (:class:`client.model.ActorView`):
    its id and cell, and these."""

    @property
    def hp(self) -> int: ...
    @property
    def is_self(self) -> bool: ...
    @property
    def is_player(self) -> bool: ...


class ModelLike(Protocol):
    """What the policy reads of a :class:`client.model.GameModel`."""

    @property
    def known(self) -> NDArray[np.uint8]: ...
    @property
    def actors(self) -> Mapping[int, ActorLike]: ...
    @property
    def me(self) -> Mapping[str, Any]: ...
    @property
    def position(self) -> Cell | None: ...
    @property
    def objs(self) -> Mapping[Cell, str]: ...
    @property
    def depth(self) -> int: ...
    def passable(self) -> BoolGrid: ...
    def inventory(self) -> list[InvItem]: ...
    def item_entry(self, key: str) -> tuple[str, str, str, str, dict[str, Any]]: ...
    def known_spells(self) -> list[KnownSpell]: ...
    def food(self) -> tuple[int, int] | None: ...


@dataclass(frozen=True, slots=True)
class Action:
    """A command to send: ``c`` plus its keys (direction ``d = (dx, dy)``, pack
    letter ``item``, target cell ``at``, spell key ``spell``, reward key
    ``opt``). ``dist`` is not sent: a cast's Chebyshev distance to its target."""

    c: str
    d: Cell | None = None
    item: str | None = None
    at: Cell | None = None
    spell: str | None = None
    opt: str | None = None
    dist: int = 0


def walkable_cells(known: NDArray[np.uint8], passable: BoolGrid) -> BoolGrid:
    """Cells a bot may plan to step on: ``bool[H, W]``, indexed ``[y, x]``.

    Known passable cells plus closed doors (moving into one opens it), minus
    lava (the server refuses to step into it). Unknown cells are never walkable.
    """
    walk: BoolGrid = passable | (known == DOOR_CLOSED)
    walk &= known != LAVA
    walk &= known != UNKNOWN
    return walk


def frontier_cells(known: NDArray[np.uint8], walkable: BoolGrid) -> BoolGrid:
    """Unknown cells 8-adjacent to a walkable cell: ``bool[H, W]``, ``[y, x]``."""
    near = walkable.copy()
    near[1:, :] |= walkable[:-1, :]
    near[:-1, :] |= walkable[1:, :]
    grown = near.copy()
    grown[:, 1:] |= near[:, :-1]
    grown[:, :-1] |= near[:, 1:]
    result: BoolGrid = grown & (known == UNKNOWN)
    return result


def step_costs(walkable: BoolGrid, players: Iterable[Cell]) -> NDArray[np.int8]:
    """Path costs ``int8[H, W]`` (``[y, x]``): 0 blocked, 1 free, :data:`CROWD_COST` for
    a walkable cell another player stands on.

    Paths go around players where they can and through a crowd where they
    must: stepping into an idle player swaps places with it, a busy one
    answers ``occupied`` and the bot tries again.
    """
    cost = walkable.astype(np.int8)
    for x, y in players:
        if cost[y, x]:
            cost[y, x] = CROWD_COST
    return cost


def path_to_nearest(
    cost: NDArray[np.int8],
    goals: BoolGrid,
    start: Cell,
    radius: int | None = None,
    *,
    spread: int = 0,
    rng: np.random.Generator | None = None,
) -> list[Cell] | None:
    """Cheapest 8-directional path from ``start`` to the nearest goal cell.

    Uses python-tcod's Dijkstra map from all goals at once, then climbs it
    down from ``start``. With ``spread``, each goal starts with a random
    handicap of 0 to ``spread`` steps, so bots standing together pick
    different goals instead of queueing for the same one.

    Args:
        cost: ``int[H, W]`` cost of entering each cell, 0 = blocked (``[y, x]``).
        goals: ``bool[H, W]`` target cells; a goal need not be enterable (an
            unknown cell, a monster): the path ends on it.
        start: the ``(x, y)`` cell to leave from.
        radius: if given, search only the square window of this many cells
            around ``start``.
        spread: the largest handicap, in steps (needs ``rng``).
        rng: draws the handicaps.

    Returns:
        The cells ``(x, y)`` to step on in order, excluding ``start`` and
        ending on a goal; ``[]`` if ``start`` is a goal; None if no goal is
        reachable.
    """
    sx, sy = start
    x0 = y0 = 0
    if radius is not None:
        h, w = cost.shape
        x0, y0 = max(sx - radius, 0), max(sy - radius, 0)
        x1, y1 = min(sx + radius + 1, w), min(sy + radius + 1, h)
        cost = cost[y0:y1, x0:x1]
        goals = goals[y0:y1, x0:x1]
    if not goals.any():
        return None
    dist = tcod.path.maxarray(cost.shape, dtype=np.int32)
    if spread > 0 and rng is not None:
        dist[goals] = rng.integers(0, spread + 1, size=int(np.count_nonzero(goals)))
    else:
        dist[goals] = 0
    tcod.path.dijkstra2d(dist, cost, 1, 1, out=dist)
    local = (sy - y0, sx - x0)
    if dist[local] == _UNREACHED:
        return None
    steps = tcod.path.hillclimb2d(dist, local, True, True)
    return [(int(j) + x0, int(i) + y0) for i, j in steps[1:]]


def adjacent_monster(pos: Cell, monsters: Iterable[ActorLike]) -> Cell | None:
    """The direction ``(dx, dy)`` of the weakest monster next to ``pos``, if any.

    Ties on hp go to the lowest actor id, so the choice is deterministic.
    """
    best: tuple[int, int, Cell] | None = None
    for actor in monsters:
        dx, dy = actor.x - pos[0], actor.y - pos[1]
        if max(abs(dx), abs(dy)) != 1:
            continue
        key = (actor.hp, actor.id, (dx, dy))
        if best is None or key < best:
            best = key
    return None if best is None else best[2]


def direction(pos: Cell, nxt: Cell) -> Cell | None:
    """The step ``(dx, dy)`` from ``pos`` to the 8-adjacent ``nxt``, else None."""
    dx, dy = nxt[0] - pos[0], nxt[1] - pos[1]
    if max(abs(dx), abs(dy)) != 1:
        return None
    return (dx, dy)


def clear_shots(pos: Cell, monsters: Iterable[ActorLike], blocked: BoolGrid) -> list[ActorLike]:
    """Monsters at :data:`RANGED_REACH` whose seed-002 path from ``pos`` reaches
    them with no other monster and no blocked cell on the way; nearest first,
    then lowest id."""
    near, far = RANGED_REACH
    ordered = sorted(monsters, key=lambda a: (max(abs(a.x - pos[0]), abs(a.y - pos[1])), a.id))
    cells = {(a.x, a.y) for a in ordered}
    shots = []
    for a in ordered:
        if not near <= max(abs(a.x - pos[0]), abs(a.y - pos[1])) <= far:
            continue
        path = bolt_path(pos, (a.x, a.y), blocked)
        if path and path[-1] == (a.x, a.y) and not any(c in cells for c in path[:-1]):
            shots.append(a)
    return shots


def random_step(cost: NDArray[np.int8], pos: Cell, rng: np.random.Generator) -> Cell | None:
    """A uniformly chosen direction to a free neighbour of ``pos`` (cost 1), or None."""
    h, w = cost.shape
    x, y = pos
    options = [
        (dx, dy)
        for dx, dy in DIRECTIONS
        if 0 <= x + dx < w and 0 <= y + dy < h and cost[y + dy, x + dx] == 1
    ]
    if not options:
        return None
    return options[int(rng.integers(len(options)))]


def _owed_choice(me: Mapping[str, Any]) -> list[str]:
    """The reward keys on offer while ``me.choice`` > 0, else ``[]``."""
    choice, options = me.get("choice"), me.get("options")
    if not (isinstance(choice, int) and choice > 0 and isinstance(options, list)):
        return []
    return [o for o in options if isinstance(o, str)]


class Policy:
    """One bot's decisions. Holds its RNG, its current frontier path and what
    it learnt of this level (turns spent, items tried) and of its spells.

    Args:
        rng: the bot's own generator (seeded per bot; never the global one).
        party: the map shared with the other bots of the run, if any; the bot
            then plans on it (see :mod:`client.botmap`).
    """

    __slots__ = (
        "_cast_pause",
        "_depth",
        "_goal",
        "_last",
        "_party",
        "_path",
        "_picked",
        "_reach",
        "_resting",
        "_tried",
        "_turns",
        "_visited",
        "_wander",
        "rng",
    )

    def __init__(self, rng: np.random.Generator, party: PartyMap | None = None) -> None:
        self.rng = rng
        self._party = party
        self._path: list[Cell] = []  # reversed: the next cell is the last item
        self._goal: Cell | None = None
        self._wander = False
        self._depth: int | None = None
        self._turns = 0  # decisions made on this level
        self._visited: set[int] = set()  # depths left before (by the stairs or by dying)
        self._picked: set[tuple[Cell, str]] = set()  # pickups tried on this level
        self._tried: set[UsedMark] = set()
        self._reach: dict[str, int] = {}  # spell key -> reach after a no_target
        self._cast_pause = 0  # decisions left without casting after a refused cast
        self._resting = 0  # rests in a row
        self._last: Action | None = None

    @property
    def turns_on_level(self) -> int:
        """Decisions made since the bot arrived on its current level."""
        return self._turns

    def reset(self) -> None:
        """Forget the plan (the level was replaced by a snapshot)."""
        self._path.clear()
        self._goal = None

    def on_reject(self, reason: str = "") -> None:
        """The last command was refused (``reason`` from ``welcome.reasons``).

        A refused move drops the plan and makes the next step random; a
        refused cast shortens that spell's reach (``no_target``) or pauses
        casting for :data:`CAST_PAUSE` decisions; a refused item use is not
        retried (its mark is kept), nor is a refused pickup.
        """
        last = self._last
        if last is not None and last.c == "cast" and last.spell is not None:
            if reason == "no_target" and last.dist > 1:
                self._reach[last.spell] = last.dist - 1
            else:
                self._cast_pause = CAST_PAUSE
            return
        if last is not None and last.c in ("eat", "read", "quaff", "wear", "pickup", "choose"):
            return
        self._path.clear()
        self._goal = None
        self._wander = True

    def decide(self, model: ModelLike) -> Action | None:
        """Choose the next command for the state in ``model``; None to do nothing.

        Nothing is chosen while the character is dead or not yet placed.
        """
        action = self._decide(model)
        self._last = action
        return action

    def _decide(self, model: ModelLike) -> Action | None:
        me = model.me
        pos = model.position
        if pos is None or me.get("dead", False):
            return None
        if model.depth != self._depth:
            if self._depth is not None:
                self._visited.add(self._depth)
            self._depth = model.depth
            self._turns = 0
            self._picked.clear()
            self._path.clear()
            self._goal = None
        self._turns += 1
        self._cast_pause = max(0, self._cast_pause - 1)
        known, passable = model.known, model.passable()
        if self._party is not None:
            known, passable = self._party.merge(model.depth, known, passable)
        actors = model.actors
        monsters = [a for a in actors.values() if not a.is_player and not a.is_self]
        max_hp = int(me.get("max_hp", 0))
        hp = int(me.get("hp", max_hp))
        late = self._turns > LEVEL_TURNS or model.depth in self._visited

        if monsters and max_hp > 0 and hp < PANIC_HP * max_hp:
            potion = healing_potion(model, self._tried)
            if potion is not None:
                self._tried.add(potion.mark)
                return Action(potion.c, item=potion.item)

        if monsters:
            spell = self._cast(model, pos, monsters)
            if spell is not None:
                return spell

        target = adjacent_monster(pos, monsters)
        if target is not None:
            return Action("move", target)

        if monsters:
            ranged = self._ranged(model, pos, monsters)
            if ranged is not None:
                return ranged

        here = model.objs.get(pos)
        if (
            here is not None
            and (pos, here) not in self._picked
            and model.item_entry(here)[3] in PICK_UP
        ):
            self._picked.add((pos, here))
            return Action("pickup")

        choice = _owed_choice(me)
        if choice:
            return Action("choose", opt=choice[int(self.rng.integers(len(choice)))])

        if not monsters:
            use = item_use(model, self._tried)
            if use is not None:
                self._tried.add(use.mark)
                return Action(use.c, item=use.item)

        on_stairs = known[pos[1], pos[0]] == STAIRS_DOWN
        fit = max_hp <= 0 or hp >= DESCEND_HP * max_hp
        if on_stairs and fit and (late or self.rng.random() < STAIRS_CHANCE):
            self._path.clear()
            self._goal = None
            return Action("down")

        if not monsters and max_hp > 0 and self._resting < REST_MAX:
            want = REST_UNTIL if self._resting else REST_BELOW
            if hp < want * max_hp or (late and on_stairs and not fit):
                self._resting += 1
                return Action("rest")
        if self._resting and (monsters or hp >= REST_UNTIL * max_hp):
            self._resting = 0

        others = [(a.x, a.y) for a in actors.values() if a.is_player and not a.is_self]
        cost = step_costs(walkable_cells(known, passable), others)

        if self._wander:
            self._wander = False
            return self._random(cost, pos)

        if monsters:
            goals = np.zeros(cost.shape, dtype=np.bool_)
            for a in monsters:
                goals[a.y, a.x] = True
            path = path_to_nearest(cost, goals, pos, 3 if late else CHASE_RADIUS)
            if path:
                return self._step_to(path[0], cost, pos)

        if late:  # long enough here: to the nearest known down stairs
            path = path_to_nearest(cost, known == STAIRS_DOWN, pos)
            if path:
                return self._step_to(path[0], cost, pos)

        if not monsters:
            goals = np.zeros(cost.shape, dtype=np.bool_)
            for cell, key in model.objs.items():
                if (cell, key) not in self._picked and model.item_entry(key)[3] in PICK_UP:
                    goals[cell[1], cell[0]] = True
            path = path_to_nearest(cost, goals, pos, ITEM_RADIUS)
            if path:
                return self._step_to(path[0], cost, pos)

        nxt = self._frontier_step(known, cost, pos)
        if nxt is not None:
            return self._step_to(nxt, cost, pos, allow_unknown=True)

        path = path_to_nearest(cost, known == STAIRS_DOWN, pos)
        if path is not None:  # all explored: go down
            if path:
                return self._step_to(path[0], cost, pos)
            return Action("down") if fit or monsters else Action("rest")
        return self._random(cost, pos)

    def _cast(self, model: ModelLike, pos: Cell, monsters: list[ActorLike]) -> Action | None:
        """A spell at a monster or on oneself, with :data:`CAST_CHANCE`.

        Draws from the bot's generator only when some spell is castable and
        worth casting now, so bots without spells decide exactly as before.
        """
        if self._cast_pause:
            return None
        spells = castable(model)
        if not spells:
            return None
        own = self_spell(model, spells, in_fight=True)
        shots = spell_shots(pos, spells, monsters, ~model.passable(), self._reach)
        options = ([own] if own is not None else []) + shots
        if not options or self.rng.random() >= CAST_CHANCE:
            return None
        pick = options[int(self.rng.integers(len(options)))]
        return Action("cast", pick.d, at=pick.at, spell=pick.spell, dist=pick.dist)

    def _ranged(self, model: ModelLike, pos: Cell, monsters: list[ActorLike]) -> Action | None:
        """A throw or zap at a monster in line, with :data:`RANGED_CHANCE`.

        Draws one number from the bot's generator only when it holds a missile
        or a charged wand and a monster offers a clear shot, so bots without
        them decide exactly as before.
        """
        missiles, wands = [], []
        for item in model.inventory():
            category = model.item_entry(item.key)[3]
            if category in MISSILES and item.slot == "":
                missiles.append(item)
            elif category in ZAPPABLE and item.charges != 0:
                wands.append(item)
        if not missiles and not wands:
            return None
        shots = clear_shots(pos, monsters, ~model.passable())
        zaps = [(a, d) for a in shots if (d := straight_direction(pos, (a.x, a.y))) is not None]
        if not (missiles and shots) and not (wands and zaps):
            return None
        if self.rng.random() >= RANGED_CHANCE:
            return None
        if wands and zaps:
            return Action("zap", zaps[0][1], item=wands[0].letter)
        target = shots[0]
        return Action("throw", item=missiles[0].letter, at=(target.x, target.y))

    def _random(self, cost: NDArray[np.int8], pos: Cell) -> Action:
        step = random_step(cost, pos, self.rng)
        return Action("wait") if step is None else Action("move", step)

    def _step_to(
        self, nxt: Cell, cost: NDArray[np.int8], pos: Cell, *, allow_unknown: bool = False
    ) -> Action:
        """Step onto ``nxt`` (into a player: the server swaps us if it is idle)."""
        step = direction(pos, nxt)
        c = cost[nxt[1], nxt[0]]
        if step is None or not (c in (1, CROWD_COST) or (c == 0 and allow_unknown)):
            return self._random(cost, pos)
        return Action("move", step)

    def _frontier_step(
        self, known: NDArray[np.uint8], cost: NDArray[np.int8], pos: Cell
    ) -> Cell | None:
        """The next cell toward the nearest frontier, reusing the cached path.

        The path is kept while its goal is still unknown and its next cell is
        adjacent and enterable; otherwise it is searched again.
        """
        path = self._path
        while path and path[-1] == pos:
            path.pop()
        goal = self._goal
        if path and goal is not None and known[goal[1], goal[0]] == UNKNOWN:
            nxt = path[-1]
            if direction(pos, nxt) is not None and (cost[nxt[1], nxt[0]] > 0 or nxt == goal):
                return nxt
        frontier = frontier_cells(known, cost > 0)
        found = path_to_nearest(cost, frontier, pos, spread=FRONTIER_SPREAD, rng=self.rng)
        if not found:
            path.clear()
            self._goal = None
            return None
        self._goal = found[-1]
        self._path = found[::-1]
        return found[0]
