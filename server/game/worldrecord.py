"""Recordings of the world, for bug reports (issue 45, item 4).

The simulation is deterministic from its seed and the commands
(STYLE.md, rule 1), so what a server did can be re-run headless from a
short file: how the world was made, then everything that changed it from
outside, in the order it happened, and after each tick a checksum of the
world so that a re-run (:mod:`server.game.worldreplay`) can tell the first
tick it no longer reproduces.

A :class:`WorldRecorder` is given to a :class:`~server.game.host.Host`
(``host.recorder``; ``underhall serve --record-world DIR``). The host calls
it where the world is changed from outside: a command submitted
(:meth:`WorldRecorder.command`), a player joining with the record it was
saved with (:meth:`WorldRecorder.join`), one leaving
(:meth:`WorldRecorder.left`), and each tick, which it runs
(:meth:`WorldRecorder.step`).

The file
--------

``DIR/world-YYYYmmddTHHMMSSZ.msgpack.gz`` (UTC time of the start; ``-2``,
``-3`` ... added when that name is taken): a gzip stream of msgpack values,
one per record, each an array whose first element names it:

- ``["world", format, version, content, code, seed, [width, height],
  populate, tick, tick_rate, keeper_idle_ticks, saved_levels, started]`` —
  once, first (:class:`Header`): the :data:`FORMAT` number, the server's
  version, digests of the rules data and of the simulation's code,
  :class:`~server.sim.world.World`'s arguments,
  the tick it starts at, the ticks per second, the level keeper's idle
  ticks (:class:`~server.game.keeper.LevelKeeper`; 0: none), the saved
  levels laid over the generated ones (depth -> packed
  :meth:`~server.sim.world.World.level_record`) and the UTC start time;
- ``["join", name, class, record, id]`` — a player joined
  (:class:`Join`): ``record`` is the packed character record it resumed
  from (nil for a new character of ``class``), ``id`` its actor id (nil:
  the join found no room);
- ``["leave", id]`` — a player left (:class:`Leave`);
- ``["cmd", id, seq, c, d, item, at, spell, opt]`` — a command queued for
  player ``id`` with the protocol's keys (:class:`Cmd`);
- ``["tick", tick, actors, events, rng, places, vitals]`` — tick ``tick``
  ran, with everything above it since the last ``tick`` queued before it
  (:class:`Tick`, :func:`world_sums`);
- ``["raised", tick, error]`` — the step of tick ``tick`` raised ``error``
  (:class:`Raised`; the server logged it and went on, the world's tick
  unchanged);
- ``["end", tick]`` — the recording was closed (:class:`End`); a file
  without it was cut off (the server was killed).

The gzip stream is flushed to the file every :data:`FLUSH_TICKS` ticks, so
``kill -9`` loses at most those ticks, and a cut-off file reads up to its
last whole record.
"""

from __future__ import annotations

import hashlib
import logging
import time
import zlib
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import msgpack  # type: ignore[import-untyped]
import msgspec

import server.content
import server.sim
from server.content.loader import default_content
from server.sim.actors import Actor
from server.sim.events import Event
from server.sim.world import World
from server.store import pack_record

log = logging.getLogger("underhall.record")

FORMAT = 1
"""The version of the file format; a reader refuses other numbers."""
FLUSH_TICKS = 5
"""Ticks between two flushes of the compressed stream to the file."""
SUFFIX = ".msgpack.gz"
"""The ending of a recording's file name."""


class Header(msgspec.Struct, tag="world", array_like=True, frozen=True):
    """How the world was made; the first record."""

    format: int
    version: str
    content: str
    """:func:`content_digest` of the rules data."""
    code: str
    """:func:`code_digest` of the simulation's code."""
    seed: int
    size: tuple[int, int]
    """``(width, height)`` of generated levels in cells."""
    populate: bool
    tick: int
    """The world's tick when the recording started."""
    tick_rate: int
    keeper_idle_ticks: int
    saved_levels: dict[int, bytes]
    """Depth -> packed level record laid over the generated level."""
    started: str
    """UTC time of the start, ISO 8601."""


