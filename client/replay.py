"""The terminal replay of a recorded game: ``underhall replay NAME|ID|FILE``.

A recording (:mod:`protocol.recording`) holds every frame a player was
written. :class:`ReplayApp` is the screen of ``underhall play``
(:class:`~client.ui.PlayApp`: the same model, renderer, log and
animations) fed those frames at the pace they were written, instead of a
connection's. Keys:

- ``space`` pauses and resumes;
- ``1``, ``2``, ``4``, ``8`` play at ×1, ×2, ×4, ×8;
- ``→`` / ``←`` seek 10 turns (ticks) on or back, ``↓`` / ``↑`` 100, ``g`` to
  the start and ``G`` to the end;
- ``?`` the help, ``q`` or ``Q`` quits.

A seek back builds the screen again from the recording's start (frames are
deltas of one another), without drawing or animating what it passes.

:func:`load` finds the recording: a file, an id or a player's name on a
server (``--url``: fetched over HTTP from ``/recordings/…``), or on this
machine's recordings directory.
"""

from __future__ import annotations

import asyncio
import bisect
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

from blessed import Terminal

from client import keys
from client.animate import Animator
from client.connection import Connection
from client.model import GameModel
from client.render import MessageLog
from client.safe_text import clean_message, clean_text
from client.ui import PlayApp, _terminal_mode, run_in_terminal
from protocol.codec import decode_server
from protocol.errors import ProtocolError
from protocol.messages import ServerMessage, Welcome
from protocol.recording import SUFFIX, Recording, RecordingError, read_recording
from protocol.version import PROTOCOL_VERSION

SPEEDS = {"1": 1.0, "2": 2.0, "4": 4.0, "8": 8.0}
"""Speed keys and the factors they set."""
SEEK_KEYS = {"KEY_RIGHT": 10, "KEY_LEFT": -10, "KEY_DOWN": 100, "KEY_UP": -100}
"""Seek keys and how many turns (ticks) they move."""
FETCH_TIMEOUT_S = 30.0
"""Longest wait for a recording fetched from a server."""
MAX_FETCH_BYTES = 256 * 1024 * 1024
"""A fetched recording larger than this is refused."""


class Tape:
    """A recording's frames, decoded, with their times and ticks.

    Args:
        recording: The recording read back.

    Attributes:
        welcome: The first frame (the player's ``welcome``).
        ms: Milliseconds since the game began, per frame (frame 0 the welcome).
        ticks: The world's tick per frame (never decreasing).
        messages: The decoded frames (strings cleaned of terminal controls).
        dropped: Frames that did not decode (skipped, as a client skips a
            bad frame).

    Raises:
        RecordingError: the recording does not begin with a ``welcome``.
    """

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self.ms: list[int] = []
        self.ticks: list[int] = []
        self.messages: list[ServerMessage] = []
        self.dropped = 0
        for ms, tick, data in recording.frames:
            try:
                msg = clean_message(decode_server(data))
            except ProtocolError:
                self.dropped += 1
                continue
            self.ms.append(ms)
            self.ticks.append(max(tick, self.ticks[-1]) if self.ticks else tick)
            self.messages.append(msg)
        if not self.messages or not isinstance(self.messages[0], Welcome):
            raise RecordingError("the recording does not begin with a welcome")
        self.welcome: Welcome = self.messages[0]

    def __len__(self) -> int:
        return len(self.messages)

    def warnings(self) -> list[str]:
        """What a viewer should know before trusting the replay: a recording
        made under another protocol version than this client's (its frames
        were decoded as this version's, so fields that changed meaning may
        show wrongly), and frames that did not decode (skipped)."""
        lines = []
        recorded = self.recording.protocol
        if recorded != PROTOCOL_VERSION:
            lines.append(
                f"Recorded under protocol {recorded}; this client speaks "
                f"{PROTOCOL_VERSION}: some of it may not show as the player saw it."
            )
        if self.dropped:
            lines.append(f"{self.dropped} frames of this recording could not be read: skipped.")
        return lines

    def index_after(self, tick: int) -> int:
        """The index of the first frame written after ``tick`` (frames up to
        it are what the player had seen at that tick)."""
        return max(1, bisect.bisect_right(self.ticks, tick))


