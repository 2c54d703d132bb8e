"""Seed rules that the world used to play differently (issue 15, part A), played
on ASCII levels: seed 003's status amounts past our caps and its stacking, the
sleep ray's save, seed 004's fireball without the damage bonus and its bonus
edge, seed 002's sleeping hero, seed 003's fire- and cold-haters and holy orb.

Every number below is the seed's; statistical checks compare against the
exact probability with :func:`tests.sim.conftest.within` (binomial sigmas).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from server.content import default_content
from server.content.spells import default_spells
from server.content.statuses import StatusKind, default_statuses
from server.sim import casting, projectiles, zapping
from server.sim import spellcasting as sc
from server.sim.actors import Actor, Mind
from server.sim.commands import Cast, Quaff, Wear
from server.sim.events import (
    Attacked,
    Event,
    Exploded,
    ItemDestroyed,
    Notice,
    RayFired,
    Rejected,
    RejectReason,
    StatusChanged,
)
from server.sim.items import Item, add_to_pack
from server.sim.level import Level
from server.sim.status import Statuses
from server.sim.throwing import throw_miss_chance
from server.sim.world import World
from tests.sim.conftest import act, hardy, hardy_monster, harms, make_world, within

CONTENT = default_content()
SPELLS = default_spells().spells

CORRIDOR = """
########################
#<.....................#
########################
"""

HALL = """
################
#<.............#
#..............#
#..............#
#..............#
#..............#
################
"""


def fresh(world: World, actor: Actor) -> None:
    """Between trials: no statuses, full health, awake and hunting."""
    actor.statuses = Statuses(world.status_rules)
    actor.hp = actor.max_hp
    if not actor.is_player:
        actor.mind = Mind.HUNTING


def twin(world: World) -> np.random.Generator:
    """A generator in the same state as the world's, to predict its next draws."""
    copy = np.random.Generator(np.random.PCG64())
    copy.bit_generator.state = world.rng.bit_generator.state
    return copy


# --- 1. seed 003's amounts are not cut by statuses.toml's caps ------------------------------


def test_300_electricity_stuns_up_to_32_turns_half_the_time() -> None:
    """Note (c): at least 11 damage, a 1/2 chance, stunned 1d(dam / 8), and a
    maximum of 32 when dam > 240. statuses.toml caps stun at 10 rounds for
    characters; a monster gets the seed's 1..32."""
    world = make_world(CORRIDOR, seed=5)
    p = world.join("ann")
    ogre = hardy_monster(world, "ogre", 3, 1)
    assert world.status_rules.statuses[StatusKind.STUNNED].max_rounds == 10
    n, stunned, long_stuns, seen = 800, 0, 0, set()
    for _ in range(n):
        fresh(world, ogre)
        world.harm_typed(ogre, 300, "electricity", p, "ray", [])
        rounds = ogre.statuses.rounds(StatusKind.STUNNED)
        if rounds:
            stunned += 1
            long_stuns += rounds > 10
            seen.add(rounds)
    assert within(stunned, n, 0.5)
    assert within(long_stuns, stunned, 22 / 32)  # 11..32 of a uniform 1..32
    assert max(seen) == 32 and min(seen) == 1


def test_a_failed_sleep_save_gives_a_sleep_value_of_350() -> None:
    """Note (B): "it is given a sleep value of 350", past the 50-round cap."""
    world = make_world(CORRIDOR, seed=3)
    p = world.join("ann")
    rat = hardy_monster(world, "rat", 3, 1)  # level 0: resists only when 2 > 1d(damage)
    events: list[Event] = []
    zapping.fire_ray(world, p, (p.x, p.y), (1, 0), "sleep", (100, 1), events)
    assert rat.statuses.rounds(StatusKind.ASLEEP) == 350
    assert rat.mind == Mind.ASLEEP
    assert StatusChanged(1, 3, 1, rat.id, int(StatusKind.ASLEEP), True) in events
    assert harms(events, rat) == [], "sleep deals no damage"


# --- 2. stacking (final notes iii-v) ---------------------------------------------------------


