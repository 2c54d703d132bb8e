"""Seed 003's remaining damage types in play (issue 15, part C): ice, rock and
shot, storm, weak light, spirit, the OLD_* bolts with the mage supercharge,
holding, banishment, turning, dispels and stone to mud, each reached through
something a player meets (a wand, a scroll, a monster's breath or spell).

Numbers are the seed's notes (letters in the docstrings); statistical checks
compare with the exact probability (:func:`tests.sim.conftest.within`).
"""

from __future__ import annotations

from fractions import Fraction

from server.content import Terrain, default_content
from server.content.spells import default_spells
from server.content.statuses import StatusKind
from server.sim import casting, zapping
from server.sim.actors import Actor, Mind
from server.sim.commands import Read, Zap
from server.sim.events import Event, Harmed, ItemDestroyed, Polymorphed
from server.sim.items import Item, add_to_pack
from server.sim.status import Statuses
from server.sim.world import World
from tests.sim.conftest import act, hardy, hardy_monster, harms, make_world, spawn, within

CONTENT = default_content()
SPELLS = default_spells().spells

CORRIDOR = """
########################
#<.....................#
########################
"""

HALL = """
##################
#<...............#
#................#
#................#
#................#
#................#
#................#
##################
"""


def fresh(world: World, actor: Actor) -> None:
    actor.statuses = Statuses(world.status_rules)
    actor.hp = actor.max_hp
    if not actor.is_player:
        actor.mind = Mind.HUNTING


def give(world: World, actor: Actor, key: str, charges: int | None = None) -> Item:
    held = add_to_pack(actor.inventory, Item(key, charges=charges), world.content)
    assert held is not None
    return held


def exact(*terms: tuple[Fraction, Fraction]) -> float:
    """Sum of P(branch) x P(event | branch)."""
    return float(sum(p * q for p, q in terms))


# --- ice (GF_ICE, note d) ------------------------------------------------------------------


def test_an_ice_bolt_wand_stuns_what_does_not_resist_cold() -> None:
    """(d): unless it resists (IM_COLD), stunned 1d(dam / 12); a cold-immune
    winter wolf takes 1/9 and is not stunned."""
    world = make_world(CORRIDOR, seed=61)
    p = world.join("ann")
    world.step()
    ogre = hardy_monster(world, "ogre", 3, 1)
    wand = give(world, p, "wand_of_ice_bolts", charges=5)
    events = act(world, p.id, Zap(wand.letter, 1, 0))
    (hit,) = harms(events, ogre)
    assert hit.damage_type == "ice" and 6 <= hit.damage <= 48
    n, long_stuns = 400, 0
    for _ in range(n):
        fresh(world, ogre)
        world.harm_typed(ogre, 120, "ice", p, "beam", [])
        rounds = ogre.statuses.rounds(StatusKind.STUNNED)
        assert 1 <= rounds <= 10
        long_stuns += rounds > 5
    assert within(long_stuns, n, 0.5)
    wolf = hardy_monster(world, "winter_wolf", 5, 1)
    events = []
    world.harm_typed(wolf, 120, "ice", p, "beam", events)
    assert harms(events, wolf)[0].damage == 120 // 9
    assert not wolf.statuses.has(StatusKind.STUNNED)


def test_the_ice_wyrm_breathes_ice_and_lava_softens_it() -> None:
    world = make_world(CORRIDOR, seed=62)
    p = hardy(world.join("ann"))
    world.step()
    wyrm = hardy_monster(world, "ice_wyrm", 6, 1)
    events: list[Event] = []
    assert zapping.breathe(world, wyrm, p, events)
    assert {h.damage_type for h in harms(events, p)} == {"ice"}
    # Seed 003's terrain table: -1/3 on lava for GF_ICE.
    ogre = hardy_monster(world, "ogre", 3, 1)
    world.set_terrain(1, 3, 1, Terrain.LAVA)  # (a monster could not walk in)
    events = []
    world.harm_typed(ogre, 90, "ice", p, "beam", events)
    assert harms(events, ogre)[0].damage == 60


# --- rock and shot (notes a, b) ---------------------------------------------------------------


