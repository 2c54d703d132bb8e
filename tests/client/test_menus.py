"""client.menus: which items each command lists, labels, the context for keys."""

from __future__ import annotations

from typing import Any

import pytest

from client.keys import SpellChoice, Target
from client.menus import (
    cell_description,
    choice_rows,
    context,
    equipment_rows,
    info_rows,
    inventory_rows,
    item_label,
    menu_items,
    plural,
    spell_rows,
    targets,
)
from client.model import GameModel, InvItem
from client.text import option_label
from protocol.messages import Info, Snapshot, Welcome

ITEMS = {
    "short_sword": ["short sword", ")", "cyan", "weapon", {"slot": "weapon"}],
    "dagger": ["dagger", ")", "cyan", "weapon", {}],
    "dart": ["dart", ")", "white", "thrown", {"range": 6}],
    "leather_armour": ["leather armour", "[", "yellow", "armour", {"slot": "body"}],
    "boots": ["pair of boots", "[", "yellow", "boots", {}],
    "spellbook_of_spark": ["spellbook of spark", "+", "red", "spellbook", {}],
    "food_ration": ["food ration", "%", "yellow", "food", {"nutrition": 200}],
    "lembas": ["lembas", "%", "white", "misc", {"nutrition": 80}],
    "potion_of_healing": ["potion of healing", "!", "red", "potion", {}],
    "scroll_of_spark": ["scroll of spark", "?", "yellow", "scroll", {}],
    "wand_of_fire": ["wand of fire", "/", "red", "wand", {}],
    "horn_of_frost": ["horn of frost", "(", "cyan", "horn", {}],
    "rock": ["rock", "*", "white", "misc", {}],
}
INV: list[list[Any]] = [
    ["a", "short_sword", 1, "weapon", -1, 4],
    ["b", "leather_armour", 1, "body", -1, 0],
    ["c", "food_ration", 2, "", -1, 0],
    ["d", "potion_of_healing", 1, "", -1, 2],
    ["e", "scroll_of_spark", 3, "", -1, 1],
    ["f", "wand_of_fire", 1, "", 4, 4],
    ["g", "dart", 5, "", -1, 0],
    ["h", "boots", 1, "", -1, 0],
    ["i", "spellbook_of_spark", 1, "", -1, 0],
    ["j", "horn_of_frost", 1, "", -1, 0],
    ["k", "lembas", 1, "", -1, 0],
    ["l", "dagger", 1, "", -1, 0],
    ["m", "rock", 1, "", -1, 0],
]
TERRAIN = [
    ["rock", "rock", " ", "white", False, False],
    ["wall", "wall", "#", "white", False, False],
    ["floor", "floor", ".", "white", True, True],
]


def make_model(inv: list[list[Any]] | None = None, **me: Any) -> GameModel:
    welcome = Welcome(
        v=2, id=1, name="ann", token="t", resumed=False, tick=0, tick_rate=10,
        terrain=TERRAIN, kinds=[["player", "player", "@", "white"], ["rat", "giant rat", "r", "red"], ["newt", "newt", ":", "y"]],
        items=ITEMS, classes=[], motd="",
        spells={"spark": ["spark", 1, "evocation", "dir"],
                "fireball": ["fireball", 3, "evocation", "cell"]},
        statuses=[["frozen", "frozen"], ["poisoned", "poisoned"]], damage_types=["fire"],
    )  # fmt: skip
    model = GameModel(welcome)
    w, h = 10, 6
    known = bytes([2] * (w * h))
    actors = [
        [1, 0, "ann", 4, 3, 10, 10, 8 | 16, 0],
        [20, 1, "", 7, 3, 5, 5, 0, 0],
        [21, 2, "", 2, 1, 2, 2, 0, 0],
        [22, 2, "", 6, 5, 2, 2, 0, 0],
        [23, 0, "bob", 5, 3, 10, 10, 16, 0],
    ]
    base = {"x": 4, "y": 3, "inv": INV if inv is None else inv}
    model.apply(Snapshot(tick=1, depth=1, w=w, h=h, map=known,
                         fov=[0, 0, 0, 0, b""], actors=actors, objs=[1, 1, "dart"],
                         me=base | me, ack=-1))  # fmt: skip
    return model