class _Stand:
    """Stands for the connection :class:`~client.ui.PlayApp` is given: a
    replay's ``welcome`` is the recording's, and there is nothing to close."""

    def __init__(self, welcome: Welcome) -> None:
        self.welcome = welcome

    async def close(self) -> None:
        return None


class ReplayApp(PlayApp):
    """One replay: :class:`~client.ui.PlayApp` fed from a :class:`Tape`.

    Args:
        term: The terminal.
        tape: The decoded recording.
    """

    def __init__(self, term: Terminal, tape: Tape) -> None:
        self.tape = tape
        self.speed = 1.0
        self.paused = False
        self.next = 1
        """Index of the next frame to show (0, the welcome, is applied at start)."""
        self._control = asyncio.Event()
        self._clock = (time.monotonic(), 0)
        """(monotonic time, recording ms) of the last change of pace."""
        super().__init__(term, "", tape.welcome.name, None, cast(Connection, _Stand(tape.welcome)))
        self._show_pace()

    # -------------------------------------------------------------- play

    def _welcomed(self, conn: Connection) -> None:
        """A replay keeps no token and says whose game it is."""
        when = datetime.fromtimestamp(self.tape.recording.started, UTC)
        self.log.add(
            f"Replay of {clean_text(self.tape.recording.name)}'s game of "
            f"{when:%Y-%m-%d %H:%M} UTC.  space: pause  1 2 4 8: speed  "
            "arrows: seek  q: quit"
        )
        for line in self.tape.warnings():
            self.log.add(line)

    def _show_pace(self) -> None:
        last = self.tape.ticks[-1]
        at = self.tape.ticks[self.next - 1]
        where = "end" if self.next >= len(self.tape) else ("paused" if self.paused else "playing")
        self.state.note = f"replay ×{self.speed:g}  {where}  turn {at} of {last}"

    def _now_ms(self) -> float:
        """The recording's time now, at the current pace."""
        wall, ms = self._clock
        if self.paused:
            return ms
        return ms + (time.monotonic() - wall) * 1000.0 * self.speed

    def _repace(self, ms: float | None = None) -> None:
        """Restart the clock at ``ms`` (default: where it is now)."""
        self._clock = (time.monotonic(), int(self._now_ms() if ms is None else ms))
        self._show_pace()
        self._control.set()
        self.dirty()

    async def receive(self) -> None:
        """Show each frame when its time comes; wait at the end."""
        while True:
            self._control.clear()
            if self.paused or self.next >= len(self.tape):
                self._show_pace()
                self.dirty()
                await self._control.wait()
                continue
            wait_s = (self.tape.ms[self.next] - self._now_ms()) / 1000.0 / self.speed
            if wait_s > 0:
                try:
                    async with asyncio.timeout(wait_s):
                        await self._control.wait()
                    continue  # a key changed the pace or the place
                except TimeoutError:
                    pass
            self.on_message(self.tape.messages[self.next])
            self.next += 1
            self._show_pace()

    async def send(self) -> None:
        """A replay sends nothing."""
        await asyncio.Event().wait()

    def seek(self, tick: int) -> None:
        """Show the screen as it was after ``tick`` (clamped to the recording)."""
        target = min(self.tape.index_after(tick), len(self.tape))
        if target < self.next:
            self.model = GameModel(self.tape.welcome)
            self.log = MessageLog(self.model.log)
            self._welcomed(cast(Connection, _Stand(self.tape.welcome)))
            self.log.add("Press ? for help.")  # as PlayApp's start
            self.next = 1
        for i in range(self.next, target):
            self.on_message(self.tape.messages[i])
        self.next = target
        self.animator = Animator()  # what was passed is not animated
        self._repace(self.tape.ms[self.next - 1])

    def on_key(self, key: keys.Key) -> None:
        """The replay's keys; the help, history and menus as in play (what
        they would do is dropped: a replay sends nothing)."""
        if key.char in ("q", "Q") and self.state.mode.kind is keys.InputMode.NORMAL:
            self.finish(0)
        elif key.char == " ":
            now = self._now_ms()
            self.paused = not self.paused
            self._repace(now)
        elif key.char in SPEEDS:
            now = self._now_ms()
            self.speed = SPEEDS[key.char]
            self._repace(now)
        elif key.name in SEEK_KEYS:
            self.seek(self.tape.ticks[self.next - 1] + SEEK_KEYS[key.name or ""])
        elif key.char == "g":
            self.seek(-1)
        elif key.char == "G":
            self.seek(self.tape.ticks[-1])
        else:
            self.translate(key)
        self.dirty()


