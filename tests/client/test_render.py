"""client.render: pages instead of the map, the targeting overlay, the status line."""

from __future__ import annotations

import io
from collections import deque
from typing import Any

import pytest
from blessed import Terminal

from client import keys
from client.animate import Mark
from client.model import GameModel
from client.render import MessageLog, Screen, ViewState
from protocol.messages import Info, Snapshot, Welcome

TERRAIN = [
    ["rock", "rock", " ", "white", False, False],
    ["wall", "wall", "#", "white", False, False],
    ["floor", "floor", ".", "white", True, True],
]
# 12 x 5, walls round the edge and one pillar at (8, 2):
ROWS = [
    "############",
    "#..........#",
    "#.......#..#",
    "#..........#",
    "############",
]


@pytest.fixture
def screen(monkeypatch: pytest.MonkeyPatch) -> Screen:
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("LINES", "20")
    return Screen(Terminal(kind="xterm-256color", stream=io.StringIO(), force_styling=True))


def make_model(**me: Any) -> GameModel:
    welcome = Welcome(
        v=2, id=1, name="ann", token="t", resumed=False, tick=5, tick_rate=10,
        terrain=TERRAIN, kinds=[["rat", "rat", "r", "red"], ["player", "player", "@", "white"]],
        items={"dart": ["dart", ")", "white", "thrown", {"range": 3}],
               "apple": ["apple", "%", "red", "food", {"nutrition": 40}]},
        classes=[], motd="", spells={"spark": ["spark", 1, "evocation", "dir"]},
        statuses=[["frozen", "frozen"], ["poisoned", "poisoned"]], damage_types=["fire"],
    )  # fmt: skip
    model = GameModel(welcome)
    known = bytes(1 if ch == "#" else 2 for row in ROWS for ch in row)
    base = {"name": "ann", "class": "mage", "level": 2, "hp": 9, "max_hp": 10, "en": 3,
            "max_en": 8, "depth": 1, "x": 2, "y": 2,
            "inv": [["a", "dart", 4, "", -1, 0], ["b", "apple", 1, "", -1, 0]]}  # fmt: skip
    model.apply(Snapshot(
        tick=5, depth=1, w=12, h=5, map=known, fov=[0, 0, 12, 5, b"\xff" * 8],
        actors=[[1, 1, "ann", 2, 2, 9, 10, 8 | 16, 0], [7, 0, "", 10, 2, 3, 3, 0, 1]],
        objs=[], me=base | me, ack=-1,
    ))  # fmt: skip
    return model


def plain(screen: Screen, model: GameModel, mode: keys.Mode, **state: Any) -> list[str]:
    rows = screen.rows(model, ViewState(mode=mode, **state), MessageLog(deque()))
    return [screen.term.strip_seqs(r) for r in rows]


def test_status_line_shows_food_statuses_and_a_reward(screen: Screen) -> None:
    model = make_model(food=[120, 30], sts=[[0, 3], [1, 9]], choice=1, options=["health"])
    status = screen.term.strip_seqs(screen.status_row(model, ViewState(keys.Mode()), 200))
    for part in (
        "ann",
        "mage L2",
        "HP 9/10",
        "EN 3/8",
        "Nourishment 120, hunger rating 30 Hungry",
        "Depth 1",
        "Tick 5",
        "frozen, poisoned",
        "C: reward",
    ):
        assert part in status, part
    assert "Full" in plain(screen, make_model(food=[500, 80]), keys.Mode())[0]
    assert "Starving" in plain(screen, make_model(food=[0, 0]), keys.Mode())[0]
    assert "Food" not in plain(screen, make_model(), keys.Mode())[0]


