"""The browser lobby's ``watch`` link (issue 45, item 1): a real Chromium
opens the lobby of a real ``underhall serve``, follows the link beside a
terminal player, and is then a spectator of that player: its model is the
player's (same actor, same cell as the player walks), its keys move nobody,
and its chat line reaches the player in the watch scope. Skipped without
playwright or Chromium, as tests/web/test_browser.py."""

from __future__ import annotations

import contextlib
import functools
import time
from pathlib import Path
from typing import Any

from websockets.sync.client import connect

from protocol.codec import decode_server, encode_client
from protocol.messages import ChatOut, CommandName, Error, Hello, Welcome
from protocol.version import PROTOCOL_VERSION
from tests.serverproc import server_process
from tests.web.test_browser import (
    Terminal,
    browser_pos,
    chromium,
    free_port,
    js,
    log_has,
    until,
)


def at(page: Any, cell: tuple[int, int] | None) -> bool:
    """Whether the browser's own actor (the watched player) is at ``cell``."""
    return browser_pos(page) == cell


STEPS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1))


def test_the_lobbys_watch_link_watches_a_player(tmp_path: Path) -> None:
    port = free_port()
    args = ["--port", str(port), "--drain-s", "0"]
    with chromium(tmp_path) as page, server_process(tmp_path, args=args) as (url, _):
        term = Terminal(url, "Termy")
        page.goto(f"http://127.0.0.1:{port}/")
        link = page.locator("#players a", has_text="watch")
        until("the watch link beside Termy", lambda: link.count() == 1)
        assert link.get_attribute("href") == "?watch=Termy"
        link.click()
        page.wait_for_url("**/?watch=Termy")
        page.wait_for_function("window.underhall !== undefined")
        until("the spectator's welcome", lambda: log_has(page, "You watch Termy"))
        until("the first snapshot", lambda: browser_pos(page) is not None)
        assert js(page, "window.underhall.model.id") == term.model.player_id

        # The player walks: the spectator's view follows it.
        moved = False
        for step in STEPS:
            before = term.find("Termy")
            term.command(CommandName.MOVE, step)
            time.sleep(0.3)
            after = term.find("Termy")
            if after != before:
                until("the spectator sees the step", functools.partial(at, page, after))
                moved = True
                break
        assert moved, "Termy could not step anywhere"

        # The spectator's keys move nobody.
        here = term.find("Termy")
        for key in "hjklyubn":
            page.keyboard.press(key)
        time.sleep(0.6)
        assert term.find("Termy") == here
        assert browser_pos(page) == here

        # It chats with the player.
        page.keyboard.press("Enter")
        page.keyboard.type("nice walk")
        page.keyboard.press("Enter")
        until("the line at the player", lambda: term.heard("spectator", "nice walk"))
        assert [c.scope for c in term.chats if c.text == "nice walk"] == ["watch"]
        # The player leaves: the spectator is back in the lobby, told why.
        term.ws.close()
        until("the lobby again", lambda: page.locator("#lobby").is_visible())
        assert "left the game" in page.inner_text("#lobby-error")


def test_a_browser_player_talks_to_its_spectators_and_refuses_them(tmp_path: Path) -> None:
    port = free_port()
    args = ["--port", str(port), "--drain-s", "0"]
    with chromium(tmp_path) as page, server_process(tmp_path, args=args) as (url, _):
        page.goto(f"http://127.0.0.1:{port}/")
        page.wait_for_selector("#class option[value=mage]", state="attached")
        page.fill("#name", "Webby")
        page.click("#join")
        until("the browser's first snapshot", lambda: browser_pos(page) is not None)
        spectator = connect(url, compression=None)
        spectator.send(encode_client(Hello(v=PROTOCOL_VERSION, name="eve", watch="webby")))
        heard: list[Any] = []

        def hears(check: Any) -> bool:
            with contextlib.suppress(TimeoutError):
                data = spectator.recv(timeout=0.1)
                assert isinstance(data, bytes), data
                heard.append(decode_server(data))
            return any(check(m) for m in heard)

        until("the spectator's welcome", lambda: hears(lambda m: isinstance(m, Welcome)))
        until("the player told", lambda: log_has(page, "1 watching you."))
        page.keyboard.press("Enter")
        page.keyboard.type("/s welcome, eve")
        page.keyboard.press("Enter")
        until(
            "the player's line at the spectator",
            lambda: hears(lambda m: isinstance(m, ChatOut) and m.text == "welcome, eve"),
        )
        line = next(m for m in heard if isinstance(m, ChatOut) and m.text == "welcome, eve")
        assert (line.sender, line.scope, line.to) == ("Webby", "watch", "Webby")
        page.keyboard.press("Enter")
        page.keyboard.type("/watchers off")
        page.keyboard.press("Enter")
        until(
            "the spectator closed",
            lambda: hears(lambda m: isinstance(m, Error) and m.code == "not_watchable"),
        )
        until("the player told", lambda: log_has(page, "Nobody is watching you."))
        spectator.close()
