"""Keyboard -> action mapping for the terminal client: the input state machine.

Pure: :func:`translate` takes the current input :class:`Mode`, one
:class:`Key` and a :class:`Context` (what the menus and the targeting cursor
may offer, built from the model by :func:`client.menus.context`) and returns
the next mode plus at most one action. It never sends anything or touches the
screen; :mod:`client.ui` carries the actions out.

The key tables and the help screen are in :mod:`client.keymap`, the modes and
their prompts in :mod:`client.modes`, the actions in :mod:`client.actions`;
their public names are re-exported here, where the UI and the tests import
them from.
"""

from __future__ import annotations

from dataclasses import replace

from client.actions import Action, ChatSend, Command, Explore, LookAt, Quit, Run, Say, Travel
from client.keymap import (
    CHAT_MAX,
    CTRL_P,
    DIRECTIONS_BY_CHAR,
    DIRECTIONS_BY_NAME,
    FAR,
    FAR_BY_CHAR,
    HELP_LINES,
    ITEM_VERBS,
    LOOK_CHARS,
    RUN_BY_CHAR,
    RUN_BY_NAME,
    SIMPLE_COMMANDS,
    Cell,
    Key,
    direction,
    is_enter,
    is_escape,
    is_wait,
)
from client.modes import (
    EMPTY,
    NORMAL,
    Context,
    InputMode,
    Mode,
    SpellChoice,
    Target,
    prompt_text,
)

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
    "Explore",
    "InputMode",
    "Key",
    "LookAt",
    "Mode",
    "Quit",
    "Run",
    "Say",
    "SpellChoice",
    "Target",
    "Travel",
    "prompt_text",
    "translate",
]


def _aim_start(ctx: Context, *, nearest: bool = True) -> Mode:
    """The cursor's first place: the nearest monster (if ``nearest``), else one's own cell."""
    if ctx.targets and nearest:
        first = ctx.targets[0]
        return Mode(InputMode.TARGET, cursor=(first.x, first.y), target=0)
    return Mode(InputMode.TARGET, cursor=ctx.position or (0, 0))


def _normal(key: Key, ctx: Context) -> tuple[Mode, Action | None]:
    d = direction(key)
    if d is not None:
        return NORMAL, Command("move", d)
    if is_wait(key):
        return NORMAL, Command("wait")
    if is_enter(key):
        return Mode(InputMode.CHAT), None
    if key.name in RUN_BY_NAME:
        return NORMAL, Run(RUN_BY_NAME[key.name])
    if key.char == CTRL_P:
        return Mode(InputMode.HISTORY), None
    if key.name is not None:
        return NORMAL, None
    ch = key.char
    if ch in RUN_BY_CHAR:
        return NORMAL, Run(RUN_BY_CHAR[ch])
    if ch == "G":
        return Mode(InputMode.DIRECTION, verb="run"), None
    if ch == "_":
        return replace(_aim_start(ctx, nearest=False), verb="travel"), None
    if ch == "A":
        return NORMAL, Explore()
    if ch in SIMPLE_COMMANDS:
        return NORMAL, Command(SIMPLE_COMMANDS[ch])
    if ch in ITEM_VERBS:
        verb, _, nothing = ITEM_VERBS[ch]
        if not ctx.menus.get(verb):
            return NORMAL, Say(nothing)
        return Mode(InputMode.ITEM_MENU, verb=verb), None
    if ch in LOOK_CHARS:
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
    if ch == "+":
        if not ctx.spells:
            return NORMAL, Say("You do not know any spells you can cast.")
        return Mode(InputMode.SPELL_MENU, verb="upgrade"), None
    if ch == "C":
        if not ctx.options:
            return NORMAL, Say("You have no reward to choose.")
        return Mode(InputMode.CHOOSE), None
    return NORMAL, None


def _chat(mode: Mode, key: Key) -> tuple[Mode, Action | None]:
    if is_escape(key):
        return NORMAL, None
    if is_enter(key):
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
    if is_escape(key):
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
    if is_escape(key):
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
    d = direction(key)
    if d is None:
        return NORMAL, None  # Escape, or anything else, cancels
    if mode.verb == "run":
        return NORMAL, Run(d)
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
    if mode.verb == "travel":
        return NORMAL, Travel(cursor[0], cursor[1])
    return NORMAL, Command("cast", spell=mode.spell, at=cursor)


def _aim(mode: Mode, key: Key, ctx: Context) -> tuple[Mode, Action | None]:
    """The targeting cursor: move, Tab through monsters, Enter fires, Escape cancels."""
    if is_escape(key):
        return NORMAL, None
    if is_enter(key) or (key.name is None and key.char in (".", ",")):
        return _fire(mode, ctx)
    cursor = mode.cursor or ctx.position or (0, 0)
    tab = key.name == "KEY_TAB" or key.char == "\t"
    if (tab or key.name == "KEY_BTAB") and ctx.targets:
        step = 1 if tab else -1
        index = (mode.target + step) % len(ctx.targets)
        t = ctx.targets[index]
        return replace(mode, cursor=(t.x, t.y), target=index), None
    if mode.verb == "travel" and key.name is None and ctx.stairs.get(key.char):
        cells = ctx.stairs[key.char]  # < and > jump between the known staircases
        index = (cells.index(cursor) + 1) % len(cells) if cursor in cells else 0
        return replace(mode, cursor=cells[index]), None
    d = direction(key)
    far = 1
    if d is None and key.name is None and key.char in FAR_BY_CHAR:
        d, far = FAR_BY_CHAR[key.char], FAR
    if d is not None:
        moved = (cursor[0] + d[0] * far, cursor[1] + d[1] * far)
        return replace(mode, cursor=_clamp(moved, ctx)), None
    return mode, None


def _choose(mode: Mode, key: Key, ctx: Context) -> tuple[Mode, Action | None]:
    if is_escape(key):
        return NORMAL, None
    if key.name is None and len(key.char) == 1 and "a" <= key.char <= "z":
        index = ord(key.char) - ord("a")
        if index < len(ctx.options):
            return NORMAL, Command("choose", opt=ctx.options[index])
    return mode, None


HISTORY_PAGE = 10
"""Lines PgUp / PgDn scroll the message history by."""


def _history(mode: Mode, key: Key, ctx: Context) -> tuple[Mode, Action | None]:
    """The message history: scroll keys move it, any other key closes it."""
    steps = {"KEY_UP": 1, "KEY_DOWN": -1, "KEY_PGUP": HISTORY_PAGE, "KEY_PGDOWN": -HISTORY_PAGE}
    step = steps.get(key.name or "") if key.name else {"k": 1, "j": -1, CTRL_P: 1}.get(key.char)
    if step is None:
        return NORMAL, None
    return replace(mode, scroll=min(max(0, mode.scroll + step), max(0, ctx.history - 1))), None


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
    if kind is InputMode.HISTORY:
        return _history(mode, key, ctx)
    # OPEN / CLOSE wait for a direction; anything else cancels.
    d = direction(key)
    if d is None:
        return NORMAL, None
    return NORMAL, Command("open" if kind is InputMode.OPEN else "close", d)
