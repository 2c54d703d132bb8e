"""Spellcasting in the ticking world (issue 6; seed 004 costs and refusals,
seed 001 spell families): learning from scrolls, the spell menu, bolts,
refusals, confusion, forgetting, healing, fireball rings, the lightning chain
and webbing."""

from __future__ import annotations

import dataclasses
import math

from server.content import default_content
from server.content.spells import default_spells
from server.content.statuses import StatusKind
from server.sim import casting
from server.sim.actors import Actor, Mind, new_monster
from server.sim.commands import Cast, Command, Read, TakeOff, Throw, Wear, Zap
from server.sim.events import Cast as CastEvent
from server.sim.events import (
    Event,
    Exploded,
    Flew,
    Harmed,
    ItemDestroyed,
    Learned,
    Notice,
    RayFired,
    Rejected,
    RejectReason,
    StatusChanged,
    Used,
)
from server.sim.items import Item, add_to_pack
from server.sim.spells import area_damage_by_ring, upgrade
from server.sim.world import World
from tests.sim.conftest import act, hardy_monster, harms, make_world, spawn

CONTENT = default_content()
SPELLS = default_spells().spells

HALL = """
################
#<.............#
#..............#
#..............#
#..............#
#..............#
#..............#
#..............#
################
"""


def mage(world: World, *spells: str, adept: bool = False) -> Actor:
    """A mage (spellbook equipped) who knows ``spells``; ``adept``: level 10
    and expert in every school, so every spell here succeeds."""
    p = world.join("mia", "mage")
    world.step()  # a field of view, for spells aimed at a cell
    for key in spells:
        p.known_spells[key] = world.tick
    if adept:
        p.level = 10
        p.skills = {SPELLS[k].school: 180 for k in SPELLS}
        p.max_en = p.en = 200
    return p


def starve_regeneration(world: World, actor: Actor) -> None:
    """Seed 001: nothing regenerates below 25 nourishment. Just below it, so
    that energy changes are the casts' own; enough left for a level-2 cast."""
    actor.food.nourishment = world.status_rules.regeneration.min_nourishment - 1
    assert actor.food.nourishment >= 20


def casts(events: list[Event]) -> list[CastEvent]:
    return [e for e in events if isinstance(e, CastEvent)]


# --- learning -----------------------------------------------------------------------------


def test_reading_a_spell_scroll_teaches_the_spell_for_the_menu() -> None:
    world = make_world(HALL)
    p = mage(world)
    scroll = next(i for i in p.inventory if i.key == "scroll_of_spark")
    events = act(world, p.id, Read(scroll.letter), tag=1)
    assert Used(1, p.x, p.y, p.id, "read", "scroll_of_spark") in events
    assert Learned(p.id, "spark") in events
    assert "spark" in p.known_spells
    assert scroll not in p.inventory, "a scroll is used up"
    menu = casting.spell_menu(p, world.content, world.tick)
    spark = SPELLS["spark"]
    assert [(key, cost, forgotten) for _, key, _, cost, forgotten in menu] == [
        ("spark", 5 * spark.level, False)
    ]
    # Without the spellbook equipped nothing can be cast.
    act(world, p.id, TakeOff(p.equipment["book"].letter), tag=2)
    assert casting.spell_menu(p, world.content, world.tick) == []
    events = act(world, p.id, Cast("spark", direction=(1, 0)), tag=3)
    assert Rejected(p.id, 3, RejectReason.CANNOT_CAST) in events


def test_an_unknown_spell_is_refused() -> None:
    world = make_world(HALL)
    p = mage(world)
    events = act(world, p.id, Cast("spark", direction=(1, 0)), tag=1)
    assert Rejected(p.id, 1, RejectReason.UNKNOWN_SPELL) in events


# --- casting a bolt, costs and training -------------------------------------------------------


