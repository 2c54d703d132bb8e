"""The browser client in a real browser (issue 47): Debian's Chromium, headless,
driven by Playwright, against a real ``underhall serve`` on 127.0.0.1.

A player opens ``http://127.0.0.1:PORT/``, joins from the lobby as a mage,
walks, opens the help, the message history and the equipment, takes off and
puts back its robe and dagger, reads a scroll to learn a spell and casts it
from the spell menu (failure % and energy cost shown), drops, picks up and
eats an item, zaps a wand, throws with the aiming cursor (its path drawn),
looks at another player with the keys and with a click, travels with a click
and with the travel key, runs; a second player on the terminal client's own
model and codec (:class:`client.model.GameModel`, :mod:`protocol.codec`)
chats with it at every scope (level, global, private both ways) and each sees
the other move; then the server is restarted on the same port and the page
reconnects by itself and resumes its character, explores and fights; last,
it leaves for the lobby and comes back as a monk planted on the down
staircase (its token in the browser's storage), drinks a potion and takes the
stairs. The measured redraw time is printed. A failure saves a screenshot
beside the test's server log.

Skipped, saying why, without the Python ``playwright`` package or without
Chromium (``/usr/bin/chromium``, or ``$UNDERHALL_CHROMIUM``).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import ClientConnection, connect

from client.model import GameModel
from protocol.codec import decode_server, encode_client
from protocol.messages import Chat, ChatOut, Command, CommandName, Hello
from protocol.version import PROTOCOL_VERSION
from server.content import Terrain
from server.sim.world import World
from server.store import hash_token, open_store
from tests.serverproc import server_process

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="the Python playwright package is not installed"
)
CHROMIUM = os.environ.get("UNDERHALL_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).exists():
    pytest.skip(
        f"no Chromium at {CHROMIUM} (apt-get install chromium, or set UNDERHALL_CHROMIUM)",
        allow_module_level=True,
    )

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
WAIT_S = 10.0
SEED = 7
"""The world's seed (:func:`tests.serverproc.server_process`'s default)."""
TOKEN = "browser-test-secret"
VI = {(-1, 0): "h", (1, 0): "l", (0, -1): "k", (0, 1): "j"}
VI.update({(-1, -1): "y", (1, -1): "u", (-1, 1): "b", (1, 1): "n"})
ARROWS = {(-1, 0): "ArrowLeft", (1, 0): "ArrowRight", (0, -1): "ArrowUp", (0, 1): "ArrowDown"}
ARROWS.update({(-1, -1): "Home", (1, -1): "PageUp", (-1, 1): "End", (1, 1): "PageDown"})
NUMPAD = {(dx, dy): f"Numpad{5 + dx - 3 * dy}" for dx in (-1, 0, 1) for dy in (-1, 0, 1)}
"""The terminal client's other movement keys: arrows (and Home, PgUp, End,
PgDn for the diagonals), and the numeric keypad (``Numpad8`` is up)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def until(what: str, check: Callable[[], Any], timeout: float = WAIT_S) -> Any:
    """Poll ``check`` until it returns something true; fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


class Terminal:
    """A player on the terminal client's model and codec, over a plain websocket."""

    def __init__(self, url: str, name: str) -> None:
        self.ws: ClientConnection = connect(url, compression=None)
        self.model = GameModel()
        self.chats: list[ChatOut] = []
        self.seq = 0
        self.ws.send(encode_client(Hello(v=PROTOCOL_VERSION, name=name)))
        until("the terminal player's first snapshot", lambda: self.pump(0.1).model.width)

    def pump(self, seconds: float) -> Terminal:
        """Read and apply what arrives within ``seconds``."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                data = self.ws.recv(timeout=left)
            except TimeoutError:
                break
            assert isinstance(data, bytes)
            msg = decode_server(data)
            if isinstance(msg, ChatOut):
                self.chats.append(msg)
            self.model.apply(msg)
        return self

    def heard(self, sender: str, text: str) -> bool:
        self.pump(0.1)
        return any(c.sender == sender and text in c.text for c in self.chats)

    def command(self, c: CommandName, d: tuple[int, int]) -> None:
        self.ws.send(encode_client(Command(seq=self.seq, c=c, d=d)))
        self.seq += 1

    def find(self, name: str) -> tuple[int, int] | None:
        self.pump(0.05)
        for view in self.model.actors.values():
            if view.name == name:
                return (view.x, view.y)
        return None


def plant(db: Path, name: str, cls: str) -> None:
    """Save a new ``cls`` character ``name`` (token :data:`TOKEN`) standing
    on the down staircase of depth 1 of the :data:`SEED` world in ``db``."""
    world = World(SEED, populate=False)
    ys, xs = (world.level(1).terrain == Terrain.STAIRS_DOWN).nonzero()
    record = world.join(name, cls).to_record()
    record.update(depth=1, x=int(xs[0]), y=int(ys[0]))
    store = open_store(db, lock=False)
    store.set_meta("seed", str(SEED))
    store.save_players([(name, hash_token(TOKEN), record, 0)])
    store.close()


def js(page: Any, expr: str) -> Any:
    return page.evaluate(expr)


def browser_me(page: Any) -> dict[str, Any]:
    return dict(js(page, "JSON.parse(JSON.stringify(window.underhall.model.me))"))


def browser_pos(page: Any) -> tuple[int, int] | None:
    pos = js(page, "window.underhall.model.position()")
    return None if pos is None else (pos[0], pos[1])


def shown(page: Any, glyph: str, cls: str) -> list[Any]:
    """The map's drawn cells whose glyph is ``glyph`` (any if empty) and
    whose class starts with ``cls`` (``c-<colour>``, ``r-<colour>`` reversed)."""
    return list(
        js(
            page,
            f"window.underhall.shown().filter(([g, c]) => ({glyph!r} === '' || g === {glyph!r})"
            f" && c.startsWith({cls!r}))",
        )
    )


def log_has(page: Any, text: str) -> bool:
    return any(text in line for line in js(page, "window.underhall.log()"))


def shows(page: Any, text: str) -> bool:
    """Whether the page panel (help, menus, look) shows ``text``."""
    return text in page.inner_text("#page")


def item(page: Any, key: str) -> list[Any]:
    """The browser player's inventory row of item ``key``: ``[letter, key,
    count, slot, ...]`` (``slot`` ``""`` when not worn or wielded)."""
    return next(row for row in browser_me(page)["inv"] if row[1] == key)


def use(page: Any, keys: str, letter_of: str, line: str) -> None:
    """Press ``keys`` then the letter of item ``letter_of``; wait for ``line`` in the log."""
    page.keyboard.press(keys)
    page.keyboard.press(item(page, letter_of)[0])
    until(f"{line!r} in the log", lambda: log_has(page, line))


def step_with(page: Any, key: str) -> None:
    """Press ``key`` and wait for the browser player to move."""
    at = browser_pos(page)
    page.keyboard.press(key)
    until(f"a step with {key}", lambda: browser_pos(page) != at)


def settled(page: Any) -> bool:
    """Whether the browser player stayed where it is over half a second (a
    step already sent is carried out meanwhile)."""
    at = browser_pos(page)
    time.sleep(0.5)
    return browser_pos(page) == at


def click_cell(page: Any, x: int, y: int) -> None:
    """Click the map's cell ``(x, y)`` (level coordinates)."""
    box = until("the map shown", lambda: page.locator("#map").bounding_box())
    grid = js(page, "window.underhall.grid()")
    page.mouse.click(
        box["x"] + (x - grid["x0"] + 0.5) * grid["cw"],
        box["y"] + (y - grid["y0"] + 0.5) * grid["ch"],
    )


