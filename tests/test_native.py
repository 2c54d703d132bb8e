"""The mypyc-compiled build of the tick's hot modules (``setup.py``,
``server/_native.py``; issue 10) against their Python sources: the same seed
and commands give byte-for-byte the same messages and the same world, and an
extension older than its source is never imported."""

from __future__ import annotations

import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from server import _native

ROOT = Path(__file__).resolve().parents[1]

# Random play of 24 players (walking, throwing, zapping, using items, casting,
# taking stairs; three invisible) for 260 ticks; prints which build ran and a
# digest of every message as encoded for the wire, in order, and of the world.
PLAY = """
import hashlib, json, sys
import numpy as np
from server import _native
from protocol.codec import encode_server
from server.game.game import Game
from server.game.store import Store
from server.sim.world import World
import server.game.views, server.sim.world
from tests.game.randomplay import give_commands, seat_players

seed = int(sys.argv[1])
world = World(seed)
game = Game(world, Store(":memory:"))
rng = np.random.default_rng(seed)
ids = seat_players(game, 24, rng, scatter=seed % 2 == 1, invisible=3)
digest = hashlib.sha256()
seq = messages = 0
for tick in range(260):
    seq, _ = give_commands(game, ids, rng, tick, seq)
    for pid, batch in sorted(game.step().items()):
        for message in batch:
            digest.update(pid.to_bytes(4, "little") + encode_server(message))
            messages += 1
for actor in sorted(world.actors.values(), key=lambda a: a.id):
    digest.update(repr((actor.id, actor.depth, actor.x, actor.y, actor.hp, actor.en)).encode())
print(json.dumps({
    "build": _native.choose(),
    "files": [server.game.views.__file__, server.sim.world.__file__],
    "messages": messages,
    "tick": world.tick,
    "digest": digest.hexdigest(),
}))
"""


def _play(seed: int, *, pure: bool) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "UNDERHALL_PURE"}
    if pure:
        env["UNDERHALL_PURE"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", PLAY, str(seed)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_ci_runs_the_compiled_build() -> None:
    """CI installs on a machine with a C compiler: there the install must have
    compiled the modules, or the tests (and this project's figures) would be
    of the pure-Python build without anyone noticing."""
    if not os.environ.get("CI"):
        pytest.skip("not CI: a machine without a C compiler installs the pure-Python build")
    assert _native.choose() == "compiled", _native.stale()


@pytest.mark.skipif(
    _native.choose() != "compiled",
    reason="the compiled modules are not built or not current (UNDERHALL_PURE set, no C "
    "compiler at install, or sources edited since): there is no compiled build to compare",
)
@pytest.mark.parametrize("seed", [33, 8])
def test_the_compiled_build_plays_the_game_the_sources_play(seed: int) -> None:
    compiled = _play(seed, pure=False)
    pure = _play(seed, pure=True)
    assert compiled["build"] == "compiled" and pure["build"] == "pure"
    assert all(not str(f).endswith(".py") for f in compiled["files"])
    assert all(str(f).endswith(".py") for f in pure["files"])
    assert compiled["tick"] == pure["tick"]
    assert compiled["messages"] == pure["messages"]
    assert isinstance(compiled["messages"], int) and compiled["messages"] > 3000
    assert compiled["digest"] == pure["digest"]


def _fake_build(root: Path, built: float, *, group: bool = True) -> None:
    """Empty files standing for the extensions of every compiled module under
    ``root``, written at ``built``, a minute after their sources (empty
    sources are made where ``root`` has none); and the shared library unless
    ``group`` is False. Importing one of these would fail."""
    suffix = next(s for s in importlib.machinery.EXTENSION_SUFFIXES if s.startswith(".cpython"))
    for name in _native.COMPILED:
        source = root.joinpath(*name.split(".")).with_suffix(".py")
        if not source.exists():
            source.parent.mkdir(parents=True, exist_ok=True)
            source.write_text("")
        ext = Path(str(source.with_suffix("")) + suffix)
        ext.unlink(missing_ok=True)
        ext.write_bytes(b"")
        os.utime(source, (built - 60, built - 60))
        os.utime(ext, (built, built))
    if group:
        root.joinpath(_native.GROUP + suffix).write_bytes(b"")


def test_an_extension_older_than_its_source_is_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_native, "ROOT", tmp_path)
    _fake_build(tmp_path, 1_000_060)
    assert _native.stale() == []
    views = tmp_path / "server" / "game" / "views.py"
    os.utime(views, (1_000_061, 1_000_061))  # within STALE_AFTER_S: as a wheel writes them
    assert _native.stale() == []
    os.utime(views, (1_000_090, 1_000_090))  # edited half a minute after the build
    assert _native.stale() == ["server.game.views"]
    (tmp_path / "server" / "sim" / "world.py").touch()  # now
    assert _native.stale() == ["server.game.views", "server.sim.world"]