def letters(model: GameModel, verb: str) -> str:
    return "".join(item.letter for item in menu_items(model, verb))


@pytest.mark.parametrize(
    ("verb", "expected"),
    [
        ("drop", "abcdefghijklm"),
        ("wield", "gl"),  # not the sword already in hand
        ("wear", "hi"),  # not the armour already worn
        ("remove", "ab"),
        ("eat", "ck"),
        ("quaff", "d"),
        ("read", "ei"),
        ("throw", "acdefghijklm"),  # all but what is worn (the armour b)
        ("zap", "fj"),
    ],
)
def test_menus_list_fitting_items(verb: str, expected: str) -> None:
    assert letters(make_model(), verb) == expected


def test_labels_show_counts_curses_charges_and_equipment() -> None:
    model = make_model()
    labels = {item.letter: item_label(model, item) for item in model.inventory()}
    assert labels["a"] == "a - an uncursed short sword (weapon in hand)"
    assert labels["b"] == "b - a leather armour (being worn)"
    assert labels["c"] == "c - 2 food rations"
    assert labels["d"] == "d - a blessed potion of healing"
    assert labels["e"] == "e - 3 cursed scrolls of spark"
    assert labels["f"] == "f - an uncursed wand of fire (4 charges)"
    worn_book = InvItem("i", "spellbook_of_spark", 1, "book")
    assert item_label(model, worn_book) == "i - a spellbook of spark (spellbook in use)"
    assert item_label(model, InvItem("z", "wand_of_fire", 1, "", 1)) == (
        "z - a wand of fire (1 charge)"
    )


def test_plurals() -> None:
    assert [
        plural(n)
        for n in ("dart", "scroll of spark", "potion of healing", "box", "ruby", "key", "dish")
    ] == ["darts", "scrolls of spark", "potions of healing", "boxes", "rubies", "keys", "dishes"]


def test_inventory_rows_are_grouped() -> None:
    model = make_model()
    rows = inventory_rows(model)
    assert rows[0] == "Weapons" and rows[1].startswith("  a - ")
    headings = [r for r in rows if not r.startswith("  ")]
    assert headings == [
        "Weapons",
        "Thrown weapons",
        "Armour",
        "Wands and horns",
        "Potions",
        "Scrolls",
        "Spellbooks",
        "Food",
        "Other",
    ]
    assert sum(r.startswith("  ") for r in rows) == len(INV)
    assert inventory_rows(model, "quaff") == ["Potions", "  d - a blessed potion of healing"]
    assert inventory_rows(make_model([])) == ["Your pack is empty."]
    assert inventory_rows(make_model([]), "eat") == ["Nothing fits."]


def test_spell_rows_and_choices() -> None:
    model = make_model(
        spells=[["a", "spark", 7, 5, False], ["b", "fireball", 55, 15, True]],
        choice=2,
        options=["health", "resist_cold", "marksman"],
    )
    rows = spell_rows(model)
    assert "Level" in rows[0] and "School" in rows[0] and "Fail" in rows[0] and "Cost" in rows[0]
    assert rows[1].split() == ["a", "-", "spark", "1", "evocation", "7%", "5"]
    assert rows[2].split() == ["b", "-", "fireball", "3", "evocation", "55%", "15", "(forgotten)"]
    assert choice_rows(model) == [
        "Choose a reward (2 owed):",
        "  a - more health",
        "  b - resistance to cold",
        "  c - the ability: marksman",
    ]
    assert option_label("sneak_attack") == "the ability: sneak attack"


