"""Monsters keep the path they found (docs/rules.md, "Monsters": Paths).

A monster walking to a goal searches once and follows that path while the
goal stays put and its next cell is free; it searches again when the goal
moves, a creature steps onto its next cell, or it was moved off the path.
"""

from __future__ import annotations

from typing import Any

from server.content import Terrain
from server.sim import monsters
from server.sim.actors import Actor, Mind
from server.sim.events import DoorChanged, Event
from server.sim.world import World
from tests.sim.conftest import make_world, spawn

HALL = """
##############
#............#
#............#
#............#
######+#######
#............#
##############
"""


def counted(world: World) -> list[int]:
    """Count the path searches ``world`` makes from now on (one int a search)."""
    searches: list[int] = []
    search = world.paths.path

    def path(*args: Any) -> list[tuple[int, int]]:
        searches.append(1)
        return search(*args)

    world.paths.path = path  # type: ignore[method-assign,assignment]
    return searches


def walk(world: World, monster: Actor, goal: tuple[int, int], steps: int) -> list[Event]:
    events: list[Event] = []
    for _ in range(steps):
        monsters._walk(world, monster, goal, events)
    return events


def test_a_monster_follows_its_path_with_one_search() -> None:
    world = make_world(HALL)
    rat = spawn(world, "rat", 1, 2, Mind.WANDERING)
    searches = counted(world)
    walk(world, rat, (12, 2), 11)
    assert (rat.x, rat.y) == (12, 2)
    assert len(searches) == 1


def test_a_creature_on_the_next_cell_makes_it_search_again() -> None:
    world = make_world(HALL)
    rat = spawn(world, "rat", 1, 2, Mind.WANDERING)
    searches = counted(world)
    walk(world, rat, (12, 2), 1)
    assert rat.route
    nx, ny = rat.route[0]
    spawn(world, "kobold", nx, ny, Mind.ASLEEP)
    walk(world, rat, (12, 2), 1)
    assert len(searches) == 2
    assert (rat.x, rat.y) != (nx, ny)
    walk(world, rat, (12, 2), 14)
    assert (rat.x, rat.y) == (12, 2)


def test_a_goal_that_moves_makes_it_search_again() -> None:
    world = make_world(HALL)
    rat = spawn(world, "rat", 1, 1, Mind.WANDERING)
    searches = counted(world)
    walk(world, rat, (12, 1), 2)
    assert len(searches) == 1
    walk(world, rat, (12, 3), 1)
    assert len(searches) == 2
    assert rat.route is not None and rat.route[-1] == (12, 3)


def test_a_monster_moved_off_its_path_searches_again() -> None:
    world = make_world(HALL)
    rat = spawn(world, "rat", 1, 2, Mind.WANDERING)
    searches = counted(world)
    walk(world, rat, (12, 2), 2)
    world.move_actor(rat, 8, 3)  # knocked back, teleported: no longer beside its path
    walk(world, rat, (12, 2), 1)
    assert len(searches) == 2


def test_a_closed_door_on_the_path_is_opened_then_walked_through() -> None:
    world = make_world(HALL)
    rat = spawn(world, "rat", 6, 2, Mind.WANDERING)
    searches = counted(world)
    events = walk(world, rat, (6, 5), 4)  # a step, the door, the doorway, the goal
    assert (rat.x, rat.y) == (6, 5)
    assert world.levels[1].terrain[4, 6] == Terrain.DOOR_OPEN
    assert [e for e in events if isinstance(e, DoorChanged)] == [DoorChanged(1, 6, 4, rat.id, True)]
    assert len(searches) == 1
