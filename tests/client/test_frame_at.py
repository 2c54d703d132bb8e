"""client.leanclient.frame_at: a websocket frame's header and payload length
(RFC 6455 section 5.2), as websockets itself reads them."""

from __future__ import annotations

import pytest
from websockets.frames import Frame, Opcode

from client.leanclient import frame_at


@pytest.mark.parametrize("size", [0, 1, 125, 126, 65535, 65536])
def test_a_whole_frame_is_found_at_any_size(size: int) -> None:
    data = Frame(Opcode.BINARY, b"x" * size).serialize(mask=False, extensions=[])
    head, length = frame_at(b"ab" + data, 2) or (0, 0)
    assert length == size
    assert head + length == len(data)


@pytest.mark.parametrize("size", [5, 300, 70000])
def test_a_frame_not_all_there_is_none(size: int) -> None:
    data = Frame(Opcode.BINARY, b"x" * size).serialize(mask=False, extensions=[])
    for cut in (1, 2, 3, len(data) - 1):
        assert frame_at(data[:cut], 0) is None


def test_a_masked_frame_has_no_length() -> None:
    data = Frame(Opcode.BINARY, b"xyz").serialize(mask=True, extensions=[])
    assert frame_at(data, 0) == (2, -1)
