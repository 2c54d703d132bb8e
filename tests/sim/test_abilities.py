"""Passive abilities (seed 001): regeneration, meditation, vibrant warmth,
martial arts, invisibility and seeing it."""

from __future__ import annotations

from server.content.statuses import StatusKind
from server.sim import monsters
from server.sim.actors import Mind
from server.sim.fighting import combatant
from tests.sim.conftest import ROOM, make_world, spawn


def test_regenerate_heals_every_round_even_while_fighting() -> None:
    world = make_world(ROOM)
    world.join("ann")
    troll = spawn(world, "rat", 6, 3)
    troll.max_hp, troll.hp = 100, 50
    troll.abilities.add("regenerate")
    plain = spawn(world, "rat", 6, 4)
    plain.max_hp, plain.hp = 100, 50
    troll.last_attack_tick = plain.last_attack_tick = 10**9  # "attacking" all along
    rounds = 30 // world.status_rules.round_ticks
    for _ in range(30):
        world.step()
    assert troll.hp == 50 + rounds and plain.hp == 50


def test_meditation_doubles_energy_regeneration() -> None:
    world = make_world(ROOM)
    monk = world.join("ann", "monk")
    other = world.join("bob", "warrior")
    monk.abilities.add("meditation")
    monk.max_en = other.max_en = 1000
    for _ in range(8):
        world.step()
    monk.en = other.en = 0
    for _ in range(160):
        world.step()
    ticks = world.status_rules.regeneration.energy_ticks
    assert (other.en, monk.en) == (160 // ticks, 2 * 160 // ticks)


def test_vibrant_warmth_halves_the_hunger_rate() -> None:
    world = make_world(ROOM)
    warm = world.join("ann")
    cold = world.join("bob")
    warm.abilities.add("vibrant_warmth")
    for p in (warm, cold):
        p.food.nourishment, p.food.hunger, p.food.countdown = 300, 0, 0
        p.hp = p.max_hp // 3  # below half health: 2 a time, halved to 1 with warmth
    for _ in range(600):
        world.step()
        for p in (warm, cold):
            p.hp = p.max_hp // 3
    lost_warm, lost_cold = 300 - warm.food.nourishment, 300 - cold.food.nourishment
    assert 0 < lost_warm < lost_cold


def test_martial_arts_adds_power_only_when_unarmed() -> None:
    world = make_world(ROOM)
    monk = world.join("ann", "monk")
    assert "martial_arts" in monk.abilities and "weapon" not in monk.equipment
    armed = world.join("bob", "warrior")
    armed.abilities.add("martial_arts")
    assert combatant(monk).power == monk.eff_power + 2
    assert combatant(armed).power == armed.eff_power


def test_invisible_monsters_are_seen_only_by_those_who_see_invisible() -> None:
    world = make_world(ROOM)
    ann = world.join("ann")
    bob = world.join("bob")
    bob.abilities.add("see_invisible")
    ghost = spawn(world, "rat", 5, 3, Mind.WANDERING)
    ghost.abilities.add("invisible")
    world.step()
    assert ghost.id not in world.sees[ann.id]
    assert ghost.id in world.sees[bob.id]
    assert ann.id in world.sees[ann.id]


def test_an_invisible_player_is_not_seen_by_monsters_without_see_invisible() -> None:
    world = make_world(ROOM)
    ann = world.join("ann")
    rat = spawn(world, "rat", 5, 3, Mind.WANDERING)
    world.step()
    assert monsters.visible_players(world, rat) == [ann]
    world.add_status(ann, StatusKind.INVISIBLE, 20, [])
    assert monsters.visible_players(world, rat) == []
    rat.abilities.add("see_invisible")
    assert monsters.visible_players(world, rat) == [ann]