# ----------------------------------------------------------- finding one


def _http_base(url: str) -> str:
    """The server's HTTP base for a ``ws://``/``wss://``/``http(s)://`` URL."""
    parts = urllib.parse.urlsplit(url)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    if scheme not in ("http", "https"):
        raise RecordingError(f"not a server URL: {url}")
    return f"{scheme}://{parts.netloc}"


def fetch(url: str, what: str) -> bytes:
    """Download recording ``what`` (an id, or a player's name for their
    newest game) from the server at ``url``.

    Raises:
        RecordingError: the server has none, or cannot be reached.
    """
    quoted = urllib.parse.quote(what, safe="")
    address = f"{_http_base(url)}/recordings/{quoted}{SUFFIX}"
    try:
        with urllib.request.urlopen(address, timeout=FETCH_TIMEOUT_S) as answer:
            data = answer.read(MAX_FETCH_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise RecordingError(f"{address}: {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise RecordingError(f"cannot fetch {address}: {exc}") from None
    if len(data) > MAX_FETCH_BYTES:
        raise RecordingError(f"{address}: larger than {MAX_FETCH_BYTES} bytes")
    return bytes(data)


def load(what: str, *, url: str | None = None, directory: Path | None = None) -> Recording:
    """The recording ``what`` names: a file; else, with ``url``, an id or a
    player's name on that server; else one in ``directory`` (a server's
    recordings on this machine), by file name, id or player's name (newest).

    Raises:
        RecordingError: none found, or not a recording.
    """
    path = Path(what)
    if path.is_file():
        return read_recording(path.read_bytes())
    if url is not None:
        return read_recording(fetch(url, what))
    if directory is None:
        raise RecordingError(f"no file {what!r}; name a server with --url")
    named = directory / what
    if named.is_file():
        return read_recording(named.read_bytes())
    newest: tuple[float, Path] | None = None
    for file in directory.glob(f"*{SUFFIX}"):
        stem = file.name[: -len(SUFFIX)]
        name = stem.partition("-")[2].rpartition("-")[0]  # <UTC start>-<name>-<serial>
        if stem == what or name.lower() == what.lower():
            key = (file.stat().st_mtime, file)
            if newest is None or key > newest:
                newest = key
    if newest is None:
        raise RecordingError(f"no recording of {what!r} in {directory}")
    return read_recording(newest[1].read_bytes())


async def _replay(term: Terminal, tape: Tape) -> tuple[int, str]:
    with _terminal_mode(term):
        return await ReplayApp(term, tape).run()


def run_replay(what: str, *, url: str | None = None, directory: Path | None = None) -> int:
    """Replay the recording ``what`` names (see :func:`load`) in this terminal.

    Returns:
        The process exit status: 0 after quitting, 1 when the recording
        cannot be found or read, 2 when standard input/output is not a
        terminal, 130 after Ctrl-C.
    """
    try:
        tape = Tape(load(what, url=url, directory=directory))
    except RecordingError as exc:
        print(f"underhall replay: {clean_text(str(exc))}", file=sys.stderr)
        return 1
    return run_in_terminal("replay", lambda term: _replay(term, tape))
