"""Issue 46: the rules that could not happen in a game now do, reached through
play: a scroll, potion or spellbook the level generator dropped is picked up
and used; a monster casts what its record gives it; a unique waits on its
level; fliers cross lava and wallwalkers pass walls; exertion tires and a
completed rest feeds the hunger rating."""

from __future__ import annotations

from server.content import default_content
from server.content.spells import default_spells
from server.content.statuses import StatusKind
from server.sim import hunger
from server.sim.actors import Actor, Mind
from server.sim.commands import Cast, Move, PickUp, Quaff, Read, Rest, Wear, Zap
from server.sim.events import Cast as CastEvent
from server.sim.events import Event, Learned, Rejected, StatusChanged
from server.sim.monsters import unique_depth
from server.sim.terrain import walkable_for
from server.sim.upkeep import FATIGUE_ROUNDS, REST_ROUNDS
from server.sim.world import World
from tests.sim.conftest import ROOM, act, hardy, harms, make_world, run, spawn

CONTENT = default_content()
SPELLS = default_spells().spells


def _found(key: str, seeds: int = 30) -> tuple[World, int, tuple[int, int]]:
    """The first seeded world (seeds 0.., depths from the item's shallowest)
    whose generated level holds ``key`` on its floor, with no one on the cell."""
    idef = CONTENT.items[key]
    for seed in range(seeds):
        world = World(seed)
        for depth in range(idef.depth_min, idef.depth_min + 3):
            level = world.level(depth)
            for (x, y), items in sorted(level.items.items()):
                if items[0].key == key and world.actor_at(depth, x, y) is None:
                    return world, depth, (x, y)
    raise AssertionError(f"no level of seeds 0..{seeds - 1} drops {key}")


def _there(world: World, depth: int, cell: tuple[int, int], cls: str = "mage") -> Actor:
    """A hardy character standing on ``cell`` of ``depth`` (the walk there skipped)."""
    p = hardy(world.join("ann", cls))
    world._relocate(p, depth, *cell)
    world.step()
    return p


def _pick_up(world: World, p: Actor, key: str) -> str:
    act(world, p.id, PickUp())
    return next(i.letter for i in p.inventory if i.key == key)


def _applied(events: list[Event], actor: Actor, kind: StatusKind) -> bool:
    return any(
        isinstance(e, StatusChanged) and e.actor == actor.id and e.status == kind and e.on
        for e in events
    )


def test_a_dropped_scroll_of_fire_shield_is_read_and_its_shield_burns_an_attacker() -> None:
    world, depth, cell = _found("scroll_of_fire_shield")
    p = _there(world, depth, cell)
    events = act(world, p.id, Read(_pick_up(world, p, "scroll_of_fire_shield")))
    assert any(isinstance(e, Learned) and e.spell == "fire_shield" for e in events)
    assert _applied(events, p, StatusKind.FIRE_SHIELD)
    # seed 001: the shield does 2d4 fire "to the attacker" of a melee hit
    level = world.levels[depth]
    x, y = next(
        (p.x + dx, p.y + dy)
        for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1))
        if level.passable[p.y + dy, p.x + dx] and world.actor_at(depth, p.x + dx, p.y + dy) is None
    )
    rat = hardy(spawn(world, "rat", x, y, Mind.HUNTING, depth=depth))
    rat.accuracy, rat.target = 1000.0, p.id
    burns = harms(run(world, 30), rat, "shield")
    assert burns and all(0 <= h.damage <= 8 and h.damage_type == "fire" for h in burns)


def test_a_dropped_spellbook_of_force_bolt_is_studied_and_cast() -> None:
    world, depth, cell = _found("spellbook_of_force_bolt")
    p = _there(world, depth, cell)
    letter = _pick_up(world, p, "spellbook_of_force_bolt")
    events = act(world, p.id, Read(letter))
    assert any(isinstance(e, Learned) and e.spell == "force_bolt" for e in events)
    assert "force_bolt" in p.known_spells
    act(world, p.id, Wear(letter))
    p.en = p.max_en = 100
    events = act(world, p.id, Cast("force_bolt", direction=(1, 0)))
    assert any(isinstance(e, CastEvent) and e.spell == "force_bolt" for e in events)