def test_rocks_and_shots_miss_an_armoured_creature_defence_in_200() -> None:
    """(b): an ac / 200 chance of no damage; Underhall's defence is the ac."""
    world = make_world(CORRIDOR, seed=63)
    p = world.join("ann")
    ogre = hardy_monster(world, "ogre", 3, 1)
    ogre.defence = 50 - (ogre.eff_defence - ogre.defence)  # an effective defence of 50
    assert ogre.eff_defence == 50
    n = 800
    for kind in ("rock", "shot"):
        missed = 0
        for _ in range(n):
            fresh(world, ogre)
            events: list[Event] = []
            world.harm_typed(ogre, 10, kind, p, "bolt", events)
            missed += harms(events, ogre)[0].damage == 0
        assert within(missed, n, 50 / 200), kind


def test_a_boulder_of_16_or_more_stuns_half_the_time() -> None:
    """(a): at least 16 damage, a 1/2 chance, stunned 1d(dam / 8)."""
    world = make_world(CORRIDOR, seed=64)
    p = world.join("ann")
    ogre = hardy_monster(world, "ogre", 3, 1)
    ogre.defence = -(ogre.eff_defence - ogre.defence)  # no armour save
    n, stunned = 600, 0
    for _ in range(n):
        fresh(world, ogre)
        world.harm_typed(ogre, 40, "rock", p, "bolt", [])
        rounds = ogre.statuses.rounds(StatusKind.STUNNED)
        assert rounds <= 5
        stunned += rounds > 0
    assert within(stunned, n, 0.5)
    fresh(world, ogre)
    for _ in range(50):
        world.harm_typed(ogre, 15, "rock", p, "bolt", [])
        ogre.hp = ogre.max_hp
    assert not ogre.statuses.has(StatusKind.STUNNED)


def test_the_stone_giant_hurls_boulders_at_a_player() -> None:
    world = make_world(CORRIDOR, seed=65)
    p = hardy(world.join("ann"))
    world.step()
    giant = hardy_monster(world, "stone_giant", 8, 1)
    giant.target = p.id
    events: list[Event] = []
    for _ in range(400):
        events += world.step()
        if any(h.damage_type == "rock" for h in harms(events, p)):
            break
    assert any(h.damage_type == "rock" and h.source == giant.id for h in harms(events, p))


# --- storm (notes n-q) ----------------------------------------------------------------------


def test_storm_spares_water_resisters_and_halves_for_electricity_immunity() -> None:
    world = make_world(HALL, seed=66)
    p = world.join("ann")
    frog = hardy_monster(world, "giant_frog", 8, 3)  # water 1: RES_WATER
    dragon = hardy_monster(world, "young_blue_dragon", 10, 3)  # electricity 3: IM_ELEC
    events: list[Event] = []
    world.harm_typed(frog, 60, "storm", p, "ball", events)
    world.harm_typed(dragon, 60, "storm", p, "ball", events)
    assert harms(events, frog)[0].damage == 0
    assert harms(events, dragon)[0].damage == 30


def test_storm_surges_one_time_in_six() -> None:
    """(n): unless resisted, 1/6 of the time an extra 1/2 (60 becomes 90)."""
    world = make_world(HALL, seed=67)
    p = world.join("ann")
    ogre = hardy_monster(world, "ogre", 8, 3)
    ogre.resist = {**ogre.resist, "gravity": 1}  # stays put (note q)
    n, surged = 900, 0
    for _ in range(n):
        fresh(world, ogre)
        events: list[Event] = []
        world.harm_typed(ogre, 60, "storm", p, "ball", events)
        damage = harms(events, ogre)[0].damage
        assert damage in (60, 90)
        surged += damage == 90
    assert within(surged, n, 1 / 6)