def test_a_stunned_monster_gets_half_of_a_new_stun_up_to_200() -> None:
    """Note (i): sound stuns 1d(dam / 8); final note iii: an already stunned
    monster gets an additional half of the new amount, up to 200."""
    world = make_world(CORRIDOR, seed=11)
    p = world.join("ann")
    ogre = hardy_monster(world, "ogre", 3, 1)
    world.harm_typed(ogre, 80, "sound", p, "ray", [])
    first = ogre.statuses.rounds(StatusKind.STUNNED)
    assert 1 <= first <= 10
    # Sound on an ogre on floor: no dodge, no resistance row, chance 1, no
    # save: the only draw is the uniform 1..80 // 8.
    second = int(twin(world).integers(1, 11))
    world.harm_typed(ogre, 80, "sound", p, "ray", [])
    assert ogre.statuses.rounds(StatusKind.STUNNED) == first + second // 2
    ogre.statuses.impose(StatusKind.STUNNED, 199)
    world.harm_typed(ogre, 80, "sound", p, "ray", [])
    assert ogre.statuses.rounds(StatusKind.STUNNED) == 200


def test_a_confused_monster_gets_half_of_a_new_confusion() -> None:
    """Note (h): confusion 1d(dam / 16); final note iv: half again when confused."""
    world = make_world(CORRIDOR, seed=12)
    p = world.join("ann")
    ogre = hardy_monster(world, "ogre", 3, 1)
    world.harm_typed(ogre, 160, "confusion", p, "ray", [])
    first = ogre.statuses.rounds(StatusKind.CONFUSED)
    assert 1 <= first <= 10
    second = int(twin(world).integers(1, 11))
    world.harm_typed(ogre, 160, "confusion", p, "ray", [])
    assert ogre.statuses.rounds(StatusKind.CONFUSED) == first + second // 2


def test_breathers_of_sound_are_never_stunned_and_no_conf_never_confused() -> None:
    """Final notes iii and iv, in play: a monster resisting sound takes force
    without a stun; the umber hulk (NO_CONF) takes confusion unconfused."""
    world = make_world(CORRIDOR, seed=13)
    p = world.join("ann")
    ogre = hardy_monster(world, "ogre", 3, 1)
    ogre.resist = {**ogre.resist, "sound": 1}
    hulk = hardy_monster(world, "umber_hulk", 5, 1)
    for _ in range(30):
        ogre.hp = hulk.hp = 1000
        world.harm_typed(ogre, 120, "force", p, "beam", [])
        world.harm_typed(hulk, 160, "confusion", p, "ray", [])
        world.move_actor(ogre, 3, 1)
    assert not ogre.statuses.has(StatusKind.STUNNED)
    assert not hulk.statuses.has(StatusKind.CONFUSED)


def test_a_player_keeps_the_seed_001_caps() -> None:
    """Underhall's decision (docs/rules.md): seed 003 sizes monsters'
    statuses; a character's stay under statuses.toml's caps."""
    world = make_world(CORRIDOR, seed=14)
    p = hardy(world.join("ann"))
    for _ in range(20):
        p.hp = p.max_hp
        world.harm_typed(p, 300, "sound", None, "breath", [])
    assert p.statuses.rounds(StatusKind.STUNNED) <= 10


# --- 3. the sleep ray's save (note B) --------------------------------------------------------


def _sleep_trials(kind: str, dice: tuple[int, int], n: int, seed: int) -> int:
    world = make_world(CORRIDOR, seed=seed)
    p = world.join("ann")
    monster = hardy_monster(world, kind, 3, 1)
    slept = 0
    for _ in range(n):
        fresh(world, monster)
        zapping.fire_ray(world, p, (p.x, p.y), (1, 0), "sleep", dice, [])
        slept += monster.statuses.has(StatusKind.ASLEEP)
    return slept


def test_a_level_14_monster_never_sleeps_from_a_1d10_ray() -> None:
    """Level + 2 = 16 is always greater than 1d10: the minotaur resists."""
    assert CONTENT.monsters["minotaur"].level == 14
    assert _sleep_trials("minotaur", (1, 10), 200, seed=21) == 0


