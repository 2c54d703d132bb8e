"""LevelKeeper: a level nobody has been on for its idle ticks is saved and
forgotten, and comes back as it was left (terrain and floor items), restocked."""

from __future__ import annotations

from server.content import Terrain
from server.game.keeper import CHECK_EVERY_TICKS, LevelKeeper
from server.sim.items import Item, new_item
from server.sim.world import World
from server.store import unpack_record
from server.store.writer import StoreWriter


class _Rows:
    """A store that keeps what it is asked to save."""

    def __init__(self) -> None:
        self.levels: dict[int, bytes] = {}

    def save(self, players: object, levels: list[tuple[int, bytes, int]], meta: object) -> None:
        self.levels.update((depth, blob) for depth, blob, _tick in levels)


def _run(world: World, keeper: LevelKeeper, ticks: int) -> list[int]:
    gone = []
    for _ in range(ticks):
        world.step()
        gone += keeper.after_tick()
    return gone


def test_an_idle_level_is_saved_forgotten_and_comes_back_as_left() -> None:
    world = World(11)
    ann = world.join("ann")
    level = world.level(3)
    x, y = level.find(Terrain.FLOOR)[0]
    world.set_terrain(3, x, y, Terrain.WALL)
    fx, fy = level.find(Terrain.FLOOR)[1]
    world.drop_item(3, fx, fy, new_item(world.content.items["dart"]))
    rows = _Rows()
    saver = StoreWriter(rows)  # type: ignore[arg-type]
    keeper = LevelKeeper(world, saver, idle_ticks=3 * CHECK_EVERY_TICKS)
    assert _run(world, keeper, 2 * CHECK_EVERY_TICKS) == []  # not idle long enough
    assert 3 in world.levels
    gone = _run(world, keeper, 2 * CHECK_EVERY_TICKS)
    assert gone == [3] and keeper.put_away == 1
    assert 3 not in world.levels and 1 in world.levels  # ann's level stays
    assert not any(a.depth == 3 for a in world.actors.values())  # its monsters went
    assert saver.flush(5.0)
    saved = unpack_record(rows.levels[3])
    assert saved["terrain"] == world.saved_levels[3]["terrain"]
    assert saved["items"] == world.saved_levels[3]["items"]
    piles = {(x_, y_): [Item.from_record(r).key for r in pile] for x_, y_, pile in saved["items"]}
    assert piles[(fx, fy)][-1] == "dart"
    back = world.level(3)  # someone arrives: as it was left, and restocked
    assert back.terrain_at(x, y) == Terrain.WALL
    assert [i.key for i in back.items[(fx, fy)]] == piles[(fx, fy)]
    assert any(a.depth == 3 for a in world.actors.values())
    assert 3 not in world.saved_levels
    assert ann.id in world.actors


def test_a_level_with_a_player_is_kept_however_long() -> None:
    world = World(11)
    world.join("ann")
    keeper = LevelKeeper(world, idle_ticks=CHECK_EVERY_TICKS)
    assert _run(world, keeper, 4 * CHECK_EVERY_TICKS) == []
    assert 1 in world.levels


def test_a_level_left_is_idle_from_when_its_last_player_went() -> None:
    world = World(11)
    ann = world.join("ann")
    keeper = LevelKeeper(world, idle_ticks=2 * CHECK_EVERY_TICKS)
    _run(world, keeper, 3 * CHECK_EVERY_TICKS)
    world.leave(ann.id)
    assert _run(world, keeper, CHECK_EVERY_TICKS) == []
    assert _run(world, keeper, 2 * CHECK_EVERY_TICKS) == [1]
    assert world.levels == {}
