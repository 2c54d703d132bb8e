"""client.animate: tracks from ray / fly events, frame timing, held log lines."""

from __future__ import annotations

import pytest

from client.animate import (
    CELL_S,
    LINGER_S,
    MAX_QUEUED,
    MAX_TRACK_S,
    Animator,
    Mark,
    Track,
    damage_colour,
    ray_glyph,
    tracks_from_events,
)
from client.model import GameModel
from protocol.messages import Welcome

WELCOME = Welcome(
    v=2, id=1, name="ann", token="t", resumed=False, tick=0, tick_rate=10, terrain=[],
    kinds=[], items={"dart": ["dart", ")", "white", "thrown", {}]}, classes=[], motd="",
)  # fmt: skip


def test_glyphs_follow_the_direction() -> None:
    assert [ray_glyph(d) for d in ((1, 0), (-1, 0), (0, 1), (0, -1))] == ["-", "-", "|", "|"]
    assert [ray_glyph(d) for d in ((1, 1), (-1, -1), (1, -1), (-1, 1))] == ["\\", "\\", "/", "/"]
    assert ray_glyph((0, 0)) == "*"


def test_colours_by_damage_type() -> None:
    assert damage_colour("fire") == "bright_red"
    assert damage_colour("cold") == "bright_cyan"
    assert damage_colour("magic_missile") == "bright_magenta"
    assert damage_colour("lightning") == damage_colour("electricity") == "bright_yellow"
    assert damage_colour("no such thing") == "bright_white"


def test_tracks_from_ray_and_fly_events() -> None:
    model = GameModel(WELCOME)
    events = [
        ["atk", 1, 2, "hit", 3, False],
        # a ray east that bounces back off a wall at (4, 2), then a gap (unseen cells)
        ["ray", 1, "fire", [[2, 2], [3, 2], [4, 2], [3, 2], [1, 1]], [[4, 2]], [], False],
        ["fly", 9, "dart", [[5, 5], [6, 6]]],
        ["fly", 10, "bolt:cold", [[1, 2]]],
        ["ray", 1, "cold", [], [], [], False],  # nothing seen: no track
        ["fly", 11, 5, [[1, 1]]],  # malformed
        ["ray", 1, "fire", [["a", 1]]],  # too short
    ]
    ray, dart, bolt = tracks_from_events(events, model)
    assert ray.cells == ((2, 2), (3, 2), (4, 2), (3, 2), (1, 1))
    assert ray.glyphs == ("-", "-", "-", "*", "*") and ray.colour == "bright_red" and ray.trail
    assert dart.glyphs == (")", ")") and dart.colour == "white" and not dart.trail
    assert bolt.glyphs == ("*",) and bolt.colour == "bright_cyan"


def track(n: int, trail: bool = True) -> Track:
    cells = tuple((i, 0) for i in range(n))
    return Track(cells, ("-",) * n, "red", trail)


def test_timing_per_cell_and_cap() -> None:
    assert track(4).step_s == CELL_S
    assert track(4).duration == pytest.approx(4 * CELL_S + LINGER_S)
    long = track(100)
    assert long.step_s == pytest.approx(MAX_TRACK_S / 100)
    assert long.duration == pytest.approx(MAX_TRACK_S + LINGER_S)
    assert track(3, trail=False).duration == pytest.approx(3 * CELL_S)


def test_a_ray_is_drawn_cell_by_cell_then_fades() -> None:
    anim = Animator()
    anim.add([track(3)], now=10.0)
    assert anim.marks(10.0) == {(0, 0): Mark("-", "red")}
    assert set(anim.marks(10.0 + 1.5 * CELL_S)) == {(0, 0), (1, 0)}
    assert set(anim.marks(10.0 + 2.5 * CELL_S)) == {(0, 0), (1, 0), (2, 0)}
    assert anim.next_frame(10.0 + 0.5 * CELL_S) == pytest.approx(0.5 * CELL_S)
    assert anim.next_frame(10.0 + 3 * CELL_S) == pytest.approx(LINGER_S)
    assert anim.busy(10.0 + 3 * CELL_S + LINGER_S / 2)
    end = 10.0 + 3 * CELL_S + LINGER_S + 1e-9
    assert not anim.busy(end) and anim.marks(end) == {} and anim.next_frame(end) is None


def test_a_projectile_shows_only_its_head_and_tracks_play_in_turn() -> None:
    anim = Animator()
    anim.add([track(2, trail=False), track(1)], now=0.0)
    assert set(anim.marks(0.0)) == {(0, 0)}
    assert set(anim.marks(1.5 * CELL_S)) == {(1, 0)}
    assert set(anim.marks(2.2 * CELL_S)) == {(0, 0)}  # the second track began
    assert not anim.busy(3 * CELL_S + LINGER_S + 1e-9)


def test_too_many_tracks_are_skipped_not_delayed() -> None:
    anim = Animator()
    anim.add([track(5) for _ in range(MAX_QUEUED + 3)], now=0.0)
    total = (MAX_QUEUED) * track(5).duration
    assert anim.busy(total - 1e-6) and not anim.busy(total + 1e-6)


def test_log_lines_wait_for_the_animation() -> None:
    anim = Animator()
    anim.add([track(2)], now=0.0)
    anim.hold("You zap a wand of fire.")
    anim.hold("The ray hits the rat for 4 fire damage.")
    assert anim.release(CELL_S) == []
    end = track(2).duration + 1e-9
    assert anim.release(end) == [
        "You zap a wand of fire.",
        "The ray hits the rat for 4 fire damage.",
    ]
    assert anim.release(end) == [] and anim.held == []
