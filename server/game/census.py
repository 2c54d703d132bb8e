"""A census of what a game holds in memory: players, levels, floors, caches.

Read-only counts for the admin command ``memory`` (:mod:`server.net.admin`)
and the soak benchmark (``bench/soak.py``, issue 48): the sizes of the
host's and the world's own maps and caches, so that a server whose memory
grows can say which of them grew. Nothing here changes the game, and
nothing is counted that would take more than a pass over the players, the
levels and their floors (a few ms with thousands of players).

Attributes that are private to the world or the host are read with
``getattr`` and a default: a census must survive those classes being
reshaped, and an attribute that is gone is reported as absent (``None``)
rather than failing the command.

Bytes are counted by :func:`held_bytes`: the numpy arrays an object holds
(each buffer once, however many views share it), the containers it holds
and what they hold, but not other objects they refer to (rules data, names)
nor python-tcod's C memory; so they are a floor, measured against the
process's resident memory by ``bench/levelmem.py``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sized
from operator import attrgetter
from typing import Any

import numpy as np

from server.sim.world import World

_CONTAINERS = (dict, list, tuple, set, frozenset)
_HELD = (np.ndarray, bytes, bytearray, *_CONTAINERS)
_PLAIN = frozenset({int, float, bool, str, type(None)})
"""Types :func:`held_bytes` passes over (small or shared: not counted)."""
HELD_DEPTH = 3
"""How many containers deep :func:`held_bytes` looks (a dict of tuples of
arrays is two)."""
_SLOTS: dict[type, tuple[tuple[str, ...], Callable[[object], Any]]] = {}


def _slot_values(obj: object) -> list[object]:
    """The values of every slot of ``obj``'s class and its bases (one
    :func:`operator.attrgetter` kept per class; a slot not set is None)."""
    cls = type(obj)
    kept = _SLOTS.get(cls)
    if kept is None:
        found: list[str] = []
        for klass in cls.__mro__:
            slots = klass.__dict__.get("__slots__", ())
            found.extend([slots] if isinstance(slots, str) else slots)
        names = tuple(found)
        kept = _SLOTS[cls] = (names, attrgetter(*names) if len(names) > 1 else lambda _o: ())
    names, getter = kept
    try:
        return list(getter(obj))
    except AttributeError:
        return [getattr(obj, name, None) for name in names]


def _array_bytes(array: np.ndarray[Any, Any], seen: set[int]) -> int:
    """The array object's own size, plus its buffer's if ``seen`` (ids of
    buffers counted) does not hold it yet (then it does)."""
    root = array
    while True:
        base = root.base
        if not isinstance(base, np.ndarray):  # as_strided's holder keeps the array as .base
            base = getattr(base, "base", None)
        if not isinstance(base, np.ndarray):
            break
        root = base
    own = sys.getsizeof(array) - (array.nbytes if array.base is None else 0)
    if id(root) in seen:
        return own
    seen.add(id(root))
    return own + root.nbytes


def _value_bytes(value: object, seen: set[int], depth: int) -> int:
    if isinstance(value, np.ndarray):
        return _array_bytes(value, seen)
    if isinstance(value, bytes | bytearray):
        if id(value) in seen:
            return 0
        seen.add(id(value))
        return sys.getsizeof(value)
    if depth <= 0 or not isinstance(value, _CONTAINERS) or id(value) in seen:
        return 0
    seen.add(id(value))
    total = sys.getsizeof(value)
    items = value.values() if isinstance(value, dict) else value
    plain = _PLAIN
    for item in items:
        if type(item) in plain:
            continue
        if isinstance(item, _HELD):
            total += _value_bytes(item, seen, depth - 1)
        elif hasattr(item, "__slots__"):
            total += sys.getsizeof(item)
    return total


def held_bytes(obj: object, seen: set[int] | None = None) -> int:
    """Bytes held by ``obj``: its own size, and for each of its attributes
    (slots or ``__dict__``; or its items, for a container) the numpy arrays
    (buffers counted once across calls sharing ``seen``), bytes, and
    containers up to :data:`HELD_DEPTH` deep with what they hold (slotted
    objects in them counted by their own size). Numbers, strings and other
    objects referred to are not counted (shared rules data, interned names)."""
    seen = set() if seen is None else seen
    if isinstance(obj, _HELD):
        return _value_bytes(obj, seen, HELD_DEPTH)
    total = sys.getsizeof(obj)
    plain = _PLAIN
    values = _slot_values(obj)
    values.extend(getattr(obj, "__dict__", {}).values())
    for value in values:
        if type(value) in plain or not isinstance(value, _HELD):
            continue
        if isinstance(value, _CONTAINERS) and not value:
            total += sys.getsizeof(value)  # empty: nothing inside to look at
            continue
        total += _value_bytes(value, seen, HELD_DEPTH)
    return total


def _size(obj: object, name: str) -> int | None:
    """``len(obj.name)``, or None if ``obj`` has no such sized attribute."""
    value = getattr(obj, name, None)
    return len(value) if isinstance(value, Sized) else None


def _fov_cells(cache: object) -> int:
    """Cells whose field of view ``cache`` (a level's
    :class:`~server.sim.sight.FovCache`) keeps."""
    if cache is None:
        return 0
    if isinstance(cache, Sized):
        return len(cache)
    visible = getattr(cache, "visible", None)
    if isinstance(visible, Sized):
        return len(visible)
    rows = getattr(cache, "rows", None)
    return int(np.count_nonzero(rows >= 0)) if isinstance(rows, np.ndarray) else 0


def level_census(world: World) -> list[dict[str, Any]]:
    """One entry per level in memory, by depth: ``depth``, ``players``
    (alive or awaiting respawn), ``monsters``, ``piles`` (floor cells with
    items), ``items`` (floor stacks), ``fov_cells`` (cells whose field of
    view is cached), and ``bytes`` (:func:`held_bytes`) of what the level
    holds: ``terrain`` (the level: terrain, the arrays made from it, rooms,
    floor items' lists), ``occupancy``, ``sight`` (the fields of view and
    occupancy the visible sets are built from), ``fov_cache``,
    ``monsters`` (their actors and what they hold: statuses, packs, kept
    routes), ``search_orders`` (:meth:`~server.sim.world.World.free_cell_near`'s),
    and ``total``."""
    by_depth: dict[int, list[Any]] = {}
    for monster in world.monsters():
        by_depth.setdefault(monster.depth, []).append(monster)
    fov_cache: Mapping[int, Any] = getattr(world, "_fov_cache", {})
    occ: Mapping[int, Any] = getattr(world, "_occ", {})
    sight: Mapping[int, Any] = getattr(world, "_sight", {})
    orders: Mapping[tuple[int, int, int], Any] = getattr(world, "_search_orders", {})
    out = []
    for depth in sorted(world.levels):
        level = world.levels[depth]
        cache = fov_cache.get(depth)
        monsters = by_depth.get(depth, [])
        seen: set[int] = set()
        held = {
            "terrain": held_bytes(level, seen),
            "occupancy": held_bytes(occ.get(depth), seen) if depth in occ else 0,
            "sight": held_bytes(sight[depth], seen) if depth in sight else 0,
            "fov_cache": 0 if cache is None else held_bytes(cache, seen),
            "monsters": sum(held_bytes(m, seen) for m in monsters),
            "search_orders": sum(held_bytes(v, seen) for k, v in orders.items() if k[0] == depth),
        }
        held["total"] = sum(held.values())
        out.append(
            {
                "depth": depth,
                "players": world.players_on(depth),
                "monsters": len(monsters),
                "piles": sum(1 for pile in level.items.values() if pile),
                "items": sum(len(pile) for pile in level.items.values()),
                "fov_cells": _fov_cells(cache),
                "bytes": held,
            }
        )
    return out


def world_census(world: World) -> dict[str, Any]:
    """Counts of the world's own maps: actors, players, map memory (depths
    remembered, and bytes: ``memory_live_bytes`` of the grids of the depths
    players are on, ``memory_packed_bytes`` of the compressed grids of the
    others, :class:`~server.sim.actors.MapMemory`), saved level
    records waiting to be laid over a level (count and bytes), the sizes of
    the view and path caches (entries), the monsters' kept path finders
    (``path_finders``, ``path_finder_cells``, ``path_finder_bytes``: a
    world's, not a level's, :data:`server.sim.paths.KEPT_CELLS` at most),
    ``player_bytes``, what the players' characters hold (packs, statuses;
    map memory aside) and ``view_set_bytes``, what their visible sets hold."""
    players = [a for a in world.actors.values() if a.is_player]
    grids = sum(len(a.memory) for a in players)
    live_bytes = sum(a.memory.live_bytes for a in players)
    packed_bytes = sum(a.memory.packed_bytes for a in players)
    saved = world.saved_levels
    saved_bytes = sum(len(r.get("terrain", b"")) for r in saved.values())
    saved_items = sum(len(pile) for r in saved.values() for _x, _y, pile in r.get("items", ()))
    return {
        "tick": world.tick,
        "actors": len(world.actors),
        "players": len(players),
        "monsters": len(world.monsters()),
        "levels": len(world.levels),
        "memory_grids": grids,
        "memory_bytes": live_bytes + packed_bytes,
        "memory_live_bytes": live_bytes,
        "memory_packed_bytes": packed_bytes,
        "saved_levels": len(saved),
        "saved_level_bytes": saved_bytes,
        "saved_level_items": saved_items,
        "projectiles": len(world.projectiles),
        "sees": len(world.sees),
        "seen_by": len(world.seen_by),
        "caches": {
            name.lstrip("_"): _size(world, name)
            for name in (
                "_occ",
                "_sight",
                "_fov_cache",
                "_raw_sees",
                "_sees_monsters",
                "_slots",
                "_search_orders",
                "_sees_invisible",
                "_version",
                "_players_on",
            )
        },
        "path_finders": _size(getattr(world, "paths", None), "_finders"),
        "path_finder_cells": getattr(getattr(world, "paths", None), "cells", None),
        "path_finder_bytes": getattr(getattr(world, "paths", None), "nbytes", None),
        "player_bytes": sum(held_bytes(a) for a in players),
        "view_set_bytes": sum(
            held_bytes(getattr(world, name, {}))
            for name in ("sees", "seen_by", "_raw_sees", "_sees_monsters")
        ),
    }


def host_census(host: object) -> dict[str, Any]:
    """Counts of the host's (:class:`~server.game.game.Game`'s) own maps:
    seats, names, characters that left and are held until their checkpoint
    is written (count and packed bytes), the seats' checkpoint parts of map
    memory (count and bytes), views' kept entries, the writer's queue, and
    what the writer keeps of what it last wrote, to skip rows that did not
    change (a digest per seated character and per level,
    :func:`server.store.writer.digest`)."""
    seats: Mapping[int, Any] = getattr(host, "seats", {})
    left: Mapping[str, Any] = getattr(host, "_left", {})
    parts = 0
    part_bytes = 0
    view_objs = 0
    view_kept = 0
    for seat in seats.values():
        memory_parts: Mapping[int, Any] = getattr(seat, "memory_parts", {})
        parts += len(memory_parts)
        for part in memory_parts.values():
            for name in ("_raw", "_pairs"):
                blob = getattr(part, name, None)
                if isinstance(blob, bytes):
                    part_bytes += len(blob)
        view = getattr(seat, "view", None)
        view_objs += _size(view, "objs") or 0
        view_kept += _size(view, "kept") or 0
    saver = getattr(host, "saver", None)
    written: Mapping[Any, Any] = getattr(saver, "_written_players", {})
    written_levels: Mapping[Any, Any] = getattr(saver, "_written_levels", {})
    return {
        "seats": len(seats),
        "names": _size(host, "by_name"),
        "left": len(left),
        "left_bytes": sum(len(v[1]) for v in left.values() if isinstance(v[1], bytes)),
        "memory_parts": parts,
        "memory_part_bytes": part_bytes,
        "view_objects": view_objs,
        "view_kept": view_kept,
        "writer_players": _size(saver, "_players"),
        "writer_levels": _size(saver, "_levels"),
        "written_players": len(written),
        "written_player_bytes": sum(len(b) for b in written.values() if isinstance(b, bytes)),
        "written_levels": len(written_levels),
        "written_level_bytes": sum(len(b) for b in written_levels.values() if isinstance(b, bytes)),
    }


def census(host: object, world: World) -> dict[str, Any]:
    """The whole census of a game: ``host`` (:func:`host_census`), ``world``
    (:func:`world_census`) and ``levels`` (:func:`level_census`)."""
    return {
        "host": host_census(host),
        "world": world_census(world),
        "levels": level_census(world),
    }
