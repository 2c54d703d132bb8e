"""Keyboard -> action mapping for the terminal client.

Pure: :func:`translate` takes the current input :class:`Mode`, one
:class:`Key` and a :class:`Context` (what the menus and the targeting cursor
may offer, built from the model by :func:`client.menus.context`) and returns
the next mode plus at most one action. It never sends anything or touches the
screen; :mod:`client.ui` carries the actions out.

Classic roguelike keys: ``i`` inventory; ``e`` / ``[`` equipment; ``d`` drop,
``w`` wield, ``W`` wear, ``T`` take off, ``E`` eat, ``q`` quaff, ``r`` read
(each opens an item menu);
``t`` throw (item menu, then the targeting cursor); ``z`` zap (item menu, then
a direction); ``U`` upgrade a spell (standing on an altar);
``Z`` cast (spell menu, then a direction or the cursor, as the
spell aims); ``;`` / ``x`` look (the cursor, then the monster's details);
``C`` choose a level-up reward; ``Q`` quit.

Key names are blessed's (``Keystroke.name``): ``KEY_UP`` ... for arrows,
``KEY_HOME`` / ``KEY_PGUP`` / ``KEY_END`` / ``KEY_PGDOWN`` for the numpad
diagonals 7 / 9 / 1 / 3 with num lock off, ``KEY_CENTER`` / ``KEY_BEGIN`` for
numpad 5, ``KEY_KP_0`` ... ``KEY_KP_9`` with the keypad in application mode.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import Enum

__all__ = [
    "CHAT_MAX",
    "DIRECTIONS_BY_CHAR",
    "DIRECTIONS_BY_NAME",
    "HELP_LINES",
    "ITEM_VERBS",
    "Action",
    "ChatSend",
    "Command",
    "Context",
    "InputMode",
    "Key",
    "LookAt",
    "Mode",
    "Quit",
    "Say",
    "SpellChoice",
    "Target",
    "prompt_text",
    "translate",
]

CHAT_MAX = 200
"""Longest chat text the protocol accepts, in characters."""

Direction = tuple[int, int]
Cell = tuple[int, int]

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
_LOOK_CHARS = frozenset({";", "x"})
_SIMPLE: dict[str, str] = {
    "R": "rest",
    "g": "pickup",
    ",": "pickup",
    ">": "down",
    "<": "up",
}
_FAR_BY_CHAR: dict[str, Direction] = {
    ch.upper(): d for ch, d in DIRECTIONS_BY_CHAR.items() if ch.isalpha()
}
"""Shifted vi-keys move the targeting cursor :data:`FAR` cells at once."""
FAR = 8

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

_QUESTIONS = {verb: question for verb, question, _ in ITEM_VERBS.values()}

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
    "  upgrade a spell at an altar  U",
    "  choose a level-up reward  C",
    "  aiming: move the cursor (H J K L Y U B N: 8 cells), Tab: next monster,",
    "          Enter or .: fire, Escape: cancel",
    "  chat  Enter  '  \"  (Enter sends)       help  ?       quit  Q",
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


class InputMode(Enum):
    """What the next key press means."""

    NORMAL = "normal"
    OPEN = "open"
    CLOSE = "close"
    QUIT = "quit"
    HELP = "help"
    CHAT = "chat"
    INVENTORY = "inventory"  # the inventory screen; any key closes it
    EQUIPMENT = "equipment"  # the equipment screen; any key closes it
    ITEM_MENU = "item_menu"  # pick a pack letter for ``Mode.verb``
    SPELL_MENU = "spell_menu"  # pick a spell to cast
    DIRECTION = "direction"  # "In what direction?" for zap / cast
    TARGET = "target"  # the targeting cursor for throw / cast / look
    INFO = "info"  # the look panel of ``Mode.looked``; any key closes it
    CHOOSE = "choose"  # pick a level-up reward


@dataclass(frozen=True, slots=True)
class Mode:
    """Input state.

    Attributes:
        kind: what the next key means.
        text: the chat text typed so far.
        verb: the command being built (``"throw"``, ``"cast"``, ``"look"``, ...).
        item: the pack letter chosen for it.
        spell: the spell key chosen for it.
        cursor: the targeting cursor ``(x, y)``.
        target: index into :attr:`Context.targets` of the monster Tab last picked.
        looked: actor id whose ``info`` the look panel shows.
    """

    kind: InputMode = InputMode.NORMAL
    text: str = ""
    verb: str = ""
    item: str = ""
    spell: str = ""
    cursor: Cell | None = None
    target: int = -1
    looked: int | None = None


@dataclass(frozen=True, slots=True)
class Target:
    """A monster the targeting cursor can jump to."""

    id: int
    x: int
    y: int


@dataclass(frozen=True, slots=True)
class SpellChoice:
    """A castable spell: its menu letter, key and aim (``dir``, ``cell``, ``self``)."""

    letter: str
    key: str
    aim: str


@dataclass(frozen=True, slots=True)
class Context:
    """What the model offers the menus and the cursor at the moment of a key press.

    Attributes:
        position: own cell ``(x, y)``, None if unknown.
        size: level ``(width, height)``; the cursor stays inside it.
        letters: every pack letter held.
        menus: command -> the pack letters its menu lists (fitting items).
        spells: the spells that can be cast, in menu order.
        targets: monsters in view, nearest first (Tab order).
        actors_at: actor id by cell, for actors in view (look).
        options: level-up rewards on offer (``me.options`` while ``me.choice`` > 0).
    """

    position: Cell | None = None
    size: tuple[int, int] = (0, 0)
    letters: frozenset[str] = frozenset()
    menus: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    spells: tuple[SpellChoice, ...] = ()
    targets: tuple[Target, ...] = ()
    actors_at: Mapping[Cell, int] = field(default_factory=dict)
    options: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Command:
    """Send the game command ``c`` with the keys it takes (docs/protocol.md)."""

    c: str
    d: Direction | None = None
    item: str | None = None
    at: Cell | None = None
    spell: str | None = None
    opt: str | None = None


@dataclass(frozen=True, slots=True)
class ChatSend:
    """Send ``text`` as a chat message."""

    text: str


@dataclass(frozen=True, slots=True)
class LookAt:
    """Look at cell ``(x, y)``: ask the server about actor ``id`` (None: nobody there)."""

    x: int
    y: int
    id: int | None


@dataclass(frozen=True, slots=True)
class Say:
    """Write ``text`` to the message log (no message to the server)."""

    text: str


@dataclass(frozen=True, slots=True)
class Quit:
    """Leave the game (already confirmed)."""


Action = Command | ChatSend | LookAt | Say | Quit

NORMAL = Mode()
EMPTY = Context()


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


def _aim_start(ctx: Context) -> Mode:
    """The cursor's first place: the nearest monster, else one's own cell."""
    if ctx.targets:
        first = ctx.targets[0]
        return Mode(InputMode.TARGET, cursor=(first.x, first.y), target=0)
    return Mode(InputMode.TARGET, cursor=ctx.position or (0, 0))


def _normal(key: Key, ctx: Context) -> tuple[Mode, Action | None]:
    d = _direction(key)
    if d is not None:
        return NORMAL, Command("move", d)
    if _is_wait(key):
        return NORMAL, Command("wait")
    if _is_enter(key):
        return Mode(InputMode.CHAT), None
    if key.name is not None:
        return NORMAL, None
    ch = key.char
    if ch in _SIMPLE:
        return NORMAL, Command(_SIMPLE[ch])
    if ch in ITEM_VERBS:
        verb, _, nothing = ITEM_VERBS[ch]
        if not ctx.menus.get(verb):
            return NORMAL, Say(nothing)
        return Mode(InputMode.ITEM_MENU, verb=verb), None
    if ch in _LOOK_CHARS:
        return replace(_aim_start(ctx), verb="look"), None
    simple_modes = {
        "'": InputMode.CHAT, '"': InputMode.CHAT, "o": InputMode.OPEN, "c": InputMode.CLOSE,
        "?": InputMode.HELP, "Q": InputMode.QUIT, "i": InputMode.INVENTORY,
        "e": InputMode.EQUIPMENT, "[": InputMode.EQUIPMENT,
    }  # fmt: skip
    if ch in simple_modes:
        return Mode(simple_modes[ch]), None
    if ch == "Z":
        if not ctx.spells:
            return NORMAL, Say("You do not know any spells you can cast.")
        return Mode(InputMode.SPELL_MENU), None
    if ch == "U":
        if not ctx.spells:
            return NORMAL, Say("You do not know any spells you can cast.")
        return Mode(InputMode.SPELL_MENU, verb="upgrade"), None
    if ch == "C":
        if not ctx.options:
            return NORMAL, Say("You have no reward to choose.")
        return Mode(InputMode.CHOOSE), None
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


def _item_menu(mode: Mode, key: Key, ctx: Context) -> tuple[Mode, Action | None]:
    """A pack letter picks the item (any held letter: the server judges fit)."""
    if _is_escape(key):
        return NORMAL, None
    letter = key.char if key.name is None else ""
    if letter not in ctx.letters:
        return mode, None
    if mode.verb == "throw":
        return replace(_aim_start(ctx), verb="throw", item=letter), None
    if mode.verb == "zap":
        return Mode(InputMode.DIRECTION, verb="zap", item=letter), None
    return NORMAL, Command(mode.verb, item=letter)


def _spell_menu(mode: Mode, key: Key, ctx: Context) -> tuple[Mode, Action | None]:
    if _is_escape(key):
        return NORMAL, None
    chosen = next((s for s in ctx.spells if key.name is None and s.letter == key.char), None)
    if chosen is None:
        return mode, None
    if mode.verb == "upgrade":
        return NORMAL, Command("upgrade", spell=chosen.key)
    if chosen.aim == "self":
        return NORMAL, Command("cast", spell=chosen.key)
    if chosen.aim == "cell":
        return replace(_aim_start(ctx), verb="cast", spell=chosen.key), None
    return Mode(InputMode.DIRECTION, verb="cast", spell=chosen.key), None


def _ask_direction(mode: Mode, key: Key) -> tuple[Mode, Action | None]:
    d = _direction(key)
    if d is None:
        return NORMAL, None  # Escape, or anything else, cancels
    return NORMAL, Command(mode.verb, d=d, item=mode.item or None, spell=mode.spell or None)


def _clamp(cell: Cell, ctx: Context) -> Cell:
    w, h = ctx.size
    return (min(max(cell[0], 0), max(w - 1, 0)), min(max(cell[1], 0), max(h - 1, 0)))


def _fire(mode: Mode, ctx: Context) -> tuple[Mode, Action | None]:
    cursor = mode.cursor or ctx.position or (0, 0)
    if mode.verb == "look":
        ident = ctx.actors_at.get(cursor)
        if ident is None:
            return NORMAL, LookAt(cursor[0], cursor[1], None)
        return Mode(InputMode.INFO, looked=ident), LookAt(cursor[0], cursor[1], ident)
    if mode.verb == "throw":
        return NORMAL, Command("throw", item=mode.item, at=cursor)
    return NORMAL, Command("cast", spell=mode.spell, at=cursor)


def _aim(mode: Mode, key: Key, ctx: Context) -> tuple[Mode, Action | None]:
    """The targeting cursor: move, Tab through monsters, Enter fires, Escape cancels."""
    if _is_escape(key):
        return NORMAL, None
    if _is_enter(key) or (key.name is None and key.char in (".", ",")):
        return _fire(mode, ctx)
    cursor = mode.cursor or ctx.position or (0, 0)
    tab = key.name == "KEY_TAB" or key.char == "\t"
    if (tab or key.name == "KEY_BTAB") and ctx.targets:
        step = 1 if tab else -1
        index = (mode.target + step) % len(ctx.targets)
        t = ctx.targets[index]
        return replace(mode, cursor=(t.x, t.y), target=index), None
    d = _direction(key)
    far = 1
    if d is None and key.name is None and key.char in _FAR_BY_CHAR:
        d, far = _FAR_BY_CHAR[key.char], FAR
    if d is not None:
        moved = (cursor[0] + d[0] * far, cursor[1] + d[1] * far)
        return replace(mode, cursor=_clamp(moved, ctx)), None
    return mode, None


def _choose(mode: Mode, key: Key, ctx: Context) -> tuple[Mode, Action | None]:
    if _is_escape(key):
        return NORMAL, None
    if key.name is None and len(key.char) == 1 and "a" <= key.char <= "z":
        index = ord(key.char) - ord("a")
        if index < len(ctx.options):
            return NORMAL, Command("choose", opt=ctx.options[index])
    return mode, None


def translate(mode: Mode, key: Key, ctx: Context = EMPTY) -> tuple[Mode, Action | None]:
    """Interpret one key press in the current input mode.

    Args:
        mode: The input state before the key.
        key: The key pressed.
        ctx: What the menus and the cursor may offer now (from the model).

    Returns:
        ``(next_mode, action)``; ``action`` is ``None`` when the key only
        changed the mode or means nothing.
    """
    kind = mode.kind
    if kind is InputMode.NORMAL:
        return _normal(key, ctx)
    if kind is InputMode.CHAT:
        return _chat(mode, key)
    if kind in (InputMode.HELP, InputMode.INVENTORY, InputMode.EQUIPMENT, InputMode.INFO):
        return NORMAL, None
    if kind is InputMode.QUIT:
        if key.char in ("y", "Y"):
            return NORMAL, Quit()
        return NORMAL, None
    if kind is InputMode.ITEM_MENU:
        return _item_menu(mode, key, ctx)
    if kind is InputMode.SPELL_MENU:
        return _spell_menu(mode, key, ctx)
    if kind is InputMode.DIRECTION:
        return _ask_direction(mode, key)
    if kind is InputMode.TARGET:
        return _aim(mode, key, ctx)
    if kind is InputMode.CHOOSE:
        return _choose(mode, key, ctx)
    # OPEN / CLOSE wait for a direction; anything else cancels.
    d = _direction(key)
    if d is None:
        return NORMAL, None
    return NORMAL, Command("open" if kind is InputMode.OPEN else "close", d)


_AIM_VERBS = {"throw": "Throw", "cast": "Cast", "look": "Look"}


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
    if kind is InputMode.ITEM_MENU:
        return f"{_QUESTIONS.get(mode.verb, 'Which item?')} [a letter, or Escape]"
    if kind is InputMode.SPELL_MENU:
        if mode.verb == "upgrade":
            return "Upgrade which spell (on an altar)? [a letter, or Escape]"
        return "Cast which spell? [a letter, or Escape]"
    if kind is InputMode.DIRECTION:
        return "In what direction? (Escape cancels)"
    if kind is InputMode.TARGET:
        where = f"({mode.cursor[0]}, {mode.cursor[1]})" if mode.cursor else ""
        act = _AIM_VERBS.get(mode.verb, "Fire")
        return (f"{act} where? {where}  move the cursor, Tab: next monster, "
                f"Enter: {act.lower()}, Escape: cancel")
    if kind is InputMode.CHOOSE:
        return "Choose your reward [a letter, or Escape]"
    if kind in (InputMode.INVENTORY, InputMode.EQUIPMENT, InputMode.INFO):
        return "Press any key to continue."
    return ""
