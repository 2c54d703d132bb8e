"""Rays in the ticking world (issue 3, seed 000): zapping wands, charges and
identification, doors, bounces back at the zapper, digging, sleep, burning
scrolls on the floor, reflection and breath."""

from __future__ import annotations

import dataclasses

from server.content import Terrain, default_content
from server.content.statuses import StatusKind
from server.sim import zapping
from server.sim.actors import Actor, Mind, new_monster
from server.sim.combat import AttackOutcome
from server.sim.commands import Zap
from server.sim.events import (
    Event,
    Harmed,
    ItemDestroyed,
    Notice,
    RayFired,
    Rejected,
    RejectReason,
    StatusChanged,
    TerrainChanged,
    Used,
)
from server.sim.items import Item, add_to_pack, new_item
from server.sim.world import World
from tests.sim.conftest import hardy, hardy_monster, harms, make_world, spawn

CONTENT = default_content()

CORRIDOR = """
########################
#<.....................#
########################
"""


def wand(world: World, actor: Actor, key: str, charges: int = 3) -> Item:
    held = add_to_pack(actor.inventory, Item(key, charges=charges), world.content)
    assert held is not None
    return held


def zap(
    world: World, actor: Actor, item: Item, direction: tuple[int, int], tag: int = 1
) -> list[Event]:
    """Zap once the actor is ready; the events of the tick it zapped in."""
    while actor.next_act > world.tick:
        world.step()
    world.submit(actor.id, Zap(item.letter, *direction), tag)
    events = world.step()
    assert actor.last_tag == tag
    return events


def rays(events: list[Event]) -> list[RayFired]:
    return [e for e in events if isinstance(e, RayFired)]


# --- zapping a wand ------------------------------------------------------------------------


def test_a_fire_ray_down_a_corridor_burns_the_monster_in_its_path() -> None:
    world = make_world(CORRIDOR, seed=5)
    p = world.join("ann")
    orc = hardy_monster(world, "orc", 5, 1)
    fire = wand(world, p, "wand_of_fire", charges=3)
    assert not fire.known
    events = zap(world, p, fire, (1, 0))
    assert Used(1, p.x, p.y, p.id, "zap", "wand_of_fire") in events
    assert Notice(p.id, "identified", ("wand_of_fire",)) in events
    assert fire.known and fire.charges == 2
    (ray,) = rays(events)
    assert (ray.x, ray.y, ray.source, ray.kind) == (p.x, p.y, p.id, "fire")
    # Straight down the corridor, cell after cell, no bounce (range <= 13).
    assert ray.cells == tuple((x, 1) for x in range(2, 2 + len(ray.cells)))
    assert 7 - 2 <= len(ray.cells) <= 13 - 2 and ray.bounces == ()
    assert [h[:2] for h in ray.hits] == [(orc.id, False)]
    (harm,) = harms(events, orc)
    assert (harm.source, harm.damage_type, harm.cause) == (p.id, "fire", "ray")
    lo, hi = CONTENT.items["wand_of_fire"].dice or (0, 0)
    assert lo <= harm.damage <= lo * hi
    assert orc.hp == orc.max_hp - harm.damage
    # A known wand does not identify itself again.
    events = zap(world, p, fire, (1, 0), tag=2)
    assert not any(isinstance(e, Notice) for e in events)
    assert fire.charges == 1


def test_a_wand_with_no_charges_does_nothing_but_spends_the_action() -> None:
    world = make_world(CORRIDOR)
    p = world.join("ann")
    orc = hardy_monster(world, "orc", 5, 1)
    empty = wand(world, p, "wand_of_fire", charges=0)
    events = zap(world, p, empty, (1, 0))
    assert Notice(p.id, "nothing_happens", ("wand_of_fire",)) in events
    assert rays(events) == [] and harms(events, orc) == []
    assert not any(isinstance(e, Rejected) for e in events)
    assert empty.charges == 0
    assert p.next_act == world.tick - 1 + p.speed, "the action is spent"


def test_zapping_something_that_is_not_a_wand_is_refused() -> None:
    world = make_world(CORRIDOR)
    p = world.join("ann")
    events = zap(world, p, p.inventory[0], (1, 0))
    assert Rejected(p.id, 1, RejectReason.WRONG_ITEM) in events