def test_the_sleep_save_has_the_seed_s_odds() -> None:
    """Resists when level + 2 > 1d(damage): a level-14 monster against exactly
    40 sleeps when the roll is 16..40, 25 times in 40."""
    n = 600
    assert within(_sleep_trials("minotaur", (40, 1), n, seed=22), n, 25 / 40)


def test_a_unique_saves_with_level_plus_20() -> None:
    """The goblin king (level 6, unique) resists when 26 > 1d40: sleeps 15 in 40."""
    n = 600
    assert "unique" in CONTENT.monsters["goblin_king"].flags
    assert within(_sleep_trials("goblin_king", (40, 1), n, seed=23), n, 15 / 40)


def test_a_monster_that_shrugs_off_sleep_notices_the_zapper() -> None:
    world = make_world(CORRIDOR, seed=24)
    p = world.join("ann")
    minotaur = hardy_monster(world, "minotaur", 3, 1, mind=Mind.ASLEEP)
    events: list[Event] = []
    zapping.fire_ray(world, p, (p.x, p.y), (1, 0), "sleep", (1, 10), events)
    assert minotaur.mind == Mind.HUNTING and minotaur.target == p.id


# --- 4. and 7. seed 004's damage bonus ---------------------------------------------------------


def _world_with_caster_stat(stat: int, seed: int) -> World:
    mage = dataclasses.replace(CONTENT.classes["mage"], casting_stat=stat)
    content = dataclasses.replace(CONTENT, classes={**CONTENT.classes, "mage": mage})
    return World(seed, content, levels={1: Level.from_ascii(HALL, depth=1)}, populate=False)


def test_fireball_explodes_for_12d6_without_the_damage_bonus() -> None:
    """Seed 004: "Base 12d6 damage explosion ...; no spell damage bonus". A
    level-14 caster with Int 25 would add 3 to other spells (mean 45); the
    fireball's blast averages 42 and never exceeds 72."""
    world = _world_with_caster_stat(25, seed=31)
    p = world.join("ann", "mage")
    p.level = 14
    spell = SPELLS["fire_ray"]
    bonus = casting._bonus(world, p)
    assert bonus is not None and bonus(10) == 13
    ogre = hardy_monster(world, "ogre", 5, 1)
    blasts = []
    for _ in range(300):
        fresh(world, ogre)
        world.move_actor(p, 2, 1)
        events: list[Event] = []
        casting.apply_spell(world, p, spell, (1, 0), None, events)
        (blast,) = harms(events, ogre, "ball")
        blasts.append(blast.damage)
    mean, sd = 42.0, (12 * 35 / 12) ** 0.5
    assert abs(sum(blasts) / len(blasts) - mean) <= 4.5 * sd / len(blasts) ** 0.5
    assert max(blasts) <= 72 and min(blasts) >= 12


def test_a_dull_caster_s_magic_missile_never_drops_below_1() -> None:
    """Seed 004's -3 with Int <= 9, as NetHack applies it: 1d6 rolls of 1..4
    become 1, 5 becomes 2, 6 becomes 3 (P(1) = 4/6); a roll of 0 stays 0."""
    world = _world_with_caster_stat(9, seed=32)
    p = world.join("ann", "mage")
    spell = SPELLS["magic_missile"]
    ogre = hardy_monster(world, "ogre", 4, 1)
    bonus = casting._bonus(world, p)
    assert bonus is not None and bonus(0) == 0 and bonus(1) == 1 and bonus(4) == 1
    damages = []
    for _ in range(300):
        fresh(world, ogre)
        world.move_actor(p, 2, 1)
        events: list[Event] = []
        casting.apply_spell(world, p, spell, (1, 0), None, events)
        damages += [h.damage for h in harms(events, ogre)]
    assert set(damages) <= {1, 2, 3}
    assert within(damages.count(1), len(damages), 4 / 6)


# --- 5. a sleeping hero is not surprised (seed 002) ------------------------------------------------