def test_a_dropped_potion_of_rage_enrages_and_doubles_hunger() -> None:
    world, depth, cell = _found("potion_of_rage")
    p = _there(world, depth, cell, "warrior")
    events = act(world, p.id, Quaff(_pick_up(world, p, "potion_of_rage")))
    assert any(isinstance(e, Learned) and e.spell == "rage" for e in events)
    assert _applied(events, p, StatusKind.ENRAGED)
    # seed 001: base 1 at full health and energy, doubled by rage
    p.hp, p.en = p.max_hp, p.max_en
    amount = hunger.hunger_amount(
        hp=p.hp, max_hp=p.max_hp, en=p.en, max_en=p.max_en, statuses=p.statuses, fatigue=0
    )
    assert amount == 2


LAVA_MOAT = """
############
#..........#
#..........#
#====......#
#..=.......#
#..=.......#
############
"""


def _casts_of(kind: str, ticks: int = 900) -> set[str]:
    """Spells a hunting ``kind`` casts at a hardy mage it sees across lava it cannot
    cross (so it never closes to melee), in ``ticks`` ticks."""
    world = make_world(LAVA_MOAT)
    p = hardy(world.join("ann", "mage"))
    world._relocate(p, 1, 1, 5)
    monster = spawn(world, kind, 6, 5, Mind.HUNTING)
    monster.hp = monster.max_hp = 10_000
    monster.flags = monster.flags - {"flying"}
    monster.target = p.id
    events = run(world, ticks)
    return {e.spell for e in events if isinstance(e, CastEvent) and e.actor == monster.id}


NEW_CASTS = {
    "gnoll_shaman": {"acid_glob"},
    "dark_elf_priest": {"curse", "plague"},
    "lich": {"enervate", "poison_cloud"},
    "pit_fiend": {"fire_shield"},
    "minotaur": {"rage"},
    "frost_giant": {"ice_shield"},
    "dwarf_warlock": {"ice_shield"},
}
"""Spells issue 46 gave monsters (seed 001's families), by the monster that casts them."""


def test_monsters_cast_the_spells_their_records_give_them() -> None:
    for kind, spells in NEW_CASTS.items():
        assert spells <= set(CONTENT.monsters[kind].spells)
        assert spells <= _casts_of(kind), kind


def test_each_unique_waits_on_its_own_level() -> None:
    for key in ("goblin_king", "bone_king", "azgorath"):
        mdef = CONTENT.monsters[key]
        world = World(7)
        home = unique_depth(7, mdef)
        assert mdef.depth_min <= home <= mdef.depth_max
        world.level(home)
        kinds = [m.kind for m in world.monsters() if m.depth == home]
        assert kinds.count(key) == 1
        for other in range(mdef.depth_min, mdef.depth_max + 1):
            if other != home:
                world.level(other)
                assert key not in [m.kind for m in world.monsters() if m.depth == other]


def test_a_flier_crosses_lava_to_its_prey_and_a_walker_does_not() -> None:
    moat = """
    ##########
    #...=....#
    #...=....#
    #...=....#
    ##########
    """
    world = make_world(moat)
    p = hardy(world.join("ann", "warrior"))
    world._relocate(p, 1, 1, 2)
    bat = spawn(world, "cave_bat", 7, 2, Mind.HUNTING)
    rat = spawn(world, "rat", 7, 1, Mind.HUNTING)
    bat.target = rat.target = p.id
    on_lava = False
    for _ in range(60):
        world.step()
        on_lava |= world.levels[1].terrain_at(bat.x, bat.y) == 6
    assert on_lava and bat.x < 4
    assert rat.x > 4


TWO_ROOMS = """
###########
#...#.....#
#...#.....#
#...#.....#
###########
"""


def test_a_wallwalker_passes_through_a_wall() -> None:
    rooms = TWO_ROOMS
    world = make_world(rooms)
    p = hardy(world.join("ann", "warrior"))
    world._relocate(p, 1, 2, 2)
    xorn = spawn(world, "xorn", 8, 2, Mind.HUNTING)
    xorn.target, xorn.target_seen = p.id, (2, 2)
    in_wall = False
    for _ in range(60):
        world.step()
        in_wall |= (xorn.x, xorn.y) == (4, 2) or world.levels[1].terrain_at(xorn.x, xorn.y) == 1
    assert in_wall and xorn.x < 4
    assert not walkable_for(frozenset())[1] and walkable_for(frozenset({"wallwalker"}))[1]


