"""Key tables for the terminal client: which key means what, and the help screen.

Classic roguelike keys: ``i`` inventory; ``e`` / ``[`` equipment; ``d`` drop,
``w`` wield, ``W`` wear, ``T`` take off, ``E`` eat, ``q`` quaff, ``r`` read
(each opens an item menu);
``t`` throw (item menu, then the targeting cursor); ``z`` zap (item menu, then
a direction); ``+`` upgrade a spell (standing on an altar);
``Z`` cast (spell menu, then a direction or the cursor, as the
spell aims); ``;`` / ``x`` look (the cursor, then the monster's details);
``C`` choose a level-up reward; ``Q`` quit; Shift + a direction (or ``G``
then a direction) runs, ``_`` travels to a cell chosen with the cursor, ``A``
explores; ``Ctrl-P`` shows the message history.

Key names are blessed's (``Keystroke.name``): ``KEY_UP`` ... for arrows,
``KEY_HOME`` / ``KEY_PGUP`` / ``KEY_END`` / ``KEY_PGDOWN`` for the numpad
diagonals 7 / 9 / 1 / 3 with num lock off, ``KEY_CENTER`` / ``KEY_BEGIN`` for
numpad 5, ``KEY_KP_0`` ... ``KEY_KP_9`` with the keypad in application mode.

Pure data and small predicates on a :class:`Key`; what a key does in each
input mode is :func:`client.keys.translate`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CHAT_MAX",
    "CTRL_P",
    "DIRECTIONS_BY_CHAR",
    "DIRECTIONS_BY_NAME",
    "FAR",
    "FAR_BY_CHAR",
    "HELP_LINES",
    "ITEM_VERBS",
    "LOOK_CHARS",
    "RUN_BY_CHAR",
    "RUN_BY_NAME",
    "SIMPLE_COMMANDS",
    "Cell",
    "Direction",
    "Key",
    "direction",
    "is_enter",
    "is_escape",
    "is_wait",
]

CHAT_MAX = 200
"""Longest chat text the protocol accepts, in characters."""

Direction = tuple[int, int]
"""A step ``(dx, dy)``, each of -1, 0, 1."""
Cell = tuple[int, int]
"""A map cell ``(x, y)``."""

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
LOOK_CHARS = frozenset({";", "x"})
"""Keys that start looking (the targeting cursor, then the monster's details)."""
SIMPLE_COMMANDS: dict[str, str] = {
    "R": "rest",
    "g": "pickup",
    ",": "pickup",
    ">": "down",
    "<": "up",
}
"""Keys that send a command with no further question."""
FAR_BY_CHAR: dict[str, Direction] = {
    ch.upper(): d for ch, d in DIRECTIONS_BY_CHAR.items() if ch.isalpha()
}
"""Shifted vi-keys move the targeting cursor :data:`FAR` cells at once."""
FAR = 8

RUN_BY_CHAR: dict[str, Direction] = dict(FAR_BY_CHAR)
"""Shifted vi-keys run in normal mode (:mod:`client.travel`)."""
RUN_BY_NAME: dict[str, Direction] = {
    "KEY_SLEFT": (-1, 0),
    "KEY_SRIGHT": (1, 0),
    "KEY_SR": (0, -1),  # shift + up
    "KEY_SF": (0, 1),  # shift + down
    "KEY_SHOME": (-1, -1),
    "KEY_SPREVIOUS": (1, -1),
    "KEY_SEND": (-1, 1),
    "KEY_SNEXT": (1, 1),
}
"""Shifted arrow and keypad keys run too."""

CTRL_P = "\x10"
"""Ctrl-P: the message history."""

ITEM_VERBS: dict[str, tuple[str, str, str]] = {
    "d": ("drop", "What do you want to drop?", "You have nothing to drop."),
    "w": ("wield", "What do you want to wield?", "You have nothing to wield."),
    "W": ("wear", "What do you want to wear?", "You have nothing to wear."),
    "T": ("remove", "What do you want to take off?", "You are not wearing or wielding anything."),
    "E": ("eat", "What do you want to eat?", "You have nothing to eat."),
    "q": ("quaff", "What do you want to drink?", "You have nothing to drink."),
    "r": ("read", "What do you want to read?", "You have nothing to read."),
    "t": ("throw", "What do you want to throw?", "You have nothing to throw."),
    "z": ("zap", "What do you want to zap?", "You have nothing to zap."),
}
"""Key -> (command, menu question, line when nothing fits) for the item commands."""

HELP_LINES: tuple[str, ...] = (
    "Underhall keys",
    "",
    "  move / attack   arrows, numpad, or  h j k l  y u b n        y k u",
    "  wait  .  5      rest  R       pick up  g  ,                 h . l",
    "  stairs  >  <    open / close  o  c  then a direction        b j n",
    "  inventory  i    drop  d       wield  w    wear  W    take off  T",
    "  eat  E          quaff  q      read  r     equipment  e  [",
    "  throw  t  then aim            zap  z  then a direction",
    "  cast a spell  Z  then a direction or aim      look  ;  x  then aim",
    "  upgrade a spell at an altar  +     choose a level-up reward  C",
    "  run  Shift + direction (H J K L Y U B N), or G then a direction",
    "  travel  _  then aim (< > jump to stairs)    explore  A   (a key stops)",
    "  aiming: move the cursor (H J K L Y U B N: 8 cells), Tab: next monster,",
    "          Enter or .: fire, Escape: cancel",
    "  chat  Enter  '  \"  (Enter sends; /g text: everyone, /w name text: one player)",
    "        /s text: your spectators; /watchers off, /watchers on: refuse, allow them",
    "  messages  Ctrl-P   help  ?   quit  Q",
    "",
    "Escape cancels a prompt or menu.  Press any key to return.",
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


def direction(key: Key) -> Direction | None:
    """The step a movement key means (vi-keys, digits, arrows, keypad), else None."""
    if key.name is not None:
        return DIRECTIONS_BY_NAME.get(key.name)
    return DIRECTIONS_BY_CHAR.get(key.char)


def is_escape(key: Key) -> bool:
    """Escape (cancels a prompt, menu or the cursor)."""
    return key.name == "KEY_ESCAPE" or key.char == "\x1b"


def is_enter(key: Key) -> bool:
    """Enter or Return (opens or sends chat, fires the cursor)."""
    return key.name in ("KEY_ENTER", "KEY_KP_ENTER") or key.char in ("\r", "\n")


def is_wait(key: Key) -> bool:
    """A key that waits one turn (``.``, ``5``, numpad 5)."""
    if key.name is not None:
        return key.name in _WAIT_NAMES
    return key.char in _WAIT_CHARS
