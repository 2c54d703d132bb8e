"""client.travel: runs, travel and auto-explore choose their steps from the map memory."""

from __future__ import annotations

from typing import Any

import numpy as np

from client import keys
from client.model import GameModel
from client.modes import NORMAL
from client.travel import Walk, frontier, path_to, walkable
from protocol.fov import pack_fov
from protocol.messages import Delta, Snapshot, Welcome

TERRAIN = [
    ["rock", "solid rock", " ", "white", False, False],
    ["wall", "wall", "#", "white", False, False],
    ["floor", "floor", ".", "white", True, True],
    ["door_closed", "closed door", "+", "yellow", False, False],
    ["stairs_down", "staircase down", ">", "white", True, True],
    ["lava", "lava", "~", "red", False, True],
]
CODES = {" ": 0, "#": 1, ".": 2, "+": 3, ">": 4, "~": 5, "?": 255, "@": 2, "r": 2}


def world(rows: list[str], **me: Any) -> GameModel:
    """A model of an ASCII level: ``@`` the player, ``r`` a rat, ``?`` unknown."""
    welcome = Welcome(
        v=2, id=1, name="ann", token="t", resumed=False, tick=1, tick_rate=10,
        terrain=TERRAIN, kinds=[["rat", "rat", "r", "red"], ["player", "player", "@", "white"]],
        items={}, classes=[], motd="",
    )  # fmt: skip
    model = GameModel(welcome)
    h, w = len(rows), len(rows[0])
    known = bytes(CODES[ch] for row in rows for ch in row)
    cells = {ch: (x, y) for y, row in enumerate(rows) for x, ch in enumerate(row) if ch in "@r"}
    x, y = cells["@"]
    actors: list[list[Any]] = [[1, 1, "ann", x, y, 10, 10, 24, 0]]
    if "r" in cells:
        actors.append([7, 0, "", *cells["r"], 3, 3, 0, 0])
    model.apply(Snapshot(
        tick=1, depth=1, w=w, h=h, map=known, fov=pack_fov(np.ones((h, w), bool), 0, 0),
        actors=actors, objs=[], me={"name": "ann", "hp": 10, "max_hp": 10, "x": x, "y": y} | me,
        ack=-1,
    ))  # fmt: skip
    return model


def move(model: GameModel, d: tuple[int, int]) -> None:
    """What the server would answer to a step: the new position."""
    x, y = model.position or (0, 0)
    nx, ny = x + d[0], y + d[1]
    model.apply(Delta(tick=model.tick + 1, upd=[[1, nx, ny, 10, 10, 24]], me={"x": nx, "y": ny}))


def walk_out(model: GameModel, walk: Walk, limit: int = 100) -> tuple[list[tuple[int, int]], str]:
    """Follow a walk to its end; the cells visited and why it stopped."""
    walk.start(model)
    cells: list[tuple[int, int]] = []
    for _ in range(limit):
        step = walk.next_step(model)
        if step.direction is None:
            return cells, step.why
        move(model, step.direction)
        cells.append(model.position or (0, 0))
    raise AssertionError("the walk never stopped")


def test_walkable_counts_closed_doors_and_never_lava() -> None:
    model = world(["#####", "#@+~#", "#####"])
    assert walkable(model)[1].tolist() == [False, True, True, False, False]


def test_travel_takes_the_shortest_known_way_round_a_wall() -> None:
    model = world([
        "#######",
        "#@.#..#",
        "#..#..#",
        "#.....#",
        "#######",
    ])  # fmt: skip
    cells, why = walk_out(model, Walk("travel", goal=(5, 1)))
    assert cells[-1] == (5, 1) and why == ""
    assert len(cells) == 4  # (2,2) (3,3) (4,2) (5,1): diagonals round the wall's end
    assert path_to(model, (5, 1), [(1, 1)])[-1] == (1, 1)


def test_travel_to_a_wall_stops_beside_it_and_to_the_unknown_says_so() -> None:
    model = world(["#####", "#@..#", "#####"])
    cells, why = walk_out(model, Walk("travel", goal=(4, 1)))
    assert cells == [(2, 1), (3, 1)] and why == ""
    model = world(["#####", "#@#?#", "#####"])
    assert walk_out(model, Walk("travel", goal=(3, 1))) == ([], "You know no way there.")


def test_explore_walks_to_the_nearest_unknown_edge() -> None:
    model = world([
        "#########",
        "#@......?",
        "#.#######",
        "#.?######",
    ])  # fmt: skip
    assert frontier(model)[1, 7] and frontier(model)[3, 1] and not frontier(model)[1, 3]
    walk = Walk("explore").start(model)
    step = walk.next_step(model)
    assert step.direction == (0, 1)  # (1, 3) is two steps away, (7, 1) six


def test_explore_stops_when_nothing_is_left() -> None:
    model = world(["#####", "#@..#", "#####"])
    assert walk_out(model, Walk("explore")) == ([], "Nothing left to explore that you can reach.")


def test_a_monster_coming_into_view_stops_a_walk() -> None:
    model = world(["##########", "#@.......#", "##########"])
    walk = Walk("travel", goal=(8, 1)).start(model)
    move(model, walk.next_step(model).direction or (0, 0))
    model.apply(Delta(tick=5, add=[[7, 0, "", 6, 1, 3, 3, 0, 0]]))
    assert walk.next_step(model).why == "You stop: rat comes into view."


