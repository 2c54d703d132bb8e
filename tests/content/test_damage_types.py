"""Tests for server.content.damage: the shipped damage_types.toml and the strict loader."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from server.content import DAMAGE_TYPES, N_TERRAIN, ContentError, Terrain
from server.content.damage import (
    DAMAGE_FILE,
    N_DAMAGE_TYPES,
    SideEffect,
    TerrainShare,
    default_damage_types,
    load_damage_types,
)
from tests.content.conftest import read_toml, record_of, toml_document

# --- writing a changed copy of the shipped file ------------------------------------


def _write(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "damage_types.toml"
    path.write_text(toml_document(data), encoding="utf-8")
    return path


# --- the shipped data --------------------------------------------------------------


def test_round_trip_writer_loads_the_same_data(tmp_path: Path) -> None:
    shipped = load_damage_types()
    again = load_damage_types(_write(tmp_path, read_toml(DAMAGE_FILE)))
    assert again.types == shipped.types
    assert np.array_equal(again.terrain_adjust, shipped.terrain_adjust)


def test_one_record_per_damage_type_in_order() -> None:
    data = default_damage_types()
    assert tuple(t.key for t in data.types) == DAMAGE_TYPES
    assert dict(data.index) == {k: i for i, k in enumerate(DAMAGE_TYPES)}
    assert data["fire"].key == "fire"
    with pytest.raises(KeyError):
        data["frost"]


def test_terrain_columns_follow_seed_003() -> None:
    # The seed's "Terr" column (blank rows inherit the row above, angband_gf.md).
    full = {"acid", "electricity", "fire", "cold", "plasma", "force", "water", "mana",
            "meteor", "magic_missile", "ice", "rock", "shot", "storm"}  # fmt: skip
    half = {"poison", "light", "dark", "confusion", "sound", "shards", "inertia", "nether",
            "chaos", "holy", "death", "light_weak"}  # fmt: skip
    data = default_damage_types()
    for definition in data.types:
        expected = (
            TerrainShare.FULL
            if definition.key in full
            else TerrainShare.HALF
            if definition.key in half
            else TerrainShare.NONE
        )
        assert definition.terrain is expected, definition.key


def test_lookup_tables_have_the_documented_shapes_and_are_read_only() -> None:
    data = default_damage_types()
    assert data.adjust_num.shape == data.adjust_den.shape == (N_TERRAIN, N_DAMAGE_TYPES)
    assert data.terrain_adjust.shape == (N_TERRAIN, N_DAMAGE_TYPES)
    assert data.share.shape == (N_DAMAGE_TYPES,)
    assert data.dodge.shape == (N_TERRAIN,)
    for array in (data.adjust_num, data.adjust_den, data.share, data.terrain_adjust, data.dodge):
        assert not array.flags.writeable
    fire, poison, gravity = (DAMAGE_TYPES.index(k) for k in ("fire", "poison", "gravity"))
    # Seed 003 terrain table scaled by the Terr column.
    assert data.terrain_adjust[Terrain.WATER, fire] == pytest.approx(-1 / 2)
    assert data.terrain_adjust[Terrain.LAVA, fire] == pytest.approx(1 / 5)
    assert data.terrain_adjust[Terrain.RUBBLE, poison] == pytest.approx(-1 / 8)
    assert data.terrain_adjust[Terrain.TREE, gravity] == 0.0
    assert (data.adjust_num[Terrain.TREE, gravity], data.adjust_den[Terrain.TREE, gravity]) == (
        -1,
        4,
    )
    assert data.terrain_adjust[Terrain.FLOOR].tolist() == [0.0] * N_DAMAGE_TYPES
    assert data.dodge.tolist() == [
        0.25 if t in (Terrain.RUBBLE, Terrain.TREE) else 0.0 for t in Terrain
    ]


def test_side_effects_listed_in_the_seed_are_present() -> None:
    data = default_damage_types()
    effects = {t.key: [fx.effect for fx in t.side_effects] for t in data.types}
    assert effects["electricity"] == [SideEffect.STUN]
    assert effects["sound"] == [SideEffect.STUN]
    assert effects["force"] == [SideEffect.STUN, SideEffect.KNOCK_BACK]
    assert effects["confusion"] == [SideEffect.CONFUSION]
    assert effects["gravity"] == [SideEffect.TELEPORT]
    assert effects["nexus"] == [SideEffect.TELEPORT]
    assert effects["sleep"] == [SideEffect.SLEEP]
    assert SideEffect.POLYMORPH in effects["chaos"]
    assert effects["mana"] == [] and effects["acid"] == []


# --- strictness --------------------------------------------------------------------

Mutation = Callable[[dict[str, Any]], None]


def _set(key: str, field: str, value: Any) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        record_of(data, "damage_type", key)[field] = value

    return mutate


def _delete(key: str, field: str) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        del record_of(data, "damage_type", key)[field]

    return mutate


def _duplicate_first(data: dict[str, Any]) -> None:
    data["damage_type"][1] = copy.deepcopy(data["damage_type"][0])


def _swap_first_two(data: dict[str, Any]) -> None:
    records = data["damage_type"]
    records[0], records[1] = records[1], records[0]


def _drop_last(data: dict[str, Any]) -> None:
    data["damage_type"].pop()


def _extra_record(data: dict[str, Any]) -> None:
    data["damage_type"].append(copy.deepcopy(data["damage_type"][0]) | {"key": "frost"})


def _resist_take(key: str, row: int, take: list[Any]) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        record_of(data, "damage_type", key)["resist"][row]["take"] = take

    return mutate


def _resist_rows(key: str, rows: list[dict[str, Any]]) -> Mutation:
    return _set(key, "resist", rows)


def _terrain(key: str, field: str, value: Any) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        next(r for r in data["terrain"] if r["key"] == key)[field] = value

    return mutate


def _top(name: str, value: Any) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        if value is None:
            del data[name]
        else:
            data[name] = value

    return mutate


def _status(field: str, value: Any) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        data["status"][field] = value

    return mutate


def _effect_field(key: str, field: str, value: Any) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        record_of(data, "damage_type", key)["side_effects"][0][field] = value

    return mutate


def _terrain_effect_field(key: str, row: int, field: str, value: Any) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        record_of(data, "damage_type", key)["terrain_effects"][row][field] = value

    return mutate


_PREFIX = "damage_types.toml: "

BAD_FILES: list[tuple[str, Mutation, str]] = [
    ("unknown key", _set("fire", "colour", "red"),
     "damage_type 'fire': field 'colour': unknown field"),
    ("missing key", _delete("acid", "terrain"),
     "damage_type 'acid': field 'terrain': missing required field"),
    ("duplicate type", _duplicate_first,
     "damage_type 'acid': field 'key': duplicate key 'acid' (first used by record #1)"),
    ("out of order", _swap_first_two,
     "damage_type 'electricity': field 'key': record #1 must be 'acid'"),
    ("missing type", _drop_last, "expected 55 [[damage_type]] records"),
    ("unknown type", _extra_record, "damage_type 'frost': field 'key': must be a damage type"),
    ("fraction zero denominator", _resist_take("fire", 0, ["1/0"]),
     "damage_type 'fire': field 'resist[1].take[1]': must be a fraction"),
    ("fraction not a string", _resist_take("fire", 0, [0.5]),
     "damage_type 'fire': field 'resist[1].take[1]': must be a fraction"),
    ("fraction garbage", _resist_take("shards", 0, ["3/14", "3/15", "x"]),
     "damage_type 'shards': field 'resist[1].take[3]': must be a fraction"),
    ("fraction negative take", _resist_take("fire", 0, ["-1/9"]),
     "damage_type 'fire': field 'resist[1].take[1]': must be a fraction"),
    ("empty take", _resist_take("fire", 0, []),
     "damage_type 'fire': field 'resist[1].take': must not be empty"),
    ("row with level and flag", _resist_rows("nether", [{"level": 1, "flag": "evil",
                                                         "take": ["1"]}]),
     "damage_type 'nether': field 'resist[1].level': a row needs exactly one"),
    ("row level zero", _resist_rows("nether", [{"level": 0, "take": ["1"]}]),
     "damage_type 'nether': field 'resist[1].level': a row needs exactly one"),
    ("row level out of range", _resist_rows("nether", [{"level": 4, "take": ["1"]}]),
     "damage_type 'nether': field 'resist[1].level': must be an int in -3..3"),
    ("unknown flag", _resist_rows("nether", [{"flag": "orc", "take": ["1"]}]),
     "damage_type 'nether': field 'resist[1].flag': must be a monster flag"),
    ("hidden row", _resist_rows("fire", [{"level": 1, "take": ["1/9"]},
                                         {"level": 3, "take": ["0"]}]),
     "damage_type 'fire': field 'resist[2].level': level 3 is hidden by an earlier row"),
    ("hidden negative row", _resist_rows("fire", [{"level": -1, "take": ["3/2"]},
                                                  {"level": -2, "take": ["2"]}]),
     "damage_type 'fire': field 'resist[2].level': level -2 is hidden"),
    ("duplicate flag row", _resist_rows("holy", [{"flag": "evil", "take": ["3/2"]},
                                                 {"flag": "evil", "take": ["2"]}]),
     "damage_type 'holy': field 'resist[2].flag': flag 'evil' already has a row"),
    ("bad terrain share", _set("fire", "terrain", "most"),
     "damage_type 'fire': field 'terrain': must be a terrain share"),
    ("bool as bool only", _set("fire", "deals_damage", 1),
     "damage_type 'fire': field 'deals_damage': must be true or false"),
    ("bad gf", _set("fire", "gf", ["FIRE"]),
     "damage_type 'fire': field 'gf[1]': must be a GF_ name"),
    ("implies itself", _set("plasma", "implied_by", ["plasma"]),
     "damage_type 'plasma': field 'implied_by': a damage type cannot imply itself"),
    ("unknown side effect", _effect_field("sound", "effect", "deafness"),
     "damage_type 'sound': field 'side_effects[1].effect': must be a side effect"),
    ("zero chance", _effect_field("sound", "chance", "0"),
     "damage_type 'sound': field 'side_effects[1].chance': must be a fraction"),
    ("chance above one", _effect_field("sound", "chance", "3/2"),
     "damage_type 'sound': field 'side_effects[1].chance': must be a fraction"),
    ("missing side effect field", _set("sound", "side_effects", [{"effect": "stun"}]),
     "damage_type 'sound': field 'side_effects[1].chance': missing required field"),
    ("amount always zero", _effect_field("gravity", "base", 0),
     "damage_type 'gravity': field 'side_effects[1].base': base and divisor are both 0"),
    ("negative cap", _effect_field("sound", "cap", -1),
     "damage_type 'sound': field 'side_effects[1].cap': must be an int >= 0"),
    ("unknown terrain in effect", _terrain_effect_field("cold", 0, "from", "magma"),
     "damage_type 'cold': field 'terrain_effects[1].from': must be a terrain"),
    ("high below low", _terrain_effect_field("cold", 0, "high", 10),
     "damage_type 'cold': field 'terrain_effects[1].high': must be >= low (301)"),
    ("two rows from one terrain", _terrain_effect_field("fire", 1, "from", "floor"),
     "damage_type 'fire': field 'terrain_effects[2].from': second row from 'floor'"),
    ("unknown hater class", _set("acid", "floor_items", [{"haters": "rust", "threshold": 5,
                                                          "ignore": True}]),
     "damage_type 'acid': field 'floor_items[1].haters': must be a [haters] name"),
    ("otherwise not last", _set("light_weak", "resist", [{"otherwise": True, "take": ["0"]},
                                                       {"level": -1, "take": ["1"]}]),
     "damage_type 'light_weak': field 'resist[1].otherwise': an 'otherwise' row must come last"),
    ("otherwise with a level", _set("light_weak", "resist", [{"otherwise": True, "level": 1,
                                                           "take": ["0"]}]),
     "damage_type 'light_weak': field 'resist[1].otherwise': an 'otherwise' row takes no"),
    ("of with a flag", _set("ice", "resist", [{"of": "cold", "flag": "evil", "take": ["0"]}]),
     "damage_type 'ice': field 'resist[1].of': 'of' goes with a 'level'"),
    ("boost unknown role", _set("slow", "boost", [{"role": "Druid", "chance": "1/3",
                                                  "extra": "1/2"}]),
     "damage_type 'slow': field 'boost[1].role': must be a role"),
    ("surge missing extra", _set("storm", "surge", {"chance": "1/6"}),
     "damage_type 'storm': field 'surge.extra': missing required field"),
    ("dice without the dice roll", _set("hold", "side_effects", [
        {"effect": "hold", "chance": "1", "above": 0, "base": 4, "divisor": 0, "cap": 0,
         "cap_above": 0, "roll": "fixed", "dice": 1, "sides": 6, "unless_resisted": False,
         "save": "hold"}]),
     "damage_type 'hold': field 'side_effects[1].dice': 'dice' > 0 goes with roll"),
    ("unknown save", _set("hold", "side_effects", [
        {"effect": "hold", "chance": "1", "above": 0, "base": 4, "divisor": 0, "cap": 0,
         "cap_above": 0, "roll": "fixed", "unless_resisted": False, "save": "luck"}]),
     "damage_type 'hold': field 'side_effects[1].save': must be a save"),
    ("ignore flag on all", _set("mana", "floor_items", [{"haters": "all", "threshold": 0,
                                                         "ignore": True}]),
     "damage_type 'mana': field 'floor_items[1].ignore': no ignore flag for 'all'"),
    ("terrain unknown key", _terrain("water", "depth", 3),
     "terrain 'water': field 'depth': unknown field"),
    ("terrain bad adjust fraction", _terrain("water", "adjust", {"fire": "half"}),
     "terrain 'water': field 'adjust.fire': must be a fraction"),
    ("terrain adjust out of range", _terrain("lava", "all", "-3/2"),
     "terrain 'lava': field 'all': must be a fraction"),
    ("terrain adjust unknown type", _terrain("lava", "adjust", {"frost": "-1/3"}),
     "terrain 'lava': field 'adjust.frost': must be a damage type"),
    ("terrain unknown name", _terrain("lava", "key", "magma"),
     "terrain 'magma': field 'key': must be a terrain"),
    ("terrain dodge above one", _terrain("tree", "dodge", "5/4"),
     "terrain 'tree': field 'dodge': must be a fraction"),
    ("duplicate terrain", lambda d: d["terrain"].append(copy.deepcopy(d["terrain"][0])),
     "terrain 'rubble': field 'key': duplicate terrain record"),
    ("status missing field", lambda d: d["status"].pop("max_turns"),
     "status: field 'max_turns': missing required field"),
    ("status bad restack", _status("restack", "2"),
     "status: field 'restack': must be a fraction"),
    ("status unknown type", _status("stun_immune", ["noise"]),
     "status: field 'stun_immune[1]': must be a damage type"),
    ("haters unknown category", lambda d: d["haters"].update(fire=["scroll", "ring"]),
     "haters: field 'fire[2]': must be a item category"),
    ("status unknown flag", _status("flag_immune", {"no_sneeze": "stun"}),
     "status: field 'flag_immune.no_sneeze': must be a monster flag"),
    ("status unknown effect", _status("flag_immune", {"no_sleep": "nap"}),
     "status: field 'flag_immune.no_sleep': must be a side effect"),
    ("unknown top-level key", _top("spells", {"a": 1}), "unknown top-level key 'spells'"),
    ("missing top-level table", _top("haters", None), "missing top-level table 'haters'"),
]  # fmt: skip


@pytest.mark.parametrize(("mutate", "message"), [(m, msg) for _, m, msg in BAD_FILES],
                         ids=[name for name, _, _ in BAD_FILES])  # fmt: skip
def test_loader_rejects_bad_data_naming_file_record_field(
    tmp_path: Path, mutate: Mutation, message: str
) -> None:
    data = read_toml(DAMAGE_FILE)
    mutate(data)
    path = _write(tmp_path, data)
    with pytest.raises(ContentError, match="^" + re.escape(_PREFIX + message)):
        load_damage_types(path)


def test_loader_rejects_invalid_toml_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "damage_types.toml"
    path.write_text("[status\n", encoding="utf-8")
    with pytest.raises(ContentError, match=r"^damage_types\.toml: invalid TOML"):
        load_damage_types(path)
    with pytest.raises(ContentError, match=r"^absent\.toml: cannot read"):
        load_damage_types(tmp_path / "absent.toml")


def test_loader_reads_fractions_exactly(tmp_path: Path) -> None:
    data = read_toml(DAMAGE_FILE)
    record_of(data, "damage_type", "fire")["resist"][0]["take"] = ["+2/18"]
    loaded = load_damage_types(_write(tmp_path, data))
    assert loaded["fire"].resist[0].take == (Fraction(1, 9),)
