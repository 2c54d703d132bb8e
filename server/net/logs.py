"""Log set-up of ``underhall serve``: plain text, or one JSON object per line.

Log calls that describe an event pass its fields as ``extra``::

    log.info("alice joined", extra={"event": "join", "player": "alice", "actor": 7})

The text format shows only the message; the JSON format
(``--log-format json``) writes ``time`` (ISO 8601, UTC), ``level``,
``logger``, ``msg``, and every ``extra`` field (``event``, ``player``,
``actor``, ``address``, ``depth``, ``code``, ...) as keys of one object per
line, ready for a log shipper.

Levels: connection open and close are DEBUG; joins, leaves, refusals and
admin actions INFO. The websockets library's own loggers are kept at WARNING
(they would log every connection at INFO, and every frame at DEBUG).
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

LOG_FORMATS = ("text", "json")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {
    "message",
    "asctime",
    "taskName",
}


class JsonFormatter(logging.Formatter):
    """Format a record as one line of JSON (see the module docstring)."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, ensure_ascii=False)


def setup_logging(level: str = "info", fmt: str = "text", stream: TextIO | None = None) -> None:
    """Configure the root logger for the server.

    Args:
        level: ``debug``, ``info``, ``warning`` or ``error``.
        fmt: ``text`` or ``json``.
        stream: Where lines go (default standard error).

    Raises:
        ValueError: Unknown ``level`` or ``fmt``.
    """
    if fmt not in LOG_FORMATS:
        raise ValueError(f"log format must be one of {', '.join(LOG_FORMATS)}, not {fmt!r}")
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    logging.getLogger("websockets").setLevel(logging.WARNING)


def address(remote: Any) -> str:
    """``host:port`` of a socket's peer address (``?`` when unknown)."""
    if isinstance(remote, tuple) and len(remote) >= 2:
        host = str(remote[0])
        return f"[{host}]:{remote[1]}" if ":" in host else f"{host}:{remote[1]}"
    return "?" if remote is None else str(remote)