def test_a_monster_already_in_view_does_not_stop_it_but_harm_does() -> None:
    model = world(["##########", "#@......r#", "##########"])
    walk = Walk("run", direction=(1, 0)).start(model)
    step = walk.next_step(model)
    assert step.direction == (1, 0)
    move(model, (1, 0))
    assert walk.next_step(model).direction == (1, 0)
    model.apply(Delta(tick=9, me={"hp": 8}))
    assert walk.next_step(model).why == "You stop: you are hurt."


def test_a_run_follows_a_corridor_and_stops_where_it_opens() -> None:
    model = world([
        "##########",
        "#@...#####",
        "####.#####",
        "####....##",
        "####.##..#",
        "####.##..#",
    ])  # fmt: skip
    cells, _ = walk_out(model, Walk("run", direction=(1, 0)))
    # along row 1, down the bend at (4, 1), and stop at the fork at (4, 3)
    assert cells == [(2, 1), (3, 1), (4, 1), (4, 2), (4, 3)], cells
    model = world([
        "##########",
        "####.....#",
        "#@.......#",
        "####.....#",
        "##########",
    ])  # fmt: skip
    cells, _ = walk_out(model, Walk("run", direction=(1, 0)))
    assert cells == [(2, 2), (3, 2), (4, 2)], cells  # stops in the room's doorway


def test_a_run_stops_beside_a_door_or_stairs() -> None:
    model = world([
        "##########",
        "#@.......#",
        "#........#",
        "####+#####",
    ])  # fmt: skip
    cells, _ = walk_out(model, Walk("run", direction=(1, 0)))
    assert cells[-1] == (8, 1), cells  # the door at (4, 3) never comes next to row 1
    model = world([
        "##########",
        "#........#",
        "#@.......#",
        "####+#####",
    ])  # fmt: skip
    cells, _ = walk_out(model, Walk("run", direction=(1, 0)))
    assert cells[-1] == (3, 2), cells  # the door comes next to us at (3, 2)
    model = world(["#######", "#@..>.#", "#######"])
    cells, _ = walk_out(model, Walk("run", direction=(1, 0)))
    assert cells == [(2, 1), (3, 1)], cells


def test_a_run_against_a_wall_does_not_start() -> None:
    model = world(["###", "#@#", "###"])
    assert walk_out(model, Walk("run", direction=(1, 0))) == ([], "")


def test_a_walk_gives_up_when_it_cannot_move() -> None:
    model = world(["######", "#@...#", "######"])
    walk = Walk("travel", goal=(4, 1)).start(model)
    whys = [walk.next_step(model).why for _ in range(4)]  # the server never moves us
    assert whys[-1] == "You stop: something is in the way."


def test_keys_start_runs_travel_and_exploring() -> None:
    ctx = keys.Context(position=(3, 3), size=(10, 10))
    assert keys.translate(NORMAL, keys.Key("L"), ctx)[1] == keys.Run((1, 0))
    assert keys.translate(NORMAL, keys.Key("", "KEY_SLEFT"), ctx)[1] == keys.Run((-1, 0))
    mode, action = keys.translate(NORMAL, keys.Key("G"), ctx)
    assert action is None and keys.translate(mode, keys.Key("b"), ctx)[1] == keys.Run((-1, 1))
    assert keys.translate(NORMAL, keys.Key("A"), ctx)[1] == keys.Explore()
    mode, action = keys.translate(NORMAL, keys.Key("_"), ctx)
    assert mode.kind is keys.InputMode.TARGET and mode.cursor == (3, 3) and action is None
    mode, _ = keys.translate(mode, keys.Key("l"), ctx)
    assert keys.translate(mode, keys.Key("\r"), ctx)[1] == keys.Travel(4, 3)
    assert keys.translate(NORMAL, keys.Key("U"), ctx)[1] == keys.Run((1, -1))


def test_ctrl_p_opens_the_history_and_scroll_keys_move_it() -> None:
    ctx = keys.Context(history=30)
    mode, _ = keys.translate(NORMAL, keys.Key("\x10"), ctx)
    assert mode.kind is keys.InputMode.HISTORY and mode.scroll == 0
    mode, _ = keys.translate(mode, keys.Key("k"), ctx)
    mode, _ = keys.translate(mode, keys.Key("", "KEY_PGUP"), ctx)
    assert mode.scroll == 11
    mode, _ = keys.translate(mode, keys.Key("", "KEY_PGUP"), ctx)
    mode, _ = keys.translate(mode, keys.Key("", "KEY_PGUP"), ctx)
    assert mode.scroll == 29  # no further back than the log goes
    mode, _ = keys.translate(mode, keys.Key("j"), ctx)
    assert mode.scroll == 28
    assert keys.translate(mode, keys.Key("x"), ctx)[0] == NORMAL


def test_the_travel_cursor_jumps_to_the_stairs() -> None:
    from client import menus

    model = world(["#########", "#@..>..>#", "#########"])
    ctx = menus.context(model)
    assert ctx.stairs == {"<": (), ">": ((4, 1), (7, 1))}
    mode, _ = keys.translate(NORMAL, keys.Key("_"), ctx)
    mode, _ = keys.translate(mode, keys.Key(">"), ctx)
    assert mode.cursor == (4, 1)
    mode, _ = keys.translate(mode, keys.Key(">"), ctx)
    assert mode.cursor == (7, 1)
    assert keys.translate(mode, keys.Key("\r"), ctx)[1] == keys.Travel(7, 1)
    mode, _ = keys.translate(mode, keys.Key("<"), ctx)  # no staircase up known: no change
    assert mode.cursor == (7, 1)
