"""Random play for the game-layer tests: players who walk, throw, zap, use
items, cast and take stairs, chosen by a seeded generator."""

from __future__ import annotations

import numpy as np

from server.game.game import Game
from server.sim.items import add_to_pack, new_item

MOVES = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1)]
VERBS = ("drop", "wield", "wear", "remove", "eat", "quaff", "read", "pickup")


def seat_players(
    game: Game, count: int, rng: np.random.Generator, *, scatter: bool, invisible: int = 0
) -> list[int]:
    """Join ``count`` players of mixed classes with darts and wands; the
    first ``invisible`` of them are invisible. Returns their actor ids."""
    world = game.world
    ids = []
    for i in range(count):
        welcome, _ = game.join(f"p{i}", None, ["warrior", "mage", "monk"][i % 3], object())
        ids.append(welcome.id)
        actor = world.actors[welcome.id]
        if i < invisible:
            actor.abilities.add("invisible")
        for key in ("dart", "dart", "wand_of_fire", "wand_of_sleep"):
            add_to_pack(
                actor.inventory, new_item(world.content.items[key], world.rng), world.content
            )
        if scatter:
            room = world.levels[1].rooms[int(rng.integers(len(world.levels[1].rooms)))]
            world.move_actor(actor, *world.free_cell_near(1, *room.center))
    return ids


def give_commands(
    game: Game, ids: list[int], rng: np.random.Generator, tick: int, seq: int
) -> tuple[int, int]:
    """One tick's random commands; returns the next ``seq`` and how many
    throws and zaps were sent."""
    world = game.world
    ranged = 0
    for pid in ids:
        roll = rng.random()
        actor = world.actors[pid]
        if roll < 0.4:
            game.command(pid, seq, "move", MOVES[int(rng.integers(len(MOVES)))])
            seq += 1
        elif roll < 0.46 and actor.inventory:
            item = actor.inventory[int(rng.integers(len(actor.inventory)))]
            dx, dy = MOVES[int(rng.integers(len(MOVES)))]
            if item.key.startswith("wand"):
                game.command(pid, seq, "zap", (dx, dy), item=item.letter)
            else:
                game.command(
                    pid, seq, "throw", item=item.letter, at=(actor.x + 3 * dx, actor.y + 3 * dy)
                )
            seq += 1
            ranged += 1
        elif roll < 0.52 and actor.inventory:
            item = actor.inventory[int(rng.integers(len(actor.inventory)))]
            verb = VERBS[int(rng.integers(len(VERBS)))]
            if verb == "pickup":
                game.command(pid, seq, verb)
            else:
                game.command(pid, seq, verb, item=item.letter)
            seq += 1
        elif roll < 0.54 and actor.known_spells:
            game.command(pid, seq, "cast", MOVES[int(rng.integers(len(MOVES)))], spell="spark")
            seq += 1
        if tick == 200 and pid % 2:
            game.command(pid, seq, "down", None)
            seq += 1
    return seq, ranged