def test_storm_throws_light_monsters_about_and_a_player_s_storm_anything() -> None:
    """(q): teleported 10 unless it breathes gravity, when a player did it, or
    when its maximum health is below 1d[0..3 x dam]: an ogre of 36 health
    under a monster's 20 (unsurged) goes 24 times in 61."""
    world = make_world(HALL, seed=68)
    p = world.join("ann")
    shaman = hardy_monster(world, "kobold_shaman", 16, 6)
    ogre = spawn(world, "ogre", 8, 3, Mind.HUNTING)
    assert ogre.max_hp == 36
    n, moved, tried = 900, 0, 0
    for _ in range(n):
        fresh(world, ogre)
        world.move_actor(ogre, 8, 3)
        events: list[Event] = []
        world.harm_typed(ogre, 20, "storm", shaman, "ball", events)
        if harms(events, ogre)[0].damage != 20:
            continue  # a surge (30) changes the odds; count the plain ones
        tried += 1
        moved += (ogre.x, ogre.y) != (8, 3)
    assert within(moved, tried, 24 / 61)
    fresh(world, ogre)
    world.move_actor(ogre, 8, 3)
    world.harm_typed(ogre, 20, "storm", p, "ball", [])
    assert (ogre.x, ogre.y) != (8, 3)


# --- weak light and spirit ----------------------------------------------------------------------


def test_a_wand_of_light_hurts_only_what_light_hurts() -> None:
    world = make_world(CORRIDOR, seed=69)
    p = world.join("ann")
    world.step()
    ghoul = hardy_monster(world, "ghoul", 3, 1)  # light -1: HURT_LITE
    ogre = hardy_monster(world, "ogre", 5, 1)
    events: list[Event] = []
    zapping.fire_ray(world, p, (p.x, p.y), (1, 0), "light_weak", (6, 8), events)
    assert all(h.damage > 0 for h in harms(events, ghoul))
    assert harms(events, ghoul) and all(h.damage == 0 for h in harms(events, ogre))


def test_spirit_passes_through_the_undead() -> None:
    world = make_world(CORRIDOR, seed=70)
    ghost = hardy_monster(world, "ghost", 2, 1)
    zombie = hardy_monster(world, "zombie", 3, 1)
    ogre = hardy_monster(world, "ogre", 4, 1)
    events: list[Event] = []
    world.harm_typed(zombie, 30, "spirit", ghost, "bolt", events)
    world.harm_typed(ogre, 30, "spirit", ghost, "bolt", events)
    assert harms(events, zombie)[0].damage == 0 and harms(events, ogre)[0].damage == 30


# --- the OLD_* bolts ---------------------------------------------------------------------------


def test_polymorph_save_of_note_w() -> None:
    """(w): resists when unique or level > 10 + 1d(dam - 10); a level-14
    minotaur against 30 resists for rolls 1..3 of 20; no damage either way."""
    world = make_world(HALL, seed=71)
    p = world.join("ann")
    n, changed = 400, 0
    for _ in range(n):
        minotaur = hardy_monster(world, "minotaur", 8, 3)
        events: list[Event] = []
        world.harm_typed(minotaur, 30, "polymorph", p, "beam", events)
        assert not harms(events)
        if any(isinstance(e, Polymorphed) for e in events):
            changed += 1
            new = world.actor_at(1, 8, 3)
            assert new is not None
            world.remove_monster(new)
        else:
            world.remove_monster(minotaur)
    assert within(changed, n, 17 / 20)
    king = hardy_monster(world, "goblin_king", 8, 3)
    world.harm_typed(king, 100, "polymorph", p, "beam", [])
    assert world.actor_at(1, 8, 3) is king


def test_clone_heal_and_haste_monster_wands() -> None:
    """(x) healed to the maximum and cloned; (y) healed by the damage; (z) faster."""
    world = make_world(HALL, seed=72)
    p = world.join("ann")
    ogre = spawn(world, "ogre", 8, 3, Mind.HUNTING)
    ogre.hp = 5
    before = sum(1 for a in world.actors.values() if a.kind == "ogre")
    world.harm_typed(ogre, 1, "clone", p, "beam", [])
    assert ogre.hp == ogre.max_hp
    assert sum(1 for a in world.actors.values() if a.kind == "ogre") == before + 1
    ogre.hp = 5
    world.harm_typed(ogre, 12, "heal_monster", p, "beam", [])
    assert ogre.hp == 17
    world.harm_typed(ogre, 1, "speed", p, "beam", [])
    assert ogre.statuses.has(StatusKind.HASTED)


