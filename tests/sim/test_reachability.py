"""Issue 46: every record of the rules data can happen in a game, as walked
from the level generator, the spawn and loot tables by depth, the monsters'
spells, breath and touches, the class kits and the level rewards
(:mod:`server.sim.reachability`); and the walk notices when a path is cut."""

from __future__ import annotations

import dataclasses

from server.content import Content, default_content
from server.content.schema import Terrain
from server.sim.reachability import culprits, walk

CONTENT = default_content()


def _without(
    content: Content, *, items: tuple[str, ...] = (), monsters: tuple[str, ...] = ()
) -> Content:
    return dataclasses.replace(
        content,
        items={k: v for k, v in content.items.items() if k not in items},
        monsters={k: v for k, v in content.monsters.items() if k not in monsters},
    )


def test_everything_in_the_data_can_happen_in_a_game() -> None:
    assert culprits(walk()) == []


def test_a_spellbook_taken_out_of_the_loot_leaves_its_spell_unreachable() -> None:
    content = _without(CONTENT, items=("spellbook_of_force_bolt",))
    found = culprits(walk(content), content)
    assert found == [
        "spell 'force_bolt': no item in play teaches it and no placed monster casts it"
    ]


def test_a_monster_that_casts_a_spell_is_a_path_to_it() -> None:
    content = _without(CONTENT, items=("scroll_of_acid_glob",))
    assert culprits(walk(content), content) == []  # the gnoll shaman casts it
    casters = tuple(k for k, m in CONTENT.monsters.items() if "acid_glob" in m.spells)
    content = _without(content, monsters=casters)
    found = culprits(walk(content), content)
    assert "spell 'acid_glob': no item in play teaches it and no placed monster casts it" in found
    assert all(f"monster {k!r}" not in " ".join(found) for k in casters)  # removed, not unplaced


def test_lava_needs_a_creature_that_can_stand_on_it() -> None:
    fliers = tuple(k for k, m in CONTENT.monsters.items() if "flying" in m.flags)
    content = _without(CONTENT, monsters=fliers)
    found = culprits(walk(content), content)
    assert "terrain 'lava': no creature in play can enter it" in found
    walkers = tuple(k for k, m in CONTENT.monsters.items() if "wallwalker" in m.flags)
    content = _without(CONTENT, monsters=walkers)
    found = culprits(walk(content), content)
    for t in ("rock", "wall", "door_closed"):
        assert f"terrain {t!r}: no creature in play can enter it" in found


def test_a_status_whose_only_sources_are_gone_is_named() -> None:
    sources = ("potion_of_rage",)
    ragers = tuple(k for k, m in CONTENT.monsters.items() if "rage" in m.spells)
    content = _without(CONTENT, items=sources, monsters=ragers)
    found = culprits(walk(content), content)
    assert "spell 'rage': no item in play teaches it and no placed monster casts it" in found
    assert "status 'enraged': nothing gives it" in found


def test_uniques_are_placed_and_the_generator_lays_every_terrain() -> None:
    reach = walk()
    uniques = {k for k, m in CONTENT.monsters.items() if "unique" in m.flags}
    assert uniques and uniques <= reach.monsters
    assert reach.terrain == frozenset(Terrain)
