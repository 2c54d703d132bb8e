"""Key -> action mapping (client.keys): pure, so plain table tests."""

from __future__ import annotations

import pytest

from client.keys import (
    CHAT_MAX,
    HELP_LINES,
    ITEM_VERBS,
    ChatSend,
    Command,
    Context,
    InputMode,
    Key,
    LookAt,
    Mode,
    Quit,
    Say,
    SpellChoice,
    Target,
    prompt_text,
    translate,
)

NORMAL = Mode()


def press(mode: Mode, *keys: Key) -> tuple[Mode, list[object]]:
    actions: list[object] = []
    for key in keys:
        mode, action = translate(mode, key)
        if action is not None:
            actions.append(action)
    return mode, actions


def text(s: str) -> list[Key]:
    return [Key(ch) for ch in s]


@pytest.mark.parametrize(
    ("key", "d"),
    [
        (Key("\x1b[A", "KEY_UP"), (0, -1)),
        (Key("\x1b[B", "KEY_DOWN"), (0, 1)),
        (Key("\x1b[D", "KEY_LEFT"), (-1, 0)),
        (Key("\x1b[C", "KEY_RIGHT"), (1, 0)),
        (Key("\x1b[H", "KEY_HOME"), (-1, -1)),
        (Key("\x1b[5~", "KEY_PGUP"), (1, -1)),
        (Key("\x1b[F", "KEY_END"), (-1, 1)),
        (Key("\x1b[6~", "KEY_PGDOWN"), (1, 1)),
        (Key("\x1bOw", "KEY_KP_7"), (-1, -1)),
        (Key("\x1bOx", "KEY_KP_8"), (0, -1)),
        (Key("\x1bOy", "KEY_KP_9"), (1, -1)),
        (Key("\x1bOt", "KEY_KP_4"), (-1, 0)),
        (Key("\x1bOv", "KEY_KP_6"), (1, 0)),
        (Key("\x1bOq", "KEY_KP_1"), (-1, 1)),
        (Key("\x1bOr", "KEY_KP_2"), (0, 1)),
        (Key("\x1bOs", "KEY_KP_3"), (1, 1)),
        (Key("h"), (-1, 0)),
        (Key("j"), (0, 1)),
        (Key("k"), (0, -1)),
        (Key("l"), (1, 0)),
        (Key("y"), (-1, -1)),
        (Key("u"), (1, -1)),
        (Key("b"), (-1, 1)),
        (Key("n"), (1, 1)),
        (Key("8"), (0, -1)),
        (Key("3"), (1, 1)),
    ],
)
def test_movement_keys_send_move(key: Key, d: tuple[int, int]) -> None:
    assert translate(NORMAL, key) == (NORMAL, Command("move", d))


@pytest.mark.parametrize(
    "key",
    [
        Key("."),
        Key("5"),
        Key("\x1b[E", "KEY_CENTER"),
        Key("\x1bOE", "KEY_BEGIN"),
        Key("\x1bOu", "KEY_KP_5"),
    ],
)
def test_wait_keys(key: Key) -> None:
    assert translate(NORMAL, key) == (NORMAL, Command("wait"))


@pytest.mark.parametrize(
    ("char", "c"), [("R", "rest"), ("g", "pickup"), (",", "pickup"), (">", "down"), ("<", "up")]
)
def test_simple_commands(char: str, c: str) -> None:
    assert translate(NORMAL, Key(char)) == (NORMAL, Command(c))


@pytest.mark.parametrize(("char", "c"), [("o", "open"), ("c", "close")])
def test_open_and_close_take_a_direction(char: str, c: str) -> None:
    mode, action = translate(NORMAL, Key(char))
    assert action is None
    assert mode.kind is (InputMode.OPEN if c == "open" else InputMode.CLOSE)
    assert "direction" in prompt_text(mode)
    assert translate(mode, Key("\x1b[A", "KEY_UP")) == (NORMAL, Command(c, (0, -1)))
    assert translate(mode, Key("n")) == (NORMAL, Command(c, (1, 1)))