def test_info_rows() -> None:
    model = make_model()
    about = {"name": "", "kind": "rat", "level": 3, "hp": 4, "max_hp": 9, "en": 2, "max_en": 5,
             "power": 6, "defence": 1, "courage": 0.25, "resist": {"fire": 2, "cold": -1},
             "abilities": ["sneak_attack"], "sts": [[1, 4]], "you_miss": 0.125,
             "you_crit": 0.1, "it_miss": 0.3, "it_crit": 0.1}  # fmt: skip
    model.apply(Info(20, True, about))
    seen = model.looked_at(20)
    assert seen is not None
    text = "\n".join(info_rows(model, seen[1], found=seen[0]))
    for part in (
        "giant rat",
        "Level 3",
        "Health 4/9",
        "Energy 2/5",
        "Power 6",
        "Defence 1",
        "Courage 25%",
        "cold -1, fire +2",
        "sneak attack",
        "poisoned (4)",
        "You miss it 12%",
        "score a critical 10%",
        "It misses you 30%",
    ):
        assert part in text, part
    del about["courage"]  # an immobile monster has none
    model.apply(Info(20, True, about))
    seen = model.looked_at(20)
    assert seen is not None and "Courage" not in "\n".join(info_rows(model, seen[1]))
    assert info_rows(model, None) == ["Looking..."]
    assert info_rows(model, seen[1], found=False) == ["You cannot see that any more."]


def test_targets_nearest_first_monsters_only() -> None:
    model = make_model()
    # rat at distance 3; newts at (2, 1) and (6, 5): both 2, the straight-line
    # distances tie as well (8), so the lower id comes first; bob is a player
    assert targets(model) == (Target(21, 2, 1), Target(22, 6, 5), Target(20, 7, 3))


def test_context() -> None:
    model = make_model(
        spells=[["a", "spark", 7, 5, False], ["b", "fireball", 55, 15, True]],
        choice=1,
        options=["power"],
    )
    ctx = context(model)
    assert ctx.position == (4, 3) and ctx.size == (10, 6)
    assert ctx.letters == frozenset("abcdefghijklm")
    assert ctx.menus["quaff"] == ("d",) and ctx.menus["zap"] == ("f", "j")
    assert ctx.spells == (SpellChoice("a", "spark", "dir"), SpellChoice("b", "fireball", "cell"))
    assert ctx.actors_at[(7, 3)] == 20 and ctx.actors_at[(4, 3)] == 1
    assert ctx.options == ("power",)
    assert context(make_model()).options == ()


def test_cell_description() -> None:
    model = make_model()
    assert cell_description(model, 1, 1) == "You remember floor with a dart on it."
    model.visible[2, 2] = True
    assert cell_description(model, 2, 2) == "You see floor."
    model.known[0, 0] = 255
    assert cell_description(model, 0, 0) == "You cannot see there."
    assert cell_description(model, 50, 0) == "You see nothing there."


def test_info_title_spells_and_breath() -> None:
    model = make_model()
    model.apply(
        Info(
            20, True, {"name": "giant rat", "kind": "rat", "spells": ["spark", 3], "breath": "fire"}
        )
    )
    seen = model.looked_at(20)
    assert seen is not None
    rows = info_rows(model, seen[1])
    assert rows[0] == "giant rat"  # the name is the kind's: said once
    assert "  Casts: spark" in rows and "  Breathes fire" in rows
    model.apply(Info(20, True, {"name": "Grip", "kind": "rat"}))
    seen = model.looked_at(20)
    assert seen is not None and info_rows(model, seen[1])[0] == "Grip (giant rat)"


def test_equipment_rows_list_every_slot_in_order() -> None:
    inv = [*INV, ["n", "boots", 1, "feet", -1, 1], ["o", "spellbook_of_spark", 1, "book", -1, 0]]
    model = make_model(inv, power=9, defence=3, resist={"fire": 1, "cold": -2})
    assert equipment_rows(model) == [
        "  Weapon       a - an uncursed short sword",
        "  Shield       (nothing)",
        "  Helmet       (nothing)",
        "  Body armour  b - a leather armour",
        "  Cloak        (nothing)",
        "  Gloves       (nothing)",
        "  Boots        n - a cursed pair of boots",
        "  Spellbook    o - a spellbook of spark",
        "",
        "  With this equipment: power 9, defence 3; resistances: cold -2, fire +1",
    ]


def test_equipment_rows_with_nothing_equipped() -> None:
    rows = equipment_rows(make_model([["a", "dagger", 1, "", -1, 0]], power=4, defence=0))
    assert rows[:8] == [
        f"  {label:<12} (nothing)"
        for label in (
            "Weapon",
            "Shield",
            "Helmet",
            "Body armour",
            "Cloak",
            "Gloves",
            "Boots",
            "Spellbook",
        )
    ]
    assert rows[-1] == "  With this equipment: power 4, defence 0; resistances: none"