def test_a_fire_ray_burns_a_closed_door_and_stops_there() -> None:
    world = make_world("""
        ############
        #<...+.....#
        ############
    """)
    p = world.join("ann")
    events = zap(world, p, wand(world, p, "wand_of_fire"), (1, 0))
    (ray,) = rays(events)
    assert ray.cells == ((2, 1), (3, 1), (4, 1), (5, 1))
    assert TerrainChanged(1, 5, 1, int(Terrain.FLOOR)) in events
    assert world.levels[1].terrain_at(5, 1) == Terrain.FLOOR
    assert world.levels[1].passable[1, 5]


def test_a_magic_missile_is_absorbed_by_a_closed_door() -> None:
    world = make_world("""
        ############
        #<...+.....#
        ############
    """)
    p = world.join("ann")
    events = zap(world, p, wand(world, p, "wand_of_magic_missile"), (1, 0))
    (ray,) = rays(events)
    assert ray.cells[-1] == (5, 1)
    assert not any(isinstance(e, TerrainChanged) for e in events)
    assert world.levels[1].terrain_at(5, 1) == Terrain.DOOR_CLOSED


def test_a_ray_bouncing_straight_back_off_a_wall_hits_its_zapper() -> None:
    world = make_world("""
        ########
        #<...###
        ########
    """)
    p = world.join("ann")
    hardy(p)
    events = zap(world, p, wand(world, p, "wand_of_magic_missile"), (1, 0))
    (ray,) = rays(events)
    assert ray.bounces[0] == (5, 1)
    assert (p.id, False) in [h[:2] for h in ray.hits]
    (harm,) = harms(events, p)[:1]
    assert (harm.source, harm.cause, harm.damage_type) == (p.id, "ray", "magic_missile")
    assert p.hp < p.max_hp


def test_a_wand_of_digging_cuts_through_a_wall() -> None:
    world = make_world("""
        ##############
        #<..#........#
        ##############
    """)
    p = world.join("ann")
    events = zap(world, p, wand(world, p, "wand_of_digging"), (1, 0))
    (ray,) = rays(events)
    assert ray.kind == "dig"
    assert TerrainChanged(1, 4, 1, int(Terrain.FLOOR)) in events
    assert world.levels[1].terrain_at(4, 1) == Terrain.FLOOR
    # The outermost wall of the level cannot be dug.
    assert world.levels[1].terrain_at(13, 1) == Terrain.WALL
    assert ray.cells == tuple((x, 1) for x in range(2, 13))


def test_a_sleep_ray_puts_a_monster_to_sleep_and_it_stops_acting() -> None:
    """Seed 003 note (B): a rat (level 0) resists only when 2 > 1d(damage),
    and the wand's 6d25 is never below 6, so it always sleeps, for 350."""
    world = make_world(CORRIDOR, seed=2)
    p = world.join("ann")
    world.step()
    rat = hardy_monster(world, "rat", 4, 1)
    assert CONTENT.monsters["rat"].level == 0
    events = zap(world, p, wand(world, p, "wand_of_sleep"), (1, 0))
    assert StatusChanged(1, 4, 1, rat.id, int(StatusKind.ASLEEP), True) in events
    # the rat's own round may come later in the tick of the zap (upkeep.run_round)
    zapped_at = world.tick - 1
    ran = int((zapped_at + rat.id) % world.status_rules.round_ticks == 0)
    assert rat.statuses.rounds(StatusKind.ASLEEP) == 350 - ran and rat.mind == Mind.ASLEEP
    assert harms(events, rat) == [], "sleep does no damage"
    where = (rat.x, rat.y)
    for _ in range(12):
        world.step()
    assert (rat.x, rat.y) == where, "an asleep monster does not act"


