"""World rules on tiny ASCII levels with fixed seeds: movement, doors, melee,
monsters, death and respawn, stairs, view and memory, determinism."""

from __future__ import annotations

import numpy as np

from server.content import Terrain
from server.sim.actors import Mind
from server.sim.combat import AttackOutcome
from server.sim.commands import (
    Ascend,
    CloseDoor,
    Descend,
    Move,
    OpenDoor,
    PickUp,
    Rest,
    Wait,
)
from server.sim.events import (
    Attacked,
    Died,
    DoorChanged,
    Fled,
    GainedXp,
    Joined,
    Left,
    Noticed,
    PickedUp,
    Rejected,
    RejectReason,
    Respawned,
    TookStairs,
)
from server.sim.items import Item
from server.sim.world import COMMAND_QUEUE_LIMIT, RESPAWN_TICKS, World
from tests.sim.conftest import ROOM, make_world, run, spawn, within
from tests.sim.conftest import submit_and_step as act


def test_player_joins_by_the_up_stairs_and_is_announced() -> None:
    world = make_world(ROOM)
    p = world.join("ann")
    assert (p.depth, p.x, p.y) == (1, 1, 1)
    events = world.step()
    assert Joined(p.id, "ann") in events


def test_move_and_wall_rejection() -> None:
    world = make_world(ROOM)
    p = world.join("ann")
    act(world, p.id, Move(1, 0), tag=1)
    assert (p.x, p.y) == (2, 1)
    events = act(world, p.id, Move(0, -1), tag=2)
    assert Rejected(p.id, 2, RejectReason.BLOCKED) in events
    assert (p.x, p.y) == (2, 1) and p.last_tag == 2


def test_action_takes_speed_ticks() -> None:
    world = make_world(ROOM)
    p = world.join("ann")
    for tag in range(3):
        world.submit(p.id, Move(1, 0), tag)
    xs = []
    for _ in range(3 * p.speed):
        world.step()
        xs.append(p.x)
    # One step at the first tick, the next after `speed` ticks, and so on.
    assert xs == [2] * p.speed + [3] * p.speed + [4] * p.speed


def test_doors_open_by_moving_and_close() -> None:
    world = make_world(ROOM)
    p = world.join("ann")
    world.move_actor(p, 7, 3)
    events = act(world, p.id, Move(1, 0))
    assert DoorChanged(1, 8, 3, p.id, True) in events
    assert world.levels[1].terrain_at(8, 3) == Terrain.DOOR_OPEN
    assert (p.x, p.y) == (7, 3)
    events = act(world, p.id, CloseDoor(1, 0), tag=5)
    assert DoorChanged(1, 8, 3, p.id, False) in events
    events = act(world, p.id, CloseDoor(1, 0), tag=6)
    assert Rejected(p.id, 6, RejectReason.NO_DOOR) in events
    events = act(world, p.id, OpenDoor(1, 0), tag=7)
    assert DoorChanged(1, 8, 3, p.id, True) in events


def test_closed_door_blocks_sight_and_memory_keeps_what_was_seen() -> None:
    world = make_world("""
        #######
        #<....#
        ###+###
        #.....#
        #######
    """)
    p = world.join("ann")
    world.step()
    memory = p.memory[1]
    assert memory[3, 2] == 255, "the room behind the closed door is unknown"
    assert memory[2, 3] == Terrain.DOOR_CLOSED
    world.move_actor(p, 3, 1)
    act(world, p.id, OpenDoor(0, 1))
    world.step()
    assert memory[3, 2] == Terrain.FLOOR
    act(world, p.id, CloseDoor(0, 1))
    world.step()
    assert p.fov is not None and not p.fov.contains(2, 3)
    assert memory[3, 2] == Terrain.FLOOR, "remembered, though no longer in view"


