"""The bots' policy: frontier search, path steps, attack choice, decisions.

Levels are ASCII maps turned into a real :class:`client.model.GameModel`
through ``welcome`` + ``snap`` messages, so the policy reads exactly what it
reads in play. Legend: ``#`` wall, ``.`` floor, ``+`` closed door, ``=`` lava,
``<``/``>`` stairs, ``?`` unknown; on floor: ``@`` the bot, ``r`` a rat,
``P`` another player.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from client.botpolicy import (
    CROWD_COST,
    RANGED_CHANCE,
    STAIRS_CHANCE,
    Action,
    Policy,
    adjacent_monster,
    frontier_cells,
    path_to_nearest,
    random_step,
    step_costs,
    walkable_cells,
)
from client.model import ActorView, GameModel
from protocol.fov import pack_level_fov
from protocol.messages import Snapshot, Welcome

# code, key, passable: the fixed terrain codes of docs/protocol.md
_TERRAIN = [
    (0, "rock", False), (1, "wall", False), (2, "floor", True), (3, "door", False),
    (4, "open_door", True), (5, "water", True), (6, "lava", True), (7, "rubble", True),
    (8, "tree", False), (9, "fountain", False), (10, "altar", True),
    (11, "stairs_up", True), (12, "stairs_down", True),
]  # fmt: skip
_CODES = {"#": 1, ".": 2, "+": 3, "=": 6, "<": 11, ">": 12, "?": 255, " ": 0}
_WELCOME = Welcome(
    v=2, id=1, name="bot0", token="t", resumed=False, tick=0, tick_rate=10,
    terrain=[[key, key, "x", "white", passable, passable] for _, key, passable in _TERRAIN],
    kinds=[["player", "you", "@", "white"], ["rat", "rat", "r", "white"]],
    items={}, classes=[["warrior", "Warrior"]], motd="",
)  # fmt: skip


def model_from_ascii(rows: list[str], *, hp: int = 10, dead: bool = False) -> GameModel:
    """A model of the level drawn in ``rows``, everything known in view."""
    h, w = len(rows), len(rows[0])
    known = np.zeros((h, w), dtype=np.uint8)
    actors: list[list[Any]] = []
    me: dict[str, Any] = {"hp": hp, "max_hp": 10, "dead": dead}
    next_id = 2
    for y, row in enumerate(rows):
        for x, ch in enumerate(row):
            if ch in _CODES:
                known[y, x] = _CODES[ch]
                continue
            known[y, x] = 2
            if ch == "@":
                actors.append([1, 0, "bot0", x, y, hp, 10, 8 | 16])
                me.update(x=x, y=y)
            elif ch == "P":
                actors.append([next_id, 0, f"p{next_id}", x, y, 10, 10, 16])
            elif ch == "r":
                actors.append([next_id, 1, "", x, y, 3 + next_id, 10, 0])
            else:
                raise ValueError(f"unknown map character {ch!r}")
            next_id += 1
    model = GameModel(_WELCOME)
    fov = pack_level_fov(known != 255)
    model.apply(
        Snapshot(tick=1, depth=1, w=w, h=h, map=known.tobytes(), fov=fov, actors=actors,
                 objs=[], me=me, ack=-1)
    )  # fmt: skip
    return model


def test_walkable_cells_counts_closed_doors_and_excludes_lava() -> None:
    model = model_from_ascii(["#+=.?"])
    walk = walkable_cells(model.known, model.passable())
    assert walk.tolist() == [[False, True, False, True, False]]


def test_frontier_is_unknown_cells_next_to_walkable_ones() -> None:
    model = model_from_ascii([
        "#####??",
        "#@..#??",
        "#...+??",
        "#####??",
    ])  # fmt: skip
    walk = walkable_cells(model.known, model.passable())
    frontier = frontier_cells(model.known, walk)
    # only the unknown column touching the door (x=5, rows 1-3) is frontier
    assert set(zip(*np.nonzero(frontier), strict=True)) == {(1, 5), (2, 5), (3, 5)}


def test_path_to_nearest_frontier_goes_through_the_door() -> None:
    model = model_from_ascii([
        "#######",
        "#@...+?",
        "#######",
    ])  # fmt: skip
    walk = walkable_cells(model.known, model.passable())
    path = path_to_nearest(step_costs(walk, []), frontier_cells(model.known, walk), (1, 1))
    assert path == [(2, 1), (3, 1), (4, 1), (5, 1), (6, 1)]


def test_path_to_nearest_picks_the_closer_goal_and_moves_diagonally() -> None:
    walk = np.ones((5, 9), dtype=np.bool_)
    goals = np.zeros_like(walk)
    goals[4, 6] = goals[0, 0] = True
    path = path_to_nearest(step_costs(walk, []), goals, (4, 2))
    assert path is not None and path[-1] == (6, 4) and len(path) == 2


def test_path_to_nearest_none_when_unreachable_or_out_of_radius() -> None:
    walk = np.ones((3, 9), dtype=np.bool_)
    walk[:, 4] = False
    goals = np.zeros_like(walk)
    goals[1, 8] = True
    assert path_to_nearest(step_costs(walk, []), goals, (0, 1)) is None
    walk[:, 4] = True
    assert path_to_nearest(step_costs(walk, []), goals, (0, 1), radius=3) is None
    assert path_to_nearest(step_costs(walk, []), goals, (0, 1), radius=8) is not None
    assert path_to_nearest(step_costs(walk, []), goals, (8, 1)) == []


def test_paths_go_around_players_but_through_a_crowd_if_they_must() -> None:
    walk = np.ones((3, 5), dtype=np.bool_)
    goals = np.zeros_like(walk)
    goals[1, 4] = True
    cost = step_costs(walk, [(1, 1), (2, 1)])
    assert cost[1, 1] == CROWD_COST
    path = path_to_nearest(cost, goals, (0, 1))
    assert path is not None and (1, 1) not in path and (2, 1) not in path
    walk[0, :] = walk[2, :] = False  # a one-cell corridor: the only way is through
    path = path_to_nearest(step_costs(walk, [(1, 1)]), goals, (0, 1))
    assert path == [(1, 1), (2, 1), (3, 1), (4, 1)]


def test_adjacent_monster_prefers_the_weakest_then_the_lowest_id() -> None:
    rats = [
        ActorView(5, "rat", "", 3, 2, 4, 10, 0),
        ActorView(6, "rat", "", 1, 1, 2, 10, 0),
        ActorView(3, "rat", "", 3, 3, 2, 10, 0),
        ActorView(4, "rat", "", 4, 4, 1, 10, 0),  # two cells away
    ]
    assert adjacent_monster((2, 2), rats) == (1, 1)  # hp 2, id 3
    assert adjacent_monster((2, 2), rats[:1]) == (1, 0)
    assert adjacent_monster((0, 4), rats) is None


def test_random_step_only_to_free_cells() -> None:
    cost = np.zeros((3, 3), dtype=np.int8)
    rng = np.random.default_rng(0)
    assert random_step(cost, (1, 1), rng) is None
    cost[0, 2] = 1
    cost[2, 0] = CROWD_COST  # a player stands there
    assert {random_step(cost, (1, 1), rng) for _ in range(20)} == {(1, -1)}


def decide(rows: list[str], seed: int = 0, **kwargs: Any) -> Action | None:
    return Policy(np.random.default_rng(seed)).decide(model_from_ascii(rows, **kwargs))


def test_decide_attacks_an_adjacent_monster() -> None:
    assert decide(["#####", "#.r.#", "#.@.#", "#####"]) == Action("move", (0, -1))


def test_decide_steps_toward_the_nearest_visible_monster() -> None:
    action = decide([
        "##########",
        "#@.....r.#",
        "#.########",
        "#.r??????#",
    ])  # fmt: skip
    # the rat below is nearer (2 steps) than the one to the right (6 steps)
    assert action == Action("move", (0, 1))


def test_decide_explores_toward_the_frontier_through_a_closed_door() -> None:
    action = decide([
        "#########",
        "#.......#",
        "#...@..+?",
        "#.......#",
        "#########",
    ])  # fmt: skip
    assert action == Action("move", (1, 0))


def test_decide_follows_its_frontier_path_step_by_step() -> None:
    rows = ["#######", "#@...+?", "#######"]
    policy = Policy(np.random.default_rng(0))
    model = model_from_ascii(rows)
    assert policy.decide(model) == Action("move", (1, 0))
    model.me["x"] = 2  # moved one step; the cached path continues
    assert policy.decide(model) == Action("move", (1, 0))


def test_decide_walks_to_known_down_stairs_when_all_is_explored() -> None:
    action = decide(["#####", "#@..#", "#..>#", "#####"])
    assert action in (Action("move", (1, 1)), Action("move", (1, 0)))


def test_decide_takes_the_stairs_it_stands_on_with_stairs_chance() -> None:
    model = model_from_ascii(["#####", "#...#", "#...?", "#####"])  # still a frontier
    model.known[1, 2] = 12
    model.me.update(x=2, y=1)
    trials = 400
    downs = sum(
        Policy(np.random.default_rng([9, s])).decide(model) == Action("down") for s in range(trials)
    )
    mean = trials * STAIRS_CHANCE
    sd = math.sqrt(trials * STAIRS_CHANCE * (1 - STAIRS_CHANCE))
    assert abs(downs - mean) <= 4 * sd


def test_decide_always_goes_down_when_the_level_is_explored() -> None:
    model = model_from_ascii(["#####", "#...#", "#...#", "#####"])
    model.known[1, 2] = 12
    model.me.update(x=2, y=1)
    assert all(Policy(np.random.default_rng(s)).decide(model) == Action("down") for s in range(20))


def test_decide_never_steps_into_another_player() -> None:
    rows = ["#####", "#PPP#", "#P@P#", "#PP.#", "#####"]
    for seed in range(10):
        assert decide(rows, seed) == Action("move", (1, 1))
    assert decide(["#####", "#PPP#", "#P@P#", "#PPP#", "#####"]) == Action("wait")


def test_decide_nothing_while_dead_and_rest_when_hurt() -> None:
    assert decide(["####", "#@.?", "####"], dead=True) is None
    assert decide(["####", "#@.?", "####"], hp=2) == Action("rest")
    assert decide(["#####", "#@r.?", "#####"], hp=2) == Action("move", (1, 0))


def test_after_a_reject_the_next_step_is_random() -> None:
    rows = ["#####", "#...#", "#.@.?", "#...#", "#####"]
    model = model_from_ascii(rows)
    steps = set()
    for seed in range(30):
        policy = Policy(np.random.default_rng(seed))
        policy.on_reject()
        action = policy.decide(model)
        assert action is not None and action.c == "move"
        steps.add(action.d)
    assert len(steps) > 3


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_decisions_depend_only_on_the_seed(seed: int) -> None:
    rows = ["#######", "#.....#", "#..@..#", "#.....#", "#######"]
    a = [Policy(np.random.default_rng([seed, i])).decide(model_from_ascii(rows)) for i in range(8)]
    b = [Policy(np.random.default_rng([seed, i])).decide(model_from_ascii(rows)) for i in range(8)]
    assert a == b


# --- ranged attacks -------------------------------------------------------------------

_ITEMS = {
    "dart": ["dart", ")", "white", "thrown", {}],
    "wand_of_fire": ["wand of fire", "/", "red", "wand", {}],
    "apple": ["apple", "%", "red", "food", {}],
}


def armed(
    rows: list[str], inv: list[list[Any]], objs: dict[tuple[int, int], str] | None = None
) -> GameModel:
    model = model_from_ascii(rows)
    model.items = dict(_ITEMS)
    model.me["inv"] = inv
    model.objs.update(objs or {})
    return model


DARTS = [["a", "dart", 3, "", -1, 0]]
WAND = [["b", "wand_of_fire", 1, "", 2, 0]]
OPEN_ROOM = ["########", "#@..r..#", "#......#", "########"]


def test_throws_at_a_monster_in_line_with_the_ranged_chance() -> None:
    model = armed(OPEN_ROOM, DARTS)
    trials = 400
    actions = [Policy(np.random.default_rng([5, s])).decide(model) for s in range(trials)]
    throws = sum(a == Action("throw", item="a", at=(4, 1)) for a in actions)
    others = {a for a in actions if a is not None and a.c != "throw"}
    assert others == {Action("move", (1, 0))}  # otherwise it walks up to the rat
    mean = trials * RANGED_CHANCE
    sd = math.sqrt(trials * RANGED_CHANCE * (1 - RANGED_CHANCE))
    assert abs(throws - mean) <= 4.5 * sd


def test_zaps_along_a_line_and_prefers_the_wand() -> None:
    model = armed(["########", "#@.....#", "#......#", "#..r...#", "########"], DARTS + WAND)
    actions = {Policy(np.random.default_rng(s)).decide(model) for s in range(40)}
    assert Action("zap", (1, 1), item="b") in actions
    assert not any(a is not None and a.c == "throw" for a in actions)
    # off the eight lines a wand is useless: the darts are thrown instead
    model = armed(["########", "#@.....#", "#......#", "#...r..#", "########"], DARTS + WAND)
    actions = {Policy(np.random.default_rng(s)).decide(model) for s in range(40)}
    assert Action("throw", item="a", at=(4, 3)) in actions
    assert not any(a is not None and a.c == "zap" for a in actions)


def test_no_shot_through_walls_other_monsters_or_from_too_close() -> None:
    walled = armed(["########", "#@.#r..#", "#......#", "########"], DARTS)
    crowded = armed(["########", "#@.rr..#", "#......#", "########"], DARTS)
    near = armed(["########", "#@r....#", "#......#", "########"], DARTS)
    far = armed(["########", "#@....r#", "#......#", "########"], DARTS)
    for model in (walled, near, far):
        for s in range(30):
            action = Policy(np.random.default_rng(s)).decide(model)
            assert action is None or action.c != "throw"
    # behind the first rat the second is not a target, the first one is
    targets_hit = {Policy(np.random.default_rng(s)).decide(crowded) for s in range(40)}
    assert Action("throw", item="a", at=(3, 1)) in targets_hit
    assert Action("throw", item="a", at=(4, 1)) not in targets_hit


def test_without_missiles_the_decisions_do_not_change() -> None:
    plain = model_from_ascii(OPEN_ROOM)
    fed = armed(OPEN_ROOM, [["c", "apple", 2, "", -1, 0]])
    for s in range(20):
        a, b = Policy(np.random.default_rng(s)), Policy(np.random.default_rng(s))
        assert [a.decide(plain) for _ in range(3)] == [b.decide(fed) for _ in range(3)]


def test_picks_up_missiles_and_food_it_stands_on() -> None:
    model = armed(["#####", "#@..#", "#...?", "#####"], [], {(1, 1): "dart"})
    assert decide_model(model) == Action("pickup")
    model = armed(["#####", "#@..#", "#...?", "#####"], [], {(1, 1): "apple"})
    assert decide_model(model) == Action("pickup")


def decide_model(model: GameModel) -> Action | None:
    return Policy(np.random.default_rng(0)).decide(model)
