"""Input modes of the terminal client: what the next key press means.

:class:`Mode` is the state :func:`client.keys.translate` steps from one key to
the next; :class:`Context` is what the model offers the menus and the
targeting cursor at that moment (built by :func:`client.menus.context`);
:func:`prompt_text` is the prompt line each mode shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

from client.keymap import ITEM_VERBS, Cell

__all__ = [
    "EMPTY",
    "NORMAL",
    "Context",
    "InputMode",
    "Mode",
    "SpellChoice",
    "Target",
    "prompt_text",
]


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
    HISTORY = "history"  # the message history (Ctrl-P); scroll keys, any other closes


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
        scroll: how many lines the message history is scrolled back.
    """

    kind: InputMode = InputMode.NORMAL
    text: str = ""
    verb: str = ""
    item: str = ""
    spell: str = ""
    cursor: Cell | None = None
    target: int = -1
    looked: int | None = None
    scroll: int = 0


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
        history: lines in the message log (how far the history can scroll).
        stairs: ``"<"`` / ``">"`` -> remembered staircases up / down, nearest
            first (the travel cursor jumps to them).
    """

    position: Cell | None = None
    size: tuple[int, int] = (0, 0)
    letters: frozenset[str] = frozenset()
    menus: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    spells: tuple[SpellChoice, ...] = ()
    targets: tuple[Target, ...] = ()
    actors_at: Mapping[Cell, int] = field(default_factory=dict)
    options: tuple[str, ...] = ()
    history: int = 0
    stairs: Mapping[str, tuple[Cell, ...]] = field(default_factory=dict)


NORMAL = Mode()
"""The normal mode: keys move, act and open menus."""
EMPTY = Context()
"""A context offering nothing (no menus, no targets)."""

_QUESTIONS = {verb: question for verb, question, _ in ITEM_VERBS.values()}


_AIM_VERBS = {"throw": "Throw", "cast": "Cast", "look": "Look", "travel": "Travel"}


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
        # at most 80 columns with a three-digit cursor (issue 12)
        return f"{act} where? {where}  [direction keys, Tab: monster, Enter: {act.lower()}, Esc]"
    if kind is InputMode.HISTORY:
        return "Messages: k/Up older, j/Down newer, PgUp/PgDn a page; other keys close"
    if kind is InputMode.CHOOSE:
        return "Choose your reward [a letter, or Escape]"
    if kind in (InputMode.INVENTORY, InputMode.EQUIPMENT, InputMode.INFO):
        return "Press any key to continue."
    return ""