def open_step(page: Any) -> tuple[int, int]:
    """A direction the browser player can step in (known floor, nobody there)."""
    found = js(
        page,
        """(() => {
          const m = window.underhall.model; const [x, y] = m.position();
          for (const [dx, dy] of [[1,0],[-1,0],[0,1],[0,-1],[1,1],[-1,-1],[1,-1],[-1,1]]) {
            if (m.passable(x + dx, y + dy) && !m.actorAt(x + dx, y + dy)) return [dx, dy];
          }
          return null; })()""",
    )
    assert found, "the browser player is walled in"
    return (found[0], found[1])


def aim_at_open_floor(page: Any) -> None:
    """Move the aiming cursor, with the movement keys, to a floor cell two
    steps away from the player (so a path of at least one cell is drawn)."""
    dx, dy = open_step(page)
    x, y = browser_pos(page) or (0, 0)
    goal = (x + 2 * dx, y + 2 * dy)
    if not js(page, f"window.underhall.model.passable({goal[0]}, {goal[1]})"):
        goal = (x + dx, y + dy)
    cursor = js(page, "window.underhall.mode().cursor")
    for axis, (minus, plus) in enumerate((("h", "l"), ("k", "j"))):
        gap = goal[axis] - cursor[axis]
        for _ in range(abs(gap)):
            page.keyboard.press(plus if gap > 0 else minus)


