"""Server strings lose every terminal control before the client draws them."""

from __future__ import annotations

import re
from collections import deque
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from client.render import MessageLog
from client.safe_text import clean_message, clean_text
from protocol.messages import ChatOut, Error, Info
from tests.client.test_model import WELCOME, snapshot

OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # clipboard := "echo pwned"
OSC52_ST = "\x1b]52;c;ZWNobyBwd25lZA==\x1b\\"
TITLE = "\x1b]2;pwned\x07"


@pytest.mark.parametrize(
    "raw, shown",
    [
        (f"hi{OSC52}there", "hithere"),
        (f"hi{OSC52_ST}there", "hithere"),
        (f"{TITLE}motd", "motd"),
        ("\x1b[2J\x1b[1;1Hfake screen", "fake screen"),
        ("\x1b[31mred\x1b[0m", "red"),
        ("\x9b31mred", "red"),  # 8-bit CSI
        ("\x9d52;c;eA==\x9cok", "ok"),  # 8-bit OSC ended by 8-bit ST
        ("\x1bPq#0;2;0;0;0\x1b\\sixel", "sixel"),  # DCS
        ("\x1b]52;c;never-terminated", ""),
        ("bell\x07 nul\x00 del\x7f c1\x85", "bell nul del c1"),
        ("tab\tnew\nline\rend", "tab new line end"),
        ("\x1b(0line drawing\x1b(B", "line drawing"),
        ("\x1b7saved\x1b8", "saved"),
        ("plain text, ünïcödé ✓", "plain text, ünïcödé ✓"),
        ("\x1b", ""),
    ],
)
def test_clean_text(raw: str, shown: str) -> None:
    assert clean_text(raw) == shown


@given(st.text(alphabet=st.characters(max_codepoint=0x3000)))
def test_nothing_controlling_survives(raw: str) -> None:
    out = clean_text(raw)
    assert re.search(r"[\x00-\x1f\x7f-\x9f]", out) is None
    assert clean_text(out) == out


def test_every_string_of_a_message_is_cleaned() -> None:
    welcome = replace(
        WELCOME,
        motd=f"Welcome!{OSC52}",
        kinds=[["rat\x1b[2J", f"giant{TITLE} rat", "r", "red"]],
        items={"potion": [f"potion{OSC52_ST}", "!", "magenta", "potion", {"note": "\x07x"}]},
    )
    clean = clean_message(welcome)
    assert clean.motd == "Welcome!"
    assert clean.kinds == [["rat", "giant rat", "r", "red"]]
    assert clean.items["potion"][0] == "potion" and clean.items["potion"][4] == {"note": "x"}
    assert clean_message(ChatOut(f"ev{OSC52}il", f"{TITLE}hello", 3)) == ChatOut("evil", "hello", 3)
    assert clean_message(Error("x\x1b[1m", f"bad{OSC52}", True)) == Error("x", "bad", True)
    about = {"name": f"Mallory{OSC52}", "statuses": [[1, 2]]}
    assert clean_message(Info(4, True, about)).about["name"] == "Mallory"
    snap = snapshot(actors=[[7, 0, f"ann{TITLE}", 1, 1, 20, 20, 24]])
    cleaned = clean_message(snap)
    assert cleaned.actors[0][2] == "ann" and cleaned.map == snap.map
    plain = ChatOut("bob", "hello", 1)
    assert clean_message(plain) is plain


def test_the_message_log_cleans_every_line() -> None:
    log = MessageLog(deque(maxlen=10))
    log.add(f"<bob> {OSC52}hi")
    log.add(f"<bob> hi{TITLE}")
    assert list(log.lines) == ["<bob> hi (x2)"]
