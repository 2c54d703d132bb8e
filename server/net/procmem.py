"""The server process's own memory: resident size, live objects by type, allocation sites.

What the admin command ``memory`` adds to a game's census
(:mod:`server.game.census`), for the soak benchmark (``bench/soak.py``,
issue 48) and for an operator asking why a server grew:

- resident memory (``/proc/self/statm``, Linux; None elsewhere);
- the collector's generation counts and, when asked, the live objects it
  tracks counted by type (``gc.get_objects()``: one pass over every tracked
  object, about 0.1 s per million on a slow core, and the tick waits for it);
- when the process runs with ``tracemalloc`` on (``PYTHONTRACEMALLOC=1`` in
  its environment, which costs the server about a third more CPU), the
  allocation sites holding the most memory, by file and line.
"""

from __future__ import annotations

import gc
import os
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_bytes() -> int | None:
    """This process's resident set size in bytes, or None where ``/proc`` is missing."""
    try:
        return int(Path("/proc/self/statm").read_text().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return None


def _counts(objects: list[Any]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for obj in objects:
        kind = type(obj)  # not obj.__class__: a dead weak proxy raises on that
        counts[f"{kind.__module__}.{kind.__qualname__}"] += 1
    return counts


def _by_type(objects: list[Any], top: int) -> dict[str, int]:
    out = {"(all)": len(objects)}
    out.update(_counts(objects).most_common(top))
    return out


def _paced() -> bool:
    """Whether the server runs the collector itself (:func:`server.net.collector.tune`:
    automatic collection off, survivors frozen)."""
    return not gc.isenabled() and gc.get_freeze_count() > 0


def objects_by_type(top: int) -> dict[str, int]:
    """The ``top`` most numerous types among the objects the collector
    tracks, the frozen ones included (``module.qualname`` -> count), most
    numerous first, and ``"(all)"``: how many it tracks in all.

    In a server that paces its collector (:mod:`server.net.collector`), the
    frozen heap is let out to be listed and frozen again after a young
    collection, which is what the pacer does between two ticks anyway."""
    if not _paced():
        return _by_type(gc.get_objects(), top)
    gc.collect(0)
    gc.unfreeze()
    try:
        return _by_type(gc.get_objects(), top)
    finally:
        gc.freeze()


def garbage_by_type(top: int) -> dict[str, int]:
    """Collect everything, the frozen heap included, and count what that
    freed by type (objects of each type before, less those after), as
    :func:`objects_by_type` does. In a server that paces its collector, a
    reference cycle that becomes garbage while clients are connected is
    otherwise kept until none is (:mod:`server.net.collector`): this says
    whether any is, and of what. (Counted, not listed through
    ``gc.DEBUG_SAVEALL``: a cycle that a finalizer breaks, such as one
    through a suspended generator, never shows in ``gc.garbage``.) A full
    collection and two passes over every object: the tick waits for them
    (about half a second per million objects on a slow core)."""
    paced = _paced()
    if paced:
        gc.unfreeze()
    try:
        before = _counts(gc.get_objects())
        gc.collect()
        after = _counts(gc.get_objects())
    finally:
        if paced:
            gc.freeze()
    freed = before - after
    out = {"(all)": sum(freed.values())}
    out.update(freed.most_common(top))
    return out


def allocation_sites(top: int) -> list[dict[str, Any]] | None:
    """The ``top`` allocation sites holding the most memory now, each
    ``{"site": "file:line", "bytes": int, "blocks": int}``, largest first,
    or None when ``tracemalloc`` is not tracing. Files are shown relative
    to the working directory or ``site-packages`` where they lie under one."""
    if not tracemalloc.is_tracing():
        return None
    snapshot = tracemalloc.take_snapshot().filter_traces(
        (tracemalloc.Filter(False, tracemalloc.__file__),)
    )
    out = []
    for stat in snapshot.statistics("lineno")[:top]:
        frame = stat.traceback[0]
        out.append({"site": f"{_short(frame.filename)}:{frame.lineno}", "bytes": stat.size,
                    "blocks": stat.count})  # fmt: skip
    return out


def _short(filename: str) -> str:
    cut = filename.rfind("site-packages/")
    if cut >= 0:
        return filename[cut + len("site-packages/") :]
    cwd = os.getcwd() + os.sep
    return filename.removeprefix(cwd)


def process_memory(types: int = 0, sites: int = 0, garbage: int = 0) -> dict[str, Any]:
    """The process's figures: ``rss_bytes``, ``gc_counts`` (the collector's
    three generation counters), ``gc_frozen`` (objects moved to the
    permanent generation), ``objects`` (:func:`objects_by_type` with
    ``types`` entries; absent when ``types`` is 0) and ``sites``
    (:func:`allocation_sites` with ``sites`` entries; absent when 0,
    None when not tracing) and ``garbage`` (:func:`garbage_by_type` with
    ``garbage`` entries, which frees it; absent when 0)."""
    out: dict[str, Any] = {
        "rss_bytes": rss_bytes(),
        "gc_counts": list(gc.get_count()),
        "gc_frozen": gc.get_freeze_count(),
    }
    if types > 0:
        out["objects"] = objects_by_type(types)
    if sites > 0:
        out["sites"] = allocation_sites(sites)
    if garbage > 0:
        out["garbage"] = garbage_by_type(garbage)
    return out
