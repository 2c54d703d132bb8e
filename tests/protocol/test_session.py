"""The session state table: every (state, message) pair, legal or not."""

from __future__ import annotations

import pytest

from protocol.errors import ErrorCode, LocalProtocolError, ProtocolError
from protocol.messages import (
    Chat,
    ClientMessage,
    Command,
    CommandName,
    Hello,
    Look,
    Ping,
    Spectators,
)
from protocol.session import CLIENT_TRANSITIONS, SPECTATOR_REFUSED, ServerSession, SessionState

EXAMPLES: list[ClientMessage] = [
    Hello(2, "bob"),
    Command(0, CommandName.WAIT),
    Chat("hi"),
    Ping(1),
    Look(4),
    Spectators(False),
]

# docs/protocol.md, "Session": in connected only hello and ping; in playing
# cmd, chat, ping, look and spectators; watching (a spectator) chat and
# ping; nothing once closed.
ALLOWED = {
    SessionState.CONNECTED: {Hello, Ping},
    SessionState.PLAYING: {Command, Chat, Ping, Look, Spectators},
    SessionState.WATCHING: {Chat, Ping},
    SessionState.CLOSED: set(),
}


def session_in(state: SessionState) -> ServerSession:
    session = ServerSession()
    if state is SessionState.WATCHING:
        session.watching()
    elif state is not SessionState.CONNECTED:
        session.welcomed()
    if state is SessionState.CLOSED:
        session.close()
    assert session.state is state
    return session


def test_table_matches_the_doc() -> None:
    legal = {(state, kind) for state, kinds in ALLOWED.items() for kind in kinds}
    assert set(CLIENT_TRANSITIONS) == legal


@pytest.mark.parametrize("state", list(SessionState))
@pytest.mark.parametrize("msg", EXAMPLES, ids=lambda m: type(m).__name__)
def test_every_pair(state: SessionState, msg: ClientMessage) -> None:
    session = session_in(state)
    if type(msg) in ALLOWED[state]:
        assert session.receive(msg) is msg
        assert session.state is state  # client messages never change the state
    else:
        with pytest.raises(ProtocolError) as info:
            session.receive(msg)
        spectator = state is SessionState.WATCHING and type(msg) in SPECTATOR_REFUSED
        code = ErrorCode.SPECTATOR if spectator else ErrorCode.NOT_ALLOWED
        assert info.value.code == code and not info.value.fatal
        assert session.state is state


def test_life_cycle() -> None:
    session = ServerSession()
    states = [session.state]
    session.receive(Hello(2, "bob"))
    session.welcomed()
    states.append(session.state)
    session.receive(Command(3, CommandName.MOVE, (1, 0)))
    session.close()
    session.close()  # idempotent
    states.append(session.state)
    assert states == [SessionState.CONNECTED, SessionState.PLAYING, SessionState.CLOSED]


def test_close_before_welcome() -> None:
    session = ServerSession()
    session.close()
    assert session.state is SessionState.CLOSED


@pytest.mark.parametrize(
    "state", [SessionState.PLAYING, SessionState.WATCHING, SessionState.CLOSED]
)
def test_welcome_only_once(state: SessionState) -> None:
    session = session_in(state)
    with pytest.raises(LocalProtocolError):
        session.welcomed()
    with pytest.raises(LocalProtocolError):
        session.watching()
    assert session.state is state


def test_a_spectators_life_cycle() -> None:
    session = ServerSession()
    session.receive(Hello(12, "bob", watch="ann"))
    session.watching()
    assert session.state is SessionState.WATCHING
    session.receive(Chat("hi"))
    session.close()
    assert session.state.value == "closed"
