"""Side effects of typed damage that change who stands where: polymorph and clone."""

from __future__ import annotations

from server.content import default_content
from server.sim import harm
from server.sim.actors import Mind
from server.sim.events import Event, Harmed, Polymorphed
from tests.sim.conftest import ROOM, make_world, spawn, within

CONTENT = default_content()


def test_polymorph_replaces_a_monster_in_place_with_another_kind() -> None:
    world = make_world(ROOM, seed=5)
    world.join("ann")
    rat = spawn(world, "rat", 4, 2, Mind.HUNTING)
    rat.hp = rat.max_hp // 2 or 1
    events: list[Event] = []
    new = harm.polymorph(world, rat, events)
    assert new is not None and new.kind != "rat"
    assert rat.id not in world.actors and world.actor_at(1, 4, 2) is new
    assert new.mind == Mind.HUNTING and 1 <= new.hp <= new.max_hp
    assert events == [Polymorphed(1, 4, 2, rat.id, new.id, new.kind)]
    mdef = world.content.monsters[new.kind]
    assert "unique" not in mdef.flags


def test_players_and_uniques_never_change_or_multiply() -> None:
    world = make_world(ROOM, seed=5)
    p = world.join("ann")
    unique = next(m.key for m in world.content.monsters.values() if "unique" in m.flags)
    boss = spawn(world, unique, 5, 3)
    for who in (p, boss):
        assert harm.polymorph(world, who, []) is None
        assert harm.clone(world, who) is None
    assert world.actors[boss.id] is boss


def test_clone_puts_a_fresh_copy_on_the_nearest_free_cell() -> None:
    world = make_world(ROOM, seed=5)
    world.join("ann")
    rat = spawn(world, "rat", 4, 2)
    copy = harm.clone(world, rat)
    assert copy is not None and copy.kind == "rat" and copy.id != rat.id
    assert max(abs(copy.x - rat.x), abs(copy.y - rat.y)) == 1
    assert copy.hp == copy.max_hp


def test_chaos_damage_can_polymorph_its_victim() -> None:
    world = make_world(ROOM, seed=5)
    p = world.join("ann")
    changed = 0
    for i in range(40):
        rat = spawn(world, "rat", 2 + i % 6, 2 + (i // 6) % 3)
        rat.max_hp = rat.hp = 10_000
        events: list[Event] = []
        world.harm_typed(rat, 5, "chaos", p, "spell", events)
        assert any(isinstance(e, Harmed) for e in events)
        changed += any(isinstance(e, Polymorphed) for e in events)
        for a in [a for a in world.actors.values() if not a.is_player]:
            world.remove_monster(a)
    # seed 003 final note ii: polymorphed when 1d90 > level; a giant rat is
    # level 0, so every one of the 40 changes (two-sided: exactly the count
    # the probability 90/90 gives, with a binomial tolerance of 0)
    level = CONTENT.monsters["rat"].level
    assert level == 0
    assert within(changed, 40, (90 - level) / 90)
