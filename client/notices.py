"""Message-log lines for what the server says outside the game's events:
refused commands, errors, chat, and the ``note`` event's notices to the
player (hunger, identified items, curses, rewards).

Pure functions: they read a :class:`~client.model.GameModel` for names and
never change it. Unknown reasons and codes get a generic line; a malformed
or unknown note yields ``None``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from client.naming import item_phrase, option_label, spell_phrase

if TYPE_CHECKING:
    from client.model import GameModel

__all__ = ["describe_chat", "describe_error", "describe_reject", "note_line"]

_REJECTS: Mapping[str, str] = {
    "blocked": "Something solid blocks your way.",
    "occupied": "Someone is standing there.",
    "no_door": "There is no door there.",
    "door_blocked": "Something is in the doorway.",
    "no_stairs": "There are no stairs here.",
    "sealed": "The way up is sealed.",
    "nothing_here": "There is nothing here to pick up.",
    "dead": "You are dead.",
    "monster_in_view": "You cannot rest with a monster in view.",
    "lava": "You will not step into lava.",
    "queue_full": "Too many actions queued; wait a moment.",
    "no_item": "You do not have that item.",
    "pack_full": "Your pack is full.",
    "wrong_item": "You cannot use that item that way.",
    "cursed": "You cannot; it is cursed!",
    "full": "You are too full to eat.",
    "no_energy": "You do not have enough energy.",
    "cannot_cast": "You cannot cast a spell right now.",
    "unknown_spell": "You do not know that spell.",
    "no_target": "That spell needs another kind of target.",
    "no_choice": "You have no reward to choose.",
    "confused": "You are too confused to do that.",
    "afraid": "You are too afraid to attack.",
    "no_altar": "You must stand on an altar to upgrade a spell.",
}

_ERRORS: Mapping[str, str] = {
    "rate_limited": "Slow down: the server dropped some of your input.",
    "version": "This client speaks another protocol version than the server.",
    "name_taken": "That name is taken (and this client has no token for it).",
    "bad_class": "The server does not know that class.",
    "server_full": "The server is full.",
    "flood": "Disconnected for flooding the server.",
    "timeout": "The server timed out waiting for us.",
    "shutdown": "The server is shutting down.",
    "replaced": "This character connected from elsewhere; this session is closed.",
    "too_large": "A message was too large for the server.",
    "kicked": "An operator disconnected you from the server.",
    "banned": "This name is banned from the server.",
    "spectator": "You are watching: you cannot act, only chat.",
    "not_playing": "Nobody of that name is playing.",
    "not_watchable": "That player does not want to be watched.",
    "gone": "The player you watched has left the game.",
}

_WITH_DETAIL = frozenset({"bad_class"})
"""Codes whose fixed line is followed by the server's detail (the classes on offer)."""


def describe_reject(reason: str) -> str:
    """Say why the server refused a command.

    Args:
        reason: A ``reject.reason`` string; unknown reasons are shown as is.

    Returns:
        One log line.
    """
    return _REJECTS.get(reason, f"You cannot do that ({reason}).")


def describe_error(code: str, msg: str = "") -> str:
    """Turn a server ``error`` message into one log line.

    Args:
        code: The error code (``docs/protocol.md``, "error codes").
        msg: The server's human-readable detail, shown when the code is
            unknown or has no fixed wording.

    Returns:
        One log line.
    """
    known = _ERRORS.get(code)
    if known is not None:
        return f"{known[:-1]}: {msg}" if code in _WITH_DETAIL and msg else known
    return f"Server error ({code}): {msg}" if msg else f"Server error ({code})."


def describe_chat(sender: str, text: str) -> str:
    """Format a chat line; an empty ``sender`` is a server notice."""
    return f"<{sender}> {text}" if sender else f"* {text}"


def _pack_item(model: GameModel, letter: object) -> str:
    """The name of the pack item under ``letter`` ("your equipment" if unknown)."""
    for item in model.inventory():
        if item.letter == letter:
            return model.item_name(item.key)
    return "equipment"


def note_line(ev: Sequence[Any], model: GameModel) -> str | None:
    """Describe a ``note`` event: ``["note", code, *args]``."""
    code, args = ev[1], list(ev[2:])
    arg = args[0] if args else None
    if code == "identified":
        return f"You now know {item_phrase(model, arg)}." if isinstance(arg, str) else None
    if code == "forgot":
        return f"You have forgotten the spell {spell_phrase(model, arg)}."
    if code == "enchanted":
        return f"Your {_pack_item(model, arg)} glows blue for a moment."
    if code == "curse_removed":
        return f"The curse on your {_pack_item(model, arg)} is lifted."
    if code == "curse_stays":
        return f"The curse on your {_pack_item(model, arg)} holds fast."
    if code == "choice" and isinstance(arg, str):
        return f"You gain {option_label(arg)}."
    if code == "rusted":
        return f"Your {_pack_item(model, arg)} rusts."
    if code == "upgraded":
        return f"The altar glows: your {spell_phrase(model, arg)} spell grows stronger."
    return _NOTES.get(code) if isinstance(code, str) else None


_NOTES: Mapping[str, str] = {
    "hungry": "You are getting hungry.",
    "weak": "You feel weak from hunger.",
    "starving": "You are starving!",
    "nothing_happens": "Nothing seems to happen.",
    "choice": "You may choose a reward for your level: press C.",
    "spell_failed": "Your spell fails.",
}
