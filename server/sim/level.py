"""One dungeon level: its terrain grid, rooms, floor items and terrain changes.

Coordinates in the API are ``(x, y)``; arrays are indexed ``[y, x]``.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Final

import numpy as np
from numpy.typing import NDArray

from server.content.schema import N_TERRAIN, Terrain
from server.sim.items import Item
from server.sim.terrain import PASSABLE, TRANSPARENT

_WALL_CHARS: Final = "#|-─│┌┐└┘├┤┬┴┼═║╔╗╚╝"

ASCII_LEGEND: Final[dict[str, Terrain]] = {
    **{char: Terrain.WALL for char in _WALL_CHARS},
    " ": Terrain.ROCK,
    ".": Terrain.FLOOR,
    "+": Terrain.DOOR_CLOSED,
    "'": Terrain.DOOR_OPEN,
    "~": Terrain.WATER,
    "=": Terrain.LAVA,
    ":": Terrain.RUBBLE,
    "T": Terrain.TREE,
    "{": Terrain.FOUNTAIN,
    "_": Terrain.ALTAR,
    "<": Terrain.STAIRS_UP,
    ">": Terrain.STAIRS_DOWN,
}
"""Map characters accepted by ``Level.from_ascii`` and the terrain each stands for."""

ASCII_GLYPHS: Final = " #.+'~=:T{_<>"
"""Canonical map character of each ``Terrain``, indexed by its value (``Level.to_ascii``)."""

_GLYPH_ARRAY: Final = np.array(list(ASCII_GLYPHS))


@dataclass(frozen=True, slots=True)
class Room:
    """A rectangular room: its floor interior, without the surrounding walls.

    Attributes:
        x: Column of the interior's left edge, in cells.
        y: Row of the interior's top edge, in cells.
        w: Interior width, in cells (>= 1).
        h: Interior height, in cells (>= 1).
    """

    x: int
    y: int
    w: int
    h: int

    @property
    def center(self) -> tuple[int, int]:
        """The ``(x, y)`` cell at the middle of the interior (rounded down)."""
        return (self.x + (self.w - 1) // 2, self.y + (self.h - 1) // 2)

    @property
    def slices(self) -> tuple[slice, slice]:
        """``[y, x]`` slices selecting the interior of an ``[H, W]`` array."""
        return (slice(self.y, self.y + self.h), slice(self.x, self.x + self.w))

    def contains(self, x: int, y: int) -> bool:
        """Whether ``(x, y)`` lies in the interior."""
        return self.x <= x < self.x + self.w and self.y <= y < self.y + self.h


@dataclass(eq=False, slots=True)
class Level:
    """A dungeon level.

    Change terrain only through ``set_terrain`` so that ``changed`` and the
    cached ``passable`` / ``transparent`` arrays stay right.

    Attributes:
        depth: Dungeon level number, 1 at the top.
        terrain: ``uint8[H, W]`` of ``Terrain`` values, indexed ``[y, x]``.
        rooms: The rooms the generator made (empty for maps drawn by hand).
        items: Floor items by ``(x, y)``: :class:`~server.sim.items.Item` objects,
            bottom of the pile first.
        changed: ``(x, y)`` cells whose terrain changed since the last
            ``clear_changes()``, in order of first change, each once.

    Raises:
        ValueError: On construction, if ``depth < 1`` or ``terrain`` is not a
            non-empty ``uint8[H, W]`` array of ``Terrain`` values.
    """

    depth: int
    terrain: NDArray[np.uint8]
    rooms: list[Room] = field(default_factory=list)
    items: dict[tuple[int, int], list[Item]] = field(default_factory=dict)
    changed: list[tuple[int, int]] = field(default_factory=list)
    _changed_set: set[tuple[int, int]] = field(init=False, repr=False)
    _passable: NDArray[np.bool_] | None = field(default=None, init=False, repr=False)
    _transparent: NDArray[np.bool_] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.depth < 1:
            raise ValueError(f"depth must be >= 1, got {self.depth}")
        grid = self.terrain
        if not isinstance(grid, np.ndarray) or grid.dtype != np.uint8 or grid.ndim != 2:
            raise ValueError("terrain must be a uint8[H, W] numpy array")
        if grid.size == 0:
            raise ValueError(f"terrain must not be empty, got shape {grid.shape}")
        if int(grid.max()) >= N_TERRAIN:
            raise ValueError(f"terrain holds {int(grid.max())}, not a Terrain value")
        self._changed_set = set(self.changed)

    @property
    def width(self) -> int:
        """Number of columns, W."""
        return int(self.terrain.shape[1])

    @property
    def height(self) -> int:
        """Number of rows, H."""
        return int(self.terrain.shape[0])

    def in_bounds(self, x: int, y: int) -> bool:
        """Whether ``(x, y)`` is a cell of the level."""
        shape: tuple[int, int] = self.terrain.shape
        return 0 <= x < shape[1] and 0 <= y < shape[0]

    @property
    def passable(self) -> NDArray[np.bool_]:
        """Read-only ``bool[H, W]``: cells a walker may enter (closed doors are not)."""
        if self._passable is None:
            self._passable = _read_only(PASSABLE[self.terrain])
        return self._passable

    @property
    def transparent(self) -> NDArray[np.bool_]:
        """Read-only ``bool[H, W]``: cells sight passes through."""
        if self._transparent is None:
            self._transparent = _read_only(TRANSPARENT[self.terrain])
        return self._transparent

    def terrain_at(self, x: int, y: int) -> Terrain:
        """Return the terrain of cell ``(x, y)``.

        Raises:
            IndexError: ``(x, y)`` is outside the level.
        """
        self._check_bounds(x, y)
        return Terrain(int(self.terrain[y, x]))

    def set_terrain(self, x: int, y: int, terrain: Terrain | int) -> None:
        """Change cell ``(x, y)`` to ``terrain``, recording it in ``changed``.

        Setting a cell to the terrain it already has changes nothing and is
        not recorded.

        Raises:
            IndexError: ``(x, y)`` is outside the level.
            ValueError: ``terrain`` is not a ``Terrain`` value.
        """
        self._check_bounds(x, y)
        value = Terrain(terrain)
        if self.terrain[y, x] == value:
            return
        self.terrain[y, x] = value
        self._passable = None
        self._transparent = None
        if (x, y) not in self._changed_set:
            self._changed_set.add((x, y))
            self.changed.append((x, y))

    def clear_changes(self) -> None:
        """Forget the recorded terrain changes."""
        self.changed.clear()
        self._changed_set.clear()

    @property
    def stairs_up(self) -> tuple[int, int] | None:
        """``(x, y)`` of the first up staircase in row-major order, or None."""
        return self._first(Terrain.STAIRS_UP)

    @property
    def stairs_down(self) -> tuple[int, int] | None:
        """``(x, y)`` of the first down staircase in row-major order, or None."""
        return self._first(Terrain.STAIRS_DOWN)

    def find(self, terrain: Terrain) -> list[tuple[int, int]]:
        """Return the ``(x, y)`` of every cell of ``terrain``, in row-major order."""
        ys, xs = np.nonzero(self.terrain == terrain)
        return list(zip(xs.tolist(), ys.tolist(), strict=True))

    def to_ascii(self) -> str:
        """Draw the terrain as text, one line per row, with ``ASCII_GLYPHS``.

        Lines all have width W (rock is a space) and are joined by ``\\n``
        with no trailing newline; ``Level.from_ascii`` reads the text back to
        the same terrain.
        """
        return "\n".join("".join(row) for row in _GLYPH_ARRAY[self.terrain].tolist())

    @classmethod
    def from_ascii(cls, text: str, depth: int = 1) -> Level:
        """Build a level from a map drawn with ``ASCII_LEGEND`` characters.

        Text starting with a newline is read as a triple-quoted literal: the
        first (empty) line is dropped, the common indentation is removed
        (``textwrap.dedent``) and a last line holding only spaces (the closing
        quotes' indentation) is dropped. Other text is taken literally, apart
        from one trailing newline, so leading spaces are rock; this is what
        ``to_ascii`` writes. Short lines are padded with rock to the longest.

        Args:
            text: The map; ``#``, ``|``, ``-`` and box-drawing lines are walls,
                a space is solid rock, and ``ASCII_GLYPHS`` gives the rest.
            depth: Dungeon level number of the new level.

        Returns:
            A level with no rooms, items or recorded changes.

        Raises:
            ValueError: The map is empty, or holds a character not in the
                legend (the message names its line and column, from 1).
        """
        lines = _map_lines(text.replace("\r\n", "\n"))
        width = max((len(line) for line in lines), default=0)
        if width == 0:
            raise ValueError("empty map")
        grid = np.zeros((len(lines), width), dtype=np.uint8)
        for y, line in enumerate(lines):
            for x, char in enumerate(line):
                found = ASCII_LEGEND.get(char)
                if found is None:
                    raise ValueError(
                        f"unknown map character {char!r} at line {y + 1}, column {x + 1}"
                    )
                grid[y, x] = found
        return cls(depth=depth, terrain=grid)

    def _first(self, terrain: Terrain) -> tuple[int, int] | None:
        flat = np.flatnonzero(self.terrain == terrain)
        if flat.size == 0:
            return None
        y, x = divmod(int(flat[0]), self.width)
        return (x, y)

    def _check_bounds(self, x: int, y: int) -> None:
        if not self.in_bounds(x, y):
            raise IndexError(f"({x}, {y}) is outside the {self.width}x{self.height} level")


def _read_only(array: NDArray[np.bool_]) -> NDArray[np.bool_]:
    array.flags.writeable = False
    return array


def _map_lines(text: str) -> list[str]:
    """Split map text into rows, applying the literal / triple-quoted rules of ``from_ascii``."""
    if text.startswith("\n"):
        lines = textwrap.dedent(text[1:]).split("\n")
        if lines and not lines[-1].strip(" "):
            lines.pop()
        return lines
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines
