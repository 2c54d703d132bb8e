"""An older install compiled the tick's modules into extensions beside their
sources (issue 10, removed in issue 44): a checkout that still holds them
refuses to import ``server`` and says what to delete, instead of running the
old compiled code in place of the sources."""

from __future__ import annotations

import importlib.machinery
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _import_server(root: Path) -> subprocess.CompletedProcess[str]:
    """``import server.sim.world`` in a fresh interpreter whose working
    directory (first on its path) is ``root``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-c", "import server.sim.world as w; print(w.__file__)"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_checkout_with_the_old_compiled_library_refuses_to_import(tmp_path: Path) -> None:
    for part in ("server", "protocol"):
        shutil.copytree(ROOT / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__"))
    clean = _import_server(tmp_path)
    assert clean.returncode == 0, clean.stderr
    assert clean.stdout.strip() == str(tmp_path / "server" / "sim" / "world.py")

    suffix = next(s for s in importlib.machinery.EXTENSION_SUFFIXES if s.startswith(".cpython"))
    (tmp_path / f"underhall_native__mypyc{suffix}").write_bytes(b"")
    left = _import_server(tmp_path)
    assert left.returncode != 0
    assert "ImportError" in left.stderr and "older install" in left.stderr
    assert "rm underhall_native__mypyc*.so && find server -name '*.so' -delete" in left.stderr
