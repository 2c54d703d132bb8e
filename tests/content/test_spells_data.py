"""Tests for spells.toml, roles.toml and their strict loader (server.content.spells)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from server.content import DATA_DIR, ContentError
from server.content.spells import default_spells, load_spells
from tests.content.conftest import toml_records

# --- the shipped numbers ---------------------------------------------------------------

# Seed 004's table: name -> (base, emergency, shield, suit, stat, special spell).
SEED_ROLES = {
    "Archeologist": (5, 0, 2, 10, "int", "magic mapping"),
    "Barbarian": (14, 0, 0, 8, "int", "haste self"),
    "Caveman": (12, 0, 1, 8, "int", "dig"),
    "Healer": (3, -3, 2, 10, "wis", "cure sickness"),
    "Knight": (8, -2, 0, 9, "wis", "turn undead"),
    "Monk": (8, -2, 2, 20, "wis", "restore ability"),
    "Priest": (3, -2, 2, 10, "wis", "remove curse"),
    "Ranger": (9, 2, 1, 10, "int", "invisibility"),
    "Rogue": (8, 0, 1, 9, "int", "detect treasure"),
    "Samurai": (10, 0, 0, 8, "int", "clairvoyance"),
    "Tourist": (5, 1, 2, 10, "int", "charm monster"),
    "Valkyrie": (10, -2, 0, 9, "wis", "cone of cold"),
    "Wizard": (1, 0, 3, 10, "int", "magic missile"),
}


def test_roles_match_the_seed_table() -> None:
    roles = default_spells().roles
    assert [r.name for r in roles.values()] == list(SEED_ROLES)
    for name, (base, heal, shield, suit, stat, special) in SEED_ROLES.items():
        role = default_spells().role(name)
        assert (
            role.base,
            role.emergency,
            role.shield,
            role.suit,
            role.stat,
            role.special_spell,
            role.special_bonus,
        ) == (base, heal, shield, suit, stat, special, -4), name
        assert not role.special_key or role.special_key in default_spells().spells


# Seed 001's player numbers: key -> {field: value}.
SEED_SPELLS: dict[str, dict[str, Any]] = {
    "spark": {"dice": 2, "power": 8}, "freeze": {"dice": 2, "power": 10},
    "shock": {"dice": 2, "power": 10}, "ice_shards": {"dice": 2, "power": 12, "range": 6},
    "fireball": {"dice": 2, "power": 10, "attenuation": 0.8, "radius": 3},
    "shockwave": {"dice": 2, "power": 16, "attenuation": 0.4, "radius": 5},
    "curse": {"dice": 2, "power": 12, "range": 2, "spread": 1},
    "enervate": {"dice": 2, "power": 12, "range": 2, "spread": 1},
    "confusion": {"dice": 1, "power": 10, "range": 8}, "plague": {"dice": 2, "power": 7},
    "poison_cloud": {"power": 8}, "acid_glob": {"dice": 1, "power": 10, "range": None},
    "heal_wounds": {"power": 26}, "purge_poison": {"power": 13}, "cure_disease": {"power": 13},
    "soothe_acid_burn": {"power": 10}, "fire_shield": {"power": 10},
    "ice_shield": {"power": 10}, "haste": {"power": 7}, "rage": {"power": 12},
    "stoneskin": {"power": 12}, "invisibility": {"power": 12}, "scrying": {"power": 15},
    "lightning_bolt": {"power": 10, "chain": 3}, "webbing": {"power": 10, "range": 8},
    "remove_curse": {},
}  # fmt: skip


def test_seed_001_player_numbers() -> None:
    spells = default_spells().spells
    for key, fields in SEED_SPELLS.items():
        for name, value in fields.items():
            assert getattr(spells[key], name) == value, (key, name)


def test_netHack_spell_ranges_and_kinds() -> None:
    spells = default_spells().spells
    # Seed 004: beams 6-13, dig 8-25, other rays 7-13.
    assert (
        spells["force_bolt"].effect,
        spells["force_bolt"].range_min,
        spells["force_bolt"].range,
    ) == ("beam", 6, 13)
    assert (spells["dig"].range_min, spells["dig"].range) == (8, 25)
    for key in ("magic_missile", "fire_ray", "cone_of_cold", "sleep", "lightning_ray"):
        assert spells[key].effect in ("ray", "ray_explode")
        assert (spells[key].range_min, spells[key].range) == (7, 13), key
    emergency = {k for k, s in spells.items() if s.emergency}
    assert emergency == {
        "heal_wounds",
        "purge_poison",
        "cure_disease",
        "soothe_acid_burn",
        "remove_curse",
    }
    assert all(
        s.range_min == s.range
        for s in spells.values()
        if s.effect not in ("beam", "ray", "ray_explode", "dig")
    )


def test_default_spells_is_cached_and_read_only() -> None:
    assert default_spells() is default_spells()
    with pytest.raises(TypeError):
        default_spells().spells["x"] = default_spells().spells["spark"]  # type: ignore[index]
    with pytest.raises(KeyError):
        default_spells().role("Necromancer")


# --- loader strictness ----------------------------------------------------------------


BOLT: dict[str, Any] = {
    "key": "zap", "name": "Zap", "level": 1, "school": "attack", "effect": "bolt",
    "damage_type": "fire", "dice": 2, "power": 8, "range": 8, "emergency": False,
    "targeting": "direction", "upgrade": "double",
}  # fmt: skip
HEAL: dict[str, Any] = {
    "key": "mend", "name": "Mend", "level": 1, "school": "healing", "effect": "heal",
    "damage_type": "none", "power": 26, "range": 0, "emergency": True,
    "targeting": "self", "upgrade": "double",
}  # fmt: skip
ROLE: dict[str, Any] = {
    "key": "wizard", "name": "Wizard", "base": 1, "emergency": 0, "shield": 3, "suit": 10,
    "stat": "int", "special_spell": "magic missile", "special_key": "zap",
    "special_bonus": -4,
}  # fmt: skip


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    shutil.copytree(DATA_DIR, folder)
    _write(folder, [BOLT, HEAL], [ROLE])
    return folder


def _write(folder: Path, spells: list[dict[str, Any]], roles: list[dict[str, Any]]) -> None:
    (folder / "spells.toml").write_text(toml_records("spell", spells))
    (folder / "roles.toml").write_text(toml_records("role", roles))


def test_minimal_files_load(data_dir: Path) -> None:
    data = load_spells(data_dir)
    assert list(data.spells) == ["zap", "mend"]
    assert data.spells["zap"].range_min == 8 and data.spells["zap"].status == "none"
    assert data.role("wizard") is data.role("Wizard")


SPELL_ERRORS: list[tuple[dict[str, Any], str, str]] = [
    ({"colour": "red"}, "'colour'", "unknown field"),
    ({"level": 0}, "'level'", "1..7"),
    ({"level": 8}, "'level'", "1..7"),
    ({"level": True}, "'level'", "1..7"),
    ({"school": "necromancy"}, "'school'", "school"),
    ({"effect": "teleport"}, "'effect'", "effect"),
    ({"damage_type": "lava"}, "'damage_type'", "damage type"),
    ({"damage_type": "none"}, "'damage_type'", "deals damage"),
    ({"status": "petrified"}, "'status'", "status"),
    ({"dice": -1}, "'dice'", "0..100"),
    ({"dice": 0}, "'dice'", "> 0"),
    ({"radius": 2}, "'radius'", "not used"),
    ({"attenuation": 0.5}, "'attenuation'", "not used"),
    ({"range": 0}, "'range'", ">= 1"),
    ({"range": "far"}, "'range'", "unlimited"),
    ({"range_min": 4}, "'range_min'", "rolled-range"),
    ({"targeting": "self"}, "'range'", "must be 0"),
    ({"targeting": "everywhere"}, "'targeting'", "targeting"),
    ({"upgrade": "triple"}, "'upgrade'", "upgrade rule"),
    ({"emergency": "no"}, "'emergency'", "true or false"),
]


@pytest.mark.parametrize(("change", "field", "words"), SPELL_ERRORS)
def test_bad_spell_field(data_dir: Path, change: dict[str, Any], field: str, words: str) -> None:
    _write(data_dir, [{**BOLT, **change}, HEAL], [ROLE])
    with pytest.raises(ContentError) as err:
        load_spells(data_dir)
    message = str(err.value)
    assert message.startswith("spells.toml: spell 'zap': field " + field), message
    assert words in message


@pytest.mark.parametrize("field", ["name", "level", "effect", "power", "range", "upgrade"])
def test_missing_spell_field(data_dir: Path, field: str) -> None:
    record = {k: v for k, v in BOLT.items() if k != field}
    _write(data_dir, [record, HEAL], [ROLE])
    with pytest.raises(ContentError, match=f"spell 'zap': field '{field}': missing required"):
        load_spells(data_dir)


def test_cross_field_rules(data_dir: Path) -> None:
    cases = [
        ({**HEAL, "damage_type": "fire"}, "'mend': field 'damage_type'"),
        ({**HEAL, "status": "hasted"}, "'mend': field 'status'"),
        ({**HEAL, "effect": "buff"}, "'mend': field 'status': effect 'buff' needs a status"),
        (
            {
                **HEAL,
                "effect": "ray",
                "damage_type": "fire",
                "dice": "level",
                "targeting": "direction",
                "range": 13,
                "range_min": 14,
            },
            "'mend': field 'range_min'",
        ),
        (
            {
                **HEAL,
                "effect": "dig",
                "power": 0,
                "emergency": False,
                "targeting": "direction",
                "range": "unlimited",
            },
            "'mend': field 'range'",
        ),
        (
            {**HEAL, "effect": "dig", "power": 0, "range": 5, "targeting": "target"},
            "'mend': field 'targeting'",
        ),
        (
            {
                **HEAL,
                "effect": "tongue",
                "dice": 2,
                "spread": 1,
                "targeting": "direction",
                "range": 2,
            },
            "'mend': field 'damage_type': effect 'tongue' needs",
        ),
    ]
    for record, expected in cases:
        _write(data_dir, [BOLT, record], [ROLE])
        with pytest.raises(ContentError, match=expected):
            load_spells(data_dir)


def test_duplicate_spell_key_and_bad_file(data_dir: Path) -> None:
    _write(data_dir, [BOLT, {**HEAL, "key": "zap"}], [ROLE])
    with pytest.raises(ContentError, match="spell 'zap': field 'key': duplicate key"):
        load_spells(data_dir)
    (data_dir / "spells.toml").write_text("[[spell]\n")
    with pytest.raises(ContentError, match="spells.toml: invalid TOML"):
        load_spells(data_dir)
    (data_dir / "spells.toml").write_text(toml_records("spel", [BOLT]))
    with pytest.raises(ContentError, match="spells.toml: unknown top-level key 'spel'"):
        load_spells(data_dir)
    (data_dir / "spells.toml").unlink()
    with pytest.raises(ContentError, match="spells.toml: cannot read"):
        load_spells(data_dir)


ROLE_ERRORS: list[tuple[dict[str, Any], str, str]] = [
    ({"special_key": "fireball"}, "'special_key'", "unknown spell 'fireball'"),
    ({"name": "Wizzard"}, "'name'", "capitalised"),
    ({"stat": "cha"}, "'stat'", "casting stat"),
    ({"base": 21}, "'base'", "0..20"),
    ({"special_bonus": 1}, "'special_bonus'", "-10..0"),
    ({"mana": 3}, "'mana'", "unknown field"),
]


@pytest.mark.parametrize(("change", "field", "words"), ROLE_ERRORS)
def test_bad_role_field(data_dir: Path, change: dict[str, Any], field: str, words: str) -> None:
    _write(data_dir, [BOLT, HEAL], [{**ROLE, **change}])
    with pytest.raises(ContentError) as err:
        load_spells(data_dir)
    message = str(err.value)
    assert message.startswith("roles.toml: role 'wizard': field " + field), message
    assert words in message


def test_role_without_special_key(data_dir: Path) -> None:
    record = {k: v for k, v in ROLE.items() if k != "special_key"}
    _write(data_dir, [BOLT, HEAL], [record])
    assert load_spells(data_dir).role("Wizard").special_key == ""
    _write(data_dir, [BOLT, HEAL], [{k: v for k, v in ROLE.items() if k != "suit"}])
    with pytest.raises(ContentError, match="role 'wizard': field 'suit': missing required"):
        load_spells(data_dir)


def test_monsters_items_and_classes_name_only_spells_and_roles_that_exist() -> None:
    import dataclasses

    from server.content import ContentError, default_content
    from server.content.spells import check_spell_references, default_spells

    content = default_content()
    check_spell_references(content, default_spells())  # the shipped data is consistent
    rat = dataclasses.replace(content.monsters["rat"], spells=("sparkle",))
    bad = dataclasses.replace(content, monsters={**content.monsters, "rat": rat})
    with pytest.raises(
        ContentError,
        match=r"monsters\.toml: monster 'rat': field 'spells': "
        r"unknown spell 'sparkle'",
    ):
        check_spell_references(bad, default_spells())
    mage = dataclasses.replace(content.classes["mage"], role="Necromancer")
    bad = dataclasses.replace(content, classes={**content.classes, "mage": mage})
    with pytest.raises(ContentError, match=r"classes\.toml: class 'mage': field 'role'"):
        check_spell_references(bad, default_spells())
