"""Seeded generator of classic rooms-and-corridors levels.

``generate_level`` is pure: it draws every chance from the numpy ``Generator``
it is given, so the same generator state always yields the same level.

Layout: rectangular walled rooms placed at random without overlapping, joined
by corridors carved through solid rock; the rooms are linked along a spanning
tree (nearest unlinked room first) plus a few extra corridors that make loops.
A corridor leaves a room through a door in the wall facing the other room and
is L-shaped when the two doors are on perpendicular walls, or a dog-leg (two
right-angle bends, straight when the doors line up) when they face each other.
Corridors never touch a room's walls except at doors, so every room keeps its
rectangle of wall. Doors are closed, open or a doorless gap.

Features go in room interiors: one or two water pools, a lava pool from depth
``LevelGenParams.lava_depth`` (only if it cuts nothing off), rubble (rooms and
corridors), a grove of trees, a fountain, an altar; one up and one down
staircase in different rooms; floor items picked from ``items.toml`` by depth
with weight ``1 / rarity``.

Guarantee: the outer border is never passable, and every passable cell and
every door is reachable from the up staircase moving in the four cardinal
directions with closed doors counted as passable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray

from server.content.loader import MAX_DEPTH, default_content
from server.content.schema import Content, ItemDef, Terrain
from server.sim.items import Item, new_item
from server.sim.level import Level, Room

MIN_WIDTH: Final = 20
"""Narrowest level the generator makes, in cells."""
MIN_HEIGHT: Final = 10
"""Shortest level the generator makes, in cells."""

_REFERENCE_AREA: Final = 80 * 21
_MAX_ATTEMPTS: Final = 1000
_Box = tuple[int, int, int, int]  # x0, y0, x1, y1 inclusive, walls included
_Door = tuple[int, int, int, int]  # door x, y, outside x, y


@dataclass(frozen=True, slots=True)
class LevelGenParams:
    """Tuning numbers of the generator; counts are per 80x21 of map area.

    Attributes:
        rooms: Inclusive range of rooms aimed for.
        room_width: Inclusive range of room interior widths, in cells.
        room_height: Inclusive range of room interior heights, in cells
            (the top is lowered on short maps).
        room_gap: Rock cells kept between the walls of two rooms.
        loop_chance: Chance per room of one extra corridor (a loop).
        door_closed: Chance a door is a closed door.
        door_open: Chance a door is an open door (else a doorless gap).
        water_pools: Inclusive range of water pools.
        lava_depth: Shallowest depth with lava.
        lava_chance: Chance of a lava pool from ``lava_depth`` on.
        rubble: Inclusive range of rubble cells.
        grove_chance: Chance of a grove of trees in one room.
        fountain_chance: Chance of a fountain.
        altar_chance: Chance of an altar.
        items: Inclusive range of floor items.
    """

    rooms: tuple[int, int] = (6, 9)
    room_width: tuple[int, int] = (3, 12)
    room_height: tuple[int, int] = (2, 6)
    room_gap: int = 1
    loop_chance: float = 0.15
    door_closed: float = 0.4
    door_open: float = 0.25
    water_pools: tuple[int, int] = (1, 2)
    lava_depth: int = 3
    lava_chance: float = 0.5
    rubble: tuple[int, int] = (2, 6)
    grove_chance: float = 0.35
    fountain_chance: float = 0.3
    altar_chance: float = 0.15
    items: tuple[int, int] = (3, 6)


def generate_level(
    rng: np.random.Generator,
    depth: int,
    width: int = 80,
    height: int = 21,
    *,
    content: Content | None = None,
    params: LevelGenParams | None = None,
) -> Level:
    """Generate a level of rooms and corridors.

    Args:
        rng: The only source of chance; it is advanced.
        depth: Dungeon level, 1..50; picks items and allows lava.
        width: Columns, W >= ``MIN_WIDTH``.
        height: Rows, H >= ``MIN_HEIGHT``.
        content: Rules data for floor items; the shipped data when None.
        params: Tuning numbers; ``LevelGenParams()`` when None.

    Returns:
        A new level with ``terrain`` ``uint8[H, W]``, its rooms, and items.

    Raises:
        ValueError: ``depth``, ``width`` or ``height`` is out of range.
    """
    if not 1 <= depth <= MAX_DEPTH:
        raise ValueError(f"depth must be in 1..{MAX_DEPTH}, got {depth}")
    if width < MIN_WIDTH or height < MIN_HEIGHT:
        raise ValueError(f"level must be at least {MIN_WIDTH}x{MIN_HEIGHT}, got {width}x{height}")
    gen = _Generator(rng, depth, width, height, params or LevelGenParams())
    for _ in range(_MAX_ATTEMPTS):
        if gen.layout():
            break
    else:  # pragma: no cover - two rooms always fit in the minimum size
        raise RuntimeError("could not place two connected rooms")
    gen.add_features()
    items = gen.place_items(content or default_content())
    return Level(depth=depth, terrain=gen.terrain, rooms=gen.rooms, items=items)


class _Generator:
    """Working state of one ``generate_level`` call."""

    def __init__(
        self, rng: np.random.Generator, depth: int, width: int, height: int, p: LevelGenParams
    ) -> None:
        self.rng, self.depth, self.width, self.height, self.p = rng, depth, width, height, p
        self.scale = width * height / _REFERENCE_AREA
        self.terrain: NDArray[np.uint8] = np.zeros((height, width), dtype=np.uint8)
        self.obstacle: NDArray[np.bool_] = np.zeros((height, width), dtype=np.bool_)
        self.doors: NDArray[np.bool_] = np.zeros((height, width), dtype=np.bool_)
        self.rooms: list[Room] = []

    def _count(self, span: tuple[int, int]) -> int:
        return round(int(self.rng.integers(span[0], span[1] + 1)) * self.scale)

    # --- rooms and corridors -----------------------------------------------------------

    def layout(self) -> bool:
        """Place and link rooms; return False (to try again) if fewer than two remain."""
        self.terrain[:] = Terrain.ROCK
        self.obstacle[:] = False
        self.doors[:] = False
        rooms = self._place_rooms()
        for room in rooms:
            x0, y0, x1, y1 = _box(room)
            self.obstacle[y0 : y1 + 1, x0 : x1 + 1] = True
            self.terrain[y0 : y1 + 1, x0 : x1 + 1] = Terrain.WALL
            self.terrain[room.slices] = Terrain.FLOOR
        linked = self._link(rooms)
        for index, room in enumerate(rooms):
            if index not in linked:
                x0, y0, x1, y1 = _box(room)
                self.terrain[y0 : y1 + 1, x0 : x1 + 1] = Terrain.ROCK
        self.rooms = [room for index, room in enumerate(rooms) if index in linked]
        return len(self.rooms) >= 2

    def _place_rooms(self) -> list[Room]:
        rng, p = self.rng, self.p
        target = max(2, self._count(p.rooms))
        max_w = max(p.room_width[0], min(p.room_width[1], self.width - 6))
        max_h = max(p.room_height[0], min(p.room_height[1], (self.height - 6) // 2))
        boxes: list[_Box] = []
        rooms: list[Room] = []
        for _ in range(target * 30):
            if len(rooms) == target:
                break
            w = int(rng.integers(p.room_width[0], max_w + 1))
            h = int(rng.integers(p.room_height[0], max_h + 1))
            x = int(rng.integers(2, self.width - w - 1))
            y = int(rng.integers(2, self.height - h - 1))
            box = (x - 1, y - 1, x + w, y + h)
            if all(_apart(box, other, p.room_gap) for other in boxes):
                boxes.append(box)
                rooms.append(Room(x, y, w, h))
        return rooms

    def _link(self, rooms: list[Room]) -> set[int]:
        """Join the rooms with corridors; return the indices of rooms joined to room 0."""
        centers = np.array([r.center for r in rooms], dtype=np.int64).reshape(-1, 2)
        dist = np.abs(centers[:, None, :] - centers[None, :, :]).sum(axis=2)
        joined = np.zeros(len(rooms), dtype=np.bool_)
        joined[0] = True
        pairs: set[tuple[int, int]] = set()
        while not joined.all() and self._link_one(rooms, dist, joined, pairs):
            pass  # rooms left unjoined cannot be reached and are dropped
        linked = {int(i) for i in np.flatnonzero(joined)}
        members = sorted(linked)
        for _ in range(int(self.rng.binomial(len(members), self.p.loop_chance))):
            a = members[int(self.rng.integers(len(members)))]
            others = [(int(dist[a, b]), b) for b in members if b != a]
            for _, b in sorted(others):
                if (min(a, b), max(a, b)) not in pairs:
                    pairs.add((min(a, b), max(a, b)))
                    self._corridor(rooms[a], rooms[b])
                    break
        return linked

    def _link_one(
        self,
        rooms: list[Room],
        dist: NDArray[np.int64],
        joined: NDArray[np.bool_],
        pairs: set[tuple[int, int]],
    ) -> bool:
        """Join the nearest (joined, unjoined) pair of rooms a corridor can link, if any."""
        candidates = joined[:, None] & ~joined[None, :]
        masked = np.where(candidates, dist, np.iinfo(np.int64).max)
        order = np.argsort(masked, axis=None, kind="stable")  # nearest first, ties by index
        for flat in order[: int(candidates.sum())]:
            a, b = divmod(int(flat), len(rooms))
            if self._corridor(rooms[a], rooms[b]):
                joined[b] = True
                pairs.add((min(a, b), max(a, b)))
                return True
        return False

    def _corridor(self, a: Room, b: Room) -> bool:
        """Try a few door positions and shapes; carve the first valid corridor."""
        box_a, box_b = _box(a), _box(b)
        sides_a, sides_b = _facing(box_a, box_b), _facing(box_b, box_a)
        for _ in range(8):
            side_a = sides_a[int(self.rng.integers(len(sides_a)))]
            side_b = sides_b[int(self.rng.integers(len(sides_b)))]
            door_a, door_b = self._door_pair(a, side_a, b, side_b)
            path = self._path(door_a, side_a, door_b, side_b)
            if self._usable(door_a, side_a) and self._usable(door_b, side_b) and self._clear(path):
                for x0, y0, x1, y1 in path:
                    self.terrain[min(y0, y1) : max(y0, y1) + 1, min(x0, x1) : max(x0, x1) + 1] = (
                        Terrain.FLOOR
                    )
                self._make_door(door_a)
                self._make_door(door_b)
                return True
        return False

    def _door_pair(self, a: Room, side_a: str, b: Room, side_b: str) -> tuple[_Door, _Door]:
        """Pick door cells; facing doors share a row (or column) when they can."""
        along_a: int | None = None
        along_b: int | None = None
        if {side_a, side_b} in ({"left", "right"}, {"up", "down"}):
            vertical = side_a in ("left", "right")
            lo = max(a.y, b.y) if vertical else max(a.x, b.x)
            hi = min(a.y + a.h, b.y + b.h) if vertical else min(a.x + a.w, b.x + b.w)
            if lo < hi:
                along_a = along_b = int(self.rng.integers(lo, hi))
        return _door(a, side_a, self._along(a, side_a, along_a)), _door(
            b, side_b, self._along(b, side_b, along_b)
        )

    def _along(self, room: Room, side: str, fixed: int | None) -> int:
        if fixed is not None:
            return fixed
        if side in ("left", "right"):
            return int(self.rng.integers(room.y, room.y + room.h))
        return int(self.rng.integers(room.x, room.x + room.w))

    def _path(self, door_a: _Door, side_a: str, door_b: _Door, side_b: str) -> list[_Box]:
        """Segments from outside door A to outside door B: an L or a dog-leg."""
        ax, ay, bx, by = door_a[2], door_a[3], door_b[2], door_b[3]
        horizontal_a = side_a in ("left", "right")
        if horizontal_a != (side_b in ("left", "right")):
            corner = (bx, ay) if horizontal_a else (ax, by)
            return [(ax, ay, *corner), (*corner, bx, by)]
        if horizontal_a:
            mid = int(self.rng.integers(min(ax, bx), max(ax, bx) + 1))
            return [(ax, ay, mid, ay), (mid, ay, mid, by), (mid, by, bx, by)]
        mid = int(self.rng.integers(min(ay, by), max(ay, by) + 1))
        return [(ax, ay, ax, mid), (ax, mid, bx, mid), (bx, mid, bx, by)]

    def _clear(self, path: list[_Box]) -> bool:
        """Whether every segment stays off the border and out of every room's walls."""
        for x0, y0, x1, y1 in path:
            lo_x, hi_x, lo_y, hi_y = min(x0, x1), max(x0, x1), min(y0, y1), max(y0, y1)
            if lo_x < 1 or lo_y < 1 or hi_x > self.width - 2 or hi_y > self.height - 2:
                return False
            if self.obstacle[lo_y : hi_y + 1, lo_x : hi_x + 1].any():
                return False
        return True

    def _usable(self, door: _Door, side: str) -> bool:
        """A door may reuse an existing door but not sit next to one on its wall."""
        x, y = door[0], door[1]
        if self.doors[y, x]:
            return True
        dx, dy = (0, 1) if side in ("left", "right") else (1, 0)
        return not (self.doors[y + dy, x + dx] or self.doors[y - dy, x - dx])

    def _make_door(self, door: _Door) -> None:
        x, y = door[0], door[1]
        if self.doors[y, x]:
            return
        self.doors[y, x] = True
        roll = float(self.rng.random())
        if roll < self.p.door_closed:
            self.terrain[y, x] = Terrain.DOOR_CLOSED
        elif roll < self.p.door_closed + self.p.door_open:
            self.terrain[y, x] = Terrain.DOOR_OPEN
        else:
            self.terrain[y, x] = Terrain.FLOOR

    # --- features, stairs and items ----------------------------------------------------

    def add_features(self) -> None:
        """Place stairs, pools, rubble, trees, a fountain and an altar."""
        rng, p = self.rng, self.p
        up, down = (int(i) for i in rng.choice(len(self.rooms), size=2, replace=False))
        self._put_in_room(self.rooms[up], Terrain.STAIRS_UP)
        self._put_in_room(self.rooms[down], Terrain.STAIRS_DOWN)
        for _ in range(max(1, self._count(p.water_pools))):
            self._pool(Terrain.WATER)
        if self.depth >= p.lava_depth and rng.random() < p.lava_chance:
            self._pool(Terrain.LAVA)
        floor = np.flatnonzero((self.terrain == Terrain.FLOOR) & ~self.doors)
        count = min(floor.size, self._count(p.rubble))
        self.terrain.flat[rng.choice(floor, size=count, replace=False)] = Terrain.RUBBLE
        if rng.random() < p.grove_chance:
            room = self.rooms[int(rng.integers(len(self.rooms)))]
            area = self.terrain[room.slices]
            area[(area == Terrain.FLOOR) & (rng.random(area.shape) < 0.3)] = Terrain.TREE
        if rng.random() < p.fountain_chance:
            self._put_in_room(self.rooms[int(rng.integers(len(self.rooms)))], Terrain.FOUNTAIN)
        if rng.random() < p.altar_chance:
            self._put_in_room(self.rooms[int(rng.integers(len(self.rooms)))], Terrain.ALTAR)

    def _put_in_room(self, room: Room, terrain: Terrain) -> None:
        area = self.terrain[room.slices]
        cells = np.flatnonzero(area == Terrain.FLOOR)
        if cells.size:
            area.flat[int(self.rng.choice(cells))] = terrain

    def _pool(self, terrain: Terrain) -> None:
        """Flood an ellipse of one room's floor; undo it if it would cut the room apart."""
        rng = self.rng
        room = self.rooms[int(rng.integers(len(self.rooms)))]
        cx, cy = rng.integers(room.x, room.x + room.w), rng.integers(room.y, room.y + room.h)
        rx, ry = rng.uniform(0.8, max(1.0, room.w / 2)), rng.uniform(0.8, max(1.0, room.h / 2))
        ys, xs = np.ogrid[room.y : room.y + room.h, room.x : room.x + room.w]
        area = self.terrain[room.slices]
        inside = ((xs - cx) / rx) ** 2 + ((ys - cy) / ry) ** 2 <= 1.0
        flood = inside & (area == Terrain.FLOOR)
        area[flood] = terrain
        if terrain == Terrain.LAVA and not self._room_whole(room):
            area[flood] = Terrain.FLOOR

    def _room_whole(self, room: Room) -> bool:
        """Whether a room's walkable interior cells and doors form one cardinal component."""
        x0, y0, x1, y1 = _box(room)
        block = self.terrain[y0 : y1 + 1, x0 : x1 + 1]
        walk = (block != Terrain.WALL) & (block != Terrain.LAVA) & (block != Terrain.ROCK)
        reach = np.zeros_like(walk)
        start = np.argwhere(walk)
        reach[tuple(start[0])] = True
        while True:
            grown = reach.copy()
            grown[1:] |= reach[:-1]
            grown[:-1] |= reach[1:]
            grown[:, 1:] |= reach[:, :-1]
            grown[:, :-1] |= reach[:, 1:]
            grown &= walk
            if np.array_equal(grown, reach):
                return bool(np.array_equal(reach, walk))
            reach = grown

    def place_items(self, content: Content) -> dict[tuple[int, int], list[Item]]:
        """Drop items allowed at this depth on distinct room floor cells, weight 1 / rarity."""
        pool = item_pool(content, self.depth)
        in_rooms = np.zeros_like(self.doors)
        for room in self.rooms:
            in_rooms[room.slices] = True
        cells = np.flatnonzero(in_rooms & (self.terrain == Terrain.FLOOR))
        count = min(cells.size, self._count(self.p.items)) if pool else 0
        items: dict[tuple[int, int], list[Item]] = {}
        if count == 0:
            return items
        weights = np.array([1.0 / d.rarity for d in pool])
        kinds = self.rng.choice(len(pool), size=count, p=weights / weights.sum())
        chosen = self.rng.choice(cells, size=count, replace=False)
        for kind, cell in zip(kinds.tolist(), chosen.tolist(), strict=True):
            y, x = divmod(cell, self.width)
            items[(x, y)] = [new_item(pool[kind], self.rng)]
        return items


