"""The browser lobby's recent games and their replay (issue 45, item 3): a
terminal player walks about on a real ``underhall serve`` and leaves; a real
Chromium opens the lobby, finds the game under "Recent games", follows its
``replay`` link, and plays the recording back in the page, through the same
model and drawing as live frames, with no websocket opened. The page's clock
is Playwright's (``page.clock``), paused, so the pace is checked exactly
against the recording's own times: nothing moves while paused, ×1 and ×8
show the frames written within the time run, ``G`` reaches the end, where the
replayed model equals the player's own model at its end, and the seek keys
(``←`` ``↑`` ``g``, rebuilding from the start) land on the turns the
recording's ticks say. Escape and ``q`` return to the lobby, and a
recording the server lacks leads back there saying so. Skipped without
playwright or Chromium, as tests/web/test_browser.py."""

from __future__ import annotations

import bisect
import json
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from client.model import GameModel
from client.replay import Tape
from protocol.codec import decode_server
from protocol.messages import CommandName
from protocol.recording import SUFFIX, Recording, read_recording
from tests.serverproc import server_process
from tests.web import test_browser
from tests.web.test_browser import Terminal, chromium, free_port, js, log_has, until

STEPS = ((1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1))
WALK_STEPS = 24
"""Steps the player tries, one each :data:`STEP_S` (about 5 s of game)."""
STEP_S = 0.2


def taping(received: list[bytes]) -> Any:
    """A ``connect`` whose connections add each binary message they return
    to ``received`` (for :class:`~tests.web.test_browser.Terminal`)."""

    def opened(*args: Any, **kwargs: Any) -> ClientConnection:
        ws: ClientConnection = connect(*args, **kwargs)
        original = ws.recv

        def recv(timeout: float | None = None) -> Any:
            data = original(timeout=timeout)
            if isinstance(data, bytes):
                received.append(data)
            return data

        object.__setattr__(ws, "recv", recv)
        return ws

    return opened


def walk_and_leave(term: Terminal) -> None:
    """Walk ``term`` about, then leave: close the connection and apply every
    frame the server wrote before it saw the close."""
    for i in range(WALK_STEPS):
        term.command(CommandName.MOVE, STEPS[i % len(STEPS)])
        term.pump(STEP_S)
    term.pump(0.1)
    term.ws.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # frames queued before the close frame
        try:
            data = term.ws.recv(timeout=1)
        except (ConnectionClosed, TimeoutError):
            break
        assert isinstance(data, bytes)
        term.model.apply(decode_server(data))


def get(port: int, path: str) -> bytes:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as answer:
        return bytes(answer.read())


def ended(port: int, name: str) -> tuple[str, Recording] | None:
    """``name``'s recording, once the server has appended its end."""
    listed = json.loads(get(port, "/recordings.json"))["recordings"]
    for entry in listed:
        if entry["name"] == name:
            recording = read_recording(get(port, f"/recordings/{entry['id']}{SUFFIX}"))
            if recording.ended is not None:
                return str(entry["id"]), recording
    return None


def python_state(model: GameModel) -> dict[str, Any]:
    """What a model holds of the player's screen, in plain values."""
    return {
        "tick": model.tick,
        "depth": model.depth,
        "size": [model.width, model.height],
        "known": model.known.ravel().tolist(),
        "visible": model.visible.ravel().astype(int).tolist(),
        "actors": sorted([a.id, a.x, a.y] for a in model.actors.values()),
        "objs": sorted([x, y, key] for (x, y), key in model.objs.items()),
        "me": {k: model.me.get(k) for k in ("hp", "max_hp", "en", "max_en", "level", "depth")},
    }


def page_state(page: Any) -> dict[str, Any]:
    """:func:`python_state` of the page's model."""
    return dict(
        js(
            page,
            """(() => {
              const m = window.underhall.model;
              const me = {};
              for (const k of ["hp", "max_hp", "en", "max_en", "level", "depth"]) me[k] = m.me[k] === undefined ? null : m.me[k];
              const cmp = (a, b) => (a[0] - b[0]) || (a[1] - b[1]) || String(a[2]).localeCompare(String(b[2]));
              return {
                tick: m.tick, depth: m.depth, size: [m.w, m.h],
                known: Array.from(m.known), visible: Array.from(m.visible),
                actors: [...m.actors.values()].map((a) => [a.id, a.x, a.y]).sort(cmp),
                objs: [...m.objs.entries()].map(([at, key]) => [at % m.w, Math.floor(at / m.w), key]).sort(cmp),
                me,
              };
            })()""",
        )
    )


def replay_state(page: Any) -> dict[str, Any]:
    state = js(page, "window.underhall.replay()")
    assert state is not None, "not replaying"
    return dict(state)


def press(page: Any, key: str) -> dict[str, Any]:
    page.keyboard.press(key)
    return replay_state(page)