def test_a_fire_ray_may_burn_scrolls_on_the_floor_but_spares_metal_and_food() -> None:
    world = make_world(CORRIDOR, seed=11)
    p = world.join("ann")
    scrolls = [k for k, d in CONTENT.items.items() if d.category == "scroll"]
    level = world.levels[1]
    placed = 0
    for x in range(2, 7):
        for key in scrolls[:4]:
            level.items.setdefault((x, 1), []).append(Item(key))
            placed += 1
    level.items.setdefault((3, 1), []).extend([Item("long_sword"), Item("food_ration")])
    assert CONTENT.items["long_sword"].metallic
    events = zap(world, p, wand(world, p, "wand_of_fire"), (1, 0))
    burnt = [e for e in events if isinstance(e, ItemDestroyed)]
    assert 0 < len(burnt) < placed
    assert all(e.damage_type == "fire" and e.item in scrolls for e in burnt)
    left = sum(1 for pile in level.items.values() for i in pile if i.key in scrolls)
    assert left == placed - len(burnt)
    assert {i.key for i in level.items[(3, 1)]} >= {"long_sword", "food_ration"}


# --- reflection ---------------------------------------------------------------------------


def test_a_player_with_reflection_sends_the_ray_back_unharmed() -> None:
    world = make_world(CORRIDOR, seed=4)
    p = world.join("ann")
    mirror = world.join("bob")
    world.move_actor(mirror, 4, 1)
    for actor in (p, mirror):
        hardy(actor)
    mirror.abilities.add("reflection")
    events = zap(world, p, wand(world, p, "wand_of_magic_missile"), (1, 0))
    (ray,) = rays(events)
    assert ray.hits[0][:2] == (mirror.id, True)
    assert harms(events, mirror) == []
    assert (p.id, False) in [h[:2] for h in ray.hits]
    assert harms(events, p)[0].source == p.id


def test_a_monster_with_reflection_sends_the_ray_back() -> None:
    world = make_world(CORRIDOR, seed=4)
    p = world.join("ann")
    hardy(p)
    mdef = CONTENT.monsters["young_silver_dragon"]
    assert "reflection" in mdef.abilities
    dragon = world.add_actor(lambda aid: new_monster(aid, mdef, 1, 4, 1, Mind.HUNTING), 1, 4, 1)
    dragon.dodge = 0.0
    events = zap(world, p, wand(world, p, "wand_of_magic_missile"), (1, 0))
    (ray,) = rays(events)
    assert ray.hits[0][:2] == (dragon.id, True)
    assert harms(events, dragon) == []


def test_a_made_up_mirror_monster_reflects_too() -> None:
    """Reflection read from the monster's definition, with dataclasses.replace."""
    world = make_world(CORRIDOR, seed=4)
    p = world.join("ann")
    hardy(p)
    mdef = dataclasses.replace(CONTENT.monsters["orc"], abilities=("reflection",))
    orc = world.add_actor(lambda aid: new_monster(aid, mdef, 1, 4, 1, Mind.HUNTING), 1, 4, 1)
    orc.abilities.update(mdef.abilities)  # what new_monster should do itself
    orc.dodge = 0.0
    events = zap(world, p, wand(world, p, "wand_of_magic_missile"), (1, 0))
    (ray,) = rays(events)
    assert ray.hits[0][:2] == (orc.id, True)
    assert harms(events, orc) == [] and orc.hp == orc.max_hp


# --- breath -------------------------------------------------------------------------------


def test_a_dragon_lined_up_with_a_player_breathes_a_cold_ray_at_it() -> None:
    world = make_world(CORRIDOR, seed=6)
    p = world.join("ann")
    hardy(p)
    dragon = spawn(world, "baby_white_dragon", 6, 1, Mind.HUNTING)
    mdef = CONTENT.monsters["baby_white_dragon"]
    events: list[Event] = []
    assert zapping.breathe(world, dragon, p, events)
    (ray,) = rays(events)
    assert (ray.source, ray.kind, ray.x, ray.y) == (dragon.id, "cold", 6, 1)
    assert ray.cells[0] == (5, 1), "it flies west, towards the player"
    harm = harms(events, p)[0]
    assert (harm.source, harm.cause, harm.damage_type) == (dragon.id, "breath", "cold")
    assert dragon.en == mdef.energy - mdef.energy // 4


def test_a_dragon_not_lined_up_does_not_breathe() -> None:
    world = make_world("""
        ##########
        #<.......#
        #........#
        #........#
        ##########
    """)
    p = world.join("ann")
    dragon = spawn(world, "baby_white_dragon", 3, 2, Mind.HUNTING)
    events: list[Event] = []
    assert not zapping.breathe(world, dragon, p, events)
    assert events == [] and dragon.en == dragon.max_en


