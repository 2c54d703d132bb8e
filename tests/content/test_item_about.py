"""The item facts a client is told (``welcome.items`` about maps) include the
seed 001 properties added by issue 15: hunger-draining weapons and bane items."""

from __future__ import annotations

from server.content import default_content
from server.game.wire import item_about


def test_hunger_drain_and_bane_are_told_only_where_they_apply() -> None:
    items = default_content().items
    assert item_about(items["famished_blade"])["hunger_drain"] is True
    assert item_about(items["demonbane_circlet"])["bane"] == "demon"
    assert item_about(items["mace_of_disruption"])["bane"] == "undead"
    plain = item_about(items["long_sword"])
    assert "hunger_drain" not in plain and "bane" not in plain