def test_attacking_a_sleeping_monster_is_a_surprise_that_always_hits() -> None:
    for seed in range(30):
        world = make_world(ROOM, seed=seed)
        p = world.join("ann")
        rat = spawn(world, "rat", 2, 1, Mind.ASLEEP)
        events = act(world, p.id, Move(1, 0))
        attacks = [e for e in events if isinstance(e, Attacked)]
        assert attacks[0].surprise and attacks[0].outcome != AttackOutcome.MISS
        assert Noticed(1, 2, 1, rat.id, p.id) in events or not rat.alive


def test_killing_a_monster_gives_experience_and_frees_the_cell() -> None:
    world = make_world(ROOM, seed=3)
    p = world.join("ann")
    rat = spawn(world, "rat", 2, 1, Mind.ASLEEP)
    events: list[object] = []
    for tag in range(40):
        if rat.id not in world.actors:
            break
        events += act(world, p.id, Move(1, 0), tag)
    deaths = [e for e in events if isinstance(e, Died)]
    assert deaths and deaths[0].actor == rat.id and deaths[0].killer == p.id
    assert GainedXp(p.id, rat.xp_value) in events
    assert world.actor_at(1, 2, 1) is None


def test_wandering_monster_notices_hunts_and_attacks() -> None:
    world = make_world(
        """
        ###########
        #<........#
        ###########
    """,
        seed=5,
    )
    p = world.join("ann")
    jackal = spawn(world, "jackal", 8, 1, Mind.WANDERING)
    events = run(world, 40)
    assert any(isinstance(e, Noticed) and e.actor == jackal.id for e in events)
    assert jackal.mind in (Mind.HUNTING, Mind.FLEEING) or not jackal.alive
    assert any(
        isinstance(e, Attacked) and e.attacker == jackal.id and e.target == p.id for e in events
    )


def test_monster_flees_below_its_courage() -> None:
    world = make_world(ROOM, seed=2)
    p = world.join("ann")
    kobold = spawn(world, "kobold", 2, 1, Mind.HUNTING)
    assert kobold.courage > 0
    kobold.hp = int(kobold.courage * kobold.max_hp) + 1
    events: list[object] = []
    for tag in range(20):
        if kobold.mind == Mind.FLEEING or kobold.id not in world.actors:
            break
        if max(abs(kobold.x - p.x), abs(kobold.y - p.y)) == 1:
            events += act(world, p.id, Move(kobold.x - p.x, kobold.y - p.y), tag)
        else:
            events += act(world, p.id, Wait(), tag)
    if kobold.id in world.actors:
        assert Fled(1, kobold.x, kobold.y, kobold.id) in events or kobold.mind == Mind.FLEEING
        # A fleeing monster steps away from the player when it can.
        before = max(abs(kobold.x - p.x), abs(kobold.y - p.y))
        run(world, kobold.speed + 1)
        assert max(abs(kobold.x - p.x), abs(kobold.y - p.y)) >= before


def test_player_death_and_respawn_at_the_top() -> None:
    world = make_world(ROOM, seed=4)
    p = world.join("ann")
    world.move_actor(p, 5, 3)
    troll = spawn(world, "rat", 6, 3, Mind.HUNTING)
    p.hp = 1
    p.dodge = 0.0
    p.next_act = world.tick + 1000  # busy: its queued commands wait
    for tag in (21, 22):
        world.submit(p.id, Wait(), tag)
    events = run(world, 20)
    assert Rejected(p.id, 21, RejectReason.DEAD) in events
    assert Rejected(p.id, 22, RejectReason.DEAD) in events and p.last_tag == 22
    died = [e for e in events if isinstance(e, Died) and e.actor == p.id]
    assert died and died[0].killer == troll.id
    assert not p.alive and p.respawn_tick > 0
    world.submit(p.id, Wait(), 9)
    events = run(world, RESPAWN_TICKS + 1)
    assert Rejected(p.id, 9, RejectReason.DEAD) in events
    assert any(isinstance(e, Respawned) and e.actor == p.id for e in events)
    assert p.alive and p.hp == p.max_hp and p.depth == 1