def test_a_sleeping_player_is_not_surprise_attacked_but_a_paralysed_one_is() -> None:
    world = make_world(HALL, seed=41)
    p = hardy(world.join("ann"))
    world.step()
    orc = hardy_monster(world, "orc", p.x + 1, p.y)
    world.add_status(p, StatusKind.ASLEEP, 5, [])
    events: list[Event] = []
    world.melee(orc, p, events)
    (attack,) = [e for e in events if isinstance(e, Attacked)]
    assert not attack.surprise
    world.add_status(p, StatusKind.ASLEEP, 5, [])
    world.add_status(p, StatusKind.PARALYSED, 2, [])
    events = []
    world.melee(orc, p, events)
    (attack,) = [e for e in events if isinstance(e, Attacked)]
    assert attack.surprise
    # A sleeping monster still is (seed 002: "an enemy is sleeping").
    orc.mind = Mind.ASLEEP
    assert world.is_surprise(p, orc)


# --- 6. fire- and cold-haters, holy orb -----------------------------------------------------------


def _burn_trials(kind: str, key: str, n: int, seed: int) -> int:
    """How often a ray of ``kind`` (6d6, average 21) destroys ``key`` lying in its path."""
    world = make_world(CORRIDOR, seed=seed)
    p = world.join("ann")
    destroyed = 0
    for _ in range(n):
        world.levels[1].items[(4, 1)] = [Item(key)]
        events: list[Event] = []
        zapping.fire_ray(world, p, (p.x, p.y), (1, 0), kind, (6, 6), events)
        destroyed += any(isinstance(e, ItemDestroyed) for e in events)
        world.levels[1].items.pop((4, 1), None)
    return destroyed


def test_fire_burns_a_mace_but_spares_a_long_sword() -> None:
    """Hafted weapons are fire-haters (threshold 40: 21 > 1d40 for rolls
    1..20, 1/2); swords are not, metal or not."""
    assert CONTENT.items["mace"].metallic
    n = 400
    assert within(_burn_trials("fire", "mace", n, seed=51), n, 20 / 40)
    assert _burn_trials("fire", "long_sword", 100, seed=52) == 0
    assert _burn_trials("fire", "plate_mail", 100, seed=53) == 0


def test_cold_shatters_an_oil_flask_and_fire_does_not_burn_it() -> None:
    n = 400
    assert within(_burn_trials("cold", "flask_of_oil", n, seed=54), n, 20 / 40)
    assert _burn_trials("fire", "flask_of_oil", 100, seed=55) == 0
    assert _burn_trials("cold", "dart", 100, seed=56) == 0


def test_a_holy_blast_destroys_cursed_objects_only() -> None:
    world = make_world(HALL, seed=57)
    p = world.join("ann")
    world.levels[1].items[(5, 3)] = [
        Item("dagger", cursed=True),
        Item("dagger"),
        Item("stormcaller", cursed=True),
    ]
    events: list[Event] = []
    casting.explode(world, p, (5, 3), "holy", 5, 1.0, 2, events)
    burnt = [e.item for e in events if isinstance(e, ItemDestroyed)]
    assert burnt == ["dagger"]
    left = world.levels[1].items[(5, 3)]
    assert [(i.key, i.cursed) for i in left] == [("dagger", False), ("stormcaller", True)]


# --- D. seed 004's casting costs and refusals, magic resistance, cone of cold --------------


def _caster(stat: int, seed: int) -> tuple[World, Actor]:
    world = _world_with_caster_stat(stat, seed)
    p = world.join("ann", "mage")
    world.step()
    p.known_spells["spark"] = world.tick
    p.skills = {"attack": 180}
    p.food.nourishment = 300
    return world, p


def _spark(world: World, p: Actor, tag: int) -> list[Event]:
    p.en = p.max_en
    return act(world, p.id, Cast("spark", direction=(1, 0)), tag=tag)


def test_a_wizard_s_casting_hunger_follows_its_intelligence() -> None:
    """Seed 004 (NetHack 3.6): a level-1 spell costs 2 x 5 = 10 nutrition; a
    Wizard with Int 17+ pays nothing, 16 a quarter (2), 15 a half (5)."""
    for stat, cost in ((18, 0), (17, 0), (16, 2), (15, 5), (14, 10)):
        world, p = _caster(stat, seed=90 + stat)
        _spark(world, p, 1)
        assert p.food.nourishment == 300 - cost, stat