def test_escape_or_other_key_cancels_direction_prompt() -> None:
    mode, _ = translate(NORMAL, Key("o"))
    assert translate(mode, Key("\x1b", "KEY_ESCAPE")) == (NORMAL, None)
    assert translate(mode, Key("x")) == (NORMAL, None)
    assert translate(mode, Key(".")) == (NORMAL, None)


def test_quit_asks_for_confirmation() -> None:
    mode, action = translate(NORMAL, Key("Q"))
    assert action is None and mode.kind is InputMode.QUIT
    assert prompt_text(mode) == "Really quit? (y/n)"
    assert translate(mode, Key("y")) == (NORMAL, Quit())
    assert translate(mode, Key("Y")) == (NORMAL, Quit())
    assert translate(mode, Key("n")) == (NORMAL, None)
    assert translate(mode, Key("\x1b", "KEY_ESCAPE")) == (NORMAL, None)


def test_help_is_dismissed_by_any_key() -> None:
    mode, action = translate(NORMAL, Key("?"))
    assert action is None and mode.kind is InputMode.HELP
    # a movement key while help is up only closes help
    assert translate(mode, Key("h")) == (NORMAL, None)


@pytest.mark.parametrize("opener", [Key("\r", "KEY_ENTER"), Key("'"), Key('"')])
def test_chat_prompt(opener: Key) -> None:
    mode, actions = press(NORMAL, opener, *text("hi theer"))
    assert actions == [] and mode.kind is InputMode.CHAT
    mode, _ = press(mode, Key("\x7f", "KEY_BACKSPACE"), Key("\x7f", "KEY_BACKSPACE"))
    mode, _ = press(mode, *text("re"))
    assert prompt_text(mode) == "Say: hi there_"
    # special keys are ignored while typing, vi keys are text
    mode, actions = press(mode, Key("\x1b[A", "KEY_UP"), Key("\r", "KEY_ENTER"))
    assert mode == NORMAL and actions == [ChatSend("hi there")]


def test_chat_escape_cancels_and_blank_sends_nothing() -> None:
    mode, actions = press(NORMAL, Key("'"), *text("oops"), Key("\x1b", "KEY_ESCAPE"))
    assert mode == NORMAL and actions == []
    mode, actions = press(NORMAL, Key("'"), *text("   "), Key("\n", "KEY_ENTER"))
    assert mode == NORMAL and actions == []


def test_chat_text_is_capped_and_printable() -> None:
    mode, _ = press(NORMAL, Key("'"), Key("a" * (CHAT_MAX + 50)), Key("\x07"))
    assert mode.text == "a" * CHAT_MAX
    mode, _ = press(NORMAL, Key("'"), Key("\x01b\x02"))
    assert mode.text == "b"


@pytest.mark.parametrize(
    "key", [Key("X"), Key("\x1b", "KEY_ESCAPE"), Key("\x1bOP", "KEY_F1"), Key("!")]
)
def test_unbound_keys_do_nothing(key: Key) -> None:
    assert translate(NORMAL, key) == (NORMAL, None)
    assert prompt_text(NORMAL) == ""


# --- version 2: item menus, aiming, spells, look, rewards ----------------------------

ESC = Key("\x1b", "KEY_ESCAPE")
ENTER = Key("\r", "KEY_ENTER")
TAB = Key("\t", "KEY_TAB")
CTX = Context(
    position=(5, 5),
    size=(20, 10),
    letters=frozenset("abcde"),
    menus={"drop": ("a", "b", "c", "d", "e"), "wield": ("a",), "wear": ("b",), "remove": (),
           "eat": ("c",), "quaff": ("d",), "read": ("e",), "throw": ("a", "c", "d", "e"),
           "zap": ()},
    spells=(SpellChoice("a", "spark", "dir"), SpellChoice("b", "fireball", "cell"),
            SpellChoice("c", "heal", "self")),
    targets=(Target(30, 7, 5), Target(31, 2, 8)),
    actors_at={(5, 5): 1, (7, 5): 30, (2, 8): 31},
    options=("health", "resist_fire"),
)  # fmt: skip


