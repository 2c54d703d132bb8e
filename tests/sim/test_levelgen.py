"""Tests for server.sim.levelgen: determinism, layout, connectivity, features, items."""

from __future__ import annotations

import ast
import dataclasses
import math
from collections import Counter, deque
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from server.content import ItemDef, Terrain, default_content
from server.sim import levelgen
from server.sim.level import Level, Room
from server.sim.levelgen import MIN_HEIGHT, MIN_WIDTH, generate_level
from server.sim.terrain import PASSABLE

DOORS = (Terrain.DOOR_CLOSED, Terrain.DOOR_OPEN)


def _levels(seeds: int, width: int = 80, height: int = 21) -> Iterator[Level]:
    for seed in range(seeds):
        for depth in range(1, 11):
            yield generate_level(np.random.default_rng([seed, depth]), depth, width, height)


def _reachable(walk: NDArray[np.bool_], start: tuple[int, int]) -> NDArray[np.bool_]:
    """Cardinal flood fill from ``start`` over ``walk`` (an independent check, plain BFS)."""
    height, width = walk.shape
    open_cells = walk.tolist()
    seen = [[False] * width for _ in range(height)]
    seen[start[1]][start[0]] = True
    queue = deque([start])
    while queue:
        x, y = queue.popleft()
        for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if 0 <= nx < width and 0 <= ny < height and open_cells[ny][nx] and not seen[ny][nx]:
                seen[ny][nx] = True
                queue.append((nx, ny))
    return np.array(seen, dtype=np.bool_)


def _box_mask(level: Level) -> NDArray[np.bool_]:
    mask = np.zeros(level.terrain.shape, dtype=np.bool_)
    for r in level.rooms:
        mask[r.y - 1 : r.y + r.h + 1, r.x - 1 : r.x + r.w + 1] = True
    return mask


def _check_connected(level: Level) -> None:
    walk = PASSABLE[level.terrain] | (level.terrain == Terrain.DOOR_CLOSED)
    ups, downs = level.find(Terrain.STAIRS_UP), level.find(Terrain.STAIRS_DOWN)
    assert len(ups) == 1 and len(downs) == 1
    assert np.array_equal(_reachable(walk, ups[0]), walk)
    border = np.concatenate([walk[0], walk[-1], walk[:, 0], walk[:, -1]])
    assert not border.any()
    up_rooms = [i for i, r in enumerate(level.rooms) if r.contains(*ups[0])]
    down_rooms = [i for i, r in enumerate(level.rooms) if r.contains(*downs[0])]
    assert len(up_rooms) == 1 and len(down_rooms) == 1 and up_rooms != down_rooms


@pytest.mark.parametrize(("width", "height", "seeds"), [(80, 21, 200), (120, 40, 60)])
def test_everything_is_reachable_from_the_up_stairs(width: int, height: int, seeds: int) -> None:
    for level in _levels(seeds, width, height):
        assert level.terrain.shape == (height, width)
        _check_connected(level)


def test_small_and_odd_sizes_are_connected_too() -> None:
    for width, height, seeds in [(MIN_WIDTH, MIN_HEIGHT, 30), (33, 13, 30), (200, 60, 4)]:
        for level in _levels(seeds, width, height):
            _check_connected(level)


def test_same_rng_state_gives_the_same_level() -> None:
    a = generate_level(np.random.default_rng(42), 5)
    b = generate_level(np.random.default_rng(42), 5)
    assert np.array_equal(a.terrain, b.terrain)
    assert a.rooms == b.rooms
    assert {c: [i.to_record() for i in p] for c, p in a.items.items()} == {
        c: [i.to_record() for i in p] for c, p in b.items.items()
    }
    c = generate_level(np.random.default_rng(43), 5)
    assert not np.array_equal(a.terrain, c.terrain)


def test_generator_draws_only_from_the_given_rng() -> None:
    source = Path(str(levelgen.__file__)).read_text()
    tree = ast.parse(source)
    imported = {
        a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
    }
    imported |= {
        (n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
    }
    assert imported <= {"__future__", "dataclasses", "typing", "numpy", "server"}
    np_random_uses = {
        n.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute)
        and isinstance(n.value, ast.Attribute)
        and n.value.attr == "random"
    }
    assert np_random_uses <= {"Generator"}


def test_rooms_are_walled_apart_and_six_to_nine_on_a_standard_map() -> None:
    for level in _levels(30):
        assert 6 <= len(level.rooms) <= 9
        boxes = np.zeros(level.terrain.shape, dtype=np.int32)
        for room in level.rooms:
            x0, y0, x1, y1 = room.x - 1, room.y - 1, room.x + room.w, room.y + room.h
            boxes[y0 : y1 + 1, x0 : x1 + 1] += 1
            box = level.terrain[y0 : y1 + 1, x0 : x1 + 1]
            edge = np.concatenate([box[0], box[-1], box[1:-1, 0], box[1:-1, -1]])
            assert np.isin(edge, [Terrain.WALL, Terrain.FLOOR, *DOORS]).all()
            assert (box[[0, 0, -1, -1], [0, -1, 0, -1]] == Terrain.WALL).all()
            inside = level.terrain[room.slices]
            assert not np.isin(inside, [Terrain.WALL, Terrain.ROCK, *DOORS]).any()
        assert boxes.max() == 1


