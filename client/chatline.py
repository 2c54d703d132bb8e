"""Chat lines as a player types and reads them: the scope prefixes.

Typed: ``/g text`` says ``text`` to every player (the global channel),
``/w name text`` says it to ``name`` only, ``/s text`` to those who watch
you (the watch scope: you and your spectators), anything else to the
players on your level (docs/protocol.md, "chat"); a spectator's lines all
go to the watch scope of the player it watches. ``/watchers off`` (and
``on``) is no line: it refuses spectators (and lets them watch again),
the ``spectators`` message.
"""

from __future__ import annotations

from client.notices import describe_chat
from protocol.limits import NAME_RE
from protocol.messages import Chat, ChatOut, Spectators

__all__ = ["chat_from_line", "describe_chat_line"]


WATCHERS_SWITCH = {"/watchers off": False, "/watchers on": True}
"""The typed lines that refuse spectators or let them watch again."""


def chat_from_line(line: str) -> Chat | Spectators | str:
    """The ``chat`` to send for a typed line (or the ``spectators`` switch of
    ``/watchers off`` and ``/watchers on``), or a usage message to show instead."""
    if line.strip() in WATCHERS_SWITCH:
        return Spectators(WATCHERS_SWITCH[line.strip()])
    if line.startswith("/watchers"):
        return "usage: /watchers off, or /watchers on"
    if line.startswith("/g "):
        text = line[3:].strip()
        return Chat(text, scope="global") if text else "usage: /g text"
    if line.startswith("/w ") or line == "/w":
        name, _, text = line[3:].strip().partition(" ")
        if NAME_RE.fullmatch(name) is None or not text.strip():
            return "usage: /w name text"
        return Chat(text.strip(), to=name)
    if line.startswith("/s ") or line == "/s":
        text = line[3:].strip()
        return Chat(text, scope="watch") if text else "usage: /s text"
    return Chat(line)


def describe_chat_line(msg: ChatOut) -> str:
    """A received chat line for the log, marked ``[global]`` or ``[to NAME]``."""
    line = describe_chat(msg.sender, msg.text)
    if msg.scope == "global":
        return f"[global] {line}"
    if msg.scope == "private":
        return f"[to {msg.to}] {line}" if msg.to else f"[private] {line}"
    if msg.scope == "watch":
        return f"[watching {msg.to}] {line}" if msg.to else f"[watching] {line}"
    return line
