"""Keyboard -> action mapping for the terminal client.

Pure: :func:`translate` takes the current input :class:`Mode` and one
:class:`Key` and returns the next mode plus at most one action. It never sends
anything or touches the screen; :mod:`client.ui` carries the actions out.

Key names are blessed's (``Keystroke.name``): ``KEY_UP`` ... for arrows,
``KEY_HOME`` / ``KEY_PGUP`` / ``KEY_END`` / ``KEY_PGDOWN`` for the numpad
diagonals 7 / 9 / 1 / 3 with num lock off, ``KEY_CENTER`` / ``KEY_BEGIN`` for
numpad 5, ``KEY_KP_0`` ... ``KEY_KP_9`` with the keypad in application mode.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

__all__ = [
    "CHAT_MAX",
    "DIRECTIONS_BY_CHAR",
    "DIRECTIONS_BY_NAME",
    "HELP_LINES",
    "Action",
    "ChatSend",
    "Command",
    "InputMode",
    "Key",
    "Mode",
    "Quit",
    "prompt_text",
    "translate",
]

CHAT_MAX = 200
"""Longest chat text the protocol accepts, in characters."""

Direction = tuple[int, int]

DIRECTIONS_BY_CHAR: dict[str, Direction] = {
    "h": (-1, 0),
    "j": (0, 1),
    "k": (0, -1),
    "l": (1, 0),
    "y": (-1, -1),
    "u": (1, -1),
    "b": (-1, 1),
    "n": (1, 1),
    "1": (-1, 1),
    "2": (0, 1),
    "3": (1, 1),
    "4": (-1, 0),
    "6": (1, 0),
    "7": (-1, -1),
    "8": (0, -1),
    "9": (1, -1),
}
"""Direction (dx, dy) for vi-keys and plain digit keys (num lock on)."""

DIRECTIONS_BY_NAME: dict[str, Direction] = {
    "KEY_UP": (0, -1),
    "KEY_DOWN": (0, 1),
    "KEY_LEFT": (-1, 0),
    "KEY_RIGHT": (1, 0),
    "KEY_HOME": (-1, -1),
    "KEY_PGUP": (1, -1),
    "KEY_END": (-1, 1),
    "KEY_PGDOWN": (1, 1),
    "KEY_KP_1": (-1, 1),
    "KEY_KP_2": (0, 1),
    "KEY_KP_3": (1, 1),
    "KEY_KP_4": (-1, 0),
    "KEY_KP_6": (1, 0),
    "KEY_KP_7": (-1, -1),
    "KEY_KP_8": (0, -1),
    "KEY_KP_9": (1, -1),
}
"""Direction (dx, dy) for arrow and keypad key names."""

_WAIT_CHARS = frozenset({".", "5"})
_WAIT_NAMES = frozenset({"KEY_CENTER", "KEY_BEGIN", "KEY_KP_5"})
_CHAT_CHARS = frozenset({"'", '"'})
_SIMPLE: dict[str, str] = {
    "R": "rest",
    "g": "pickup",
    ",": "pickup",
    ">": "down",
    "<": "up",
}

HELP_LINES: tuple[str, ...] = (
    "Underhall keys",
    "",
    "  move / attack    arrows, numpad, or  h j k l  y u b n",
    "                     y k u",
    "                     h . l",
    "                     b j n",
    "  wait             .  5  numpad 5",
    "  rest             R",
    "  pick up          g  ,",
    "  stairs           >  down      <  up",
    "  open / close     o  c  then a direction",
    "  chat             Enter  '  \"   (Enter sends, Escape cancels)",
    "  help             ?",
    "  quit             q  (asks to confirm)",
    "",
    "Escape cancels a prompt.  Press any key to return.",
)
"""The help screen, one entry per line."""


@dataclass(frozen=True, slots=True)
class Key:
    """One key press: the text it produced and blessed's name for it.

    ``char`` is the typed text (``"h"``, ``"\\r"``, ``"\\x1b[A"``); ``name`` is
    ``None`` for plain characters and ``"KEY_UP"`` etc. for special keys.
    """

    char: str
    name: str | None = None


class InputMode(Enum):
    """What the next key press means."""

    NORMAL = "normal"
    OPEN = "open"
    CLOSE = "close"
    QUIT = "quit"
    HELP = "help"
    CHAT = "chat"


@dataclass(frozen=True, slots=True)
class Mode:
    """Input state: the mode, and the chat text typed so far."""

    kind: InputMode = InputMode.NORMAL
    text: str = ""


@dataclass(frozen=True, slots=True)
class Command:
    """Send the game command ``c`` (with direction ``d``) to the server."""

    c: str
    d: Direction | None = None


@dataclass(frozen=True, slots=True)
class ChatSend:
    """Send ``text`` as a chat message."""

    text: str


@dataclass(frozen=True, slots=True)
class Quit:
    """Leave the game (already confirmed)."""


Action = Command | ChatSend | Quit

NORMAL = Mode()


def _direction(key: Key) -> Direction | None:
    if key.name is not None:
        return DIRECTIONS_BY_NAME.get(key.name)
    return DIRECTIONS_BY_CHAR.get(key.char)


def _is_escape(key: Key) -> bool:
    return key.name == "KEY_ESCAPE" or key.char == "\x1b"


def _is_enter(key: Key) -> bool:
    return key.name in ("KEY_ENTER", "KEY_KP_ENTER") or key.char in ("\r", "\n")


def _is_wait(key: Key) -> bool:
    if key.name is not None:
        return key.name in _WAIT_NAMES
    return key.char in _WAIT_CHARS


def _normal(key: Key) -> tuple[Mode, Action | None]:
    d = _direction(key)
    if d is not None:
        return NORMAL, Command("move", d)
    if _is_wait(key):
        return NORMAL, Command("wait")
    if _is_enter(key):
        return Mode(InputMode.CHAT), None
    if key.name is not None:
        return NORMAL, None
    if key.char in _SIMPLE:
        return NORMAL, Command(_SIMPLE[key.char])
    if key.char in _CHAT_CHARS:
        return Mode(InputMode.CHAT), None
    if key.char == "o":
        return Mode(InputMode.OPEN), None
    if key.char == "c":
        return Mode(InputMode.CLOSE), None
    if key.char == "?":
        return Mode(InputMode.HELP), None
    if key.char == "q":
        return Mode(InputMode.QUIT), None
    return NORMAL, None


def _chat(mode: Mode, key: Key) -> tuple[Mode, Action | None]:
    if _is_escape(key):
        return NORMAL, None
    if _is_enter(key):
        text = mode.text.strip()
        return NORMAL, (ChatSend(text) if text else None)
    if key.name in ("KEY_BACKSPACE", "KEY_DELETE") or key.char in ("\x7f", "\x08"):
        return replace(mode, text=mode.text[:-1]), None
    if key.name is not None:
        return mode, None
    printable = "".join(ch for ch in key.char if ch.isprintable())
    room = CHAT_MAX - len(mode.text)
    if printable and room > 0:
        return replace(mode, text=mode.text + printable[:room]), None
    return mode, None


def translate(mode: Mode, key: Key) -> tuple[Mode, Action | None]:
    """Interpret one key press in the current input mode.

    Args:
        mode: The input state before the key.
        key: The key pressed.

    Returns:
        ``(next_mode, action)``; ``action`` is ``None`` when the key only
        changed the mode or means nothing.
    """
    kind = mode.kind
    if kind is InputMode.NORMAL:
        return _normal(key)
    if kind is InputMode.CHAT:
        return _chat(mode, key)
    if kind is InputMode.HELP:
        return NORMAL, None
    if kind is InputMode.QUIT:
        if key.char in ("y", "Y"):
            return NORMAL, Quit()
        return NORMAL, None
    # OPEN / CLOSE wait for a direction; anything else cancels.
    d = _direction(key)
    if d is None:
        return NORMAL, None
    return NORMAL, Command("open" if kind is InputMode.OPEN else "close", d)


def prompt_text(mode: Mode) -> str:
    """The prompt line to show for a mode (``""`` in normal mode)."""
    kind = mode.kind
    if kind is InputMode.OPEN:
        return "Open in which direction? (Escape cancels)"
    if kind is InputMode.CLOSE:
        return "Close in which direction? (Escape cancels)"
    if kind is InputMode.QUIT:
        return "Really quit? (y/n)"
    if kind is InputMode.CHAT:
        return f"Say: {mode.text}_"
    return ""