def test_stairs_move_between_levels_and_up_from_depth_one_is_sealed() -> None:
    world = make_world(
        ROOM,
        """
        #######
        #<...>#
        #######
    """,
    )
    p = world.join("ann")
    events = act(world, p.id, Ascend(), tag=1)
    assert Rejected(p.id, 1, RejectReason.SEALED) in events
    events = act(world, p.id, Descend(), tag=2)
    assert Rejected(p.id, 2, RejectReason.NO_STAIRS) in events
    world.levels[1].set_terrain(2, 1, Terrain.STAIRS_DOWN)
    world.move_actor(p, 2, 1)
    events = act(world, p.id, Descend(), tag=3)
    assert TookStairs(1, 2, 1, p.id, 2) in events
    assert (p.depth, p.x, p.y) == (2, 1, 1)
    assert world.players_on(1) == 0 and world.players_on(2) == 1
    act(world, p.id, Ascend(), tag=4)
    assert (p.depth, p.x, p.y) == (1, 2, 1)


def test_pick_up_and_rest() -> None:
    world = make_world(ROOM)
    p = world.join("ann")
    world.levels[1].items[(2, 1)] = [Item("apple"), Item("dagger")]
    events = act(world, p.id, PickUp(), tag=1)
    assert Rejected(p.id, 1, RejectReason.NOTHING_HERE) in events
    act(world, p.id, Move(1, 0))
    events = act(world, p.id, PickUp())
    assert PickedUp(1, 2, 1, p.id, "dagger") in events
    assert [i.key for i in world.levels[1].items[(2, 1)]] == ["apple"]
    assert any(i.key == "dagger" for i in p.inventory)
    events = act(world, p.id, Rest(), tag=3)
    assert not any(isinstance(e, Rejected) for e in events)
    spawn(world, "rat", 6, 4, Mind.ASLEEP)
    world.step()
    events = act(world, p.id, Rest(), tag=4)
    assert Rejected(p.id, 4, RejectReason.MONSTER_IN_VIEW) in events


def test_command_queue_is_bounded() -> None:
    world = make_world(ROOM)
    p = world.join("ann")
    accepted = [world.submit(p.id, Wait(), t) for t in range(COMMAND_QUEUE_LIMIT + 2)]
    assert accepted == [True] * COMMAND_QUEUE_LIMIT + [False, False]
    events = world.step()
    assert Rejected(p.id, COMMAND_QUEUE_LIMIT, RejectReason.QUEUE_FULL) in events


def test_players_swap_with_an_idle_player_but_never_attack_a_busy_one() -> None:
    world = make_world(ROOM)
    a = world.join("ann")
    b = world.join("bob")
    a_at, b_at = (a.x, a.y), (b.x, b.y)
    world.submit(b.id, Wait(), 1)  # bob is busy: blocks
    world.step()
    events = act(world, a.id, Move(b.x - a.x, b.y - a.y), tag=2)
    assert Rejected(a.id, 2, RejectReason.OCCUPIED) in events
    while b.next_act > world.tick:
        world.step()
    events = act(world, a.id, Move(b.x - a.x, b.y - a.y), tag=3)
    assert not any(isinstance(e, (Rejected, Attacked)) for e in events)
    assert (a.x, a.y) == b_at and (b.x, b.y) == a_at
    assert world.actor_at(1, *b_at) is a and world.actor_at(1, *a_at) is b
    assert a.hp == a.max_hp and b.hp == b.max_hp


def test_players_see_each_other_and_leave_cleanly() -> None:
    world = make_world(ROOM)
    a = world.join("ann")
    b = world.join("bob")
    world.step()
    assert b.id in world.sees[a.id] and a.id in world.sees[b.id]
    record = world.leave(b.id)
    events = world.step()
    assert Left(b.id, "bob") in events
    assert b.id not in world.sees[a.id]
    c = world.join("bob", record=record)
    assert c.id != b.id and (c.x, c.y) == (b.x, b.y)


