"""A replay's tape tells its viewer what it cannot promise (issue 45): a
recording made under another protocol version, and frames that did not
decode."""

from __future__ import annotations

import pytest

from client.replay import Tape
from protocol.codec import encode_server
from protocol.messages import Welcome
from protocol.recording import Recording, RecordingError
from protocol.version import PROTOCOL_VERSION

WELCOME = Welcome(
    v=PROTOCOL_VERSION, id=1, name="ann", token="", resumed=False, tick=0, tick_rate=10,
    terrain=[], kinds=[], items={}, classes=[], motd="",
)  # fmt: skip


def _recording(protocol: int, frames: list[bytes]) -> Recording:
    return Recording(
        name="ann",
        protocol=protocol,
        started=0.0,
        frames=[(i * 100, i, data) for i, data in enumerate(frames)],
        ended=None,
        complete=True,
    )


def test_a_recording_of_this_protocol_read_whole_warns_of_nothing() -> None:
    tape = Tape(_recording(PROTOCOL_VERSION, [encode_server(WELCOME)]))
    assert tape.warnings() == []


def test_another_protocol_and_unreadable_frames_are_said() -> None:
    frames = [encode_server(WELCOME), b"\xc1 not msgpack", b"\x93\x01\x02\x03"]
    tape = Tape(_recording(PROTOCOL_VERSION - 1, frames))
    assert tape.dropped == 2
    lines = tape.warnings()
    assert len(lines) == 2
    assert f"protocol {PROTOCOL_VERSION - 1}" in lines[0]
    assert str(PROTOCOL_VERSION) in lines[0]
    assert lines[1].startswith("2 frames")


def test_a_recording_that_does_not_begin_with_a_welcome_is_refused() -> None:
    with pytest.raises(RecordingError, match="welcome"):
        Tape(_recording(PROTOCOL_VERSION, [b"\x93\x01\x02\x03"]))
