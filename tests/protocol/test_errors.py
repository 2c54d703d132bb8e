"""Error codes and their fatality agree with the table in docs/protocol.md."""

from __future__ import annotations

import re
from pathlib import Path

from protocol.errors import FATAL_CODES, ErrorCode, ProtocolError
from protocol.version import PROTOCOL_VERSION, check_version

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def doc_error_table() -> dict[str, bool]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("### `error` codes", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| (yes|no) \|", section, flags=re.MULTILINE)
    return {code: fatal == "yes" for code, fatal in rows}


def test_codes_match_the_doc() -> None:
    table = doc_error_table()
    assert table, "error table not found in docs/protocol.md"
    assert {c.value: c.fatal for c in ErrorCode} == table


def test_protocol_error() -> None:
    exc = ProtocolError(ErrorCode.BAD_FIELD, "cmd.seq must be an int")
    assert (exc.code, exc.detail, exc.fatal) == (
        ErrorCode.BAD_FIELD,
        "cmd.seq must be an int",
        False,
    )
    assert str(exc) == "bad_field: cmd.seq must be an int"
    assert (
        ProtocolError(ErrorCode.SHUTDOWN).fatal
        and str(ProtocolError(ErrorCode.SHUTDOWN)) == "shutdown"
    )
    assert all(code.fatal for code in FATAL_CODES)


def test_version() -> None:
    assert PROTOCOL_VERSION == 12
    check_version(12)
    for other in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13):
        try:
            check_version(other)
        except ProtocolError as exc:
            assert exc.code == ErrorCode.VERSION and exc.fatal
        else:
            raise AssertionError(f"version {other} accepted")
