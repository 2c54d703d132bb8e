"""Statuses, regeneration, hunger and typed melee in the ticking world (issue 5,
seed 001 statuses and food bar, seed 002 surprise, seed 003 resistances and
uniques)."""

from __future__ import annotations

import copy
import itertools
import math

from server.content import default_content
from server.content.statuses import StatusKind
from server.sim.actors import Actor, Mind
from server.sim.combat import AttackOutcome
from server.sim.commands import Eat, Move
from server.sim.events import (
    Attacked,
    Died,
    Event,
    Harmed,
    Notice,
    Rejected,
    RejectReason,
    StatusChanged,
    Used,
)
from server.sim.world import World
from tests.sim.conftest import ROOM, act, harms, make_world, run, spawn

CONTENT = default_content()


def round_ticks(world: World) -> int:
    return world.status_rules.round_ticks


def status_events(events: list[Event], actor: Actor, kind: StatusKind) -> list[bool]:
    return [
        e.on
        for e in events
        if isinstance(e, StatusChanged) and e.actor == actor.id and e.status == kind
    ]


# --- statuses that hurt and run out ------------------------------------------------------------


def test_poison_hurts_every_round_and_then_expires() -> None:
    world = make_world(ROOM)
    p = world.join("ann")
    p.hp = p.max_hp = 100
    events: list[Event] = []
    world.add_status(p, StatusKind.POISONED, 3, events)
    assert status_events(events, p, StatusKind.POISONED) == [True]
    events = run(world, 6 * round_ticks(world))
    poison = harms(events, p, "status")
    assert len(poison) == 3
    assert all(h.damage_type == "poison" and h.source is None and h.damage >= 1 for h in poison)
    assert status_events(events, p, StatusKind.POISONED) == [False]
    assert not p.statuses.has(StatusKind.POISONED)
    # No more poison damage once it has worn off.
    assert harms(run(world, 3 * round_ticks(world)), p, "status") == []


def test_frozen_and_on_fire_stop_regeneration() -> None:
    ticks = 30  # inside the status's 12 rounds; one health and three energy regenerations
    for kind in (None, StatusKind.FROZEN, StatusKind.ON_FIRE):
        world = make_world(ROOM)
        p = world.join("ann")
        p.max_hp, p.hp, p.en = 1000, 900, 0
        regen = world.status_rules.regeneration
        assert regen.health_ticks < ticks < 12 * round_ticks(world)
        if kind is not None:
            world.add_status(p, kind, 12, [])
        hp_seen = [p.hp]
        for _ in range(ticks):
            world.step()
            hp_seen.append(p.hp)
        if kind is None:
            assert p.en >= ticks // regen.energy_ticks - 1
            assert p.hp > 900
        else:
            assert p.en == 0, kind
            assert all(b <= a for a, b in itertools.pairwise(hp_seen)), kind


def test_each_actor_keeps_its_own_round_and_regeneration_clock() -> None:
    """An actor's round comes when (tick + id) is a multiple of round_ticks,
    its health point when it is a multiple of health_ticks: each actor keeps
    its rate, and a tick handles only a share of the actors (issue 10)."""
    world = make_world(ROOM)
    world.join("ann")
    rats = []
    for x, y in itertools.product(range(3, 8), range(2, 5)):
        rat = spawn(world, "rat", x, y)
        rat.max_hp, rat.hp = 1000, 500
        world.add_status(rat, StatusKind.ASLEEP, 200, [])
        rats.append(rat)
    rounds, health = round_ticks(world), world.status_rules.regeneration.health_ticks
    asleep = rats[0].statuses.rounds(StatusKind.ASLEEP)  # as capped by statuses.toml
    assert asleep > 3 * health // rounds
    for _ in range(3 * health):
        tick = world.tick
        before = {r.id: (r.statuses.rounds(StatusKind.ASLEEP), r.hp) for r in rats}
        world.step()
        ran = {r.id for r in rats if r.statuses.rounds(StatusKind.ASLEEP) < before[r.id][0]}
        healed = {r.id for r in rats if r.hp > before[r.id][1]}
        assert ran == {r.id for r in rats if (tick + r.id) % rounds == 0}, tick
        assert healed == {r.id for r in rats if (tick + r.id) % health == 0}, tick
        # consecutive ids: the share of a tick is a third of the rats, give or take one
        assert abs(len(ran) - len(rats) / rounds) < 1
    assert [r.statuses.rounds(StatusKind.ASLEEP) for r in rats] == [
        asleep - 3 * health // rounds
    ] * 15
    assert [r.hp for r in rats] == [503] * 15