def test_a_hunting_breather_breathes_from_afar_in_play() -> None:
    world = make_world(CORRIDOR, seed=8)
    p = world.join("ann")
    hardy(p)
    dragon = spawn(world, "baby_white_dragon", 7, 1, Mind.HUNTING)
    dragon.flags = dragon.flags | {"immobile"}  # keep it at a distance
    events: list[Event] = []
    for _ in range(60):
        events += world.step()
        if rays(events):
            break
    (ray,) = rays(events)
    assert ray.source == dragon.id and ray.kind == "cold"
    assert (p.id, False) in [h[:2] for h in ray.hits]
    assert [e.cause for e in harms(events, p)] == ["breath"]


def test_a_sleep_ray_does_not_put_a_sleepless_monster_to_sleep() -> None:
    world = make_world(CORRIDOR, seed=2)
    p = world.join("ann")
    skeleton = hardy_monster(world, "skeleton", 4, 1)
    assert "no_sleep" in skeleton.flags
    events = zap(world, p, wand(world, p, "wand_of_sleep"), (1, 0))
    (ray,) = rays(events)
    assert (skeleton.id, False) in [h[:2] for h in ray.hits], "the ray hits it"
    assert not skeleton.statuses.has(StatusKind.ASLEEP)
    assert skeleton.mind != Mind.ASLEEP
    assert not any(isinstance(e, StatusChanged) and e.actor == skeleton.id for e in events)


def test_a_wand_of_striking_beam_stops_at_the_first_creature_it_hits() -> None:
    world = make_world(CORRIDOR, seed=2)
    p = world.join("ann")
    front = hardy_monster(world, "orc", 3, 1)
    back = hardy_monster(world, "orc", 4, 1)
    events = zap(world, p, wand(world, p, "wand_of_striking"), (1, 0))
    (ray,) = rays(events)
    assert ray.beam and ray.kind == "force"
    assert ray.cells == ((2, 1), (3, 1)) and [h[:2] for h in ray.hits] == [(front.id, False)]
    (harm,) = harms(events, front)
    assert (harm.cause, harm.damage_type) == ("beam", "force")
    assert harms(events, back) == []


def test_a_wand_of_sparks_fires_a_bolt_along_the_targeting_path() -> None:
    from server.sim.events import Flew

    world = make_world(CORRIDOR, seed=9)
    p = world.join("ann")
    orc = spawn(world, "rat", 5, 1, Mind.ASLEEP)
    orc.hp = orc.max_hp = 500
    item = new_item(world.content.items["wand_of_sparks"], world.rng)
    held = add_to_pack(p.inventory, item, world.content)
    assert held is not None
    charges = held.charges
    assert charges is not None
    world.submit(p.id, Zap(held.letter, 1, 0), 1)
    events: list[Event] = []
    for _ in range(4):
        events += world.step()
    flights = [e for e in events if isinstance(e, Flew)]
    assert flights and flights[0].item == "bolt:fire"
    assert [c for f in flights for c in f.cells][:4] == [(2, 1), (3, 1), (4, 1), (5, 1)]
    hits = [e for e in events if isinstance(e, Harmed) and e.target == orc.id]
    assert len(hits) == 1 and hits[0].cause == "bolt" and hits[0].damage_type == "fire"
    assert hits[0].outcome != AttackOutcome.MISS  # asleep: a surprise always hits
    assert held.charges == charges - 1 and held.known


def test_a_zapper_killed_by_its_own_ray_still_answers_every_queued_command() -> None:
    world = make_world(CORRIDOR, seed=2)
    p = world.join("ann")
    p.dodge = 0.0
    p.hp = 1
    wand = add_to_pack(p.inventory, new_item(world.content.items["wand_of_fire"]), world.content)
    assert wand is not None
    world.submit(p.id, Zap(wand.letter, -1, 0), 1)  # into the wall beside the stairs
    world.submit(p.id, Zap(wand.letter, -1, 0), 2)
    events: list[Event] = []
    for _ in range(3):
        events += world.step()
    assert not p.alive
    assert Rejected(p.id, 2, RejectReason.DEAD) in events
    assert p.last_tag == 2, "the ack never goes back to the command that killed it"