def item_pool(content: Content, depth: int) -> list[ItemDef]:
    """The item kinds the generator may drop on a level at ``depth``, in file
    order (each drawn with weight ``1 / rarity``; :meth:`_Generator.place_items`)."""
    return [d for d in content.items.values() if d.depth_min <= depth <= d.depth_max]


def _box(room: Room) -> _Box:
    """The room's rectangle including its walls, as inclusive (x0, y0, x1, y1)."""
    return (room.x - 1, room.y - 1, room.x + room.w, room.y + room.h)


def _apart(a: _Box, b: _Box, gap: int) -> bool:
    """Whether boxes ``a`` and ``b`` have at least ``gap`` cells between them."""
    return a[2] + gap < b[0] or b[2] + gap < a[0] or a[3] + gap < b[1] or b[3] + gap < a[1]


def _facing(a: _Box, b: _Box) -> list[str]:
    """Walls of box ``a`` that face box ``b`` across at least one rock cell."""
    sides = []
    if b[0] > a[2] + 1:
        sides.append("right")
    if b[2] < a[0] - 1:
        sides.append("left")
    if b[1] > a[3] + 1:
        sides.append("down")
    if b[3] < a[1] - 1:
        sides.append("up")
    return sides or ["left", "right", "up", "down"]


def _door(room: Room, side: str, along: int) -> _Door:
    """Door cell on a room's wall and the rock cell just outside it."""
    if side == "right":
        return (room.x + room.w, along, room.x + room.w + 1, along)
    if side == "left":
        return (room.x - 1, along, room.x - 2, along)
    if side == "down":
        return (along, room.y + room.h, along, room.y + room.h + 1)
    return (along, room.y - 1, along, room.y - 2)
