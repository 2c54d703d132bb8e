"""Upkeep once per round: statuses run down, hunger, regeneration (seed 001).

A *round* is seed 001's "turn": ``rules.round_ticks`` world ticks, one action
at normal speed (``statuses.toml``; RULES.md "one time model"). Each actor's
round comes on its own tick, ``(tick + id) % round_ticks == 0``
(:class:`~server.sim.world.PhaseBuckets`: the world's work is spread over the
ticks instead of every round falling on one). At its round, a living actor on
a level that has players, in the order the actors were added to the world:

1. its statuses tick (:meth:`server.sim.status.Statuses.tick`): damage of
   poison, fire, acid burn and disease is applied with its damage type
   (:meth:`World.harm_typed`), energy drains, expiries are reported;
2. a player's hunger clock advances (:mod:`server.sim.hunger`): every 5-15
   rounds the hunger rating (then nourishment) goes down; a starving player
   loses health and energy;

and :func:`regenerate`, on each actor's own clock too: health and energy
regenerate unless :func:`server.sim.status.regenerates` says no (hitting
during its last action, frozen, on fire, nourishment below 25): energy every
``energy_ticks`` ticks, health every ``health_ticks`` ticks (energy faster
than health), when ``(tick + id)`` is a multiple of that.

Draw order per actor: the status tick's dice, then (players) the hunger
interval draw when an interval starts. Regeneration draws nothing.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from server.content.statuses import RegenerationRules, StatusKind
from server.sim import hunger
from server.sim.actors import Actor, Mind
from server.sim.events import Event, Harmed, Notice, RejectReason, StatusChanged
from server.sim.status import StatusChange, StatusEffect, action_delay, regenerates

if TYPE_CHECKING:
    from server.sim.world import World

HUNGRY_BELOW = 150
"""Nourishment below which a player is told it is hungry."""
WEAK_BELOW = 50
"""Nourishment below which a player is told it is weak with hunger."""


FATIGUE_ROUNDS = 20
"""Rounds each exertion's fatigue lasts (Underhall's number; ``statuses.toml``
caps the status at 200 rounds and its magnitude at 16)."""
EXERTION_STATUS = StatusKind.FATIGUE
"""What an action that costs more energy than is left gives a player (:func:`exert`)."""
REST_ROUNDS = 20
"""Rest actions in a row that make a completed rest (seed 001: "after you rest,
provided you're not woken by a monster"; the number is Underhall's)."""


def exert(world: World, actor: Actor, cost: int, events: list[Event]) -> None:
    """Spend ``cost`` energy on an action that may cost more than is left
    (seed 001: clipped to zero); a player gets the unpaid part as fatigue
    (:func:`server.sim.hunger.exertion_fatigue`) for ``FATIGUE_ROUNDS``."""
    fatigue = hunger.exertion_fatigue(actor.en, cost, world.status_rules.hunger.fatigue_max)
    actor.en = max(0, actor.en - cost)
    if fatigue and actor.is_player and actor.alive:
        world.touched.add(actor.id)
        effects = actor.statuses.add(EXERTION_STATUS, FATIGUE_ROUNDS, fatigue)
        report_status(world, actor, effects, events)


def rest(world: World, actor: Actor, events: list[Event]) -> RejectReason | None:
    """One rest action: refused (and the rest broken off) while a monster is
    in view. Every ``REST_ROUNDS``-th rest action in a row (each following the
    last within two action delays) completes a rest: a low hunger rating
    rises (:func:`server.sim.hunger.rest_bonus`, seed 001) and fatigue ends.
    Draws nothing."""
    if any(
        not world.actors[a].is_player for a in world.sees.get(actor.id, ()) if a in world.actors
    ):
        actor.rest_run = 0
        return RejectReason.MONSTER_IN_VIEW
    if world.tick - actor.rest_tick > 2 * action_delay(actor.statuses, actor.speed):
        actor.rest_run = 0
    actor.rest_tick = world.tick
    actor.rest_run += 1
    if actor.rest_run >= REST_ROUNDS:
        actor.rest_run = 0
        if hunger.rest_bonus(actor.food, world.status_rules.hunger):
            world.touched.add(actor.id)
        if actor.statuses.has(StatusKind.FATIGUE):
            actor.statuses.remove(StatusKind.FATIGUE)
            report_status(
                world, actor, [StatusEffect(StatusKind.FATIGUE, StatusChange.REMOVED)], events
            )
    return None


def report_status(
    world: World, actor: Actor, effects: list[StatusEffect], events: list[Event]
) -> None:
    """Turn what a status change did into events (status on/off)."""
    for eff in effects:
        if eff.change == StatusChange.APPLIED:
            events.append(
                StatusChanged(actor.depth, actor.x, actor.y, actor.id, int(eff.kind), True)
            )
            if eff.kind == StatusKind.ASLEEP and not actor.is_player:
                actor.mind = Mind.ASLEEP
        elif eff.change in (StatusChange.EXPIRED, StatusChange.REMOVED):
            events.append(
                StatusChanged(actor.depth, actor.x, actor.y, actor.id, int(eff.kind), False)
            )
            if eff.kind == StatusKind.ASLEEP and not actor.is_player and actor.mind == Mind.ASLEEP:
                actor.mind = Mind.WANDERING


def run_round(world: World, events: list[Event]) -> None:
    """The round of upkeep of every living actor on a level with players
    whose round falls on this tick (:attr:`World.round_clock`).

    Most actors have no status and most players are between hunger
    decreases: those take the short way (no status tick, only the hunger
    countdown), which draws and changes exactly what the long way would.
    """
    actors = world.actors
    players_on = world.players_on
    # Whether each depth has players: fixed for the round (a death leaves a
    # player on its level, and nothing here moves one to another).
    populated: dict[int, bool] = {}
    for actor in list(world.round_clock.due(world.tick).values()):
        if actor.hp <= 0 or actor.id not in actors:  # dead, or died this round
            continue
        on = populated.get(actor.depth)
        if on is None:
            on = populated[actor.depth] = players_on(actor.depth) > 0
        if not on:
            continue
        player = actor.is_player
        if actor.statuses.kinds:  # an actor without statuses: no tick, no draw, no effect
            if player:
                world.touched.add(actor.id)  # the rounds left of its statuses change
            effects = actor.statuses.tick(world.rng)
            if effects:
                _apply_effects(world, actor, effects, events)
                if not actor.alive:
                    continue
        if "regenerate" in actor.abilities and actor.hp < actor.max_hp:
            actor.hp += 1  # every round, even while fighting (the ability)
        if player:
            food = actor.food
            if hunger.quiet_round(food):
                continue
            # Not in world.touched: the food bar, health and energy are compared
            # one by one by the views, and a notice or a harm names the player.
            _hunger(world, actor, events)


def meditation_ticks(regen: RegenerationRules) -> int:
    """Ticks per point of energy with the meditation ability: twice as often
    as ``energy_ticks``, at least every tick."""
    return max(1, regen.energy_ticks // 2)


def regeneration_period(regen: RegenerationRules) -> int:
    """Ticks between the turns of :attr:`World.regen_clock`: every health,
    energy and meditation period is a multiple of it, so an actor's
    regeneration can only fall due on its clock's ticks (:func:`regenerate`)."""
    return math.gcd(regen.health_ticks, regen.energy_ticks, meditation_ticks(regen))


