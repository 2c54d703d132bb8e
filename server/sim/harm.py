"""Damage that is not melee: typed damage against resistance and terrain, its
side effects, statuses, and damage to terrain and floor items.

Everything elemental or magical carries a damage type (seed 003). Applying it
to a creature goes through :func:`server.sim.damage.apply_damage_type` (the
rubble/tree dodge, the terrain share, resistance, side effects), then the
creature loses the health, the side effects become statuses or movements, a
sleeping creature wakes, and :meth:`World.after_harm` provokes, kills or
frightens as melee does. Untyped damage (``damage_type`` None: a thrown
dagger, hunger, a curse's backlash) is taken as it is.

Draw order of :func:`harm_typed`: the damage-type draws documented in
:mod:`server.sim.damage`, then for a teleport one ``rng.integers`` over the
candidate cells, then for a clone nothing (the free cell is found without
draws), then, for light from a bearer of the holy-light ability, the draws of
:func:`server.sim.damage.holy_light_fear`, then the terrain effect's draw
(:func:`server.sim.damage.terrain_effect`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from server.content import DAMAGE_TYPES, MONSTER_FLAGS, Terrain
from server.content.damage import SideEffect
from server.content.statuses import StatusKind
from server.sim import damage as dmg
from server.sim.actors import Actor, Mind, new_monster
from server.sim.combat import AttackOutcome
from server.sim.events import (
    Event,
    Harmed,
    ItemDestroyed,
    Notice,
    Polymorphed,
    TerrainChanged,
)

if TYPE_CHECKING:
    from server.sim.world import World

STATUS_OF_SIDE_EFFECT: Final = {
    SideEffect.STUN: StatusKind.STUNNED,
    SideEffect.CONFUSION: StatusKind.CONFUSED,
    SideEffect.SLOW: StatusKind.SLOWED,
    SideEffect.SLEEP: StatusKind.ASLEEP,
    SideEffect.FEAR: StatusKind.AFRAID,
    SideEffect.HASTE: StatusKind.HASTED,
    SideEffect.HOLD: StatusKind.PARALYSED,
}
"""Side effects of seed 003 that become seed 001 statuses (turns = rounds)."""
_STACKED: Final = frozenset({SideEffect.STUN, SideEffect.CONFUSION, SideEffect.FEAR})
"""Seed 003 final notes iii-v: these stack on a monster (:func:`dmg.stack_status`)."""
_SEED_SIZED: Final = _STACKED | {SideEffect.SLEEP, SideEffect.HOLD}
"""Side effects whose amounts seed 003 sizes past ``statuses.toml``'s caps (sleep 350)."""
_FLAGS: Final = frozenset(MONSTER_FLAGS)
ATTACKS: Final = frozenset({"throw", "ray", "beam", "bolt", "ball", "spell", "breath", "potion"})
"""Causes of harm that are the source's attack: one that lands stops the
attacker's regeneration that turn, as a melee hit does (seed 001: "attacking
during a turn prevents health and energy from regenerating (unless you
miss)"). A shield's retaliation, statuses, terrain and hunger are not."""


def _flags(actor: Actor) -> frozenset[str]:
    return actor.flags & _FLAGS


def caster_of(world: World, source: Actor | None) -> dmg.Caster:
    """The :class:`server.sim.damage.Caster` of an attack by ``source``: its
    level, whether it is a player, and a player's NetHack role."""
    if source is None:
        return dmg.NOBODY
    cls = world.content.classes.get(source.cls or "") if source.is_player else None
    return dmg.Caster(
        level=source.level, player=source.is_player, role="" if cls is None else cls.role
    )


