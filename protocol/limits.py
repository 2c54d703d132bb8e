"""Numeric limits of the wire protocol (docs/protocol.md).

Sizes are in bytes, lengths in characters (Unicode code points), rates in
messages per second, times in seconds.
"""

from __future__ import annotations

import re

MAX_FRAME_BYTES = 4096
"""Largest frame a client may send; a larger one closes the connection (1009)."""

MAX_NAME = 16
"""Longest player name, in characters."""

NAME_RE = re.compile(rf"[A-Za-z0-9_-]{{1,{MAX_NAME}}}", re.ASCII)
"""A valid player name; use with ``fullmatch``."""

MAX_CHAT = 200
"""Longest chat text, in characters."""

CHAT_SCOPES: tuple[str, ...] = ("level", "global", "watch")
"""The ``scope`` of a client ``chat`` without ``to``: ``level`` (the default,
players on the sender's level), ``global`` (every player) or ``watch`` (the
player and those who watch it, protocol 12)."""

CHAT_RATE_PER_S = 1.0
"""Chat lines (any scope) a player may send per second on average."""

CHAT_BURST = 5
"""Chat lines a player may send at once."""

GLOBAL_CHAT_RATE_PER_S = 0.2
"""Global chat lines a player may send per second on average (one per 5 s)."""

GLOBAL_CHAT_BURST = 2
"""Global chat lines a player may send at once."""

COMMAND_QUEUE_LIMIT = 8
"""Commands that may wait per player; one more is rejected with ``queue_full``."""

RATE_PER_S = 40
"""Average client messages per second allowed (token bucket refill rate)."""

RATE_BURST = 40
"""Token bucket size: messages a client may send at once."""

FLOOD_FACTOR = 5
"""A client sustaining more than ``FLOOD_FACTOR * RATE_PER_S`` messages/s is closed."""

HELLO_TIMEOUT_S = 10.0
"""Seconds a new connection has to send ``hello``."""

MAX_SEQ = 2**31
"""Command sequence numbers satisfy ``0 <= seq < MAX_SEQ``."""

MAX_COORD = 2**16
"""A ``cmd``'s target cell ``at = [x, y]`` satisfies ``0 <= x, y < MAX_COORD``."""

ITEM_LETTER_RE = re.compile(r"[A-Za-z]", re.ASCII)
"""A pack letter (``cmd.item``); use with ``fullmatch``."""

MAX_KEY = 32
"""Longest spell or option key (``cmd.spell``, ``cmd.opt``), in characters."""

KEY_RE = re.compile(rf"[a-z0-9_]{{1,{MAX_KEY}}}", re.ASCII)
"""A spell or option key; use with ``fullmatch``."""
