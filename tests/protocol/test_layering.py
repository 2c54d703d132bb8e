"""protocol/ is sans-I/O: it imports only the standard library, msgpack, msgspec (encoding only), numpy."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "protocol"
ALLOWED_THIRD_PARTY = {"msgpack", "msgspec", "numpy"}
FORBIDDEN_STDLIB = {"asyncio", "socket", "selectors", "ssl", "time", "random", "os", "io"}


def imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_protocol_imports() -> None:
    files = sorted(PACKAGE.glob("*.py"))
    assert files
    for path in files:
        for root in imported_roots(path):
            ok = (
                root == "protocol"
                or root in ALLOWED_THIRD_PARTY
                or (root in sys.stdlib_module_names and root not in FORBIDDEN_STDLIB)
            )
            assert ok, f"{path.name} imports {root}"
