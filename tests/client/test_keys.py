"""Key -> action mapping (client.keys): pure, so plain table tests."""

from __future__ import annotations

import pytest

from client.keys import (
    CHAT_MAX,
    ChatSend,
    Command,
    InputMode,
    Key,
    Mode,
    Quit,
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
    mode, action = translate(NORMAL, Key("q"))
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
    "key", [Key("x"), Key("\x1b", "KEY_ESCAPE"), Key("\x1bOP", "KEY_F1"), Key("Q")]
)
def test_unbound_keys_do_nothing(key: Key) -> None:
    assert translate(NORMAL, key) == (NORMAL, None)
    assert prompt_text(NORMAL) == ""
