"""Property test: whatever players do, the simulation never raises and its
bookkeeping stays consistent (STYLE.md: an exception from the simulation is a
bug; a refused command is an event)."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.content.spells import default_spells
from server.sim.commands import (
    DIRECTIONS,
    Ascend,
    Cast,
    Choose,
    CloseDoor,
    Command,
    Descend,
    Drop,
    Eat,
    Move,
    OpenDoor,
    PickUp,
    Quaff,
    Read,
    Rest,
    TakeOff,
    Throw,
    Upgrade,
    Wait,
    Wear,
    Wield,
    Zap,
)
from server.sim.items import LETTERS, add_to_pack, new_item
from server.sim.world import World

directed = st.sampled_from(DIRECTIONS)
letters = st.sampled_from(LETTERS[:12])
cells = st.tuples(st.integers(-2, 62), st.integers(-2, 24))
spells = st.sampled_from(sorted(default_spells().spells))
commands = st.one_of(
    directed.map(lambda d: Move(*d)),
    directed.map(lambda d: OpenDoor(*d)),
    directed.map(lambda d: CloseDoor(*d)),
    st.sampled_from([Wait(), Rest(), PickUp(), Descend(), Ascend()]),
    st.builds(Drop, letters),
    st.builds(Wield, letters),
    st.builds(Wear, letters),
    st.builds(TakeOff, letters),
    st.builds(Eat, letters),
    st.builds(Quaff, letters),
    st.builds(Read, letters),
    st.builds(lambda item, at: Throw(item, *at), letters, cells),
    st.builds(lambda item, d: Zap(item, *d), letters, directed),
    st.builds(
        lambda s, d, at, which: Cast(s, d if which == 1 else None, at if which == 2 else None),
        spells,
        directed,
        cells,
        st.integers(0, 2),
    ),
    st.builds(Choose, st.sampled_from(["health", "power", "resist_fire", "marksman", "x"])),
    st.builds(Upgrade, spells),
)
KIT = (
    "dart",
    "dart",
    "wand_of_fire",
    "wand_of_sleep",
    "wand_of_digging",
    "wand_of_sparks",
    "potion_of_healing",
    "flask_of_oil",
    "scroll_of_teleportation",
    "fire_horn",
)
"""Extra items every player carries, so the item commands have things to act on."""
# (tick offset, player index, command, leave-and-rejoin?)
plays = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 3), commands, st.booleans()),
    min_size=1,
    max_size=120,
)


def check(world: World) -> None:
    on_level: Counter[int] = Counter()
    for actor in world.actors.values():
        level = world.levels[actor.depth]
        assert 0 <= actor.hp <= actor.max_hp and 0 <= actor.en <= actor.max_en
        if actor.is_player:
            on_level[actor.depth] += 1
        if actor.alive:
            assert world.occupancy(actor.depth)[actor.y, actor.x] == actor.id
            assert level.passable[actor.y, actor.x], f"{actor.kind} stands in a wall"
        else:
            assert actor.is_player, "dead monsters leave the world"
    for depth in world.levels:
        occ = world.occupancy(depth)
        ids = occ[occ >= 0]
        assert len(ids) == len(set(ids.tolist())), "one actor, one cell"
        for aid in ids.tolist():
            actor = world.actors[aid]
            assert actor.alive and actor.depth == depth and occ[actor.y, actor.x] == aid
        assert world.players_on(depth) == on_level[depth]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**16), play=plays)
def test_any_commands_keep_the_world_consistent(
    seed: int, play: list[tuple[int, int, Command, bool]]
) -> None:
    world = World(seed, size=(60, 22))
    players = [world.join(f"p{i}", ["warrior", "mage", "monk"][i % 3]) for i in range(4)]
    for player in players:
        for key in KIT:
            add_to_pack(
                player.inventory, new_item(world.content.items[key], world.rng), world.content
            )
        player.known_spells = dict.fromkeys(default_spells().spells, 0)
        player.en = player.max_en = 200
        player.choices_owed = 2
    expected = [-1] * len(players)
    for i, (wait, who, command, churn) in enumerate(play):
        for _ in range(wait):
            world.step()
            check(world)
        player = players[who]
        if churn and i % 7 == 0:
            record = world.leave(player.id)
            players[who] = player = world.join(player.name, record=record)
            expected[who] = -1
        if world.submit(player.id, command, i):
            expected[who] = i
        world.step()
        check(world)
    for _ in range(60):  # let the monsters finish what they started
        world.step()
    # A player put to sleep, paralysed, frozen or webbed keeps its commands
    # queued until it can act again; let every queue drain.
    for _ in range(3000):
        if not any(world.actors[p.id].queue for p in players):
            break
        world.step()
    check(world)
    # Every accepted command was carried out or refused: the ack caught up.
    assert [p.last_tag for p in players] == expected
