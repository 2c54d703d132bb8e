"""Issues 15 and 46: every damage type of seed 003 is carried by something a
player can meet in a game — an item the levels drop or a class starts with
(its effect or enchantment), a placed monster's breath, melee or spell, a
spell an item in play teaches, or a status such a thing gives — as walked
from the loot and spawn tables by :func:`server.sim.reachability.walk`, not
merely named by some record."""

from __future__ import annotations

import dataclasses

from server.content import DAMAGE_TYPES, default_content
from server.sim.reachability import walk


def test_every_damage_type_is_met_in_a_game() -> None:
    assert [t for t in DAMAGE_TYPES if t not in walk().damage_types] == []


def test_a_damage_type_whose_only_carrier_is_gone_is_not_met() -> None:
    content = default_content()
    assert content.monsters["time_hound"].breath == "time"
    gone = {k: v for k, v in content.monsters.items() if k != "time_hound"}
    assert "time" not in walk(dataclasses.replace(content, monsters=gone)).damage_types
