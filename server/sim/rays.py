"""Rays and beams: the pure tracer of wands, horns, ray spells and breath.

Sources:

* ``seeds/000_3eac5adc328905e6.txt`` -- range 7..13, -2 per creature hit,
  -1 per bounce, straight / angled / concave / convex bounces, 1/20 straight
  back, doors halt rays, digging, fireball, terrain on the way, reflection.
* ``reference/nethack_ray.md`` -- NetHack 3.6's ``dobuzz``: the exact order of
  the checks on each square and of the random draws (sections 2 to 5).
* ``seeds/004_e3510b876b951af2.txt`` -- beam spells 6..13, dig 8..25.
* ``RULES.md`` -- the straight-back chance is 1/20 everywhere (never NetHack
  3.6.1's 1/75 or 1/10 for rock), and reflection costs no range.

The tracer never changes the level: terrain that the ray changes (a burnt
door, boiled water, frozen lava, dug walls) is kept in a small overlay of
changed cells, so a later pass of the same ray sees the new terrain, and is
reported in ``RayTrace.terrain_changes`` for the caller to apply.

Targets. ``occupant(x, y)`` says who stands on a square, as a
:class:`RayTarget`. It is asked again on every square entered (the firer's
own square only when the ray comes back into it), so a ray can hit the same
target twice after a bounce, and a target killed by ``strike`` simply stops
being returned. The hit roll belongs to the caller: ``RayTarget.hit()`` makes
it (with whatever draws the caller's hit test needs, at exactly that moment)
and returns True on a hit. On a hit a reflecting target turns the ray straight
back at no range cost; any other target is passed to ``strike(target)`` at
once (the caller applies damage) and the ray loses 2 range.

Range and loop (nethack_ray.md sections 2 and 3): ``while range > 0: range
-= 1; step``. On each step the ray moves one square, then:

1. off the level or solid ROCK: bounce at once (no floor effect, nobody asked);
2. floor effect (:func:`ray_floor_effect`, skipped by a fireball), which may
   change the range and the terrain;
3. occupant: a fireball stops here (explodes); otherwise the hit roll and its
   outcome as above;
4. bounce test: WALL and TREE (or a closed door with range >= 0, which only a
   fireball can reach) bounce the ray (:func:`bounce_direction`), for 1 range.

Random-draw order of :func:`trace_ray` (determinism contract; these are the
only draws made by this module, in this order):

1. the range, only when ``range is None``: ``rng.integers(7, 14)``
   (digging: ``rng.integers(8, 26)``);
2. then per square, in path order: the caller's ``RayTarget.hit()`` (its own
   draws); then, on a bounce of a diagonal ray (not a fireball, which never
   bounces): ``rng.integers(20)``, straight back iff 0; if not straight back
   and both side squares are open, ``rng.integers(2)``. An orthogonal ray's
   bounce draws nothing. The bounce draws are made even when the bounce uses
   up the last of the range (as NetHack does).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import numpy as np

from server.content.schema import DAMAGE_TYPES, Terrain
from server.sim.level import Level

__all__ = [
    "BEAM_RANGE",
    "BOUNCE_RANGE_COST",
    "DIG_RANGE",
    "HIT_RANGE_COST",
    "RAY_RANGE",
    "STRAIGHT_BACK_ONE_IN",
    "FloorEffect",
    "Occupant",
    "RayHit",
    "RayTarget",
    "RayTrace",
    "Strike",
    "bounce_direction",
    "draw_beam_range",
    "draw_dig_range",
    "draw_ray_range",
    "ray_floor_effect",
    "trace_beam",
    "trace_ray",
]

RAY_RANGE: Final = (7, 13)
"""Inclusive range of a ray in squares (seed 000; NetHack's ``rn1(7, 7)``)."""

BEAM_RANGE: Final = (6, 13)
"""Inclusive range of a beam in squares (seed 004; NetHack's ``rn1(8, 6)``)."""

DIG_RANGE: Final = (8, 25)
"""Inclusive range of a digging ray in squares (seed 004; NetHack's ``rn1(18, 8)``)."""

HIT_RANGE_COST: Final = 2
"""Range lost when a ray damages a creature (seed 000); a reflection costs 0."""

BOUNCE_RANGE_COST: Final = 1
"""Range lost by each bounce off a wall (seed 000)."""

STRAIGHT_BACK_ONE_IN: Final = 20
"""A diagonal bounce goes straight back 1 time in this many (seed 000, RULES.md)."""

_DOOR_HALT: Final = -1000
"""Range change on a closed door: the ray stops there (nethack_ray.md section 4)."""

_ROCK: Final = int(Terrain.ROCK)
_DOOR_CLOSED: Final = int(Terrain.DOOR_CLOSED)
_BLOCKS: Final = frozenset({Terrain.ROCK, Terrain.WALL, Terrain.TREE})
"""Terrain a ray cannot pass (NetHack's ``!ZAP_POS``); closed doors are handled apart."""
_ROOM_LIKE: Final = frozenset({
    Terrain.FLOOR, Terrain.STAIRS_UP, Terrain.STAIRS_DOWN, Terrain.FOUNTAIN,
    Terrain.ALTAR, Terrain.RUBBLE,
})  # fmt: skip
"""Terrain that NetHack's ``IS_ROOM`` accepts; doorways, water and lava are not."""
_DIGGABLE: Final = frozenset({
    Terrain.ROCK, Terrain.WALL, Terrain.DOOR_CLOSED, Terrain.TREE, Terrain.RUBBLE,
})  # fmt: skip
"""Terrain a digging ray turns into floor."""
_DOOR_BREAKERS: Final = frozenset({"fire", "cold", "electricity", "disintegration"})
"""Ray kinds that destroy a closed door (burn, shatter, splinter, disintegrate)."""


@dataclass(frozen=True, slots=True)
class RayTarget:
    """A creature standing on a square the ray enters.

    Attributes:
        id: The caller's id for the creature (an actor id).
        reflects: Whether the creature reflects rays (a hit then turns the
            ray straight back and does no damage).
        hit: Makes the hit roll when called (the caller's own test and draws,
            e.g. seed 002's magic hit test) and returns True on a hit. The
            tracer calls it exactly once each time the ray enters the square.
    """

    id: int
    reflects: bool
    hit: Callable[[], bool]


Occupant = Callable[[int, int], RayTarget | None]
"""Returns the creature on square ``(x, y)``, or None."""

Strike = Callable[[RayTarget], None]
"""Applies a ray's (or beam's) damage to a target it hit and did not reflect."""


@dataclass(frozen=True, slots=True)
class RayHit:
    """One successful hit roll, in path order.

    Attributes:
        x: Column of the square, in cells.
        y: Row of the square, in cells.
        target_id: ``RayTarget.id`` of the creature.
        reflected: True if the creature reflected the ray (no damage, no
            ``strike`` call); False if ``strike`` was called.
    """

    x: int
    y: int
    target_id: int
    reflected: bool


@dataclass(frozen=True, slots=True)
class RayTrace:
    """The path of one ray or beam and what it did, in order.

    Attributes:
        origin: ``(x, y)`` of the firer's square.
        kind: Damage type of the ray (``"force"`` for a beam).
        initial_range: The range the ray started with, in squares.
        steps: ``(x, y, dx, dy)`` of each square entered, in order, with the
            direction the ray travels after that square (a bounce or a
            reflection shows as a changed direction). A ray bouncing off the
            edge of the level lists the off-level square it bounced from.
        bounces: ``(x, y)`` of the squares where the ray bounced and flew on
            (a bounce that uses up the range is not listed, nor is a reflection).
        hits: Every successful hit roll, in order; a target can appear twice.
        terrain_changes: ``(x, y, new terrain)`` in the order they happened;
            the caller applies them to the level.
        burn_cells: Ray-passable squares a fire ray passed over, each once,
            in order (the caller may burn scrolls and spellbooks lying there).
        end: ``(x, y)`` of the last square on the level that the ray occupied:
            where a fireball explodes, where a beam stopped.
        stopped_by_door: Whether a closed door halted the ray (a fireball:
            whether it exploded in front of one).
        range_left: Range left at the end, in squares (0 once exhausted).
        cells: The squares of ``steps`` that lie on the level, each once, in
            order of first visit (for the client's animation).
    """

    origin: tuple[int, int]
    kind: str
    initial_range: int
    steps: list[tuple[int, int, int, int]]
    bounces: list[tuple[int, int]]
    hits: list[RayHit]
    terrain_changes: list[tuple[int, int, Terrain]]
    burn_cells: list[tuple[int, int]]
    end: tuple[int, int]
    stopped_by_door: bool
    range_left: int
    cells: list[tuple[int, int]]


@dataclass(frozen=True, slots=True)
class FloorEffect:
    """What a ray does to the square it passes over (nethack_ray.md section 4).

    Attributes:
        range_change: Added to the ray's range (0, -1, -3, or -1000 to halt).
        becomes: The square's new terrain, or None if it is unchanged.
        halts: Whether the square stops the ray (a closed door).
    """

    range_change: int
    becomes: Terrain | None
    halts: bool


_NO_EFFECT: Final = FloorEffect(0, None, False)


def ray_floor_effect(kind: str, terrain: Terrain | int) -> FloorEffect:
    """Return the effect of a ray of ``kind`` passing over ``terrain``.

    Source: seed 000 ("range may decrease by 1, 3, or the ray may stop") and
    nethack_ray.md section 4 (``zap_over_floor``). The cases:

    * -1: fire over a FOUNTAIN (the fountain stays).
    * -3: fire over WATER (it boils away; NetHack leaves a pit, Underhall's
      decision: FLOOR); cold over WATER (it freezes; Underhall has no ice, so
      Underhall's decision: FLOOR); cold over LAVA (it freezes to FLOOR).
    * stop: a closed door, for every kind. Fire, cold, electricity (NetHack's
      lightning) and disintegration destroy it (FLOOR); other kinds, death
      included, are absorbed by it. NetHack's other stop, cold over the Plane
      of Water, has no counterpart in Underhall.
    * 0 otherwise (fire over lava, lightning over water, ...).

    Draws nothing. A fireball and a digging ray do not use this function.

    Args:
        kind: The ray's damage type, from ``DAMAGE_TYPES``.
        terrain: The square's current terrain.

    Returns:
        The effect; the caller adds ``range_change`` after the step's own cost.
    """
    if terrain == Terrain.DOOR_CLOSED:
        return FloorEffect(_DOOR_HALT, Terrain.FLOOR if kind in _DOOR_BREAKERS else None, True)
    if kind == "fire":
        if terrain == Terrain.WATER:
            return FloorEffect(-3, Terrain.FLOOR, False)
        if terrain == Terrain.FOUNTAIN:
            return FloorEffect(-1, None, False)
    elif kind == "cold" and terrain in (Terrain.WATER, Terrain.LAVA):
        return FloorEffect(-3, Terrain.FLOOR, False)
    return _NO_EFFECT


Look = Callable[[int, int], int | None]
"""Terrain value of square ``(x, y)``, or None off the level."""


def _side_open(look: Look, x: int, y: int, ahead_x: int, ahead_y: int) -> bool:
    """NetHack's side-square test: open, and room-like or with an open square beyond."""
    here = look(x, y)
    if here is None or here in _BLOCKS or here == _DOOR_CLOSED:
        return False
    if here in _ROOM_LIKE:
        return True
    beyond = look(ahead_x, ahead_y)
    return beyond is not None and beyond not in _BLOCKS


def bounce_direction(
    look: Look,
    obstacle: tuple[int, int],
    last: tuple[int, int],
    direction: tuple[int, int],
    rng: np.random.Generator,
) -> tuple[int, int]:
    """Return the direction of a ray after it bounces on ``obstacle``.

    Source: seed 000 (straight, angled, concave and convex bounces, 1/20
    straight back) and nethack_ray.md section 5, step 4. The ray stays on the
    obstacle square; only its direction changes.

    * Orthogonal ray: straight back; no draw.
    * Diagonal ray: ``rng.integers(20)``; 0 means straight back. Otherwise the
      side squares A = (obstacle x, last y) and B = (last x, obstacle y) are
      tested: each is open if it is on the level, not ROCK/WALL/TREE/closed
      door, and either room-like (floor, stairs, fountain, altar, rubble) or
      followed by a square on the level that is not ROCK/WALL/TREE (a closed
      door there counts as open, as in NetHack). A only: flip dy; B only:
      flip dx; both (a convex corner): ``rng.integers(2)``, non-zero flips
      dx, zero flips dy; neither (a concave corner): straight back.

    So a flat wall gives 1/20 back, 19/20 deflected; a convex corner 1/20
    back, 19/40 each side; a concave corner always back.

    Args:
        look: Terrain value of a square, None off the level (with the ray's
            own terrain changes applied).
        obstacle: ``(x, y)`` of the square the ray bounces on.
        last: ``(x, y)`` of the square it came from.
        direction: ``(dx, dy)`` of the ray as it entered ``obstacle``.
        rng: Random stream; draws as listed above.

    Returns:
        The new ``(dx, dy)``.
    """
    dx, dy = direction
    if dx == 0 or dy == 0 or int(rng.integers(STRAIGHT_BACK_ONE_IN)) == 0:
        return (-dx, -dy)
    (x, y), (lx, ly) = obstacle, last
    side_a = _side_open(look, x, ly, x + dx, ly)
    side_b = _side_open(look, lx, y, lx, y + dy)
    if side_a and side_b:
        side_b = int(rng.integers(2)) != 0
        side_a = not side_b
    if side_a:
        return (dx, -dy)
    if side_b:
        return (-dx, dy)
    return (-dx, -dy)


def draw_ray_range(rng: np.random.Generator) -> int:
    """Draw a ray's range: uniform on 7..13 squares, one ``rng.integers(7, 14)``.

    Source: seed 000, nethack_ray.md section 2 (``rn1(7, 7)``).
    """
    return int(rng.integers(RAY_RANGE[0], RAY_RANGE[1] + 1))


def draw_beam_range(rng: np.random.Generator) -> int:
    """Draw a beam's range: uniform on 6..13 squares, one ``rng.integers(6, 14)``.

    Source: seed 004 ("Range": beam spells 6-13 squares).
    """
    return int(rng.integers(BEAM_RANGE[0], BEAM_RANGE[1] + 1))


def draw_dig_range(rng: np.random.Generator) -> int:
    """Draw a digging ray's range: uniform on 8..25 squares, one ``rng.integers(8, 26)``.

    Source: seed 004 ("Range": dig 8-25 squares).
    """
    return int(rng.integers(DIG_RANGE[0], DIG_RANGE[1] + 1))


class _Overlay:
    """The level's terrain seen through the ray's own changes (never copied)."""

    __slots__ = ("changed", "changes", "grid", "height", "width")

    def __init__(self, level: Level) -> None:
        self.grid = level.terrain
        self.width, self.height = level.width, level.height
        self.changed: dict[tuple[int, int], int] = {}
        self.changes: list[tuple[int, int, Terrain]] = []

    def look(self, x: int, y: int) -> int | None:
        if not (0 <= x < self.width and 0 <= y < self.height):
            return None
        changed = self.changed.get((x, y))
        return int(self.grid[y, x]) if changed is None else changed

    def change(self, x: int, y: int, terrain: Terrain) -> None:
        self.changed[(x, y)] = int(terrain)
        self.changes.append((x, y, terrain))

    def cells_of(self, steps: list[tuple[int, int, int, int]]) -> list[tuple[int, int]]:
        """The on-level squares of ``steps``, each once, in order of first visit."""
        seen: dict[tuple[int, int], None] = {}
        for x, y, _, _ in steps:
            if 0 <= x < self.width and 0 <= y < self.height:
                seen.setdefault((x, y), None)
        return list(seen)


def _check_start(
    level: Level, origin: tuple[int, int], direction: tuple[int, int], range_: int | None
) -> None:
    dx, dy = direction
    if dx not in (-1, 0, 1) or dy not in (-1, 0, 1) or (dx, dy) == (0, 0):
        raise ValueError(f"direction must be in {{-1, 0, 1}}^2 and not (0, 0), got {direction}")
    if not level.in_bounds(*origin):
        raise ValueError(f"origin {origin} is outside the {level.width}x{level.height} level")
    if range_ is not None and range_ < 0:
        raise ValueError(f"range must be >= 0, got {range_}")


def trace_ray(
    level: Level,
    origin: tuple[int, int],
    direction: tuple[int, int],
    rng: np.random.Generator,
    *,
    kind: str = "magic_missile",
    range: int | None = None,  # the issue fixes this name
    occupant: Occupant | None = None,
    strike: Strike | None = None,
    digging: bool = False,
    fireball: bool = False,
) -> RayTrace:
    """Trace one ray from ``origin`` (the firer's square, not itself entered first).

    Source: seed 000 and nethack_ray.md sections 2 to 5; the per-square order
    and the draw order are in this module's docstring. Underhall's decisions:
    players and monsters are both asked with the monster rule (no ``range >=
    0`` condition, which NetHack puts on the hero only); a reflection costs no
    range (seed 000 and RULES.md; NetHack charges 2); corridors are floor here,
    so they count as room-like in the bounce test.

    A fireball flies like a ray without floor effects and never bounces: it
    stops on the first square holding a creature, or on the square before a
    wall, rock, closed door or the level's edge; ``end`` is where it explodes
    and it hits nobody itself. A digging ray (NetHack's wand of digging)
    harms nobody and never bounces: it turns ROCK, WALL, closed doors, TREE
    and RUBBLE on its path into FLOOR and flies its full range, stopping only
    before the level's edge or a non-floor square of the outermost row or
    column, which cannot be dug (Underhall's decision, following the seed's
    "to its maximum range" rather than NetHack's extra cost per wall).

    Args:
        level: The level; never modified (see ``RayTrace.terrain_changes``).
        origin: ``(x, y)`` of the firer's square.
        direction: ``(dx, dy)`` with components in {-1, 0, 1}, not (0, 0).
        rng: Random stream for the range and the bounces.
        kind: The ray's damage type, from ``DAMAGE_TYPES`` (``"electricity"``
            is NetHack's lightning).
        range: Range in squares, or None to draw it (7..13; digging 8..25).
        occupant: Who stands on a square; None means nobody anywhere.
        strike: Called at once with each target hit and not reflecting.
        digging: Trace a digging ray.
        fireball: Trace a fireball.

    Returns:
        The trace.

    Raises:
        ValueError: Bad direction, origin off the level, negative range,
            unknown kind, or both ``digging`` and ``fireball``.
    """
    _check_start(level, origin, direction, range)
    if kind not in DAMAGE_TYPES:
        raise ValueError(f"unknown ray kind {kind!r}; expected one of DAMAGE_TYPES")
    if digging and fireball:
        raise ValueError("a ray cannot be both digging and a fireball")
    if range is not None:
        left = range
    else:
        left = draw_dig_range(rng) if digging else draw_ray_range(rng)
    terrain = _Overlay(level)
    if digging:
        return _dig(terrain, origin, direction, kind, left)
    return _Flight(terrain, origin, direction, rng, kind, left, occupant, strike, fireball).fly()


def _dig(
    terrain: _Overlay, origin: tuple[int, int], direction: tuple[int, int], kind: str, initial: int
) -> RayTrace:
    """The digging ray of :func:`trace_ray`: no draws, no targets, no bounces."""
    (x, y), (dx, dy) = origin, direction
    steps: list[tuple[int, int, int, int]] = []
    left = initial
    while left > 0:
        left -= 1
        nx, ny = x + dx, y + dy
        here = terrain.look(nx, ny)
        edge = nx in (0, terrain.width - 1) or ny in (0, terrain.height - 1)
        if here is None or (edge and here in _DIGGABLE):
            break
        if here in _DIGGABLE:
            terrain.change(nx, ny, Terrain.FLOOR)
        x, y = nx, ny
        steps.append((x, y, dx, dy))
    return RayTrace(
        origin,
        kind,
        initial,
        steps,
        [],
        [],
        terrain.changes,
        [],
        (x, y),
        False,
        max(left, 0),
        terrain.cells_of(steps),
    )


class _Flight:
    """The state of one ray in flight (an ordinary ray or a fireball)."""

    __slots__ = (
        "bounces",
        "burned",
        "dx",
        "dy",
        "end",
        "fireball",
        "hits",
        "initial",
        "kind",
        "left",
        "occupant",
        "origin",
        "rng",
        "steps",
        "stopped_by_door",
        "strike",
        "terrain",
        "x",
        "y",
    )

    def __init__(
        self,
        terrain: _Overlay,
        origin: tuple[int, int],
        direction: tuple[int, int],
        rng: np.random.Generator,
        kind: str,
        initial: int,
        occupant: Occupant | None,
        strike: Strike | None,
        fireball: bool,
    ) -> None:
        self.terrain, self.rng, self.kind, self.fireball = terrain, rng, kind, fireball
        self.occupant, self.strike = occupant, strike
        self.origin, self.initial, self.left = origin, initial, initial
        (self.x, self.y), (self.dx, self.dy) = origin, direction
        self.end = origin
        self.steps: list[tuple[int, int, int, int]] = []
        self.bounces: list[tuple[int, int]] = []
        self.hits: list[RayHit] = []
        self.burned: dict[tuple[int, int], None] = {}
        self.stopped_by_door = False

    def fly(self) -> RayTrace:
        while self.left > 0:
            self.left -= 1
            if not self._step():
                break
        return RayTrace(
            self.origin,
            self.kind,
            self.initial,
            self.steps,
            self.bounces,
            self.hits,
            self.terrain.changes,
            list(self.burned),
            self.end,
            self.stopped_by_door,
            max(self.left, 0),
            self.terrain.cells_of(self.steps),
        )

    def _step(self) -> bool:
        """Move one square (nethack_ray.md section 3); False when the ray stops."""
        last = (self.x, self.y)
        self.x += self.dx
        self.y += self.dy
        x, y = self.x, self.y
        here = self.terrain.look(x, y)
        if here is None or here == _ROCK:
            return self._bounce(last, here)
        if not self.fireball:
            self._floor(x, y, here)
        target = self.occupant(x, y) if self.occupant is not None else None
        if target is not None:
            if self.fireball:
                self._record(x, y)
                return False
            self._hit(x, y, target)
        here = self.terrain.look(x, y)
        if here in _BLOCKS or (here == _DOOR_CLOSED and self.left >= 0):
            return self._bounce(last, here)
        self._record(x, y)
        return True

    def _record(self, x: int, y: int) -> None:
        self.steps.append((x, y, self.dx, self.dy))
        if 0 <= x < self.terrain.width and 0 <= y < self.terrain.height:
            self.end = (x, y)

    def _floor(self, x: int, y: int, here: int) -> None:
        effect = ray_floor_effect(self.kind, here)
        if self.kind == "fire" and here not in _BLOCKS and here != _DOOR_CLOSED:
            self.burned.setdefault((x, y), None)
        self.left += effect.range_change
        if effect.becomes is not None:
            self.terrain.change(x, y, effect.becomes)
        if effect.halts:
            self.stopped_by_door = True

    def _hit(self, x: int, y: int, target: RayTarget) -> None:
        if not target.hit():
            return
        self.hits.append(RayHit(x, y, target.id, target.reflects))
        if target.reflects:
            self.dx, self.dy = -self.dx, -self.dy
            return
        if self.strike is not None:
            self.strike(target)
        self.left -= HIT_RANGE_COST

    def _bounce(self, last: tuple[int, int], here: int | None) -> bool:
        """Bounce on the current square (nethack_ray.md section 5)."""
        self.left -= BOUNCE_RANGE_COST
        if self.fireball:
            self.x, self.y = last
            self.stopped_by_door = here == _DOOR_CLOSED
            return False
        self.dx, self.dy = bounce_direction(
            self.terrain.look, (self.x, self.y), last, (self.dx, self.dy), self.rng
        )
        if self.left > 0:
            self.bounces.append((self.x, self.y))
        self._record(self.x, self.y)
        return self.left > 0


def trace_beam(
    level: Level,
    origin: tuple[int, int],
    direction: tuple[int, int],
    rng: np.random.Generator,
    *,
    range: int | None = None,  # same name as trace_ray's
    occupant: Occupant | None = None,
    strike: Strike | None = None,
) -> RayTrace:
    """Trace one beam (wand of striking, force bolt) from ``origin``.

    Source: seed 004 (beam spells fly 6..13 squares) and NetHack 3.6's
    ``bhit`` as summarised in the seed's "Beam" note; the stopping rules are
    Underhall's decision (the issue's). The loop is ``while range > 0: range
    -= 1; step``; on each step the beam moves one square in a straight line
    and never bounces:

    1. off the level: it stops on the square before;
    2. a creature there (asked with ``occupant``, as for a ray; a creature in
       a wall square counts, as in ``bhit``): ``RayTarget.hit()`` makes the
       hit roll; on a hit ``strike(target)`` is called and the beam stops on
       that square (reflection does not apply to beams); a miss lets it fly on;
    3. ROCK, WALL, TREE or a closed door: it stops on the square before, with
       no terrain change (``stopped_by_door`` tells a door).

    Unlike NetHack's striking beam, which flies through every monster for 3
    range each and breaks closed doors, an Underhall beam stops at the first
    creature it hits and at doors.

    Draw order: ``rng.integers(6, 14)`` only when ``range is None``; then the
    callers' ``RayTarget.hit()`` draws, in path order. Nothing else.

    Args:
        level: The level (never modified).
        origin: ``(x, y)`` of the firer's square.
        direction: ``(dx, dy)`` with components in {-1, 0, 1}, not (0, 0).
        rng: Random stream for the range.
        range: Range in squares, or None to draw 6..13.
        occupant: Who stands on a square; None means nobody anywhere.
        strike: Called with the target the beam hits.

    Returns:
        The trace, with ``kind == "force"``, no bounces and no terrain changes.

    Raises:
        ValueError: Bad direction, origin off the level or negative range.
    """
    _check_start(level, origin, direction, range)
    initial = draw_beam_range(rng) if range is None else range
    terrain = _Overlay(level)
    (x, y), (dx, dy) = origin, direction
    steps: list[tuple[int, int, int, int]] = []
    hits: list[RayHit] = []
    left, by_door = initial, False
    while left > 0:
        left -= 1
        nx, ny = x + dx, y + dy
        here = terrain.look(nx, ny)
        if here is None:
            break
        target = occupant(nx, ny) if occupant is not None else None
        if target is not None and target.hit():
            x, y = nx, ny
            steps.append((x, y, dx, dy))
            hits.append(RayHit(x, y, target.id, False))
            if strike is not None:
                strike(target)
            break
        if here in _BLOCKS or here == _DOOR_CLOSED:
            by_door = here == _DOOR_CLOSED
            break
        x, y = nx, ny
        steps.append((x, y, dx, dy))
    return RayTrace(
        origin,
        "force",
        initial,
        steps,
        [],
        hits,
        [],
        [],
        (x, y),
        by_door,
        max(left, 0),
        terrain.cells_of(steps),
    )