def test_spark_at_an_adjacent_monster_burns_it_and_costs_energy_and_nutrition() -> None:
    world = make_world(HALL)
    p = mage(world, "spark")
    starve_regeneration(world, p)
    orc = hardy_monster(world, "orc", p.x + 1, p.y)
    en, food = p.en, p.food.nourishment
    spark = SPELLS["spark"]
    events = act(world, p.id, Cast("spark", direction=(1, 0)), tag=1)
    assert casts(events) == [CastEvent(1, p.x, p.y, p.id, "spark", True)]
    (harm,) = harms(events, orc)
    assert (harm.source, harm.cause, harm.damage_type) == (p.id, "bolt", "fire")
    assert 2 <= harm.damage <= 2 * spark.power
    assert orc.hp == orc.max_hp - harm.damage
    assert any(isinstance(e, Flew) and e.item == "bolt:fire" for e in events)
    assert p.en == en - 5 * spark.level
    # Seed 004: a Wizard with Int 17 or more casts without hunger (the mage's
    # role is Wizard, Int 18); other roles pay 2 x the energy cost
    # (tests/sim/test_play_seed_rules.py).
    assert p.food.nourishment == food
    assert p.skills[spark.school] == spark.level


def test_a_successful_cast_trains_its_school_by_the_spell_level() -> None:
    world = make_world(HALL)
    p = mage(world, "freeze", adept=True)
    freeze = SPELLS["freeze"]
    p.skills[freeze.school] = 0
    hardy_monster(world, "orc", p.x + 2, p.y)
    for tag in (1, 2):
        starve_regeneration(world, p)
        en, food = p.en, p.food.nourishment
        events = act(world, p.id, Cast("freeze", direction=(1, 0)), tag=tag)
        assert casts(events)[0].success
        assert p.en == en - 5 * freeze.level
        assert p.food.nourishment == food  # a Wizard of Int 18: hungerless casting
    assert p.skills[freeze.school] == 2 * freeze.level


def test_casting_without_enough_energy_is_refused_and_costs_nothing() -> None:
    world = make_world(HALL)
    p = mage(world, "spark")
    p.en = 5 * SPELLS["spark"].level - 1
    en, food = p.en, p.food.nourishment
    events = act(world, p.id, Cast("spark", direction=(1, 0)), tag=1)
    assert Rejected(p.id, 1, RejectReason.NO_ENERGY) in events
    assert casts(events) == []
    assert (p.en, p.food.nourishment) == (en, food)


def test_a_stunned_caster_cannot_cast() -> None:
    world = make_world(HALL)
    p = mage(world, "spark")
    world.add_status(p, StatusKind.STUNNED, 5, [])
    en = p.en
    events = act(world, p.id, Cast("spark", direction=(1, 0)), tag=1)
    assert Rejected(p.id, 1, RejectReason.CANNOT_CAST) in events
    assert p.en == en and casts(events) == []


def test_confused_casting_always_fails_for_half_the_energy_and_full_nutrition() -> None:
    world = make_world(HALL)
    p = mage(world, "spark", adept=True)
    spark = SPELLS["spark"]
    assert casting.success_percent(p, spark, world.content) == 100
    for tag in range(1, 6):
        starve_regeneration(world, p)
        world.add_status(p, StatusKind.CONFUSED, 10, [])
        en, food = p.en, p.food.nourishment
        events = act(world, p.id, Cast("spark", direction=(1, 0)), tag=tag)
        assert casts(events) == [CastEvent(1, p.x, p.y, p.id, "spark", False)]
        assert not any(isinstance(e, Flew) for e in events) and world.projectiles == {}
        assert p.en == en - (5 * spark.level) // 2
        # Seed 004: "A failed cast of a spell costs as much as a successful one",
        # which for a Wizard of Int 18 is nothing.
        assert p.food.nourishment == food
        assert p.skills[spark.school] == 180


def test_a_weapon_and_shield_leave_a_hand_free_unless_both_are_cursed() -> None:
    world = make_world(HALL)
    p = world.join("ann", "warrior")
    world.step()
    p.known_spells["heal_wounds"] = world.tick
    book = add_to_pack(p.inventory, Item("blank_spellbook"), CONTENT)
    shield = add_to_pack(p.inventory, Item("small_shield"), CONTENT)
    assert book is not None and shield is not None
    act(world, p.id, Wear(book.letter), tag=1)
    act(world, p.id, Wear(shield.letter), tag=2)
    events = act(world, p.id, Cast("heal_wounds"), tag=3)
    assert casts(events), "a warrior with sword and shield may cast"
    p.equipment["weapon"].cursed = True
    shield.cursed = True
    world.refresh_bonus(p)
    events = act(world, p.id, Cast("heal_wounds"), tag=4)
    assert Rejected(p.id, 4, RejectReason.CANNOT_CAST) in events


