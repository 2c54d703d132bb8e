"""End to end: ``underhall watch NAME`` in a real terminal (tmux) beside
``underhall play NAME`` against ``underhall serve`` (issue 45, item 1): the
spectator's screen shows the player's map cell for cell, its keys act on
nothing, its chat line reaches the player, the player is told it is
watched, and the player's leaving ends the watch. Skipped without tmux.
"""

from __future__ import annotations

import time

from tests.client.test_play_tmux import (
    UNDERHALL,
    Tmux,
    _assert_shell_restored,
    _has_prompt,
    _map_rows,
    _start_play,
    home,
    needs_tmux,
    server_url,
    tmux,
)

__all__ = ["home", "server_url", "tmux"]  # the fixtures, shared


def _cell(screen: str) -> tuple[int, int]:
    """Where the player's ``@`` is in the map area (the only ``@``: the
    only player; the level fits the screen, so it does not scroll)."""
    found = [
        (y, x) for y, row in enumerate(_map_rows(screen)) for x, c in enumerate(row) if c == "@"
    ]
    assert len(found) == 1, screen
    return found[0]


def _steady_cell(player: Tmux) -> tuple[int, int]:
    """The player's ``@`` once it has not moved for a second."""
    cell, since = _cell(player.screen()), time.monotonic()
    while time.monotonic() - since < 1.0:
        time.sleep(0.1)
        now = _cell(player.screen())
        if now != cell:
            cell, since = now, time.monotonic()
    return cell


def _map_settled(player: Tmux, spectator: Tmux) -> tuple[list[str], list[str]]:
    """The two map areas once they are the same (the player stands still), or
    the last pair seen after the timeout (the test's assertion says how)."""
    last: tuple[list[str], list[str]] = ([], [])

    def same(_: str) -> bool:
        nonlocal last
        last = (_map_rows(player.screen()), _map_rows(spectator.screen()))
        return last[0] == last[1] and "@" in "".join(last[0])

    spectator.wait(same, "the spectator's map to be the player's")
    return last


@needs_tmux
def test_watch_in_tmux(tmux: Tmux, server_url: str) -> None:
    _start_play(tmux, server_url, "ann")
    spectator = tmux.session("spectator")
    spectator.start()
    spectator.wait(_has_prompt, "the second shell's prompt")
    spectator.type_line(f"{UNDERHALL} watch ann --url {server_url} --name bob; echo EXIT=$?")
    spectator.wait_for("You watch ann")
    tmux.wait_for("1 watching you")
    ours, theirs = _map_settled(tmux, spectator)
    assert ours == theirs

    # the player moves: the spectator sees it; the spectator's keys move nobody
    for key in ("h", "l", "j", "k"):
        tmux.keys(key)
    ours, theirs = _map_settled(tmux, spectator)
    assert ours == theirs
    before = _steady_cell(tmux)
    spectator.keys("l", "l", "j", "h")
    time.sleep(1.0)
    assert _steady_cell(tmux) == before, "a spectator's key moved the player"

    # the spectator chats with the player
    spectator.keys("Enter")
    spectator.run("send-keys", "-t", "spectator", "-l", "nice one")
    spectator.keys("Enter")
    tmux.wait_for("[watching ann] <bob> nice one")
    spectator.wait_for("<bob> nice one")

    # the player leaves: the spectator is told and its client ends
    tmux.keys("Q")
    tmux.wait_for("Really quit? (y/n)")
    tmux.keys("y")
    _assert_shell_restored(tmux, 0)
    spectator.wait_for("left the game")
    _assert_shell_restored(spectator, 1)
