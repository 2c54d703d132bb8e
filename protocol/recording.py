"""The file format of a recorded game (``.uhrec``), sans I/O.

A recording is one player's game, from its ``welcome`` to its leave: each
frame the server wrote to that player's websocket, byte for byte, with the
world's tick and the time it was written (issue 45, item 2). A replay feeds
those frames to a client's model in order and draws what the player saw.

The file is a gzip stream written as consecutive gzip members, one per
append, so that a file cut short by ``kill -9`` still reads up to its last
whole member. Uncompressed, it is a stream of msgpack values:

1. a header map: ``{"format": "underhall-recording", "v": 1, "protocol":
   int, "name": str, "started": float}`` (``started`` in Unix seconds,
   ``protocol`` the protocol version its frames are in);
2. one array per frame: ``[ms, tick, frame]``: milliseconds since
   ``started`` (int), the world's tick when it was written (int) and the
   frame's payload (bytes, as the client received it; the ``welcome``'s
   token blanked);
3. last, if the game ended while the server ran: ``{"ended": float}``.

docs/protocol.md, "Recordings", says the same for other clients.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import msgpack  # type: ignore[import-untyped]

FORMAT = "underhall-recording"
"""The header's ``format``."""
VERSION = 1
"""The header's ``v``: the version of this file format."""
SUFFIX = ".uhrec"
"""A recording file's name ends so."""
LEVEL = 6
"""zlib level of each member."""


class RecordingError(Exception):
    """A recording is unknown or unreadable; the message says which, in one line."""


@dataclass(frozen=True, slots=True)
class Recording:
    """A recording read back (:func:`read_recording`).

    Attributes:
        name: The player's name.
        protocol: The protocol version of its frames.
        started: When its game began, Unix seconds.
        frames: ``(ms since started, tick, payload)`` in the order written.
        ended: When the game ended, Unix seconds, or None: still going, or
            cut short (the server died, or the file was copied mid-game).
        complete: False when the file ended inside a member (a crash in
            the middle of an append): what came before is still here.
    """

    name: str
    protocol: int
    started: float
    frames: list[tuple[int, int, bytes]]
    ended: float | None
    complete: bool


def pack_header(name: str, protocol: int, started: float) -> bytes:
    """A recording's first value (see the module's docstring)."""
    header = {"format": FORMAT, "v": VERSION, "protocol": protocol, "name": name}
    header["started"] = started
    return bytes(msgpack.packb(header, use_bin_type=True))


def compress(data: bytes) -> bytes:
    """``data`` as one gzip member."""
    c = zlib.compressobj(LEVEL, zlib.DEFLATED, 31)
    return c.compress(data) + c.flush()


def inflate(data: bytes) -> tuple[bytes, bool]:
    """The uncompressed bytes of consecutive gzip members, and whether the
    last one was whole (a crash may cut the final member short)."""
    out: list[bytes] = []
    rest = data
    while rest:
        d = zlib.decompressobj(31)
        try:
            out.append(d.decompress(rest))
        except zlib.error:
            return b"".join(out), False
        if not d.eof:
            return b"".join(out), False
        rest = d.unused_data
    return b"".join(out), True


def read_recording(data: bytes) -> Recording:
    """Read a recording file's bytes.

    Raises:
        RecordingError: not a recording (no header), or of a newer format.
    """
    raw, whole = inflate(data)
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
    unpacker.feed(raw)
    values: Iterator[Any] = iter(unpacker)
    try:
        header = next(values)
    except (StopIteration, ValueError, msgpack.ExtraData) as exc:
        raise RecordingError("not an Underhall recording: no header") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise RecordingError("not an Underhall recording")
    if header.get("v") != VERSION:
        raise RecordingError(f"recording format {header.get('v')!r}: this version reads {VERSION}")
    frames: list[tuple[int, int, bytes]] = []
    ended: float | None = None
    try:
        for value in values:
            if isinstance(value, list) and len(value) == 3:
                frames.append((int(value[0]), int(value[1]), bytes(value[2])))
            elif isinstance(value, dict) and "ended" in value:
                ended = float(value["ended"])
    except (ValueError, TypeError):
        whole = False
    return Recording(
        name=str(header.get("name", "")),
        protocol=int(header.get("protocol", 0)),
        started=float(header.get("started", 0.0)),
        frames=frames,
        ended=ended,
        complete=whole,
    )
