"""Issue 15: every damage type of seed 003 is carried by something a player
can meet in the dungeon: an item's effect or enchantment, a monster's breath,
melee or spell."""

from __future__ import annotations

from server.content import DAMAGE_TYPES, default_content
from server.content.spells import default_spells


def test_every_damage_type_is_met_in_the_dungeon() -> None:
    content = default_content()
    spells = default_spells().spells
    carried: set[str] = set()
    for item in content.items.values():
        carried.update(t for t in (item.damage_type, item.enchant) if t is not None)
    for monster in content.monsters.values():
        carried.update(t for t in (monster.breath, monster.melee_type) if t is not None)
        carried.update(spells[key].damage_type for key in monster.spells)
    assert [t for t in DAMAGE_TYPES if t not in carried] == []