def harm_typed(
    world: World,
    target: Actor,
    raw: int,
    damage_type: str | None,
    source: Actor | None,
    cause: str,
    events: list[Event],
    *,
    outcome: AttackOutcome = AttackOutcome.HIT,
) -> int:
    """Apply ``raw`` damage of ``damage_type`` to ``target``; return the health it lost.

    Args:
        world: The world.
        target: A living actor.
        raw: Damage before terrain and resistance (>= 0; negative counts as 0).
        damage_type: A ``DAMAGE_TYPES`` key, or None for untyped damage.
        source: The actor responsible, if any (credited with a kill).
        cause: The carrier, for the ``Harmed`` event (``"ray"``, ``"ball"``, …).
        events: Where events go.
        outcome: The hit outcome to report.
    """
    raw = max(0, raw)
    landed = outcome != AttackOutcome.MISS
    if landed and source is not None and source is not target and cause in ATTACKS:
        source.last_attack_tick = world.tick  # seed 001: no regeneration this turn
    level = world.levels[target.depth]
    terrain = level.terrain_at(target.x, target.y)
    effects: tuple[tuple[SideEffect, int], ...] = ()
    dodged = False
    if damage_type is None or damage_type not in DAMAGE_TYPES:
        taken = raw
    else:
        levels = target.resistances()
        result = dmg.apply_damage_type(
            world.rng,
            raw,
            damage_type,
            terrain=terrain,
            resist_level=dmg.resistance_level(damage_type, levels),
            flags=_flags(target),
            mobile=not target.immobile,
            level=min(target.level, 100),
            status_immune=dmg.status_immunities(levels, _flags(target)),
            others=levels,
            defence=max(0, target.eff_defence),
            health=target.hp,
            max_health=target.max_hp,
            caster=caster_of(world, source),
        )
        dodged = result.dodged
        taken = 0 if dodged else result.damage
        effects = result.side_effects
        if not dmg.deals_damage(damage_type):
            return _spellbound(world, target, source, effects, events)
    dealt = min(taken, target.hp)
    target.hp -= dealt
    events.append(
        Harmed(
            target.depth,
            target.x,
            target.y,
            target.id,
            None if source is None else source.id,
            damage_type or "physical",
            dealt,
            cause,
            outcome,
        )
    )
    if dealt > 0:
        world.report_status(target, target.statuses.on_damaged(), events)
        if damage_type in RUSTING and target.equipment:
            rust(world, target, events)
        if target.mind == Mind.ASLEEP and not target.is_player:
            target.mind = (
                Mind.HUNTING if source is not None and source.is_player else Mind.WANDERING
            )
    if target.alive:
        for effect, amount in effects:
            _side_effect(world, target, source, effect, amount, events)
        if (
            source is not None
            and "holy_light" in source.abilities
            and not target.is_player
            and damage_type is not None
            and damage_type in dmg.HOLY_LIGHT
            and not dodged
        ):
            _holy_light(world, target, source, damage_type, events)
    if damage_type is not None and damage_type in DAMAGE_TYPES and raw > 0:
        strike_terrain(world, target.depth, target.x, target.y, damage_type, raw, events)
    world.after_harm(target, source, events)
    return dealt


def _holy_light(
    world: World, target: Actor, source: Actor, damage_type: str, events: list[Event]
) -> None:
    """The holy-light specialty (seed 003 M, N): the light may frighten an
    undead, evil or light-hurt monster, even one that knows no fear."""
    rounds = dmg.holy_light_fear(
        world.rng,
        damage_type,
        source.level,
        min(target.level, 100),
        _flags(target),
        target.resistance("light"),
    )
    if rounds > 0 and target.alive:
        current = target.statuses.rounds(StatusKind.AFRAID)
        rounds = dmg.stack_status(SideEffect.FEAR, current, rounds)
        world.report_status(target, target.statuses.impose(StatusKind.AFRAID, rounds), events)


RUSTING: Final = frozenset({"water", "storm"})
"""Damage types that rust what a creature wears (Underhall's decision; seed 001
names rust and rust-proof items, not how rust comes)."""
RUST_SLOTS: Final = ("weapon", "body", "shield", "head", "hands", "feet")
"""The order in which worn items are tried for rust."""
MAX_RUST: Final = 3
"""Most rust an item takes (NetHack's erosion levels 1..3): plus never below -3."""


def rust(world: World, target: Actor, events: list[Event]) -> bool:
    """The first worn metallic, not rust-proof item (``RUST_SLOTS`` order) that
    can still rust loses 1 plus (power of a weapon, defence of armour), down
    to -3; a ``rusted`` notice names its pack letter. No draws.

    Returns:
        True if something rusted.
    """
    for slot in RUST_SLOTS:
        item = target.equipment.get(slot)
        if item is None:
            continue
        idef = world.content.items[item.key]
        if not idef.metallic or idef.rustproof or idef.artifact or item.plus <= -MAX_RUST:
            continue
        item.plus -= 1
        world.refresh_bonus(target)
        events.append(Notice(target.id, "rusted", (item.letter,)))
        return True
    return False