def test_other_roles_pay_twice_the_energy_cost_in_nutrition() -> None:
    monk = dataclasses.replace(CONTENT.classes["monk"], casting_stat=25)
    content = dataclasses.replace(CONTENT, classes={**CONTENT.classes, "monk": monk})
    world = World(95, content, levels={1: Level.from_ascii(HALL, depth=1)}, populate=False)
    p = world.join("ann", "monk")
    world.step()
    p.known_spells["heal_wounds"] = world.tick
    book = add_to_pack(p.inventory, Item("blank_spellbook"), CONTENT)
    assert book is not None
    act(world, p.id, Wear(book.letter), tag=1)
    p.food.nourishment = 300
    act(world, p.id, Cast("heal_wounds"), tag=2)
    assert p.food.nourishment == 300 - 10 * SPELLS["heal_wounds"].level


def test_a_fainting_caster_cannot_cast_and_a_weak_one_stops_at_3() -> None:
    """NetHack 3.6: at 10 nutrition or less no spell; the cost never takes
    the caster below 3."""
    world, p = _caster(14, seed=96)
    p.food.nourishment = 10
    events = _spark(world, p, 1)
    assert Rejected(p.id, 1, RejectReason.CANNOT_CAST) in events
    assert p.food.nourishment == 10
    p.food.nourishment = 11
    events = _spark(world, p, 2)
    assert not any(isinstance(e, Rejected) for e in events)
    assert p.food.nourishment == 3


def test_an_overtaxed_caster_cannot_cast() -> None:
    """Seed 004: not overtaxed or overloaded; NetHack's weight capacity is
    25 x (Str + Con) + 50 (Con counted as Str): 550 for the mage's 10, and
    overtaxed from 1.5 x 550 = 825 over it."""
    assert sc.weight_capacity(10) == 550
    assert [sc.encumbrance(w, 10) for w in (550, 551, 1374, 1375, 1650)] == [0, 1, 3, 4, 5]
    world, p = _caster(18, seed=97)
    for _ in range(4):
        p.inventory.append(Item("plate_mail"))
    events = _spark(world, p, 1)
    assert Rejected(p.id, 1, RejectReason.CANNOT_CAST) in events


def test_magic_missile_does_nothing_to_magic_resistance() -> None:
    world = make_world(CORRIDOR, seed=98)
    p = world.join("ann")
    lich = hardy_monster(world, "lich", 3, 1)
    ogre = hardy_monster(world, "ogre", 4, 1)
    events: list[Event] = []
    zapping.fire_ray(world, p, (p.x, p.y), (1, 0), "magic_missile", (2, 6), events)
    assert harms(events, lich) and all(h.damage == 0 for h in harms(events, lich))
    assert all(h.damage >= 2 for h in harms(events, ogre))


def test_cone_of_cold_adds_d3s_against_fire_resistance() -> None:
    """Seed 004: (XL / 2 + 1) d6, plus (XL / 2 + 1) d3 against a fire-resistant
    monster: at level 1 a mean of 3.5 + 2 against the dwarf warlock (fire 1)."""
    world, p = _caster(13, seed=99)  # no damage bonus
    p.skills = {}  # below Skilled: a ray (seed 004)
    warlock = hardy_monster(world, "dwarf_warlock", 5, 1)
    assert warlock.resistance("fire") == 1 and warlock.resistance("cold") == 0
    hits = []
    for _ in range(200):
        fresh(world, warlock)
        world.move_actor(p, 2, 1)
        events: list[Event] = []
        casting.apply_spell(world, p, SPELLS["cone_of_cold"], (1, 0), None, events)
        hits += [h.damage for h in harms(events, warlock)]
    sd = (35 / 12 + 8 / 12) ** 0.5
    assert abs(sum(hits) / len(hits) - 5.5) <= 4.5 * sd / len(hits) ** 0.5
    assert max(hits) > 6


