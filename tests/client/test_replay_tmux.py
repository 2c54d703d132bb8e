"""End to end: ``underhall replay NAME`` in a real terminal (tmux) after
``underhall play NAME`` on ``underhall serve`` (issue 45, item 3): the
replay's last screen shows the map the player last saw, cell for cell; its
keys pause, jump and quit, at a person's pace. Skipped without tmux.
"""

from __future__ import annotations

import time

from tests.client import test_play_tmux as play
from tests.client.test_play_tmux import Tmux, home, server_url, tmux

__all__ = ["home", "server_url", "tmux"]  # the fixtures, shared


def _steady_map(term: Tmux) -> list[str]:
    """The map area once it has not changed for a second and a half."""
    rows, since = play._map_rows(term.screen()), time.monotonic()
    deadline = since + 30
    while time.monotonic() - since < 1.5 and time.monotonic() < deadline:
        time.sleep(0.1)
        now = play._map_rows(term.screen())
        if now != rows:
            rows, since = now, time.monotonic()
    return rows


@play.needs_tmux
def test_replay_in_tmux_shows_what_the_player_saw(tmux: Tmux, server_url: str) -> None:
    play._start_play(tmux, server_url, "rhea")
    for key in ("l", "l", "j", "h", "k", "l"):
        tmux.keys(key)
    seen = _steady_map(tmux)
    assert "@" in "".join(seen)
    tmux.keys("Q")
    tmux.wait_for("Really quit? (y/n)")
    tmux.keys("y")
    play._assert_shell_restored(tmux, 0)
    tmux.type_line("clear")
    tmux.wait(lambda s: "EXIT=" not in s, "the screen to clear")

    tmux.type_line(f"{play.UNDERHALL} replay rhea --url {server_url}; echo EXIT=$?")
    tmux.wait_for("Replay of rhea's game")
    tmux.wait(lambda s: "replay ×1" in s, "the replay's status")
    tmux.keys("Space")
    tmux.wait(lambda s: "paused" in s, "the pause")
    tmux.keys("G")  # to the end
    end = tmux.wait(lambda s: "replay ×1  end" in s, "the end of the recording")
    assert play._map_rows(end) == seen
    tmux.keys("g")  # back to the start: the welcome, before the first snapshot
    tmux.wait(lambda s: "@" not in "".join(play._map_rows(s)), "the start")
    tmux.keys("8", "Space")  # ×8, playing again: it reaches the end by itself
    again = tmux.wait(lambda s: "replay ×8  end" in s, "the end at ×8")
    assert play._map_rows(again) == seen
    tmux.keys("q")
    play._assert_shell_restored(tmux, 0)
