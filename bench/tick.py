"""Tick benchmark: the server's per-tick cost without the network.

Joins N players to a fresh world, gives each a random walk (a command
whenever its queue is empty), runs the game's tick and encodes every message
as the server would, and prints the cost per tick and per player per tick.

    python bench/tick.py -n 200 --ticks 300
    python bench/tick.py -n 2000 --ticks 100 --spread
    python bench/tick.py -n 2000 --ticks 100 --profile
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import numpy as np

from protocol.codec import encode_server
from server.game.game import Game
from server.game.store import Store
from server.sim.commands import DIRECTIONS
from server.sim.world import World


def run(n: int, ticks: int, seed: int, spread: bool = False) -> dict[str, float]:
    """Run the benchmark; return timings in ms and µs and bytes per tick.

    With ``spread``, players are scattered over the rooms of depth 1 instead
    of crowding the entrance, and only a quarter of them walk (the others
    stand, as idle players do).
    """
    world = World(seed)
    game = Game(world, Store(":memory:"), max_players=n + 1)
    ids = [game.join(f"p{i}", None, None, object())[0].id for i in range(n)]
    rng = np.random.default_rng(seed)
    walkers = ids
    if spread:
        rooms = world.levels[1].rooms
        for aid in ids:
            room = rooms[int(rng.integers(len(rooms)))]
            cx = room.x + int(rng.integers(room.w))
            cy = room.y + int(rng.integers(room.h))
            world.move_actor(world.actors[aid], *world.free_cell_near(1, cx, cy))
        walkers = ids[: n // 4]
    seq = 0
    step_s = enc_s = 0.0
    out_bytes = messages = 0
    for _ in range(20):  # warm up: snapshots, level generation
        for msgs in game.step().values():
            for m in msgs:
                encode_server(m)
    for _ in range(ticks):
        for aid in walkers:
            actor = world.actors[aid]
            if not actor.queue:
                dx, dy = DIRECTIONS[int(rng.integers(8))]
                game.command(aid, seq, "move", (dx, dy))
                seq += 1
        t0 = time.process_time()
        out = game.step()
        t1 = time.process_time()
        for msgs in out.values():
            for m in msgs:
                out_bytes += len(encode_server(m))
                messages += 1
        enc_s += time.process_time() - t1
        step_s += t1 - t0
    return {
        "players": n,
        "ticks": ticks,
        "step_ms_per_tick": step_s / ticks * 1e3,
        "encode_ms_per_tick": enc_s / ticks * 1e3,
        "us_per_player_tick": (step_s + enc_s) / ticks / n * 1e6,
        "messages_per_tick": messages / ticks,
        "bytes_per_message": out_bytes / max(1, messages),
        "core_share_at_10hz": (step_s + enc_s) / ticks * 10,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=200, help="players (default 200)")
    parser.add_argument("--ticks", type=int, default=300, help="measured ticks (default 300)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--spread",
        action="store_true",
        help="scatter players over the level; a quarter of them walk",
    )
    parser.add_argument("--profile", action="store_true", help="print the top functions")
    args = parser.parse_args()
    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
    result = run(args.n, args.ticks, args.seed, args.spread)
    if args.profile:
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(18)
    for key, value in result.items():
        print(f"{key:22} {value:,.2f}" if isinstance(value, float) else f"{key:22} {value}")


if __name__ == "__main__":
    main()
