"""A level's frames built together (issue 44): the parts found once per level
give what the per-player steps they replace gave.

Every message staying equal to the reference view's is tested in
``test_fast_path.py``; these tests pin the level-wide pieces on their own:
the fields of view packed in one call, the floor's buckets carried from
tick to tick, and the level-wide sets of who may have witnessed an event or
had its ``me`` touched."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from protocol.fov import pack_cropped_fov
from server.game.game import Game
from server.game.index import TickIndex
from server.game.store import Store
from server.game.views import pack_windows
from server.sim.world import World
from tests.game.randomplay import give_commands, seat_players


def test_windows_packed_together_are_packed_as_one_by_one() -> None:
    """Stacks of windows of several shapes (a crowd's, and the cropped ones
    at a level's edges), with empty, single-cell, rectangular and ragged
    views among them, and shapes that occur once."""
    rng = np.random.default_rng(7)
    shapes = [(17, 17), (17, 11), (9, 17), (5, 3)]
    packed = 0
    for _ in range(200):
        windows = []
        for _ in range(int(rng.integers(1, 40))):
            h, w = shapes[int(rng.integers(len(shapes)))]
            window = np.zeros((h, w), dtype=np.bool_)
            kind = int(rng.integers(4))
            if kind == 1:
                window = rng.random((h, w)) < 0.4
            elif kind == 2:
                y, x = int(rng.integers(h)), int(rng.integers(w))
                window[y : y + int(rng.integers(1, 7)), x : x + int(rng.integers(1, 7))] = True
            elif kind == 3:
                window[int(rng.integers(h)), int(rng.integers(w))] = True
            windows.append(window)
        assert pack_windows(windows) == [pack_cropped_fov(w) for w in windows]
        packed += len(windows)
    assert packed > 3000


def test_floor_grids_are_the_levels_items_and_remember_where_items_were() -> None:
    """Over random play that throws darts and kills (items land, are picked
    up and dropped), each tick's floor grid holds every level cell's top
    item as the level has it, and marks as ever holding one every cell
    that held one since the grid was made."""
    world = World(12)
    ever: set[tuple[int, int]] = set()
    grids = set()
    changed = 0
    for tick, _, index in _played(world, 16, scatter=False, ticks=160):
        grid = index.floors[1]
        grids.add(id(grid))
        tops = {pos: pile[-1].key for pos, pile in world.levels[1].items.items() if pile}
        ever |= tops.keys()
        codes = {
            (int(x), int(y)): grid.keys[grid.codes[y, x]] for y, x in zip(*grid.codes.nonzero())
        }
        assert codes == tops, tick
        marked = {(int(x), int(y)) for y, x in zip(*grid.ever.nonzero())}
        assert marked == ever, tick
        changed += 1 in index.item_changes
    assert changed > 5 and len(grids) == 1, (changed, len(grids))


def test_level_wide_witnesses_and_touched_are_the_per_player_tests() -> None:
    """:meth:`TickIndex.witnesses` and :meth:`TickIndex.me_touched` hold
    exactly the players for whom :meth:`TickIndex.may_witness` and
    :meth:`TickIndex.may_touch_me` are True."""
    world = World(31)
    some = every = 0
    for tick, ids, index in _played(world, 12, scatter=True, ticks=120):
        for depth in {world.actors[pid].depth for pid in ids}:
            witnesses = index.witnesses(depth)
            touched = index.me_touched()
            every += witnesses is None
            for pid in ids:
                if world.actors[pid].depth != depth:
                    continue
                may = witnesses is None or pid in witnesses
                assert may == index.may_witness(pid, depth), (tick, pid)
                some += may
                assert (touched is None or pid in touched) == index.may_touch_me(pid)
    assert some > 0 and every > 0, (some, every)


def _played(
    world: World, players: int, *, scatter: bool, ticks: int
) -> Iterator[tuple[int, list[int], TickIndex]]:
    """Seat ``players`` in ``world`` (seeded by its seed) and give them random
    commands for ``ticks`` ticks; after each tick, yield the tick, the
    players' ids and the tick's index."""
    game = Game(world, Store(":memory:"))
    game.keep_index = True
    rng = np.random.default_rng(world.seed)
    ids = seat_players(game, players, rng, scatter=scatter)
    seq = 0
    for tick in range(ticks):
        seq, _ = give_commands(game, ids, rng, tick, seq)
        game.step()
        index = game.last_index
        assert index is not None
        yield tick, ids, index
