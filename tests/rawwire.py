"""Server frames read as raw msgpack maps, the way a client reads them.

Tests that speak to a server over a bare websocket see the wire's own
shapes; :class:`RawReader` turns them into what they mean (docs/protocol.md,
version 10): a map without ``"t"`` is a ``delta``, a delta's ``ack`` (the
step from the last one) becomes the whole acknowledged ``seq``, and each
pair of ``rej`` gets its whole ``seq`` back in place of ``ack − seq``.
"""

from __future__ import annotations

from typing import Any


class RawReader:
    """The acknowledged ``seq`` of one connection, kept across its frames."""

    def __init__(self) -> None:
        self.ack = -1

    def read(self, msg: dict[str, Any]) -> dict[str, Any]:
        """``msg`` (a decoded server map), changed in place as described
        above and returned; other messages pass unchanged."""
        t = msg.setdefault("t", "delta")
        if t == "snap":
            self.ack = msg["ack"]
        elif t == "delta" and "ack" in msg:
            self.ack = msg["ack"] = self.ack + msg["ack"]
        else:
            return msg
        rej = msg.get("rej")
        if rej:
            msg["rej"] = [self.ack - v if i % 2 == 0 else v for i, v in enumerate(rej)]
        return msg