@pytest.mark.parametrize(
    ("char", "verb", "letter"),
    [("d", "drop", "b"), ("w", "wield", "a"), ("W", "wear", "b"), ("E", "eat", "c"),
     ("q", "quaff", "d"), ("r", "read", "e")],
)  # fmt: skip
def test_item_commands_open_a_menu_then_send_the_letter(char: str, verb: str, letter: str) -> None:
    mode, action = translate(NORMAL, Key(char), CTX)
    assert action is None and mode.kind is InputMode.ITEM_MENU and mode.verb == verb
    assert "?" in prompt_text(mode) and "Escape" in prompt_text(mode)
    assert translate(mode, Key(letter), CTX) == (NORMAL, Command(verb, item=letter))


def test_item_menu_keeps_waiting_on_other_keys_and_escape_cancels() -> None:
    mode, _ = translate(NORMAL, Key("W"), CTX)
    assert translate(mode, Key("z"), CTX) == (mode, None)  # not in the pack
    assert translate(mode, Key("\x1b[A", "KEY_UP"), CTX) == (mode, None)
    # a held item that does not look as if it fits is still sent: the server judges
    assert translate(mode, Key("a"), CTX) == (NORMAL, Command("wear", item="a"))
    assert translate(mode, ESC, CTX) == (NORMAL, None)


def test_nothing_to_choose_says_so() -> None:
    assert translate(NORMAL, Key("T"), CTX) == (
        NORMAL,
        Say("You are not wearing or wielding anything."),
    )
    assert translate(NORMAL, Key("z"), CTX) == (NORMAL, Say("You have nothing to zap."))
    assert translate(NORMAL, Key("Z")) == (NORMAL, Say("You do not know any spells you can cast."))
    assert translate(NORMAL, Key("C")) == (NORMAL, Say("You have no reward to choose."))


def test_throw_aims_at_the_nearest_monster_and_tab_cycles() -> None:
    mode, _ = translate(NORMAL, Key("t"), CTX)
    mode, action = translate(mode, Key("a"), CTX)
    assert action is None and mode.kind is InputMode.TARGET
    assert (mode.verb, mode.item, mode.cursor) == ("throw", "a", (7, 5))
    assert "Throw where? (7, 5)" in prompt_text(mode)
    mode, _ = translate(mode, TAB, CTX)
    assert mode.cursor == (2, 8)
    mode, _ = translate(mode, TAB, CTX)
    assert mode.cursor == (7, 5)  # wraps round
    mode, _ = translate(mode, Key("\x1b[Z", "KEY_BTAB"), CTX)
    assert mode.cursor == (2, 8)
    mode, _ = translate(mode, Key("l"), CTX)
    mode, _ = translate(mode, Key("u"), CTX)
    assert mode.cursor == (4, 7)
    assert translate(mode, ENTER, CTX) == (NORMAL, Command("throw", item="a", at=(4, 7)))
    assert translate(mode, Key("."), CTX) == (NORMAL, Command("throw", item="a", at=(4, 7)))
    assert translate(mode, ESC, CTX) == (NORMAL, None)


def test_cursor_stays_on_the_level_and_moves_far_with_shift() -> None:
    mode = Mode(InputMode.TARGET, verb="throw", item="a", cursor=(5, 5))
    mode, _ = translate(mode, Key("L"), CTX)
    assert mode.cursor == (13, 5)
    mode, _ = translate(mode, Key("L"), CTX)
    assert mode.cursor == (19, 5)  # the level is 20 wide
    mode, _ = translate(mode, Key("K"), CTX)
    assert mode.cursor == (19, 0)
    for _ in range(30):
        mode, _ = translate(mode, Key("b"), CTX)
    assert mode.cursor == (0, 9)
    assert translate(mode, Key("?"), CTX) == (mode, None)  # other keys do nothing


def test_aiming_without_monsters_starts_on_oneself() -> None:
    ctx = Context(position=(3, 4), size=(9, 9), letters=frozenset("a"), menus={"throw": ("a",)})
    mode, _ = translate(NORMAL, Key("t"), ctx)
    mode, _ = translate(mode, Key("a"), ctx)
    assert mode.cursor == (3, 4)
    assert translate(mode, TAB, ctx) == (mode, None)