def test_pages_replace_the_map(screen: Screen) -> None:
    model = make_model(spells=[["a", "spark", 10, 5, False]])
    inv = plain(screen, model, keys.Mode(keys.InputMode.INVENTORY))
    assert inv[1] == "Inventory" and "  a - 4 darts" in inv and "  b - an apple" in inv
    menu = plain(screen, model, keys.Mode(keys.InputMode.ITEM_MENU, verb="eat"))
    assert menu[1] == "What do you want to eat?" and "  b - an apple" in menu
    assert not any("dart" in row for row in menu[:-1])
    assert "[a letter, or Escape]" in menu[-1]
    spells = plain(screen, model, keys.Mode(keys.InputMode.SPELL_MENU))
    assert spells[1] == "Spells" and spells[4].split()[:3] == ["a", "-", "spark"]
    looking = plain(screen, model, keys.Mode(keys.InputMode.INFO, looked=7))
    assert looking[1] == "Looking..."
    model.apply(Info(7, True, {"kind": "rat", "level": 1, "hp": 3, "max_hp": 3}))
    looked = plain(screen, model, keys.Mode(keys.InputMode.INFO, looked=7))
    assert looked[1] == "rat" and "Health 3/3" in looked[3]


def test_targeting_path_and_cursor(screen: Screen) -> None:
    model = make_model()
    mode = keys.Mode(keys.InputMode.TARGET, verb="throw", item="a", cursor=(10, 2))
    overlay = screen.aim_overlay(model, mode)
    # the pillar at (8, 2) stops the path in front of it; the dart's range is 3
    assert [c for c in overlay if overlay[c][0] == "*"] == [(3, 2), (4, 2), (5, 2), (6, 2), (7, 2)]
    assert [overlay[c][1] for c in ((5, 2), (6, 2))] == ["bright_yellow", "bright_black"]
    assert overlay[(10, 2)] == (None, "bright_white", True)  # the cursor, over the rat
    row = plain(screen, model, mode)[1 + 2]
    assert row[:12] == "#.@*****#.r#"
    assert "Throw where? (10, 2)" in plain(screen, model, mode)[-1]
    look = keys.Mode(keys.InputMode.TARGET, verb="look", cursor=(10, 2))
    assert screen.aim_overlay(model, look) == {(10, 2): (None, "bright_white", True)}


def test_animation_marks_are_drawn_over_the_map(screen: Screen) -> None:
    model = make_model()
    marks = {(3, 2): Mark("-", "bright_red"), (4, 2): Mark("-", "bright_red")}
    row = plain(screen, model, keys.Mode(), marks=marks)[1 + 2]
    assert row[:12] == "#.@--...#.r#"


def test_a_long_pack_flows_into_a_second_column(screen: Screen) -> None:
    inv = [[chr(ord("a") + i), "dart", 1, "", -1, 0] for i in range(20)]
    inv += [[chr(ord("A") + i), "apple", 1, "", -1, 0] for i in range(12)]
    rows = plain(screen, make_model(inv=inv), keys.Mode(keys.InputMode.INVENTORY))
    page = "\n".join(rows[1:-3])
    for letter in [*"abcdefghijklmnopqrst", *"ABCDEFGHIJKL"]:
        assert f"{letter} - " in page, letter  # 2 headings + 32 items in 3 columns of 14
    # column 1: the heading and a-m; column 2: n-t, "Food", A-F; column 3: G-L
    assert rows[4].startswith("  a - a dart") and "  o - a dart" in rows[4]
    assert rows[4].rstrip().endswith("  H - an apple")
    assert rows[3 + 13].startswith("  m - a dart") and rows[3 + 13].rstrip().endswith(
        "F - an apple"
    )


@pytest.mark.parametrize("width", [100, 80, 60, 50, 40])
def test_the_status_line_keeps_its_most_important_fields(screen: Screen, width: int) -> None:
    model = make_model(
        food=[120, 30], sts=[[0, 3], [1, 9]], choice=1, options=["health"], dead=True, respawn=55
    )
    model.tick = 12345
    status = screen.term.strip_seqs(screen.status_row(model, ViewState(keys.Mode()), width))
    assert len(status) <= width, status
    for part in ("HP 9", "DEAD", "ann"):
        assert part in status, (width, status)
    assert "Depth 1" in status or "D1" in status, status
    assert "Tick 12345" in status or "T12345" in status, status
    if width >= 80:  # a crowded line: dead, hungry, two statuses, a reward
        assert "Depth 1" in status and "Tick 12345" in status and "HP 9/10" in status, status
        assert "Hungry" in status, status


