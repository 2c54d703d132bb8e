"""Tests for server.content: the shipped rules data and the strict loader's errors."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

import pytest

from server.content import (
    ABILITIES,
    DAMAGE_TYPES,
    DATA_DIR,
    EFFECT_RULES,
    ITEM_CATEGORIES,
    ROLES,
    SLOTS,
    ContentError,
    ItemDef,
    Terrain,
    default_content,
    load_content,
)
from tests.content.conftest import toml_records

RAT: dict[str, Any] = {
    "key": "rat", "name": "rat", "glyph": "r", "colour": "yellow", "level": 0,
    "health": 4, "energy": 2, "power": 2, "defence": 0, "courage": 0.3,
    "accuracy": 24.0, "dodge": 2.2, "speed": 3, "sight": 6, "depth_min": 1,
    "depth_max": 4, "rarity": 1, "xp": 1, "flags": ["animal"], "resist": {"poison": 1},
}  # fmt: skip

APPLE: dict[str, Any] = {
    "key": "apple", "name": "apple", "glyph": "%", "colour": "red", "category": "food",
    "weight": 2, "nutrition": 40, "depth_min": 1, "depth_max": 20, "rarity": 2,
}  # fmt: skip

# One record of each shape the item rules treat differently; each loads as it stands.
_ITEM = {"glyph": ")", "colour": "white", "weight": 10, "depth_min": 1, "depth_max": 9,
         "rarity": 3}  # fmt: skip
SWORD: dict[str, Any] = {
    "key": "sword", "name": "sword", **_ITEM, "category": "weapon", "power": 5,
    "enchant": "fire", "required_strength": 14, "accuracy": 1.1, "throw_range": 2,
    "metallic": True, "resist": {"cold": 1}, "description": "Hot.",
}  # fmt: skip
DART: dict[str, Any] = {"key": "dart", "name": "dart", **_ITEM, "category": "thrown",
                        "power": 3, "throw_range": 6}  # fmt: skip
FLASK: dict[str, Any] = {
    "key": "flask", "name": "flask", **_ITEM, "category": "thrown", "fragile": True,
    "effect": "splash", "damage_type": "fire", "dice": [2, 6],
}  # fmt: skip
WAND: dict[str, Any] = {
    "key": "wand", "name": "wand", **_ITEM, "category": "wand", "charges": [4, 8],
    "effect": "ray", "damage_type": "fire", "dice": [6, 6],
}  # fmt: skip
SHIELD: dict[str, Any] = {"key": "shield", "name": "shield", **_ITEM, "category": "shield",
                          "defence": 2, "shield_size": "large", "metallic": True}  # fmt: skip
POTION: dict[str, Any] = {"key": "potion", "name": "potion", **_ITEM, "category": "potion",
                          "fragile": True, "effect": "heal", "dice": [6, 4]}  # fmt: skip
SCROLL: dict[str, Any] = {"key": "scroll", "name": "scroll", **_ITEM, "category": "scroll",
                          "effect": "learn_spell", "spell": "spark"}  # fmt: skip
BOOK: dict[str, Any] = {"key": "book", "name": "book", **_ITEM, "category": "spellbook",
                        "spell": "magic_missile", "cursed": True}  # fmt: skip

WARRIOR: dict[str, Any] = {
    "key": "warrior", "name": "Warrior", "colour": "red", "hidden": False, "health": 24,
    "energy": 10, "power": 5, "defence": 1, "accuracy": 11.0, "dodge": 4.0, "speed": 3,
    "strength": 14, "miss_chance": 0.1,
    "boosts": {"health": 6, "energy": 1, "power": 1, "defence": 1, "accuracy": 1.0,
               "dodge": 0.5},
    "start_items": ["apple"], "role": "Valkyrie", "casting_stat": 10,
    "special_choices": ["regenerate"],
}  # fmt: skip

_KIND = {"monsters.toml": "monster", "items.toml": "item", "classes.toml": "class"}
_BASE = {"monsters.toml": RAT, "items.toml": APPLE, "classes.toml": WARRIOR}


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A writable copy of the shipped data with minimal items, monsters and classes."""
    folder = tmp_path / "data"
    shutil.copytree(DATA_DIR, folder)
    for file, record in _BASE.items():
        (folder / file).write_text(toml_records(_KIND[file], [record]))
    return folder