def test_surprise_when_the_attacker_just_came_into_view() -> None:
    """Seed 002: an attacker that was not in view at the end of the last tick
    surprises; the door trick is closing a door to drop out of view."""
    world = make_world(
        """
        #########
        #<......#
        ####+####
        #.......#
        #########
    """,
        seed=8,
    )
    p = world.join("ann")
    orc = spawn(world, "kobold", 4, 3, Mind.HUNTING)
    world.move_actor(p, 4, 1)
    world.step()
    orc.mind = Mind.HUNTING
    assert orc.id not in world.sees[p.id]
    assert world.is_surprise(orc, p) and world.is_surprise(p, orc)
    world.set_terrain(1, 4, 2, Terrain.DOOR_OPEN)
    world.step()
    orc.mind = Mind.HUNTING
    assert orc.id in world.sees[p.id]
    assert not world.is_surprise(orc, p) and not world.is_surprise(p, orc)
    world.set_terrain(1, 4, 2, Terrain.DOOR_CLOSED)
    world.step()
    orc.mind = Mind.HUNTING
    assert world.is_surprise(p, orc), "the door trick"


def test_sleeping_and_wandering_defenders_are_surprised() -> None:
    world = make_world(ROOM)
    p = world.join("ann")
    rat = spawn(world, "rat", 3, 1, Mind.HUNTING)
    world.step()
    for mind, expected in [
        (Mind.ASLEEP, True),
        (Mind.WANDERING, True),
        (Mind.HUNTING, False),
        (Mind.FLEEING, False),
    ]:
        rat.mind = mind
        assert world.is_surprise(p, rat) is expected, mind


def test_same_seed_same_commands_same_events() -> None:
    def play(seed: int) -> list[object]:
        world = make_world(ROOM, seed=seed)
        a = world.join("ann")
        spawn(world, "jackal", 6, 3, Mind.WANDERING)
        spawn(world, "rat", 3, 4, Mind.ASLEEP)
        rng = np.random.default_rng(0)
        log: list[object] = []
        for tick in range(200):
            if tick % 3 == 0:
                dx, dy = [(1, 0), (0, 1), (-1, 0), (0, -1), (1, 1)][int(rng.integers(5))]
                world.submit(a.id, Move(dx, dy), tick)
            if tick == 50:
                world.join("bob")
            log += world.step()
        return log

    first, second = play(11), play(11)
    assert first == second and len(first) > 10
    assert play(12) != first


def test_a_crowd_spills_out_of_the_entrance_room_until_the_level_is_full_then_below() -> None:
    world = make_world("""
        ######
        #<...+......#
        ######
    """)
    free = int(world.levels[1].passable.sum())
    players = [world.join(f"p{i}") for i in range(free)]
    cells = {(p.x, p.y) for p in players}
    assert len(cells) == free, "every player has a cell of its own"
    assert (6, 1) in cells, "the search passes the closed door"
    late = world.join("one_too_many")
    assert late.depth == 2, "a full first level sends newcomers one level down"


def test_taking_stairs_into_a_full_arrival_is_refused_without_side_effects() -> None:
    world = make_world(
        """
        #####
        #<.>#
        #####
    """,
        """
        ###
        #<#
        ###
    """,
    )
    p = world.join("ann")
    q = world.join("bob")
    world.move_actor(q, 3, 1)
    act(world, q.id, Descend())
    assert q.depth == 2
    world.move_actor(p, 3, 1)
    events = act(world, p.id, Descend(), tag=7)
    assert Rejected(p.id, 7, RejectReason.OCCUPIED) in events
    assert p.depth == 1 and world.players_on(1) == 1 and world.players_on(2) == 1


