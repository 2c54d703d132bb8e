"""Ray and projectile animations for the terminal client.

A ``ray`` event (rays and beams) or a ``fly`` event (a projectile's cells this
tick) becomes a :class:`Track`: the cells to draw, one per frame. The
:class:`Animator` plays its tracks one after another against a clock the
caller passes in (``now``, seconds), so it is pure and testable; the UI's
repaint task asks it what to draw (:meth:`Animator.marks`) and when the next
frame is due (:meth:`Animator.next_frame`), and never waits on it: keys keep
working while a ray flies.

Timing: :data:`CELL_S` per cell, at most :data:`MAX_TRACK_S` per track; a
finished ray stays on screen for :data:`LINGER_S`. Too many tracks at once
(a crowded fight) are skipped rather than delayed: at most
:data:`MAX_QUEUED` wait.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from client.model import GameModel

__all__ = [
    "CELL_S",
    "LINGER_S",
    "MAX_QUEUED",
    "MAX_TRACK_S",
    "Animator",
    "Mark",
    "Track",
    "damage_colour",
    "ray_glyph",
    "tracks_from_events",
]

CELL_S = 0.035
"""Seconds per cell of a ray or projectile."""

MAX_TRACK_S = 0.5
"""Longest a single track plays, in seconds (long rays go faster)."""

LINGER_S = 0.12
"""Seconds a finished ray stays drawn before it fades."""

MAX_QUEUED = 4
"""Tracks waiting at most; older ones are dropped when more arrive."""

Cell = tuple[int, int]

_COLOURS: tuple[tuple[str, str], ...] = (
    ("fire", "bright_red"), ("lava", "red"), ("plasma", "bright_red"),
    ("cold", "bright_cyan"), ("frost", "bright_cyan"), ("ice", "bright_cyan"),
    ("lightning", "bright_yellow"), ("electric", "bright_yellow"), ("shock", "bright_yellow"),
    ("acid", "bright_green"), ("poison", "green"), ("sleep", "bright_blue"),
    ("magic", "bright_magenta"), ("missile", "bright_magenta"), ("force", "bright_magenta"),
    ("death", "bright_black"), ("disintegr", "bright_black"), ("dark", "bright_black"),
    ("nether", "bright_black"), ("light", "bright_white"), ("holy", "bright_white"),
    ("dig", "yellow"), ("water", "blue"), ("sound", "white"), ("shard", "white"),
    ("chaos", "magenta"), ("nexus", "magenta"), ("mana", "bright_blue"),
)  # fmt: skip
"""Substring of a damage type or ray kind -> colour name (first match wins)."""


def damage_colour(kind: str) -> str:
    """The colour a ray or bolt of this damage type / kind is drawn in."""
    lower = kind.lower()
    for part, colour in _COLOURS:
        if part in lower:
            return colour
    return "bright_white"


def ray_glyph(step: Cell) -> str:
    """``-`` ``|`` ``\\`` ``/`` for a step ``(dx, dy)`` (signs only), ``*`` otherwise."""
    dx = (step[0] > 0) - (step[0] < 0)
    dy = (step[1] > 0) - (step[1] < 0)
    if dy == 0 and dx:
        return "-"
    if dx == 0 and dy:
        return "|"
    if dx and dy:
        return "\\" if dx == dy else "/"
    return "*"


@dataclass(frozen=True, slots=True)
class Mark:
    """One cell drawn over the map: a glyph in a colour."""

    glyph: str
    colour: str


@dataclass(frozen=True, slots=True)
class Track:
    """An animation: ``cells`` in order with their glyphs, in one colour.

    ``trail``: the cells drawn so far stay (a ray); otherwise only the newest
    is drawn (a projectile in flight).
    """

    cells: tuple[Cell, ...]
    glyphs: tuple[str, ...]
    colour: str
    trail: bool

    @property
    def step_s(self) -> float:
        """Seconds per cell: :data:`CELL_S`, less for long tracks."""
        return min(CELL_S, MAX_TRACK_S / max(1, len(self.cells)))

    @property
    def duration(self) -> float:
        """Seconds from its start until it is gone."""
        return self.step_s * len(self.cells) + (LINGER_S if self.trail else 0.0)


def _cells(value: object) -> tuple[Cell, ...]:
    if not isinstance(value, list):
        return ()
    out = []
    for c in value:
        if (
            isinstance(c, list)
            and len(c) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in c)
        ):
            out.append((c[0], c[1]))
    return tuple(out)


def _ray_track(ev: Sequence[Any]) -> Track | None:
    cells = _cells(ev[3])
    if not cells:
        return None
    glyphs = []
    for i, (x, y) in enumerate(cells):
        if i + 1 < len(cells):
            nx, ny = cells[i + 1]
            step = (nx - x, ny - y)
        elif i > 0:
            px, py = cells[i - 1]
            step = (x - px, y - py)
        else:
            step = (0, 0)
        near = max(abs(step[0]), abs(step[1])) == 1
        glyphs.append(ray_glyph(step) if near else "*")
    kind = ev[2] if isinstance(ev[2], str) else ""
    return Track(cells, tuple(glyphs), damage_colour(kind), trail=True)


def _fly_track(ev: Sequence[Any], model: GameModel) -> Track | None:
    cells = _cells(ev[3])
    item = ev[2]
    if not cells or not isinstance(item, str):
        return None
    if item.startswith("bolt:"):
        glyph, colour = "*", damage_colour(item[len("bolt:") :])
    else:
        _, glyph, colour, _, _ = model.item_entry(item)
    return Track(cells, (glyph[:1] or "*",) * len(cells), colour, trail=False)


def tracks_from_events(events: Sequence[Sequence[Any]], model: GameModel) -> list[Track]:
    """The tracks of a delta's ``ray`` and ``fly`` events, in event order
    (malformed events are skipped)."""
    tracks = []
    for ev in events:
        track = None
        if ev and ev[0] == "ray" and len(ev) >= 7:
            track = _ray_track(ev)
        elif ev and ev[0] == "fly" and len(ev) >= 4:
            track = _fly_track(ev, model)
        if track is not None:
            tracks.append(track)
    return tracks


class Animator:
    """Plays tracks one after another; holds log lines until they have played.

    Attributes:
        held: log lines waiting for the animations before them to finish.
    """

    def __init__(self) -> None:
        self._queue: deque[Track] = deque()
        self._started = 0.0  # when the first queued track started
        self.held: list[str] = []

    def add(self, tracks: Sequence[Track], now: float) -> None:
        """Queue ``tracks`` to play after the ones already queued."""
        self._expire(now)
        if not self._queue:
            self._started = now
        self._queue.extend(tracks)
        while len(self._queue) > MAX_QUEUED:
            self._queue.popleft()
            self._started = now

    def busy(self, now: float) -> bool:
        """Whether something is still being drawn at ``now``."""
        self._expire(now)
        return bool(self._queue)

    def hold(self, line: str) -> None:
        """Keep a log line until the current animations end."""
        self.held.append(line)

    def release(self, now: float) -> list[str]:
        """The held lines, once nothing is playing any more (else ``[]``)."""
        if self.busy(now) or not self.held:
            return []
        lines, self.held = self.held, []
        return lines

    def marks(self, now: float) -> dict[Cell, Mark]:
        """What to draw over the map at ``now``: cell -> mark."""
        self._expire(now)
        if not self._queue:
            return {}
        track = self._queue[0]
        shown = min(len(track.cells), int((now - self._started) / track.step_s) + 1)
        first = 0 if track.trail else shown - 1
        return {track.cells[i]: Mark(track.glyphs[i], track.colour) for i in range(first, shown)}

    def next_frame(self, now: float) -> float | None:
        """Seconds until the picture changes (a cell appears, a track ends); None if idle."""
        self._expire(now)
        if not self._queue:
            return None
        track = self._queue[0]
        elapsed = now - self._started
        step = track.step_s
        drawn_until = step * len(track.cells)
        if elapsed < drawn_until:
            return max(0.0, step * (int(elapsed / step) + 1) - elapsed)
        return max(0.0, track.duration - elapsed)

    def _expire(self, now: float) -> None:
        while self._queue and now - self._started >= self._queue[0].duration:
            self._started += self._queue.popleft().duration
        if not self._queue:
            self._started = now
