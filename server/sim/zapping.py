"""Rays and beams in the world: zapping wands, blowing horns, breath and ray spells.

The pure tracer (:mod:`server.sim.rays`) decides where a ray goes; this module
supplies who stands where, makes each creature's hit roll at the moment the
ray reaches it, applies the damage, and then applies what the ray did to the
terrain and to scrolls and spellbooks lying in its path.

Sources: seed 000 (rays: wands, horns, ray spells, breath; a wand identifies
itself when zapped by someone who can see), ``reference/nethack_ray.md``
(order of checks), seed 003 (damage types against resistances and terrain,
effects on floor items), RULES.md (the hit test of seed 002 for every attack:
a ray's hit roll is the magic hit test, the firer's accuracy doubled against
the target's dodge).

Draw order of :func:`fire_ray`: as :func:`server.sim.rays.trace_ray`, where
each ``RayTarget.hit()`` is :func:`server.sim.combat.roll_hit` (2 floats;
none when the firer surprises the creature) and
each strike is the damage roll (one vectorised dice call) followed by the
damage-type draws of :meth:`World.harm_typed`; after the trace, one draw per
scroll or spellbook on a burnt cell (:meth:`World.burn_floor_items`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from server.content import Terrain
from server.sim import damage as dmg
from server.sim.actors import Actor
from server.sim.combat import roll_dice, roll_hit
from server.sim.events import Event, Notice, RayFired, RejectReason, TerrainChanged, Used
from server.sim.items import find
from server.sim.rays import Occupant, RayTarget, RayTrace, trace_beam, trace_ray

if TYPE_CHECKING:
    from server.sim.world import World


def zap(
    world: World, actor: Actor, letter: str, direction: tuple[int, int], events: list[Event]
) -> RejectReason | None:
    """Zap the wand or blow the horn ``letter`` in ``direction`` (seed 000).

    A wand or horn with no charges left does nothing (the action is spent,
    a ``nothing_happens`` notice). Otherwise one charge is used, the item
    identifies itself (the zapper can see), and its ray, beam or digging ray
    flies from the zapper's square.
    """
    item = find(actor.inventory, letter)
    if item is None:
        return RejectReason.NO_ITEM
    idef = world.content.items[item.key]
    if idef.category not in ("wand", "horn") or idef.effect is None:
        return RejectReason.WRONG_ITEM
    events.append(
        Used(
            actor.depth,
            actor.x,
            actor.y,
            actor.id,
            "blow" if idef.category == "horn" else "zap",
            item.key,
        )
    )
    if not item.charges:
        events.append(Notice(actor.id, "nothing_happens", (item.key,)))
        return None
    item.charges -= 1
    if not item.known:
        item.known = True
        events.append(Notice(actor.id, "identified", (item.key,)))
    dice = idef.dice or (2, 6)
    kind = idef.damage_type or "magic_missile"
    if idef.effect == "bolt" and idef.spell is not None:
        from server.sim.casting import launch_bolt, spell_def  # casting imports this module

        spell = spell_def(idef.spell)
        if spell is not None:
            launch_bolt(
                world, actor, spell, direction, None, accuracy=actor.eff_accuracy, bonus=False
            )
    elif idef.effect == "beam":
        fire_beam(world, actor, direction, kind, dice, events)
    elif idef.effect == "stone_to_mud":
        fire_ray(
            world,
            actor,
            (actor.x, actor.y),
            direction,
            kind,
            dice,
            events,
            digging=True,
            cause="ray",
            strikes=True,
        )
    else:
        fire_ray(
            world,
            actor,
            (actor.x, actor.y),
            direction,
            kind,
            dice,
            events,
            digging=idef.effect == "dig",
            cause="ray",
        )
    return None


def _occupant(world: World, depth: int, accuracy: float, source: Actor | None) -> Occupant:
    """Who stands where, with the seed-002 magic hit test as each one's hit
    roll; a creature the firer surprises is hit without a roll (seed 002:
    "surprise attacks have 100% accuracy"), as a bolt's target is."""

    def occupant(x: int, y: int) -> RayTarget | None:
        target = world.actor_at(depth, x, y)
        if target is None or not target.alive:
            return None

        def hit() -> bool:
            if source is not None and source is not target and world.is_surprise(source, target):
                return True
            return roll_hit(world.rng, accuracy, target.dodge, magic=True)

        return RayTarget(id=target.id, reflects="reflection" in target.abilities, hit=hit)

    return occupant


