"""What a key press asks the terminal client to do.

:func:`client.keys.translate` returns at most one of these per key;
:mod:`client.ui` carries it out (sends a message, writes the log, quits).
Small frozen dataclasses; :data:`Action` is their union.
"""

from __future__ import annotations

from dataclasses import dataclass

from client.keymap import Cell, Direction

__all__ = ["Action", "ChatSend", "Command", "Explore", "LookAt", "Quit", "Run", "Say", "Travel"]


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


@dataclass(frozen=True, slots=True)
class Run:
    """Run in direction ``d`` until something interesting (:mod:`client.travel`)."""

    d: Direction


@dataclass(frozen=True, slots=True)
class Travel:
    """Walk the shortest known way to cell ``(x, y)`` (:mod:`client.travel`)."""

    x: int
    y: int


@dataclass(frozen=True, slots=True)
class Explore:
    """Walk to the nearest unexplored place, again and again (:mod:`client.travel`)."""


Action = Command | ChatSend | LookAt | Say | Quit | Run | Travel | Explore
