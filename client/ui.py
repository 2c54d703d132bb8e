"""The terminal front end: ``underhall play``.

The screen is drawn from a :class:`~client.model.GameModel` that only the
server's messages change ("the client renders what the server says"); keys
become :mod:`client.keys` actions, which become protocol commands. Nothing
here decides a game rule.

Concurrency: everything runs on one asyncio loop. The terminal's input
descriptor is watched with ``loop.add_reader`` and drained with
``term.inkey(timeout=0)``, so reading keys never blocks the loop (a lone
Escape waits at most 50 ms for the rest of a sequence). One task receives
server messages into the model (and reconnects when the link drops), one
sends the commands keys produced in order, and one repaints at most
:data:`MAX_FPS` times a second, only when something changed, and only the
rows that changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import sys
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from blessed import Terminal

from client import keys
from client.connection import Connection, ConnectionClosed, load_token, save_token
from client.model import ActorView, GameModel
from client.text import describe_chat, describe_error, describe_event, describe_reject
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import Chat, ChatOut, Delta, Error, Reject, Snapshot, Welcome

__all__ = [
    "MAX_FPS",
    "MAX_IN_FLIGHT",
    "RECONNECT_DELAYS",
    "MessageLog",
    "PlayApp",
    "Screen",
    "ViewState",
    "describe_open_failure",
    "run_play",
]

MAX_FPS = 20
"""Most repaints per second."""

MAX_IN_FLIGHT = 2
"""Commands sent but not yet answered (``ack``/``reject``) before further
movement keys are dropped, so a held key does not pile up actions that run on
after it is released (the server queues up to 8)."""

IN_FLIGHT_EXPIRY = 3.0
"""Seconds after which an unanswered command stops counting as in flight."""

RECONNECT_DELAYS: tuple[float, ...] = (0.5, 1.0, 1.5, 2.0, 2.5, 2.5)
"""Seconds to wait before each reconnection attempt (about 10 s in all)."""

MIN_WIDTH, MIN_HEIGHT = 40, 12
"""Smallest terminal the game screen is drawn in, in cells."""

_ERROR_CODES = frozenset(code.value for code in ErrorCode)
_UNKNOWN = 255
_FALLBACK_COLOUR = "white"
_DIM = "bright_black"
_COLOURS = frozenset(
    {
        "white",
        "bright_black",
        "red",
        "bright_red",
        "green",
        "bright_green",
        "yellow",
        "bright_yellow",
        "blue",
        "bright_blue",
        "magenta",
        "bright_magenta",
        "cyan",
        "bright_cyan",
        "black",
        "bright_white",
    }
)


# --- message log -----------------------------------------------------------


class MessageLog:
    """Appends lines to a display deque (the model's ``log``).

    A line equal to the previous one is not repeated: the last entry becomes
    ``"<line> (xN)"``.
    """

    def __init__(self, lines: deque[str]) -> None:
        self.lines = lines
        self._last = ""
        self._count = 0

    def add(self, line: str) -> None:
        if self._count and self.lines and line == self._last:
            self._count += 1
            self.lines[-1] = f"{line} (x{self._count})"
        else:
            self._last, self._count = line, 1
            self.lines.append(line)

    def last(self, n: int) -> list[str]:
        """The newest ``n`` lines, oldest first."""
        if n <= 0:
            return []
        return list(self.lines)[-n:]


# --- drawing ---------------------------------------------------------------


@dataclass(slots=True)
class ViewState:
    """What the screen shows besides the model."""

    mode: keys.Mode
    note: str = ""  # connection status, shown on the prompt line
    est_tick: int = 0  # the server's tick estimated from the local clock


class Screen:
    """Turns the model and the view state into terminal rows.

    Rows are full-width strings with blessed escape sequences; :meth:`rows`
    is a pure function of its arguments (and the terminal's size), and
    :meth:`paint` writes only the rows that differ from the last frame.
    """

    def __init__(self, term: Terminal) -> None:
        self.term = term
        self._previous: list[str] = []
        self._size = (0, 0)
        self._styles: dict[str, str] = {}

    def style(self, colour: str) -> str:
        """The escape sequence for a colour name (unknown names -> white)."""
        seq = self._styles.get(colour)
        if seq is None:
            name = colour if colour in _COLOURS else _FALLBACK_COLOUR
            seq = str(getattr(self.term, name))
            self._styles[colour] = seq
        return seq

    # layout ----------------------------------------------------------------

    def log_lines(self) -> int:
        return 5 if self.term.height >= 24 else 2

    def map_rows(self) -> int:
        """Rows for the map: all but status, log and prompt lines."""
        return max(0, self.term.height - self.log_lines() - 2)

    @staticmethod
    def offset(centre: int, view: int, size: int) -> int:
        """First level cell shown so that ``centre`` is centred, clamped."""
        if size <= view:
            return 0
        return min(max(0, centre - view // 2), size - view)

    # rows ------------------------------------------------------------------

    def status_row(self, model: GameModel, state: ViewState) -> str:
        term = self.term
        me = model.me
        if not me:
            return term.bold("Waiting for the server…")
        hp, max_hp = int(me.get("hp", 0)), int(me.get("max_hp", 0))
        hp_style = term.bright_red if max_hp and hp * 4 <= max_hp else term.bright_green
        parts = [
            term.bold(f"{me.get('name', model.name)}"),
            f"{me.get('class', '')} L{me.get('level', 1)}",
            "HP " + hp_style(f"{hp}/{max_hp}"),
            f"EN {me.get('en', 0)}/{me.get('max_en', 0)}",
            f"Depth {me.get('depth', model.depth)}",
            f"Tick {model.tick}",
        ]
        if me.get("dead"):
            rate = max(1, model.tick_rate)
            left = max(0, int(me.get("respawn", 0)) - state.est_tick)
            secs = (left + rate - 1) // rate
            parts.append(term.bold_red(f"DEAD — respawn in {secs}s"))
        return "  ".join(parts)

    def map_row_cells(
        self,
        model: GameModel,
        y: int,
        x0: int,
        width: int,
        actors: dict[tuple[int, int], ActorView],
    ) -> str:
        """One row of the level map from cell ``x0``, ``width`` cells wide."""
        term = self.term
        if not (0 <= y < model.height) or model.known is None:
            return ""
        table = model.terrain_table
        out: list[str] = []
        current = ""
        for x in range(x0, min(x0 + width, model.width)):
            code = int(model.known[y, x])
            if code == _UNKNOWN or code >= len(table):
                glyph, style = " ", ""
            else:
                entry = table[code]
                glyph, colour = str(entry[2]), str(entry[3])
                in_view = bool(model.visible[y, x])
                key = model.objs.get((x, y))
                if key:
                    item = model.items.get(key)
                    if item:
                        glyph, colour = str(item[1]), str(item[2])
                actor = actors.get((x, y)) if in_view else None
                if actor is not None:
                    glyph, colour = self.actor_glyph(model, actor)
                if actor is not None and actor.is_self:
                    style = str(term.reverse) + self.style(colour)
                else:
                    style = self.style(colour if in_view else _DIM)
            if style != current:
                out.append(str(term.normal) + style if current else style)
                current = style
            out.append(glyph[:1] or " ")
        if current:
            out.append(str(term.normal))
        return "".join(out)

    @staticmethod
    def actor_glyph(model: GameModel, actor: ActorView) -> tuple[str, str]:
        """Glyph and colour name for an actor, from ``welcome.kinds``."""
        entry = model.kinds.get(actor.kind) or model.kinds.get("player" if actor.is_player else "")
        glyph, colour = ("@", _FALLBACK_COLOUR) if entry is None else (str(entry[1]), str(entry[2]))
        if actor.is_player:
            glyph = "@"
        return glyph, colour

    def help_rows(self) -> list[str]:
        rows = [self.term.bold(keys.HELP_LINES[0])]
        rows.extend(keys.HELP_LINES[1:])
        return rows

    def rows(self, model: GameModel, state: ViewState, log: MessageLog) -> list[str]:
        """The whole frame, one string per terminal row."""
        term = self.term
        width, height = term.width, term.height
        if width < MIN_WIDTH or height < MIN_HEIGHT:
            msg = f"Terminal too small ({width}x{height}); need {MIN_WIDTH}x{MIN_HEIGHT}."
            return [term.truncate(msg, width)] + [""] * (height - 1)
        out: list[str] = [term.truncate(self.status_row(model, state), width)]
        map_h = self.map_rows()
        if state.mode.kind is keys.InputMode.HELP:
            body = [term.truncate(line, width) for line in self.help_rows()]
            out.extend((body + [""] * map_h)[:map_h])
        else:
            me_x, me_y = int(model.me.get("x", 0)), int(model.me.get("y", 0))
            x0 = self.offset(me_x, width, model.width)
            y0 = self.offset(me_y, map_h, model.height)
            actors: dict[tuple[int, int], ActorView] = {}
            for view in sorted(model.actors.values(), key=lambda a: (a.is_self, a.is_player)):
                actors[(view.x, view.y)] = view
            for j in range(map_h):
                out.append(self.map_row_cells(model, y0 + j, x0, width, actors))
        n_log = self.log_lines()
        lines = log.last(n_log)
        lines = [""] * (n_log - len(lines)) + lines
        out.extend(term.truncate(line, width) for line in lines)
        prompt = state.note or keys.prompt_text(state.mode) or "? help   q quit"
        if state.note:
            prompt = term.bold_yellow(prompt)
        elif state.mode.kind is keys.InputMode.NORMAL:
            prompt = term.bright_black(prompt)
        out.append(term.truncate(prompt, width))
        return out[:height]

    def paint(self, rows: list[str]) -> None:
        """Write the rows that changed since the last paint, then flush."""
        term = self.term
        size = (term.width, term.height)
        parts: list[str] = []
        if size != self._size:
            parts.append(str(term.normal) + str(term.clear))
            self._previous = []
            self._size = size
        for y, row in enumerate(rows):
            if y < len(self._previous) and self._previous[y] == row:
                continue
            parts.append(term.move_yx(y, 0) + row + str(term.normal) + str(term.clear_eol))
        self._previous = list(rows)
        if parts:
            term.stream.write("".join(parts))
            term.stream.flush()

    def invalidate(self) -> None:
        """Forget the last frame so the next paint redraws everything."""
        self._size = (0, 0)


# --- the application -------------------------------------------------------


class PlayApp:
    """One play session: connection, model, keys and screen."""

    def __init__(
        self, term: Terminal, url: str, name: str, cls_key: str | None, conn: Connection
    ) -> None:
        self.term = term
        self.url = url
        self.name = name
        self.cls_key = cls_key
        self.conn: Connection | None = conn
        self.model = GameModel(conn.welcome)
        self.log = MessageLog(self.model.log)
        self.state = ViewState(mode=keys.Mode())
        self.screen = Screen(term)
        self._dirty = asyncio.Event()
        self._done: asyncio.Future[tuple[int, str]] = asyncio.get_running_loop().create_future()
        self._tick_seen = time.monotonic()
        self._outbox: asyncio.Queue[keys.Command | keys.ChatSend] = asyncio.Queue()
        self._pending: dict[int, float] = {}  # seq -> monotonic send time
        self._welcomed(conn)
        self.log.add("Press ? for help.")

    # state changes -------------------------------------------------------

    def _welcomed(self, conn: Connection) -> None:
        welcome = conn.welcome
        save_token(self.url, self.name, welcome.token)
        if welcome.motd:
            self.log.add(welcome.motd)
        self.log.add("Welcome back." if welcome.resumed else "A new adventurer arrives.")

    def dirty(self) -> None:
        self._dirty.set()

    def finish(self, status: int, message: str = "") -> None:
        if not self._done.done():
            self._done.set_result((status, message))

    def on_message(self, msg: object) -> None:
        """Apply one server message to the model and the log."""
        if isinstance(msg, (Welcome, Snapshot, Delta)):
            events = self.model.apply(msg)
            self._answered(self.model.ack)
            for ev in events:
                line = describe_event(ev, self.model)
                if line:
                    self.log.add(line)
            self._tick_seen = time.monotonic()
        elif isinstance(msg, Reject):
            self._answered(msg.seq)
            self.log.add(describe_reject(msg.reason))
        elif isinstance(msg, ChatOut):
            self.log.add(describe_chat(msg.sender, msg.text))
        elif isinstance(msg, Error):
            line = describe_error(msg.code, msg.msg)
            if msg.fatal:
                self.finish(1, line)
            else:
                self.log.add(line)
        self.dirty()

    # keyboard ------------------------------------------------------------

    def on_readable(self) -> None:
        """Drain every key the terminal has ready (never blocks long)."""
        try:
            self._read_keys()
        # a bug: end the session and report it once the terminal is restored
        except Exception as exc:  # noqa: BLE001
            if not self._done.done():
                self._done.set_exception(exc)

    def _read_keys(self) -> None:
        while True:
            try:
                ks = self.term.inkey(timeout=0, esc_delay=0.05)
            except EOFError:
                self.finish(1, "the terminal closed")
                return
            if not ks:
                return
            self.on_key(keys.Key(str(ks), ks.name))

    def on_key(self, key: keys.Key) -> None:
        self.state.mode, action = keys.translate(self.state.mode, key)
        if isinstance(action, keys.Quit):
            self.finish(0)
        elif isinstance(action, keys.Command) and self._in_flight() >= MAX_IN_FLIGHT:
            pass  # dropped: the server has not caught up with earlier keys
        elif action is not None:
            self._outbox.put_nowait(action)
        self.dirty()

    def _answered(self, seq: int) -> None:
        """Commands up to ``seq`` were carried out or rejected."""
        for sent in [s for s in self._pending if s <= seq]:
            del self._pending[sent]

    def _in_flight(self) -> int:
        """Commands queued here or sent and unanswered (recent ones only)."""
        cutoff = time.monotonic() - IN_FLIGHT_EXPIRY
        for seq in [s for s, at in self._pending.items() if at < cutoff]:
            del self._pending[seq]
        return len(self._pending) + self._outbox.qsize()

    # tasks ---------------------------------------------------------------

    async def send(self) -> None:
        """Send queued actions in key-press order."""
        while True:
            action = await self._outbox.get()
            conn = self.conn
            if conn is None:
                self.log.add("Not connected; that key was ignored.")
                self.dirty()
                continue
            try:
                if isinstance(action, keys.Command):
                    seq = await conn.command(action.c, action.d)
                    self._pending[seq] = time.monotonic()
                else:
                    await conn.send(Chat(action.text))
            except ConnectionClosed:
                pass  # the receive task notices and reconnects

    async def receive(self) -> None:
        """Feed server messages into the model; reconnect when the link drops."""
        while True:
            conn = self.conn
            assert conn is not None
            try:
                self.on_message(await conn.recv())
            except ProtocolError as exc:  # that frame is dropped; the session goes on
                self.log.add(f"Bad message from the server ({exc}).")
                self.dirty()
            except ConnectionClosed as exc:
                if self._done.done() or not await self.reconnect(exc.reason):
                    return

    async def reconnect(self, reason: str) -> bool:
        """Retry with the saved token for about 10 s; False (and finish) if in vain."""
        self.conn = None
        self.state.note = "connection lost — reconnecting…"
        self.log.add("Connection lost.")
        self.dirty()
        last = reason
        for delay in RECONNECT_DELAYS:
            await asyncio.sleep(delay)
            try:
                conn = await Connection.open(
                    self.url,
                    self.name,
                    cls_key=self.cls_key,
                    token=load_token(self.url, self.name),
                    open_timeout=2.0,
                )
            except ConnectionClosed as exc:
                last = describe_open_failure(self.url, exc)
                continue
            self.conn = conn
            self._pending.clear()
            self.model.apply(conn.welcome)
            self._welcomed(conn)
            self.state.note = ""
            self.log.add("Reconnected.")
            self.dirty()
            return True
        self.finish(1, f"connection to {self.url} lost; gave up reconnecting ({last})")
        return False

    def _estimated_tick(self) -> int:
        rate = max(1, self.model.tick_rate)
        return self.model.tick + int((time.monotonic() - self._tick_seen) * rate)

    async def draw(self) -> None:
        """Repaint when dirty, at most MAX_FPS times a second."""
        period = 1.0 / MAX_FPS
        while True:
            dead = bool(self.model.me.get("dead"))
            try:
                # while dead, the respawn countdown needs a clock-driven repaint
                await asyncio.wait_for(self._dirty.wait(), timeout=0.5 if dead else None)
            except TimeoutError:
                pass
            self._dirty.clear()
            self.state.est_tick = self._estimated_tick()
            self.screen.paint(self.screen.rows(self.model, self.state, self.log))
            await asyncio.sleep(period)

    def on_resize(self) -> None:
        self.screen.invalidate()
        self.dirty()

    async def run(self) -> tuple[int, str]:
        """Play until quit or a fatal error; return (exit status, message)."""
        loop = asyncio.get_running_loop()
        fd = _input_fd()
        loop.add_reader(fd, self.on_readable)
        with contextlib.suppress(NotImplementedError, AttributeError, ValueError):
            loop.add_signal_handler(signal.SIGWINCH, self.on_resize)
        tasks = [
            loop.create_task(self.receive()),
            loop.create_task(self.send()),
            loop.create_task(self.draw()),
        ]
        for task in tasks:
            task.add_done_callback(self._task_done)
        self.dirty()
        try:
            return await self._done
        finally:
            loop.remove_reader(fd)
            with contextlib.suppress(NotImplementedError, AttributeError, ValueError):
                loop.remove_signal_handler(signal.SIGWINCH)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if self.conn is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self.conn.close(), timeout=1.0)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        """A background task ended: pass its failure on to :meth:`run`."""
        if task.cancelled() or self._done.done():
            return
        exc = task.exception()
        if exc is not None:
            self._done.set_exception(exc)


def _input_fd() -> int:
    stream = sys.__stdin__
    if stream is None:
        raise OSError("no standard input")
    return stream.fileno()


@contextlib.contextmanager
def _terminal_mode(term: Terminal) -> Iterator[None]:
    """Full screen, cbreak and hidden cursor; all restored on any exit."""
    with term.fullscreen(), term.cbreak(), term.hidden_cursor():
        try:
            yield
        finally:
            term.stream.write(str(term.normal))
            term.stream.flush()


def describe_open_failure(url: str, exc: ConnectionClosed) -> str:
    """One line saying why :meth:`Connection.open` failed.

    "cannot reach URL: connection refused" when nothing answered; "URL
    refused us: ..." when the server turned the ``hello`` down.
    """
    cause = exc.__cause__
    if isinstance(cause, ConnectionRefusedError):
        return f"cannot reach {url}: connection refused"
    if isinstance(cause, socket.gaierror):
        return f"cannot reach {url}: unknown host"
    if isinstance(cause, TimeoutError) and exc.reason.startswith("cannot reach"):
        return f"cannot reach {url}: timed out"
    if exc.reason.startswith(("cannot reach", "no welcome")):
        return exc.reason
    code = exc.reason.split(":", 1)[0]
    if code in _ERROR_CODES:
        return f"{url} refused us: {describe_error(code, exc.reason)}"
    return f"cannot play on {url}: {exc.reason}"


async def _play(term: Terminal, url: str, name: str, cls_key: str | None) -> tuple[int, str]:
    try:
        conn = await Connection.open(url, name, cls_key=cls_key, token=load_token(url, name))
    except ConnectionClosed as exc:
        return 1, describe_open_failure(url, exc)
    with _terminal_mode(term):
        app = PlayApp(term, url, name, cls_key, conn)
        return await app.run()


def run_play(url: str, name: str, *, cls_key: str | None = None) -> int:
    """Play on the server at ``url`` as ``name`` in this terminal.

    Args:
        url: The server's websocket URL, e.g. ``ws://127.0.0.1:8765``.
        name: The character's name; its token (saved by an earlier session
            for this URL and name) resumes it.
        cls_key: Class for a new character (``welcome.classes``), or None
            for the server's default.

    Returns:
        The process exit status: 0 after quitting, 1 when the server cannot
        be reached, refuses us or the connection is lost for good, 2 when
        standard input/output is not a terminal, 130 after Ctrl-C. The
        terminal is restored in every case; a reason is printed to stderr.
    """
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print("underhall play needs an interactive terminal", file=sys.stderr)
        return 2
    term = Terminal()
    try:
        status, message = asyncio.run(_play(term, url, name, cls_key))
    except KeyboardInterrupt:
        return 130
    if message:
        print(message, file=sys.stderr if status else sys.stdout)
    return status
