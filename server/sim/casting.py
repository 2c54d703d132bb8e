"""Spellcasting in the world: who may cast what, the casting roll, and each effect.

Sources: seed 004 (success chance, energy and nutrition costs, who cannot
cast, forgetting, skill training; :mod:`server.sim.spellcasting`), seed 001
(the spell families and their numbers, learning from scrolls and potions,
casting from an equipped spellbook or anything known while enlightened,
upgrades at an altar; :mod:`server.sim.spells`), seed 003 (each spell's damage
type against resistances and terrain; :meth:`World.harm_typed`), seed 000
(NetHack's ray spells fly as rays; :mod:`server.sim.zapping`).

Time: a spell's memory is counted in rounds (``statuses.toml``
``round_ticks`` ticks; seed 004's "turns"). ``actor.known_spells`` keeps the
tick each spell was learned or refreshed.

Draw order of :func:`cast`: for a forgotten spell, one
:func:`~server.sim.spellcasting.forgotten_cast_effect` draw and nothing else;
otherwise :func:`~server.sim.spellcasting.roll_cast` (one ``rng.random()``
unless confused), then the effect's own draws, documented on each ``_effect``
function below.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Final

import numpy as np
from numpy.typing import NDArray

from server.content import DAMAGE_TYPES, MONSTER_FLAGS, Content, Terrain
from server.content.damage import SideEffect
from server.content.spells import SpellDef, default_spells
from server.content.statuses import StatusKind
from server.sim import damage as dmg
from server.sim import spellcasting as sc
from server.sim import spells as fam
from server.sim.actors import Actor
from server.sim.ballistics import bolt_path
from server.sim.combat import AttackOutcome, roll_dice, roll_hit
from server.sim.commands import Cast
from server.sim.events import Cast as CastEvent
from server.sim.events import Event, Exploded, Harmed, Learned, Notice, RejectReason
from server.sim.harm import strike_terrain
from server.sim.projectiles import BOLT_SPEED, Projectile, launch
from server.sim.rays import draw_beam_range, draw_dig_range, draw_ray_range
from server.sim.status import can_cast as can_cast_status
from server.sim.status import freeze_inflicts, frozen_rounds, spark_burn_rounds
from server.sim.zapping import fire_beam, fire_ray

if TYPE_CHECKING:
    from server.sim.world import World

AIMS: Final = {"direction": "dir", "target": "cell", "self": "self", "item": "self"}
"""Wire ``aim`` of each spell targeting (docs/protocol.md ``welcome.spells``).
Remove curse (targeting ``item``) works on every cursed item the caster
carries, so it needs no aim (Underhall's decision)."""
MEMORY_STEP: Final = 100
"""Ticks between refreshes of the spell menu's forgetting numbers."""
BOOST_OPTIONS: Final = ("health", "energy", "power", "defence")
"""The plain boosts every fifth level offers (seed 001), besides resistances
and special abilities."""
RESIST_OPTIONS: Final = ("fire", "cold", "electricity", "acid", "poison")
"""Elements a fifth-level reward may raise the resistance to (``resist_<type>``)."""


def _spell(key: str, actor: Actor | None = None) -> SpellDef | None:
    """The spell ``key`` as ``actor`` casts it (upgraded if it upgraded it)."""
    spell = default_spells().spells.get(key)
    if spell is not None and actor is not None and key in actor.upgraded:
        spell = fam.upgrade(spell)
    return spell


def spell_def(key: str) -> SpellDef | None:
    """The spell record ``key`` as the data gives it (not upgraded), or None."""
    return _spell(key)


UPGRADE_ENERGY_PER_LEVEL: Final = 10
"""Energy an altar upgrade costs per spell level (Underhall's decision; seed 001
says only that upgrading happens at an altar)."""


def upgrade_spell(world: World, actor: Actor, key: str, events: list[Event]) -> RejectReason | None:
    """Upgrade the known spell ``key`` at an altar (seed 001: "doubles all its
    numerical attributes", or halves the energy cost for a few). The caster
    must stand on an altar and spend 10 x spell level energy; a spell is
    upgraded once."""
    spell = _spell(key)
    if spell is None or key not in actor.known_spells:
        return RejectReason.UNKNOWN_SPELL
    if world.levels[actor.depth].terrain_at(actor.x, actor.y) != Terrain.ALTAR:
        return RejectReason.NO_ALTAR
    if key in actor.upgraded:
        return RejectReason.NO_CHOICE
    cost = UPGRADE_ENERGY_PER_LEVEL * spell.level
    if actor.en < cost:
        return RejectReason.NO_ENERGY
    actor.en -= cost
    actor.upgraded.add(key)
    events.append(Notice(actor.id, "upgraded", (key,)))
    return None


def turns_left(actor: Actor, key: str, tick: int, round_ticks: int = 3) -> int:
    """Rounds before ``actor`` forgets ``key`` (seed 004: 20,000 after learning)."""
    learned = actor.known_spells[key]
    return sc.spell_retention(learned // round_ticks, max(tick, learned) // round_ticks)


def castable(actor: Actor) -> list[str]:
    """Known spells ``actor`` can cast now, in learning order (seed 001): all
    of them while enlightened or with a spellbook equipped (Underhall's
    decision: an equipped book holds every spell its owner knows), none
    otherwise."""
    if actor.statuses.has(StatusKind.ENLIGHTENED) or actor.bonus.book is not None:
        return list(actor.known_spells)
    return []


def success_percent(actor: Actor, spell: SpellDef, content: Content) -> int:
    """Seed 004's success chance for ``actor`` casting ``spell``."""
    cls = content.classes.get(actor.cls or "")
    if cls is None:
        return 0
    role = default_spells().roles.get(cls.role.lower())
    special = role is not None and role.special_key == spell.key
    skill = sc.skill_for_practice(actor.skills.get(spell.school, 0))
    b = actor.bonus
    return sc.spell_success_percent(
        role=cls.role,
        stat=cls.casting_stat,
        xl=max(1, actor.level),
        skill=skill,
        spell_level=spell.level,
        emergency=spell.emergency,
        special=special,
        shield=b.shield,
        metal_suit=b.metal_suit,
        robe=b.robe,
        metal_helm=b.metal_helm,
        metal_gloves=b.metal_gloves,
        metal_boots=b.metal_boots,
    )


def spell_menu(actor: Actor, content: Content, tick: int) -> list[tuple[str, str, int, int, bool]]:
    """``me.spells``: ``(letter, key, fail %, energy cost, forgotten)`` per castable spell."""
    rows = []
    for i, key in enumerate(castable(actor)):
        spell = _spell(key, actor)
        if spell is None:
            continue
        fail = 100 - success_percent(actor, spell, content)
        forgotten = sc.is_forgotten(turns_left(actor, key, tick))
        rows.append((chr(ord("a") + i), key, fail, fam.cast_energy_cost(spell), forgotten))
    return rows


def choice_options(actor: Actor, content: Content) -> tuple[str, ...]:
    """What a fifth-level reward may be (seed 001): a boost to health, energy,
    power or defence, a resistance, or one of the class's special abilities
    not yet known."""
    cls = content.classes.get(actor.cls or "")
    specials = tuple(a for a in (cls.special_choices if cls else ()) if a not in actor.abilities)
    return BOOST_OPTIONS + tuple(f"resist_{t}" for t in RESIST_OPTIONS) + specials


def carried_weight(actor: Actor, content: Content) -> int:
    """Total weight of what ``actor`` carries, worn or not (``items.toml`` weights)."""
    return sum(content.items[item.key].weight * item.count for item in actor.inventory)


def learn(world: World, actor: Actor, key: str, events: list[Event]) -> bool:
    """Learn (or refresh) spell ``key`` (seed 001: from a scroll or potion;
    seed 004: re-reading refreshes only at or below 1,000 turns left).

    Returns:
        True if the spell was learned or refreshed.
    """
    if _spell(key) is None:
        return False
    if key in actor.known_spells:
        left = turns_left(actor, key, world.tick, world.status_rules.round_ticks)
        if not sc.can_refresh(left):
            return False
    actor.known_spells[key] = world.tick
    events.append(Learned(actor.id, key))
    return True


def cast(world: World, actor: Actor, command: Cast, events: list[Event]) -> RejectReason | None:
    """Cast ``command.spell`` (seed 004 checks and roll, then the effect)."""
    spell = _spell(command.spell, actor)
    if spell is None or command.spell not in actor.known_spells:
        return RejectReason.UNKNOWN_SPELL
    if command.spell not in castable(actor):
        return RejectReason.CANNOT_CAST
    aim = AIMS[spell.targeting]
    if (aim == "dir") != (command.direction is not None) or (
        (aim == "cell") != (command.target is not None)
    ):
        return RejectReason.NO_TARGET
    if aim == "cell":
        assert command.target is not None
        if not _in_view(world, actor, command.target) or not in_range(
            spell, (actor.x, actor.y), command.target
        ):
            return RejectReason.NO_TARGET
    cost = fam.cast_energy_cost(spell)
    left = turns_left(actor, spell.key, world.tick, world.status_rules.round_ticks)
    forgotten = sc.is_forgotten(left)
    refusal = sc.can_cast(
        energy=actor.en,
        cost=cost,
        stunned=actor.statuses.has(StatusKind.STUNNED),
        strength=actor.strength,
        free_hand=not actor.bonus.two_hands_busy,
        forgotten=forgotten,
        nourishment=actor.food.nourishment if actor.is_player else None,
        encumbrance=sc.encumbrance(carried_weight(actor, world.content), actor.strength),
    )
    if refusal == sc.CastRefusal.NOT_ENOUGH_ENERGY:
        return RejectReason.NO_ENERGY
    if refusal is not None:
        return RejectReason.CANNOT_CAST
    if forgotten:
        confused, stunned = sc.forgotten_cast_effect(world.rng, spell.level)
        world.add_status(actor, StatusKind.CONFUSED, confused, events)
        world.add_status(actor, StatusKind.STUNNED, stunned, events)
        events.append(Notice(actor.id, "forgot", (spell.key,)))
        events.append(CastEvent(actor.depth, actor.x, actor.y, actor.id, spell.key, False))
        return None
    pct = success_percent(actor, spell, world.content)
    confused = actor.statuses.has(StatusKind.CONFUSED)
    if actor.is_player:
        # Seed 004: "A failed cast of a spell costs as much [nutrition] as a
        # successful one"; only the energy is halved on failure.
        cls = world.content.classes.get(actor.cls or "")
        wizard = cls.casting_stat if cls is not None and cls.role == "Wizard" else None
        actor.food.nourishment -= sc.spell_nutrition_cost(
            spell.level, wizard_intelligence=wizard, nourishment=actor.food.nourishment
        )
    if not sc.roll_cast(world.rng, pct, confused=confused):
        actor.en = max(0, actor.en - fam.failed_energy_cost(spell))
        events.append(CastEvent(actor.depth, actor.x, actor.y, actor.id, spell.key, False))
        return None
    actor.en -= cost
    actor.skills[spell.school] = sc.train_skill(actor.skills.get(spell.school, 0), spell.level)
    events.append(CastEvent(actor.depth, actor.x, actor.y, actor.id, spell.key, True))
    apply_spell(world, actor, spell, command.direction, command.target, events)
    return None


def monster_cast(
    world: World, monster: Actor, key: str, target: Actor, events: list[Event]
) -> bool:
    """A monster casts spell ``key`` at ``target`` (or on itself).

    Monsters pay the energy cost and do not roll seed 004's success (their
    casting is their nature, as NetHack's monster spells); a spell needing a
    direction is cast only when the target is lined up (row, column or
    diagonal) within 8 cells. The monster's ``spell_power``, when given,
    replaces the spell's power. Returns True if it cast.
    """
    spell = _spell(key)
    if spell is None or not can_cast_status(monster.statuses):
        return False
    cost = fam.cast_energy_cost(spell)
    if monster.en < cost:
        return False
    direction: tuple[int, int] | None = None
    cell: tuple[int, int] | None = None
    aim = AIMS[spell.targeting]
    if aim == "dir":
        dx, dy = target.x - monster.x, target.y - monster.y
        if not (dx == 0 or dy == 0 or abs(dx) == abs(dy)) or max(abs(dx), abs(dy)) > 8:
            return False
        direction = ((dx > 0) - (dx < 0), (dy > 0) - (dy < 0))
    elif aim == "cell":
        cell = (target.x, target.y)
        if not in_range(spell, (monster.x, monster.y), cell):
            return False
    mdef = world.content.monsters.get(monster.kind)
    if mdef is not None and mdef.spell_power is not None and spell.power > 0:
        spell = replace(spell, power=mdef.spell_power)
    monster.en -= cost
    events.append(CastEvent(monster.depth, monster.x, monster.y, monster.id, spell.key, True))
    apply_spell(world, monster, spell, direction, cell, events)
    return True


def in_range(spell: SpellDef, origin: tuple[int, int], cell: tuple[int, int]) -> bool:
    """Whether ``cell`` is within the range of a spell aimed at a cell, in
    cells of Chebyshev distance from ``origin`` (seed 001: "confusion has a
    range of 8 tiles", acid glob "unlimited range"; ``range`` None is
    unlimited; an upgraded spell's doubled range counts)."""
    if spell.range is None:
        return True
    return max(abs(cell[0] - origin[0]), abs(cell[1] - origin[1])) <= spell.range


def _in_view(world: World, actor: Actor, cell: tuple[int, int]) -> bool:
    fov = actor.fov
    if actor.is_player:
        return fov is not None and fov.contains(*cell)
    return world.levels[actor.depth].in_bounds(*cell)


def apply_spell(
    world: World,
    caster: Actor,
    spell: SpellDef,
    direction: tuple[int, int] | None,
    target: tuple[int, int] | None,
    events: list[Event],
) -> None:
    """Carry out a successfully cast spell (players and monsters alike)."""
    handler = _EFFECTS[spell.effect]
    handler(world, caster, spell, direction, target, events)


Effect = Callable[
    ["World", Actor, SpellDef, "tuple[int, int] | None", "tuple[int, int] | None", list[Event]],
    None,
]


SPELL_HIT_STEP: Final = 0.05
"""Accuracy change per point of seed 004's spell to-hit bonus: one face of
NetHack's d20 hit roll (Underhall's decision; our hit test is seed 002's race)."""
CASTING_DEXTERITY: Final = 10
"""Dexterity used for the to-hit bonus: Underhall has no dexterity stat, so the
dexterity term is 0 (NetHack's 8..13 band)."""


def _roll(world: World, caster: Actor, dice: int, sides: int) -> int:
    """A spell's damage roll: dice d sides, plus seed 004's damage bonus from
    the casting stat and level when a player casts it."""
    damage = roll_dice(world.rng, dice, sides)
    bonus = _bonus(world, caster)
    return damage if bonus is None else bonus(damage)


def _bonus(world: World, caster: Actor) -> Callable[[int], int] | None:
    """Seed 004's damage bonus as a function of the roll, for a player caster."""
    cls = world.content.classes.get(caster.cls or "") if caster.is_player else None
    if cls is None:
        return None
    stat, xl = cls.casting_stat, max(1, caster.level)
    return lambda damage: sc.apply_spell_damage_bonus(damage, stat, xl)


def spell_accuracy(caster: Actor, spell: SpellDef) -> float:
    """The caster's accuracy for an attack spell's hit roll: seed 004's to-hit
    bonus (school skill; dexterity counts as 10) as 5% of accuracy per point."""
    if not caster.is_player:
        return caster.eff_accuracy
    skill = sc.skill_for_practice(caster.skills.get(spell.school, 0))
    bonus = sc.spell_hit_bonus(skill, CASTING_DEXTERITY)
    return caster.eff_accuracy * max(SPELL_HIT_STEP, 1.0 + SPELL_HIT_STEP * bonus)


def _dice(spell: SpellDef, caster: Actor) -> int:
    return spell.dice if spell.dice is not None else sc.ray_spell_damage_dice(max(1, caster.level))


def _ahead(caster: Actor, direction: tuple[int, int], reach: int) -> tuple[int, int]:
    return caster.x + direction[0] * reach, caster.y + direction[1] * reach


def _reaches(blocked: NDArray[np.bool_], origin: tuple[int, int], cell: tuple[int, int]) -> bool:
    """Whether an effect spreading from ``origin`` (a blast, a cloud, a
    tongue, a lightning jump) reaches ``cell``: it is the origin, or seed
    002's path from the origin arrives there without entering a ``blocked``
    cell (``bool[H, W]``, walls, rock and closed doors). Underhall's decision,
    as :func:`server.sim.spells.ball_cells` leaves walls to the world: nothing
    spreads through a wall. No draws."""
    if cell == origin:
        return True
    path = bolt_path(origin, cell, blocked)
    return bool(path) and path[-1] == cell


def _effect_bolt(
    world: World,
    caster: Actor,
    spell: SpellDef,
    direction: tuple[int, int] | None,
    target: tuple[int, int] | None,
    events: list[Event],
) -> None:
    """Spark, freeze, shock cast as spells (see :func:`launch_bolt`), with the
    caster's seed-004 to-hit and damage bonuses."""
    launch_bolt(
        world, caster, spell, direction, target, accuracy=spell_accuracy(caster, spell), bonus=True
    )


def launch_bolt(
    world: World,
    caster: Actor,
    spell: SpellDef,
    direction: tuple[int, int] | None,
    target: tuple[int, int] | None,
    *,
    accuracy: float,
    bonus: bool,
) -> None:
    """A bolt flying along seed 002's path past the aimed cell (RULES.md),
    hitting the first creature whose magic hit test succeeds (a surprised one
    always is, seed 002); damage dice d power (seed 001: 2d power), then its
    rider: freeze 40% frozen for a quartic 1..6 rounds, spark on fire for
    damage // 6 rounds above 20 damage. A creature with reflection sends it
    back once. Used by bolt spells and by wands that hold a bolt spell.

    Draws at each creature: 2 floats (hit, none on a surprise), dice, then the
    rider's draws."""
    reach = spell.range or 8
    aim = target if target is not None else _ahead(caster, direction or (1, 0), reach)
    path = bolt_path(
        (caster.x, caster.y), aim, world.flight_blocked(caster.depth), past_target=True
    )[:reach]
    dice = _dice(spell, caster)

    def strike(w: World, proj: Projectile, victim: Actor, evs: list[Event]) -> bool:
        source = w.actors.get(proj.owner)
        surprise = source is not None and w.is_surprise(source, victim)
        if not surprise and not roll_hit(w.rng, accuracy, victim.dodge, magic=True):
            evs.append(
                Harmed(
                    victim.depth,
                    victim.x,
                    victim.y,
                    victim.id,
                    proj.owner,
                    spell.damage_type,
                    0,
                    "bolt",
                    AttackOutcome.MISS,
                )
            )
            return False
        if "reflection" in victim.abilities and not proj.reflected:
            # Seed 000: reflection turns the attack straight back, at no range cost.
            back = (proj.x_from, proj.y_from)
            left = len(proj.path) + 1
            proj.path = bolt_path(
                (victim.x, victim.y), back, w.flight_blocked(victim.depth), past_target=True
            )[:left]
            proj.reflected = True
            return False
        if spell.key == "drain_life":
            return _drain_life(w, caster, source, victim, bonus, evs)
        roll = _roll(w, caster, dice, spell.power) if bonus else roll_dice(w.rng, dice, spell.power)
        dealt = w.harm_typed(victim, roll, spell.damage_type, source, "bolt", evs)
        if victim.alive:
            _rider(w, victim, spell, dealt, evs)
        return True

    launch(
        world,
        Projectile(
            id=world.new_projectile_id(),
            depth=caster.depth,
            owner=caster.id,
            x=caster.x,
            y=caster.y,
            path=path,
            speed=BOLT_SPEED,
            label=f"bolt:{spell.damage_type}",
            x_from=caster.x,
            y_from=caster.y,
            strike=strike,
        ),
    )


DRAIN_LIFE_DIE: Final = 8
"""Seed 004: drain life's base die (d4 against a level-0 monster)."""


def _drain_life(
    world: World,
    caster: Actor,
    source: Actor | None,
    victim: Actor,
    bonus: bool,
    events: list[Event],
) -> bool:
    """Seed 004's drain life: d8 (d4 against level 0), plus a player's damage
    bonus; a creature that does not resist drain takes double and loses as
    much maximum health (never below 1). Resistance is seed 003's GF_OLD_DRAIN
    (``death``: undead and demons immune), as RULES.md has seed 003 rule
    resistances. Draws: the die, then the damage-type draws."""
    roll = (
        _roll(world, caster, 1, 4 if victim.level == 0 else DRAIN_LIFE_DIE)
        if bonus
        else (roll_dice(world.rng, 1, 4 if victim.level == 0 else DRAIN_LIFE_DIE))
    )
    levels = victim.resistances()
    resists = dmg.resistance_level("death", levels) >= 1 or bool({"undead", "demon"} & victim.flags)
    if not resists:
        roll *= 2
    dealt = world.harm_typed(victim, roll, "death", source, "bolt", events)
    if not resists and victim.alive and dealt > 0:
        victim.max_hp = max(1, victim.max_hp - dealt)
        victim.hp = min(victim.hp, victim.max_hp)
    return True


def _rider(world: World, victim: Actor, spell: SpellDef, dealt: int, events: list[Event]) -> None:
    if spell.status == "frozen" and freeze_inflicts(world.rng):
        world.add_status(victim, StatusKind.FROZEN, frozen_rounds(world.rng), events)
    elif spell.status == "on_fire":
        rounds = spark_burn_rounds(dealt)
        if rounds > 0:
            world.add_status(victim, StatusKind.ON_FIRE, rounds, events)


def _effect_line(
    world: World,
    caster: Actor,
    spell: SpellDef,
    direction: tuple[int, int] | None,
    target: tuple[int, int] | None,
    events: list[Event],
) -> None:
    """Ice shards: every creature in the line up to the range (seed 001: 6),
    stopping at a wall; each rolls 2d power. Draws: dice per victim in order."""
    assert direction is not None
    blocked = world.flight_blocked(caster.depth)
    level = world.levels[caster.depth]
    for x, y in fam.line_cells((caster.x, caster.y), direction, spell.range or 6):
        if not level.in_bounds(x, y) or blocked[y, x]:
            break
        victim = world.actor_at(caster.depth, x, y)
        if victim is not None and victim.alive:
            world.harm_typed(
                victim,
                _roll(world, caster, _dice(spell, caster), spell.power),
                spell.damage_type,
                caster,
                "spell",
                events,
            )


def _effect_ball(
    world: World,
    caster: Actor,
    spell: SpellDef,
    direction: tuple[int, int] | None,
    target: tuple[int, int] | None,
    events: list[Event],
) -> None:
    """Fireball, shockwave: one 2d power roll; ring r takes the roll times
    attenuation**r rounded down ring by ring (seed 001), then each victim's
    resistance (fireball) or defence (shockwave, force). Draws: the one roll,
    then each victim's damage-type draws in ring order."""
    assert target is not None
    explode(
        world,
        caster,
        target,
        spell.damage_type,
        _roll(world, caster, _dice(spell, caster), spell.power),
        spell.attenuation,
        spell.radius,
        events,
        by_defence=spell.key == "shockwave",
    )


def explode(
    world: World,
    caster: Actor | None,
    center: tuple[int, int],
    kind: str,
    damage: int,
    attenuation: float,
    radius: int,
    events: list[Event],
    *,
    by_defence: bool = False,
    double_vs: str | None = None,
) -> None:
    """A ball of ``damage`` at ``center``: ring by ring (Chebyshev distance
    r < radius), the items lying in the ring face seed 003's floor-item rules
    for the ring's damage, then every creature the blast reaches (not behind
    a wall, :func:`_reaches`) takes it (seed 001), and each reached cell
    without one faces seed 003's effects on terrain for the ring's damage
    (:func:`server.sim.harm.strike_terrain`; a creature's cell faces them when
    it is harmed). A creature resisting
    ``double_vs`` takes twice the damage before its resistance (seed 004's
    skilled fireball against cold resistance, cone of cold against fire)."""
    depth = caster.depth if caster is not None else 1
    level = world.levels[depth]
    blocked = world.flight_blocked(depth)
    events.append(
        Exploded(depth, center[0], center[1], None if caster is None else caster.id, kind, radius)
    )
    amounts = fam.area_damage_by_ring(damage, attenuation, radius)
    for ring, cells in enumerate(fam.ball_cells(center, radius)):
        reached = [
            (x, y) for x, y in cells if level.in_bounds(x, y) and _reaches(blocked, center, (x, y))
        ]
        if not by_defence:
            world.burn_floor_items(depth, reached, kind, events, damage=amounts[ring])
        for x, y in reached:
            victim = world.actor_at(depth, x, y)
            if victim is None or not victim.alive:
                if kind in DAMAGE_TYPES and amounts[ring] > 0:
                    strike_terrain(world, depth, x, y, kind, amounts[ring], events)
                continue
            amount = amounts[ring]
            if double_vs is not None and victim.resistance(double_vs) >= 1:
                amount *= 2
            if by_defence:
                amount = max(0, amount - victim.eff_defence)
                world.harm_typed(victim, amount, None, caster, "ball", events)
            else:
                world.harm_typed(victim, amount, kind, caster, "ball", events)


def _effect_tongue(
    world: World,
    caster: Actor,
    spell: SpellDef,
    direction: tuple[int, int] | None,
    target: tuple[int, int] | None,
    events: list[Event],
) -> None:
    """Curse, enervate: the T shape of seed 001 (stem ``range``, bar ``spread``
    each side); 2d power of the spell's type to each creature, or its status.
    A stem cell counts if the caster reaches it, a bar cell if the caster
    reaches the stem's end and the end reaches it (:func:`_reaches`).
    Draws: per victim in shape order, dice (or the status rounds)."""
    assert direction is not None
    level = world.levels[caster.depth]
    blocked = world.flight_blocked(caster.depth)
    origin, stem = (caster.x, caster.y), spell.range or 2
    cells = fam.tongue_cells(origin, direction, stem, spell.spread)
    end = cells[stem - 1]
    end_reached = _reaches(blocked, origin, end)
    for i, (x, y) in enumerate(cells):
        if not level.in_bounds(x, y):
            continue
        if i < stem:
            reached = _reaches(blocked, origin, (x, y))
        else:  # the bar spreads from the stem's end
            reached = end_reached and _reaches(blocked, end, (x, y))
        if not reached:
            continue
        victim = world.actor_at(caster.depth, x, y)
        if victim is None or not victim.alive or victim is caster:
            continue
        amount = _roll(world, caster, _dice(spell, caster), spell.power)
        if spell.damage_type != "none":
            world.harm_typed(victim, amount, spell.damage_type, caster, "spell", events)
        elif spell.status != "none":
            world.add_status(victim, StatusKind[spell.status.upper()], amount, events)


def _target_actor(world: World, caster: Actor, target: tuple[int, int] | None) -> Actor | None:
    if target is None:
        return None
    victim = world.actor_at(caster.depth, *target)
    return victim if victim is not None and victim.alive else None


def _effect_status_target(
    world: World,
    caster: Actor,
    spell: SpellDef,
    direction: tuple[int, int] | None,
    target: tuple[int, int] | None,
    events: list[Event],
) -> None:
    """Confusion (1d10), plague (2d7), acid glob: the creature on the target
    cell gets the status for dice d power rounds, unless immune (resistance
    3) to the spell's damage type or to the status (:func:`_status_immune`).
    Draws: the rounds roll."""
    victim = _target_actor(world, caster, target)
    if victim is None:
        return
    rounds = fam.status_rounds(world.rng, _dice(spell, caster), spell.power)
    if spell.damage_type != "none" and victim.resistance(spell.damage_type) >= 3:
        return
    kind = StatusKind[spell.status.upper()]
    if not _status_immune(victim, kind):
        world.add_status(victim, kind, rounds, events)
    world.provoke(victim, caster, events)


_SIDE_EFFECT_OF: Final = {
    StatusKind.CONFUSED: SideEffect.CONFUSION,
    StatusKind.STUNNED: SideEffect.STUN,
    StatusKind.ASLEEP: SideEffect.SLEEP,
    StatusKind.AFRAID: SideEffect.FEAR,
}


def _status_immune(victim: Actor, kind: StatusKind) -> bool:
    """Seed 003's status immunities (NO_CONF, NO_SLEEP, NO_FEAR, resisting
    confusion or chaos, sound or force) also hold against spells."""
    effect = _SIDE_EFFECT_OF.get(kind)
    if effect is None:
        return False
    resist = {t: level for t in DAMAGE_TYPES if (level := victim.resistance(t)) != 0}
    return effect in dmg.status_immunities(resist, victim.flags & frozenset(MONSTER_FLAGS))


def _effect_cloud(
    world: World,
    caster: Actor,
    spell: SpellDef,
    direction: tuple[int, int] | None,
    target: tuple[int, int] | None,
    events: list[Event],
) -> None:
    """Poison cloud: every creature within the radius of the target that the
    cloud reaches (:func:`_reaches`) gets the status for power//2..power
    rounds (seed 001: 4-8). Draws: one per victim."""
    assert target is not None
    level = world.levels[caster.depth]
    blocked = world.flight_blocked(caster.depth)
    for cells in fam.ball_cells(target, spell.radius or 1):
        for x, y in cells:
            if not level.in_bounds(x, y) or not _reaches(blocked, target, (x, y)):
                continue
            victim = world.actor_at(caster.depth, x, y)
            if victim is None or not victim.alive:
                continue
            rounds = fam.cloud_rounds(world.rng, spell.power)
            if victim.resistance(spell.damage_type) < 3:
                world.add_status(victim, StatusKind[spell.status.upper()], rounds, events)
                world.provoke(victim, caster, events)


def _effect_heal(
    world: World,
    caster: Actor,
    spell: SpellDef,
    direction: tuple[int, int] | None,
    target: tuple[int, int] | None,
    events: list[Event],
) -> None:
    """Heal wounds: p + L // ceil(p/2) health (seed 001). No draws."""
    caster.hp = min(caster.max_hp, caster.hp + fam.spell_amount(spell, caster.level))


def _effect_cure(
    world: World,
    caster: Actor,
    spell: SpellDef,
    direction: tuple[int, int] | None,
    target: tuple[int, int] | None,
    events: list[Event],
) -> None:
    """Purge poison, cure disease, soothe acid burn: removes p + L // ceil(p/2)
    rounds of the status (seed 001). No draws."""
    kind = StatusKind[spell.status.upper()]
    effects = caster.statuses.reduce(kind, fam.spell_amount(spell, caster.level))
    world.report_status(caster, effects, events)


def _effect_buff(
    world: World,
    caster: Actor,
    spell: SpellDef,
    direction: tuple[int, int] | None,
    target: tuple[int, int] | None,
    events: list[Event],
) -> None:
    """Haste, rage, stoneskin, invisibility, elemental shields: p + L // ceil(p/2)
    rounds of the status (seed 001). No draws."""
    world.add_status(
        caster, StatusKind[spell.status.upper()], fam.spell_amount(spell, caster.level), events
    )


def _effect_scry(
    world: World,
    caster: Actor,
    spell: SpellDef,
    direction: tuple[int, int] | None,
    target: tuple[int, int] | None,
    events: list[Event],
) -> None:
    """Scrying: the caster's map memory learns the terrain within p + L // p
    cells (seed 001's scrying amount, as a radius; Underhall's decision)."""
    world.reveal_map(caster, fam.spell_amount(spell, caster.level))


def _effect_chain(
    world: World,
    caster: Actor,
    spell: SpellDef,
    direction: tuple[int, int] | None,
    target: tuple[int, int] | None,
    events: list[Event],
) -> None:
    """Lightning bolt: the creature on the target cell takes chain d power,
    then the bolt jumps to the nearest creature not yet struck within
    ``radius`` cells and not behind a wall (ties by id), one die fewer each
    strike (seed 001: 3d10, 2d10, 1d10). Never jumps back to the caster.
    Draws: dice per strike."""
    victim = _target_actor(world, caster, target)
    struck: set[int] = {caster.id}
    for dice in fam.lightning_chain_dice(spell.chain or 3):
        if victim is None:
            return
        struck.add(victim.id)
        here = (victim.x, victim.y)
        world.harm_typed(
            victim,
            _roll(world, caster, dice, spell.power),
            spell.damage_type,
            caster,
            "spell",
            events,
        )
        victim = _next_in_chain(world, caster.depth, here, spell.radius or 3, struck)


def _next_in_chain(
    world: World, depth: int, here: tuple[int, int], radius: int, struck: set[int]
) -> Actor | None:
    """The nearest creature within ``radius`` of ``here`` not yet struck that
    a jump reaches without crossing a wall (:func:`_reaches`); ties by id."""
    blocked = world.flight_blocked(depth)
    skip = set(struck)
    while True:
        found = world.nearest_actor(depth, here, radius, exclude=skip)
        if found is None or _reaches(blocked, here, (found.x, found.y)):
            return found
        skip.add(found.id)


def _effect_web(
    world: World,
    caster: Actor,
    spell: SpellDef,
    direction: tuple[int, int] | None,
    target: tuple[int, int] | None,
    events: list[Event],
) -> None:
    """Webbing: a web of 5d6 + 1d power hit points catches the creature on the
    target cell (seed 001). Underhall models the web as the webbed status:
    a caught creature tears a web of H hit points in ``ceil(H / power)`` rounds,
    ``power`` its own (at least 1). Draws: the web's hit points."""
    victim = _target_actor(world, caster, target)
    hp = fam.web_hit_points(world.rng, spell.power)
    if victim is None:
        return
    rounds = -(-hp // max(1, victim.eff_power))
    world.add_status(victim, StatusKind.WEBBED, rounds, events)
    world.provoke(victim, caster, events)


def _effect_remove_curse(
    world: World,
    caster: Actor,
    spell: SpellDef,
    direction: tuple[int, int] | None,
    target: tuple[int, int] | None,
    events: list[Event],
) -> None:
    """Remove curse on every cursed item the caster carries, equipped ones
    first (seed 001): Ld6 against each item's difficulty; failure may hurt.
    Draws: per item, the Ld6 roll, then the backlash dice on a failure."""
    equipped = [i for i in caster.equipment.values()]
    items = equipped + [i for i in caster.inventory if i not in equipped]
    for item in items:
        if not item.cursed:
            continue
        idef = world.content.items[item.key]
        difficulty = fam.item_curse_difficulty(
            idef.power or 0, idef.defence, idef.throw_range or 4, idef.resist.values()
        )
        ok, backlash = fam.remove_curse(
            world.rng, caster.level, difficulty, upgraded=spell.upgraded
        )
        item.known = True
        if ok:
            item.cursed = False
            events.append(Notice(caster.id, "curse_removed", (item.letter,)))
        else:
            events.append(Notice(caster.id, "curse_stays", (item.letter,)))
            if backlash > 0:
                world.harm_typed(caster, backlash, None, None, "spell", events)
                if not caster.alive:
                    return


def _effect_beam(
    world: World,
    caster: Actor,
    spell: SpellDef,
    direction: tuple[int, int] | None,
    target: tuple[int, int] | None,
    events: list[Event],
) -> None:
    """Force bolt: a NetHack beam, 6-13 cells (seed 004), first creature hit."""
    assert direction is not None
    fire_beam(
        world,
        caster,
        direction,
        spell.damage_type,
        (_dice(spell, caster), spell.power),
        events,
        cause="spell",
        accuracy=spell_accuracy(caster, spell),
        bonus=_bonus(world, caster),
        reach=_upgraded_reach(world, spell, draw_beam_range),
    )


def _effect_ray(
    world: World,
    caster: Actor,
    spell: SpellDef,
    direction: tuple[int, int] | None,
    target: tuple[int, int] | None,
    events: list[Event],
) -> None:
    """Magic missile, cone of cold, sleep, lightning: NetHack rays (seed 000),
    ``XL // 2 + 1`` d power per hit. Seed 004: cone of cold adds
    ``(XL // 2 + 1)`` d3 against a fire-resistant creature (before the damage
    bonus; one dice roll after the main one, only for such a creature)."""
    assert direction is not None
    if _skilled_blasts(world, caster, spell, direction, events):
        return
    dice = _dice(spell, caster)
    extra: Callable[[Actor], int] | None = None
    if spell.key == "cone_of_cold":

        def extra(victim: Actor) -> int:
            if victim.resistance("fire") < 1:
                return 0
            return roll_dice(world.rng, dice, CONE_OF_COLD_EXTRA_SIDES)

    fire_ray(
        world,
        caster,
        (caster.x, caster.y),
        direction,
        spell.damage_type,
        (dice, spell.power),
        events,
        cause="spell",
        accuracy=spell_accuracy(caster, spell),
        bonus=_bonus(world, caster),
        reach=_upgraded_reach(world, spell, draw_ray_range),
        extra=extra,
    )


SKILLED_BLAST_SPELLS: Final = {"fire_ray": "cold", "cone_of_cold": "fire"}
"""Seed 004's spells that explode at Skilled, and the resistance each doubles against."""
SKILLED_AIM: Final = 10
"""Seed 004: the first skilled explosion is centred up to 10 steps away."""


def _skilled_blasts(
    world: World, caster: Actor, spell: SpellDef, direction: tuple[int, int], events: list[Event]
) -> bool:
    """Seed 004's fireball and cone of cold at Skilled or Expert (NetHack 3.6):
    2 to 9 explosions covering 3 x 3 cells, the first centred on the aim
    point, each further one shifted up to one cell from it at random; every
    creature in one takes XL / 2 + 1 plus the damage bonus, doubled against
    the opposite resistance (cold for fireball, fire for cone of cold), then
    its own resistance. A player's only; False (nothing done) otherwise.

    The aim point: Underhall's commands give these spells a direction, so it
    is the first creature in that direction within 10 cells, else the last
    cell before a wall (or the tenth). A shifted centre that is off the
    level, in a wall or out of the caster's view is skipped, as NetHack
    skips it. Draws: ``rng.integers(1, 9)`` for the extra explosions, then
    two ``rng.integers(-1, 2)`` per extra one, each explosion's harm draws
    after its own centre's.
    """
    opposite = SKILLED_BLAST_SPELLS.get(spell.key)
    if opposite is None or not caster.is_player:
        return False
    if sc.skill_for_practice(caster.skills.get(spell.school, 0)) < sc.SKILLED:
        return False
    level = world.levels[caster.depth]
    blocked = world.flight_blocked(caster.depth)
    x, y = caster.x, caster.y
    for _ in range(SKILLED_AIM):
        nx, ny = x + direction[0], y + direction[1]
        if not level.in_bounds(nx, ny) or blocked[ny, nx]:
            break
        x, y = nx, ny
        if world.actor_at(caster.depth, x, y) is not None:
            break
    bonus = _bonus(world, caster)
    damage = max(1, caster.level) // 2 + 1
    damage = damage if bonus is None else bonus(damage)
    explode(world, caster, (x, y), spell.damage_type, damage, 1.0, 2, events, double_vs=opposite)
    for _ in range(int(world.rng.integers(1, 9))):
        cx = x + int(world.rng.integers(-1, 2))
        cy = y + int(world.rng.integers(-1, 2))
        if (
            level.in_bounds(cx, cy)
            and not blocked[cy, cx]
            and _in_view(world, caster, (cx, cy))
            and caster.alive
        ):
            explode(
                world,
                caster,
                (cx, cy),
                spell.damage_type,
                damage,
                1.0,
                2,
                events,
                double_vs=opposite,
            )
    return True


CONE_OF_COLD_EXTRA_SIDES: Final = 3
"""Seed 004: cone of cold's extra (XL / 2 + 1) d3 against fire-resistant monsters."""


def _effect_ray_explode(
    world: World,
    caster: Actor,
    spell: SpellDef,
    direction: tuple[int, int] | None,
    target: tuple[int, int] | None,
    events: list[Event],
) -> None:
    """NetHack's fireball spell: flies as a ray and explodes where it stops
    (seed 000), dice d power over ``radius`` (one roll, attenuated). Seed 004:
    "base 12d6 damage explosion ... no spell damage bonus", so neither the
    ray's hits nor the explosion add seed 004's damage bonus (72 at most).
    At Skilled or Expert, :func:`_skilled_blasts` instead."""
    assert direction is not None
    if _skilled_blasts(world, caster, spell, direction, events):
        return
    trace = fire_ray(
        world,
        caster,
        (caster.x, caster.y),
        direction,
        spell.damage_type,
        (_dice(spell, caster), spell.power),
        events,
        fireball=True,
        cause="spell",
        reach=_upgraded_reach(world, spell, draw_ray_range),
    )
    explode(
        world,
        caster,
        trace.end,
        spell.damage_type,
        roll_dice(world.rng, _dice(spell, caster), spell.power),
        spell.attenuation or 1.0,
        spell.radius or 2,
        events,
    )


def _effect_dig(
    world: World,
    caster: Actor,
    spell: SpellDef,
    direction: tuple[int, int] | None,
    target: tuple[int, int] | None,
    events: list[Event],
) -> None:
    """Dig: a digging ray of 8-25 cells (seed 004)."""
    assert direction is not None
    fire_ray(
        world,
        caster,
        (caster.x, caster.y),
        direction,
        "force",
        (0, 0),
        events,
        digging=True,
        cause="spell",
        reach=_upgraded_reach(world, spell, draw_dig_range),
    )


def _upgraded_reach(
    world: World, spell: SpellDef, draw: Callable[[np.random.Generator], int]
) -> int | None:
    """An upgraded ray, beam or dig spell flies twice its drawn range (seed 001
    doubles range); otherwise None, and the tracer draws it. Draws: one range
    draw for an upgraded spell whose cost is not the thing it halves."""
    if not spell.upgraded or spell.upgrade == "halve_cost":
        return None
    return 2 * draw(world.rng)


_EFFECTS: Final[dict[str, Effect]] = {
    "bolt": _effect_bolt,
    "line": _effect_line,
    "ball": _effect_ball,
    "tongue": _effect_tongue,
    "status_target": _effect_status_target,
    "cloud": _effect_cloud,
    "heal": _effect_heal,
    "cure": _effect_cure,
    "buff": _effect_buff,
    "scry": _effect_scry,
    "chain": _effect_chain,
    "web": _effect_web,
    "remove_curse": _effect_remove_curse,
    "beam": _effect_beam,
    "ray": _effect_ray,
    "ray_explode": _effect_ray_explode,
    "dig": _effect_dig,
}
