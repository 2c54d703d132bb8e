"""docs/protocol.md is exact (issue 47, item 7): the browser client and the
Node interop client are written from it alone, so every message type, key
table and command row it gives is checked against the package and against
messages a real game builds.

The version number and the delta key table are checked in
tests/protocol/test_wire_tables.py, the error codes in
tests/protocol/test_errors.py.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest

from protocol import codec
from protocol.codec import encode_server
from protocol.messages import (
    COMMAND_ARGS,
    COMMAND_KEYS,
    ChatOut,
    CommandName,
    Error,
    Info,
    Pong,
)
from protocol.version import PROTOCOL_VERSION
from server.game.game import Game
from server.game.store import Store
from server.net.watch import spectator_welcome
from server.sim.world import World

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")


def section(heading: str) -> str:
    """The text under the first heading that starts with ``heading``, up to
    the next heading of any level."""
    found = re.search(
        rf"^#+ {re.escape(heading)}.*?$(.*?)(?=^#+ |\Z)", DOC, re.MULTILINE | re.DOTALL
    )
    assert found, f"no section {heading!r} in docs/protocol.md"
    return found.group(1)


def table(text: str, header: str = "| ") -> list[list[str]]:
    """The rows of the first Markdown table in ``text`` whose header row starts
    with ``header`` (header and rule left out)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(header)), None)
    assert start is not None, f"no table headed {header!r}"
    rows: list[list[str]] = []
    for line in lines[start + 2 :]:
        if not line.startswith("| "):
            break
        rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return rows


def names(cell: str) -> list[str]:
    """The backticked names in a table cell, in order."""
    return re.findall(r"`([^`]+)`", cell)


def keys_of(cell: str) -> tuple[set[str], set[str]]:
    """A "keys" cell's required and optional keys: each key is written
    ```k` type`` or ``optional `k` type``."""
    required: set[str] = set()
    optional: set[str] = set()
    for opt, key in re.findall(r"(optional )?`(\w+)` (?:int|str|bool|list|map|float)\b", cell):
        (optional if opt else required).add(key)
    return required, optional


# --- client -> server ------------------------------------------------------------


def client_rows() -> dict[str, list[str]]:
    return {names(row[0])[0]: row for row in table(section("Client → server"))}


def test_the_client_message_types_are_the_codecs() -> None:
    assert set(client_rows()) == set(codec._CLIENT_DECODERS)


@pytest.mark.parametrize(
    ("t", "required", "optional"),
    [
        ("hello", codec._HELLO_REQ, codec._HELLO_OPT),
        ("chat", codec._CHAT_REQ, codec._CHAT_OPT),
        ("ping", codec._PING_REQ, frozenset()),
        ("look", codec._LOOK_REQ, frozenset()),
    ],
)
def test_a_client_messages_keys_are_the_codecs(
    t: str, required: frozenset[str], optional: frozenset[str]
) -> None:
    assert keys_of(client_rows()[t][1]) == (set(required) - {"t"}, set(optional))


def test_a_cmds_own_keys_are_the_codecs() -> None:
    required, _ = keys_of(client_rows()["cmd"][1].split(", and")[0])
    assert required == set(codec._CMD_REQ) - {"t"}
    argument_keys = {
        names(row[0])[0] for row in table(section("The keys of a `cmd`"), "| key | type")
    }
    assert argument_keys == set(COMMAND_ARGS)


def test_the_command_table_is_the_packages() -> None:
    rows = table(section("The keys of a `cmd`"), "| `c` | requires")
    documented: dict[str, tuple[set[str], set[str]]] = {}
    for row in rows:
        needed, _, either = row[1].partition("at most one")
        for c in row[0].split(" / "):
            documented[names(c)[0]] = (set(names(needed)), set(names(either)))
    assert set(documented) == {c.value for c in CommandName}
    for name, rule in COMMAND_KEYS.items():
        assert documented[name.value] == (set(rule.required), set(rule.one_of)), name


# --- server -> client ------------------------------------------------------------