FIGHT_LINES = ("You hit", "You miss", "You surprise", "hits you", "misses you")


def fight(page: Any, timeout: float = 25.0) -> str:
    """Explore (``A``) until a monster comes into view, then walk into it
    with the movement keys until a blow is struck either way; the log line."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in js(page, "window.underhall.log()"):
            if any(words in line for words in FIGHT_LINES):
                return str(line)
        toward = js(
            page,
            """(() => {
              const m = window.underhall.model; const p = m.position();
              if (!p || m.me.dead) return null;
              const foes = [...m.actors.values()].filter(a => !(a.flags & 16));
              if (!foes.length) return "explore";
              const f = foes[0];
              return [Math.sign(f.x - p[0]), Math.sign(f.y - p[1])]; })()""",
        )
        if toward == "explore":
            if js(page, "window.underhall.mode().kind") == "normal":
                page.keyboard.press("A")
            time.sleep(0.5)
        elif toward:
            page.keyboard.press(VI.get((toward[0], toward[1]), "."))
            time.sleep(0.35)
        else:
            time.sleep(0.2)
    pytest.fail("no fight within the time")


@contextmanager
def chromium(shots: Path) -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1100, "height": 800})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on(
            "console",
            lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None,
        )
        try:
            yield page
            assert not errors, errors
        except BaseException:
            page.screenshot(path=str(shots / "failure.png"))
            print(f"screenshot: {shots / 'failure.png'}")
            raise
        finally:
            browser.close()


def test_a_browser_plays_beside_a_terminal_player(tmp_path: Path) -> None:
    started = time.monotonic()
    plant(tmp_path / "world.db", "Stairy", "monk")
    port = free_port()
    args = ["--port", str(port), "--drain-s", "0"]
    with chromium(tmp_path) as page:
        with server_process(tmp_path, args=args) as (url, _):
            page.goto(f"http://127.0.0.1:{port}/")
            page.wait_for_selector("#class option[value=mage]", state="attached")
            page.fill("#name", "Webber")
            page.select_option("#class", "mage")
            page.click("#join")
            until("the browser's first snapshot", lambda: browser_me(page).get("hp"))
            me_id = js(page, "window.underhall.model.id")

            # Walk.
            start = browser_pos(page)
            assert start is not None
            step = open_step(page)
            page.keyboard.press(VI[step])
            until("the browser player's step", lambda: browser_pos(page) != start)
            assert shown(page, "", "r-"), "oneself is drawn in reverse video"
            for keys in (ARROWS, NUMPAD):  # the same moves with the other keys
                step_with(page, keys[open_step(page)])

            # Help, the message history (Ctrl+P), the equipment.
            page.keyboard.press("?")
            until("the help", lambda: shows(page, "Underhall keys"))
            page.keyboard.press("Escape")
            page.keyboard.press("Control+p")
            until("the message history", lambda: shows(page, "Message history"))
            assert shows(page, "Welcome, Webber.")
            page.keyboard.press("Escape")
            page.keyboard.press("e")
            until("the equipment", lambda: shows(page, "Weapon") and shows(page, "dagger"))
            page.keyboard.press("Escape")

            # Take off and put back what a mage starts with: its robe, its dagger.
            assert item(page, "robe")[3] == "cloak" and item(page, "dagger")[3] == "weapon"
            use(page, "T", "robe", "You take off a robe")
            until("the robe off", lambda: item(page, "robe")[3] == "")
            use(page, "W", "robe", "You are now wearing a robe")
            use(page, "T", "dagger", "You are no longer wielding a dagger")
            use(page, "w", "dagger", "You are now wielding a dagger")
            until("the dagger in hand", lambda: item(page, "dagger")[3] == "weapon")

            # A terminal player: each sees the other and sees it move.
            term = Terminal(url, "Termy")
            seen = until("the terminal player seeing Webber", lambda: term.find("Webber"))
            step = open_step(page)
            page.keyboard.press(VI[step])
            until("Webber moving on the terminal", lambda: term.find("Webber") != seen)

            def termy_in_browser() -> Any:
                return js(
                    page,
                    "[...window.underhall.model.actors.values()]"
                    ".filter(a => a.name === 'Termy').map(a => [a.x, a.y])[0]",
                )

            there = until("the browser seeing Termy", termy_in_browser)
            for d in ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1)):
                term.command(CommandName.MOVE, d)
                term.pump(0.4)
                if termy_in_browser() != there:
                    break
            until("Termy moving in the browser", lambda: termy_in_browser() != there)

            # A click on a creature looks at it.
            page.wait_for_timeout(300)  # the drawn frame shows Termy where the model has it
            click_cell(page, *termy_in_browser())
            until("the look panel of the click", lambda: shows(page, "Termy"))
            assert shows(page, "Level") and shows(page, "Health")
            page.keyboard.press("Escape")

            # Chat both ways.
            page.keyboard.press("Enter")
            page.keyboard.type("hello from the browser")
            page.keyboard.press("Enter")
            until("the browser's line on the terminal", lambda: term.heard("Webber", "browser"))
            page.keyboard.press("Enter")
            page.keyboard.type("/g hello everyone")
            page.keyboard.press("Enter")
            until("the global line", lambda: term.heard("Webber", "hello everyone"))
            assert [c.scope for c in term.chats if "everyone" in c.text] == ["global"]
            term.ws.send(encode_client(Chat(text="hi Webber", to="Webber")))
            until("Termy's private line in the browser", lambda: log_has(page, "<Termy> hi Webber"))
            page.keyboard.press("Enter")
            page.keyboard.type("/w Termy psst")
            page.keyboard.press("Enter")
            until(
                "the browser's private line on the terminal", lambda: term.heard("Webber", "psst")
            )
            assert [c.scope for c in term.chats if c.text == "psst"] == ["private"]
            assert [c.scope for c in term.chats if "from the browser" in c.text] == ["level"]

            # The lobby, in another tab, lists both players, live.
            lobby = page.context.browser.new_page()
            lobby.goto(f"http://127.0.0.1:{port}/")
            until(
                "both players in the lobby",
                lambda: all(n in lobby.inner_text("#players") for n in ("Webber", "Termy")),
            )
            assert "mage" in lobby.inner_text("#players")
            lobby.close()

            # The inventory, then items: read, cast, drop and pick up, zap, throw.
            page.keyboard.press("i")
            until("the inventory", lambda: "dagger" in page.inner_text("#page"))
            page.keyboard.press("Escape")
            letters = {row[1]: row[0] for row in browser_me(page)["inv"]}
            page.keyboard.press("r")
            page.keyboard.press(letters["scroll_of_spark"])
            until("learning spark", lambda: log_has(page, "You learn the spell"))
            page.keyboard.press("Z")
            until("the spell menu", lambda: "%" in page.inner_text("#page"))
            menu = page.inner_text("#page")
            assert "Fail" in menu and "Cost" in menu, menu
            [spark] = js(page, "window.underhall.model.knownSpells()")
            row = re.search(r"(?i)a - spark .*?(\d+)%\s+(\d+)", menu)
            assert row and (int(row[1]), int(row[2])) == (spark["fail"], spark["cost"]), menu
            assert spark["cost"] > 0
            page.keyboard.press("a")
            aim = js(page, "window.underhall.model.knownSpells()[0].aim")
            if aim == "dir":
                page.keyboard.press(VI[open_step(page)])
            elif aim == "cell":
                page.keyboard.press("l")
                page.keyboard.press("Enter")
            until("the spell cast", lambda: log_has(page, "cast"))
            page.keyboard.press("d")
            page.keyboard.press(letters["food_ration"])
            until("the ration dropped", lambda: log_has(page, "You drop a food ration"))
            page.keyboard.press("g")
            until("the ration picked up", lambda: log_has(page, "You pick up a food ration"))
            use(page, "E", "food_ration", "You eat a food ration")
            page.keyboard.press("z")
            page.keyboard.press(letters["wand_of_magic_missile"])
            page.keyboard.press(VI[open_step(page)])
            until("the missile drawn in flight", lambda: shown(page, "", "c-bright_magenta"))
            until("the wand zapped", lambda: log_has(page, "You zap"))
            page.keyboard.press("t")
            page.keyboard.press(letters["dagger"])
            aim_at_open_floor(page)
            until("the cursor", lambda: len(shown(page, "", "r-bright_white")) == 1)
            until("the flight path", lambda: shown(page, "*", "c-bright_yellow"))
            page.keyboard.press("Enter")
            until("the dagger thrown", lambda: log_has(page, "You throw a dagger"))

            # Look at the other player.
            page.keyboard.press(";")
            page.keyboard.press("Enter")
            until("the look panel", lambda: "Level" in page.inner_text("#page"))
            page.keyboard.press("Escape")

            # The mouse: a click on a floor cell travels there.
            # The look panel hid the map: it comes back with the Escape's redraw.
            dx, dy = open_step(page)
            x, y = browser_pos(page) or (0, 0)
            click_cell(page, x + dx, y + dy)
            until("the click's travel", lambda: browser_pos(page) == (x + dx, y + dy))

            # Run: Shift + a direction.
            at = browser_pos(page)
            page.keyboard.press(VI[open_step(page)].upper())
            until("the run", lambda: browser_pos(page) != at)
            page.keyboard.press("Escape")  # any key stops it
            until("the run's end", lambda: "(any key stops)" not in page.inner_text("#prompt"))
            until("the position settled", lambda: settled(page))

            # Frame time: whole redraws with a crowd of 60 more actors.
            timing = js(page, "window.underhall.benchDraw(120, 60)")
            stats = js(page, "window.underhall.stats")
            print(
                f"frame time, whole 80x21 map redrawn with 60 more actors: mean "
                f"{timing['mean']:.2f} ms, median {timing['median']:.2f}, p95 "
                f"{timing['p95']:.2f}, max {timing['max']:.2f}; the {stats['frames']} frames "
                f"drawn in play: mean {stats['totalMs'] / max(1, stats['frames']):.2f} ms, "
                f"max {stats['maxMs']:.2f} ms"
            )
            before = browser_pos(page)
            memory = js(page, "Array.from(window.underhall.model.known)")
            term.ws.close()

        # The server restarts on the same port: the page comes back by itself.
        with server_process(tmp_path, args=args):
            until("the browser resuming", lambda: log_has(page, "Welcome back, Webber."), 20)
            until("the resumed snapshot", lambda: browser_pos(page))
            # Where it was saved, or the nearest free cell (World.join): the
            # restarted world's monsters (levels keep no monsters when saved)
            # may have walked onto the saved cell, near the stairs, before
            # the page came back.
            after = browser_pos(page)
            assert after is not None and before is not None
            assert max(abs(after[0] - before[0]), abs(after[1] - before[1])) <= 1, (before, after)
            # The map memory the page built from deltas is the one the server
            # kept for the character (its snapshot after the restart).
            assert js(page, "Array.from(window.underhall.model.known)") == memory
            assert js(page, "window.underhall.model.id") >= 0 and me_id >= 0
            step = open_step(page)
            at = browser_pos(page)
            page.keyboard.press(VI[step])
            until("a step after resuming", lambda: browser_pos(page) != at)

            # Travel with the keys: _ then < (the up staircase) then Enter.
            [up] = js(page, "window.underhall.model.stairs('<')")
            assert browser_pos(page) != (up[0], up[1])  # stepped off it after resuming
            for _ in range(3):  # a walk stops when something comes into view
                if browser_pos(page) == (up[0], up[1]):
                    break
                for key in ("_", "<", "Enter"):
                    page.keyboard.press(key)
                deadline = time.monotonic() + WAIT_S
                while time.monotonic() < deadline and browser_pos(page) != (up[0], up[1]):
                    time.sleep(0.1)
            assert browser_pos(page) == (up[0], up[1]), "travel to the up staircase"

            # Auto-explore: A walks on by itself.
            at = browser_pos(page)
            page.keyboard.press("A")
            until("exploring", lambda: browser_pos(page) != at)

            # A fight with the first monster to come along.
            began = time.monotonic()
            print(f"fight: {fight(page)} ({time.monotonic() - began:.1f} s)")

            # Back to the lobby, and in again as another character whose
            # token this browser keeps: a monk on the down staircase.
            page.keyboard.press("Escape")  # stops a walk under way
            page.keyboard.press("Q")
            page.keyboard.press("y")
            page.wait_for_selector("#lobby", state="visible")
            page.evaluate(
                """t => { const all = JSON.parse(localStorage.getItem('underhall.tokens') || '{}');
                          all.stairy = t; localStorage.setItem('underhall.tokens', JSON.stringify(all)); }""",
                TOKEN,
            )
            page.fill("#name", "Stairy")
            page.click("#join")
            until("Stairy resumed", lambda: log_has(page, "Welcome back, Stairy."))
            until("Stairy's snapshot", lambda: browser_me(page).get("name") == "Stairy")
            use(page, "q", "potion_of_healing", "You drink a potion of healing")
            page.keyboard.press(">")
            until("the stairs down", lambda: browser_me(page).get("depth") == 2)
            until("the status line's depth", lambda: "Depth 2" in page.inner_text("#status"))
    print(f"browser test took {time.monotonic() - started:.1f} s")