class Join(msgspec.Struct, tag="join", array_like=True, frozen=True):
    """A player joined: :meth:`World.join(name, class_key, record)`."""

    name: str
    class_key: str
    record: bytes | None
    """The packed character record it resumed from; None for a new one."""
    actor_id: int | None
    """The id it got; None when the join raised ``LookupError`` (no room)."""


class Leave(msgspec.Struct, tag="leave", array_like=True, frozen=True):
    """A player left: :meth:`World.leave(actor_id)`."""

    actor_id: int


class Cmd(msgspec.Struct, tag="cmd", array_like=True, frozen=True):
    """A command queued for a player, with the protocol's keys
    (:func:`~server.game.wire.to_command`) and its ``seq``."""

    actor_id: int
    seq: int
    c: str
    d: tuple[int, int] | None = None
    item: str | None = None
    at: tuple[int, int] | None = None
    spell: str | None = None
    opt: str | None = None


class Tick(msgspec.Struct, tag="tick", array_like=True, frozen=True):
    """Tick ``tick`` ran; the world's checksums after it (:func:`world_sums`)."""

    tick: int
    actors: int
    """How many actors and projectiles the world holds."""
    events: int
    """How many events the tick emitted."""
    rng: int
    """CRC-32 of the world's random generator's state."""
    places: int
    """CRC-32 of every actor's id, depth, x and y, in the actors' order."""
    vitals: int
    """CRC-32 of every actor's health, energy and next turn, in that order."""


class Raised(msgspec.Struct, tag="raised", array_like=True, frozen=True):
    """The step of tick ``tick`` raised ``error`` (its type and message)."""

    tick: int
    error: str


class End(msgspec.Struct, tag="end", array_like=True, frozen=True):
    """The recording was closed after tick ``tick - 1``."""

    tick: int


Record = Header | Join | Leave | Cmd | Tick | Raised | End
"""Any record of the file."""
SUMS = ("actors", "events", "rng", "places", "vitals")
"""The fields of :class:`Tick` compared by a replay, in the order reported."""


class RecordingError(Exception):
    """A recording that cannot be read (not ours, another format, damaged)."""