def _spellbound(
    world: World,
    target: Actor,
    source: Actor | None,
    effects: tuple[tuple[SideEffect, int], ...],
    events: list[Event],
) -> int:
    """A type that deals no damage (sleep, seed 003's OLD_* and the like): only
    its side effects, no ``Harmed`` event, nothing wakes. A monster a player
    targeted notices the player unless the effect left it asleep. Returns 0."""
    for effect, amount in effects:
        if not target.alive or target.id not in world.actors:
            break
        _side_effect(world, target, source, effect, amount, events)
    if target.id in world.actors and target.alive and not target.statuses.has(StatusKind.ASLEEP):
        world.provoke(target, source, events)  # a polymorphed one is gone
    return 0


def impose_status(
    world: World, target: Actor, effect: SideEffect, amount: int, events: list[Event]
) -> None:
    """Give a monster a seed-003 status of ``amount`` turns, sized as seed 003 sizes it.

    Not cut by ``statuses.toml``'s caps (those are seed 001's, for characters):
    a failed sleep save gives a sleep value of ``amount`` (350, note B); a stun
    or confusion on a monster that has it adds half the new amount, fear
    always adds, each up to 200 turns (final notes iii-v,
    :func:`server.sim.damage.stack_status`). A player gets
    :meth:`World.add_status` instead, with its caps (Underhall's decision).
    """
    kind = STATUS_OF_SIDE_EFFECT[effect]
    if amount <= 0 or not target.alive:
        return
    if target.is_player:
        world.add_status(target, kind, amount, events)
        return
    current = target.statuses.rounds(kind)
    if effect in _STACKED:
        rounds = dmg.stack_status(effect, current, amount)
    else:
        rounds = max(current, amount)
    world.report_status(target, target.statuses.impose(kind, rounds), events)


def _side_effect(
    world: World,
    target: Actor,
    source: Actor | None,
    effect: SideEffect,
    amount: int,
    events: list[Event],
) -> None:
    kind = STATUS_OF_SIDE_EFFECT.get(effect)
    if kind is not None:
        if effect in _SEED_SIZED:
            impose_status(world, target, effect, amount, events)
        else:
            world.add_status(target, kind, amount, events)
        if kind == StatusKind.ASLEEP and not target.is_player and target.statuses.has(kind):
            target.mind = Mind.ASLEEP
        return
    if effect == SideEffect.HEAL:
        target.hp = min(target.max_hp, target.hp + amount)
    elif effect == SideEffect.DRAIN_ENERGY:
        target.en = max(0, target.en - amount)
    elif effect == SideEffect.TELEPORT:
        _teleport(world, target, amount)
    elif effect == SideEffect.KNOCK_BACK and source is not None:
        _knock_back(world, target, source, amount)
    elif effect == SideEffect.POLYMORPH:
        polymorph(world, target, events)
    elif effect == SideEffect.CLONE:
        clone(world, target)


POLYMORPH_DEPTHS: Final = 3
"""A polymorphed monster becomes a kind found within this many levels of its
own kind's depth range (Underhall's decision; Angband picks by level too)."""


def polymorph(world: World, target: Actor, events: list[Event]) -> Actor | None:
    """Turn a monster into another kind (seed 003 note w; the save is made by
    :func:`server.sim.damage.roll_side_effects`). Players and uniques never
    change. The new creature takes the old one's cell, keeps its fraction of
    health and its mind, and gets a new id (so clients see one leave and the
    other appear). Draws: one ``rng.integers`` over the candidate kinds.

    Returns:
        The new monster, or None if nothing changed.
    """
    old = world.content.monsters.get(target.kind)
    if target.is_player or old is None or "unique" in old.flags:
        return None
    lo, hi = old.depth_min - POLYMORPH_DEPTHS, old.depth_max + POLYMORPH_DEPTHS
    kinds = [
        m
        for m in world.content.monsters.values()
        if m.key != old.key and "unique" not in m.flags and m.depth_min <= hi and m.depth_max >= lo
    ]
    if not kinds:
        return None
    mdef = kinds[int(world.rng.integers(len(kinds)))]
    fraction = target.hp / max(1, target.max_hp)
    depth, x, y, mind = target.depth, target.x, target.y, target.mind
    target_of, seen = target.target, target.target_seen
    world.remove_monster(target)
    new = world.add_actor(lambda aid: new_monster(aid, mdef, depth, x, y, mind), depth, x, y)
    new.hp = max(1, round(fraction * new.max_hp))
    new.target, new.target_seen = target_of, seen
    events.append(Polymorphed(depth, x, y, target.id, new.id, mdef.key))
    return new