def test_long_log_lines_wrap(screen: Screen) -> None:
    model = make_model()
    log = MessageLog(deque())
    long = "The rat bites you. " * 10  # 190 characters
    log.add(long.strip())
    log.add("Short.")
    rows = [screen.term.strip_seqs(r) for r in screen.rows(model, ViewState(mode=keys.Mode()), log)]
    log_rows = [r.rstrip() for r in rows[-3:-1]]  # two log lines at 20 rows
    assert log_rows == [
        "  rat bites you. " + "The rat bites you. " * 3 + "The rat bites you.",
        "Short.",
    ], log_rows
    wrapped = screen.wrap_log([long.strip()], 100)
    assert len(wrapped) == 2 and all(len(r) <= 100 for r in wrapped)
    assert " ".join(r.strip() for r in wrapped) == long.strip()


def test_message_history_page_scrolls(screen: Screen) -> None:
    model = make_model()
    log = MessageLog(deque())
    for i in range(40):
        log.add(f"message {i}")
    rows = [
        screen.term.strip_seqs(r).rstrip()
        for r in screen.rows(model, ViewState(mode=keys.Mode(keys.InputMode.HISTORY)), log)
    ]
    page = screen.map_rows()  # title, gap, then page - 2 lines
    assert rows[1] == "Message history"
    assert rows[page] == "message 39" and rows[3] == f"message {40 - (page - 2)}"
    back = keys.Mode(keys.InputMode.HISTORY, scroll=5)
    rows = [
        screen.term.strip_seqs(r).rstrip() for r in screen.rows(model, ViewState(mode=back), log)
    ]
    assert rows[1] == "Message history (5 lines back)" and rows[page] == "message 34"


@pytest.mark.parametrize("verb", ["throw", "cast", "look", "travel"])
def test_the_aiming_prompt_fits_80_columns(verb: str) -> None:
    prompt = keys.prompt_text(keys.Mode(keys.InputMode.TARGET, verb=verb, cursor=(199, 199)))
    assert len(prompt) <= 80, (len(prompt), prompt)
    assert "Tab" in prompt and "Enter" in prompt and "Esc" in prompt


def test_looking_at_yourself_shows_no_courage_or_chances_against_yourself(
    screen: Screen,
) -> None:
    model = make_model()
    about = {"name": "ann", "kind": "player", "level": 2, "hp": 9, "max_hp": 10, "en": 3,
             "max_en": 8, "power": 4, "defence": 2, "courage": 0.0, "you_miss": 0.5,
             "you_crit": 0.1, "it_miss": 0.5, "it_crit": 0.1}  # fmt: skip
    model.apply(Info(1, True, about))
    model.apply(Info(7, True, about | {"name": "", "kind": "rat"}))
    mine = "\n".join(plain(screen, model, keys.Mode(keys.InputMode.INFO, looked=1)))
    assert "Health 9/10" in mine and "Power 4" in mine
    for part in ("Courage", "You miss", "misses you"):
        assert part not in mine, part
    rat = "\n".join(plain(screen, model, keys.Mode(keys.InputMode.INFO, looked=7)))
    assert "Courage 0%" in rat and "You miss it 50%" in rat


def test_long_chat_input_shows_its_end(screen: Screen) -> None:
    text = "x" * 150 + " the end"
    row = plain(screen, make_model(), keys.Mode(keys.InputMode.CHAT, text=text))[-1]
    assert row.startswith("Say: …") and row.endswith("the end_") and len(row) == 100