def _digest(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def content_digest() -> str:
    """The first 16 hex digits of the SHA-256 of the shipped rules data
    (every ``server/content/data/*.toml``, by name)."""
    return _digest(list(Path(server.content.__file__).parent.joinpath("data").glob("*.toml")))


def code_digest() -> str:
    """The first 16 hex digits of the SHA-256 of the simulation's sources
    (every ``server/sim/*.py``, by name), so that a replay can tell it runs
    other rules code than the recording's."""
    return _digest(list(Path(server.sim.__file__).parent.glob("*.py")))


def world_sums(world: World, events: list[Event]) -> Tick:
    """The checksums of ``world`` after the tick that emitted ``events``.

    Cheap enough for every tick (a pass over the actors, no floors or
    packs): a replay that goes astray shows in the random generator's state
    or an actor's place or health within a tick or two.
    """
    actors = world.actors.values()
    places = array("q", [v for a in actors for v in (a.id, a.depth, a.x, a.y)])
    vitals = array("q", [v for a in actors for v in (a.hp, a.en, a.next_act)])
    return Tick(
        tick=world.tick - 1,
        actors=len(world.actors) + len(world.projectiles),
        events=len(events),
        rng=zlib.crc32(repr(world.rng.bit_generator.state).encode()),
        places=zlib.crc32(places.tobytes()),
        vitals=zlib.crc32(vitals.tobytes()),
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("underhall")
    except PackageNotFoundError:
        return "unknown"


class WorldRecorder:
    """Writes a recording of one world as it is played (see the module).

    Make one with :meth:`open` before the world's first tick and set it as
    the host's ``recorder``; :meth:`close` it when the game ends. A write
    that fails (disk full) is logged once and ends the recording; the game
    goes on.
    """

    def __init__(self, path: Path, out: IO[bytes]) -> None:
        self.path = path
        """The recording's file."""
        self._out: IO[bytes] | None = out
        self._zip = zlib.compressobj(6, zlib.DEFLATED, 31)  # 31: gzip framing
        self._encode = msgspec.msgpack.Encoder().encode
        self._buffer: list[bytes] = []
        self._tick = 0

    @classmethod
    def open(
        cls, directory: Path, world: World, *, tick_rate: int = 10, keeper_idle_ticks: int = 0
    ) -> WorldRecorder:
        """Start recording ``world`` in a new file of ``directory`` (made if
        missing), with its header written out at once.

        Args:
            tick_rate: Ticks per second of the game (told in the header).
            keeper_idle_ticks: ``idle_ticks`` of the
                :class:`~server.game.keeper.LevelKeeper` run after each of the
                world's ticks; 0 when none runs.

        Raises:
            ValueError: The world has already been played (tick, actors or
                levels) or runs other rules data than the shipped one: it
                could not be made again from a header.
            OSError: The file cannot be made.
        """
        if world.actors or world.levels or world.projectiles:
            raise ValueError("a world is recorded from its start, before any level or actor")
        if world.content is not default_content():
            raise ValueError("only a world of the shipped rules data can be recorded")
        directory.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        for n in range(1, 1000):
            path = directory / f"world-{stamp}{'' if n == 1 else f'-{n}'}{SUFFIX}"
            try:
                out = path.open("xb")
                break
            except FileExistsError:
                continue
        else:
            raise FileExistsError(f"{directory}: no free name for a recording")
        recorder = cls(path, out)
        recorder._tick = world.tick
        recorder._put(
            Header(
                format=FORMAT,
                version=_version(),
                content=content_digest(),
                code=code_digest(),
                seed=world.seed,
                size=(int(world.size[0]), int(world.size[1])),
                populate=world.populate,
                tick=world.tick,
                tick_rate=tick_rate,
                keeper_idle_ticks=keeper_idle_ticks,
                saved_levels={d: pack_record(r) for d, r in sorted(world.saved_levels.items())},
                started=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            )
        )
        recorder._flush()
        if recorder._out is None:
            raise OSError(f"{path}: the header could not be written")
        return recorder

    # ----------------------------------------------------------- what the host tells

    def command(
        self,
        actor_id: int,
        seq: int,
        name: str,
        d: tuple[int, int] | None,
        item: str | None,
        at: tuple[int, int] | None,
        spell: str | None,
        opt: str | None,
    ) -> None:
        """Note a command about to be submitted to the world (the host has
        already built it: its keys are valid)."""
        self._put(Cmd(actor_id, seq, name, d, item, at, spell, opt))

    def join(self, world: World, name: str, class_key: str, record: dict[str, Any] | None) -> Actor:
        """:meth:`World.join(name, class_key, record) <server.sim.world.World.join>`,
        noted with the record it joined with and the id it got (or that it
        raised ``LookupError``, which a replay must raise too: a level may
        have been made meanwhile).

        Raises:
            KeyError, LookupError: as :meth:`World.join` does.
        """
        packed = None if record is None else pack_record(record)
        try:
            actor = world.join(name, class_key, record)
        except LookupError:
            self._put(Join(name, class_key, packed, None))
            raise
        self._put(Join(name, class_key, packed, actor.id))
        return actor

    def left(self, actor_id: int) -> None:
        """Note that player ``actor_id`` is about to leave the world."""
        self._put(Leave(actor_id))

    def step(self, world: World) -> list[Event]:
        """Run ``world``'s tick (:meth:`World.step`), note it with its
        checksums (or that it raised), and flush every :data:`FLUSH_TICKS`
        ticks.

        Raises:
            Exception: whatever :meth:`World.step` raised (a bug).
        """
        tick = world.tick
        try:
            events = world.step()
        except Exception as exc:
            self._put(Raised(tick, f"{type(exc).__name__}: {exc}"))
            self._flush()
            raise
        if self._out is not None:
            self._put(world_sums(world, events))
            self._tick = world.tick
            if world.tick % FLUSH_TICKS == 0:
                self._flush()
        return events

    def close(self) -> None:
        """Write the end mark, flush and close the file (again: nothing)."""
        out = self._out
        if out is None:
            return
        self._put(End(self._tick))
        self._flush(zlib.Z_FINISH)
        if self._out is not None:
            self._out.close()
            self._out = None

    # ----------------------------------------------------------- writing

    def _put(self, record: Record) -> None:
        if self._out is not None:
            self._buffer.append(self._encode(record))

    def _flush(self, mode: int = zlib.Z_SYNC_FLUSH) -> None:
        out = self._out
        if out is None:
            return
        data = b"".join(self._buffer)
        self._buffer.clear()
        try:
            out.write(self._zip.compress(data) + self._zip.flush(mode))
            out.flush()
        except (OSError, ValueError) as exc:
            log.error("recording %s stopped: %s", self.path, exc)
            self._out = None
            try:
                out.close()
            except OSError:
                pass


class RecordingReader:
    """The records of a recording's file, read lazily (iterate it once).

    After the iteration, :attr:`ended` says whether the end mark was read,
    and :attr:`cut` whether the file stops within a record (both as after
    ``kill -9``: the whole records before are all read).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.ended = False
        self.cut = False
        self.count = 0
        """Records read so far."""

    def __iter__(self) -> Iterator[Record]:
        """The records, in order.

        Raises:
            RecordingError: The file is not a gzip stream of records (or is
                damaged in its middle): the message names the byte or record.
            OSError: The file cannot be read.
        """
        inflate = zlib.decompressobj(31)
        unpacker = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=2**30)
        fed = 0
        read = 0
        with self.path.open("rb") as f:
            while chunk := f.read(1 << 16):
                try:
                    data = inflate.decompress(chunk)
                except zlib.error as exc:
                    raise RecordingError(
                        f"{self.path}: not a gzip stream, or damaged within its first "
                        f"{read + len(chunk)} bytes ({exc})"
                    ) from None
                read += len(chunk)
                fed += len(data)
                unpacker.feed(data)
                yield from self._decoded(unpacker)
                if inflate.eof:
                    break
        self.cut = unpacker.tell() < fed

    def _decoded(self, unpacker: Any) -> Iterator[Record]:
        while True:
            try:
                value = next(unpacker)
            except StopIteration:
                return
            except (ValueError, msgpack.FormatError, msgpack.StackError) as exc:
                raise RecordingError(
                    f"{self.path}: record {self.count + 1} is not msgpack ({exc})"
                ) from None
            try:
                record = msgspec.convert(value, Record)
            except msgspec.ValidationError as exc:
                raise RecordingError(
                    f"{self.path}: record {self.count + 1} is not a record ({exc})"
                ) from None
            if self.count == 0 and not isinstance(record, Header):
                raise RecordingError(f"{self.path}: the first record is not the world's header")
            if isinstance(record, Header) and record.format != FORMAT:
                raise RecordingError(
                    f"{self.path}: format {record.format}; this version reads {FORMAT}"
                )
            self.count += 1
            if isinstance(record, End):
                self.ended = True
            yield record


def newest_recording(path: Path) -> Path:
    """``path`` if it is a file, else the newest recording in the directory
    ``path`` (the last written to).

    Raises:
        FileNotFoundError: No such file, or no recording in the directory.
    """
    if path.is_dir():
        found = sorted(path.glob(f"world-*{SUFFIX}"))
        if not found:
            raise FileNotFoundError(f"{path}: no recording (world-*{SUFFIX}) in it")
        return max(found, key=lambda p: (p.stat().st_mtime, p.name))
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or directory")
    return path