# --- forgetting ---------------------------------------------------------------------------------


def test_a_forgotten_spell_backfires_with_confusion_or_stun_and_costs_nothing() -> None:
    world = make_world(HALL)
    p = mage(world)
    rounds = world.status_rules.round_ticks
    world.tick = 20_003 * rounds + 1  # between two rounds: no status has ticked yet
    p.next_act = world.tick
    p.known_spells["spark"] = 0  # learned 20,003 rounds ago
    assert casting.spell_menu(p, world.content, world.tick)[0][4], "marked forgotten"
    en, food = p.en, p.food.nourishment
    events = act(world, p.id, Cast("spark", direction=(1, 0)), tag=1)
    assert Notice(p.id, "forgot", ("spark",)) in events
    assert casts(events) == [CastEvent(1, p.x, p.y, p.id, "spark", False)]
    assert world.projectiles == {}
    assert (p.en, p.food.nourishment) == (en, food)
    came_on = {e.status for e in events if isinstance(e, StatusChanged) and e.on}
    assert came_on and came_on <= {int(StatusKind.CONFUSED), int(StatusKind.STUNNED)}
    # Seed 004 (NetHack 3.6 durations): D = 3 (level + 1) turns split as
    # (D, 0), (2D/3, D/3), (D/3, 2D/3) or (0, D) rounds of (confused, stunned).
    d = 3 * (SPELLS["spark"].level + 1)
    split = (p.statuses.rounds(StatusKind.CONFUSED), p.statuses.rounds(StatusKind.STUNNED))
    assert split in {(d, 0), (2 * d // 3, d // 3), (d // 3, 2 * d // 3), (0, d)}


def test_a_spell_learned_19_999_rounds_ago_still_works() -> None:
    world = make_world(HALL)
    p = mage(world)
    rounds = world.status_rules.round_ticks
    world.tick = 19_999 * rounds
    p.next_act = world.tick
    p.known_spells["heal_wounds"] = 0
    events = act(world, p.id, Cast("heal_wounds"), tag=1)
    assert Notice(p.id, "forgot", ("heal_wounds",)) not in events
    assert casts(events) == [CastEvent(1, p.x, p.y, p.id, "heal_wounds", True)]


# --- healing ------------------------------------------------------------------------------------


def test_heal_wounds_heals_p_plus_level_over_half_p() -> None:
    power = SPELLS["heal_wounds"].power
    for level in (1, 12, 13, 27):
        world = make_world(HALL)
        p = mage(world, "heal_wounds")
        p.level = level
        p.max_hp, p.hp = 200, 50
        events = act(world, p.id, Cast("heal_wounds"), tag=1)
        assert casts(events)[0].success
        assert p.hp == 50 + power + level // math.ceil(power / 2), level


# --- areas, chains and webs ---------------------------------------------------------------------


def test_fireball_harms_each_ring_with_one_attenuated_roll() -> None:
    world = make_world(HALL, seed=3)
    p = mage(world, "fireball", adept=True)
    fireball = SPELLS["fireball"]
    assert fireball.radius == 3
    centre = (8, 4)
    by_ring = [
        hardy_monster(world, "orc", 8, 4),
        hardy_monster(world, "orc", 9, 5),
        hardy_monster(world, "orc", 6, 4),
        hardy_monster(world, "orc", 11, 4),
    ]
    events = act(world, p.id, Cast("fireball", target=centre), tag=1)
    assert casts(events)[0].success
    assert Exploded(1, *centre, p.id, "fire", fireball.radius) in events
    dealt = [[h.damage for h in harms(events, m)] for m in by_ring]
    assert dealt[3] == [], "ring 3 is outside a radius-3 fireball"
    (roll,) = dealt[0]
    assert 2 <= roll <= 2 * fireball.power
    expected = area_damage_by_ring(roll, fireball.attenuation, fireball.radius)
    assert [d[0] for d in dealt[:3]] == expected
    # Seed 001's own procedure, by hand: floor(previous ring x 0.8).
    assert expected[1] == roll * 4 // 5 and expected[2] == expected[1] * 4 // 5
    assert all(h.cause == "ball" and h.damage_type == "fire" for h in harms(events))
    assert harms(events, p) == []


def test_fireball_needs_a_target_in_view() -> None:
    world = make_world(HALL)
    p = mage(world, "fireball", adept=True)
    events = act(world, p.id, Cast("fireball", target=(40, 40)), tag=1)
    assert Rejected(p.id, 1, RejectReason.NO_TARGET) in events
    events = act(world, p.id, Cast("fireball", direction=(1, 0)), tag=2)
    assert Rejected(p.id, 2, RejectReason.NO_TARGET) in events


def test_lightning_bolt_chains_to_three_creatures_with_fewer_dice_each_time() -> None:
    world = make_world(HALL, seed=9)
    p = mage(world, "lightning_bolt", adept=True)
    bolt = SPELLS["lightning_bolt"]
    assert (bolt.chain, bolt.radius) == (3, 3)
    first = hardy_monster(world, "orc", 6, 3)
    second = hardy_monster(world, "orc", 8, 3)  # 2 from the first
    third = hardy_monster(world, "orc", 9, 5)  # 3 from the first, 2 from the second
    fourth = hardy_monster(world, "orc", 13, 3)  # 4 from the third: out of reach
    events = act(world, p.id, Cast("lightning_bolt", target=(6, 3)), tag=1)
    assert casts(events)[0].success
    struck = [h for h in harms(events) if h.cause == "spell"]
    assert [h.target for h in struck] == [first.id, second.id, third.id]
    assert harms(events, fourth) == [] and harms(events, p) == []
    assert all(h.damage_type == "electricity" and h.source == p.id for h in struck)
    for h, dice in zip(struck, (3, 2, 1), strict=True):
        assert dice <= h.damage <= dice * bolt.power


def test_webbing_webs_the_monster_on_the_target_cell() -> None:
    world = make_world(HALL, seed=2)
    p = mage(world, "webbing", adept=True)
    orc = hardy_monster(world, "orc", 6, 4)
    events = act(world, p.id, Cast("webbing", target=(6, 4)), tag=1)
    assert casts(events)[0].success
    assert StatusChanged(1, 6, 4, orc.id, int(StatusKind.WEBBED), True) in events
    assert orc.statuses.has(StatusKind.WEBBED)
    for _ in range(3):
        world.step()
    assert (orc.x, orc.y) == (6, 4), "a webbed monster does not move"


# --- determinism ----------------------------------------------------------------------------


def _scenario(seed: int) -> list[Event]:
    """A mage throws a dart, zaps a wand and casts spark and fireball at orcs."""
    world = make_world(HALL, seed=seed)
    p = mage(world, "spark", "fireball", adept=True)
    p.hp = p.max_hp = 500
    for x, y in ((6, 1), (7, 4), (8, 5)):
        spawn(world, "orc", x, y, Mind.WANDERING)
    dart = add_to_pack(p.inventory, Item("dart", 2), CONTENT)
    wand = next(i for i in p.inventory if i.key == "wand_of_magic_missile")
    assert dart is not None
    log: list[Command] = [
        Throw(dart.letter, 6, 1),
        Zap(wand.letter, 1, 0),
        Cast("spark", direction=(1, 1)),
        Cast("fireball", target=(7, 4)),
        Throw(dart.letter, 7, 4),
    ]
    for tag, command in enumerate(log):
        world.submit(p.id, command, tag)
    events: list[Event] = []
    for _ in range(40):
        events += world.step()
    return events


def test_the_same_seed_and_commands_give_the_same_events() -> None:
    first = _scenario(21)
    assert {type(e).__name__ for e in first} >= {
        "Thrown",
        "Flew",
        "RayFired",
        "Cast",
        "Exploded",
        "Harmed",
    }
    assert first == _scenario(21)


# --- walls stop blasts, clouds, tongues and jumps --------------------------------------------

WALLED = """
################
#<.............#
#......#.......#
#......#.......#
#......#.......#
#..............#
#..............#
################
"""


def test_a_fireball_does_not_burn_through_a_wall() -> None:
    world = make_world(WALLED, seed=3)
    p = mage(world, "fireball", adept=True)
    centre = hardy_monster(world, "orc", 6, 3)
    behind = hardy_monster(world, "orc", 8, 3)  # 2 cells away, past the wall at (7, 3)
    open_ = hardy_monster(world, "orc", 6, 5)  # 2 cells away in the open
    events = act(world, p.id, Cast("fireball", target=(6, 3)), tag=1)
    assert casts(events)[0].success
    assert len(harms(events, centre)) == 1 and len(harms(events, open_)) == 1
    assert harms(events, behind) == []


def test_lightning_does_not_jump_through_a_wall() -> None:
    world = make_world(WALLED, seed=3)
    p = mage(world, "lightning_bolt", adept=True)
    first = hardy_monster(world, "orc", 6, 3)
    behind = hardy_monster(world, "orc", 8, 3)  # 2 from the first, past the wall
    beside = hardy_monster(world, "orc", 6, 5)  # 2 from the first, in the open
    events = act(world, p.id, Cast("lightning_bolt", target=(6, 3)), tag=1)
    assert casts(events)[0].success
    assert [h.target for h in harms(events)] == [first.id, beside.id]
    assert harms(events, behind) == []


def test_a_curse_tongue_does_not_reach_past_a_wall() -> None:
    world = make_world(WALLED, seed=3)
    p = mage(world, "curse", adept=True)
    world.move_actor(p, 6, 3)
    world.step()
    shielded = hardy_monster(world, "orc", 8, 3)  # end of the stem, past the wall at (7, 3)
    events = act(world, p.id, Cast("curse", direction=(1, 0)), tag=1)
    assert casts(events)[0].success
    assert harms(events, shielded) == []
    # In the open the same T strikes the stem's end.
    open_target = hardy_monster(world, "orc", 6, 5)
    world.move_actor(open_target, 8, 5)
    world.move_actor(p, 6, 5)
    events = act(world, p.id, Cast("curse", direction=(1, 0)), tag=2)
    assert len(harms(events, open_target)) == 1


def test_a_poison_cloud_does_not_seep_through_a_wall() -> None:
    world = make_world(WALLED, seed=3)
    p = mage(world)
    cloud = upgrade(SPELLS["poison_cloud"])  # radius 4: reaches past the wall
    inside = hardy_monster(world, "orc", 5, 3)
    behind = hardy_monster(world, "orc", 8, 3)
    events: list[Event] = []
    casting.apply_spell(world, p, cloud, None, (6, 3), events)
    assert inside.statuses.has(StatusKind.POISONED)
    assert not behind.statuses.has(StatusKind.POISONED)


def test_confusion_does_not_confuse_a_monster_that_cannot_be_confused() -> None:
    world = make_world(HALL, seed=3)
    p = mage(world, "confusion", adept=True)
    mdef = dataclasses.replace(CONTENT.monsters["orc"], flags=("no_confusion",))
    calm = world.add_actor(lambda aid: new_monster(aid, mdef, 1, 6, 3, Mind.ASLEEP), 1, 6, 3)
    plain = hardy_monster(world, "orc", 6, 5, Mind.ASLEEP)
    for cell, who, confused in (((6, 3), calm, False), ((6, 5), plain, True)):
        events = act(world, p.id, Cast("confusion", target=cell), tag=1)
        assert casts(events)[0].success
        assert who.statuses.has(StatusKind.CONFUSED) == confused, who.kind


def test_a_reflecting_monster_sends_a_spark_bolt_back_at_its_caster() -> None:
    world = make_world(HALL, seed=11)
    caster = world.join("ann", "mage")
    caster.dodge = 0.0
    world.move_actor(caster, 2, 2)
    dragon = spawn(world, "young_silver_dragon", 5, 2, Mind.HUNTING)
    dragon.dodge = 0.0
    assert "reflection" in dragon.abilities
    events: list[Event] = []
    casting.apply_spell(world, caster, SPELLS["spark"], (1, 0), None, events)
    for _ in range(4):
        events += world.step()
    harmed = [e for e in events if isinstance(e, Harmed) and e.damage_type == "fire"]
    assert harmed and all(e.target == caster.id for e in harmed)
    assert dragon.hp == dragon.max_hp


ALTAR_ROOM = """
#######
#<._..#
#.....#
#######
"""


def test_an_altar_upgrade_doubles_a_spells_numbers_once() -> None:
    from server.sim.commands import Upgrade

    world = make_world(ALTAR_ROOM, seed=3)
    p = world.join("ann", "mage")
    casting.learn(world, p, "fireball", [])
    p.en = p.max_en = 200
    assert _act(world, p, Upgrade("fireball")) == [RejectReason.NO_ALTAR]
    world.move_actor(p, 3, 1)
    start = world.tick
    assert _act(world, p, Upgrade("fireball")) == []
    # the upgrade is paid at the first tick; energy comes back a point at a
    # time on the player's own clock (upkeep.regenerate) from that tick on
    back = sum(
        (t + p.id) % world.status_rules.regeneration.energy_ticks == 0
        for t in range(start, world.tick)
    )
    assert p.en == 200 - 10 * SPELLS["fireball"].level + back
    spell = casting._spell("fireball", p)
    assert spell is not None and spell.upgraded
    assert (spell.power, spell.attenuation, spell.radius) == (20, 1.6, 6)
    assert _act(world, p, Upgrade("fireball")) == [RejectReason.NO_CHOICE]
    assert _act(world, p, Upgrade("shock")) == [RejectReason.UNKNOWN_SPELL]


def _act(world: World, actor: Actor, command: Command) -> list[RejectReason]:
    world.submit(actor.id, command, 99)
    out: list[RejectReason] = []
    for _ in range(4):
        out += [e.reason for e in world.step() if isinstance(e, Rejected) and e.actor == actor.id]
    return out


def test_seed_004_spell_bonuses_follow_skill_stat_and_level() -> None:
    world = make_world(HALL, seed=2)
    mage = world.join("ann", "mage")
    spell = SPELLS["magic_missile"]
    # unskilled: -4 on NetHack's d20, 5% of accuracy a point
    assert casting.spell_accuracy(mage, spell) == mage.eff_accuracy * (1 - 4 * 0.05)
    mage.skills[spell.school] = 180  # expert: +3
    assert casting.spell_accuracy(mage, spell) == mage.eff_accuracy * (1 + 3 * 0.05)
    bonus = casting._bonus(world, mage)
    assert bonus is not None and bonus(10) == 10  # level 1: below 5, no bonus
    mage.level = 5  # Int 18 at level 5: +1
    bonus = casting._bonus(world, mage)
    assert bonus is not None and bonus(10) == 11
    rat = spawn(world, "rat", 5, 5)
    assert casting._bonus(world, rat) is None


def test_an_upgraded_ray_spell_flies_twice_its_drawn_range() -> None:
    world = make_world(HALL, seed=4)
    caster = world.join("ann", "mage")
    caster.upgraded.add("magic_missile")
    spell = casting._spell("magic_missile", caster)
    assert spell is not None and spell.upgraded
    events: list[Event] = []
    lengths = set()
    for _ in range(40):
        events.clear()
        world.move_actor(caster, 1, 4)
        casting.apply_spell(world, caster, spell, (1, 0), None, events)
        (ray,) = [e for e in events if isinstance(e, RayFired)]
        lengths.add(len(ray.cells))
    # drawn 7..13 and doubled: 14..26 cells, here cut by the hall's far wall and bounces
    assert max(lengths) > 13


def test_a_fireball_burns_scrolls_lying_in_its_blast() -> None:
    world = make_world(HALL, seed=4)
    caster = world.join("ann", "mage")
    world.move_actor(caster, 2, 4)
    for x in range(8, 11):
        world.levels[1].items[(x, 4)] = [Item("scroll_of_spark", 5)]
    events: list[Event] = []
    casting.explode(world, caster, (9, 4), "fire", 60, 0.8, 3, events)
    # Seed 003: a fire hater burns when the damage beats 1d40; the centre takes
    # 60 and its ring 60 x 0.8 = 48, both above 40, so every stack burns
    burnt = [e for e in events if isinstance(e, ItemDestroyed)]
    assert len(burnt) == 3 and all(e.damage_type == "fire" for e in burnt)
    assert not any(world.levels[1].items.get((x, 4)) for x in range(8, 11))
