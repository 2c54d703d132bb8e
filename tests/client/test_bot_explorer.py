"""The bots as explorers: descending, using items, casting, the party map and
the report's new figures.

Levels are ASCII maps read into a real :class:`client.model.GameModel` (see
``test_bot_policy``); items and spells are set as a ``welcome`` and ``me``
would set them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from client.botmap import PartyMap
from client.botpolicy import CAST_CHANCE, LEVEL_TURNS, Action, Policy
from client.botreport import Totals, build_report
from client.model import GameModel
from tests.client.test_bot_policy import model_from_ascii

_ITEMS = {
    "apple": ["apple", "%", "red", "food", {}],
    "scroll_of_spark": ["scroll of spark", "?", "white", "scroll", {}],
    "spellbook_of_fireball": ["spellbook of fireball", "+", "red", "spellbook", {}],
    "potion_of_healing": ["potion of healing", "!", "red", "potion", {}],
    "potion_of_rage": ["potion of rage", "!", "red", "potion", {}],
    "long_sword": ["long sword", ")", "white", "weapon", {}],
}
_SPELLS = {
    "spark": ["spark", 1, "attack", "dir"],
    "fireball": ["fireball", 4, "attack", "cell"],
    "heal_wounds": ["heal wounds", 1, "healing", "self"],
}
BOOK = ["z", "spellbook_of_fireball", 1, "book", -1, 0]
EXPLORED = ["#######", "#.....#", "#.....#", "#######"]


def kitted(rows: list[str], inv: list[list[Any]], **me: Any) -> GameModel:
    """The level in ``rows`` with ``inv`` as the pack and ``me`` merged into ``me``."""
    model = model_from_ascii(rows, hp=me.pop("hp", 10))
    model.items = dict(_ITEMS)
    model.spells = dict(_SPELLS)
    model.me["inv"] = inv
    model.me.update(me)
    return model


def on_stairs(model: GameModel, x: int, y: int) -> GameModel:
    model.known[y, x] = 12
    model.me.update(x=x, y=y)
    return model


# --- descending --------------------------------------------------------------


def test_a_bot_next_to_a_known_down_staircase_on_an_explored_level_descends() -> None:
    model = model_from_ascii(["#####", "#@>.#", "#...#", "#####"])
    policy = Policy(np.random.default_rng(0))
    assert policy.decide(model) == Action("move", (1, 0))
    model.me.update(x=2, y=1)
    assert policy.decide(model) == Action("down")


def test_after_its_level_turns_a_bot_on_the_stairs_always_descends() -> None:
    model = on_stairs(model_from_ascii(["#####", "#...#", "#...?", "#####"]), 2, 1)
    for seed in range(10):
        policy = Policy(np.random.default_rng(seed))
        for _ in range(LEVEL_TURNS):
            policy.decide(model)
        assert policy.decide(model) == Action("down")


def test_after_its_level_turns_a_bot_walks_to_known_stairs_not_the_frontier() -> None:
    # the frontier (?) is to the left, the stairs to the right
    model = model_from_ascii(["#########", "?..@...>#", "#########"])
    policy = Policy(np.random.default_rng(0))
    assert policy.decide(model) == Action("move", (-1, 0))  # explores first
    for _ in range(LEVEL_TURNS):
        policy.decide(model)
    assert policy.decide(model) == Action("move", (1, 0))


def test_on_a_level_it_was_on_before_a_bot_heads_for_the_stairs_at_once() -> None:
    model = model_from_ascii(["#########", "?..@...>#", "#########"])
    policy = Policy(np.random.default_rng(0))
    assert policy.decide(model) == Action("move", (-1, 0))  # explores first
    model.depth = 2
    policy.decide(model)  # down there (say it died) ...
    model.depth = 1  # ... and back on depth 1
    assert policy.decide(model) == Action("move", (1, 0))


def test_a_hurt_bot_rests_on_the_stairs_instead_of_descending() -> None:
    model = on_stairs(model_from_ascii(EXPLORED, hp=5), 2, 1)
    assert all(Policy(np.random.default_rng(s)).decide(model) == Action("rest") for s in range(10))
    model.me["hp"] = 10
    assert Policy(np.random.default_rng(0)).decide(model) == Action("down")


def test_a_resting_bot_rests_until_nearly_healed() -> None:
    model = model_from_ascii(["####", "#@.?", "####"], hp=2)
    policy = Policy(np.random.default_rng(0))
    assert policy.decide(model) == Action("rest")
    model.me["hp"] = 8  # above the start of resting, below its end
    assert policy.decide(model) == Action("rest")
    model.me["hp"] = 9
    assert policy.decide(model) == Action("move", (1, 0))


# --- items -------------------------------------------------------------------


def test_a_bot_with_an_unread_scroll_reads_it_once() -> None:
    model = kitted(EXPLORED[:1] + ["#@..?#", "#....#"] + EXPLORED[-1:], [
        ["a", "scroll_of_spark", 2, "", -1, 0],
    ])  # fmt: skip
    policy = Policy(np.random.default_rng(0))
    assert policy.decide(model) == Action("read", item="a")
    policy.on_reject("confused")
    assert policy.decide(model) != Action("read", item="a")  # not retried on the same stack
    model.me["inv"] = [["a", "scroll_of_spark", 1, "", -1, 0]]  # one read, one left
    assert policy.decide(model) == Action("read", item="a")


def test_a_bot_without_a_worn_book_wears_a_spellbook_then_reads_it_once() -> None:
    book = ["b", "spellbook_of_fireball", 1, "", -1, 0]
    model = kitted(["#####", "#@..?", "#####"], [book])
    policy = Policy(np.random.default_rng(0))
    assert policy.decide(model) == Action("wear", item="b")
    model.me["inv"] = [["b", "spellbook_of_fireball", 1, "book", -1, 0]]
    assert policy.decide(model) == Action("read", item="b")
    assert policy.decide(model) == Action("move", (1, 0))  # a book is kept: not read again


def test_a_bot_quaffs_potions_and_eats_only_when_hungry() -> None:
    inv = [["a", "apple", 1, "", -1, 0], ["b", "potion_of_rage", 1, "", -1, 0]]
    model = kitted(["#####", "#@..?", "#####"], inv, food=[300, 50])
    assert Policy(np.random.default_rng(0)).decide(model) == Action("quaff", item="b")
    model.me["food"] = [120, 0]
    assert Policy(np.random.default_rng(0)).decide(model) == Action("eat", item="a")


def test_a_bot_keeps_healing_potions_for_when_it_is_hurt() -> None:
    inv = [["c", "potion_of_healing", 2, "", -1, 0]]
    model = kitted(["#####", "#@..?", "#####"], inv)
    assert Policy(np.random.default_rng(0)).decide(model) == Action("move", (1, 0))
    fight = kitted(["######", "#@.r.#", "######"], inv, hp=2)
    assert Policy(np.random.default_rng(0)).decide(fight) == Action("quaff", item="c")
    fight.me["hp"] = 5
    assert Policy(np.random.default_rng(0)).decide(fight) == Action("move", (1, 0))


def test_no_items_are_used_with_a_monster_in_view() -> None:
    model = kitted(["######", "#@..r#", "######"], [["a", "scroll_of_spark", 1, "", -1, 0]])
    action = Policy(np.random.default_rng(0)).decide(model)
    assert action == Action("move", (1, 0))


def test_a_bot_picks_up_useful_items_not_heavy_gear() -> None:
    model = kitted(["#####", "#@..?", "#####"], [])
    model.objs[(1, 1)] = "potion_of_healing"
    policy = Policy(np.random.default_rng(0))
    assert policy.decide(model) == Action("pickup")
    assert policy.decide(model) != Action("pickup")  # tried once on this cell
    model.objs[(1, 1)] = "long_sword"
    assert Policy(np.random.default_rng(0)).decide(model) != Action("pickup")


def test_a_bot_walks_to_a_remembered_potion() -> None:
    model = kitted(["######", "#@...#", "#....#", "######"], [])
    model.objs[(3, 2)] = "potion_of_healing"  # the room is explored: no other goal
    steps = {Policy(np.random.default_rng(s)).decide(model) for s in range(20)}
    assert steps <= {Action("move", (1, 0)), Action("move", (1, 1))}


def test_a_bot_owed_a_reward_chooses_one_on_offer() -> None:
    model = kitted(["#####", "#@..?", "#####"], [], choice=1, options=["health", "power"])
    picks = {Policy(np.random.default_rng(s)).decide(model) for s in range(20)}
    assert picks == {Action("choose", opt="health"), Action("choose", opt="power")}


# --- casting ------------------------------------------------------------------


def caster(rows: list[str], *, book: bool = True, en: int = 20, hp: int = 10) -> GameModel:
    spells = [["a", "spark", 5, 5, False], ["b", "heal_wounds", 5, 5, False]]
    return kitted(rows, [BOOK] if book else [], spells=spells, en=en, max_en=20, hp=hp)


LINE = ["########", "#@..r..#", "#......#", "########"]


def test_a_caster_casts_at_a_monster_in_line_with_the_cast_chance() -> None:
    model = caster(LINE)
    trials = 400
    actions = [Policy(np.random.default_rng([3, s])).decide(model) for s in range(trials)]
    casts = [a for a in actions if a is not None and a.c == "cast"]
    assert {(a.spell, a.d, a.at) for a in casts} == {("spark", (1, 0), None)}
    mean = trials * CAST_CHANCE
    sd = math.sqrt(trials * CAST_CHANCE * (1 - CAST_CHANCE))
    assert abs(len(casts) - mean) <= 4.5 * sd


def test_no_cast_without_a_worn_book_or_the_energy() -> None:
    for model in (caster(LINE, book=False), caster(LINE, en=2)):
        for s in range(30):
            action = Policy(np.random.default_rng(s)).decide(model)
            assert action is not None and action.c != "cast"


def test_a_hurt_caster_in_a_fight_may_heal_itself() -> None:
    model = caster(["########", "#@....r#", "#......#", "########"], hp=3)
    model.me["spells"] = [["b", "heal_wounds", 5, 5, False]]
    actions = {Policy(np.random.default_rng(s)).decide(model) for s in range(30)}
    assert Action("cast", spell="heal_wounds") in actions


def test_a_cell_spell_refused_for_reach_is_tried_nearer_only() -> None:
    model = caster(LINE)
    model.me["spells"] = [["c", "fireball", 5, 5, False]]
    policy = Policy(np.random.default_rng(0))
    while (action := policy.decide(model)) is None or action.c != "cast":
        pass
    assert action == Action("cast", at=(4, 1), spell="fireball", dist=3)
    policy.on_reject("no_target")
    actions = [policy.decide(model) for _ in range(30)]
    assert not any(a is not None and a.c == "cast" for a in actions)  # the rat is 3 away


def test_a_cast_refused_otherwise_pauses_casting_not_walking() -> None:
    model = caster(LINE)
    policy = Policy(np.random.default_rng(0))
    while (action := policy.decide(model)) is None or action.c != "cast":
        pass
    policy.on_reject("cannot_cast")
    assert policy.decide(model) == Action("move", (1, 0))  # no random step


# --- the party map ---------------------------------------------------------------


def test_the_party_map_merges_what_each_bot_saw() -> None:
    party = PartyMap()
    a = np.full((2, 3), 255, dtype=np.uint8)
    a[0, 0] = 2
    b = np.full((2, 3), 255, dtype=np.uint8)
    b[1, 2] = 12
    party.merge(1, a, a == 2)
    known, passable = party.merge(1, b, b == 12)
    assert known[0, 0] == 2 and known[1, 2] == 12 and (known == 255).sum() == 4
    assert passable[0, 0] and passable[1, 2]
    other, _ = party.merge(2, b, b == 12)  # another depth: a map of its own
    assert other[0, 0] == 255


def test_a_bot_walks_to_stairs_another_bot_found() -> None:
    party = PartyMap()
    seen = model_from_ascii(["#########", "#...@..>#", "#########"])
    party.merge(1, seen.known, seen.passable())
    mine = model_from_ascii(["#########", "#..@????#", "#########"])
    policy = Policy(np.random.default_rng(0), party)
    for _ in range(LEVEL_TURNS):
        policy.decide(mine)
    assert policy.decide(mine) == Action("move", (1, 0))
    assert Policy(np.random.default_rng(0)).decide(mine) == Action("move", (1, 0))


# --- the report ------------------------------------------------------------------


class _Conn:
    bytes_received = 0
    messages_received = 0


class _Figures:
    """One bot's figures as the report reads them (:class:`client.botreport.BotFigures`)."""

    def __init__(self, deepest: int) -> None:
        self.conn: _Conn | None = None
        self.connected_at = 0.0
        self.closed_at: float | None = None
        self.moved = True
        self.saw_player = False
        self.deepest = deepest


