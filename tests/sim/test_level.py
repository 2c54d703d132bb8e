"""Tests for server.sim.level (Level, Room, ASCII maps) and server.sim.terrain tables."""

from __future__ import annotations

import numpy as np
import pytest

from server.content import N_TERRAIN, Terrain, default_content
from server.sim.level import ASCII_GLYPHS, Level, Room
from server.sim.terrain import PASSABLE, TRANSPARENT

ROOM = """
    #######
    #<..'.#
    #.~=:T+
    #{_..>#
    #######
"""


def test_terrain_tables_follow_the_content() -> None:
    defs = default_content().terrain
    assert PASSABLE.shape == TRANSPARENT.shape == (N_TERRAIN,)
    assert PASSABLE.tolist() == [d.passable for d in defs]
    assert TRANSPARENT.tolist() == [d.transparent for d in defs]
    assert not PASSABLE[Terrain.DOOR_CLOSED] and PASSABLE[Terrain.DOOR_OPEN]
    with pytest.raises(ValueError):
        PASSABLE[0] = True


def test_from_ascii_reads_every_legend_character() -> None:
    level = Level.from_ascii(ROOM, depth=4)
    assert level.depth == 4
    assert (level.width, level.height) == (7, 5)
    assert level.terrain.dtype == np.uint8
    t = Terrain
    assert level.terrain[1:4, 1:6].tolist() == [
        [t.STAIRS_UP, t.FLOOR, t.FLOOR, t.DOOR_OPEN, t.FLOOR],
        [t.FLOOR, t.WATER, t.LAVA, t.RUBBLE, t.TREE],
        [t.FOUNTAIN, t.ALTAR, t.FLOOR, t.FLOOR, t.STAIRS_DOWN],
    ]
    assert level.terrain_at(6, 2) is Terrain.DOOR_CLOSED
    assert level.rooms == [] and level.items == {} and level.changed == []


def test_from_ascii_accepts_line_and_box_drawing_walls() -> None:
    for char in "#|-─│┌┐└┘├┤┬┴┼═║╔╗╚╝":
        assert Level.from_ascii(char).terrain_at(0, 0) is Terrain.WALL, char
    boxed = Level.from_ascii("╔═╗\n║.├\n╚═┘").terrain
    assert (boxed == Terrain.WALL).sum() == 8 and boxed[1, 1] == Terrain.FLOOR


def test_from_ascii_pads_ragged_lines_with_rock() -> None:
    level = Level.from_ascii("#\n#.#\n##")
    assert level.terrain.tolist() == [
        [Terrain.WALL, Terrain.ROCK, Terrain.ROCK],
        [Terrain.WALL, Terrain.FLOOR, Terrain.WALL],
        [Terrain.WALL, Terrain.WALL, Terrain.ROCK],
    ]


def test_from_ascii_dedents_a_triple_quoted_map_but_keeps_literal_text() -> None:
    quoted = Level.from_ascii("\n      ###\n      #.#\n      ###\n    ")
    assert (quoted.width, quoted.height) == (3, 3)
    literal = Level.from_ascii("  ###\n  #.#\n  ###\n")
    assert (literal.width, literal.height) == (5, 3)
    assert (literal.terrain[:, :2] == Terrain.ROCK).all()
    assert np.array_equal(literal.terrain[:, 2:], quoted.terrain)


def test_from_ascii_rejects_unknown_characters_naming_line_and_column() -> None:
    with pytest.raises(ValueError, match=r"'@' at line 2, column 3"):
        Level.from_ascii("\n    ###\n    #.@#\n    ###\n")
    with pytest.raises(ValueError, match="empty map"):
        Level.from_ascii("\n   \n")
    with pytest.raises(ValueError, match="empty map"):
        Level.from_ascii("")


def test_to_ascii_is_the_inverse_of_from_ascii() -> None:
    text = "   \n ##### \n #<.>+ \n ##### \n   "
    level = Level.from_ascii(text)
    drawn = level.to_ascii()
    assert drawn.split("\n") == ["       ", " ##### ", " #<.>+ ", " ##### ", "       "]
    assert np.array_equal(Level.from_ascii(drawn).terrain, level.terrain)
    canonical = Level.from_ascii("┌─┐\n│.│\n└─┘").to_ascii()
    assert canonical == "###\n#.#\n###"