def test_outside_rooms_is_rock_or_corridor() -> None:
    for level in _levels(30):
        outside = level.terrain[~_box_mask(level)]
        assert np.isin(outside, [Terrain.ROCK, Terrain.FLOOR, Terrain.RUBBLE]).all()
        assert (outside == Terrain.FLOOR).any()  # corridors exist


def test_doors_lie_on_room_walls_and_come_in_three_kinds() -> None:
    kinds: Counter[str] = Counter()
    for level in _levels(20):
        boxes = _box_mask(level)
        interiors = np.zeros_like(boxes)
        for room in level.rooms:
            interiors[room.slices] = True
        walls = boxes & ~interiors
        door_cells = np.isin(level.terrain, DOORS)
        assert not (door_cells & ~walls).any()
        for terrain in DOORS:
            kinds[terrain.name] += int((level.terrain == terrain).sum())
        kinds["gap"] += int((walls & (level.terrain == Terrain.FLOOR)).sum())
    assert min(kinds.values()) > 20, kinds


def test_lava_only_from_depth_three_and_other_features_appear() -> None:
    seen: dict[Terrain, set[int]] = {t: set() for t in Terrain}
    levels_with_water = 0
    total = 0
    for level in _levels(40):
        total += 1
        present = set(np.unique(level.terrain).tolist())
        for t in present:
            seen[Terrain(t)].add(level.depth)
        levels_with_water += Terrain.WATER in present
        assert (level.terrain == Terrain.FOUNTAIN).sum() <= 1
        assert (level.terrain == Terrain.ALTAR).sum() <= 1
    assert seen[Terrain.LAVA] == set(range(3, 11))
    for feature in (Terrain.RUBBLE, Terrain.TREE, Terrain.FOUNTAIN, Terrain.ALTAR):
        assert seen[feature] == set(range(1, 11)), feature
    assert levels_with_water >= 0.9 * total


def test_items_lie_on_room_floors_and_suit_the_depth() -> None:
    content = default_content()
    counts = []
    for level in _levels(20):
        counts.append(len(level.items))
        for (x, y), pile in level.items.items():
            assert level.terrain_at(x, y) is Terrain.FLOOR
            assert any(r.contains(x, y) for r in level.rooms)
            assert len(pile) == 1
            item = content.items[pile[0].key]
            assert item.depth_min <= level.depth <= item.depth_max
    assert min(counts) >= 1 and max(counts) <= 9


def test_items_are_picked_with_weight_one_over_rarity() -> None:
    content = default_content()
    allowed = [i for i in content.items.values() if i.depth_min <= 1 <= i.depth_max]
    p = (1 / content.items["rock"].rarity) / sum(1 / i.rarity for i in allowed)
    picks = Counter(
        item.key
        for seed in range(400)
        for pile in generate_level(np.random.default_rng(seed), 1).items.values()
        for item in pile
    )
    n = sum(picks.values())
    sd = math.sqrt(n * p * (1 - p))
    assert abs(picks["rock"] - n * p) < 5 * sd
    assert picks["short_sword"] == 0  # depth_min 2


def test_content_argument_chooses_the_items() -> None:
    only = ItemDef("pebble", "pebble", "*", "white", "misc", 1, 0, 1, 50, 1)
    content = dataclasses.replace(default_content(), items={"pebble": only})
    level = generate_level(np.random.default_rng(3), 7, content=content)
    assert level.items and all([i.key for i in pile] == ["pebble"] for pile in level.items.values())


def test_generated_levels_round_trip_through_ascii() -> None:
    for level in _levels(3, 120, 40):
        again = Level.from_ascii(level.to_ascii(), depth=level.depth)
        assert np.array_equal(again.terrain, level.terrain)


def test_rooms_record_their_interiors() -> None:
    level = generate_level(np.random.default_rng(9), 2)
    assert all(isinstance(r, Room) and r.w >= 3 and r.h >= 2 for r in level.rooms)
    assert level.depth == 2 and level.changed == []


@pytest.mark.parametrize(
    ("depth", "width", "height"), [(0, 80, 21), (51, 80, 21), (1, MIN_WIDTH - 1, 21), (1, 80, 9)]
)
def test_bad_arguments_are_rejected(depth: int, width: int, height: int) -> None:
    with pytest.raises(ValueError):
        generate_level(np.random.default_rng(0), depth, width, height)