def test_a_ray_finds_a_wallwalker_inside_a_wall() -> None:
    """Seed 000 (nethack_ray.md): the ray asks who stands on a wall square
    before it bounces there, so a xorn inside the wall is struck."""
    world = make_world(TWO_ROOMS)
    p = hardy(world.join("mia", "mage"))
    world._relocate(p, 1, 2, 2)
    xorn = hardy(spawn(world, "xorn", 8, 2, Mind.HUNTING))
    xorn.target, xorn.target_seen = p.id, (2, 2)
    for _ in range(90):
        world.step()
        if world.levels[1].terrain_at(xorn.x, xorn.y) == 1:
            break
    assert (xorn.x, xorn.y) == (4, 2)  # inside the wall, in the mage's row
    xorn.dodge = 0.0  # the hit roll always succeeds (seed 002: D = 0)
    xorn.statuses.add(StatusKind.PARALYSED, 50)  # it stays there
    wand = next(i for i in p.inventory if i.key == "wand_of_magic_missile")
    events = act(world, p.id, Zap(wand.letter, 1, 0))
    assert harms(events, xorn, "ray")


def test_fighting_with_no_energy_left_tires_and_a_completed_rest_ends_it() -> None:
    hall = """
    #########
    #.......#
    #.......#
    #########
    """
    world = make_world(hall)
    p = hardy(world.join("ann", "warrior"))
    world._relocate(p, 1, 1, 1)
    rat = hardy(spawn(world, "rat", 2, 1, Mind.HUNTING))
    rat.target, rat.target_seen = p.id, (p.x, p.y)  # awake: no surprise (seed 002)
    rat.dodge = 1000.0  # every swing misses: a miss costs energy (seed 001)
    world.step()  # the rat in view: not a surprise
    p.en = 0
    p.food.hunger = 10
    act(world, p.id, Move(1, 0))
    assert p.en == 0 and p.statuses.has(StatusKind.FATIGUE)
    # a miss on a lower-level victim costs (1 - 0 + 1) // 2 = 1, all of it unpaid
    assert p.statuses.magnitude(StatusKind.FATIGUE) == 1
    assert p.statuses.rounds(StatusKind.FATIGUE) == FATIGUE_ROUNDS
    world.remove_monster(rat)
    world.step()
    p.food.countdown = 10_000  # no hunger decrease falls inside this test
    for _ in range(REST_ROUNDS - 1):
        act(world, p.id, Rest())
    assert p.food.hunger == 10 and p.statuses.has(StatusKind.FATIGUE)
    act(world, p.id, Rest())
    assert not p.statuses.has(StatusKind.FATIGUE)
    # seed 001: a completed rest raises a low rating "slightly": by 5 below 25
    assert p.food.hunger == 15


def test_a_rest_broken_off_by_a_monster_in_view_starts_again() -> None:
    world = make_world(ROOM)
    p = hardy(world.join("ann", "warrior"))
    p.food.hunger, p.food.countdown = 22, 10_000
    for _ in range(REST_ROUNDS - 1):
        act(world, p.id, Rest())
    rat = spawn(world, "rat", p.x + 2, p.y, Mind.ASLEEP)
    world.step()
    events = act(world, p.id, Rest())
    assert any(isinstance(e, Rejected) for e in events)
    world.remove_monster(rat)
    world.step()
    for _ in range(REST_ROUNDS - 1):
        act(world, p.id, Rest())
    assert p.food.hunger == 22
    act(world, p.id, Rest())
    assert p.food.hunger == 25  # raised to the threshold, not past it


TEACHERS = (
    "spellbook_of_force_bolt", "spellbook_of_remove_curse", "spellbook_of_fireball",
    "spellbook_of_cone_of_cold", "spellbook_of_lightning", "spellbook_of_dig",
    "scroll_of_acid_glob", "scroll_of_purge_poison", "scroll_of_soothe_acid_burn",
    "scroll_of_fire_shield", "scroll_of_ice_shield", "scroll_of_curse", "scroll_of_enervate",
    "scroll_of_plague", "scroll_of_poison_cloud", "scroll_of_cure_disease", "scroll_of_scrying",
    "scroll_of_shockwave", "potion_of_rage",
)  # fmt: skip
"""The items issue 46 added, one for each spell nothing taught before."""


def test_every_new_teaching_item_is_dropped_by_a_level_and_teaches_its_spell() -> None:
    for key in TEACHERS:
        idef = CONTENT.items[key]
        assert idef.spell is not None
        world, depth, cell = _found(key)
        p = _there(world, depth, cell)
        letter = _pick_up(world, p, key)
        use = Quaff(letter) if idef.category == "potion" else Read(letter)
        events = act(world, p.id, use)
        assert any(isinstance(e, Learned) and e.spell == idef.spell for e in events), key
        # found no shallower than 2 x spell level - 1
        assert idef.depth_min == 2 * SPELLS[idef.spell].level - 1
