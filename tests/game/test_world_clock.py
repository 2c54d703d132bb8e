"""A world's clock goes on across restarts (seed 004: a spell is forgotten
a fixed number of rounds after it was learned, counted in the world's
ticks). A server that started its world at tick 0 again gave every
character back the full retention of its spells at each restart, and
handed out ticks it had already used. On both real backends."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.game.game import Game
from server.sim.casting import learn, turns_left
from server.sim.world import World
from server.store import open_store
from tests.pgdb import empty_pg, pg_database

__all__ = ["pg_database"]


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "world.db")
    return empty_pg(request.getfixturevalue("pg_database"))


def test_a_restarted_world_resumes_its_clock_and_spells_keep_fading(target: str) -> None:
    store = open_store(target)
    assert store.last_tick() == 0  # nothing played: a fresh world starts at 0
    game = Game(World(5), store, save_interval_s=0.5)
    assert game.world.tick == 0
    welcome, _ = game.join("bob", None, "mage", object())
    bob = game.world.actors[welcome.id]
    for _ in range(30):
        game.step()
    spell = "magic_missile"
    assert learn(game.world, bob, spell, [])  # as reading its scroll does
    learned = bob.known_spells[spell]
    for _ in range(120):
        game.step()
    before = turns_left(bob, spell, game.world.tick, game.world.status_rules.round_ticks)
    assert before < turns_left(bob, spell, learned, game.world.status_rules.round_ticks)
    game.save_all()
    saved = store.last_tick()
    assert 0 < saved <= game.world.tick
    store.close()

    store = open_store(target)
    again = Game(World(5), store)
    assert again.world.tick == saved + 1
    resumed, _ = again.join("bob", welcome.token, None, object())
    assert resumed.resumed and resumed.tick == saved + 1
    bob = again.world.actors[resumed.id]
    assert bob.known_spells[spell] == learned
    after = turns_left(bob, spell, again.world.tick, again.world.status_rules.round_ticks)
    assert after <= before  # not the full retention again
    store.close()