def fire_ray(
    world: World,
    source: Actor | None,
    origin: tuple[int, int],
    direction: tuple[int, int],
    kind: str,
    dice: tuple[int, int],
    events: list[Event],
    *,
    digging: bool = False,
    fireball: bool = False,
    cause: str = "ray",
    accuracy: float | None = None,
    depth: int | None = None,
    bonus: Callable[[int], int] | None = None,
    reach: int | None = None,
    strikes: bool = False,
    extra: Callable[[Actor], int] | None = None,
) -> RayTrace:
    """Fire a ray of damage type ``kind`` and apply everything it does.

    Args:
        world: The world.
        source: Who fired it (None for a trap-like source).
        origin: The firer's square ``(x, y)``.
        direction: ``(dx, dy)``, components in {-1, 0, 1}, not both 0.
        kind: Damage type (``DAMAGE_TYPES``).
        dice: ``(count, sides)`` of each hit's damage roll.
        digging: A digging ray (no damage; cuts walls, doors and rock).
        fireball: Flies like a ray and explodes where it stops.
        cause: The ``Harmed`` cause: ``"ray"``, ``"spell"`` or ``"breath"``.
        accuracy: The firer's accuracy for the hit rolls (its own when None).
        depth: Level (the source's when None).
        bonus: Adjusts each damage roll (a player's spell damage bonus).
        reach: The ray's range in cells; drawn by the rules when None.
        strikes: A digging ray that also strikes the creatures on its path
            (stone to mud, :func:`_dig_strikes`).
        extra: Extra damage for a creature it hits, added to the roll before
            ``bonus`` (cone of cold's d3s against fire resistance).

    Returns:
        The trace (for the caller's explosion, if any).
    """
    if depth is None:
        if source is None:
            raise ValueError("fire_ray needs a depth when there is no source")
        depth = source.depth
    acc = accuracy if accuracy is not None else (source.eff_accuracy if source else 10.0)
    level = world.levels[depth]

    struck: list[Event] = []

    def strike(target: RayTarget) -> None:
        victim = world.actors.get(target.id)
        if victim is None or not victim.alive:
            return
        raw = roll_dice(world.rng, *dice)
        if extra is not None:
            raw += extra(victim)
        if bonus is not None and dmg.deals_damage(kind):
            raw = bonus(raw)  # NetHack's sleep ray takes no damage bonus
        world.harm_typed(victim, raw, kind, source, cause, struck)

    trace = trace_ray(
        level,
        origin,
        direction,
        world.rng,
        kind=kind,
        range=reach,
        occupant=None if digging else _occupant(world, depth, acc, source),
        strike=None if digging else strike,
        digging=digging,
        fireball=fireball,
    )
    if digging and strikes:
        _dig_strikes(world, source, depth, trace, kind, dice, struck)
    _apply_trace(
        world,
        source,
        depth,
        trace,
        kind,
        events,
        struck,
        beam=False,
        label="dig" if digging else kind,
        dice=dice,
    )
    return trace


def _dig_strikes(
    world: World,
    source: Actor | None,
    depth: int,
    trace: RayTrace,
    kind: str,
    dice: tuple[int, int],
    struck: list[Event],
) -> None:
    """Stone to mud (seed 003's KILL_WALL as a digging ray): every creature on
    the dug path, the firer excepted, takes ``dice`` of ``kind``, which only a
    creature hurt by it feels (HURT_ROCK: a wall-walker of rock). No hit roll:
    the ray dissolves the stone around it. Draws: per creature in path order,
    the dice, then the damage-type draws."""
    for x, y in trace.cells:
        victim = world.actor_at(depth, x, y)
        if victim is None or not victim.alive or victim is source:
            continue
        world.harm_typed(victim, roll_dice(world.rng, *dice), kind, source, "ray", struck)