def server_rows() -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for row in table(section("Server → client")):
        rows[names(row[0])[0]] = row
    return rows


@pytest.fixture(scope="module")
def played() -> dict[str, Any]:
    """Messages of a real game, packed and read back as a client reads them:
    the ``welcome`` and first ``snap`` of a player, and an ``info``, a
    ``pong``, an ``error`` and a ``chat``."""
    game = Game(World(5), Store(":memory:"))
    welcome, _ = game.join("ann", None, "mage", session=object())
    (aid,) = game.seats
    snap = game.step()[aid][0]
    out = {
        "welcome": encode_server(welcome),
        "snap": encode_server(snap),
        "info": encode_server(game.look(aid, aid)),
        "pong": encode_server(Pong(id=3, tick=game.world.tick)),
        "error": encode_server(Error(code="bad_field", msg="no", fatal=False)),
        "chat": encode_server(game.chat(aid, "hi", "global")[1]),
    }
    return {t: msgpack.unpackb(data, raw=False, strict_map_key=False) for t, data in out.items()}


def test_every_server_message_the_game_sends_is_documented(played: dict[str, Any]) -> None:
    assert {m["t"] for m in played.values()} <= set(server_rows())


@pytest.mark.parametrize("t", ["welcome", "info", "pong", "error"])
def test_a_server_messages_keys_are_as_documented(t: str, played: dict[str, Any]) -> None:
    row = server_rows()[t][1]
    required, optional = keys_of(row)
    assert set(played[t]) - {"t"} == required
    assert optional <= {"watch"}  # a spectator's welcome only


def test_a_spectators_welcome_has_the_optional_watch(played: dict[str, Any]) -> None:
    """A spectator's ``welcome`` (protocol 12) carries every key of the
    row, ``watch`` included; a player's carries none but the required ones."""
    game = Game(World(5), Store(":memory:"))
    game.join("ann", None, "mage", session=object())
    seat = game.by_name["ann"]
    spectator = spectator_welcome(game.welcome(seat, None, False))
    welcome = msgpack.unpackb(encode_server(spectator), raw=False)
    required, optional = keys_of(server_rows()["welcome"][1])
    assert set(welcome) - {"t"} == required | optional
    assert (welcome["watch"], welcome["name"], welcome["token"]) == ("ann", "ann", "")
    assert "watch" not in played["welcome"]


def test_a_chats_keys_are_as_documented(played: dict[str, Any]) -> None:
    row = server_rows()["chat"][1]
    required, optional = keys_of(row)
    sent = set(played["chat"]) - {"t"}
    assert required <= sent <= required | optional
    private = msgpack.unpackb(
        encode_server(ChatOut(sender="a", text="b", tick=1, scope="private", to="c")), raw=False
    )
    assert set(private) - {"t"} == required | optional


def test_a_snaps_keys_are_as_documented(played: dict[str, Any]) -> None:
    row = server_rows()["snap"][1]
    always, _, sometimes = row.partition("and any of")
    sent = set(played["snap"]) - {"t"}
    assert set(names(always)) <= sent <= set(names(always)) | set(names(sometimes))


def test_me_carries_only_documented_keys(played: dict[str, Any]) -> None:
    documented = {name for row in table(section("`me`")) for name in names(row[0])}
    me = played["snap"]["me"]
    assert set(me) <= documented
    optional = {"choice", "options", "resist"}  # sent when they say something
    assert documented - optional <= set(me)


def test_info_about_carries_only_documented_keys(played: dict[str, Any]) -> None:
    documented = {name for row in table(section("`info`")) for name in names(row[0])}
    about = played["info"]["about"]
    assert played["info"]["found"] is True
    assert set(about) <= documented
    missing = msgpack.unpackb(encode_server(Info(id=9, found=False, about={})), raw=False)
    assert missing["about"] == {}


def test_the_welcome_names_the_version_in_the_document(played: dict[str, Any]) -> None:
    assert played["welcome"]["v"] == PROTOCOL_VERSION
    assert f"(**{PROTOCOL_VERSION}**)" in client_rows()["hello"][2]