# --- D. seed 002's Furious Berserker ----------------------------------------------------------


def _hit_sleeping_orc(fury: bool) -> int:
    world = make_world(HALL, seed=100)
    p = world.join("ann", "warrior")
    world.step()
    p.hp = p.max_hp // 2 - 1
    if fury:
        p.abilities.add("fury")
    orc = hardy_monster(world, "orc", p.x + 1, p.y, mind=Mind.ASLEEP)
    events: list[Event] = []
    world.melee(p, orc, events)
    (attack,) = [e for e in events if isinstance(e, Attacked)]
    return attack.damage


def test_a_furious_warrior_below_half_health_hits_half_again() -> None:
    """Seed 002: "A Furious Berserker damage attack will be multiplied by 1.5
    (rounded down)"; the same draws with and without the ability."""
    plain, furious = _hit_sleeping_orc(False), _hit_sleeping_orc(True)
    assert plain > 0 and furious == plain * 3 // 2


# --- D. seed 001's hunger-draining weapons and the avatar status ------------------------------


def _hunger_after(blade: str, ticks: int) -> int:
    world = make_world(HALL, seed=101)
    p = world.join("ann", "warrior")
    p.equipment["weapon"] = Item(blade, letter="a")
    world.refresh_bonus(p)
    for _ in range(ticks):
        world.step()
    return p.food.hunger


def test_a_hunger_draining_weapon_triples_the_hunger_rate() -> None:
    """Seed 001: "hunger-draining weapons triple it" (1 a hunger interval at
    full health and energy, 3 with the famished blade)."""
    assert CONTENT.items["famished_blade"].hunger_drain
    start = default_statuses().hunger.start_rating
    plain = start - _hunger_after("long_sword", 120)
    drained = start - _hunger_after("famished_blade", 120)
    assert plain >= 2 and drained == 3 * plain


def test_the_avatar_keeps_nourishment_through_death() -> None:
    """Seed 001: with the avatar status "dying does not reset your
    nourishment, though it does increase your hunger rating" (by 50)."""
    world = make_world(HALL, seed=102)
    p = world.join("ann")
    world.step()
    potion = add_to_pack(p.inventory, Item("potion_of_avatar"), CONTENT)
    assert potion is not None
    act(world, p.id, Quaff(potion.letter), tag=1)
    assert p.statuses.has(StatusKind.AVATAR)
    p.food.nourishment, p.food.hunger = 120, 10
    world.harm_typed(p, 10_000, None, None, "hunger", [])
    assert not p.alive
    for _ in range(40):
        world.step()
    assert p.alive
    assert (p.food.nourishment, p.food.hunger) == (120, 60)
    assert p.statuses.has(StatusKind.AVATAR)
    # Without it the bar starts afresh.
    p.statuses.remove(StatusKind.AVATAR)
    p.food.nourishment, p.food.hunger = 120, 10
    world.harm_typed(p, 10_000, None, None, "hunger", [])
    for _ in range(40):
        world.step()
    assert (p.food.nourishment, p.food.hunger) == (300, 50)


def test_water_rusts_metal_that_is_not_rust_proof() -> None:
    """Underhall's decision for seed 001's rust: a water or storm hit rusts
    the first metallic worn item, 1 plus at a time, to -3; rust-proof items
    and artifacts never rust."""
    world = make_world(HALL, seed=103)
    p = hardy(world.join("ann", "warrior"))
    sword = Item("long_sword", letter="a")
    p.equipment = {"weapon": sword}
    world.refresh_bonus(p)
    power = p.eff_power
    events: list[Event] = []
    for _ in range(5):
        world.harm_typed(p, 5, "water", None, "breath", events)
    assert sword.plus == -3 and p.eff_power == power - 3
    assert sum(1 for e in events if isinstance(e, Notice) and e.code == "rusted") == 3
    world.harm_typed(p, 5, "fire", None, "breath", events)
    assert sword.plus == -3
    proof = Item("stormcaller", letter="b")
    p.equipment = {"weapon": proof}
    world.refresh_bonus(p)
    world.harm_typed(p, 5, "storm", None, "breath", [])
    assert proof.plus == 0