def _slowed_fraction(cls: str, n: int, seed: int) -> int:
    world = make_world(CORRIDOR, seed=seed)
    p = world.join("ann", cls)
    minotaur = hardy_monster(world, "minotaur", 3, 1)
    slowed = 0
    for _ in range(n):
        fresh(world, minotaur)
        world.harm_typed(minotaur, 20, "slow", p, "beam", [])
        slowed += minotaur.statuses.has(StatusKind.SLOWED)
    return slowed


def test_a_wizard_s_slow_monster_is_supercharged() -> None:
    """(A): a mage's (Underhall: the Wizard role's) 1/3 supercharge makes 20
    into 30; otherwise 1/6 of the time 26; then a level-14 monster resists
    when 16 > 1d(dam): it is slowed by rolls 16..dam."""
    wizard = exact(
        (Fraction(1, 3), Fraction(15, 30)),
        (Fraction(2, 3) * Fraction(1, 6), Fraction(11, 26)),
        (Fraction(2, 3) * Fraction(5, 6), Fraction(5, 20)),
    )
    anyone = exact((Fraction(1, 6), Fraction(11, 26)), (Fraction(5, 6), Fraction(5, 20)))
    assert CONTENT.classes["mage"].role == "Wizard"
    n = 1200
    assert within(_slowed_fraction("mage", n, seed=73), n, wizard)
    assert within(_slowed_fraction("warrior", n, seed=74), n, anyone)


def test_confuse_monster_gives_3d_dam_over_5_plus_1() -> None:
    """(C): an ogre (level 5) against 60 fails its save unless 7 > 1d(dam);
    confused 3d(dam / 5) + 1 = 4..37 (dam 60, 80 or 90 after a supercharge)."""
    world = make_world(CORRIDOR, seed=75)
    p = world.join("ann")
    ogre = hardy_monster(world, "ogre", 3, 1)
    hulk = hardy_monster(world, "umber_hulk", 5, 1)  # NO_CONF
    amounts = []
    for _ in range(300):
        fresh(world, ogre)
        world.harm_typed(ogre, 60, "confuse_monster", p, "beam", [])
        world.harm_typed(hulk, 60, "confuse_monster", p, "beam", [])
        if ogre.statuses.has(StatusKind.CONFUSED):
            amounts.append(ogre.statuses.rounds(StatusKind.CONFUSED))
    assert min(amounts) >= 4 and max(amounts) <= 3 * 18 + 1 and max(amounts) > 30
    assert not hulk.statuses.has(StatusKind.CONFUSED)
    # Monsters are confused past the characters' cap of 20 rounds.
    assert world.status_rules.statuses[StatusKind.CONFUSED].max_rounds == 20


def test_hold_monster_save_of_note_d() -> None:
    """(D): resists when 1d(3/2 x 5 = 7) > twice the level-1 zapper's, else
    1/4: held 2/7 x 3/4 = 3/14 of the time, for 4 + 1d6 rounds."""
    world = make_world(CORRIDOR, seed=76)
    p = world.join("ann")
    assert p.level == 1
    ogre = hardy_monster(world, "ogre", 3, 1)
    n, held = 1200, 0
    for _ in range(n):
        fresh(world, ogre)
        world.harm_typed(ogre, 1, "hold", p, "beam", [])
        rounds = ogre.statuses.rounds(StatusKind.PARALYSED)
        if rounds:
            held += 1
            assert 5 <= rounds <= 10
    assert within(held, n, 3 / 14)
    zombie = hardy_monster(world, "zombie", 5, 1)
    ogre.statuses = Statuses(world.status_rules)
    for _ in range(40):
        world.harm_typed(ogre, 1, "hold_undead", p, "beam", [])
        world.harm_typed(zombie, 1, "hold_undead", p, "beam", [])
    assert not ogre.statuses.has(StatusKind.PARALYSED)
    assert zombie.statuses.has(StatusKind.PARALYSED)


# --- scrolls: banishment, turning, dispels ------------------------------------------------------


def _reader(world: World) -> Actor:
    p = hardy(world.join("ann"))
    world.step()
    return p