def test_a_frozen_player_s_command_waits_until_it_thaws() -> None:
    world = make_world(ROOM)
    p = world.join("ann")
    events: list[Event] = []
    world.add_status(p, StatusKind.FROZEN, 2, events)
    world.submit(p.id, Move(1, 0), 5)
    start = (p.x, p.y)
    events = run(world, round_ticks(world))
    assert (p.x, p.y) == start and len(p.queue) == 1
    events = run(world, 3 * round_ticks(world))
    assert status_events(events, p, StatusKind.FROZEN) == [False]
    assert (p.x, p.y) == (start[0] + 1, start[1]) and p.last_tag == 5


def test_asleep_and_paralysed_monsters_do_not_attack() -> None:
    for kind in (StatusKind.ASLEEP, StatusKind.PARALYSED, StatusKind.FROZEN):
        world = make_world(ROOM, seed=4)
        p = world.join("ann")
        p.hp = p.max_hp = 1000
        orc = spawn(world, "orc", p.x + 1, p.y, Mind.HUNTING)
        world.add_status(orc, kind, 5, [])
        quiet = run(world, 4 * round_ticks(world))
        assert not any(isinstance(e, Attacked) and e.attacker == orc.id for e in quiet), kind
        later = run(world, 30)
        assert any(isinstance(e, Attacked) and e.attacker == orc.id for e in later), kind


# --- surprise and shields ----------------------------------------------------------------------


def test_hitting_a_sleeping_monster_is_a_surprise_that_always_lands() -> None:
    for seed in range(10):
        world = make_world(ROOM, seed=seed)
        p = world.join("ann")
        orc = spawn(world, "orc", p.x + 1, p.y, Mind.ASLEEP)
        orc.hp = orc.max_hp = 1000
        (attack,) = [e for e in act(world, p.id, Move(1, 0), tag=1) if isinstance(e, Attacked)]
        assert attack.surprise and attack.outcome != AttackOutcome.MISS


def test_hitting_an_awake_monster_in_view_is_no_surprise() -> None:
    world = make_world(ROOM)
    p = world.join("ann")
    p.hp = p.max_hp = 1000
    orc = spawn(world, "orc", p.x + 1, p.y, Mind.WANDERING)
    orc.hp = orc.max_hp = 1000
    run(world, 2 * orc.speed)  # it notices the player in view and hunts it
    assert orc.mind == Mind.HUNTING and orc.target == p.id
    attacks = [
        e
        for e in act(world, p.id, Move(1, 0), tag=1)
        if isinstance(e, Attacked) and e.attacker == p.id
    ]
    assert [a.surprise for a in attacks] == [False]


def test_a_fire_shield_burns_whoever_hits_its_bearer() -> None:
    world = make_world(ROOM, seed=3)
    p = world.join("ann")
    p.hp = p.max_hp = 1000
    orc = spawn(world, "orc", p.x + 1, p.y, Mind.ASLEEP)
    orc.hp = orc.max_hp = 1000
    world.add_status(orc, StatusKind.FIRE_SHIELD, 10, [])
    events = act(world, p.id, Move(1, 0), tag=1)
    (attack,) = [e for e in events if isinstance(e, Attacked) and e.attacker == p.id]
    assert attack.outcome != AttackOutcome.MISS, "a surprise attack always hits"
    (burn,) = harms(events, p, "shield")
    assert (burn.source, burn.damage_type) == (orc.id, "fire")
    assert 2 <= burn.damage <= 8, "2d4"


def test_a_fire_shield_thaws_a_frozen_attacker() -> None:
    world = make_world(ROOM, seed=3)
    p = world.join("ann")
    p.hp = p.max_hp = 1000
    orc = spawn(world, "orc", p.x + 1, p.y, Mind.HUNTING)
    events: list[Event] = []
    world.add_status(orc, StatusKind.FROZEN, 10, events)
    world.add_status(p, StatusKind.FIRE_SHIELD, 10, events)
    for _ in range(200):
        events = []
        world.melee(orc, p, events)
        if any(isinstance(e, Harmed) and e.cause == "shield" for e in events):
            break
    assert status_events(events, orc, StatusKind.FROZEN) == [False]
    assert not orc.statuses.has(StatusKind.FROZEN)


# --- typed melee and uniques ---------------------------------------------------------------------


def _fire_beetle_damage(resist: int, attacks: int = 300) -> list[int]:
    """What each of a fire beetle's ``attacks`` did to a defender with fire
    resistance ``resist`` (the same seeded world each time, so the same rolls)."""
    world = make_world(ROOM, seed=17)
    p = world.join("ann")
    p.hp = p.max_hp = 10**6
    p.resist["fire"] = resist
    beetle = spawn(world, "fire_beetle", p.x + 1, p.y, Mind.HUNTING)
    events: list[Event] = []
    for _ in range(attacks):
        world.melee(beetle, p, events)
    return [e.damage for e in events if isinstance(e, Attacked) and e.attacker == beetle.id]