def clone(world: World, target: Actor) -> Actor | None:
    """Put a fresh copy of a monster on the nearest free cell (seed 003 note x).
    Players and uniques are never cloned. No draws."""
    mdef = world.content.monsters.get(target.kind)
    if target.is_player or mdef is None or "unique" in mdef.flags:
        return None
    try:
        x, y = world.free_cell_near(target.depth, target.x, target.y)
    except LookupError:
        return None
    depth, mind = target.depth, target.mind
    return world.add_actor(lambda aid: new_monster(aid, mdef, depth, x, y, mind), depth, x, y)


def _teleport(world: World, target: Actor, distance: int) -> None:
    """Move ``target`` to a random free passable cell about ``distance`` away
    (Chebyshev ring ``distance``, or nearer if that ring has none)."""
    level = world.levels[target.depth]
    occ = world.occupancy(target.depth)
    for reach in range(max(1, distance), 0, -1):
        cells = []
        for dy in range(-reach, reach + 1):
            for dx in range(-reach, reach + 1):
                if max(abs(dx), abs(dy)) != reach:
                    continue
                x, y = target.x + dx, target.y + dy
                if level.in_bounds(x, y) and level.passable[y, x] and occ[y, x] < 0:
                    cells.append((x, y))
        if cells:
            x, y = cells[int(world.rng.integers(len(cells)))]
            world.move_actor(target, x, y)
            return


def _knock_back(world: World, target: Actor, source: Actor, distance: int) -> None:
    """Push ``target`` up to ``distance`` cells straight away from ``source``."""
    dx = (target.x > source.x) - (target.x < source.x)
    dy = (target.y > source.y) - (target.y < source.y)
    if (dx, dy) == (0, 0):
        return
    level = world.levels[target.depth]
    occ = world.occupancy(target.depth)
    for _ in range(distance):
        nx, ny = target.x + dx, target.y + dy
        if not level.in_bounds(nx, ny) or not level.passable[ny, nx] or occ[ny, nx] >= 0:
            return
        world.move_actor(target, nx, ny)


def strike_terrain(
    world: World, depth: int, x: int, y: int, damage_type: str, damage: int, events: list[Event]
) -> None:
    """Seed 003's effects on terrain: ``damage`` of ``damage_type`` reaching
    ``(x, y)`` may change its terrain (cold solidifies lava, fire dries water
    or burns a tree, water floods floor). Every cell an attack reaches faces
    it, whether or not a creature stands there. Draws: those of
    :func:`server.sim.damage.terrain_effect`, only where the type has a rule
    for the cell's terrain."""
    level = world.levels[depth]
    here = level.terrain_at(x, y)
    if not dmg.has_terrain_effect(damage_type, here):
        return  # no rule for this terrain: nothing drawn, no water to count
    becomes = dmg.terrain_effect(
        world.rng,
        damage_type,
        damage,
        here,
        adjacent_water=dmg.adjacent_water(level.terrain, x, y),
    )
    if becomes is None or becomes == here:
        return
    if becomes == Terrain.LAVA and world.actor_at(depth, x, y) is not None:
        return  # nobody is left standing in fresh lava; the floor holds under them
    world.set_terrain(depth, x, y, becomes)
    events.append(TerrainChanged(depth, x, y, int(becomes)))


def burn_floor_items(
    world: World,
    depth: int,
    cells: list[tuple[int, int]],
    damage_type: str,
    damage: int,
    events: list[Event],
) -> None:
    """Destroy floor items on ``cells`` that ``damage_type`` hurts (seed 003 effects on
    objects: fire burns scrolls and spellbooks, cold shatters potions, …)."""
    level = world.levels[depth]
    for x, y in cells:
        pile = level.items.get((x, y))
        if not pile:
            continue
        kept = []
        for item in pile:
            idef = world.content.items[item.key]
            if dmg.floor_item_damaged(
                world.rng,
                damage_type,
                damage,
                idef.category,
                proof=dmg.item_proof(idef),
                artifact=idef.artifact,
                hates=idef.hates,
                cursed=item.cursed,
            ):
                events.append(ItemDestroyed(depth, x, y, item.key, damage_type))
            else:
                kept.append(item)
        if kept:
            level.items[(x, y)] = kept
        else:
            del level.items[(x, y)]
