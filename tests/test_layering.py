"""The layering of STYLE.md, checked by parsing every module's imports.

    client/  ->  protocol/
    server/net  ->  server/game  ->  server/sim  ->  server/content
    server/game ->  protocol/        server/net -> protocol/
    server/cluster  ->  server/game, server/store, server/net, protocol/

Dependencies point down only; ``server/sim`` is pure (no clock, no global
random, no I/O); ``server/cli.py`` is the composition root and may import
anything.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# package prefix -> prefixes of this project it may import
ALLOWED = {
    "server.content": {"server.content"},
    "server.sim": {"server.sim", "server.content"},
    "server.game": {"server.game", "server.sim", "server.content", "server.store", "protocol"},
    "server.store": {"server.store"},
    "server.net": {"server.net", "server.game", "protocol"},
    "server.cluster": {
        "server.cluster",
        "server.net",
        "server.game",
        "server.sim",
        "server.content",
        "server.store",
        "protocol",
    },
    "protocol": {"protocol"},
    "server._native": set(),
    "client": {"client", "protocol"},
}
OURS = ("server", "client", "protocol")
SIM_FORBIDDEN = {
    "random",
    "time",
    "asyncio",
    "os",
    "socket",
    "websockets",
    "uvloop",
    "datetime",
    "threading",
}


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


MODULES = sorted(p for pkg in OURS for p in (ROOT / pkg).rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_point_down(path: Path) -> None:
    module = _module(path)
    if module == "server.cli" or module.startswith("server.__"):
        return
    layer = next(
        prefix
        for prefix in sorted(ALLOWED, key=len, reverse=True)
        if module == prefix or module.startswith(prefix + ".")
    )
    for name in _imports(path):
        if name.split(".")[0] not in OURS:
            continue
        assert any(name == a or name.startswith(a + ".") for a in ALLOWED[layer]), (
            f"{module} (layer {layer}) imports {name}"
        )


def test_simulation_is_pure() -> None:
    files = sorted((ROOT / "server" / "sim").glob("*.py"))
    assert len(files) > 5
    for path in files:
        for name in _imports(path):
            root = name.split(".")[0]
            assert root not in SIM_FORBIDDEN, f"{path.name} imports {name}"
            assert (
                root in OURS
                or root in {"numpy", "tcod", "__future__"}
                or (root in sys.stdlib_module_names)
            ), f"{path.name} imports {name}"