def test_a_character_saved_while_dead_comes_back_like_a_respawn() -> None:
    world = make_world(
        ROOM,
        """
        #######
        #<...>#
        #######
    """,
    )
    p = world.join("ann")
    world.levels[1].set_terrain(2, 1, Terrain.STAIRS_DOWN)
    world.move_actor(p, 2, 1)
    act(world, p.id, Descend())
    world.move_actor(p, 4, 1)
    p.hp = 0
    record = world.leave(p.id)
    back = world.join("ann", record=record)
    assert (back.depth, back.x, back.y) == (1, 1, 1)
    assert back.alive and back.hp == back.max_hp and back.respawn_tick == 0


def test_a_character_saved_in_a_doorway_finds_the_door_open_again() -> None:
    world = make_world(ROOM)
    p = world.join("ann")
    world.move_actor(p, 7, 3)
    act(world, p.id, Move(1, 0))  # opens the door
    act(world, p.id, Move(1, 0))  # steps into the doorway
    assert (p.x, p.y) == (8, 3)
    record = world.leave(p.id)
    world.levels[1].set_terrain(8, 3, Terrain.DOOR_CLOSED)  # as on a regenerated level
    back = world.join("ann", record=record)
    assert (back.x, back.y) == (8, 3)
    assert world.levels[1].terrain_at(8, 3) == Terrain.DOOR_OPEN


def test_a_full_first_level_sends_newcomers_to_the_next_depth() -> None:
    """Depth 1 seats as many players as it has free cells; the next new
    player arrives by depth 2's up staircase (issue 10: room for everyone),
    and each arrival costs an array look-up, not a search of the level."""
    world = World(3, size=(24, 12), populate=False)
    level = world.level(1)
    room = int(level.passable.sum())
    placed = [world.join(f"p{i}") for i in range(room)]
    assert {a.depth for a in placed} == {1}
    assert len({(a.x, a.y) for a in placed}) == room
    extra = world.join("late")
    assert extra.depth == 2
    stairs = world.level(2).find(Terrain.STAIRS_UP)[0]
    assert max(abs(extra.x - stairs[0]), abs(extra.y - stairs[1])) <= 1


def test_free_cell_near_follows_the_search_order_after_digging() -> None:
    """The kept search order is dropped when what is walkable changes."""
    world = make_world("""
        #######
        #<.#..#
        #######
    """)
    a = world.join("a")
    b = world.join("b")
    assert (a.x, a.y, b.x, b.y) == (1, 1, 2, 1)
    assert world.join("c").depth == 2
    world.set_terrain(1, 3, 1, Terrain.FLOOR)
    d = world.join("d")
    assert (d.depth, d.x, d.y) == (1, 3, 1)


def test_a_field_of_view_is_kept_unless_terrain_changes_in_its_window() -> None:
    """Terrain changing far away keeps a player's field of view (the same
    object, nothing recomputed); a door opening in its window recomputes it
    and writes the door into its map memory (issue 10)."""
    world = make_world("""
        ##############################
        #<...+......................+#
        ##############################
    """)
    player = world.join("p")
    world.step()
    kept = player.fov
    assert kept is not None and not kept.contains(28, 1)
    world.set_terrain(1, 28, 1, Terrain.DOOR_OPEN)  # outside the 17-cell window
    world.step()
    assert player.fov is kept and player.seen_tiles == []
    world.set_terrain(1, 5, 1, Terrain.DOOR_OPEN)  # in view
    world.step()
    assert player.fov is not kept and player.fov.contains(6, 1)
    assert player.memory[1][1, 5] == Terrain.DOOR_OPEN
    tiles = player.seen_tiles
    assert [5, 1, int(Terrain.DOOR_OPEN)] in [tiles[i : i + 3] for i in range(0, len(tiles), 3)]