def test_to_ascii_uses_one_glyph_per_terrain() -> None:
    row = np.arange(N_TERRAIN, dtype=np.uint8)[None, :]
    level = Level(depth=1, terrain=row.copy())
    assert level.to_ascii() == ASCII_GLYPHS
    assert np.array_equal(Level.from_ascii(level.to_ascii()).terrain, row)


def test_bounds_and_lookups() -> None:
    level = Level.from_ascii(ROOM)
    assert level.in_bounds(0, 0) and level.in_bounds(6, 4)
    assert not level.in_bounds(7, 0) and not level.in_bounds(0, 5)
    assert not level.in_bounds(-1, 0) and not level.in_bounds(0, -1)
    with pytest.raises(IndexError):
        level.terrain_at(-1, 0)  # no wrap-around
    with pytest.raises(IndexError):
        level.terrain_at(7, 0)
    assert level.stairs_up == (1, 1)
    assert level.stairs_down == (5, 3)
    assert level.find(Terrain.FLOOR) == [(2, 1), (3, 1), (5, 1), (1, 2), (3, 3), (4, 3)]
    assert Level.from_ascii("#.#").stairs_up is None
    assert Level.from_ascii("<.<\n<..").stairs_up == (0, 0)


def test_passable_and_transparent_are_cached_read_only_per_cell_tables() -> None:
    level = Level.from_ascii(ROOM)
    passable = level.passable
    assert passable is level.passable
    assert np.array_equal(passable, PASSABLE[level.terrain])
    assert np.array_equal(level.transparent, TRANSPARENT[level.terrain])
    assert passable.shape == (level.height, level.width)
    with pytest.raises(ValueError):
        passable[1, 1] = False


def test_set_terrain_records_changes_and_refreshes_the_tables() -> None:
    level = Level.from_ascii(ROOM)
    before_passable, before_transparent = level.passable, level.transparent
    assert not before_passable[2, 6] and not before_transparent[2, 6]
    level.set_terrain(6, 2, Terrain.DOOR_OPEN)
    assert level.terrain_at(6, 2) is Terrain.DOOR_OPEN
    assert level.passable[2, 6] and level.transparent[2, 6]
    assert not before_passable[2, 6]  # earlier arrays are not mutated
    level.set_terrain(6, 2, Terrain.DOOR_CLOSED)
    level.set_terrain(3, 3, Terrain.DOOR_CLOSED)
    level.set_terrain(1, 1, Terrain.STAIRS_UP)  # unchanged: not recorded
    assert level.changed == [(6, 2), (3, 3)]
    level.clear_changes()
    assert level.changed == []
    level.set_terrain(6, 2, int(Terrain.FLOOR))
    assert level.changed == [(6, 2)]


def test_set_terrain_rejects_bad_cells_and_values() -> None:
    level = Level.from_ascii(ROOM)
    with pytest.raises(IndexError):
        level.set_terrain(-1, 0, Terrain.FLOOR)
    with pytest.raises(IndexError):
        level.set_terrain(0, 5, Terrain.FLOOR)
    with pytest.raises(ValueError):
        level.set_terrain(1, 1, 255)  # UNKNOWN is a wire value, never a level cell
    assert level.changed == []


def test_level_construction_is_checked() -> None:
    with pytest.raises(ValueError, match="uint8"):
        Level(depth=1, terrain=np.zeros((3, 3), dtype=np.int64))
    with pytest.raises(ValueError, match="uint8"):
        Level(depth=1, terrain=np.zeros(3, dtype=np.uint8))
    with pytest.raises(ValueError, match="empty"):
        Level(depth=1, terrain=np.zeros((0, 3), dtype=np.uint8))
    with pytest.raises(ValueError, match="not a Terrain"):
        Level(depth=1, terrain=np.full((2, 2), N_TERRAIN, dtype=np.uint8))
    with pytest.raises(ValueError, match="depth"):
        Level(depth=0, terrain=np.zeros((2, 2), dtype=np.uint8))


def test_room_geometry() -> None:
    room = Room(x=2, y=3, w=4, h=2)
    assert room.center == (3, 3)
    assert room.contains(2, 3) and room.contains(5, 4)
    assert not room.contains(6, 3) and not room.contains(2, 5) and not room.contains(1, 3)
    grid = np.zeros((8, 8), dtype=np.uint8)
    grid[room.slices] = 1
    assert grid.sum() == 8 and grid[3, 2] == 1 and grid[4, 5] == 1
    with pytest.raises(AttributeError):
        room.x = 0  # type: ignore[misc]