def test_a_skilled_fireball_is_2_to_9_small_blasts_doubled_against_cold_resistance() -> None:
    """Seed 004 (Skilled or Expert): 2 to 9 explosions of 3 x 3, each XL / 2 +
    1 + the damage bonus (level 10, Int 18: 6 + 1 = 7); the frost giant
    (cold 3, fire -1) takes double, then its fire vulnerability's 3/2: 21."""
    world, p = _caster(18, seed=104)
    p.level = 10
    assert sc.skill_for_practice(p.skills["attack"]) >= sc.SKILLED
    world.move_actor(p, 2, 3)
    giant = hardy_monster(world, "frost_giant", 7, 3)
    ogre = hardy_monster(world, "ogre", 7, 5)
    world.step()
    counts = []
    for _ in range(300):
        fresh(world, giant)
        fresh(world, ogre)
        events: list[Event] = []
        casting.apply_spell(world, p, SPELLS["fire_ray"], (1, 0), None, events)
        blasts = [e for e in events if isinstance(e, Exploded)]
        assert not [e for e in events if isinstance(e, RayFired)], "no ray at Skilled"
        assert 2 <= len(blasts) <= 9
        counts.append(len(blasts))
        assert {h.damage for h in harms(events, giant)} == {21}
        assert {h.damage for h in harms(events, ogre)} <= {7}
    # An open hall around the aim point: every extra blast lands, 1 + 1d8.
    mean, sd = 5.5, (63 / 12) ** 0.5
    assert abs(sum(counts) / len(counts) - mean) <= 4.5 * sd / len(counts) ** 0.5


def test_bane_items_lower_the_miss_chance_against_their_kind() -> None:
    """Seed 001: M is "potentially less if you have bane items equipped that
    pertain to the target"; Underhall halves it per such item."""
    world = make_world(HALL, seed=105)
    p = world.join("ann", "warrior")
    imp = hardy_monster(world, "imp", 5, 3)
    ogre = hardy_monster(world, "ogre", 7, 3)
    assert projectiles.bane_miss(world, p, imp, 0.1) == 0.1
    p.equipment["head"] = Item("demonbane_circlet", letter="z")
    assert projectiles.bane_miss(world, p, imp, 0.1) == 0.05
    assert projectiles.bane_miss(world, p, ogre, 0.1) == 0.1
    # The throwing formula then uses it: (M + 40%) / (1 + L // 2).
    assert throw_miss_chance(0.05, 1) == 0.45


def test_drain_life_doubles_on_the_living_and_takes_maximum_health() -> None:
    """Seed 004: base d8, then double damage and as much off the maximum
    health unless the monster resists; the undead are immune (seed 003's
    GF_OLD_DRAIN row)."""
    world, p = _caster(18, seed=106)
    hardy(p)
    p.known_spells["drain_life"] = world.tick
    ogre = hardy_monster(world, "ogre", 2, 1)
    seen = set()
    for tag in range(1, 41):
        fresh(world, ogre)
        ogre.max_hp = ogre.hp = 1000
        ogre.mind = Mind.ASLEEP
        if (ogre.x, ogre.y) != (2, 1):
            world.move_actor(ogre, 2, 1)
        p.en = p.max_en
        events = act(world, p.id, Cast("drain_life", direction=(1, 0)), tag=tag)
        for _ in range(3):
            events += world.step()
        (hit,) = harms(events, ogre)
        assert hit.damage_type == "death" and hit.damage % 2 == 0 and 2 <= hit.damage <= 16
        assert ogre.max_hp == 1000 - hit.damage
        seen.add(hit.damage)
    assert len(seen) >= 6
    world.remove_monster(ogre)
    zombie = hardy_monster(world, "zombie", 2, 1)
    p.en = p.max_en
    events = act(world, p.id, Cast("drain_life", direction=(1, 0)), tag=99)
    for _ in range(3):
        events += world.step()
    assert [h.damage for h in harms(events, zombie)] == [0]
    assert zombie.max_hp == 1000