def _with(record: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """Copy of ``record`` with fields changed; a value of ``...`` removes the field."""
    out = {**record, **changes}
    return {k: v for k, v in out.items() if v is not ...}


def _error(folder: Path) -> str:
    with pytest.raises(ContentError) as info:
        load_content(folder)
    return str(info.value)


def _error_with(folder: Path, file: str, changes: dict[str, Any]) -> str:
    """The error when ``file`` holds only its minimal record, with ``changes`` (see ``_with``)."""
    record = _with(_BASE[file], **changes)
    (folder / file).write_text(toml_records(_KIND[file], [record]))
    return _error(folder)


# --- the shipped data ----------------------------------------------------------------


def test_shipped_data_loads_with_every_kind_of_record() -> None:
    content = load_content()
    assert [t.key for t in content.terrain] == [t.name.lower() for t in Terrain]
    assert [t.terrain for t in content.terrain] == list(Terrain)
    assert len(content.monsters) >= 40
    assert len(content.items) >= 40
    assert {c.key: (c.colour, c.hidden) for c in content.classes.values()} == {
        "warrior": ("red", False),
        "mage": ("blue", False),
        "monk": ("green", False),
        "revenant": ("magenta", True),
    }
    assert content.classes["monk"].miss_chance == 0.05
    assert content.classes["warrior"].miss_chance == 0.10
    for cls in content.classes.values():
        assert set(cls.start_items) <= set(content.items)


def test_default_content_is_loaded_once() -> None:
    assert default_content() is default_content()
    assert list(default_content().monsters) == list(load_content().monsters)


def test_shipped_terrain_matches_the_agreed_properties() -> None:
    terrain = {t.terrain: t for t in default_content().terrain}
    passable = {t for t, d in terrain.items() if d.passable}
    opaque = {t for t, d in terrain.items() if not d.transparent}
    assert passable == {
        Terrain.FLOOR, Terrain.DOOR_OPEN, Terrain.WATER, Terrain.RUBBLE, Terrain.TREE,
        Terrain.FOUNTAIN, Terrain.ALTAR, Terrain.STAIRS_UP, Terrain.STAIRS_DOWN,
    }  # fmt: skip
    assert opaque == {Terrain.ROCK, Terrain.WALL, Terrain.DOOR_CLOSED, Terrain.RUBBLE}
    assert "".join(terrain[t].glyph for t in Terrain) == " #.+'~=:T{_<>"


def test_shipped_monsters_span_depths_one_to_ten_with_the_required_kinds() -> None:
    monsters = default_content().monsters.values()
    covered = {d for m in monsters for d in range(m.depth_min, m.depth_max + 1)}
    assert set(range(1, 11)) <= covered
    flags = {f for m in monsters for f in m.flags}
    assert {"undead", "unique", "dragon", "animal"} <= flags
    assert any(m.speed < 3 for m in monsters)  # something fast
    skeleton = default_content().monsters["skeleton"]
    assert "undead" in skeleton.flags
    assert skeleton.resistance("poison") == 3
    assert skeleton.resistance("fire") == 0
    with pytest.raises(KeyError):
        skeleton.resistance("frost")


def test_shipped_monsters_miss_and_are_missed_about_ten_percent_at_an_even_level() -> None:
    # monsters.toml: a level-L player has accuracy ~10 + L and dodge ~5 + L/2;
    # P(miss) = D / (2A) when A >= D (seed 002's hit test).
    for m in default_content().monsters.values():
        if "immobile" in m.flags:
            continue
        player_misses = m.dodge / (2 * (10 + m.level))
        monster_misses = (5 + m.level / 2) / (2 * m.accuracy)
        assert 0.05 <= player_misses <= 0.2, m.key
        assert 0.05 <= monster_misses <= 0.2, m.key


def test_shallow_monsters_are_gentle() -> None:
    for m in default_content().monsters.values():
        if m.depth_min == 1:
            assert m.level <= 1 and m.power <= 3, m.key


def test_shipped_bestiary_meets_the_issue_minimums() -> None:
    # Issue 5: at least 40 monsters over at least 10 depths, with breathers,
    # casters, undead, demons, dragons and uniques.
    monsters = list(default_content().monsters.values())

    def count(flag: str) -> int:
        return sum(flag in m.flags for m in monsters)

    assert len(monsters) >= 40
    assert len({m.depth_min for m in monsters}) >= 10
    assert max(m.depth_min for m in monsters) >= 12
    assert sum(m.breath is not None for m in monsters) >= 3
    assert sum(bool(m.spells) for m in monsters) >= 4
    assert count("undead") >= 4 and count("demon") >= 2 and count("dragon") >= 3
    assert count("unique") >= 2 and count("evil") >= 10
    assert count("immobile") >= 1 and count("wallwalker") >= 1
    assert any("reflection" in m.abilities for m in monsters)
    assert sum(m.melee_type is not None for m in monsters) >= 3
    assert sum(bool(m.resist) for m in monsters) >= 20
    # Every depth down to 12 has something to meet that is not a unique.
    for depth in range(1, 13):
        assert any(
            m.depth_min <= depth <= m.depth_max and "unique" not in m.flags for m in monsters
        ), depth


def test_shipped_breathers_named_in_the_issue() -> None:
    monsters = default_content().monsters
    assert monsters["hell_hound"].breath == "fire"
    assert monsters["winter_wolf"].breath == "cold"
    dragons = [m for m in monsters.values() if "dragon" in m.flags]
    assert all(m.breath is not None and m.breath_dice is not None for m in dragons)
    assert any(m.key.startswith("ancient_") for m in dragons)
    assert any(m.key.startswith(("baby_", "young_")) for m in dragons)


def test_shipped_immobile_monsters_have_no_courage_or_dodge() -> None:
    # Issue 5: immobile monsters have no courage; a mold cannot step aside either.
    for m in default_content().monsters.values():
        if "immobile" in m.flags:
            assert m.courage == 0.0 and m.dodge == 0.0, m.key


def test_shipped_items_cover_every_category_and_slot() -> None:
    items = default_content().items.values()
    assert {i.category for i in items} == set(ITEM_CATEGORIES)
    assert {i.slot for i in items} == set(SLOTS) | {None}
    assert {i.shield_size for i in items if i.category == "shield"} == {"small", "large"}
    assert any(i.cursed for i in items) and any(i.blessed for i in items)
    assert any(i.artifact for i in items) and any(i.enchant for i in items)
    assert any(i.resist for i in items)


def test_shipped_items_named_in_the_brief() -> None:
    items = default_content().items
    dagger = items["dagger"]
    assert (dagger.category, dagger.slot, dagger.throw_range) == ("weapon", "weapon", 6)
    assert items["dart"].throw_range == 6 and items["dart"].category == "thrown"
    assert items["rock"].throw_distance == 4
    assert items["flask_of_oil"].fragile and items["flask_of_oil"].damage_type == "fire"
    assert not items["meat_chunk"].vegetarian and items["apple"].vegetarian
    assert items["mace"].required_strength > items["dagger"].required_strength
    assert not items["leather_armour"].metallic
    assert items["chain_mail"].metallic and items["plate_mail"].metallic
    assert items["plate_mail"].weight > items["chain_mail"].weight
    assert items["gauntlets"].metallic and items["iron_shoes"].metallic
    assert items["metal_helm"].metallic and not items["leather_cap"].metallic
    zaps = {
        "wand_of_digging": ("dig", None, None),
        "wand_of_fire": ("ray", "fire", (6, 6)),
        "wand_of_cold": ("ray", "cold", (6, 6)),
        "wand_of_lightning": ("ray", "electricity", (6, 6)),
        "wand_of_magic_missile": ("ray", "magic_missile", (2, 6)),
        "wand_of_striking": ("beam", "force", (2, 12)),
        "fire_horn": ("ray", "fire", (6, 6)),
        "frost_horn": ("ray", "cold", (6, 6)),
    }
    for key, (effect, damage_type, dice) in zaps.items():
        item = items[key]
        assert (item.effect, item.damage_type, item.dice) == (effect, damage_type, dice), key
        assert item.charges is not None and 1 <= item.charges[0] <= item.charges[1], key
    assert items["wand_of_sleep"].damage_type == "sleep"
    food = [i for i in items.values() if i.category == "food"]
    assert len(food) >= 4 and all(i.nutrition > 0 for i in food)
    teachers = [i for i in items.values() if i.effect == "learn_spell"]
    assert {i.category for i in teachers} == {"potion", "scroll"}
    assert items["scroll_of_spark"].spell == "spark"


def test_shipped_classes_have_their_roles_abilities_and_gear() -> None:
    content = default_content()
    classes = content.classes
    assert {k: c.role for k, c in classes.items()} == {
        "warrior": "Valkyrie", "mage": "Wizard", "monk": "Monk", "revenant": "Rogue",
    }  # fmt: skip
    assert classes["monk"].abilities == ("martial_arts",)
    assert classes["revenant"].abilities == ("sneak_attack",)
    assert classes["revenant"].sneak_attack > 0
    assert all(c.sneak_attack == 0 for k, c in classes.items() if k != "revenant")
    mage = {content.items[k].category for k in classes["mage"].start_items}
    assert {"weapon", "robe", "spellbook", "scroll", "wand"} <= mage
    assert "long_sword" in classes["warrior"].start_items
    for cls in classes.values():
        assert cls.special_choices and set(cls.special_choices) <= set(ABILITIES)
        assert not set(cls.special_choices) & set(cls.abilities)
        # Whatever a class starts with, it can use without a strength penalty.
        for key in cls.start_items:
            assert content.items[key].required_strength <= cls.strength, (cls.key, key)
            assert not content.items[key].cursed, (cls.key, key)


def test_minimal_files_load_into_frozen_definitions(data_dir: Path) -> None:
    content = load_content(data_dir)
    rat = content.monsters["rat"]
    assert rat.flags == ("animal",) and dict(rat.resist) == {"poison": 1}
    assert isinstance(rat.accuracy, float) and isinstance(rat.speed, int)
    assert content.classes["warrior"].boosts.health == 6
    assert content.classes["warrior"].start_items == ("apple",)
    with pytest.raises(AttributeError):
        rat.speed = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        rat.resist["fire"] = 1  # type: ignore[index]


def test_optional_monster_fields_default_to_empty(data_dir: Path) -> None:
    bare_rat = _with(RAT, flags=..., resist=...)
    (data_dir / "monsters.toml").write_text(toml_records("monster", [bare_rat]))
    rat = load_content(data_dir).monsters["rat"]
    assert rat.flags == () and dict(rat.resist) == {}


def test_records_keep_file_order(data_dir: Path) -> None:
    keys = ["zebra_rat", "aardvark", "mole"]
    records = [_with(RAT, key=k) for k in keys]
    (data_dir / "monsters.toml").write_text(toml_records("monster", records))
    assert list(load_content(data_dir).monsters) == keys


# --- errors: each names file, record and field -------------------------------------------

BAD_RECORDS = [
    ("monsters.toml", {"speed": 0},
     "monsters.toml: monster 'rat': field 'speed': must be an int in 1..20, got 0"),
    ("monsters.toml", {"speed": 21}, "field 'speed': must be an int in 1..20, got 21"),
    ("monsters.toml", {"speed": True}, "field 'speed': must be an int in 1..20, got True"),
    ("monsters.toml", {"level": 1.5}, "field 'level': must be an int >= 0, got 1.5"),
    ("monsters.toml", {"health": 0}, "field 'health': must be an int >= 1, got 0"),
    ("monsters.toml", {"courage": 1.5}, "field 'courage': must be a number in 0.0..1.0"),
    ("monsters.toml", {"courage": "high"}, "field 'courage': must be a number"),
    ("monsters.toml", {"courage": float("nan")}, "field 'courage': must be a number"),
    ("monsters.toml", {"accuracy": 0}, "field 'accuracy': must be a number > 0.0, got 0"),
    ("monsters.toml", {"dodge": False}, "field 'dodge': must be a number >= 0.0, got False"),
    ("monsters.toml", {"sight": 0}, "field 'sight': must be an int in 1..20"),
    ("monsters.toml", {"depth_max": 51}, "field 'depth_max': must be an int in 1..50, got 51"),
    ("monsters.toml", {"depth_min": 5, "depth_max": 3},
     "monster 'rat': field 'depth_max': must be >= depth_min (5), got 3"),
    ("monsters.toml", {"rarity": 0}, "field 'rarity': must be an int >= 1, got 0"),
    ("monsters.toml", {"glyph": "rr"}, "field 'glyph': must be one printable character"),
    ("monsters.toml", {"colour": "orange"}, "field 'colour': must be a colour"),
    ("monsters.toml", {"name": ""}, "field 'name': must be a non-empty string"),
    ("monsters.toml", {"flags": ["reflecting"]},
     "monster 'rat': field 'flags': unknown flag 'reflecting'"),
    ("monsters.toml", {"flags": ["evil", "evil"]}, "field 'flags': lists the flag 'evil' twice"),
    ("monsters.toml", {"flags": "evil"}, "field 'flags': must be a list of strings"),
    ("monsters.toml", {"resist": {"frost": 1}},
     "monster 'rat': field 'resist': unknown damage type 'frost'"),
    ("monsters.toml", {"resist": {"fire": 4}},
     "monster 'rat': field 'resist.fire': must be an int in -3..3, got 4"),
    ("monsters.toml", {"resist": {"fire": True}}, "field 'resist.fire': must be an int in -3..3"),
    ("monsters.toml", {"resist": 1}, "field 'resist': must be a table"),
    ("monsters.toml", {"spede": 3}, "monsters.toml: monster 'rat': field 'spede': unknown field"),
    ("monsters.toml", {"speed": ...}, "monster 'rat': field 'speed': missing required field"),
    ("monsters.toml", {"key": "Rat"}, "monsters.toml: monster #1: field 'key': must be a lower"),
    ("monsters.toml", {"key": ...}, "monsters.toml: monster #1: field 'key': missing required"),
    ("items.toml", {"category": "gem"}, "items.toml: item 'apple': field 'category': must be a"),
    ("items.toml", {"weight": -1}, "item 'apple': field 'weight': must be an int >= 0, got -1"),
    ("items.toml", {"nutrition": "lots"}, "item 'apple': field 'nutrition': must be an int"),
    ("items.toml", {"slot": "body"}, "item 'apple': field 'slot': unknown field"),
    ("classes.toml", {"hidden": 1}, "class 'warrior': field 'hidden': must be true or false, got 1"),
    ("classes.toml", {"miss_chance": 1.5}, "class 'warrior': field 'miss_chance': must be a"),
    ("classes.toml", {"start_items": ["long_sword"]},
     "classes.toml: class 'warrior': field 'start_items': unknown item 'long_sword'"),
    ("classes.toml", {"start_items": "apple"}, "field 'start_items': must be a list of strings"),
    ("classes.toml", {"boosts": _with(WARRIOR["boosts"], dodge=...)},
     "class 'warrior': field 'boosts.dodge': missing required entry"),
    ("classes.toml", {"boosts": _with(WARRIOR["boosts"], luck=1)},
     "class 'warrior': field 'boosts.luck': unknown entry"),
    ("classes.toml", {"boosts": _with(WARRIOR["boosts"], power=True)},
     "class 'warrior': field 'boosts.power': must be an int >= 0, got True"),
    ("classes.toml", {"boosts": 3}, "class 'warrior': field 'boosts': must be a table"),
]  # fmt: skip


@pytest.mark.parametrize(("file", "changes", "message"), BAD_RECORDS)
def test_bad_record_is_rejected_naming_file_record_and_field(
    data_dir: Path, file: str, changes: dict[str, Any], message: str
) -> None:
    assert message in _error_with(data_dir, file, changes)


def test_duplicate_record_key_is_rejected(data_dir: Path) -> None:
    records = [RAT, _with(RAT, key="mole"), _with(RAT, name="second rat")]
    (data_dir / "monsters.toml").write_text(toml_records("monster", records))
    message = _error(data_dir)
    assert "monsters.toml: monster 'rat': field 'key': duplicate key 'rat'" in message
    assert "record #1" in message


def test_duplicate_toml_key_in_a_record_is_rejected(data_dir: Path) -> None:
    (data_dir / "monsters.toml").write_text(toml_records("monster", [RAT]) + "speed = 4\n")
    assert _error(data_dir).startswith("monsters.toml: invalid TOML")


def test_bad_record_is_named_by_its_position_among_good_ones(data_dir: Path) -> None:
    records = [RAT, _with(RAT, key="mole"), _with(RAT, key="7up")]
    (data_dir / "monsters.toml").write_text(toml_records("monster", records))
    assert "monsters.toml: monster #3: field 'key'" in _error(data_dir)


def test_unknown_top_level_key_is_rejected(data_dir: Path) -> None:
    (data_dir / "items.toml").write_text("version = 1\n" + toml_records("item", [APPLE]))
    assert "items.toml: unknown top-level key 'version'" in _error(data_dir)


def test_wrong_table_name_and_empty_file_are_rejected(data_dir: Path) -> None:
    (data_dir / "items.toml").write_text(toml_records("items", [APPLE]))
    assert "items.toml: unknown top-level key 'items'" in _error(data_dir)
    (data_dir / "items.toml").write_text("")
    assert "items.toml: has no [[item]] records" in _error(data_dir)
    (data_dir / "items.toml").write_text("item = 3\n")
    assert "items.toml: must hold [[item]] tables" in _error(data_dir)


def test_invalid_toml_and_missing_file_are_rejected(data_dir: Path) -> None:
    (data_dir / "classes.toml").write_text("[[class]\nkey = ")
    assert _error(data_dir).startswith("classes.toml: invalid TOML")
    (data_dir / "classes.toml").unlink()
    assert _error(data_dir).startswith("classes.toml: cannot read")


def _terrain_records() -> list[dict[str, Any]]:
    return [
        {"key": t.key, "name": t.name, "glyph": t.glyph, "colour": t.colour,
         "passable": t.passable, "transparent": t.transparent}
        for t in default_content().terrain
    ]  # fmt: skip


def test_terrain_out_of_enum_order_is_rejected(data_dir: Path) -> None:
    records = _terrain_records()
    records[2], records[3] = records[3], records[2]
    (data_dir / "terrain.toml").write_text(toml_records("terrain", records))
    message = _error(data_dir)
    assert "terrain.toml: terrain 'door_closed': field 'key'" in message
    assert "record #3 must be 'floor'" in message


def test_terrain_missing_or_extra_records_are_rejected(data_dir: Path) -> None:
    records = _terrain_records()
    (data_dir / "terrain.toml").write_text(toml_records("terrain", records[:-1]))
    assert "terrain.toml: expected 13 [[terrain]] records" in _error(data_dir)
    assert "missing stairs_down" in _error(data_dir)
    extra = [*records, {**records[0], "key": "magma"}]
    (data_dir / "terrain.toml").write_text(toml_records("terrain", extra))
    assert "terrain.toml: terrain 'magma': field 'key': no such Terrain" in _error(data_dir)


def test_terrain_field_type_is_checked(data_dir: Path) -> None:
    records = _terrain_records()
    records[1]["passable"] = 0
    (data_dir / "terrain.toml").write_text(toml_records("terrain", records))
    assert "terrain 'wall': field 'passable': must be true or false, got 0" in _error(data_dir)


def test_every_damage_type_is_accepted_as_a_resistance(data_dir: Path) -> None:
    resist = {d: (i % 7) - 3 for i, d in enumerate(DAMAGE_TYPES)}
    (data_dir / "monsters.toml").write_text(toml_records("monster", [_with(RAT, resist=resist)]))
    rat = load_content(data_dir).monsters["rat"]
    assert dict(rat.resist) == resist
    assert len(DAMAGE_TYPES) == 55


# --- items: the seed-001 attributes and the rules across fields -------------------------

ITEM_SHAPES = [SWORD, DART, FLASK, WAND, SHIELD, POTION, SCROLL, BOOK]


def _items(data_dir: Path, *records: dict[str, Any]) -> dict[str, ItemDef]:
    (data_dir / "items.toml").write_text(toml_records("item", [APPLE, *records]))
    return load_content(data_dir).items


def test_item_fields_default_to_nothing_special(data_dir: Path) -> None:
    apple = load_content(data_dir).items["apple"]
    assert (apple.power, apple.defence, dict(apple.resist), apple.enchant) == (None, 0, {}, None)
    assert (apple.throw_range, apple.throw_distance, apple.slot) == (None, 4, None)
    assert (apple.required_strength, apple.accuracy, apple.shield_size) == (0, 1.0, None)
    assert (apple.charges, apple.effect, apple.damage_type, apple.dice, apple.spell) == (
        None, None, None, None, None,
    )  # fmt: skip
    assert apple.description == ""
    for name in ("fragile", "vegetarian", "rustproof", "acidproof", "cursed", "blessed",
                 "metallic", "artifact"):  # fmt: skip
        assert getattr(apple, name) is False, name


def test_item_records_of_every_shape_load_with_their_fields(data_dir: Path) -> None:
    items = _items(data_dir, *ITEM_SHAPES)
    sword = items["sword"]
    assert (sword.power, sword.enchant, sword.required_strength, sword.accuracy) == (
        5, "fire", 14, 1.1,
    )  # fmt: skip
    assert (sword.throw_distance, sword.metallic, dict(sword.resist)) == (2, True, {"cold": 1})
    assert sword.description == "Hot." and sword.slot == "weapon"
    assert items["dart"].slot is None and items["dart"].throw_distance == 6
    wand = items["wand"]
    assert (wand.charges, wand.effect, wand.damage_type, wand.dice) == ((4, 8), "ray", "fire",
                                                                       (6, 6))  # fmt: skip
    assert isinstance(wand.charges, tuple) and isinstance(wand.dice, tuple)
    assert (items["shield"].slot, items["shield"].shield_size) == ("shield", "large")
    assert (items["scroll"].effect, items["scroll"].spell) == ("learn_spell", "spark")
    assert (items["book"].slot, items["book"].spell, items["book"].cursed) == (
        "book", "magic_missile", True,
    )  # fmt: skip
    assert items["potion"].dice == (6, 4) and items["flask"].fragile


def test_slot_follows_the_category() -> None:
    # The brief's table: category -> equipment slot; all other categories have none.
    expected = {
        "weapon": "weapon",
        "armour": "body",
        "robe": "cloak",
        "shield": "shield",
        "helmet": "head",
        "gloves": "hands",
        "boots": "feet",
        "spellbook": "book",
    }
    base = ItemDef("x", "x", "x", "white", "misc", 1, 0, 1, 50, 1)
    for category in ITEM_CATEGORIES:
        item = dataclasses.replace(base, category=category)
        assert item.slot == expected.get(category), category
    assert sorted(SLOTS) == sorted(expected.values())
    assert len(SLOTS) == len(set(SLOTS))


def _valid_for(effect: str) -> dict[str, Any]:
    """A record using ``effect`` in the first category its rule allows, with what it needs."""
    rule = EFFECT_RULES[effect]
    category = rule.categories[0]
    record: dict[str, Any] = {"key": "thing", "name": "thing", **_ITEM, "category": category,
                              "effect": effect}  # fmt: skip
    if category in ("wand", "horn"):
        record["charges"] = [1, 3]
    if category == "thrown":
        record["fragile"] = True
    if rule.damage_type:
        record["damage_type"] = "cold"
    if rule.dice:
        record["dice"] = [2, 4]
    if rule.spell:
        record["spell"] = "freeze"
    return record


@pytest.mark.parametrize("effect", list(EFFECT_RULES))
def test_every_effect_loads_with_exactly_the_fields_its_rule_needs(
    data_dir: Path, effect: str
) -> None:
    rule = EFFECT_RULES[effect]
    record = _valid_for(effect)
    thing = _items(data_dir, record)["thing"]
    assert thing.effect == effect
    assert (thing.damage_type is not None, thing.dice is not None, thing.spell is not None) == (
        rule.damage_type, rule.dice, rule.spell,
    )  # fmt: skip
    for name, needed, extra in (
        ("damage_type", rule.damage_type, "fire"),
        ("dice", rule.dice, [1, 6]),
        ("spell", rule.spell, "spark"),
    ):
        changed = _with(record, **{name: ... if needed else extra})
        (data_dir / "items.toml").write_text(toml_records("item", [APPLE, changed]))
        word = "required by" if needed else "not used by"
        assert f"item 'thing': field '{name}': {word} effect '{effect}'" in _error(data_dir)
    others = [c for c in ITEM_CATEGORIES if c not in rule.categories]
    for category in others:
        changed = _with(record, category=category, charges=..., fragile=..., shield_size=...,
                        nutrition=...)  # fmt: skip
        if category == "food":
            changed["nutrition"] = 10
        if category == "shield":
            changed["shield_size"] = "small"
        if category in ("wand", "horn"):
            changed["charges"] = [1, 2]
        (data_dir / "items.toml").write_text(toml_records("item", [APPLE, changed]))
        assert f"item 'thing': field 'effect': '{effect}' is only for" in _error(data_dir)


BAD_ITEMS = [
    (SWORD, {"power": "5"}, "item 'sword': field 'power': must be an int in -50..50, got '5'"),
    (SWORD, {"power": 51}, "field 'power': must be an int in -50..50, got 51"),
    (SWORD, {"defence": -51}, "field 'defence': must be an int in -50..50, got -51"),
    (SWORD, {"enchant": "frost"}, "field 'enchant': must be a damage type"),
    (SWORD, {"power": ...}, "item 'sword': field 'enchant': needs a power >= 1"),
    (SWORD, {"power": 0}, "field 'enchant': needs a power >= 1"),
    (SWORD, {"accuracy": 0}, "field 'accuracy': must be a number in 0.0..10.0 other than 0.0"),
    (SWORD, {"accuracy": True}, "field 'accuracy': must be a number"),
    (SWORD, {"required_strength": 51}, "field 'required_strength': must be an int in 0..50"),
    (SWORD, {"throw_range": 0}, "field 'throw_range': must be an int in 1..20, got 0"),
    (SWORD, {"cursed": True, "blessed": True},
     "item 'sword': field 'blessed': an item cannot be both cursed and blessed"),
    (SWORD, {"fragile": "yes"}, "field 'fragile': must be true or false, got 'yes'"),
    (SWORD, {"artifact": 1}, "field 'artifact': must be true or false, got 1"),
    (SWORD, {"charges": [1, 2]},
     "item 'sword': field 'charges': only wands and horns have charges (category 'weapon')"),
    (SWORD, {"shield_size": "small"}, "field 'shield_size': only shields have a size"),
    (SWORD, {"effect": "ray"}, "field 'effect': 'ray' is only for wand, horn (category 'weapon')"),
    (SWORD, {"nutrition": 10}, "field 'nutrition': must be 0 unless category is food"),
    (SWORD, {"vegetarian": True}, "field 'vegetarian': only food may be vegetarian"),
    (SWORD, {"resist": {"fire": 4}}, "item 'sword': field 'resist.fire': must be an int in -3..3"),
    (SWORD, {"description": ""}, "field 'description': must be a non-empty string"),
    (APPLE, {"nutrition": 0}, "item 'apple': field 'nutrition': must be > 0 for food, got 0"),
    (APPLE, {"nutrition": ...}, "field 'nutrition': must be > 0 for food, got 0"),
    (APPLE, {"accuracy": 1.0},
     "item 'apple': field 'accuracy': only weapons and thrown weapons have it (category 'food')"),
    (APPLE, {"required_strength": 3}, "field 'required_strength': only weapons and thrown"),
    (APPLE, {"enchant": "fire", "power": 2}, "field 'enchant': only weapons and thrown"),
    (APPLE, {"dice": [1, 6]}, "field 'dice': only an item with an effect that needs it"),
    (APPLE, {"damage_type": "fire"}, "field 'damage_type': only an item with an effect"),
    (APPLE, {"spell": "spark"}, "field 'spell': only a learn_spell effect or a spellbook"),
    (SHIELD, {"shield_size": ...}, "item 'shield': field 'shield_size': required for a shield"),
    (SHIELD, {"shield_size": "medium"}, "field 'shield_size': must be a shield size (small, large)"),
    (WAND, {"charges": ...}, "item 'wand': field 'charges': required for a wand or horn"),
    (WAND, {"charges": [5, 4]}, "field 'charges': must be a list [lo, hi] with 0 <= lo <= hi"),
    (WAND, {"charges": [0, 0]}, "field 'charges': must be a list [lo, hi]"),
    (WAND, {"charges": [1, 101]}, "field 'charges': must be a list [lo, hi]"),
    (WAND, {"charges": [4]}, "field 'charges': must be a list [lo, hi]"),
    (WAND, {"charges": [True, 3]}, "field 'charges': must be a list [lo, hi]"),
    (WAND, {"effect": ...}, "item 'wand': field 'effect': required for category 'wand'"),
    (WAND, {"effect": "zap"}, "field 'effect': must be a known effect (ray, beam, dig"),
    (WAND, {"damage_type": ...}, "field 'damage_type': required by effect 'ray'"),
    (WAND, {"damage_type": "frost"}, "field 'damage_type': must be a damage type"),
    (WAND, {"dice": [0, 6]}, "field 'dice': must be a list [count, sides], count 1..50, sides"),
    (WAND, {"dice": [6, 101]}, "field 'dice': must be a list [count, sides]"),
    (WAND, {"dice": [51, 6]}, "field 'dice': must be a list [count, sides]"),
    (WAND, {"dice": "6d6"}, "field 'dice': must be a list [count, sides]"),
    (WAND, {"dice": [6.0, 6]}, "field 'dice': must be a list [count, sides]"),
    (WAND, {"effect": "dig"}, "field 'damage_type': not used by effect 'dig'"),
    (SCROLL, {"spell": ...}, "item 'scroll': field 'spell': required by effect 'learn_spell'"),
    (SCROLL, {"spell": "Spark"}, "field 'spell': must be a lower-case identifier"),
    (SCROLL, {"effect": "heal"}, "field 'effect': 'heal' is only for potion (category 'scroll')"),
    (SCROLL, {"effect": ...}, "field 'effect': required for category 'scroll'"),
    (POTION, {"dice": ...}, "item 'potion': field 'dice': required by effect 'heal'"),
    (FLASK, {"fragile": False}, "item 'flask': field 'fragile': must be true for effect 'splash'"),
    (BOOK, {"effect": "learn_spell"}, "'learn_spell' is only for potion, scroll"),
    (DART, {"category": "dart"}, "field 'category': must be a category (food, potion, scroll"),
]  # fmt: skip


@pytest.mark.parametrize(("base", "changes", "message"), BAD_ITEMS)
def test_bad_item_is_rejected_naming_record_and_field(
    data_dir: Path, base: dict[str, Any], changes: dict[str, Any], message: str
) -> None:
    (data_dir / "items.toml").write_text(toml_records("item", [APPLE, _with(base, **changes)]))
    error = _error(data_dir)
    assert error.startswith("items.toml: item ")
    assert message in error


# --- monsters: melee types, breath, spells, abilities ----------------------------------


def test_monster_attack_fields_load(data_dir: Path) -> None:
    drake = _with(RAT, key="drake", melee_type="fire", breath="cold", breath_dice=[4, 6],
                  spells=["spark", "heal_wounds"], spell_power=9,
                  abilities=["reflection", "regenerate"], flags=["dragon", "flying"])  # fmt: skip
    (data_dir / "monsters.toml").write_text(toml_records("monster", [RAT, drake]))
    monsters = load_content(data_dir).monsters
    d = monsters["drake"]
    assert (d.melee_type, d.breath, d.breath_dice, d.spell_power) == ("fire", "cold", (4, 6), 9)
    assert d.spells == ("spark", "heal_wounds")
    assert d.abilities == ("reflection", "regenerate") and d.flags == ("dragon", "flying")
    rat = monsters["rat"]
    assert (rat.melee_type, rat.breath, rat.breath_dice, rat.spell_power) == (None,) * 4
    assert rat.spells == () and rat.abilities == ()


BAD_MONSTERS = [
    ({"melee_type": "frost"}, "monster 'rat': field 'melee_type': must be a damage type"),
    ({"breath": "fire"},
     "monster 'rat': field 'breath_dice': breath and breath_dice go together"),
    ({"breath_dice": [2, 6]}, "monster 'rat': field 'breath': breath and breath_dice go together"),
    ({"breath": "fire", "breath_dice": [0, 6]}, "field 'breath_dice': must be a list [count"),
    ({"breath": "fire", "breath_dice": [2, 6, 1]}, "field 'breath_dice': must be a list [count"),
    ({"breath": "flame", "breath_dice": [2, 6]}, "field 'breath': must be a damage type"),
    ({"spells": "spark"}, "field 'spells': must be a list of spell keys"),
    ({"spells": ["Spark"]}, "field 'spells': spell key must be a lower-case identifier"),
    ({"spells": [3]}, "field 'spells': spell key must be a lower-case identifier"),
    ({"spells": ["spark", "spark"]}, "field 'spells': lists the spell 'spark' twice"),
    ({"spell_power": 5}, "field 'spell_power': only a monster with spells has a spell power"),
    ({"spells": ["spark"], "spell_power": 0}, "field 'spell_power': must be an int in 1..100"),
    ({"abilities": ["telepathy"]}, "monster 'rat': field 'abilities': unknown ability 'telepathy'"),
    ({"abilities": ["regenerate", "regenerate"]},
     "field 'abilities': lists the ability 'regenerate' twice"),
    ({"abilities": "regenerate"}, "field 'abilities': must be a list of strings"),
]  # fmt: skip


@pytest.mark.parametrize(("changes", "message"), BAD_MONSTERS)
def test_bad_monster_attack_is_rejected(
    data_dir: Path, changes: dict[str, Any], message: str
) -> None:
    assert message in _error_with(data_dir, "monsters.toml", changes)


# --- classes: casting role, abilities, the level-five menu -----------------------------


def test_class_casting_and_ability_fields_load(data_dir: Path) -> None:
    rogue = _with(WARRIOR, key="rogue", role="Rogue", casting_stat=14, abilities=["sneak_attack"],
                  sneak_attack=1.5,
                  special_choices=["marksman", "invisible"])  # fmt: skip
    (data_dir / "classes.toml").write_text(toml_records("class", [WARRIOR, rogue]))
    classes = load_content(data_dir).classes
    r = classes["rogue"]
    assert (r.role, r.casting_stat, r.abilities, r.sneak_attack) == (
        "Rogue", 14, ("sneak_attack",), 1.5,
    )  # fmt: skip
    assert r.special_choices == ("marksman", "invisible")
    w = classes["warrior"]
    assert (w.abilities, w.sneak_attack, w.special_choices) == ((), 0.0, ("regenerate",))
    assert all(role in ROLES for role in ("Valkyrie", "Wizard", "Monk")) and len(ROLES) == 13


BAD_CLASSES = [
    ({"role": "wizard"}, "class 'warrior': field 'role': must be a role (Archeologist, Barbarian"),
    ({"role": ...}, "class 'warrior': field 'role': missing required field"),
    ({"casting_stat": 2}, "field 'casting_stat': must be an int in 3..25, got 2"),
    ({"casting_stat": 26}, "field 'casting_stat': must be an int in 3..25, got 26"),
    ({"casting_stat": 12.0}, "field 'casting_stat': must be an int in 3..25"),
    ({"casting_stat": ...}, "field 'casting_stat': missing required field"),
    ({"abilities": ["flying"]}, "class 'warrior': field 'abilities': unknown ability 'flying'"),
    ({"sneak_attack": 0.5},
     "class 'warrior': field 'sneak_attack': must be > 0 exactly when the class has"),
    ({"abilities": ["sneak_attack"]}, "field 'sneak_attack': must be > 0 exactly when"),
    ({"special_choices": ["sneak_attack"]},
     "field 'sneak_attack': must be > 0 exactly when"),
    ({"sneak_attack": -1.0}, "field 'sneak_attack': must be a number in 0.0..10.0"),
    ({"special_choices": ["health"]},
     "class 'warrior': field 'special_choices': unknown ability 'health'"),
    ({"special_choices": ["marksman", "marksman"]},
     "field 'special_choices': lists the ability 'marksman' twice"),
    ({"special_choices": "marksman"}, "field 'special_choices': must be a list of strings"),
    ({"abilities": ["marksman"], "special_choices": ["marksman"]},
     "field 'special_choices': offers an ability the class starts with: marksman"),
    ({"special_choices": ...}, "field 'special_choices': missing required field"),
]  # fmt: skip


@pytest.mark.parametrize(("changes", "message"), BAD_CLASSES)
def test_bad_class_casting_or_choice_is_rejected(
    data_dir: Path, changes: dict[str, Any], message: str
) -> None:
    assert message in _error_with(data_dir, "classes.toml", changes)
