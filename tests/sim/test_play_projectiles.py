"""Thrown items flying through the ticking world (issue 4, seed 001 throwing,
seed 002 path): flight over several ticks, hits, misses flying on, landing,
shattering, energy, creatures stepping into the path, and the miss rate."""

from __future__ import annotations

import math

from server.content import default_content
from server.sim import projectiles
from server.sim.actors import Actor, Mind
from server.sim.combat import AttackOutcome
from server.sim.commands import Move, Throw
from server.sim.events import Event, Flew, Harmed, Landed, Rejected, RejectReason, Thrown
from server.sim.items import Item, add_to_pack
from server.sim.world import World
from tests.sim.conftest import make_world, spawn

CONTENT = default_content()

HALL = """
##############
#<...........#
#............#
#............#
#............#
##############
"""

CORRIDOR = """
##############
#<...........#
##############
"""


def give(world: World, actor: Actor, item: Item) -> str:
    held = add_to_pack(actor.inventory, item, world.content)
    assert held is not None
    return held.letter


def throw_and_fly(
    world: World, actor: Actor, letter: str, target: tuple[int, int], ticks: int = 8
) -> list[list[Event]]:
    """Submit a throw and step ``ticks`` ticks; the events of each tick."""
    world.submit(actor.id, Throw(letter, *target), 1)
    return [world.step() for _ in range(ticks)]


def flat(ticks: list[list[Event]]) -> list[Event]:
    return [e for tick in ticks for e in tick]


def sturdy(actor: Actor, hp: int = 500) -> Actor:
    """Enough health that no throw kills it (so its cell stays occupied)."""
    actor.hp = actor.max_hp = hp
    return actor


# --- flight ------------------------------------------------------------------------------