def test_a_fire_touch_monster_hurts_a_fire_immune_defender_less() -> None:
    assert CONTENT.monsters["fire_beetle"].melee_type == "fire"
    plain = _fire_beetle_damage(0)
    immune = _fire_beetle_damage(3)
    assert len(plain) == len(immune) == 300 and sum(plain) > 0
    # Seed 003: immunity to a basic element (IM_FIRE) takes a ninth of the
    # damage, rounded down, hit by hit: 10 -> 1, 8 -> 0
    assert immune == [d // 9 for d in plain]


def test_a_unique_takes_no_killing_blow_from_a_monster_but_does_from_a_player() -> None:
    world = make_world(ROOM)
    p = world.join("ann")
    king = spawn(world, "goblin_king", 5, 2, Mind.HUNTING)
    orc = spawn(world, "orc", 6, 2, Mind.HUNTING)
    assert "unique" in king.flags
    events: list[Event] = []
    world.harm_typed(king, 10 * king.max_hp, "fire", orc, "ray", events)
    assert king.alive and king.hp == 1
    assert not any(isinstance(e, Died) for e in events)
    for _ in range(50):
        world.melee(orc, king, events)
    assert king.id in world.actors and king.hp >= 1
    world.harm_typed(king, 10 * king.max_hp, None, p, "ray", events)
    assert Died(1, 5, 2, king.id, p.id) in events
    assert king.id not in world.actors


# --- hunger ---------------------------------------------------------------------------------------


def test_the_hunger_rating_then_nourishment_fall_as_rounds_pass() -> None:
    world = make_world(ROOM)
    p = world.join("ann")
    food = p.food
    rating, nourishment = food.hunger, food.nourishment
    rounds = 45
    run(world, rounds * round_ticks(world))
    # One point every 5 to 15 rounds (seed 001) at full health and energy.
    assert rounds // 15 <= rating - food.hunger <= rounds // 5 + 1
    assert food.nourishment == nourishment
    food.hunger = 0
    run(world, rounds * round_ticks(world))
    assert rounds // 15 <= nourishment - food.nourishment <= rounds // 5 + 1


def test_eating_sets_the_hunger_rating_to_the_food_s_nutrition() -> None:
    world = make_world(ROOM, seed=5)
    p = world.join("ann")
    ration = CONTENT.items["food_ration"]
    while p.next_act > world.tick:
        world.step()
    before = p.food.nourishment
    # The meal's modification roll (5% for a non-monk) is the tick's first draw.
    modified = copy.deepcopy(world.rng).random() < 0.05
    world.submit(p.id, Eat("c"), 1)
    events = world.step()
    assert Used(1, p.x, p.y, p.id, "eat", "food_ration") in events
    assert p.food.nourishment == before + ration.nutrition
    expected = math.floor(ration.nutrition * 1.5) if modified else ration.nutrition
    assert p.food.hunger == expected
    assert [i.count for i in p.inventory if i.key == "food_ration"] == [1]


def test_a_full_bar_refuses_food() -> None:
    world = make_world(ROOM)
    p = world.join("ann")
    p.food.nourishment = world.status_rules.hunger.full
    events = act(world, p.id, Eat("c"), tag=1)
    assert Rejected(p.id, 1, RejectReason.FULL) in events
    assert [i.count for i in p.inventory if i.key == "food_ration"] == [2]
    events = act(world, p.id, Eat("a"), tag=2)
    assert Rejected(p.id, 2, RejectReason.WRONG_ITEM) in events


def test_starving_drains_health_and_energy() -> None:
    world = make_world(ROOM)
    p = world.join("ann")
    p.food.nourishment = p.food.hunger = 0
    hp, en = p.hp, p.en
    events = run(world, 16 * round_ticks(world))
    starve = harms(events, p, "hunger")
    assert starve and all(h.source is None and h.damage >= 1 for h in starve)
    assert p.hp == hp - sum(h.damage for h in starve), "no regeneration while starving"
    assert p.en < en


def test_growing_hungry_is_announced() -> None:
    world = make_world(ROOM)
    p = world.join("ann")
    p.food.hunger = 0
    p.food.nourishment = 150
    events = run(world, 16 * round_ticks(world))
    assert Notice(p.id, "hungry", ()) in events


def test_statuses_are_kept_when_a_player_leaves_and_comes_back() -> None:
    from server.content.statuses import StatusKind
    from server.sim.actors import player_from_record

    world = make_world(ROOM)
    p = world.join("ann")
    world.add_status(p, StatusKind.POISONED, 7, [])
    world.add_status(p, StatusKind.HASTED, 5, [])
    before = p.statuses.snapshot()
    back = player_from_record(99, p.to_record())
    assert back.statuses.snapshot() == before