def test_the_report_counts_own_casts_uses_and_lessons_only() -> None:
    totals = Totals()
    for ev in (
        ["learn", "spark"], ["cast", 7, "spark", True], ["cast", 7, "spark", False],
        ["cast", 8, "fireball", True], ["use", 7, "read", "scroll_of_spark"],
        ["use", 7, "quaff", "potion_of_rage"], ["use", 9, "eat", "apple"],
    ):  # fmt: skip
        totals.own_event(ev, 7)
    totals.monster_kinds.update({"rat", "lich"})
    report = build_report([], totals, 0.0, 1.0)
    assert report.spells_learned == 1 and report.spell_kinds_learned == ["spark"]
    assert (report.casts, report.casts_succeeded, report.spell_kinds_cast) == (2, 1, ["spark"])
    assert report.items_used == {"quaff": 1, "read": 1}
    assert report.item_kinds_used == ["potion_of_rage", "scroll_of_spark"]
    assert report.monster_kinds == ["lich", "rat"] and report.monster_kinds_seen == 2


def test_the_report_gives_the_deepest_depth_and_how_many_bots_reached_each() -> None:
    report = build_report([_Figures(3)], Totals(), 0.0, 1.0)
    assert report.deepest_depth == 0  # not connected: not counted
    bots = [_Figures(d) for d in (1, 3, 3)]
    for bot in bots:
        bot.conn = _Conn()
    report = build_report(bots, Totals(), 0.0, 1.0)
    assert report.deepest_depth == 3
    assert report.depths_reached == {"1": 1, "3": 2}
    assert "deepest 3" in report.format_table()
