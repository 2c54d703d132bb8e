"""The numbers both sides must agree on: the package's, docs/protocol.md's
and the Node interop client's (tests/interop/client.mjs, written from the
document alone) are the same."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from protocol.messages import BACK_TICKS, DELTA_KEYS, STEP_DIRECTIONS
from protocol.version import PROTOCOL_VERSION

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
NODE = (ROOT / "tests" / "interop" / "client.mjs").read_text(encoding="utf-8")


def node_const(name: str) -> Any:
    """The value of ``const NAME = ...;`` in client.mjs, read as JSON."""
    found = re.search(rf"^const {name} = (.+?);$", NODE, flags=re.MULTILINE)
    assert found, f"no const {name} in client.mjs"
    return json.loads(found.group(1))


def test_the_doc_and_the_node_client_speak_this_version() -> None:
    assert DOC.startswith(f"# Underhall wire protocol, version {PROTOCOL_VERSION}\n")
    assert f"Version {PROTOCOL_VERSION} changed, from version {PROTOCOL_VERSION - 1}:" in DOC
    assert node_const("PROTOCOL_VERSION") == PROTOCOL_VERSION


def test_the_delta_key_table_is_the_packages() -> None:
    section = DOC.split("### `delta`", 1)[1].split("\n### ", 1)[0]
    rows = re.findall(r"^\| (\d+) \| `(\w+)` \|$", section, flags=re.MULTILINE)
    assert [(int(k), name) for k, name in rows] == list(enumerate(DELTA_KEYS))
    assert tuple(node_const("DELTA_KEYS")) == DELTA_KEYS


def test_the_node_client_steps_and_keeps_as_the_package_does() -> None:
    assert [tuple(d) for d in node_const("STEP_DIRECTIONS")] == list(STEP_DIRECTIONS)
    assert node_const("BACK_TICKS") == BACK_TICKS
