"""Server frames read as raw msgpack maps, the way a client reads them.

Tests that speak to a server over a bare websocket see the wire's own
shapes; :class:`RawReader` turns them into what they mean (docs/protocol.md,
version 11): a map without ``"t"`` is a ``delta``, whose integer keys
become the field names of :data:`~protocol.messages.DELTA_KEYS`, its ``ack`` (the
step from the last one) becomes the whole acknowledged ``seq``, each pair of
``rej`` gets its whole ``seq`` back in place of ``ack − seq``, and a delta
that moves the player's own actor record gets the new cell as ``me.x`` and
``me.y``, as a ``snap``'s ``me`` has it.
"""

from __future__ import annotations

import weakref
from typing import Any

import msgpack  # type: ignore[import-untyped]

from protocol.messages import DELTA_KEY, DELTA_KEYS, unpack_moves, unpack_steps


class RawReader:
    """What one connection's frames need read across frames: the own actor
    id, the acknowledged ``seq`` and the own cell."""

    def __init__(self) -> None:
        self.actor_id: int | None = None
        self.ack = -1
        self.cell: tuple[int, int] | None = None

    def read(self, msg: dict[str, Any]) -> dict[str, Any]:
        """``msg`` (a decoded server map), changed in place as described
        above and returned; other messages pass unchanged."""
        t = msg.setdefault("t", "delta")
        if t == "welcome":
            self.actor_id = msg.get("id")
            return msg
        if t == "snap":
            self.ack = msg["ack"]
            self.cell = (msg["me"]["x"], msg["me"]["y"])
        elif t == "delta":
            if "ack" in msg:
                self.ack = msg["ack"] = self.ack + msg["ack"]
            cell = self._own_cell(msg)
            if cell is not None:
                self.cell = cell
                msg.setdefault("me", {}).update(x=cell[0], y=cell[1])
        else:
            return msg
        rej = msg.get("rej")
        if rej:
            msg["rej"] = [self.ack - v if i % 2 == 0 else v for i, v in enumerate(rej)]
        return msg

    def _own_cell(self, msg: dict[str, Any]) -> tuple[int, int] | None:
        """The own cell after a delta that moved the own record, else None."""
        me = self.actor_id
        if me is None or self.cell is None:
            return None
        for aid, dx, dy in unpack_steps(msg.get("st")):
            if aid == me:
                return (self.cell[0] + dx, self.cell[1] + dy)
        for aid, x, y in unpack_moves(msg.get("mv")):
            if aid == me:
                return (x, y)
        for row in msg.get("upd") or ():
            if row[0] == me:
                return (row[1], row[2])
        return None


_READERS: weakref.WeakKeyDictionary[Any, RawReader] = weakref.WeakKeyDictionary()
"""Each connection's :class:`RawReader`, for as long as the connection lives."""


def read_frame(conn: Any, data: bytes) -> dict[str, Any]:
    """The server frame ``data`` that arrived on ``conn`` (any object that
    can be weakly referenced, such as a websocket), decoded and read as
    :class:`RawReader` reads it with what earlier frames of ``conn`` told.

    Raises:
        AssertionError: The frame is not a msgpack map.
    """
    out = msgpack.unpackb(data, raw=False, strict_map_key=False)
    assert isinstance(out, dict), out
    if "t" not in out:  # a delta: its fields by number (protocol 11)
        assert all(type(k) is int for k in out), out
        out = {DELTA_KEYS[k]: v for k, v in out.items()}
    reader = _READERS.get(conn)
    if reader is None:
        reader = _READERS[conn] = RawReader()
    return reader.read(out)


def delta_frame(**fields: Any) -> bytes:
    """A delta's payload as a server packs it, from its fields by name: each
    key the field's number (protocol 11), no ``"t"`` (protocol 10).

    Raises:
        KeyError: A name that is no delta field.
    """
    data: bytes = msgpack.packb(
        {DELTA_KEY[name]: value for name, value in fields.items()}, use_bin_type=True
    )
    return data
