"""Helpers for the content tests: a tiny TOML writer and readers for the shipped files.

Each bad file in these tests is a known-good one with one change, written back
with this writer; ``test_*round_trip*`` tests check that the writer loses nothing.
"""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path
from typing import Any


def toml_value(v: Any) -> str:
    """``v`` as a TOML value: bool, number (``nan`` too), string, array or inline table."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    assert isinstance(v, dict)
    return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(x)}" for k, x in v.items()) + " }"


def toml_records(kind: str, records: list[dict[str, Any]]) -> str:
    """A file of ``[[kind]]`` tables, one per record, fields in dict order."""
    blocks = [
        f"[[{kind}]]\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in r.items()) for r in records
    ]
    return "\n".join(blocks)


def _is_array_of_tables(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(r, dict) for r in value)


def toml_document(data: dict[str, Any]) -> str:
    """A whole file: top-level values first, then ``[tables]``, then ``[[arrays of tables]]``."""
    lines: list[str] = []
    for key, value in data.items():
        if not isinstance(value, dict) and not _is_array_of_tables(value):
            lines.append(f"{json.dumps(key)} = {toml_value(value)}")
    for key, value in data.items():
        if isinstance(value, dict):
            lines.append(f"[{json.dumps(key)}]")
            lines.extend(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items())
    for key, value in data.items():
        if _is_array_of_tables(value):
            for record in value:
                lines.append(f"[[{json.dumps(key)}]]")
                lines.extend(f"{json.dumps(k)} = {toml_value(v)}" for k, v in record.items())
    return "\n".join(lines) + "\n"


def read_toml(path: Path) -> dict[str, Any]:
    """The parsed TOML file at ``path`` (a fresh copy each call, safe to change)."""
    with path.open("rb") as handle:
        return tomllib.load(handle)


def record_of(data: dict[str, Any], kind: str, key: str) -> dict[str, Any]:
    """The ``[[kind]]`` record of ``data`` whose ``key`` is ``key``."""
    found: dict[str, Any] = next(r for r in data[kind] if r["key"] == key)
    return found
