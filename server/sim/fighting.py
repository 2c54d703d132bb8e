"""Melee: one attack from the hit test to what follows the hit.

Sources: RULES.md (seed 002's hit test, then seed 001's damage roll), seed 002
(surprise attacks always hit), seed 001 (sneak attacks, enchantment rolls,
elemental shields, touch abilities), seed 003 (an elemental melee attack is
adjusted by the defender's resistance). The formulas are in
:mod:`server.sim.combat`; this module applies them to actors in the world.

Draw order of :func:`melee`: :func:`server.sim.combat.resolve_melee`'s draws;
on a hit, the resistance roll of an elemental attack, then the enchantment
roll, then one dice roll per touch ability (poison, disease, paralysis, energy
drain, in that order), then the shield's 2d4 when the defender has one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from server.content import MonsterDef
from server.content.statuses import StatusKind
from server.sim import upkeep
from server.sim.actors import Actor
from server.sim.combat import AttackOutcome, Combatant, resolve_melee, roll_dice
from server.sim.events import Attacked, Event, Harmed
from server.sim.status import (
    accuracy_factor,
    defence_bonus,
    elemental_shield,
    power_bonus,
    shield_damage_type,
    shield_retaliation,
    shield_touch,
)
from server.sim.throwing import thrown_enchant_roll

if TYPE_CHECKING:
    from server.sim.world import World

TOUCHES: Final[tuple[tuple[str, StatusKind | None, int], ...]] = (
    ("poison_touch", StatusKind.POISONED, 6),
    ("disease_touch", StatusKind.DISEASED, 6),
    ("paralysing_touch", StatusKind.PARALYSED, 3),
    ("energy_drain", None, 6),
)
"""Touch abilities: the status each gives (None: energy drain) and the sides of
the die its rounds (or energy) are rolled on."""

MARTIAL_ARTS_POWER: Final = 2
"""Power added to an unarmed attack by the martial arts ability (Underhall's
decision: seed 001 says only that it fights well unarmed)."""


def combatant(actor: Actor) -> Combatant:
    """The melee stats of ``actor``: equipment, statuses and martial arts included."""
    sts = actor.statuses
    unarmed = (
        MARTIAL_ARTS_POWER
        if ("martial_arts" in actor.abilities and "weapon" not in actor.equipment)
        else 0
    )
    return Combatant(
        level=actor.level,
        accuracy=actor.eff_accuracy * accuracy_factor(sts),
        dodge=actor.dodge,
        power=max(actor.eff_power + power_bonus(sts) + unarmed, 0),
        defence=actor.eff_defence + defence_bonus(sts),
        energy=actor.en,
        max_energy=actor.max_en,
        strength=actor.strength,
        required_strength=actor.bonus.required_strength,
    )


def melee(world: World, attacker: Actor, defender: Actor, events: list[Event]) -> None:
    """Resolve one melee attack (RULES.md: seed-002 hit test, seed-001 damage)."""
    surprise = world.is_surprise(attacker, defender)
    result = resolve_melee(
        world.rng,
        combatant(attacker),
        combatant(defender),
        surprise=surprise,
    )
    upkeep.exert(world, attacker, result.energy_cost, events)
    if result.outcome != AttackOutcome.MISS:
        attacker.last_attack_tick = world.tick
    damage = result.damage
    # seed 001: "a lucky hit does 1 to 3 damage, without any further adjustments"
    hit = result.outcome not in (AttackOutcome.MISS, AttackOutcome.LUCKY)
    if hit and surprise and attacker.cls is not None:
        bonus = world.content.classes[attacker.cls].sneak_attack
        damage = int(damage * (1 + bonus))
    if hit and "fury" in attacker.abilities and 2 * attacker.hp < attacker.max_hp:
        damage = damage * 3 // 2  # seed 002: a Furious Berserker's x1.5, rounded down
    mdef = world.content.monsters.get(attacker.kind)
    if hit and mdef is not None and mdef.melee_type is not None:
        damage = world.resist_adjusted(defender, damage, mdef.melee_type)
    if hit and attacker.bonus.enchant is not None:
        enchant_type = attacker.bonus.enchant
        damage += thrown_enchant_roll(
            world.rng,
            attacker.bonus.enchant_power or 2,
            cursed=False,
            adjust=lambda amount: world.resist_adjusted(defender, amount, enchant_type),
            blessed_vs_undead=attacker.bonus.blessed_weapon and "undead" in defender.flags,
            victim_level=defender.level,
        )
    damage = max(0, min(damage, defender.hp))
    defender.hp -= damage
    events.append(
        Attacked(
            defender.depth,
            defender.x,
            defender.y,
            attacker.id,
            defender.id,
            result.outcome,
            damage,
            surprise,
        )
    )
    landed = result.outcome != AttackOutcome.MISS
    if landed:
        if damage > 0:
            world.report_status(defender, defender.statuses.on_damaged(), events)
        _touch(world, attacker, defender, mdef, events)
    world.after_harm(defender, attacker, events)
    if landed and attacker.alive:
        _shield_burn(world, attacker, defender, events)


def _touch(
    world: World, attacker: Actor, defender: Actor, mdef: MonsterDef | None, events: list[Event]
) -> None:
    """A monster's touch abilities on a hit (seed 001 special abilities):
    poison 1d6 rounds, disease 1d6, paralysis 1d3, energy drain 1d6.
    Draws: one dice roll per ability the attacker has, in this order."""
    if mdef is None or not defender.alive:
        return
    for ability, kind, sides in TOUCHES:
        if ability in mdef.abilities:
            amount = roll_dice(world.rng, 1, sides)
            if kind is None:
                defender.en = max(0, defender.en - amount)
            else:
                world.add_status(defender, kind, amount, events)


def _shield_burn(world: World, attacker: Actor, defender: Actor, events: list[Event]) -> None:
    """An elemental shield hurts whoever hits its bearer in melee: 2d4 of its
    element, adjusted for the attacker's resistance; a fire shield thaws a
    frozen attacker, an ice shield douses a burning one (seed 001)."""
    shield = elemental_shield(defender.statuses)
    if shield is None:
        return
    world.report_status(attacker, shield_touch(attacker.statuses, shield), events)
    raw = shield_retaliation(world.rng, shield)
    dtype = shield_damage_type(shield)
    amount = min(world.resist_adjusted(attacker, raw, dtype), attacker.hp)
    attacker.hp -= amount
    events.append(
        Harmed(
            attacker.depth,
            attacker.x,
            attacker.y,
            attacker.id,
            defender.id,
            dtype,
            amount,
            "shield",
        )
    )
    world.after_harm(attacker, defender, events)