def test_the_lobby_lists_a_recorded_game_and_replays_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    received: list[bytes] = []
    monkeypatch.setattr(test_browser, "connect", taping(received))
    port = free_port()
    args = ["--port", str(port), "--drain-s", "0"]
    with chromium(tmp_path) as page, server_process(tmp_path, args=args) as (url, _):
        term = Terminal(url, "Termy")
        walk_and_leave(term)
        rid, recording = until("the recording's end", lambda: ended(port, "Termy"), 15)

        # The recording holds what the player received (its welcome's token
        # blanked); the replay must end on the model those frames built.
        frames = [data for _, _, data in recording.frames]
        assert frames[1 : len(received)] == received[1:]
        tape = Tape(recording)
        recorded = GameModel()
        for msg in tape.messages:
            recorded.apply(msg)
        if len(frames) == len(received):  # nothing was written after the player's last read
            assert python_state(recorded) == python_state(term.model)
        ms, ticks = tape.ms, tape.ticks
        assert len(ticks) >= 10 and ticks[-1] - ticks[1] >= 20  # a game to seek in

        # The lobby lists the game; its link opens the replay.
        sockets: list[str] = []
        page.on("websocket", lambda ws: sockets.append(ws.url))
        page.clock.install()
        page.goto(f"http://127.0.0.1:{port}/")
        row = page.locator("#games tbody tr", has_text="Termy")
        until("the game in the lobby", lambda: row.count() == 1)
        cells = row.locator("td").all_inner_texts()
        assert cells[0] == "Termy" and cells[2].endswith("kB")
        link = row.locator("a", has_text="replay")
        assert link.get_attribute("href") == f"?replay={rid}"
        assert row.locator("a", has_text="download").get_attribute("href") == (
            f"recordings/{rid}{SUFFIX}"
        )
        link.click()
        page.wait_for_url(f"**/?replay={rid}")
        until(
            "the replay begun",
            lambda: js(page, "window.underhall && window.underhall.replay()"),
        )
        assert log_has(page, "Replay of Termy's game of")

        # Paused (space), the page's clock stopped: nothing moves.
        state = press(page, " ")
        assert state["paused"] and state["where"] in ("paused", "end")
        page.clock.pause_at(js(page, "Date.now()") + 1000)
        if state["where"] == "end":  # a very slow page: start again from the beginning
            state = press(page, "g")
        at = replay_state(page)
        page.clock.run_for(5000)
        assert replay_state(page) == at
        assert page.inner_text("#prompt") == f"replay ×1  paused  turn {at['turn']} of {ticks[-1]}"

        # Played at ×1, then at ×8: the frames written within the time run.
        def shown_after(run_ms: int) -> int:
            start = js(page, "window.underhall.replay().ms")
            page.clock.run_for(run_ms)
            return bisect.bisect_right(ms, start + run_ms * replay_state(page)["speed"])

        def played(run_ms: int) -> dict[str, Any]:
            expected = shown_after(run_ms)
            state = replay_state(page)
            assert state["next"] == expected and state["turn"] == ticks[expected - 1]
            assert state["where"] == ("playing" if expected < len(ticks) else "end")
            return state

        press(page, " ")
        played(500)
        assert press(page, "8")["speed"] == 8
        state = played(250)
        press(page, " ")  # paused again: the status line drawn as it stays
        page.clock.run_for(100)
        where = "paused" if state["where"] == "playing" else "end"
        prompt = f"replay ×8  {where}  turn {state['turn']} of {ticks[-1]}"
        assert page.inner_text("#prompt") == prompt
        press(page, " ")

        # The end (G): the player's own screen.
        state = press(page, "G")
        assert (state["where"], state["turn"], state["next"]) == ("end", ticks[-1], len(ticks))
        assert page_state(page) == python_state(recorded)
        page.clock.run_for(100)  # a frame drawn: the player's @, reversed, where it stands
        me = recorded.actors[recorded.player_id or 0]
        grid = js(page, "window.underhall.grid()")
        cell = js(page, f"window.underhall.shown()[{(me.y - grid['y0']) * 80 + me.x - grid['x0']}]")
        assert cell[0] == "@" and cell[1].startswith("r-")

        # Seeking back rebuilds from the start; each key lands where the ticks say.
        press(page, " ")  # paused, so the turns stay put between keys
        for key, turns in (("ArrowLeft", -10), ("ArrowUp", -100), ("ArrowRight", 10)):
            before = replay_state(page)["turn"]
            index = max(1, bisect.bisect_right(ticks, before + turns))
            state = press(page, key)
            assert (state["turn"], state["next"]) == (ticks[index - 1], index), key
        state = press(page, "g")
        assert (state["turn"], state["next"]) == (ticks[0], 1)
        assert js(page, "window.underhall.model.w") == 0  # only the welcome applied
        state = press(page, "G")
        assert page_state(page) == python_state(recorded)  # the rebuilt screen, again

        # Escape, and q: the lobby; no websocket opened, no token kept.
        page.keyboard.press("Escape")
        until("the lobby again", lambda: page.locator("#lobby").is_visible())
        assert "replay" not in page.url
        link.click()
        page.wait_for_url(f"**/?replay={rid}")
        until("the replay again", lambda: js(page, "window.underhall && window.underhall.replay()"))
        page.keyboard.press("q")
        until("the lobby again", lambda: page.locator("#lobby").is_visible())
        assert js(page, "localStorage.getItem('underhall.tokens')") is None

        # A recording the server does not have: the lobby, saying so.
        page.goto(f"http://127.0.0.1:{port}/?replay=20000101T000000Z-nobody-1")
        until("the lobby", lambda: page.locator("#lobby").is_visible())
        until("the reason", lambda: "no such recording" in page.inner_text("#lobby-error"))
        assert sockets == []