def test_new_monsters_first_act_on_a_uniformly_random_tick_of_their_first_turn() -> None:
    # Issue 10: the monsters of a level made at once would otherwise all act
    # on one tick in every few. Each one's first action is tick + U{0..speed-1}.
    offsets: dict[int, list[int]] = {}
    for seed in range(1, 4):
        world = World(seed)
        for depth in range(1, 11):
            world.level(depth)  # generated and stocked at tick 0
        for actor in world.actors.values():
            offsets.setdefault(actor.speed, []).append(actor.next_act - world.tick)
    for speed in (2, 3):
        seen = offsets[speed]
        assert all(0 <= off < speed for off in seen)
        for off in range(speed):
            assert within(seen.count(off), len(seen), 1 / speed), (speed, off)


def test_monsters_keep_their_place_in_the_turn_while_nobody_is_on_their_level() -> None:
    world = World(2)
    world.join("ann")  # on depth 1; depth 2 has nobody
    world.level(2)
    first = {a.id: a.next_act for a in world.actors.values() if a.depth == 2}
    assert len({t % 6 for t in first.values()}) > 1
    for _ in range(40):
        world.step()
    for mid, then in first.items():
        monster = world.actors[mid]
        # Its turns went by without it: due again at a tick of its own phase,
        # not left behind to act with all the others when a player arrives.
        assert world.tick <= monster.next_act < world.tick + monster.speed
        assert (monster.next_act - then) % monster.speed == 0


def test_restock_puts_a_monster_where_no_player_sees_it() -> None:
    """A level short of monsters gets one wandering monster per restock, on a
    room cell in no player's field of view (monsters.restock), and
    ``monsters_on`` counts the monsters of a level."""
    from server.sim import monsters

    world = World(3)
    rng = np.random.default_rng(3)
    players = []
    for i in range(30):  # players scattered over depth 1's rooms
        p = world.join(f"p{i}")
        room = world.level(1).rooms[int(rng.integers(len(world.level(1).rooms)))]
        world.move_actor(p, *world.free_cell_near(1, room.x, room.y))
        players.append(p)
    world.step()
    for monster in [a for a in world.actors.values() if not a.is_player]:
        world.remove_monster(monster)
    assert world.monsters_on(1) == 0
    placed = 0
    for _ in range(20):
        before = set(world.actors)
        monsters.restock(world, 1)
        new = [world.actors[a] for a in set(world.actors) - before]
        assert len(new) <= 1 and world.monsters_on(1) == placed + len(new)
        for monster in new:
            assert monster.mind == Mind.WANDERING and monster.depth == 1
            seen = [
                p.id for p in players if p.fov is not None and p.fov.contains(monster.x, monster.y)
            ]
            assert seen == [], (monster.x, monster.y, seen)
        placed += len(new)
    assert placed >= 10, "restock found free unseen cells on a level with 30 players"


def test_monsters_hunting_a_player_who_leaves_or_dies_lose_it_and_no_other() -> None:
    """A player who leaves the world or dies is forgotten by the monsters
    hunting it (they wander), while a monster hunting another player keeps
    its quarry; players have no quarry to lose."""
    world = make_world(ROOM)
    ann, bob = world.join("ann"), world.join("bob")
    orc = spawn(world, "orc", ann.x + 2, ann.y, Mind.HUNTING)
    rat = spawn(world, "rat", ann.x + 3, ann.y, Mind.HUNTING)
    for monster, quarry in ((orc, ann), (rat, bob)):
        monster.target, monster.target_seen = quarry.id, (quarry.x, quarry.y)
    world.leave(ann.id)
    assert (orc.target, orc.target_seen, orc.mind) == (None, None, Mind.WANDERING)
    assert (rat.target, rat.mind) == (bob.id, Mind.HUNTING)
    bob.hp = 0
    world.after_harm(bob, None, [])  # dies (and waits to respawn)
    assert (rat.target, rat.target_seen, rat.mind) == (None, None, Mind.WANDERING)
    assert bob.id in world.actors and not bob.alive