def test_a_scroll_of_dispel_undead_hurts_only_the_undead_in_view() -> None:
    world = make_world(HALL, seed=77)
    p = _reader(world)
    ghoul = hardy_monster(world, "ghoul", 6, 3)
    ogre = hardy_monster(world, "ogre", 8, 3)
    world.step()  # the reader sees them
    scroll = give(world, p, "scroll_of_dispel_undead")
    events = act(world, p.id, Read(scroll.letter))
    assert 6 <= harms(events, ghoul)[0].damage <= 60
    assert harms(events, ogre)[0].damage == 0


def test_turn_undead_frightens_the_undead_for_3d_dam_over_2_plus_1() -> None:
    world = make_world(HALL, seed=78)
    p = _reader(world)
    ghoul = hardy_monster(world, "ghoul", 6, 3)
    zombie = hardy_monster(world, "zombie", 6, 5)  # NO_FEAR
    ogre = hardy_monster(world, "ogre", 8, 3)
    frightened, n = 0, 400
    for _ in range(n):
        fresh(world, ghoul)
        world.harm_typed(ghoul, 40, "turn_undead", p, "spell", [])
        world.harm_typed(zombie, 40, "turn_undead", p, "spell", [])
        world.harm_typed(ogre, 40, "turn_undead", p, "spell", [])
        rounds = ghoul.statuses.rounds(StatusKind.AFRAID)
        if rounds:
            frightened += 1
            assert 4 <= rounds <= 3 * 26 + 1  # dam 40, 53 or 60 after a boost
    # Seed 003 (I): a warrior's 40 is boosted by a third (to 53) 1 time in 6;
    # the ghoul (level 6) resists when 6 + 2 > 1d(dam), so it is frightened
    # with chance (dam - 7) / dam: 5/6 x 33/40 + 1/6 x 46/53
    assert ghoul.level == 6 and p.cls == "warrior"
    assert within(frightened, n, 5 / 6 * 33 / 40 + 1 / 6 * 46 / 53)
    assert not zombie.statuses.has(StatusKind.AFRAID)
    assert not ogre.statuses.has(StatusKind.AFRAID)
    scroll = give(world, p, "scroll_of_turn_undead")
    act(world, p.id, Read(scroll.letter))


def test_fear_adds_up_to_200() -> None:
    """Final note v: fear adds, up to 200."""
    world = make_world(HALL, seed=79)
    p = world.join("ann")
    ogre = hardy_monster(world, "ogre", 8, 3)
    for _ in range(40):
        world.harm_typed(ogre, 200, "turn_all", p, "spell", [])
    assert ogre.statuses.rounds(StatusKind.AFRAID) == 200


def test_banishment_sends_evil_away_and_leaves_the_rest() -> None:
    world = make_world(HALL, seed=80)
    p = _reader(world)
    orc = hardy_monster(world, "orc", 6, 3)
    frog = hardy_monster(world, "giant_frog", 8, 3)
    world.harm_typed(orc, 8, "away_evil", p, "spell", [])
    world.harm_typed(frog, 8, "away_evil", p, "spell", [])
    assert (orc.x, orc.y) != (6, 3) and (frog.x, frog.y) == (8, 3)


def test_dispel_small_spares_what_has_as_much_health_as_the_damage() -> None:
    """(L)."""
    world = make_world(HALL, seed=81)
    p = world.join("ann")
    rat = spawn(world, "rat", 6, 3, Mind.HUNTING)
    ogre = hardy_monster(world, "ogre", 8, 3)
    events: list[Event] = []
    world.harm_typed(ogre, 50, "dispel_small", p, "spell", events)
    world.harm_typed(rat, 50, "dispel_small", p, "spell", events)
    assert harms(events, ogre)[0].damage == 0 and harms(events, rat)[0].damage == rat.max_hp


# --- stone to mud (KILL_WALL) -------------------------------------------------------------------