def test_a_dart_flies_two_cells_a_tick_along_the_bolt_path_and_lands() -> None:
    world = make_world(HALL)
    p = world.join("ann")
    letter = give(world, p, Item("dart"))
    target = (7, 4)
    assert (p.x, p.y) == (1, 1)
    # Seed 002's Cell(i) worked out for (1, 1) -> (7, 4): x steps every cell,
    # y = 1 + ((A - 1) // 2 + i (B - 1)) // (A - 1) with A - 1 = 6, B - 1 = 3;
    # a dart flies its range of 6 cells, the last one the target
    assert CONTENT.items["dart"].throw_range == 6
    expected = [(1 + i, 1 + (3 + 3 * i) // 6) for i in range(1, 7)]
    assert expected == [(2, 2), (3, 2), (4, 3), (5, 3), (6, 4), (7, 4)]
    ticks = throw_and_fly(world, p, letter, target, ticks=1)
    assert Thrown(1, p.x, p.y, p.id, "dart", target) in ticks[0]
    assert len(world.projectiles) == 1, "the dart is in the air after the first tick"
    (proj,) = world.projectiles.values()
    assert (proj.x, proj.y) == expected[projectiles.THROW_SPEED - 1]
    ticks += [world.step() for _ in range(5)]
    flights = [e for e in flat(ticks) if isinstance(e, Flew)]
    assert len(flights) == math.ceil(len(expected) / projectiles.THROW_SPEED) >= 3
    assert [c for f in flights for c in f.cells] == expected
    assert all(len(f.cells) <= projectiles.THROW_SPEED for f in flights)
    assert [(f.x, f.y) for f in flights] == [f.cells[-1] for f in flights]
    landed = [e for e in flat(ticks) if isinstance(e, Landed)]
    assert landed == [Landed(1, *expected[-1], proj.id, "dart", False)]
    assert world.projectiles == {}
    assert [i.key for i in world.levels[1].items[expected[-1]]] == ["dart"]
    assert not any(i.key == "dart" for i in p.inventory)


def test_an_item_without_a_range_flies_four_cells() -> None:
    world = make_world(CORRIDOR)
    p = world.join("ann")
    letter = give(world, p, Item("rock"))
    assert CONTENT.items["rock"].throw_range is None
    throw_and_fly(world, p, letter, (12, 1))
    assert [i.key for i in world.levels[1].items[(p.x + 4, p.y)]] == ["rock"]


def test_a_throw_stops_in_the_cell_before_a_wall() -> None:
    world = make_world("""
        #######
        #<..#.#
        #######
    """)
    p = world.join("ann")
    letter = give(world, p, Item("dart"))
    events = flat(throw_and_fly(world, p, letter, (5, 1)))
    assert Landed(1, 3, 1, 1, "dart", False) in events
    assert [i.key for i in world.levels[1].items[(3, 1)]] == ["dart"]


def test_throwing_refuses_an_unknown_letter_and_ones_own_cell() -> None:
    world = make_world(CORRIDOR)
    p = world.join("ann")
    events = flat(throw_and_fly(world, p, "z", (5, 1), ticks=1))
    assert Rejected(p.id, 1, RejectReason.NO_ITEM) in events
    letter = give(world, p, Item("dart"))
    events = flat(throw_and_fly(world, p, letter, (p.x, p.y), ticks=4))
    assert Rejected(p.id, 1, RejectReason.NO_TARGET) in events


# --- hits and misses ----------------------------------------------------------------------


def _throw_at_rats(
    seed: int, rats: tuple[int, ...], item: str = "dart"
) -> tuple[World, Actor, list[Actor], list[Event]]:
    world = make_world(CORRIDOR, seed=seed)
    p = world.join("ann")
    victims = [sturdy(spawn(world, "rat", x, 1, Mind.HUNTING)) for x in rats]
    letter = give(world, p, Item(item))
    _alert(world, p, victims)
    return world, p, victims, flat(throw_and_fly(world, p, letter, (rats[0], 1)))


def _alert(world: World, thrower: Actor, victims: list[Actor]) -> None:
    """Make the targets awake, hunting the thrower, in its view and rooted to
    the spot, so a throw at them is no surprise (a surprise always hits)."""
    for victim in victims:
        victim.flags = victim.flags | {"immobile"}
    world.step()
    for victim in victims:
        victim.mind, victim.target = Mind.HUNTING, thrower.id
    assert all(not world.is_surprise(thrower, v) for v in victims)


def _throw_harms(events: list[Event], target: int) -> list[Harmed]:
    return [
        e for e in events if isinstance(e, Harmed) and e.target == target and e.cause == "throw"
    ]


def test_a_hit_harms_the_victim_and_the_dart_lands_under_it() -> None:
    outcomes = set()
    for seed in range(40):
        world, p, (rat,), events = _throw_at_rats(seed, (4,))
        (harm,) = _throw_harms(events, rat.id)
        outcomes.add(harm.outcome)
        if harm.outcome == AttackOutcome.MISS:
            assert harm.damage == 0
            assert [i.key for i in world.levels[1].items[(7, 1)]] == ["dart"]
            continue
        assert harm.source == p.id and harm.damage_type == "physical"
        assert rat.hp == rat.max_hp - harm.damage
        assert [i.key for i in world.levels[1].items[(4, 1)]] == ["dart"]
        assert (7, 1) not in world.levels[1].items
    assert AttackOutcome.HIT in outcomes and AttackOutcome.MISS in outcomes


def test_a_miss_flies_on_and_may_hit_the_creature_behind() -> None:
    for seed in range(60):
        world, _, (front, back), events = _throw_at_rats(seed, (3, 5))
        (first,) = _throw_harms(events, front.id)
        behind = _throw_harms(events, back.id)
        if first.outcome != AttackOutcome.MISS:
            assert behind == [], "a hit stops the dart"
            continue
        if behind and behind[0].outcome != AttackOutcome.MISS:
            assert events.index(first) < events.index(behind[0])
            assert [i.key for i in world.levels[1].items[(5, 1)]] == ["dart"]
            return
    raise AssertionError("no seed in range gave a miss followed by a hit behind")


def _beside_the_path() -> tuple[World, Actor, Actor, str]:
    """Ann on the stairs with a dart (its letter), Bob at (5, 2) beside her path to (9, 1)."""
    world = make_world(HALL)
    p = world.join("ann")
    other = world.join("bob")
    world.move_actor(other, 5, 2)
    return world, p, other, give(world, p, Item("dart"))


def test_a_creature_stepping_into_the_path_mid_flight_is_met() -> None:
    world, p, other, letter = _beside_the_path()
    first = throw_and_fly(world, p, letter, (9, 1), ticks=1)
    assert not _throw_harms(flat(first), other.id)
    assert len(world.projectiles) == 1
    world.submit(other.id, Move(0, -1), 7)
    events = flat([world.step() for _ in range(4)])
    assert (other.x, other.y) == (5, 1)
    met = _throw_harms(events, other.id)
    assert len(met) == 1 and met[0].source == p.id


def test_a_creature_beside_the_path_is_not_met() -> None:
    world, p, other, letter = _beside_the_path()
    events = flat(throw_and_fly(world, p, letter, (9, 1)))
    assert not _throw_harms(events, other.id)
    assert [i.key for i in world.levels[1].items[(7, 1)]] == ["dart"]


# --- fragile items ------------------------------------------------------------------------


def test_a_flask_shatters_where_it_lands_and_leaves_nothing() -> None:
    world = make_world(CORRIDOR)
    p = world.join("ann")
    assert CONTENT.items["flask_of_oil"].fragile
    letter = give(world, p, Item("flask_of_oil"))
    events = flat(throw_and_fly(world, p, letter, (12, 1)))
    (landed,) = [e for e in events if isinstance(e, Landed)]
    assert landed.shattered and (landed.x, landed.y) == (p.x + 4, p.y)
    assert world.levels[1].items == {}


def test_a_flask_that_hits_splashes_fire_and_shatters() -> None:
    for seed in range(40):
        world, p, (rat,), events = _throw_at_rats(seed, (4,), item="flask_of_oil")
        (harm,) = _throw_harms(events, rat.id)
        if harm.outcome == AttackOutcome.MISS:
            continue
        splash = [e for e in events if isinstance(e, Harmed) and e.cause == "potion"]
        assert len(splash) == 1 and splash[0].damage_type == "fire"
        assert splash[0].target == rat.id and splash[0].source == p.id
        (landed,) = [e for e in events if isinstance(e, Landed)]
        assert landed.shattered and (landed.x, landed.y) == (4, 1)
        assert world.levels[1].items == {}
        return
    raise AssertionError("no hit in 40 seeds")


def test_a_thrown_potion_of_healing_heals_the_creature_it_hits() -> None:
    lo = CONTENT.items["potion_of_healing"].dice
    assert lo is not None
    for seed in range(40):
        world = make_world(CORRIDOR, seed=seed)
        p = world.join("ann")
        rat = sturdy(spawn(world, "rat", 4, 1, Mind.HUNTING), hp=200)
        rat.hp = 100
        letter = give(world, p, Item("potion_of_healing"))
        events = flat(throw_and_fly(world, p, letter, (4, 1)))
        (harm,) = _throw_harms(events, rat.id)
        if harm.outcome == AttackOutcome.MISS:
            assert rat.hp == 100
            continue
        # The potion's own blow (no power rating: 1-3 before energy scaling
        # and criticals), then at least one health per healing die.
        assert harm.damage <= 2 * 4
        assert rat.hp - (100 - harm.damage) >= lo[0]
        assert any(isinstance(e, Landed) and e.shattered for e in events)
        return
    raise AssertionError("no hit in 40 seeds")


# --- energy ---------------------------------------------------------------------------------


def test_a_throw_costs_range_minus_two_energy_and_a_cursed_one_eight() -> None:
    cases = [(Item("dart"), 6 - 2), (Item("rock"), 4 - 2), (Item("dart", cursed=True), 8)]
    for item, cost in cases:
        world = make_world(CORRIDOR)
        p = world.join("mia", "mage")
        assert CONTENT.items["dart"].throw_range == 6
        before = p.en
        letter = give(world, p, item)
        throw_and_fly(world, p, letter, (8, 1), ticks=1)
        assert p.en == before - cost, item


def test_a_cursed_wielded_weapon_cannot_be_thrown() -> None:
    world = make_world(CORRIDOR)
    p = world.join("ann")
    p.equipment["weapon"].cursed = True
    events = flat(throw_and_fly(world, p, "a", (8, 1), ticks=2))
    assert Rejected(p.id, 1, RejectReason.CURSED) in events
    assert p.equipment["weapon"].key == "long_sword"


def test_throwing_the_wielded_dagger_unwields_it() -> None:
    world = make_world(CORRIDOR)
    p = world.join("mia", "mage")
    assert p.equipment["weapon"].key == "dagger"
    throw_and_fly(world, p, "a", (8, 1))
    assert "weapon" not in p.equipment and p.bonus.power == 0
    assert [i.key for i in world.levels[1].items[(7, 1)]] == ["dagger"]


# --- statistics -----------------------------------------------------------------------------


def _miss_rate(class_key: str, level: int, trials: int, *, marksman: bool = False) -> float:
    """Throw ``trials`` darts at an adjacent, awake rat in front of a wall;
    the fraction that missed it."""
    world = make_world(
        """
        #####
        #<..#
        #####
    """,
        seed=level + 100,
    )
    p = world.join("ann", class_key)
    p.level = level
    if marksman:
        p.abilities.add("marksman")
    rat = sturdy(spawn(world, "rat", 2, 1, Mind.HUNTING), hp=10**9)
    letter = give(world, p, Item("dart", trials))
    _alert(world, p, [rat])
    misses = 0
    for _ in range(trials):
        events: list[Event] = []
        assert projectiles.throw(world, p, letter, (rat.x, rat.y), events) is None
        while world.projectiles:
            projectiles.advance(world, events)
        (harm,) = _throw_harms(events, rat.id)
        misses += harm.outcome == AttackOutcome.MISS
        world.levels[1].items.clear()
    return misses / trials


def _seed_001_miss_chance(melee_miss: float, level: int, marksman: bool) -> float:
    # (M + 40%) / (1 + 0.5 L), "half the level" rounded down as the seed's
    # level-5 example (1 in 6) requires; the marksman ability halves it.
    chance = min(1.0, (melee_miss + 0.4) / (1 + level // 2))
    return chance / 2 if marksman else chance


def test_thrown_miss_rate_matches_seed_001() -> None:
    trials = 2500
    for class_key, level, marksman in (
        ("warrior", 5, False),
        ("monk", 0, False),
        ("warrior", 8, True),
    ):
        p = _seed_001_miss_chance(CONTENT.classes[class_key].miss_chance, level, marksman)
        observed = _miss_rate(class_key, level, trials, marksman=marksman)
        tolerance = 4.5 * math.sqrt(p * (1 - p) / trials)
        assert abs(observed - p) <= tolerance, (class_key, level, observed, p)
    # The seed's own examples with M = 10%: level 0 misses 1 in 2, level 5 1 in 6.
    assert _seed_001_miss_chance(0.1, 0, False) == 0.5
    assert math.isclose(_seed_001_miss_chance(0.1, 5, False), 1 / 6)


def test_a_thrown_dart_always_hits_a_sleeping_monster() -> None:
    """Seed 002 via RULES.md: surprise attacks always hit, thrown ones too."""
    for seed in range(30):
        world = make_world(CORRIDOR, seed=seed)
        p = world.join("ann")
        p.level = 0  # a level-0 thrower misses an awake target half the time
        rat = sturdy(spawn(world, "rat", 4, 1, Mind.ASLEEP))
        letter = give(world, p, Item("dart"))
        world.step()
        events = flat(throw_and_fly(world, p, letter, (4, 1)))
        (harm,) = _throw_harms(events, rat.id)
        assert harm.outcome != AttackOutcome.MISS
