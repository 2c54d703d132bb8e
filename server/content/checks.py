"""Strict checks shared by the rules data loaders: ``loader``, ``damage``, ``statuses``, ``spells``.

A *value check* takes one raw TOML value and returns it converted, or raises
:class:`Invalid`; a bool is never accepted as a number. A *spec* maps each
field of a record to its check and its default (:data:`REQUIRED` for none).
:func:`check_fields` applies a spec to one table, :func:`build_record` turns
the failure into a ``ContentError`` naming the file, the record and the field
(:class:`Where`), and :func:`load_records` does so for every ``[[kind]]``
record of a file whose only top-level key is that array of tables.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

from server.content.schema import ContentError

T = TypeVar("T")

Check = Callable[[Any], Any]
"""A value check: the converted value, or :class:`Invalid`."""

KEY_RE: Final = re.compile(r"[a-z][a-z0-9_]*")
"""A record key: a lower-case identifier."""

REQUIRED: Final = object()
"""The default of a spec field that must be present."""

Spec = dict[str, tuple[Check, Any]]
"""Field name -> (value check, default or :data:`REQUIRED`), in the order fields are checked."""


class Invalid(Exception):
    """A value failed its check; ``path`` locates it inside the field (``[2].take``, ``fire``)."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.path = path

    def under(self, name: str) -> Invalid:
        """The same failure seen from the enclosing field or entry ``name``."""
        if not self.path:
            return Invalid(self.message, name)
        sep = "" if self.path.startswith("[") else "."
        return Invalid(self.message, f"{name}{sep}{self.path}")


# --- value checks -----------------------------------------------------------------------


def integer(lo: int, hi: int | None = None) -> Check:
    """An int in ``lo..hi`` (inclusive), or ``>= lo`` when ``hi`` is None."""
    want = f"an int in {lo}..{hi}" if hi is not None else f"an int >= {lo}"

    def check(value: Any) -> int:
        if type(value) is not int or value < lo or (hi is not None and value > hi):
            raise Invalid(f"must be {want}, got {value!r}")
        return value

    return check


def real(lo: float, hi: float | None = None, *, strict_lo: bool = False) -> Check:
    """A finite int or float in ``lo..hi`` (``> lo`` when ``strict_lo``), returned as a float."""
    if hi is not None:
        want = f"a number in {lo}..{hi}" + (f" other than {lo}" if strict_lo else "")
    else:
        want = f"a number {'>' if strict_lo else '>='} {lo}"

    def check(value: Any) -> float:
        if type(value) not in (int, float) or not math.isfinite(value):
            raise Invalid(f"must be {want}, got {value!r}")
        low_ok = value > lo if strict_lo else value >= lo
        if not low_ok or (hi is not None and value > hi):
            raise Invalid(f"must be {want}, got {value!r}")
        return float(value)

    return check


def boolean(value: Any) -> bool:
    """``true`` or ``false`` (never a number)."""
    if type(value) is not bool:
        raise Invalid(f"must be true or false, got {value!r}")
    return value


def text(value: Any) -> str:
    """A string that is not empty or only white space."""
    if not isinstance(value, str) or not value.strip():
        raise Invalid(f"must be a non-empty string, got {value!r}")
    return value


def identifier(value: Any) -> str:
    """A lower-case identifier (:data:`KEY_RE`), as record keys are."""
    if not isinstance(value, str) or not KEY_RE.fullmatch(value):
        raise Invalid(f"must be a lower-case identifier ([a-z][a-z0-9_]*), got {value!r}")
    return value


def choice(options: tuple[str, ...], what: str) -> Check:
    """One of ``options``; ``what`` names the kind of value in the message."""

    def check(value: Any) -> str:
        if not isinstance(value, str) or value not in options:
            raise Invalid(f"must be a {what} ({', '.join(options)}), got {value!r}")
        return value

    return check


