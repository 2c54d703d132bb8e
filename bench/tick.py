"""Tick benchmark: the server's per-tick cost without the network.

Joins N players to a fresh world, gives each a random walk (a command
whenever its queue is empty), runs the game's tick and encodes every message
as the server would, and prints the cost per tick and per player per tick
(CPU time of this process, ``time.process_time``).

    python bench/tick.py -n 200 --ticks 300
    python bench/tick.py -n 2000 --ticks 100 --spread
    python bench/tick.py -n 4000 --ticks 100 --spread --depths 10 --split
    python bench/tick.py -n 2000 --ticks 100 --profile
    python bench/tick.py -n 1000 --ticks 150 --keys

``--keys`` counts where the bytes of the deltas go: for each field, its
bytes (key and value, as packed in the delta's map) per delta on average,
and the share of deltas that carry it.

``--split`` times the parts of :meth:`World.step` (fields of view, map
memory, the visible sets, monsters, projectiles, upkeep) by wrapping them
with CPU-time counters; the wrappers cost about a microsecond a call, so
totals run a little higher than without it.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import msgpack  # type: ignore[import-untyped]
import numpy as np

from protocol.codec import encode_server
from protocol.messages import DELTA_KEYS, Delta
from server.game import index as index_module
from server.game import views as views_module
from server.game.game import Game
from server.game.store import Store
from server.net import collector
from server.sim import monsters, projectiles, upkeep
from server.sim import world as world_module
from server.sim.commands import DIRECTIONS
from server.sim.world import World

SPLIT_PARTS: tuple[tuple[str, Any, str], ...] = (
    ("world_step", World, "step"),
    ("update_views", World, "_update_views"),
    ("fov_compute", world_module, "field_of_view"),
    ("remember", world_module, "_remember"),
    ("monsters_act", monsters, "act"),
    ("visible_players", monsters, "visible_players"),
    ("monster_paths", monsters, "_step_towards"),
    ("projectiles", projectiles, "advance"),
    ("upkeep_round", upkeep, "run_round"),
    ("regenerate", upkeep, "regenerate"),
    ("restock", monsters, "restock"),
    ("tick_index", index_module.TickIndex, "__init__"),
    ("level_frames", views_module.LevelFrames, "__init__"),
    ("views", views_module.LevelFrames, "build"),
)
"""Name, owner and attribute of each part ``--split`` times. Parts nest:
``update_views`` holds ``fov_compute`` and ``remember``; ``monsters_act``
holds ``visible_players`` and ``monster_paths``; ``tick_index`` (the
tick's shared index), ``level_frames`` (what each level's frames share:
fields of view packed, floor items of moved views) and ``views`` (every
player's message) are the parts of :meth:`Game.step` after the world's
step. An attribute the code does not have (an older or newer version) is
left out."""


@contextmanager
def split_timers(totals: dict[str, float], calls: dict[str, int]) -> Iterator[None]:
    """Wrap the :data:`SPLIT_PARTS` with CPU-time counters while in the block,
    adding seconds to ``totals`` and call counts to ``calls``."""
    saved: list[tuple[Any, str, Any]] = []

    def wrap(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        clock = time.process_time

        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                totals[name] = totals.get(name, 0.0) + clock() - t0
                calls[name] = calls.get(name, 0) + 1

        return timed

    for name, owner, attr in SPLIT_PARTS:
        fn = getattr(owner, attr, None)
        if fn is None:
            continue
        saved.append((owner, attr, fn))
        setattr(owner, attr, wrap(name, fn))
    try:
        yield
    finally:
        for owner, attr, fn in saved:
            setattr(owner, attr, fn)


def run(
    n: int,
    ticks: int,
    seed: int,
    spread: bool = False,
    depths: int = 1,
    split: dict[str, float] | None = None,
    keys: dict[str, list[int]] | None = None,
) -> dict[str, float]:
    """Run the benchmark; return timings in ms and µs and bytes per tick.

    Each tick runs as the server runs it, with automatic collection off
    (:func:`server.net.collector.tune`) and the collections run between
    ticks (:class:`server.net.collector.Pacer`); their time is counted in
    ``gc_ms_per_tick`` and in the totals.

    With ``spread``, players are scattered over the rooms of depths
    ``1..depths`` (player ``i`` on depth ``1 + i % depths``, with health and
    defence raised for its depth as ``bench/scale.py`` does, so that play
    there is not a stream of respawns) instead of crowding the entrance, and
    only a quarter of them walk (the others stand, as idle players do).

    With ``split`` (a dict), the measured ticks' CPU seconds per part of the
    world's step (:data:`SPLIT_PARTS`) are added to it, and call counts under
    ``"calls:" + part``.

    With ``keys`` (a dict), the measured ticks' deltas are counted by field:
    ``keys[name] = [bytes, deltas]``, the bytes of the field's key and value
    in the packed deltas and the number of deltas that carry it, and
    ``keys[""] = [bytes, deltas]`` for the deltas as a whole.
    """
    world = World(seed)
    game = Game(world, Store(":memory:"), max_players=n + 1)
    collector.tune()  # the collector as `underhall serve` sets it after start-up
    rng = np.random.default_rng(seed)
    ids = []
    for i in range(n):
        aid = game.join(f"p{i}", None, None, object())[0].id
        ids.append(aid)
        if spread:  # each one leaves the entrance before the next arrives
            actor = world.actors[aid]
            depth = 1 + i % depths
            rooms = world.level(depth).rooms
            room = rooms[int(rng.integers(len(rooms)))]
            cx = room.x + int(rng.integers(room.w))
            cy = room.y + int(rng.integers(room.h))
            x, y = world.free_cell_near(depth, cx, cy)
            if depth == actor.depth:
                world.move_actor(actor, x, y)
            else:
                world._relocate(actor, depth, x, y)
                actor.max_hp = actor.hp = actor.max_hp * 10 * depth
                actor.defence += 2 * depth
    walkers = ids[: n // 4] if spread else ids
    seqs = dict.fromkeys(walkers, 0)  # each player numbers its own commands, as a client does
    step_s = enc_s = 0.0
    out_bytes = messages = 0
    pacer = collector.Pacer()  # collections between ticks, as the server runs them
    for _ in range(20):  # warm up: snapshots, level generation
        for msgs in game.step().values():
            for m in msgs:
                encode_server(m)
        pacer.after_tick(n)
    totals: dict[str, float] = {}
    calls: dict[str, int] = {}
    # Collections run between ticks (collector.Pacer): their time is counted
    # apart and added.
    gc_s = [0.0]
    watch = collector.PauseWatch(lambda _gen, seconds: gc_s.__setitem__(0, gc_s[0] + seconds))
    with split_timers(totals, calls) if split is not None else _nothing():
        for _ in range(ticks):
            for aid in walkers:
                actor = world.actors[aid]
                if not actor.queue:
                    dx, dy = DIRECTIONS[int(rng.integers(8))]
                    game.command(aid, seqs[aid], "move", (dx, dy))
                    seqs[aid] += 1
            t0 = time.process_time()
            with collector.held():  # as the server runs a tick: no collection inside
                out = game.step()
                t1 = time.process_time()
                for msgs in out.values():
                    for m in msgs:
                        out_bytes += len(encode_server(m))
                        messages += 1
                enc_s += time.process_time() - t1
                if keys is not None:
                    count_keys(out, keys)
                del out  # freed as the server frees a tick's messages once written
            step_s += t1 - t0
            pacer.after_tick(n)
    watch.close()
    if split is not None:
        split.update(totals)
        split.update({f"calls:{k}": float(v) for k, v in calls.items()})
    return {
        "players": n,
        "ticks": ticks,
        "step_ms_per_tick": step_s / ticks * 1e3,
        "encode_ms_per_tick": enc_s / ticks * 1e3,
        "gc_ms_per_tick": gc_s[0] / ticks * 1e3,
        "gc_pause_max_ms": watch.worst_s * 1e3,
        "us_per_player_tick": (step_s + enc_s + gc_s[0]) / ticks / n * 1e6,
        "messages_per_tick": messages / ticks,
        "bytes_per_message": out_bytes / max(1, messages),
        "core_share_at_10hz": (step_s + enc_s + gc_s[0]) / ticks * 10,
    }


def count_keys(out: dict[int, list[Any]], keys: dict[str, list[int]]) -> None:
    """Add the deltas of one tick's messages ``out`` to ``keys`` (see
    :func:`run`): each field by name, its key and value as packed."""
    for msgs in out.values():
        for m in msgs:
            if not isinstance(m, Delta):
                continue
            frame = encode_server(m)
            whole = keys.setdefault("", [0, 0])
            whole[0] += len(frame)
            whole[1] += 1
            for k, value in msgpack.unpackb(frame, strict_map_key=False).items():
                tally = keys.setdefault(DELTA_KEYS[k], [0, 0])
                tally[0] += len(msgpack.packb(k)) + len(msgpack.packb(value, use_bin_type=True))
                tally[1] += 1


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=200, help="players (default 200)")
    parser.add_argument("--ticks", type=int, default=300, help="measured ticks (default 300)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--spread",
        action="store_true",
        help="scatter players over the level(s); a quarter of them walk",
    )
    parser.add_argument(
        "--depths",
        type=int,
        default=1,
        help="with --spread, scatter players over depths 1..DEPTHS (default 1)",
    )
    parser.add_argument(
        "--split", action="store_true", help="print the CPU time of each part of the world's step"
    )
    parser.add_argument("--profile", action="store_true", help="print the top functions")
    parser.add_argument(
        "--keys", action="store_true", help="print the bytes of each field of the deltas"
    )
    args = parser.parse_args()
    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
    split: dict[str, float] | None = {} if args.split else None
    keys: dict[str, list[int]] | None = {} if args.keys else None
    result = run(args.n, args.ticks, args.seed, args.spread, max(1, args.depths), split, keys)
    if args.profile:
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(18)
    for key, value in result.items():
        print(f"{key:22} {value:,.2f}" if isinstance(value, float) else f"{key:22} {value}")
    if keys:
        total, deltas = keys.pop("")
        print(f"deltas {deltas:,}, {total / deltas:.2f} bytes each; by field, bytes per delta:")
        for name, (size, carried) in sorted(keys.items(), key=lambda kv: -kv[1][0]):
            print(f"  {name:6} {size / deltas:6.2f}  in {carried / deltas:6.1%} of deltas")
    if split is not None:
        ticks = args.ticks
        for name, _, _ in SPLIT_PARTS:
            if name in split:
                print(
                    f"  {name:20} {split[name] / ticks * 1e3:9.2f} ms/tick"
                    f"  {split['calls:' + name] / ticks:9.1f} calls/tick"
                )


if __name__ == "__main__":
    main()
