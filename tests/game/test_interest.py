"""The level-wide view changes (issue 44) against the sets they stand for:
over random play in a crowd and scattered (walking, fighting, zapping,
stairs, invisible players, a leave and a join), each player's lists from
:class:`server.game.interest.ViewChanges` are what its visible sets of two
ticks and the tick's changed actors say, and the world's pairs hold its
whole visible sets."""

from __future__ import annotations

import numpy as np
import pytest

from server.game.game import Game
from server.game.store import Store
from server.sim.sight import ID_MASK, PAIR_SHIFT, difference, in_sorted, owned_by, run_gaps
from server.sim.world import World
from tests.game.randomplay import give_commands, seat_players


def _gaps(ids: list[int]) -> list[int]:
    return [b - a for a, b in zip([0, *ids], ids, strict=False)]


def _expected(
    before: set[int], now: set[int], steps: dict[int, int], moves: dict[int, tuple[int, int]]
) -> tuple[list[int], list[int], list[int], list[int]]:
    """``(rm_ids, add_ids, st, mv)`` from two visible sets, as the
    set-based view builds them."""
    stay = sorted(aid for aid in now & before if aid in steps or aid in moves)
    st: list[int] = []
    mv: list[int] = []
    last_st = last_mv = 0
    for aid in stay:
        if aid in steps:
            st.append(((aid - last_st) << 3) | steps[aid])
            last_st = aid
        else:
            mv += [aid - last_mv, *moves[aid]]
            last_mv = aid
    return sorted(before - now), sorted(now - before), st, mv


@pytest.mark.parametrize(("seed", "scatter", "count"), [(21, False, 40), (22, True, 16)])
def test_level_lists_are_what_the_sets_say(seed: int, scatter: bool, count: int) -> None:
    world = World(seed)
    game = Game(world, Store(":memory:"))
    game.keep_index = True
    rng = np.random.default_rng(seed)
    ids = seat_players(game, count, rng, scatter=scatter, invisible=2)
    seq = 0
    checked = steps_seen = moved_in_out = 0
    for tick in range(160):
        seq, _ = give_commands(game, ids, rng, tick, seq)
        if tick == 60:  # one leaves, another joins
            gone = ids.pop(5)
            game.leave(gone, game.seats[gone].session)
            ids.append(game.join("late", None, None, object())[0].id)
        whole_before = {pid for pid in ids if world.sees_whole(pid)}
        before = {pid: set(world.sees.get(pid, ())) for pid in ids}
        depth_before = {pid: world.actors[pid].depth for pid in ids}
        game.step()
        index = game.last_index
        assert index is not None
        for pid in ids:
            actor = world.actors[pid]
            if pid not in whole_before or not world.sees_whole(pid):
                continue
            if actor.depth != depth_before[pid]:
                continue
            level = index.view_changes(actor.depth)
            assert level is not None
            pairs = world.visible_pairs(actor.depth)
            assert pairs is not None
            run = pairs[0][(pairs[0] >> PAIR_SHIFT) == pid] & ID_MASK
            assert set(run.tolist()) == world.sees[pid], (pid, tick)
            rm, rm_ids, add, st, mv, upd = level.get(pid)
            want_rm, want_add, want_st, want_mv = _expected(
                before[pid], world.sees[pid], index.steps, index.moves
            )
            assert (rm_ids or []) == want_rm, (pid, tick)
            assert (rm or []) == _gaps(want_rm), (pid, tick)
            assert (add or []) == want_add, (pid, tick)
            assert (st or []) == want_st, (pid, tick)
            assert (mv or []) == want_mv, (pid, tick)
            others = before[pid] & world.sees[pid] & set(index.upd_rows)
            assert (upd or []) == sorted(others), (pid, tick)
            checked += 1
            steps_seen += len(st or [])
            moved_in_out += len(rm_ids or []) + len(add or [])
    assert checked > 1000 and steps_seen > 500 and moved_in_out > 100


def test_pair_helpers_agree_with_sets() -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        old = np.unique(rng.integers(0, 6, 40) << PAIR_SHIFT | rng.integers(0, 30, 40))
        new = np.unique(rng.integers(0, 6, 40) << PAIR_SHIFT | rng.integers(0, 30, 40))
        lost, gained = difference(old, new)
        assert lost.tolist() == sorted(set(old.tolist()) - set(new.tolist()))
        assert gained.tolist() == sorted(set(new.tolist()) - set(old.tolist()))
        assert in_sorted(old, new).tolist() == [v in set(new.tolist()) for v in old.tolist()]
        owners = np.unique(rng.integers(0, 6, 3))
        mask = owned_by(old, owners)
        assert mask.tolist() == [(v >> PAIR_SHIFT) in owners.tolist() for v in old.tolist()]
        gaps = run_gaps(old).tolist()
        for owner in set((old >> PAIR_SHIFT).tolist()):
            at = np.flatnonzero((old >> PAIR_SHIFT) == owner)
            assert [gaps[i] for i in at] == _gaps((old[at] & ID_MASK).tolist())
    empty = np.zeros(0, dtype=np.int64)
    assert [a.tolist() for a in difference(empty, empty)] == [[], []]