def name_list(allowed: tuple[str, ...] | None, what: str, *, unique: bool) -> Check:
    """A list of strings, each in ``allowed`` (any when None), as a tuple.

    ``what`` names one entry in the messages; ``unique`` rejects an entry listed twice.
    """

    def check(value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise Invalid(f"must be a list of strings, got {value!r}")
        for name in value:
            if allowed is not None and name not in allowed:
                raise Invalid(f"unknown {what} {name!r} (known: {', '.join(allowed)})")
        if unique:
            twice = [name for i, name in enumerate(value) if name in value[:i]]
            if twice:
                raise Invalid(f"lists the {what} {twice[0]!r} twice")
        return tuple(value)

    return check


def int_pair(want: str, fits: Callable[[int, int], bool]) -> Check:
    """A list of exactly two ints for which ``fits(first, second)`` holds, as a tuple.

    ``want`` describes the accepted pairs in the message (``"a list [count, sides] ..."``).
    """

    def check(value: Any) -> tuple[int, int]:
        if (
            not isinstance(value, list)
            or len(value) != 2
            or any(type(v) is not int for v in value)
            or not fits(value[0], value[1])
        ):
            raise Invalid(f"must be {want}, got {value!r}")
        return (value[0], value[1])

    return check


def list_of(item: Check, *, unique: bool = False, nonempty: bool = False) -> Check:
    """A list whose entries each pass ``item``, as a tuple; a failure is located as ``[n]``."""

    def check(value: Any) -> tuple[Any, ...]:
        if not isinstance(value, list):
            raise Invalid(f"must be a list, got {value!r}")
        if nonempty and not value:
            raise Invalid("must not be empty")
        out = []
        for number, raw in enumerate(value, start=1):
            try:
                out.append(item(raw))
            except Invalid as exc:
                raise exc.under(f"[{number}]") from None
        if unique and len(set(out)) != len(out):
            raise Invalid(f"lists an entry twice: {value!r}")
        return tuple(out)

    return check


def check_fields(raw: Any, spec: Spec, what: str = "field") -> dict[str, Any]:
    """Check a table against ``spec``: no unknown field, every required one, each value valid.

    Args:
        raw: The table as parsed.
        spec: Its fields.
        what: What a field is called in the messages ("field", or "entry" inside a field).

    Returns:
        Field name -> checked value (or its default), in ``spec`` order.

    Raises:
        Invalid: Located at the offending field (and inside it, for nested values).
    """
    if not isinstance(raw, dict):
        raise Invalid(f"must be a table, got {raw!r}")
    for name in raw:
        if name not in spec:
            raise Invalid(f"unknown {what} (allowed: {', '.join(spec)})", name)
    out: dict[str, Any] = {}
    for name, (check, default) in spec.items():
        if name not in raw:
            if default is REQUIRED:
                raise Invalid(f"missing required {what}", name)
            out[name] = default
            continue
        try:
            out[name] = check(raw[name])
        except Invalid as exc:
            raise exc.under(name) from None
    return out


# --- records and files ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Where:
    """Names a record or table in error messages: ``monsters.toml: monster 'rat'``.

    ``ident`` is empty for a table named by ``kind`` alone (``damage_types.toml: status``).
    """

    file: str
    kind: str
    ident: str = ""

    def fail(self, field: str, message: str) -> ContentError:
        """The error for ``field`` of this record."""
        return ContentError(f"{self._name()}: field {field!r}: {message}")

    def reject(self, exc: Invalid) -> ContentError:
        """The error for a failed check; the field is named when ``exc`` locates one."""
        if exc.path:
            return self.fail(exc.path, exc.message)
        return ContentError(f"{self._name()}: {exc.message}")

    def _name(self) -> str:
        record = f"{self.kind} {self.ident}" if self.ident else self.kind
        return f"{self.file}: {record}"


Rules = Callable[[Where, set[str], dict[str, Any]], None]
"""Cross-field rules of one record: its name, the fields present and the checked values."""


def record_ident(raw: Any, number: int) -> str:
    """How a record is named in messages: its key (quoted) if valid, else ``#number``."""
    key = raw.get("key") if isinstance(raw, dict) else None
    return repr(key) if isinstance(key, str) and KEY_RE.fullmatch(key) else f"#{number}"


def read_toml(path: Path, file: str) -> dict[str, Any]:
    """Parse the TOML file at ``path``; ``file`` names it in messages.

    Raises:
        ContentError: The file cannot be read or is not valid TOML.
    """
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise ContentError(f"{file}: cannot read: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ContentError(f"{file}: invalid TOML: {exc}") from exc


def require_top_level(file: str, data: dict[str, Any], allowed: tuple[str, ...], what: str) -> None:
    """Reject a top-level key not in ``allowed``, then a missing one (``what``: "key", "table").

    Raises:
        ContentError: Naming ``file`` and the key.
    """
    for name in data:
        if name not in allowed:
            raise ContentError(
                f"{file}: unknown top-level key {name!r} (allowed: {', '.join(allowed)})"
            )
    for name in allowed:
        if name not in data:
            raise ContentError(f"{file}: missing top-level {what} {name!r}")


def read_records(path: Path, kind: str) -> list[dict[str, Any]]:
    """Read ``path`` and return its ``[[kind]]`` tables, its only top-level key.

    Raises:
        ContentError: The file cannot be read, is not TOML, has another
            top-level key, or holds no ``[[kind]]`` tables.
    """
    data = read_toml(path, path.name)
    for name in data:
        if name != kind:
            raise ContentError(
                f"{path.name}: unknown top-level key {name!r} (only [[{kind}]] tables allowed)"
            )
    records = data.get(kind, [])
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise ContentError(f"{path.name}: must hold [[{kind}]] tables")
    if not records:
        raise ContentError(f"{path.name}: has no [[{kind}]] records")
    return records


def build_record(
    where: Where,
    raw: dict[str, Any],
    spec: Spec,
    cls: Callable[..., T],
    rules: Rules | None = None,
) -> T:
    """Check every field of one record against ``spec`` (then ``rules``) and construct ``cls``.

    Raises:
        ContentError: The first field that breaks a check or rule, named by ``where``.
    """
    try:
        values = check_fields(raw, spec)
    except Invalid as exc:
        raise where.fail(exc.path, exc.message) from None
    if rules is not None:
        rules(where, set(raw), values)
    return cls(**values)


def load_records(
    path: Path, kind: str, spec: Spec, cls: Callable[..., T], rules: Rules | None = None
) -> dict[str, T]:
    """Load every ``[[kind]]`` record of ``path`` into a dict by key, in file order.

    Raises:
        ContentError: As :func:`read_records` and :func:`build_record`, or a key used twice.
    """
    out: dict[str, T] = {}
    first_index: dict[str, int] = {}
    for index, raw in enumerate(read_records(path, kind), start=1):
        where = Where(path.name, kind, record_ident(raw, index))
        record = build_record(where, raw, spec, cls, rules)
        record_key: str = raw["key"]  # checked by build_record
        if record_key in out:
            raise where.fail(
                "key",
                f"duplicate key {record_key!r} (first used by record #{first_index[record_key]})",
            )
        out[record_key] = record
        first_index[record_key] = index
    return out
