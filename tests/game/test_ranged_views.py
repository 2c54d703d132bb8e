"""Projectiles and rays as other players see them, through the real codec."""

from __future__ import annotations

from typing import Any

from protocol.codec import decode_server, encode_server
from protocol.messages import Delta
from server.game.game import Game
from server.game.store import Store
from server.sim.actors import Actor
from server.sim.items import Item, add_to_pack, new_item
from server.sim.level import Level
from server.sim.world import World

HALL = """
###################################
#<................................#
#.................................#
#.................................#
###################################
"""


def _game() -> Game:
    world = World(7, levels={1: Level.from_ascii(HALL, depth=1)}, populate=False)
    return Game(world, Store(":memory:"))


def _two_players(
    ann_at: tuple[int, int], bob_at: tuple[int, int], item: str
) -> tuple[Game, Actor, Actor, Item]:
    """Ann and Bob in the hall at the given cells, Ann holding one ``item``;
    one tick has run so both see what they see."""
    game = _game()
    world = game.world
    ann, bob = (
        world.actors[game.join(name, None, "warrior", object())[0].id] for name in ("ann", "bob")
    )
    world.move_actor(ann, *ann_at)
    world.move_actor(bob, *bob_at)
    held = add_to_pack(ann.inventory, new_item(world.content.items[item]), world.content)
    assert held is not None
    game.step()
    return game, ann, bob, held


def _events(out: dict[int, list[Any]], pid: int, name: str) -> list[list[Any]]:
    found = []
    for msg in out.get(pid, []):
        msg = decode_server(encode_server(msg))
        if isinstance(msg, Delta):
            found += [ev for ev in msg.ev or [] if ev[0] == name]
    return found


def test_a_thrown_dart_is_seen_in_flight_by_another_player_in_view() -> None:
    game, ann, bob, dart = _two_players((3, 2), (5, 3), "dart")
    world = game.world
    game.command(ann.id, 1, "throw", item=dart.letter, at=(9, 2))
    flights: list[list[Any]] = []
    landed: list[list[Any]] = []
    for _ in range(6):
        out = game.step()
        flights += _events(out, bob.id, "fly")
        landed += _events(out, bob.id, "land")
    reach = world.content.items["dart"].throw_distance
    cells = [tuple(c) for ev in flights for c in ev[3]]
    assert len(flights) >= 2, "bob saw the dart on more than one tick"
    assert cells == [(4 + i, 2) for i in range(reach)]
    assert all(ev[2] == "dart" for ev in flights)
    assert [ev[2:5] for ev in landed] == [["dart", 3 + reach, 2]]
    assert [i.key for i in world.levels[1].items[(3 + reach, 2)]] == ["dart"]


def test_a_ray_is_cut_to_what_a_distant_player_sees() -> None:
    game, ann, bob, wand = _two_players((2, 2), (14, 2), "wand_of_fire")
    game.command(ann.id, 1, "zap", (1, 0), item=wand.letter)
    rays_a: list[list[Any]] = []
    rays_b: list[list[Any]] = []
    for _ in range(3):
        out = game.step()
        rays_a += _events(out, ann.id, "ray")
        rays_b += _events(out, bob.id, "ray")
    assert len(rays_a) == len(rays_b) == 1
    mine = [tuple(c) for c in rays_a[0][3]]
    theirs = [tuple(c) for c in rays_b[0][3]]
    assert ann.fov is not None and bob.fov is not None
    assert not bob.fov.contains(ann.x, ann.y)
    assert mine and all(ann.fov.contains(*c) for c in mine)
    assert theirs and all(bob.fov.contains(*c) for c in theirs)
    # together they are one unbroken line east from the wand, each cut to its own view
    union = sorted(set(mine) | set(theirs))
    assert union == [(3 + i, 2) for i in range(len(union))]
    assert set(mine) != set(theirs)
    assert rays_b[0][1] is None, "bob cannot see ann, so the firer is not named"
    assert rays_a[0][1] == ann.id
