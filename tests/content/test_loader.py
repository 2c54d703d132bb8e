"""Tests for server.content: the shipped rules data and the strict loader's errors."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from server.content import (
    DAMAGE_TYPES,
    DATA_DIR,
    ContentError,
    Terrain,
    default_content,
    load_content,
)

# --- a tiny TOML writer, so each bad file is built from a known-good record ----------


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    assert isinstance(v, dict)
    return "{ " + ", ".join(f"{k} = {_value(x)}" for k, x in v.items()) + " }"


def _toml(kind: str, records: list[dict[str, Any]]) -> str:
    blocks = [
        f"[[{kind}]]\n" + "".join(f"{k} = {_value(v)}\n" for k, v in r.items()) for r in records
    ]
    return "\n".join(blocks)


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

WARRIOR: dict[str, Any] = {
    "key": "warrior", "name": "Warrior", "colour": "red", "hidden": False, "health": 24,
    "energy": 10, "power": 5, "defence": 1, "accuracy": 11.0, "dodge": 4.0, "speed": 3,
    "strength": 14, "miss_chance": 0.1,
    "boosts": {"health": 6, "energy": 1, "power": 1, "defence": 1, "accuracy": 1.0,
               "dodge": 0.5},
    "start_items": ["apple"],
}  # fmt: skip

_KIND = {"monsters.toml": "monster", "items.toml": "item", "classes.toml": "class"}
_BASE = {"monsters.toml": RAT, "items.toml": APPLE, "classes.toml": WARRIOR}


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A writable copy of the shipped data with minimal items, monsters and classes."""
    folder = tmp_path / "data"
    shutil.copytree(DATA_DIR, folder)
    for file, record in _BASE.items():
        (folder / file).write_text(_toml(_KIND[file], [record]))
    return folder


def _with(record: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """Copy of ``record`` with fields changed; a value of ``...`` removes the field."""
    out = {**record, **changes}
    return {k: v for k, v in out.items() if v is not ...}


def _error(folder: Path) -> str:
    with pytest.raises(ContentError) as info:
        load_content(folder)
    return str(info.value)


# --- the shipped data ----------------------------------------------------------------


def test_shipped_data_loads_with_every_kind_of_record() -> None:
    content = load_content()
    assert [t.key for t in content.terrain] == [t.name.lower() for t in Terrain]
    assert [t.terrain for t in content.terrain] == list(Terrain)
    assert len(content.monsters) >= 14
    assert len(content.items) >= 8
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
    (data_dir / "monsters.toml").write_text(_toml("monster", [_with(RAT, flags=..., resist=...)]))
    rat = load_content(data_dir).monsters["rat"]
    assert rat.flags == () and dict(rat.resist) == {}


def test_records_keep_file_order(data_dir: Path) -> None:
    keys = ["zebra_rat", "aardvark", "mole"]
    records = [_with(RAT, key=k) for k in keys]
    (data_dir / "monsters.toml").write_text(_toml("monster", records))
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
    ("monsters.toml", {"flags": ["flying"]}, "monster 'rat': field 'flags': unknown flag 'flying'"),
    ("monsters.toml", {"flags": ["evil", "evil"]}, "field 'flags': lists a flag twice"),
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
    ("items.toml", {"power": 3}, "item 'apple': field 'power': unknown field"),
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
    record = _with(_BASE[file], **changes)
    (data_dir / file).write_text(_toml(_KIND[file], [record]))
    assert message in _error(data_dir)


def test_duplicate_record_key_is_rejected(data_dir: Path) -> None:
    records = [RAT, _with(RAT, key="mole"), _with(RAT, name="second rat")]
    (data_dir / "monsters.toml").write_text(_toml("monster", records))
    message = _error(data_dir)
    assert "monsters.toml: monster 'rat': field 'key': duplicate key 'rat'" in message
    assert "record #1" in message


def test_duplicate_toml_key_in_a_record_is_rejected(data_dir: Path) -> None:
    (data_dir / "monsters.toml").write_text(_toml("monster", [RAT]) + "speed = 4\n")
    assert _error(data_dir).startswith("monsters.toml: invalid TOML")


def test_bad_record_is_named_by_its_position_among_good_ones(data_dir: Path) -> None:
    records = [RAT, _with(RAT, key="mole"), _with(RAT, key="7up")]
    (data_dir / "monsters.toml").write_text(_toml("monster", records))
    assert "monsters.toml: monster #3: field 'key'" in _error(data_dir)


def test_unknown_top_level_key_is_rejected(data_dir: Path) -> None:
    (data_dir / "items.toml").write_text("version = 1\n" + _toml("item", [APPLE]))
    assert "items.toml: unknown top-level key 'version'" in _error(data_dir)


def test_wrong_table_name_and_empty_file_are_rejected(data_dir: Path) -> None:
    (data_dir / "items.toml").write_text(_toml("items", [APPLE]))
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
    (data_dir / "terrain.toml").write_text(_toml("terrain", records))
    message = _error(data_dir)
    assert "terrain.toml: terrain 'door_closed': field 'key'" in message
    assert "record #3 must be 'floor'" in message


def test_terrain_missing_or_extra_records_are_rejected(data_dir: Path) -> None:
    records = _terrain_records()
    (data_dir / "terrain.toml").write_text(_toml("terrain", records[:-1]))
    assert "terrain.toml: expected 13 [[terrain]] records" in _error(data_dir)
    assert "missing stairs_down" in _error(data_dir)
    extra = [*records, {**records[0], "key": "magma"}]
    (data_dir / "terrain.toml").write_text(_toml("terrain", extra))
    assert "terrain.toml: terrain 'magma': field 'key': no such Terrain" in _error(data_dir)


def test_terrain_field_type_is_checked(data_dir: Path) -> None:
    records = _terrain_records()
    records[1]["passable"] = 0
    (data_dir / "terrain.toml").write_text(_toml("terrain", records))
    assert "terrain 'wall': field 'passable': must be true or false, got 0" in _error(data_dir)


def test_every_damage_type_is_accepted_as_a_resistance(data_dir: Path) -> None:
    resist = {d: (i % 7) - 3 for i, d in enumerate(DAMAGE_TYPES)}
    (data_dir / "monsters.toml").write_text(_toml("monster", [_with(RAT, resist=resist)]))
    rat = load_content(data_dir).monsters["rat"]
    assert dict(rat.resist) == resist
    assert len(DAMAGE_TYPES) == 27