def regenerate(world: World) -> None:
    """Health and energy regeneration, checked every tick (seed 001).

    Health rises by 1 every ``health_ticks`` ticks and energy every
    ``energy_ticks`` ticks (energy faster; twice as often again with the
    meditation ability), each on the actor's own clock (due when
    ``(tick + id)`` is a multiple of the period; only the actors of
    :attr:`World.regen_clock` due this tick can be), for every living actor that
    :func:`server.sim.status.regenerates` allows: not after hitting within
    its last action, not frozen or on fire, not a player below 25
    nourishment. A fleeing monster that heals back to twice its courage
    turns to hunt again.
    """
    regen = world.status_rules.regeneration
    tick = world.tick
    health_ticks, energy_ticks = regen.health_ticks, regen.energy_ticks
    meditate_ticks = meditation_ticks(regen)
    for actor in world.regen_clock.due(tick).values():
        if actor.hp <= 0:
            continue
        phase = tick + actor.id
        hp_due = phase % health_ticks == 0
        if actor.en >= actor.max_en and (not hp_due or actor.hp >= actor.max_hp):
            continue  # nothing to raise (the checks below change nothing)
        energy_due = (
            phase % meditate_ticks == 0
            if "meditation" in actor.abilities
            else phase % energy_ticks == 0
        )
        if not (hp_due or energy_due):
            continue
        attacked = tick - actor.last_attack_tick <= actor.speed
        nourishment = actor.food.nourishment if actor.is_player else regen.min_nourishment
        if not regenerates(
            actor.statuses, attacked_this_turn=attacked, missed=False, nourishment=nourishment
        ):
            continue
        if hp_due and actor.hp < actor.max_hp:
            actor.hp += 1
            if actor.mind == Mind.FLEEING and actor.hp >= min(
                actor.max_hp, 2 * actor.courage * actor.max_hp
            ):
                actor.mind = Mind.HUNTING
        if energy_due and actor.en < actor.max_en:
            actor.en += 1


def _apply_effects(
    world: World, actor: Actor, effects: list[StatusEffect], events: list[Event]
) -> None:
    report_status(world, actor, effects, events)
    for eff in effects:
        if not actor.alive:
            return
        if eff.change == StatusChange.DAMAGE:
            world.harm_typed(actor, eff.amount, eff.damage_type or None, None, "status", events)
        elif eff.change == StatusChange.ENERGY_DRAIN:
            actor.en = max(0, actor.en - eff.amount)


def _hunger(world: World, actor: Actor, events: list[Event]) -> None:
    food = actor.food
    rules = world.status_rules.hunger
    if not hunger.hunger_due(world.rng, food, rules):
        return
    before = food.nourishment
    amount = hunger.hunger_amount(
        hp=actor.hp,
        max_hp=actor.max_hp,
        en=actor.en,
        max_en=actor.max_en,
        statuses=actor.statuses,
        fatigue=actor.statuses.magnitude(StatusKind.FATIGUE),
        vibrant_warmth="vibrant_warmth" in actor.abilities,
        hunger_drain=actor.bonus.hunger_drain,
        rules=rules,
    )
    hunger.apply_hunger(food, amount)
    after = food.nourishment
    for limit, code in ((HUNGRY_BELOW, "hungry"), (WEAK_BELOW, "weak"), (1, "starving")):
        if after < limit <= before:
            events.append(Notice(actor.id, code, ()))
    health, energy = hunger.starvation_drain(food, rules)
    if energy:
        actor.en = max(0, actor.en - energy)
    if health:
        dealt = min(health, actor.hp)
        actor.hp -= dealt
        events.append(
            Harmed(actor.depth, actor.x, actor.y, actor.id, None, "physical", dealt, "hunger")
        )
        world.after_harm(actor, None, events)
