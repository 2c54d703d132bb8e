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


def _graph() -> dict[str, set[str]]:
    """Module -> the modules of this project it imports (``from a import b``
    counts as importing ``a.b`` when that is a module), at any place in the
    file: ``TYPE_CHECKING`` blocks and functions included."""
    modules = {_module(p).removesuffix(".__init__") for p in MODULES}
    graph: dict[str, set[str]] = {}
    for path in MODULES:
        module = _module(path).removesuffix(".__init__")
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name in modules)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    if sub in modules:
                        found.add(sub)
                    elif node.module in modules:
                        found.add(node.module)
        graph[module] = found - {module}
    return graph


def _package(module: str) -> str:
    return module.rsplit(".", 1)[0]


SIM_CIRCLES_LEFT = {
    "server.sim.casting -> server.sim.zapping",
    "server.sim.casting -> server.sim.world",
    "server.sim.casting -> server.sim.world -> server.sim.use",
    "server.sim.casting -> server.sim.world -> server.sim.monsters",
    "server.sim.fighting -> server.sim.world",
    "server.sim.harm -> server.sim.world",
    "server.sim.inventory -> server.sim.world",
    "server.sim.inventory -> server.sim.world -> server.sim.use",
    "server.sim.inventory -> server.sim.world -> server.sim.projectiles",
    "server.sim.monsters -> server.sim.world",
    "server.sim.projectiles -> server.sim.world",
    "server.sim.upkeep -> server.sim.world",
    "server.sim.use -> server.sim.world",
    "server.sim.world -> server.sim.zapping",
}
"""The circles between the world and its rule modules, which import
``World`` for their type hints while the world calls them. They are debt,
listed so that none is added: breaking them takes a ``typing.Protocol`` of
the world for each rule module. A circle removed must be removed here too."""


def _circles() -> list[str]:
    return _find_circles(_graph())


def _find_circles(graph: dict[str, set[str]]) -> list[str]:
    """Each circle of imports inside one package, once, from its least module."""
    circles: list[list[str]] = []
    for start in sorted(graph):
        package = _package(start)
        # depth-first search for a way back to ``start`` inside its package
        stack: list[tuple[str, list[str]]] = [(start, [start])]
        seen: set[str] = set()
        while stack:
            node, path = stack.pop()
            for nxt in sorted(graph.get(node, ())):
                if _package(nxt) != package:
                    continue
                if nxt == start:
                    circles.append(path)
                elif nxt not in seen and nxt > start:  # each circle once, from its least module
                    seen.add(nxt)
                    stack.append((nxt, [*path, nxt]))
    return [" -> ".join(c) for c in circles]


def test_no_import_circle_inside_a_package() -> None:
    """STYLE.md, rule 7: a module that needs its host states a
    ``typing.Protocol`` of what it uses instead of importing it, so no two
    modules of one package import each other, even for type checking (the
    simulation's listed debt aside)."""
    circles = _circles()
    new = [c for c in circles if c not in SIM_CIRCLES_LEFT]
    assert not new, "import circles:\n" + "\n".join(new)
    gone = SIM_CIRCLES_LEFT - set(circles)
    assert not gone, f"no longer circles: take them off SIM_CIRCLES_LEFT: {sorted(gone)}"


def test_a_circle_is_found() -> None:
    """The search itself: a planted pair of modules importing each other is a circle."""
    graph = {"p.a": {"p.b"}, "p.b": {"p.a", "q.c"}, "q.c": {"p.a"}}
    assert _find_circles(graph) == ["p.a -> p.b"]
