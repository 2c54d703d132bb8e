"""Field-of-view packing: the bit layout of docs/protocol.md and round trips."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from protocol.errors import ErrorCode, ProtocolError
from protocol.fov import check_fov, pack_cropped_fov, pack_fov, pack_level_fov, unpack_fov

windows = hnp.arrays(np.bool_, hnp.array_shapes(min_dims=2, max_dims=2, min_side=0, max_side=12))


def doc_bit(bits: bytes, k: int) -> int:
    """The doc's formula for bit k."""
    return (bits[k >> 3] >> (k & 7)) & 1


@settings(max_examples=80, deadline=None)
@given(windows, st.integers(0, 5), st.integers(0, 5))
def test_round_trip(window: np.ndarray[Any, Any], x0: int, y0: int) -> None:
    fh, fw = window.shape
    fov = pack_fov(window, x0, y0)
    assert fov[:4] == [x0, y0, fw, fh]
    assert len(fov[4]) == (fw * fh + 7) // 8
    for j in range(fh):
        for i in range(fw):
            assert doc_bit(fov[4], j * fw + i) == window[j, i]
    full = unpack_fov(fov, x0 + fw, y0 + fh)
    assert full.shape == (y0 + fh, x0 + fw)
    assert np.array_equal(full[y0:, x0:], window)
    assert not full[:y0].any() and not full[:, :x0].any()


def test_doc_example_layout() -> None:
    # A 3 x 2 window at (1, 1); in view: (1, 1), (3, 1), (2, 2) -> bits 0, 2, 4.
    window = np.array([[1, 0, 1], [0, 1, 0]], dtype=bool)
    assert pack_fov(window, 1, 1) == [1, 1, 3, 2, bytes([0b10101])]
    full = unpack_fov([1, 1, 3, 2, bytes([0b10101])], 5, 4)
    assert sorted(zip(*np.nonzero(full), strict=True)) == [(1, 1), (1, 3), (2, 2)]  # [y, x]


def test_padding_bits_are_zero_and_ignored() -> None:
    assert pack_fov(np.ones((1, 3), dtype=bool), 0, 0)[4] == b"\x07"
    assert unpack_fov([0, 0, 3, 1, b"\xff"], 3, 1).tolist() == [[True, True, True]]


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.bool_, st.tuples(st.integers(1, 10), st.integers(1, 10))))
def test_level_fov_crops(mask: np.ndarray[Any, Any]) -> None:
    h, w = mask.shape
    fov = pack_level_fov(mask)
    assert np.array_equal(unpack_fov(fov, w, h), mask)
    if mask.any():
        assert fov[2] * fov[3] <= mask.size
        assert fov[2] * fov[3] == (np.ptp(np.nonzero(mask)[1]) + 1) * (
            np.ptp(np.nonzero(mask)[0]) + 1
        )
    else:
        assert fov == [0, 0, 0, 0, b""]


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(np.bool_, st.tuples(st.integers(1, 9), st.integers(1, 9))),
    st.integers(0, 6),
    st.integers(0, 6),
)
def test_a_window_cropped_to_the_cells_in_view_shows_the_same_cells(
    window: np.ndarray[Any, Any], x0: int, y0: int
) -> None:
    """What the server sends for a view window (issue 10): the smallest
    window holding its cells in view, placed on the level as the whole
    window would be."""
    fh, fw = window.shape
    w, h = x0 + fw + 2, y0 + fh + 2
    fov = pack_cropped_fov(window, x0, y0)
    assert np.array_equal(unpack_fov(fov, w, h), unpack_fov(pack_fov(window, x0, y0), w, h))
    if window.any():
        cols, rows = np.nonzero(window.T)
        assert fov[:4] == [
            x0 + int(cols.min()),
            y0 + int(rows.min()),
            int(np.ptp(cols)) + 1,
            int(np.ptp(rows)) + 1,
        ]
    else:
        assert fov == [0, 0, 0, 0, b""]


def test_window_partly_outside_the_level_is_clipped() -> None:
    fov = pack_fov(np.ones((3, 3), dtype=bool), -1, -1)
    assert unpack_fov(fov, 4, 4).sum() == 4  # the 2 x 2 inside
    assert not unpack_fov(pack_fov(np.ones((2, 2), dtype=bool), 9, 9), 4, 4).any()


@pytest.mark.parametrize(
    "fov",
    [
        None,
        [0, 0, 1, 1],
        (0, 0, 1, 1, b"\x01", 0),
        [0, 0, 1, 1, "\x01"],
        [0, 0, 1, 1, b""],
        [0, 0, 1, 1, b"\x01\x00"],
        [0, 0, -1, 1, b""],
        [0.0, 0, 1, 1, b"\x01"],
        [True, 0, 1, 1, b"\x01"],
        [0, 0, 2**40, 2**40, b"\x00"],
    ],
)
def test_malformed(fov: object) -> None:
    with pytest.raises(ProtocolError) as info:
        unpack_fov(fov, 4, 4)
    assert info.value.code == ErrorCode.BAD_FIELD
    with pytest.raises(ProtocolError):
        check_fov(fov)


def test_bad_arguments() -> None:
    with pytest.raises(ProtocolError):
        pack_fov(np.zeros(3, dtype=bool), 0, 0)
    with pytest.raises(ProtocolError):
        pack_level_fov(np.zeros((1, 1, 1), dtype=bool))
    with pytest.raises(ProtocolError):
        unpack_fov([0, 0, 0, 0, b""], -1, 2)
