"""Message-log sentences (client.text) from events a real GameModel has seen."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from client.model import GameModel
from client.text import describe_chat, describe_error, describe_event, describe_reject
from protocol.messages import REJECT_REASONS, Delta, Snapshot, Welcome

ME, RAT, GOBLIN, ALICE = 7, 20, 21, 8


def _welcome() -> Welcome:
    return Welcome(
        v=2, id=ME, name="tester", token="secret", resumed=False, tick=100, tick_rate=10,
        terrain=[["rock", "rock", " ", "white", False, False],
                 ["wall", "wall", "#", "white", False, False],
                 ["floor", "floor", ".", "white", True, True]],
        kinds=[["player", "player", "@", "white"], ["rat", "rat", "r", "yellow"],
               ["goblin", "goblin", "g", "green"], ["orc", "orc", "o", "red"]],
        items={"dagger": ["dagger", ")", "cyan"], "amulet": ["amulet", '"', "yellow"]},
        classes=[["warrior", "Warrior"]], motd="",
    )  # fmt: skip


@pytest.fixture
def model() -> GameModel:
    m = GameModel(_welcome())
    actors: list[Any] = [
        [ME, 0, "tester", 2, 2, 20, 20, 8 | 16],
        [RAT, 1, "", 3, 2, 3, 3, 4],
        [GOBLIN, 2, "", 1, 1, 5, 5, 1],
        [ALICE, 0, "alice", 1, 3, 20, 20, 16],
    ]
    m.apply(
        Snapshot(
            tick=100,
            depth=2,
            w=5,
            h=5,
            map=bytes([2] * 25),
            fov=[0, 0, 0, 0, b""],
            actors=actors,
            objs=[],
            me={"x": 2, "y": 2},
            ack=-1,
        )
    )
    return m


def say(model: GameModel, *ev: Any) -> str | None:
    return describe_event(list(ev), model)


def test_attacks_from_both_sides(model: GameModel) -> None:
    assert say(model, "atk", ME, RAT, "hit", 4, False) == "You hit the rat for 4."
    assert say(model, "atk", RAT, ME, "miss", 0, False) == "The rat misses you."
    assert say(model, "atk", ME, RAT, "miss", 0, False) == "You miss the rat."
    assert say(model, "atk", RAT, ME, "hit", 2, False) == "The rat hits you for 2."
    assert say(model, "atk", ALICE, RAT, "hit", 3, False) == "alice hits the rat for 3."
    assert (
        say(model, "atk", RAT, ALICE, "hit", 0, False) == "The rat hits alice but does no damage."
    )
    assert say(model, "atk", ME, RAT, "hit", 0, False) == "You hit the rat but do no damage."


def test_criticals_lucky_hits_and_surprise(model: GameModel) -> None:
    assert say(model, "atk", ME, RAT, "crit", 9, False) == "A critical hit! You hit the rat for 9."
    assert say(model, "atk", RAT, ME, "lucky", 2, False) == "A lucky hit! The rat hits you for 2."
    assert (
        say(model, "atk", ME, GOBLIN, "hit", 5, True) == "You surprise the goblin and hit it for 5."
    )
    assert (
        say(model, "atk", GOBLIN, ME, "crit", 8, True)
        == "A critical hit! The goblin surprises you and hits you for 8."
    )


def test_death_uses_remembered_names_after_rm(model: GameModel) -> None:
    # the protocol applies "rm" before "ev": the victim is already out of view
    events = model.apply(Delta(tick=101, rm=[RAT], ev=[["die", RAT, ME]]))
    assert RAT not in model.actors
    assert [describe_event(e, model) for e in events] == ["You kill the rat!"]
    assert say(model, "die", GOBLIN, None) == "The goblin dies."
    assert say(model, "die", ALICE, GOBLIN) == "The goblin kills alice!"
    assert say(model, "die", ME, None) == "You die..."
    assert say(model, "die", ME, GOBLIN) == "You are killed by the goblin. You die..."


def test_doors_pickups_and_monster_moods(model: GameModel) -> None:
    assert say(model, "door", ALICE, 1, 1, True) == "alice opens a door."
    assert say(model, "door", ME, 1, 1, False) == "You close a door."
    assert say(model, "pick", ME, "dagger") == "You pick up a dagger."
    assert say(model, "pick", ALICE, "amulet") == "alice picks up an amulet."
    assert say(model, "pick", ALICE, "mystery_box") == "alice picks up a mystery box."
    assert say(model, "flee", GOBLIN) == "The goblin turns to flee."
    # alice is in view, so "notices you" could be wrong
    assert say(model, "wake", GOBLIN) == "The goblin notices an intruder."
    model.apply(Delta(tick=101, rm=[ALICE]))
    assert say(model, "wake", GOBLIN) == "The goblin notices you."


def test_levels_stairs_respawn_xp_and_players(model: GameModel) -> None:
    assert say(model, "lvl", ME, 3) == "You feel more experienced (level 3)."
    assert say(model, "lvl", ALICE, 4) == "alice reaches level 4."
    assert say(model, "stairs", ALICE, 3) == "alice goes down the stairs."
    assert say(model, "stairs", GOBLIN, 1) == "The goblin goes up the stairs."
    assert say(model, "respawn", ME) == "You return to life."
    assert say(model, "respawn", ALICE) == "alice returns to life."
    assert say(model, "xp", ME, 5) == "You gain 5 experience."
    assert say(model, "join", "bob") == "bob joined."
    assert say(model, "leave", "bob") == "bob left."


def test_unknown_actor_is_something(model: GameModel) -> None:
    assert say(model, "atk", 999, ME, "hit", 1, False) == "Something hits you for 1."


@pytest.mark.parametrize(
    "ev",
    [
        [],
        ["teleport", ME],  # a newer server's event
        ["atk", ME],  # too short
        ["atk", ME, RAT, "smash", 3, False],  # unknown outcome
        ["atk", ME, RAT, "hit", "four", False],
        ["pick", ME, 5],
        ["stairs", ME, None],
        ["join", 3],
        [42, ME],
        "atk",
    ],
)
def test_unknown_or_malformed_events_give_none(model: GameModel, ev: Any) -> None:
    assert describe_event(ev, model) is None


def test_rejects() -> None:
    assert describe_reject("blocked") == "Something solid blocks your way."
    assert describe_reject("monster_in_view") == "You cannot rest with a monster in view."
    assert describe_reject("queue_full").startswith("Too many")
    assert describe_reject("gravity") == "You cannot do that (gravity)."
    reasons = ["blocked", "occupied", "no_door", "door_blocked", "no_stairs", "sealed",
               "nothing_here", "dead", "monster_in_view", "lava", "queue_full"]  # fmt: skip
    for reason in reasons:
        assert "(" not in describe_reject(reason)  # every documented reason is worded


def test_chat_and_errors() -> None:
    assert describe_chat("alice", "hi") == "<alice> hi"
    assert describe_chat("", "server restarts soon") == "* server restarts soon"
    assert describe_error("rate_limited", "x").startswith("Slow down")
    assert describe_error("weird", "detail") == "Server error (weird): detail"
    assert describe_error("weird") == "Server error (weird)."


# --- version 2 events ------------------------------------------------------------


@pytest.fixture
def model2() -> GameModel:
    welcome = replace(
        _welcome(),
        terrain=[["rock", "rock", " ", "white", False, False],
                 ["wall", "wall", "#", "white", False, False],
                 ["floor", "floor", ".", "white", True, True],
                 ["door", "closed door", "+", "yellow", False, False],
                 ["open_door", "open door", "'", "yellow", True, True],
                 ["water", "water", "~", "blue", True, True]],
        items={"dagger": ["dagger", ")", "cyan", "weapon", {}],
               "dart": ["dart", ")", "white", "thrown", {}],
               "potion_of_healing": ["potion of healing", "!", "red", "potion", {}],
               "scroll_of_spark": ["scroll of spark", "?", "yellow", "scroll", {}],
               "wand_of_fire": ["wand of fire", "/", "red", "wand", {}],
               "horn_of_frost": ["horn of frost", "(", "cyan", "horn", {}],
               "apple": ["apple", "%", "red", "food", {}],
               "leather_armour": ["leather armour", "[", "yellow", "armour", {}]},
        spells={"spark": ["spark", 1, "evocation", "dir"]},
        statuses=[["frozen", "frozen"], ["on_fire", "on fire"]],
        damage_types=["fire", "cold", "electricity", "poison"],
    )  # fmt: skip
    m = GameModel(welcome)
    actors: list[Any] = [
        [ME, 0, "tester", 2, 2, 20, 20, 8 | 16, 0],
        [RAT, 1, "", 3, 2, 3, 3, 4, 0],
        [ALICE, 0, "alice", 1, 3, 20, 20, 16, 0],
    ]
    m.apply(Snapshot(tick=100, depth=2, w=5, h=5, map=bytes([2] * 25), fov=[0, 0, 0, 0, b""],
                     actors=actors, objs=[], ack=-1,
                     me={"x": 2, "y": 2, "inv": [["a", "dagger", 1, "weapon", -1, 0]]}))  # fmt: skip
    return m


def test_items_dropped_used_and_thrown(model2: GameModel) -> None:
    m = model2
    assert say(m, "drop", ME, "dagger") == "You drop a dagger."
    assert say(m, "drop", ALICE, "apple") == "alice drops an apple."
    assert say(m, "use", ME, "eat", "apple") == "You eat an apple."
    assert say(m, "use", ALICE, "quaff", "potion_of_healing") == (
        "alice drinks a potion of healing."
    )
    assert say(m, "use", ME, "read", "scroll_of_spark") == "You read a scroll of spark."
    assert say(m, "use", RAT, "zap", "wand_of_fire") == "The rat zaps a wand of fire."
    assert say(m, "use", ME, "blow", "horn_of_frost") == "You blow a horn of frost."
    assert say(m, "throw", ME, "dart", [3, 2]) == "You throw a dart at the rat."
    assert say(m, "throw", ALICE, "dart", [4, 4]) == "alice throws a dart."
    assert say(m, "land", 50, "dart", 4, 4, False) == "The dart lands."
    assert say(m, "land", 50, "potion_of_healing", 4, 4, True) == (
        "The potion of healing shatters!"
    )
    assert say(m, "land", 51, "bolt:fire", 4, 4, False) is None
    assert say(m, "fly", 50, "dart", [[3, 3], [4, 4]]) is None  # animated, not logged


def test_harm_names_cause_source_and_damage_type(model2: GameModel) -> None:
    m = model2
    assert say(m, "harm", RAT, ME, "physical", 3, "throw", "hit") == (
        "Your missile hits the rat for 3 damage."
    )
    assert say(m, "harm", ME, RAT, "fire", 5, "breath", "crit") == (
        "A critical hit! The rat's breath hits you for 5 fire damage."
    )
    assert say(m, "harm", RAT, ALICE, "cold", 0, "bolt", "miss") == "alice's bolt misses the rat."
    assert say(m, "harm", ME, None, "fire", 4, "ray", "hit") == (
        "The ray hits you for 4 fire damage."
    )
    assert say(m, "harm", ME, ME, "electricity", 6, "ray", "hit") == (
        "Your own ray hits you for 6 electricity damage."
    )
    assert say(m, "harm", RAT, ME, "fire", 0, "ball", "lucky") == (
        "A lucky hit! Your explosion hits the rat but does no damage."
    )
    assert say(m, "harm", ME, None, "poison", 2, "status", "hit") == ("You suffer 2 poison damage.")
    assert say(m, "harm", RAT, None, "hunger", 1, "hunger", "hit") == (
        "The rat suffers 1 damage from hunger."
    )
    assert say(m, "harm", RAT, ME, "fire", 3, "magic", "hit") is None  # unknown cause
    assert say(m, "harm", RAT, ME, "fire", "3", "ray", "hit") is None


def test_rays_explosions_statuses_and_terrain(model2: GameModel) -> None:
    m = model2
    cells = [[3, 2], [4, 2]]
    assert say(m, "ray", ME, "fire", cells, [], [[RAT, False]], False) == "You fire a fire ray."
    assert say(m, "ray", RAT, "magic_missile", cells, [[4, 2]], [], True) == (
        "The rat fires a magic missile beam. It bounces!"
    )
    assert say(m, "ray", None, "cold", cells, [[4, 2], [0, 2]], [[ALICE, True]], False) == (
        "A cold ray flashes past. It bounces 2 times! It reflects off alice!"
    )
    assert say(m, "boom", ME, "fire", 3, 3, 2) == "A fire explosion bursts!"
    assert say(m, "status", RAT, 0, True) == "The rat is frozen."
    assert say(m, "status", ME, 1, True) == "You are on fire."
    assert say(m, "status", ME, 1, False) == "You are no longer on fire."
    assert say(m, "status", ALICE, 7, False) == "alice is no longer status 7."
    m.apply(Delta(tick=101, tiles=[1, 1, 2, 2, 1, 2, 3, 3, 2]))  # remembered floor
    m.known[4, 4] = 3
    m.apply(Delta(tick=102, tiles=[4, 4, 2, 0, 0, 5]))
    assert say(m, "terrain", 4, 4, 2) == "The closed door is destroyed!"
    assert say(m, "terrain", 0, 0, 5) == "The floor turns into water."
    assert say(m, "terrain", 1, 1, 2) is None  # not changed by this delta
    assert say(m, "burn", 1, 1, "scroll_of_spark", "fire") == "A scroll of spark burns up!"
    assert say(m, "burn", 1, 1, "potion_of_healing", "cold") == (
        "A potion of healing freezes and shatters!"
    )


def test_casting_equipment_learning_and_notices(model2: GameModel) -> None:
    m = model2
    assert say(m, "cast", ME, "spark", True) == "You cast spark."
    assert say(m, "cast", RAT, "spark", False) == "The rat fails to cast spark."
    assert say(m, "equip", "a", "dagger", "weapon", True) == "You are now wielding a dagger (a)."
    assert say(m, "equip", "a", "dagger", "weapon", False) == (
        "You are no longer wielding a dagger (a)."
    )
    assert say(m, "equip", "b", "leather_armour", "body", True) == (
        "You are now wearing a leather armour (b)."
    )
    assert say(m, "equip", "b", "leather_armour", "body", False) == (
        "You take off a leather armour (b)."
    )
    assert say(m, "learn", "spark") == "You learn the spell spark."
    assert say(m, "note", "hungry") == "You are getting hungry."
    assert say(m, "note", "starving") == "You are starving!"
    assert say(m, "note", "identified", "wand_of_fire") == "You now know a wand of fire."
    assert say(m, "note", "forgot", "spark") == "You have forgotten the spell spark."
    assert say(m, "note", "choice") == "You may choose a reward for your level: press C."
    assert say(m, "note", "choice", "resist_fire") == "You gain resistance to fire."
    assert say(m, "note", "enchanted", "a") == "Your dagger glows blue for a moment."
    assert say(m, "note", "curse_removed", "a") == "The curse on your dagger is lifted."
    assert say(m, "note", "curse_stays", "z") == "The curse on your equipment holds fast."
    assert say(m, "note", "rusted", "a") == "Your dagger rusts."
    assert say(m, "note", "no_such_note") is None
    for code in ("weak", "nothing_happens", "spell_failed"):
        line = say(m, "note", code)
        assert line and line.endswith((".", "!"))


@pytest.mark.parametrize(
    "ev",
    [["harm", ME], ["ray", ME, "fire", "cells", [], [], False], ["status", ME, "x", True],
     ["burn", 1, 1, 5, "fire"], ["equip", 1, "dagger", "weapon", True], ["use", ME, "lick", "x"],
     ["terrain", "a", 1, 2], ["boom", ME, "fire", 1, 1, "big"], ["throw", ME, 4, [1, 1]]],
)  # fmt: skip
def test_malformed_version_2_events_give_none(model2: GameModel, ev: Any) -> None:
    assert describe_event(ev, model2) is None


def test_every_documented_reject_reason_is_worded() -> None:
    for reason in REJECT_REASONS:
        line = describe_reject(reason)
        assert "(" not in line and line.endswith((".", "!")), reason
    assert describe_reject("pack_full") == "Your pack is full."
