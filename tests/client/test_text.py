"""Message-log sentences (client.text) from events a real GameModel has seen."""

from __future__ import annotations

from typing import Any

import pytest

from client.model import GameModel
from client.text import describe_chat, describe_error, describe_event, describe_reject
from protocol.messages import Delta, Snapshot, Welcome

ME, RAT, GOBLIN, ALICE = 7, 20, 21, 8


def _welcome() -> Welcome:
    return Welcome(
        v=1, id=ME, name="tester", token="secret", resumed=False, tick=100, tick_rate=10,
        terrain=[["rock", "rock", " ", "white", False, False],
                 ["wall", "wall", "#", "white", False, False],
                 ["floor", "floor", ".", "white", True, True]],
        kinds={"player": ["player", "@", "white"], "rat": ["rat", "r", "yellow"],
               "goblin": ["goblin", "g", "green"], "orc": ["orc", "o", "red"]},
        items={"dagger": ["dagger", ")", "cyan"], "amulet": ["amulet", '"', "yellow"]},
        classes=[["warrior", "Warrior"]], motd="",
    )  # fmt: skip


@pytest.fixture
def model() -> GameModel:
    m = GameModel(_welcome())
    actors: list[Any] = [
        [ME, "player", "tester", 2, 2, 20, 20, 8 | 16],
        [RAT, "rat", "", 3, 2, 3, 3, 4],
        [GOBLIN, "goblin", "", 1, 1, 5, 5, 1],
        [ALICE, "player", "alice", 1, 3, 20, 20, 16],
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
