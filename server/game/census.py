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
"""

from __future__ import annotations

from collections.abc import Mapping, Sized
from typing import Any

from server.sim.world import World


def _size(obj: object, name: str) -> int | None:
    """``len(obj.name)``, or None if ``obj`` has no such sized attribute."""
    value = getattr(obj, name, None)
    return len(value) if isinstance(value, Sized) else None


def level_census(world: World) -> list[dict[str, int]]:
    """One entry per level in memory, by depth: ``depth``, ``players``
    (alive or awaiting respawn), ``monsters``, ``piles`` (floor cells with
    items), ``items`` (floor stacks), ``fov_cells`` (cells whose field of
    view is cached)."""
    monsters: dict[int, int] = {}
    for monster in world.monsters():
        monsters[monster.depth] = monsters.get(monster.depth, 0) + 1
    fov_cache: Mapping[int, Any] = getattr(world, "_fov_cache", {})
    out = []
    for depth in sorted(world.levels):
        level = world.levels[depth]
        cache = fov_cache.get(depth)
        out.append(
            {
                "depth": depth,
                "players": world.players_on(depth),
                "monsters": monsters.get(depth, 0),
                "piles": sum(1 for pile in level.items.values() if pile),
                "items": sum(len(pile) for pile in level.items.values()),
                "fov_cells": 0 if cache is None else len(getattr(cache, "visible", ())),
            }
        )
    return out


def world_census(world: World) -> dict[str, Any]:
    """Counts of the world's own maps: actors, players, map memory (depths
    remembered, and bytes: ``memory_live_bytes`` of the grids of the depths
    players are on, ``memory_packed_bytes`` of the compressed grids of the
    others, :class:`~server.sim.actors.MapMemory`), saved level
    records waiting to be laid over a level (count and bytes), and the
    sizes of the view and path caches (entries)."""
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
