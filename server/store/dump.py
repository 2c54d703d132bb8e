"""A world as JSON lines, to back it up or move it between backends.

The file's first line is a header, ``{"underhall": "world", "format": 2,
"schema": N}``; then one object per row, in this order and sorted:

- ``{"table": "meta", "key": str, "value": str}``
- ``{"table": "players", "name": str, "token_hash": str, "saved_tick": int,
  "record": str}``
- ``{"table": "levels", "depth": int, "saved_tick": int, "record": str}``
- ``{"table": "recordings", "id": str, "data": str}``: the server's recorded
  games (issue 45), each file whole (format 2; format 1 files have none).

``record`` is the stored msgpack blob and ``data`` a recording's file, in
standard base64, so a round trip through any backend gives back the same
bytes. The file holds token hashes:
it is created private (mode 0600).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

from server.store.base import LevelRow, PlayerRow, Store, StoreError, unpack_record

FORMAT = 2
"""The version of this file layout (2 added recordings; 1 is read too)."""

_FIELDS: dict[str, dict[str, type]] = {
    "meta": {"key": str, "value": str},
    "players": {"name": str, "token_hash": str, "saved_tick": int, "record": str},
    "levels": {"depth": int, "saved_tick": int, "record": str},
    "recordings": {"id": str, "data": str},
}


def export_world(
    store: Store, path: Path, recordings: Iterable[tuple[str, bytes]] = ()
) -> Counter[str]:
    """Write every row of ``store``, then ``recordings`` (``(id, file)``),
    to ``path`` (replaced atomically).

    Returns:
        Rows written per table.

    Raises:
        StoreError: The database cannot be read or the file written.
    """
    counts: Counter[str] = Counter()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            _line(out, {"underhall": "world", "format": FORMAT, "schema": store.schema_version()})
            for kind, row in store.dump():
                if kind == "meta":
                    _line(out, {"table": "meta", "key": row[0], "value": row[1]})
                    counts["meta"] += 1
                elif kind == "player":
                    _line(
                        out,
                        {
                            "table": "players",
                            "name": row[0],
                            "token_hash": row[1],
                            "saved_tick": row[3],
                            "record": _b64(row[2]),
                        },
                    )
                    counts["players"] += 1
                else:
                    _line(
                        out,
                        {
                            "table": "levels",
                            "depth": row[0],
                            "saved_tick": row[2],
                            "record": _b64(row[1]),
                        },
                    )
                    counts["levels"] += 1
            for rid, data in recordings:
                _line(out, {"table": "recordings", "id": rid, "data": _b64(data)})
                counts["recordings"] += 1
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise StoreError(f"{path}: cannot write: {exc.strerror or exc}") from exc
    return counts


def import_world(
    store: Store,
    path: Path,
    *,
    replace: bool = False,
    recordings: Callable[[str, bytes], None] | None = None,
) -> Counter[str]:
    """Load a file written by :func:`export_world` into ``store``, in one
    transaction: afterwards the database holds exactly the file's rows.
    Its recordings go to ``recordings(id, file)`` once the world is in
    (skipped when None).

    Args:
        replace: Allow overwriting a database that already holds a world.

    Returns:
        Rows read per table.

    Raises:
        StoreError: The file cannot be read or a line is malformed (the
            message names the line; nothing is written), or the database
            holds a world and ``replace`` is false.
    """
    meta: list[tuple[str, str]] = []
    players: list[PlayerRow] = []
    levels: list[LevelRow] = []
    recorded: list[tuple[str, bytes]] = []
    header = False
    try:
        with path.open(encoding="utf-8") as src:
            for number, text in enumerate(src, 1):
                where = f"{path}:{number}"
                try:
                    obj = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise StoreError(f"{where}: not JSON: {exc.msg}") from exc
                if number == 1:
                    _check_header(obj, where)
                    header = True
                    continue
                row = _check_row(obj, where)
                if row["table"] == "meta":
                    meta.append((row["key"], row["value"]))
                elif row["table"] == "players":
                    players.append(
                        (
                            row["name"],
                            row["token_hash"],
                            _unb64(row["record"], where),
                            row["saved_tick"],
                        )
                    )
                elif row["table"] == "levels":
                    levels.append((row["depth"], _unb64(row["record"], where), row["saved_tick"]))
                else:
                    recorded.append((row["id"], _unb64(row["data"], where, record=False)))
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"{path}: cannot read: {exc}") from exc
    if not header:
        raise StoreError(f"{path}: empty file, not a world export")
    for name, count in Counter(k for k, _ in meta).items():
        if count > 1:
            raise StoreError(f"{path}: meta key {name!r} appears {count} times")
    for label, keys in (("player", [p[0] for p in players]), ("level", [lv[0] for lv in levels])):
        for key, count in Counter(keys).items():
            if count > 1:
                raise StoreError(f"{path}: {label} {key!r} appears {count} times")
    if not replace and not store.is_empty():
        raise StoreError(
            f"{store.url} already holds a world; import into an empty "
            "database, or pass --replace to overwrite it"
        )
    store.replace_all(meta, players, levels)
    if recordings is not None:
        for rid, data in recorded:
            recordings(rid, data)
    counts = Counter(meta=len(meta), players=len(players), levels=len(levels))
    counts["recordings"] = len(recorded)
    return counts


def _line(out: IO[str], obj: dict[str, Any]) -> None:
    out.write(json.dumps(obj, ensure_ascii=True, separators=(",", ":")) + "\n")


def _b64(blob: bytes) -> str:
    return base64.b64encode(blob).decode("ascii")


def _unb64(text: str, where: str, *, record: bool = True) -> bytes:
    """The bytes of a base64 field; a ``record`` must unpack as one."""
    try:
        blob = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise StoreError(f"{where}: {'record' if record else 'data'} is not base64") from exc
    if not record:
        return blob
    try:
        unpack_record(blob)
    except StoreError as exc:
        raise StoreError(f"{where}: {exc}") from exc
    return blob


def _check_header(obj: Any, where: str) -> None:
    if not isinstance(obj, dict) or obj.get("underhall") != "world":
        raise StoreError(f"{where}: not an Underhall world export (no header)")
    if obj.get("format") not in (1, FORMAT):
        raise StoreError(
            f"{where}: export format {obj.get('format')!r}; this version reads formats 1-{FORMAT}"
        )


def _check_row(obj: Any, where: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise StoreError(f"{where}: a row must be a JSON object")
    table = obj.get("table")
    fields = _FIELDS.get(table) if isinstance(table, str) else None
    if fields is None:
        raise StoreError(f"{where}: unknown table {table!r} (known: {', '.join(_FIELDS)})")
    extra = set(obj) - set(fields) - {"table"}
    if extra:
        raise StoreError(f"{where}: unknown field(s) {', '.join(sorted(extra))}")
    for name, kind in fields.items():
        value = obj.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise StoreError(f"{where}: field {name!r} must be {kind.__name__}")
    return obj