def fire_beam(
    world: World,
    source: Actor,
    direction: tuple[int, int],
    kind: str,
    dice: tuple[int, int],
    events: list[Event],
    *,
    cause: str = "beam",
    accuracy: float | None = None,
    bonus: Callable[[int], int] | None = None,
    reach: int | None = None,
) -> RayTrace:
    """Fire a beam (wand of striking, force bolt): straight, no bounce, stops
    at the first creature it hits (:func:`server.sim.rays.trace_beam`)."""
    level = world.levels[source.depth]

    struck: list[Event] = []

    def strike(target: RayTarget) -> None:
        victim = world.actors.get(target.id)
        if victim is not None and victim.alive:
            raw = roll_dice(world.rng, *dice)
            world.harm_typed(
                victim, raw if bonus is None else bonus(raw), kind, source, cause, struck
            )

    trace = trace_beam(
        level,
        (source.x, source.y),
        direction,
        world.rng,
        range=reach,
        occupant=_occupant(
            world, source.depth, source.eff_accuracy if accuracy is None else accuracy, source
        ),
        strike=strike,
    )
    _apply_trace(
        world, source, source.depth, trace, kind, events, struck, beam=True, label=kind, dice=dice
    )
    return trace


def _apply_trace(
    world: World,
    source: Actor | None,
    depth: int,
    trace: RayTrace,
    kind: str,
    events: list[Event],
    struck: list[Event],
    *,
    beam: bool,
    label: str,
    dice: tuple[int, int],
) -> None:
    """Report the ray, then what it did to creatures (``struck``, gathered
    while it flew), then what it did to terrain and floor items."""
    origin = trace.origin
    events.append(
        RayFired(
            depth,
            origin[0],
            origin[1],
            None if source is None else source.id,
            label,
            tuple(trace.cells),
            tuple(trace.bounces),
            tuple((h.target_id, h.reflected, h.x, h.y) for h in trace.hits),
            beam,
        )
    )
    events.extend(struck)
    for x, y, terrain in trace.terrain_changes:
        if world.levels[depth].terrain_at(x, y) != terrain:
            world.set_terrain(depth, x, y, Terrain(terrain))
            events.append(TerrainChanged(depth, x, y, int(terrain)))
    # Seed 003 effects on objects lying in the path: fire burns scrolls and
    # spellbooks (its burn cells, nethack_ray.md), cold shatters potions, acid
    # and lightning destroy what they hate, at the ray's average damage.
    level = world.levels[depth]
    cells = (
        trace.burn_cells
        if kind == "fire"
        else [(x, y) for x, y in trace.cells if level.passable[y, x]]
    )
    if cells and level.items:
        world.burn_floor_items(depth, cells, kind, events, damage=dice[0] * (dice[1] + 1) // 2)


def breathe(world: World, monster: Actor, target: Actor, events: list[Event]) -> bool:
    """A breathing monster lined up with ``target`` breathes at it (a ray).

    Returns:
        True if it breathed (its action is spent).
    """
    mdef = world.content.monsters.get(monster.kind)
    if mdef is None or mdef.breath is None or mdef.breath_dice is None:
        return False
    dx, dy = target.x - monster.x, target.y - monster.y
    if (dx, dy) == (0, 0) or not (dx == 0 or dy == 0 or abs(dx) == abs(dy)):
        return False
    if max(abs(dx), abs(dy)) > 13:
        return False
    direction = ((dx > 0) - (dx < 0), (dy > 0) - (dy < 0))
    cost = monster.max_en // 4
    if monster.en < cost:
        return False
    monster.en -= cost
    fire_ray(
        world,
        monster,
        (monster.x, monster.y),
        direction,
        mdef.breath,
        mdef.breath_dice,
        events,
        cause="breath",
    )
    return True
