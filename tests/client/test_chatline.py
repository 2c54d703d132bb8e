"""Typed chat lines become scoped ``chat`` messages; received ones show their scope."""

from __future__ import annotations

from client.chatline import chat_from_line, describe_chat_line
from protocol.messages import Chat, ChatOut, Spectators


def test_typed_lines_choose_the_scope() -> None:
    assert chat_from_line("hello") == Chat("hello")
    assert chat_from_line("/g hello all") == Chat("hello all", scope="global")
    assert chat_from_line("/w Bob  meet at the altar") == Chat("meet at the altar", to="Bob")
    assert chat_from_line("/w Bob") == "usage: /w name text"
    assert chat_from_line("/w no!pe x") == "usage: /w name text"
    assert chat_from_line("/g ") == "usage: /g text"


def test_the_watch_scope_and_the_watchers_switch() -> None:
    assert chat_from_line("/s thanks for watching") == Chat("thanks for watching", scope="watch")
    assert chat_from_line("/s") == "usage: /s text"
    assert chat_from_line("/watchers off") == Spectators(False)
    assert chat_from_line("/watchers on") == Spectators(True)
    assert chat_from_line("/watchers maybe") == "usage: /watchers off, or /watchers on"
    assert describe_chat_line(ChatOut("bob", "hi", 1, scope="watch", to="ann")) == (
        "[watching ann] <bob> hi"
    )


def test_received_lines_show_their_scope() -> None:
    assert describe_chat_line(ChatOut("ann", "hi", 1, scope="level")) == "<ann> hi"
    assert describe_chat_line(ChatOut("ann", "hi", 1, scope="global")) == "[global] <ann> hi"
    assert describe_chat_line(ChatOut("ann", "hi", 1, scope="private", to="bob")) == (
        "[to bob] <ann> hi"
    )
    assert describe_chat_line(ChatOut("", "nobody called x is playing", 1)) == (
        "* nobody called x is playing"
    )
