"""Drawing the terminal screen of ``underhall play``.

:class:`Screen` turns a :class:`~client.model.GameModel`, a :class:`ViewState`
and a :class:`MessageLog` into terminal rows: the status line, the map (or a
page: help, inventory, an item / spell / reward menu, the look panel), the
message log and the prompt, with the colours and glyphs that ``welcome``
named. Over the map it draws the targeting path and cursor and the frames of
ray and projectile animations. It reads the model and writes to the terminal;
it never changes the model, reads keys or touches the network (:mod:`client.ui`
does).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field

from blessed import Terminal

from client import keys, menus
from client.aim import bolt_path
from client.animate import Mark
from client.model import ActorView, GameModel
from client.safe_text import clean_text

DEFAULT_THROW_RANGE = 4
"""Cells an item flies when ``welcome.items`` gives it no ``range`` (seed 001)."""

Cell = tuple[int, int]
Overlay = dict[Cell, tuple[str | None, str, bool]]
"""Cell -> (glyph or None to keep the map's, colour name, reverse video)."""

MIN_WIDTH, MIN_HEIGHT = 40, 12
"""Smallest terminal the game screen is drawn in, in cells."""

KEEP_PRIORITY = 8
"""Status fields of this priority or more (name, health, depth, turn, death)
are shortened or left out only after every other field."""

MIN_COLUMN = 32
"""Narrowest column a long page (inventory, menus) is folded into, in cells."""

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
    ``"<line> (xN)"``. Every line is cleaned of terminal controls
    (:func:`client.safe_text.clean_text`) before it is kept.
    """

    def __init__(self, lines: deque[str]) -> None:
        self.lines = lines
        self._last = ""
        self._count = 0

    def add(self, line: str) -> None:
        line = clean_text(line)
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
    marks: Mapping[Cell, Mark] = field(default_factory=dict)  # the animation frame


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

    def status_row(self, model: GameModel, state: ViewState, width: int = 0) -> str:
        """The status line, fitted to ``width`` cells (0: the terminal's width).

        Each field has a priority and shorter forms: while the line is too
        wide, the least important field that still has a shorter form takes
        it, else the least important field is left out. Health, depth, turn
        and death stay longest; class and level go first.
        """
        term = self.term
        me = model.me
        if not me:
            return term.bold("Waiting for the server…")
        hp, max_hp = int(me.get("hp", 0)), int(me.get("max_hp", 0))
        hp_style = term.bright_red if max_hp and hp * 4 <= max_hp else term.bright_green
        name = str(me.get("name", model.name))
        cls, level = me.get("class", ""), me.get("level", 1)
        depth, tick = me.get("depth", model.depth), model.tick
        fields: list[tuple[int, list[str]]] = [
            (8, [term.bold(name), term.bold(name[:8])]),
            (2, [f"{cls} L{level}", f"L{level}"]),
            (10, ["HP " + hp_style(f"{hp}/{max_hp}"), "HP " + hp_style(str(hp))]),
            (4, [f"EN {me.get('en', 0)}/{me.get('max_en', 0)}", f"EN {me.get('en', 0)}"]),
        ]
        food = self.food_forms(model)
        if food:
            fields.append((5, food))
        statuses = [model.status_name(code) for code, _ in model.my_statuses()]
        if statuses:
            fields.append(
                (
                    6,
                    [
                        term.yellow(", ".join(statuses)),
                        term.yellow(", ".join(s[:4] for s in statuses)),
                    ],
                )
            )
        if model.choice_options():
            fields.append((3, [term.bold_cyan("C: reward"), term.bold_cyan("C")]))
        fields += [(9, [f"Depth {depth}", f"D{depth}"]), (8, [f"Tick {tick}", f"T{tick}"])]
        if me.get("dead"):
            rate = max(1, model.tick_rate)
            left = max(0, int(me.get("respawn", 0)) - state.est_tick)
            secs = (left + rate - 1) // rate
            fields.append(
                (11, [term.bold_red(f"DEAD — respawn in {secs}s"), term.bold_red(f"DEAD {secs}s")])
            )
        return self.fit_fields(fields, width or term.width)

    def fit_fields(self, fields: list[tuple[int, list[str]]], width: int) -> str:
        """Join ``(priority, [longest form, ..., shortest form])`` fields with
        two spaces, shortening then dropping the least important until the
        line fits ``width`` cells."""
        term = self.term
        chosen = [0] * len(fields)
        alive = [True] * len(fields)

        def line() -> str:
            return "  ".join(forms[chosen[i]] for i, (_, forms) in enumerate(fields) if alive[i])

        minor = [i for i in range(len(fields)) if fields[i][0] < KEEP_PRIORITY]
        every = list(range(len(fields)))
        for group in (minor, every):
            while term.length(line()) > width:  # shorten, a step at a time, least first
                able = [i for i in group if alive[i] and chosen[i] + 1 < len(fields[i][1])]
                if not able:
                    break
                chosen[min(able, key=lambda i: (chosen[i], fields[i][0]))] += 1
            while term.length(line()) > width and sum(alive) > 1:  # then leave out
                left = [i for i in group if alive[i]]
                if not left:
                    break
                alive[min(left, key=lambda i: fields[i][0])] = False
        return line()

    def food_forms(self, model: GameModel) -> list[str]:
        """The food field, longest form first: ``Nourishment 320, hunger rating 45``
        (seed 001's food bar: nourishment, and the hunger rating that is used up
        before it), with ``Full`` at 500 or more and warnings as it runs low."""
        food = model.food()
        if food is None:
            return []
        nourishment, rating = food
        forms = [
            f"Nourishment {nourishment}, hunger rating {rating}",
            f"Food {nourishment} rating {rating}",
            f"Food {nourishment}",
        ]
        term = self.term
        if nourishment >= 500:
            return [term.green(f + " Full") for f in forms]
        if nourishment <= 0:
            return [term.bold_red(f + " Starving") for f in forms] + [term.bold_red("Starving")]
        if nourishment < 25:
            return [term.red(f + " Weak") for f in forms] + [term.red("Weak")]
        if nourishment < 150:
            return [term.yellow(f + " Hungry") for f in forms] + [term.yellow("Hungry")]
        return forms

    def map_row_cells(
        self,
        model: GameModel,
        y: int,
        x0: int,
        width: int,
        actors: dict[tuple[int, int], ActorView],
        overlay: Overlay | None = None,
    ) -> str:
        """One row of the level map from cell ``x0``, ``width`` cells wide,
        with ``overlay`` (path, cursor, animation) drawn on top."""
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
            mark = overlay.get((x, y)) if overlay else None
            if mark is not None:
                mark_glyph, mark_colour, reverse = mark
                glyph = mark_glyph or glyph
                style = (str(term.reverse) if reverse else "") + self.style(mark_colour)
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

    def page_rows(self, model: GameModel, mode: keys.Mode) -> list[str] | None:
        """The page shown instead of the map in ``mode``, None for the map."""
        kind = mode.kind
        bold = self.term.bold
        if kind is keys.InputMode.HELP:
            return self.help_rows()
        if kind is keys.InputMode.INVENTORY:
            return [bold("Inventory"), "", *menus.inventory_rows(model)]
        if kind is keys.InputMode.EQUIPMENT:
            return [bold("Equipment"), "", *menus.equipment_rows(model)]
        if kind is keys.InputMode.ITEM_MENU:
            question = keys.prompt_text(mode).split(" [")[0]
            return [bold(question), "", *menus.inventory_rows(model, mode.verb)]
        if kind is keys.InputMode.SPELL_MENU:
            return [bold("Spells"), "", *menus.spell_rows(model)]
        if kind is keys.InputMode.CHOOSE:
            return [bold("Level-up reward"), "", *menus.choice_rows(model)]
        if kind is keys.InputMode.INFO and mode.looked is not None:
            seen = model.looked_at(mode.looked)
            if seen is None:
                return menus.info_rows(model, None)
            found, about = seen
            yourself = mode.looked == model.player_id
            rows = menus.info_rows(model, about, found=found, yourself=yourself)
            return [bold(rows[0]), *rows[1:]]
        return None

    def aim_overlay(self, model: GameModel, mode: keys.Mode) -> Overlay:
        """The targeting path and cursor: the seed-002 path (client.aim) from
        one's own cell to the cursor, the known map's non-passable cells
        blocking it; cells beyond a thrown item's range are dimmed."""
        overlay: Overlay = {}
        cursor, pos = mode.cursor, model.position
        if mode.kind is not keys.InputMode.TARGET or cursor is None:
            return overlay
        if mode.verb in ("throw", "cast") and pos is not None and model.width and model.height:
            try:
                path = bolt_path(pos, cursor, ~model.passable())
            except ValueError:
                path = []
            reach = len(path)
            if mode.verb == "throw":
                reach = self.throw_range(model, mode.item)
            for i, cell in enumerate(path):
                overlay[cell] = ("*", "bright_yellow" if i < reach else _DIM, False)
        under = overlay.get(cursor)
        overlay[cursor] = (under[0] if under else None, "bright_white", True)
        return overlay

    def fold(self, rows: list[str], height: int, width: int) -> list[str]:
        """A page too long for ``height`` rows flows into more columns, at
        least :data:`MIN_COLUMN` cells wide each (the first two rows, title
        and gap, stay on top); what still does not fit is cut."""
        if len(rows) <= height or height < 4:
            return rows
        head, rest = rows[:2], rows[2:]
        per = height - len(head)
        columns = min(-(-len(rest) // per), max(1, width // MIN_COLUMN))
        if columns < 2:
            return rows
        col_w = width // columns
        term = self.term
        folded = []
        for j in range(per):
            cells = [rest[c * per + j] if c * per + j < len(rest) else "" for c in range(columns)]
            folded.append(
                "".join(term.ljust(term.truncate(cell, col_w - 1), col_w) for cell in cells[:-1])
                + cells[-1]
            )
        return head + folded

    @staticmethod
    def throw_range(model: GameModel, letter: str) -> int:
        """Range of the pack item ``letter`` (``about.range``, else 4)."""
        for item in model.inventory():
            if item.letter == letter:
                value = model.item_entry(item.key)[4].get("range")
                if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                    return value
        return DEFAULT_THROW_RANGE

    def rows(self, model: GameModel, state: ViewState, log: MessageLog) -> list[str]:
        """The whole frame, one string per terminal row."""
        term = self.term
        width, height = term.width, term.height
        if width < MIN_WIDTH or height < MIN_HEIGHT:
            msg = f"Terminal too small ({width}x{height}); need {MIN_WIDTH}x{MIN_HEIGHT}."
            return [term.truncate(msg, width)] + [""] * (height - 1)
        out: list[str] = [term.truncate(self.status_row(model, state), width)]
        map_h = self.map_rows()
        page = self.page_rows(model, state.mode)
        if state.mode.kind is keys.InputMode.HISTORY:
            out.extend(self.history_rows(log, map_h, width, state.mode.scroll))
        elif page is not None:
            body = [term.truncate(line, width) for line in self.fold(page, map_h, width)]
            out.extend((body + [""] * map_h)[:map_h])
        else:
            centre = (int(model.me.get("x", 0)), int(model.me.get("y", 0)))
            x0 = self.offset(centre[0], width, model.width)
            y0 = self.offset(centre[1], map_h, model.height)
            cursor = state.mode.cursor if state.mode.kind is keys.InputMode.TARGET else None
            if cursor is not None and not (
                x0 <= cursor[0] < x0 + width and y0 <= cursor[1] < y0 + map_h
            ):
                x0 = self.offset(cursor[0], width, model.width)
                y0 = self.offset(cursor[1], map_h, model.height)
            actors: dict[tuple[int, int], ActorView] = {}
            for view in sorted(model.actors.values(), key=lambda a: (a.is_self, a.is_player)):
                actors[(view.x, view.y)] = view
            overlay = self.aim_overlay(model, state.mode)
            for cell, mark in state.marks.items():
                overlay[cell] = (mark.glyph, mark.colour, False)
            for j in range(map_h):
                out.append(self.map_row_cells(model, y0 + j, x0, width, actors, overlay))
        n_log = self.log_lines()
        lines = self.wrap_log(log.last(n_log), width)[-n_log:]
        lines = [""] * (n_log - len(lines)) + lines
        out.extend(term.truncate(line, width) for line in lines)
        prompt = state.note or keys.prompt_text(state.mode) or "? help   Q quit"
        if (
            not state.note and state.mode.kind is keys.InputMode.CHAT and len(prompt) > width > 8
        ):  # long chat input: show its end
            prompt = "Say: …" + prompt[len(prompt) - (width - 6) :]
        if state.note:
            prompt = term.bold_yellow(prompt)
        elif state.mode.kind is keys.InputMode.NORMAL:
            prompt = term.bright_black(prompt)
        out.append(term.truncate(prompt, width))
        return out[:height]

    def wrap_log(self, lines: list[str], width: int) -> list[str]:
        """Log lines wrapped to ``width`` cells; continuation rows are indented."""
        out: list[str] = []
        for line in lines:
            out.extend(self.term.wrap(line, width, subsequent_indent="  ") or [""])
        return out

    def history_rows(self, log: MessageLog, height: int, width: int, scroll: int) -> list[str]:
        """The message history page (Ctrl-P): a title, then the newest
        ``height - 2`` wrapped lines, ``scroll`` log lines back from the end."""
        lines = list(log.lines)
        scroll = min(max(0, scroll), max(0, len(lines) - 1))
        shown = lines[: len(lines) - scroll] if scroll else lines
        body = self.wrap_log(shown, width)[-max(0, height - 2) :]
        title = "Message history" + (f" ({scroll} lines back)" if scroll else "")
        rows = [self.term.bold(title), "", *body]
        return (rows + [""] * height)[:height]

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
