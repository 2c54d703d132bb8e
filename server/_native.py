"""Which build of the tick's hot modules runs: compiled or pure Python.

``pip install`` compiles the modules named in :data:`COMPILED` with mypyc
(``setup.py``) into C extensions that sit beside their sources. The Python
source is the reference: the extensions are built from it and play the same
game, in about a fifth fewer instructions a tick (issue 10).

An extension built from an older source would run the old code. So at import
of :mod:`server`, :func:`choose` compares each extension's modification time
with its source's. If any source is newer (edited, or changed by a ``git
pull`` since the last install), or only some extensions are there, every one
of these modules is imported from its source and a warning says how to
rebuild; the compiled ones call one another directly, so they are used all
together or not at all. ``UNDERHALL_PURE=1`` in the environment asks for the
sources without a warning (and, at install time, skips the compiling).

This module imports only the standard library.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

COMPILED: tuple[str, ...] = (
    "server.game.game",
    "server.game.host",
    "server.game.index",
    "server.game.views",
    "server.game.wire",
    "server.sim.actors",
    "server.sim.combat",
    "server.sim.events",
    "server.sim.fighting",
    "server.sim.fov",
    "server.sim.hunger",
    "server.sim.items",
    "server.sim.level",
    "server.sim.monsters",
    "server.sim.status",
    "server.sim.upkeep",
    "server.sim.world",
)
"""The modules ``setup.py`` compiles: the ones a tick runs for every player
and every walker (py-spy of ``bench/tick.py``, crowded and spread), and the
melee path (``combat``, ``fighting``, ``status``: a monster's attack on a
player, about 250 a tick in the spread scene at 4,000 players)."""

GROUP = "underhall_native__mypyc"
"""The shared library that holds the compiled code of all of them (mypyc's
``group_name`` in ``setup.py``, plus ``__mypyc``), beside the ``server``
package."""

STALE_AFTER_S = 2.0
"""Seconds a source may be newer than its extension and still count as the
one it was built from: installing a wheel writes the two a moment apart."""

ROOT = Path(__file__).resolve().parent.parent

_state: str | None = None


def source_of(name: str) -> Path:
    """The ``.py`` file of the dotted module ``name`` under this checkout."""
    return ROOT.joinpath(*name.split(".")).with_suffix(".py")


def extension_of(name: str) -> Path | None:
    """The compiled extension of ``name`` beside its source, or None."""
    stem = ROOT.joinpath(*name.split("."))
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        candidate = Path(str(stem) + suffix)
        if candidate.exists():
            return candidate
    return None


def stale(names: Sequence[str] = COMPILED) -> list[str]:
    """The modules of ``names`` whose extension is missing or older than
    their source (by more than :data:`STALE_AFTER_S`); all of them if the
    shared library :data:`GROUP` is missing."""
    if extension_of(GROUP) is None:
        return list(names)
    out = []
    for name in names:
        ext = extension_of(name)
        if ext is None or source_of(name).stat().st_mtime > ext.stat().st_mtime + STALE_AFTER_S:
            out.append(name)
    return out


class SourceFinder:
    """A meta path finder that imports the modules of :data:`COMPILED` from
    their ``.py`` files, ahead of the extensions beside them."""

    @classmethod
    def find_spec(
        cls, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in COMPILED:
            return None
        source = str(source_of(fullname))
        loader = importlib.machinery.SourceFileLoader(fullname, source)
        return importlib.util.spec_from_file_location(fullname, source, loader=loader)


def pure_asked() -> bool:
    """Whether ``UNDERHALL_PURE`` (set, and not ``0``) asks for the Python
    sources: read by :func:`choose`, :func:`build_name` and ``setup.py``."""
    return os.environ.get("UNDERHALL_PURE", "") not in ("", "0")


def build_name() -> str:
    """The build that runs, as ``underhall serve`` names it in its listening
    line (calls :func:`choose`): ``"compiled build"``; ``"pure build"``
    when ``UNDERHALL_PURE`` asked for it; a pure build nobody asked for
    says that nothing was compiled and why that usually is; a stale one
    says how to rebuild."""
    state = choose()
    if state == "compiled":
        return "compiled build"
    if state == "stale":
        return "stale build: running the sources; run `pip install -e .` again"
    if pure_asked():
        return "pure build"
    return (
        "pure build: no module was compiled at install (no C compiler or Python headers?); "
        "the same game for a little more CPU, see the README"
    )


def choose() -> str:
    """Decide, once per process, which build of :data:`COMPILED` is imported.

    Returns:
        ``"compiled"`` (every extension present and current), ``"pure"`` (no
        extension was built, or ``UNDERHALL_PURE`` is set) or ``"stale"``
        (some extension is missing or older than its source: the sources are
        imported, with a :class:`RuntimeWarning` naming them).
    """
    global _state
    if _state is not None:
        return _state
    behind = stale()
    if pure_asked():
        _state = "pure"
    elif len(behind) == len(COMPILED):
        _state = "pure"  # nothing was compiled: the sources are imported anyway
        return _state
    elif not behind:
        _state = "compiled"
        return _state
    else:
        _state = "stale"
        warnings.warn(
            f"underhall: {', '.join(behind)} changed since it was compiled; running the "
            "pure-Python modules (slower). Run `pip install -e .` again to rebuild them.",
            RuntimeWarning,
            stacklevel=2,
        )
    sys.meta_path.insert(0, SourceFinder())
    return _state
