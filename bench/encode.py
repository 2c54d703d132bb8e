"""Encoding benchmark: what packing one player's frame costs.

Plays N walking players crowded on depth 1 for a few ticks, keeps every
message the game built for them, and times encoding all of them with the
server's encoder (:func:`protocol.codec.encode_server`, msgspec) against
msgpack-python's packer on the same maps. Both write the same bytes; the
script checks that before timing. Best of R rounds, CPU time of this
process, in µs per message.

    python bench/encode.py
    python bench/encode.py -n 2000 --ticks 20 --rounds 7
"""

from __future__ import annotations

import argparse
import time

import msgpack  # type: ignore[import-untyped]
import numpy as np

from protocol.codec import _SERVER_ENCODERS, encode_server
from protocol.messages import ServerMessage
from server.game.game import Game
from server.game.store import Store
from server.sim.commands import DIRECTIONS
from server.sim.world import World


def frames(n: int, ticks: int, seed: int) -> list[ServerMessage]:
    """The messages of ``ticks`` ticks of ``n`` crowded walking players,
    after 20 ticks of warm-up."""
    world = World(seed)
    game = Game(world, Store(":memory:"), max_players=n + 1)
    rng = np.random.default_rng(seed)
    ids = [game.join(f"p{i}", None, None, object())[0].id for i in range(n)]
    out: list[ServerMessage] = []
    seq = 0
    for t in range(20 + ticks):
        for aid in ids:
            if not world.actors[aid].queue:
                dx, dy = DIRECTIONS[int(rng.integers(8))]
                game.command(aid, seq, "move", (dx, dy))
                seq += 1
        step = game.step()
        if t >= 20:
            for msgs in step.values():
                out += msgs
    return out


def best_us(fn: object, msgs: list[ServerMessage], rounds: int) -> float:
    """Best of ``rounds`` timings of ``fn`` over ``msgs``, µs per message."""
    assert callable(fn)
    best = float("inf")
    for _ in range(rounds):
        t0 = time.process_time()
        for m in msgs:
            fn(m)
        best = min(best, time.process_time() - t0)
    return best / len(msgs) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=1000, help="players (default 1000)")
    ap.add_argument("--ticks", type=int, default=20, help="ticks kept (default 20)")
    ap.add_argument("--rounds", type=int, default=5, help="timing rounds (default 5)")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    msgs = frames(args.n, args.ticks, args.seed)
    packer = msgpack.Packer(use_bin_type=True)

    def with_msgpack(m: ServerMessage) -> bytes:
        data: bytes = packer.pack(_SERVER_ENCODERS[type(m)](m))
        return data

    differ = sum(encode_server(m) != with_msgpack(m) for m in msgs)
    if differ:
        raise SystemExit(f"{differ} of {len(msgs)} messages encode differently")
    size = sum(len(encode_server(m)) for m in msgs) / len(msgs)
    ours = best_us(encode_server, msgs, args.rounds)
    theirs = best_us(with_msgpack, msgs, args.rounds)
    print(f"messages          {len(msgs)} (mean {size:.0f} B, identical bytes)")
    print(f"msgpack-python    {theirs:.2f} µs per message")
    print(f"encode_server     {ours:.2f} µs per message (msgspec)")


if __name__ == "__main__":
    main()