def test_zap_asks_for_a_direction() -> None:
    ctx = Context(position=(1, 1), size=(5, 5), letters=frozenset("f"), menus={"zap": ("f",)})
    mode, _ = translate(NORMAL, Key("z"), ctx)
    mode, action = translate(mode, Key("f"), ctx)
    assert action is None and prompt_text(mode) == "In what direction? (Escape cancels)"
    assert translate(mode, Key("j"), ctx) == (NORMAL, Command("zap", (0, 1), item="f"))
    assert translate(mode, Key("\x1b[A", "KEY_UP"), ctx) == (
        NORMAL,
        Command("zap", (0, -1), item="f"),
    )
    assert translate(mode, ESC, ctx) == (NORMAL, None)


def test_spells_by_their_aim() -> None:
    mode, action = translate(NORMAL, Key("Z"), CTX)
    assert action is None and mode.kind is InputMode.SPELL_MENU
    assert translate(mode, Key("z"), CTX) == (mode, None)
    direction, _ = translate(mode, Key("a"), CTX)
    assert direction.kind is InputMode.DIRECTION
    assert translate(direction, Key("y"), CTX) == (NORMAL, Command("cast", (-1, -1), spell="spark"))
    cell, _ = translate(mode, Key("b"), CTX)
    assert cell.kind is InputMode.TARGET and cell.cursor == (7, 5)
    assert "Cast where?" in prompt_text(cell)
    assert translate(cell, ENTER, CTX) == (NORMAL, Command("cast", spell="fireball", at=(7, 5)))
    assert translate(mode, Key("c"), CTX) == (NORMAL, Command("cast", spell="heal"))
    assert translate(mode, ESC, CTX) == (NORMAL, None)


@pytest.mark.parametrize("char", [";", "x"])
def test_look_sends_look_for_the_actor_under_the_cursor(char: str) -> None:
    mode, _ = translate(NORMAL, Key(char), CTX)
    assert mode.kind is InputMode.TARGET and mode.verb == "look" and mode.cursor == (7, 5)
    info, action = translate(mode, ENTER, CTX)
    assert action == LookAt(7, 5, 30)
    assert info.kind is InputMode.INFO and info.looked == 30
    assert translate(info, Key("h"), CTX) == (NORMAL, None)  # any key closes the panel
    empty, _ = translate(mode, Key("j"), CTX)
    assert translate(empty, ENTER, CTX) == (NORMAL, LookAt(7, 6, None))


def test_choose_a_reward() -> None:
    mode, action = translate(NORMAL, Key("C"), CTX)
    assert action is None and mode.kind is InputMode.CHOOSE
    assert translate(mode, Key("c"), CTX) == (mode, None)
    assert translate(mode, Key("b"), CTX) == (NORMAL, Command("choose", opt="resist_fire"))
    assert translate(mode, ESC, CTX) == (NORMAL, None)


def test_inventory_screen_closes_on_any_key() -> None:
    mode, action = translate(NORMAL, Key("i"), CTX)
    assert action is None and mode.kind is InputMode.INVENTORY
    assert translate(mode, Key("d"), CTX) == (NORMAL, None)


@pytest.mark.parametrize("char", ["e", "["])
def test_equipment_screen_opens_and_closes_on_any_key(char: str) -> None:
    mode, action = translate(NORMAL, Key(char), CTX)
    assert action is None and mode.kind is InputMode.EQUIPMENT
    assert prompt_text(mode) == "Press any key to continue."
    assert translate(mode, ESC, CTX) == (NORMAL, None)
    assert translate(mode, Key("w"), CTX) == (NORMAL, None)  # closes; wields nothing


def test_help_lists_every_key() -> None:
    text = "\n".join(HELP_LINES)
    for word in (
        "inventory",
        "equipment",
        "drop",
        "wield",
        "wear",
        "take off",
        "eat",
        "quaff",
        "read",
        "throw",
        "zap",
        "cast",
        "look",
        "choose",
        "Tab",
        "Q",
    ):
        assert word in text, word
    tokens = set(text.split())
    for char in [*ITEM_VERBS, "i", "e", "[", "Z", ";", "x", "C", "o", "c", "R", "g", ">", "<", "?"]:
        assert char in tokens, char
