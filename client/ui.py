"""The terminal front end: ``underhall play``.

The screen is drawn (by :mod:`client.render`) from a
:class:`~client.model.GameModel` that only the server's messages change ("the
client renders what the server says"); keys become :mod:`client.keys`
actions, which become protocol commands. Nothing here decides a game rule.

Concurrency: everything runs on one asyncio loop. The terminal's input
descriptor is watched with ``loop.add_reader`` and drained with
``term.inkey(timeout=0)``, so reading keys never blocks the loop (a lone
Escape waits at most 50 ms for the rest of a sequence). One task receives
server messages into the model (and reconnects when the link drops), one
sends the commands keys produced in order, and one repaints at most
:data:`MAX_FPS` times a second, only when something changed, and only the
rows that changed. That repaint task also drives ray and projectile
animations (:mod:`client.animate`) frame by frame; keys keep working while
they play, and the log lines of their tick appear once they have played.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import ssl
import sys
import time
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

from blessed import Terminal

from client import keys, menus
from client.animate import Animator, tracks_from_events
from client.chatline import chat_from_line, describe_chat_line
from client.connection import Connection, ConnectionClosed, load_token, save_token
from client.model import GameModel
from client.render import MessageLog, Screen, ViewState
from client.safe_text import clean_message, clean_text
from client.text import describe_error, describe_event, describe_reject
from client.travel import Walk
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import (
    ChatOut,
    Delta,
    Error,
    Info,
    Look,
    Reject,
    Snapshot,
    Watchers,
    Welcome,
)

__all__ = [
    "MAX_FPS",
    "MAX_IN_FLIGHT",
    "RECONNECT_DELAYS",
    "STOP_TIMEOUT",
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

REPEATABLE = frozenset({"move", "wait", "rest", "pickup"})
"""Commands a held key repeats: only these are dropped past :data:`MAX_IN_FLIGHT`
(a command chosen through a menu is always sent)."""

IN_FLIGHT_EXPIRY = 3.0
"""Seconds after which an unanswered command stops counting as in flight."""

STOP_TIMEOUT = 2.0
"""Seconds the session waits for its tasks to stop after quitting."""

RECONNECT_DELAYS: tuple[float, ...] = (0.5, 1.0, 1.5, 2.0, 2.5, 2.5)
"""Seconds to wait before each reconnection attempt (about 10 s in all)."""

_ERROR_CODES = frozenset(code.value for code in ErrorCode)


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
        self.model = GameModel(clean_message(conn.welcome))
        self.log = MessageLog(self.model.log)
        self.state = ViewState(mode=keys.Mode())
        self.screen = Screen(term)
        self._dirty = asyncio.Event()
        self._done: asyncio.Future[tuple[int, str]] = asyncio.get_running_loop().create_future()
        self._tick_seen = time.monotonic()
        self._outbox: asyncio.Queue[keys.Command | keys.ChatSend | keys.LookAt] = asyncio.Queue()
        self.animator = Animator()
        self._pending: dict[int, float] = {}  # seq -> monotonic send time
        self._dead = False
        self._sending = 0  # actions taken from the outbox whose send has not returned
        self.walk: Walk | None = None  # a run, travel or exploration in progress
        self._welcomed(conn)
        self.log.add("Press ? for help.")

    # state changes -------------------------------------------------------

    def _welcomed(self, conn: Connection) -> None:
        welcome = clean_message(conn.welcome)
        save_token(self.url, self.name, welcome.token)
        if welcome.motd:
            self.log.add(welcome.motd)
        self.log.add("Welcome back." if welcome.resumed else "A new adventurer arrives.")

    def dirty(self) -> None:
        self._dirty.set()

    def finish(self, status: int, message: str = "") -> None:
        """End the session with an exit status and a line for the shell."""
        if not self._done.done():
            self._done.set_result((status, message))
        self.dirty()  # wakes the repaint task, which then ends

    def say(self, line: str) -> None:
        """Add a log line, after the lines held back for a playing animation."""
        if self.animator.held or self.animator.busy(time.monotonic()):
            self.animator.hold(line)
        else:
            self.log.add(line)

    def on_message(self, msg: object) -> None:
        """Apply one server message to the model and the log.

        Every string in it is cleaned of terminal controls first
        (:func:`client.safe_text.clean_message`): the server is not trusted
        with the player's terminal.
        """
        msg = clean_message(msg)
        if isinstance(msg, (Welcome, Snapshot, Delta)):
            events = self.model.apply(msg)
            self._answered(self.model.ack)
            self._check_death()
            tracks = tracks_from_events(events, self.model)
            if tracks:
                self.animator.add(tracks, time.monotonic())
            for ev in events:
                line = describe_event(ev, self.model)
                if line:
                    self.say(line)
                    if not self._own_door(ev):
                        self.stop_walk()  # something happened: a walk stops
            self._tick_seen = time.monotonic()
            self._advance_walk()
        elif isinstance(msg, Info):
            self.model.apply(msg)
        elif isinstance(msg, Reject):
            self._answered(msg.seq)
            self.stop_walk()
            self.say(describe_reject(msg.reason))
        elif isinstance(msg, ChatOut):
            self.say(describe_chat_line(msg))
        elif isinstance(msg, Watchers):
            self.say(f"{msg.n} watching you." if msg.n else "Nobody is watching you.")
        elif isinstance(msg, Error):
            line = describe_error(msg.code, msg.msg)
            if msg.fatal:
                self.finish(1, line)
            else:
                self.say(line)
        self.dirty()

    def _check_death(self) -> None:
        """On dying, and again on coming back: close any menu, prompt or
        cursor (a chat line being typed stays) and drop the actions still
        queued, so nothing typed in one life acts in the next."""
        dead = bool(self.model.me.get("dead"))
        if dead != self._dead:
            if self.state.mode.kind is not keys.InputMode.CHAT:
                self.state.mode = keys.Mode()
            self.stop_walk()
            self._drop_queued()
        self._dead = dead

    def _drop_queued(self) -> None:
        """Forget every action not sent yet."""
        while not self._outbox.empty():
            self._outbox.get_nowait()

    # running, travel and exploring -----------------------------------------

    def _own_door(self, ev: list[object]) -> bool:
        """A ``door`` event of our own (a walk opens doors on its way)."""
        return len(ev) > 1 and ev[0] == "door" and ev[1] == self.model.player_id

    def start_walk(self, action: keys.Run | keys.Travel | keys.Explore) -> None:
        """Begin a run, travel or exploration (:mod:`client.travel`)."""
        if isinstance(action, keys.Run):
            walk = Walk("run", direction=action.d)
        elif isinstance(action, keys.Travel):
            walk = Walk("travel", goal=(action.x, action.y))
        else:
            walk = Walk("explore")
        self.walk = walk.start(self.model)
        self._advance_walk()

    def stop_walk(self) -> None:
        """Stop the walk in progress, if any (a step already sent still happens)."""
        self.walk = None

    def _advance_walk(self) -> None:
        """Queue the walk's next step once the last one has been answered."""
        walk = self.walk
        if walk is None or self._in_flight() > 0:
            return
        step = walk.next_step(self.model)
        if step.direction is None:
            self.walk = None
            if step.why:
                self.say(step.why)
            return
        self._outbox.put_nowait(keys.Command("move", step.direction))

    # keyboard ------------------------------------------------------------

    def on_readable(self) -> None:
        """Drain every key the terminal has ready (never blocks long)."""
        try:
            self._read_keys()
        # a bug: end the session and report it once the terminal is restored
        except Exception as exc:  # noqa: BLE001
            self._fail(exc)

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
        if self.walk is not None:  # any key stops a walk, and does nothing else
            self.stop_walk()
            self.dirty()
            return
        action = self.translate(key)
        if action is None:
            pass
        elif isinstance(action, (keys.Command, keys.Run, keys.Travel, keys.Explore)) and self._dead:
            self.say("You are dead; wait for your respawn.")
        elif isinstance(action, (keys.Run, keys.Travel, keys.Explore)):
            self.start_walk(action)
        elif (
            isinstance(action, keys.Command)
            and action.c in REPEATABLE
            and self._in_flight() >= MAX_IN_FLIGHT
        ):
            pass  # dropped: the server has not caught up with earlier keys
        elif isinstance(action, (keys.Command, keys.ChatSend, keys.LookAt)):
            self._outbox.put_nowait(action)
        self.dirty()

    def translate(self, key: keys.Key) -> keys.Action | None:
        """Read ``key`` in the current input mode and do what needs no
        server: quit, a line for the log, a look at a cell on the screen.
        Return any other action it asks for (for the caller to send, or to
        drop: a spectator and a replay send nothing), else None."""
        ctx = menus.context(self.model)
        self.state.mode, action = keys.translate(self.state.mode, key, ctx)
        if isinstance(action, keys.Quit):
            self.finish(0)
        elif isinstance(action, keys.Say):
            self.say(action.text)
        elif isinstance(action, keys.LookAt) and action.id is None:
            self.say(menus.cell_description(self.model, action.x, action.y))
        else:
            return action
        return None

    def _answered(self, seq: int) -> None:
        """Commands up to ``seq`` were carried out or rejected."""
        for sent in [s for s in self._pending if s <= seq]:
            del self._pending[sent]

    def _in_flight(self) -> int:
        """Commands queued here or sent and unanswered (recent ones only)."""
        cutoff = time.monotonic() - IN_FLIGHT_EXPIRY
        for seq in [s for s, at in self._pending.items() if at < cutoff]:
            del self._pending[seq]
        return len(self._pending) + self._outbox.qsize() + self._sending

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
            self._sending += 1
            try:
                if isinstance(action, keys.Command):
                    seq = await conn.command(
                        action.c,
                        action.d,
                        item=action.item,
                        at=action.at,
                        spell=action.spell,
                        opt=action.opt,
                    )
                    self._pending[seq] = time.monotonic()
                elif isinstance(action, keys.LookAt):
                    if action.id is not None:
                        await conn.send(Look(action.id))
                else:
                    chat = chat_from_line(action.text)
                    if isinstance(chat, str):
                        self.say(chat)
                        self.dirty()
                    else:
                        await conn.send(chat)
            except ConnectionClosed:
                self.stop_walk()  # the receive task notices and reconnects
            finally:
                self._sending -= 1

    async def receive(self) -> None:
        """Feed server messages into the model; reconnect when the link drops."""
        while True:
            conn = self.conn
            assert conn is not None
            try:
                self.on_message(await conn.recv())
            except ProtocolError as exc:  # that frame is dropped; the session goes on
                self.log.add(f"Bad message from the server ({clean_text(str(exc))}).")
                self.dirty()
            except ConnectionClosed as exc:
                if self._done.done() or not await self.reconnect(exc.reason):
                    return

    again = "reconnecting"
    """What the prompt line says it does while the connection is lost."""

    async def open_again(self) -> Connection:
        """A new connection for :meth:`reconnect`: the character again, with
        its saved token.

        Raises:
            ConnectionClosed: as :meth:`Connection.open`.
        """
        return await Connection.open(
            self.url,
            self.name,
            cls_key=self.cls_key,
            token=load_token(self.url, self.name),
            open_timeout=2.0,
        )

    async def reconnect(self, reason: str) -> bool:
        """Retry (:meth:`open_again`) for about 10 s; False (and finish) if in vain."""
        self.conn = None
        self.state.note = f"connection lost — {self.again}…"
        self.log.add("Connection lost.")
        self.dirty()
        last = reason
        for delay in RECONNECT_DELAYS:
            await asyncio.sleep(delay)
            try:
                conn = await self.open_again()
            except ConnectionClosed as exc:
                last = describe_open_failure(self.url, exc)
                continue
            self.conn = conn
            self._pending.clear()
            self.stop_walk()
            self.state.mode = keys.Mode()
            self.model.apply(clean_message(conn.welcome))
            self._welcomed(conn)
            self.state.note = ""
            self.log.add("Reconnected.")
            self.dirty()
            return True
        self.finish(1, f"connection to {self.url} lost; gave up {self.again} ({last})")
        return False

    def _estimated_tick(self) -> int:
        rate = max(1, self.model.tick_rate)
        return self.model.tick + int((time.monotonic() - self._tick_seen) * rate)

    async def draw(self) -> None:
        """Repaint when dirty, at most MAX_FPS times a second, or when the
        next animation frame is due (frames may come faster than MAX_FPS).

        Ends by itself once the session is finished. The wait for the next
        change is ``asyncio.timeout`` around ``Event.wait``, never
        ``asyncio.wait_for``: on Python 3.11 ``wait_for`` can swallow the
        cancellation that stops this task when the event fires in the same
        loop iteration (CPython gh-86296), which froze the client on exit.
        """
        period = 1.0 / MAX_FPS
        while not self._done.done():
            dead = bool(self.model.me.get("dead"))
            frame = self.animator.next_frame(time.monotonic())
            # while dead, the respawn countdown needs a clock-driven repaint
            timeout = min(t for t in (frame, 0.5 if dead else None, 3600.0) if t is not None)
            if frame is None or frame > 0:
                await self._wait_dirty(timeout)
            if self._done.done():
                return
            self._dirty.clear()
            self.paint_now()
            busy = self.animator.busy(time.monotonic())
            await asyncio.sleep(
                min(period, self.animator.next_frame(time.monotonic()) or period)
                if busy
                else period
            )

    async def _wait_dirty(self, timeout: float) -> None:
        """Wait until something changed or ``timeout`` seconds passed."""
        try:
            async with asyncio.timeout(timeout):
                await self._dirty.wait()
        except TimeoutError:
            pass

    def paint_now(self) -> None:
        """Draw one frame: release held log lines, then repaint what changed."""
        now = time.monotonic()
        for line in self.animator.release(now):
            self.log.add(line)
        self.state.marks = self.animator.marks(now)
        self.state.est_tick = self._estimated_tick()
        self.screen.paint(self.screen.rows(self.model, self.state, self.log))

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
            # bounded: a task that ignored its cancellation must not hold the exit
            await asyncio.wait(tasks, timeout=STOP_TIMEOUT)
            if self.conn is not None:
                with contextlib.suppress(Exception):
                    async with asyncio.timeout(1.0):
                        await self.conn.close()

    def _task_done(self, task: asyncio.Task[None]) -> None:
        """A background task ended: pass its failure on to :meth:`run`."""
        if task.cancelled() or self._done.done():
            return
        exc = task.exception()
        if exc is not None:
            self._fail(exc)

    def _fail(self, exc: BaseException) -> None:
        """End the session with a bug's exception (re-raised by :meth:`run`)."""
        if not self._done.done():
            self._done.set_exception(exc)
        self.dirty()


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

    "cannot reach URL: connection refused" when nothing answered (with the
    reason whatever it is, and a hint when a ``wss://`` URL meets a plain
    server); "URL refused us: ..." when the server turned the ``hello``
    down, naming its error code at most once.
    """
    cause = exc.__cause__
    if url.startswith("wss:") and isinstance(cause, (ssl.SSLError, ConnectionResetError, EOFError)):
        detail = str(cause) or type(cause).__name__
        return (
            f"cannot reach {url}: the TLS handshake failed ({detail}); "
            "does the server speak plain ws:// ?"
        )
    if isinstance(cause, ConnectionRefusedError):
        return f"cannot reach {url}: connection refused"
    if isinstance(cause, socket.gaierror):
        return f"cannot reach {url}: unknown host"
    if isinstance(cause, TimeoutError) and exc.reason.startswith("cannot reach"):
        return f"cannot reach {url}: timed out"
    if exc.reason.startswith(("cannot reach", "no welcome")):
        return exc.reason
    code, _, detail = exc.reason.partition(":")
    if code in _ERROR_CODES:
        return f"{url} refused us: {describe_error(code, detail.strip())}"
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
    return run_in_terminal("play", lambda term: _play(term, url, name, cls_key))


def run_in_terminal(
    command: str, session: Callable[[Terminal], Coroutine[Any, Any, tuple[int, str]]]
) -> int:
    """Run ``session`` (``play``, ``watch`` or ``replay``) in this terminal
    and print the line it ended with (to stderr when it failed).

    Returns:
        The session's exit status; 2 when standard input/output is not a
        terminal, 130 after Ctrl-C.
    """
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(f"underhall {command} needs an interactive terminal", file=sys.stderr)
        return 2
    term = Terminal()
    try:
        status, message = asyncio.run(session(term))
    except KeyboardInterrupt:
        return 130
    if message:
        print(clean_text(message), file=sys.stderr if status else sys.stdout)
    return status