def test_stone_to_mud_digs_and_hurts_only_creatures_of_rock() -> None:
    world = make_world(CORRIDOR.replace("#<......", "#<...#.."), seed=82)
    p = world.join("ann")
    world.step()
    worm = hardy_monster(world, "rock_worm", 3, 1)
    assert CONTENT.monsters["rock_worm"].resist["kill_wall"] == -1
    ogre = hardy_monster(world, "ogre", 7, 1)
    wand = give(world, p, "wand_of_stone_to_mud", charges=3)
    events = act(world, p.id, Zap(wand.letter, 1, 0))
    assert world.levels[1].terrain_at(5, 1) == Terrain.FLOOR
    (hit,) = harms(events, worm)
    assert hit.damage_type == "kill_wall" and 20 <= hit.damage <= 160
    assert [h.damage for h in harms(events, ogre)] == [0]


# --- a monster's holy orb ------------------------------------------------------------------------


def test_a_priest_of_light_s_orb_destroys_cursed_things_at_the_target() -> None:
    world = make_world(HALL, seed=83)
    p = hardy(world.join("ann"))
    world.step()
    priest = hardy_monster(world, "priest_of_light", 10, 3)
    world.levels[1].items[(p.x, p.y)] = [Item("dagger", cursed=True), Item("dagger")]
    events: list[Event] = []
    casting.apply_spell(world, priest, SPELLS["holy_orb"], None, (p.x, p.y), events)
    assert [e.item for e in events if isinstance(e, ItemDestroyed)] == ["dagger"]
    assert [h.damage_type for h in harms(events, p)] == ["holy"]
    assert isinstance(harms(events, p)[0], Harmed)


# --- the holy-light specialty (notes M, N) ---------------------------------------------------


def _frightened(kind: str, damage_type: str, n: int, seed: int) -> int:
    world = make_world(CORRIDOR, seed=seed)
    p = world.join("ann")
    p.abilities.add("holy_light")
    p.level = 10
    monster = hardy_monster(world, kind, 3, 1)
    count = 0
    for _ in range(n):
        fresh(world, monster)
        world.harm_typed(monster, 20, damage_type, p, "ray", [])
        count += monster.statuses.has(StatusKind.AFRAID)
    return count


def test_holy_light_frightens_the_undead_with_the_seed_s_odds() -> None:
    """(M): 1/5 of the time an attempt, which works when 1d(10 + 10) >= 6 + 2
    for a level-10 bearer against a ghoul: 1/5 x 13/20. (N): 1/3, 1d(15 +
    15) >= 8: 1/3 x 23/30. The zombie's NO_FEAR does not protect it."""
    n = 1500
    assert CONTENT.monsters["ghoul"].level == 6
    assert within(_frightened("ghoul", "light_weak", n, seed=84), n, 13 / 100)
    assert within(_frightened("ghoul", "light", n, seed=85), n, 23 / 90)
    assert _frightened("zombie", "light_weak", 200, seed=86) > 0
    assert _frightened("giant_frog", "light", 200, seed=87) == 0


def test_holy_light_is_a_fifth_level_choice() -> None:
    assert "holy_light" in CONTENT.classes["warrior"].special_choices


def test_every_hound_breathes_its_own_type_at_a_player() -> None:
    hounds = [m for m in CONTENT.monsters.values() if m.key.endswith("_hound") and m.breath]
    assert len(hounds) >= 14
    for mdef in hounds:
        world = make_world(CORRIDOR, seed=88)
        p = hardy(world.join("ann"))
        world.step()
        hound = hardy_monster(world, mdef.key, 6, 1)
        events: list[Event] = []
        assert zapping.breathe(world, hound, p, events), mdef.key
        assert mdef.breath in {h.damage_type for h in harms(events)}, mdef.key


def test_a_polymorphed_monster_is_not_provoked_after_it_is_gone() -> None:
    world = make_world(HALL, seed=89)
    p = world.join("ann")
    ogre = hardy_monster(world, "ogre", 8, 3, mind=Mind.ASLEEP)
    events: list[Event] = []
    world.harm_typed(ogre, 100, "polymorph", p, "beam", events)
    (change,) = [e for e in events if isinstance(e, Polymorphed)]
    assert ogre.id not in world.actors and change.actor == ogre.id
    assert not [e for e in events if getattr(e, "actor", None) == ogre.id and e is not change]
