"""Making server text safe to draw in a terminal.

Everything a server sends is untrusted: a chat line, an error's detail, a
player's name, the message of the day or an item's name could carry terminal
escape sequences (an OSC 52 clipboard write, a window-title change, cursor
moves that forge the screen). The terminal client passes every string that
came from the server through :func:`clean_text`, normally by cleaning each
decoded message once with :func:`clean_message` before the model or the log
sees it, and the message log cleans every line again before keeping it.

What is removed: whole escape sequences (CSI ``ESC [ ... final``; the string
sequences OSC ``ESC ]``, DCS ``ESC P``, SOS ``ESC X``, PM ``ESC ^`` and APC
``ESC _`` up to their terminator BEL or ST, or to the end of the text when
unterminated; two-byte and ``nF`` escapes; their 8-bit C1 forms), then every
remaining C0 control (U+0000-U+001F), DEL and C1 control (U+0080-U+009F).
Tab, newline and carriage return become one space each, so words stay apart.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, TypeVar

__all__ = ["clean_message", "clean_text"]

_SEQUENCE = re.compile(
    r"""
      (?:\x1b\[|\x9b) [\x30-\x3f]* [\x20-\x2f]* [\x40-\x7e]?       # CSI
    | (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]) .*? (?:\x07|\x1b\\|\x9c|\Z)
                                                              # OSC DCS SOS PM APC
    | \x1b [\x20-\x2f]* [\x30-\x7e]?                             # other escapes
    """,
    re.VERBOSE | re.DOTALL,
)
_SPACING = re.compile(r"[\t\n\r]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")

T = TypeVar("T")


def clean_text(text: str) -> str:
    """``text`` without escape sequences and control characters (module docstring).

    Args:
        text: Any string, typically from the server.

    Returns:
        The text safe to write to a terminal; printable text is returned as is.
    """
    if text.isprintable():
        return text
    text = _SEQUENCE.sub("", text)
    text = _SPACING.sub(" ", text)
    return _CONTROL.sub("", text)


def clean_message(value: T) -> T:
    """A copy of a decoded server message with every string in it cleaned.

    Walks frozen message dataclasses, lists, tuples and dicts (keys too);
    bytes and numbers are kept. Returns ``value`` itself when nothing changed.
    """
    return _clean(value)  # type: ignore[no-any-return]


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_clean(v) for v in value)
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {}
        for f in dataclasses.fields(value):
            old = getattr(value, f.name)
            new = _clean(old)
            if new is not old and new != old:
                changes[f.name] = new
        return dataclasses.replace(value, **changes) if changes else value
    return value