def test_without_the_shared_library_every_module_is_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_native, "ROOT", tmp_path)
    _fake_build(tmp_path, 1_000_060, group=False)
    assert _native.stale() == list(_native.COMPILED)


def test_the_source_finder_loads_only_the_compiled_modules_from_source() -> None:
    spec = _native.SourceFinder.find_spec("server.game.views")
    assert spec is not None and spec.origin == str(ROOT / "server" / "game" / "views.py")
    assert _native.SourceFinder.find_spec("server.sim.harm") is None
    assert _native.SourceFinder.find_spec("numpy") is None


def _copy_checkout(root: Path) -> None:
    """Copy this checkout's ``server`` and ``protocol`` packages under ``root``,
    without caches or compiled extensions."""
    for part in ("server", "protocol"):
        shutil.copytree(
            ROOT / part, root / part, ignore=shutil.ignore_patterns("__pycache__", "*.so")
        )


def _python_in(
    root: Path, code: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``code`` with warnings shown in a fresh interpreter whose working
    directory is ``root``, with this environment but ``UNDERHALL_PURE`` and
    ``PYTHONPATH`` (plus ``env``); fails the test if it fails."""
    base = {k: v for k, v in os.environ.items() if k not in ("UNDERHALL_PURE", "PYTHONPATH")}
    done = subprocess.run(
        [sys.executable, "-W", "always", "-c", code],
        cwd=root,
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done


def test_a_stale_build_runs_the_sources_and_says_how_to_rebuild(tmp_path: Path) -> None:
    """A checkout whose extensions are older than an edited source (a copy of
    this one, with empty files built an hour ago standing for the extensions) imports every
    compiled module from its source, with a warning naming the edited one."""
    _copy_checkout(tmp_path)
    _fake_build(tmp_path, time.time() - 3600)
    views = tmp_path / "server" / "game" / "views.py"
    views.write_text(views.read_text() + "\n# edited\n")
    done = _python_in(
        tmp_path,
        "import server, server._native as n, server.game.views as v; print(n.choose(), v.__file__)",
    )
    assert done.stdout.split() == ["stale", str(views)]
    assert "server.game.views changed since it was compiled" in done.stderr
    assert "pip install -e ." in done.stderr


def test_a_checkout_with_nothing_compiled_says_why_it_runs_the_sources(tmp_path: Path) -> None:
    """As after ``pip install -e .`` on a machine without a C compiler: no
    extension beside the sources. The server's listening line names the pure
    build and says what usually causes it; with ``UNDERHALL_PURE`` set (the
    user asked for it) it names the pure build only."""
    _copy_checkout(tmp_path)
    code = "import server._native as n; print(n.build_name())"
    said = [_python_in(tmp_path, code, env).stdout.strip() for env in ({}, {"UNDERHALL_PURE": "1"})]
    assert said[0].startswith("pure build: no module was compiled at install")
    assert "C compiler" in said[0]
    assert said[1] == "pure build"
