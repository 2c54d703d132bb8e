"""Issue 46, part 3: deviations from the seeds fixed to the seed, each checked
against the seed's own words and numbers: a spell aimed at a cell reaches
only its range (seed 001), a lucky hit takes no further adjustment (seed 001),
the Assassin's +50% holds for a thrown surprise attack (seed 002), and any
attack that lands, not only melee and throws, stops regeneration (seed 001)."""

from __future__ import annotations

from server.content import default_content
from server.content.spells import default_spells
from server.sim import casting
from server.sim.actors import Actor, Mind
from server.sim.combat import AttackOutcome
from server.sim.commands import Cast, Zap
from server.sim.events import Attacked, Event, TerrainChanged
from server.sim.events import Cast as CastEvent
from server.sim.projectiles import sneak_damage
from server.sim.spells import upgrade
from server.sim.world import World
from tests.sim.conftest import act, hardy, hardy_monster, harms, make_world, spawn

CONTENT = default_content()
SPELLS = default_spells().spells

LONG_HALL = """
##############
#<...........#
#............#
##############
"""


def _mage(world: World, *spells: str) -> Actor:
    p = hardy(world.join("mia", "mage"))
    world.step()
    for key in spells:
        p.known_spells[key] = world.tick
    p.level = 10
    p.skills = {SPELLS[k].school: 180 for k in SPELLS}
    p.max_en = p.en = 200
    return p


def test_a_monster_s_confusion_reaches_8_cells_and_no_further() -> None:
    """Seed 001: "Confusion has a range of 8 tiles". (A player sees 8 cells,
    so only a monster, which aims by its own sight, could reach past it.)"""
    world = make_world(LONG_HALL)
    p = hardy(world.join("ann", "warrior"))
    world.step()
    vampire = spawn(world, "vampire", p.x + 9, p.y, Mind.HUNTING)
    events: list[Event] = []
    assert not casting.monster_cast(world, vampire, "confusion", p, events)
    world.move_actor(vampire, p.x + 8, p.y)
    assert casting.monster_cast(world, vampire, "confusion", p, events)
    assert [e.spell for e in events if isinstance(e, CastEvent)] == ["confusion"]


def test_acid_glob_has_unlimited_range_and_range_doubles_when_upgraded() -> None:
    """Seed 001: acid glob is "the same as confusion, but with unlimited range";
    an upgrade "doubles all its numerical attributes, such as ... range"."""
    origin = (0, 0)
    assert casting.in_range(SPELLS["acid_glob"], origin, (40, 3))
    confusion = SPELLS["confusion"]
    assert not casting.in_range(confusion, origin, (9, 0))
    assert casting.in_range(upgrade(confusion), origin, (16, 5))
    assert not casting.in_range(upgrade(confusion), origin, (17, 0))


def test_a_lucky_hit_does_1_to_3_without_the_assassin_s_bonus() -> None:
    """Seed 001: "A lucky hit does 1 to 3 damage, without any further
    adjustments" — so a revenant's surprise bonus (x1.5, which would make a 3
    into a 4) does not touch it."""
    world = make_world(LONG_HALL)
    p = world.join("rev", "revenant")
    rat = spawn(world, "rat", p.x + 1, p.y, Mind.ASLEEP)
    hardy(rat)
    rat.defence = 1000  # every hit rolls 0: a critical becomes a lucky hit
    lucky: list[int] = []
    for _ in range(400):
        rat.mind, rat.hp = Mind.ASLEEP, rat.max_hp
        events: list[Event] = []
        world.melee(p, rat, events)
        lucky += [
            e.damage for e in events if isinstance(e, Attacked) and e.outcome == AttackOutcome.LUCKY
        ]
    assert lucky and set(lucky) <= {1, 2, 3}
    assert 3 in lucky


def test_the_assassin_s_50_percent_holds_for_a_thrown_surprise_attack() -> None:
    """Seed 002: "The Assassin sub-class will get 50% more damage from surprise
    attacks" (the revenant's sneak_attack 0.5): 10 -> 15, 7 -> 10."""
    world = make_world(LONG_HALL)
    rev = world.join("rev", "revenant")
    war = world.join("war", "warrior")
    assert sneak_damage(world, rev, 10, AttackOutcome.HIT, True) == 15
    assert sneak_damage(world, rev, 7, AttackOutcome.CRITICAL, True) == 10
    assert sneak_damage(world, rev, 10, AttackOutcome.HIT, False) == 10
    assert sneak_damage(world, rev, 3, AttackOutcome.LUCKY, True) == 3
    assert sneak_damage(world, war, 10, AttackOutcome.HIT, True) == 10


def test_a_spell_that_lands_stops_the_caster_s_regeneration_and_one_that_misses_does_not() -> None:
    """Seed 001: "Attacking during a turn prevents health and energy from
    regenerating (unless you miss)" — a spark that hits is an attack."""
    world = make_world(LONG_HALL)
    p = _mage(world, "spark")
    rat = hardy_monster(world, "rat", p.x + 1, p.y)
    assert p.last_attack_tick < 0
    act(world, p.id, Cast("spark", direction=(1, 0)))
    assert rat.hp < rat.max_hp
    assert p.last_attack_tick >= 0 and world.tick - p.last_attack_tick <= p.speed
    before = p.last_attack_tick
    act(world, p.id, Cast("spark", direction=(-1, 0)))  # at the wall: nobody hit
    assert p.last_attack_tick == before


GROVE = """
##########
#<.......#
#...TTT..#
#...TTT..#
##########
"""


def test_a_fire_blast_burns_every_tree_it_reaches_not_only_under_a_victim() -> None:
    """Seed 003: fire turns forest to floor when the damage exceeds a random
    number between 101 and 500, so 600 always burns it; the blast's area (a
    ball of radius 2: the centre and its 8 neighbours) is reached whether or
    not anyone stands there."""
    world = make_world(GROVE)
    events: list[Event] = []
    casting.explode(world, None, (5, 2), "fire", 600, 1.0, 2, events)
    burnt = {(e.x, e.y) for e in events if isinstance(e, TerrainChanged)}
    assert burnt == {(x, y) for x in (4, 5, 6) for y in (2, 3)}
    assert world.levels[1].to_ascii().count("T") == 0


def _zap_at(mind: Mind) -> list[int]:
    """Damage a wand of magic missile's ray deals a rat that no roll could hit
    (dodge 10^9), asleep or awake and seen, in 20 zaps."""
    world = make_world(LONG_HALL)
    p = _mage(world)
    rat = hardy(spawn(world, "rat", p.x + 3, p.y, mind))
    rat.dodge = 1e9
    world.step()  # in the mage's view from now on: only sleep surprises it
    wand = next(i for i in p.inventory if i.key == "wand_of_magic_missile")
    dealt: list[int] = []
    for _ in range(20):
        wand.charges = 5
        while p.next_act > world.tick:
            world.step()
        rat.mind, rat.hp = mind, rat.max_hp
        if mind == Mind.HUNTING:
            rat.target, rat.target_seen = p.id, (p.x, p.y)
        events = act(world, p.id, Zap(wand.letter, 1, 0))
        dealt += [h.damage for h in harms(events, rat)]
    return dealt


def test_a_ray_always_hits_a_surprised_creature_and_rolls_against_one_awake() -> None:
    """Seed 002: "Surprise attacks have 100% accuracy" (a sleeping enemy is
    one); RULES.md: a ray's hit roll is seed 002's magic hit test."""
    assert len(_zap_at(Mind.ASLEEP)) >= 20  # every zap hits it (a bounce may hit twice)
    assert _zap_at(Mind.HUNTING) == []
