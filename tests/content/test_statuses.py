"""Tests for server.content.statuses: the shipped statuses.toml and its strict loader."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from server.content import DATA_DIR, ContentError
from server.content.statuses import StatusKind, default_statuses, load_statuses
from tests.content.conftest import read_toml, record_of, toml_document

SHIPPED = DATA_DIR / "statuses.toml"

# --- each bad file is the shipped one with one change --------------------------------


def _load_changed(tmp_path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = read_toml(SHIPPED)
    change(data)
    path = tmp_path / "statuses.toml"
    path.write_text(toml_document(data), encoding="utf-8")
    load_statuses(path)


# --- the shipped data ----------------------------------------------------------------


def test_writer_round_trips_the_shipped_file(tmp_path: Path) -> None:
    _load_changed(tmp_path, lambda data: None)
    assert load_statuses(tmp_path / "statuses.toml") == default_statuses()


def test_one_record_per_status_kind_in_order() -> None:
    rules = default_statuses()
    assert [d.kind for d in rules.statuses] == list(StatusKind)
    assert rules.status(StatusKind.ACID_BURN).key == "acid_burn"


def test_seed_001_numbers_are_in_the_data() -> None:
    rules = default_statuses()
    assert rules.hunger.full == 500
    assert (rules.hunger.interval_min, rules.hunger.interval_max) == (5, 15)
    assert (rules.hunger.modify_chance_monk, rules.hunger.modify_chance_other) == (0.95, 0.05)
    assert rules.hunger.fatigue_max == 16
    assert rules.regeneration.min_nourishment == 25
    assert rules.regeneration.energy_ticks < rules.regeneration.health_ticks
    assert (rules.freeze.chance, rules.freeze.max_rounds, rules.freeze.exponent) == (0.4, 6, 4)
    assert (rules.spark.threshold, rules.spark.rounds_divisor) == (20, 6)
    for kind, element in ((StatusKind.FIRE_SHIELD, "fire"), (StatusKind.ICE_SHIELD, "cold")):
        assert rules.status(kind).retaliation_dice == (2, 4)
        assert rules.status(kind).damage_type == element
    hungry = {d.kind for d in rules.statuses if "doubles_hunger" in d.flags}
    assert hungry == {
        StatusKind.DISEASED,
        StatusKind.POISONED,
        StatusKind.ENRAGED,
        StatusKind.ENERVATED,
        StatusKind.ACID_BURN,
    }
    stop_regen = {d.kind for d in rules.statuses if "prevents_regeneration" in d.flags}
    assert stop_regen == {StatusKind.FROZEN, StatusKind.ON_FIRE}


# --- strictness: each bad file names file, record (or table) and field ----------------


def _set(path: tuple[str, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        target: Any = data
        if path[0] == "status" and len(path) > 1:
            target = record_of(data, "status", path[1])
            rest = path[2:]
        else:
            rest = path
        for name in rest[:-1]:
            target = target[name]
        target[rest[-1]] = value

    return change


def _drop(path: tuple[str, ...]) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        if path[0] == "status":
            del record_of(data, "status", path[1])[path[2]]
        elif len(path) == 1:
            del data[path[0]]
        else:
            del data[path[0]][path[1]]

    return change


BAD_FIELDS: list[tuple[Callable[[dict[str, Any]], None], str]] = [
    (_set(("status", "frozen", "colour"), "blue"), r"status 'frozen': field 'colour': unknown"),
    (_drop(("status", "poisoned", "name")), r"status 'poisoned': field 'name': missing"),
    (_set(("status", "frozen", "max_rounds"), True), r"status 'frozen': field 'max_rounds'"),
    (_set(("status", "frozen", "max_rounds"), 0), r"status 'frozen': field 'max_rounds'"),
    (_set(("status", "frozen", "stacking"), "sum"), r"status 'frozen': field 'stacking'"),
    (
        _set(("status", "frozen", "flags"), ["prevents_action", "flies"]),
        r"status 'frozen': field 'flags': unknown flag 'flies'",
    ),
    (_set(("status", "on_fire", "damage_type"), "lava"), r"status 'on_fire': field 'damage_type'"),
    (_set(("status", "on_fire", "damage_dice"), [1, 0]), r"status 'on_fire': field 'damage_dice'"),
    (_set(("status", "on_fire", "damage_dice"), [4]), r"status 'on_fire': field 'damage_dice'"),
    (
        _set(("status", "confused", "random_move_chance"), 1.5),
        r"status 'confused': field 'random_move_chance'",
    ),
    (_set(("status", "hasted", "delay_factor"), 0.0), r"status 'hasted': field 'delay_factor'"),
    (
        _set(("status", "poisoned", "default_magnitude"), 9),
        r"status 'poisoned': field 'default_magnitude': must be <= max_magnitude",
    ),
    (
        _set(("status", "poisoned", "default_magnitude"), 0),
        r"status 'poisoned': field 'default_magnitude'",
    ),
    (
        _set(("status", "diseased", "flags"), ["magnitude_is_damage"]),
        r"status 'diseased': field 'flags': magnitude_is_damage",
    ),
    (
        _set(("status", "hasted", "opposite"), "frozen"),
        r"status 'hasted': field 'opposite': 'frozen' must name 'hasted'",
    ),
    (
        _set(("status", "hasted", "opposite"), "sluggish"),
        r"status 'hasted': field 'opposite': unknown status 'sluggish'",
    ),
    (
        _set(("status", "hasted", "opposite"), "hasted"),
        r"status 'hasted': field 'opposite': must name another status",
    ),
    (
        _set(("status", "enraged", "replaces"), ["calm"]),
        r"status 'enraged': field 'replaces': unknown status 'calm'",
    ),
    (
        _set(("status", "stoneskin", "shield_removes"), "frozen"),
        r"status 'stoneskin': field 'shield_removes': only an elemental shield",
    ),
    (
        _drop(("status", "fire_shield", "damage_type")),
        r"status 'fire_shield': field 'damage_type': an elemental shield",
    ),
    (_set(("round_ticks",), 0), r"field 'round_ticks'"),
    (_drop(("round_ticks",)), r"missing top-level key 'round_ticks'"),
    (_drop(("spark",)), r"missing top-level key 'spark'"),
    (_set(("curses",), {"a": 1}), r"unknown top-level key 'curses'"),
    (_set(("hunger", "full"), 0), r"table \[hunger\]: field 'full'"),
    (_set(("hunger", "satiated"), 9), r"table \[hunger\]: field 'satiated': unknown"),
    (_drop(("hunger", "start_rating")), r"table \[hunger\]: field 'start_rating': missing"),
    (_set(("hunger", "modify_chance_monk"), 1.2), r"table \[hunger\]: field 'modify_chance_monk'"),
    (_set(("hunger", "interval_max"), 4), r"table \[hunger\]: field 'interval_max': must be >="),
    (
        _set(("hunger", "start_nourishment"), 501),
        r"table \[hunger\]: field 'start_nourishment': must be <= full",
    ),
    (
        _set(("regeneration", "energy_ticks"), 20),
        r"table \[regeneration\]: field 'energy_ticks': must be < health_ticks",
    ),
    (_set(("freeze", "chance"), -0.1), r"table \[freeze\]: field 'chance'"),
    (_set(("spark", "rounds_divisor"), 0), r"table \[spark\]: field 'rounds_divisor'"),
]


@pytest.mark.parametrize(("change", "message"), BAD_FIELDS)
def test_bad_field_is_rejected_naming_record_and_field(
    tmp_path: Path, change: Callable[[dict[str, Any]], None], message: str
) -> None:
    with pytest.raises(ContentError, match=r"^statuses\.toml: .*" + message):
        _load_changed(tmp_path, change)


def test_records_out_of_enum_order_are_rejected(tmp_path: Path) -> None:
    def swap(data: dict[str, Any]) -> None:
        data["status"][0], data["status"][1] = data["status"][1], data["status"][0]

    with pytest.raises(ContentError, match=r"status 'on_fire': field 'key': record #1 must be"):
        _load_changed(tmp_path, swap)


def test_missing_record_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ContentError, match=r"expected 22 \[\[status\]\] records.*missing avatar"):
        _load_changed(tmp_path, lambda data: data["status"].pop())


def test_extra_record_is_rejected(tmp_path: Path) -> None:
    extra = {"key": "glory", "name": "glory", "stacking": "max", "max_rounds": 5}
    with pytest.raises(ContentError, match=r"status 'glory': field 'key': no such StatusKind"):
        _load_changed(tmp_path, lambda data: data["status"].append(extra))


def test_duplicate_record_is_rejected(tmp_path: Path) -> None:
    def duplicate(data: dict[str, Any]) -> None:
        data["status"][1] = copy.deepcopy(data["status"][0])

    with pytest.raises(ContentError, match=r"status 'frozen': field 'key': duplicate key"):
        _load_changed(tmp_path, duplicate)


def test_bad_key_is_named_by_position(tmp_path: Path) -> None:
    with pytest.raises(ContentError, match=r"status #3: field 'key'"):
        _load_changed(tmp_path, _set(("status", "poisoned", "key"), "Poisoned"))


def test_invalid_toml_and_duplicate_toml_keys_are_rejected(tmp_path: Path) -> None:
    path = tmp_path / "statuses.toml"
    path.write_text("round_ticks = 3\nround_ticks = 4\n", encoding="utf-8")
    with pytest.raises(ContentError, match=r"statuses\.toml: invalid TOML"):
        load_statuses(path)
    path.write_text("[[status]\n", encoding="utf-8")
    with pytest.raises(ContentError, match=r"statuses\.toml: invalid TOML"):
        load_statuses(path)


def test_missing_file_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ContentError, match=r"statuses\.toml: cannot read"):
        load_statuses(tmp_path / "statuses.toml")


def test_status_must_be_an_array_of_tables(tmp_path: Path) -> None:
    with pytest.raises(ContentError, match=r"'status' must hold \[\[status\]\] tables"):
        _load_changed(tmp_path, _set(("status",), [1, 2]))
