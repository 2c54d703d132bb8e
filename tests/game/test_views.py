"""The game layer end to end without sockets: every message goes through the
real codec into the real client model, and after every tick the model must
equal the server's truth for that player (no desync) while nothing outside
the player's view was ever sent (no fog-of-war leak)."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import pytest

from client.model import GameModel
from protocol.codec import decode_server, encode_server
from protocol.fov import unpack_fov
from protocol.messages import BACK_TICKS, Delta, Snapshot, unpack_ids, unpack_moves, unpack_steps
from server.game.game import CHECKPOINT_SPREAD_TICKS, SEND_BATCH, Game, GameError
from server.game.store import Store
from server.game.wire import actor_record, inventory_record, kind_keys, status_bits, wire_kind
from server.sim.actors import Actor, Mind, new_monster
from server.sim.casting import castable
from server.sim.events import RejectReason
from server.sim.world import World
from tests.game.randomplay import MOVES, give_commands, seat_players


def _check_no_leak(game: Game, pid: int, msg: Any) -> None:
    """Everything a delta mentions lies in the player's current view."""
    actor = game.world.actors[pid]
    if not isinstance(msg, Delta) or actor.fov is None:
        return
    fov = actor.fov
    for rec in msg.add or []:
        assert fov.contains(rec[3], rec[4]), f"actor {rec[0]} sent from outside the view"
    for rec in msg.upd or []:
        assert fov.contains(rec[1], rec[2]), f"update of {rec[0]} from outside the view"
    mv = msg.mv or []
    moves = unpack_moves(mv)
    assert len(moves) * 3 == len(mv), f"malformed mv {mv}"
    for aid, x, y in moves:
        assert fov.contains(x, y), f"move of {aid} from outside the view"
    back = unpack_moves(msg.back)
    assert len(back) * 3 == len(msg.back or []), f"malformed back {msg.back}"
    for aid, x, y in back:
        assert fov.contains(x, y), f"{aid} back from outside the view"
    steps = unpack_steps(msg.st)
    assert len(steps) == len(msg.st or []), f"malformed st {msg.st}"
    for aid, _, _ in steps:
        other = game.world.actors[aid]
        assert fov.contains(other.x, other.y), f"step of {aid} from outside the view"
    tiles = msg.tiles or []
    for i in range(0, len(tiles), 3):
        assert fov.contains(tiles[i], tiles[i + 1]), "tile sent from outside the view"
    objs = msg.objs or []
    for i in range(0, len(objs), 3):
        assert fov.contains(objs[i], objs[i + 1]), "item sent from outside the view"
    for ev in msg.ev or []:
        if ev[0] == "ray":
            for x, y in ev[3] + ev[4]:
                assert fov.contains(x, y), "ray cell sent from outside the view"
        elif ev[0] == "fly":
            for x, y in ev[3]:
                assert fov.contains(x, y), "projectile cell sent from outside the view"


EVENT_ACTOR_FIELDS = {
    "atk": (1, 2),
    "die": (1, 2),
    "door": (1,),
    "pick": (1,),
    "wake": (1,),
    "flee": (1,),
    "lvl": (1,),
    "stairs": (1,),
    "respawn": (1,),
    "xp": (1,),
    "drop": (1,),
    "use": (1,),
    "throw": (1,),
    "harm": (1, 2),
    "boom": (1,),
    "status": (1,),
    "poly": (1, 2),
    "cast": (1,),
    "ray": (1,),
}
"""Where docs/protocol.md puts actor ids in each event."""


def _check_ids_known(pid: int, model: GameModel, msg: Any) -> None:
    """Every actor id in a message is the player's own, one it was already
    sent (still in its model) or one this message adds (issue 11: no id
    leaks through the fog of war, invisible actors included)."""
    known = set(model.actors) | {pid}
    if isinstance(msg, Snapshot):
        known |= {rec[0] for rec in msg.actors}
        return
    if not isinstance(msg, Delta):
        return
    known |= {rec[0] for rec in msg.add or []}
    for aid, _, _ in unpack_moves(msg.back):  # protocol 8: one the client kept
        assert aid in model.kept and aid not in model.actors, f"back of actor {aid}, not kept"
        known.add(aid)
    for rec in msg.upd or []:
        assert rec[0] in known, f"upd of unknown actor {rec[0]}"
    for aid, _, _ in unpack_moves(msg.mv):
        assert aid in known, f"mv of unknown actor {aid}"
    for aid, _, _ in unpack_steps(msg.st):
        assert aid in known, f"st of unknown actor {aid}"
    for ev in msg.ev or []:
        for i in EVENT_ACTOR_FIELDS.get(ev[0], ()):
            assert ev[i] is None or ev[i] in known, f"{ev} names unknown actor {ev[i]}"
        if ev[0] == "ray":
            for hit in ev[5]:
                assert hit[0] is None or hit[0] in known, f"{ev} names unknown actor {hit[0]}"


def _check_in_sync(game: Game, pid: int, model: GameModel) -> None:
    world = game.world
    actor = world.actors[pid]
    assert model.depth == actor.depth
    assert np.array_equal(model.known, actor.memory[actor.depth])
    if actor.alive and actor.fov is not None:
        rows, cols = actor.fov.slices()
        truth = np.zeros_like(model.visible)
        truth[rows, cols] = actor.fov.visible
        assert np.array_equal(model.visible, truth)
    truth_actors = {
        a: (world.actors[a].x, world.actors[a].y, world.actors[a].hp) for a in world.sees[pid]
    }
    assert {a: (v.x, v.y, v.hp) for a, v in model.actors.items()} == truth_actors
    assert {a: v.sts for a, v in model.actors.items()} == {
        a: status_bits(world.actors[a]) for a in world.sees[pid]
    }
    assert model.me["hp"] == actor.hp
    if actor.alive:  # protocol 10: the cell comes in the own actor record
        assert (model.me["x"], model.me["y"]) == (actor.x, actor.y)
        assert model.actors[pid].is_self
    else:  # while dead the player sees nothing, its own record included
        assert model.me["dead"] and pid not in model.actors
    assert model.me["inv"] == inventory_record(actor)
    assert model.me["food"] == [actor.food.nourishment, actor.food.hunger]
    assert model.me["en"] == actor.en
    assert model.me["sts"] == [[int(k), r] for k, r, _ in actor.statuses.snapshot()]
    assert [row[1] for row in model.me["spells"]] == castable(actor)
    assert model.ack == actor.last_tag


@pytest.mark.parametrize("scatter", [False, True])
def test_many_players_stay_in_sync_and_see_only_their_view(scatter: bool) -> None:
    """Crowded at the entrance, or scattered over the level so that most views
    are quiet most ticks (and are skipped): either way, no desync, no leak."""
    world = World(21)
    game = Game(world, Store(":memory:"))
    rng = np.random.default_rng(3)
    ids = seat_players(game, 10 if scatter else 6, rng, scatter=scatter, invisible=2)
    models: dict[int, GameModel] = {}
    for pid in ids:
        models[pid] = GameModel()
        models[pid].apply(decode_server(encode_server(game.welcome(game.seats[pid], None, False))))
    seq = 0
    seen_others = 0
    ranged = 0
    for tick in range(400):
        seq, shots = give_commands(game, ids, rng, tick, seq)
        ranged += shots
        out = game.step()
        for pid, model in models.items():
            for msg in out.get(pid, []):
                _check_no_leak(game, pid, msg)
                _check_ids_known(pid, model, msg)
                model.apply(decode_server(encode_server(msg)))
            _check_in_sync(game, pid, model)
            seen_others += sum(1 for a in model.actors.values() if a.id != pid)
    assert seen_others > 0 and ranged > 0


def test_nothing_is_sent_when_nothing_changed() -> None:
    world = World(5, populate=False)
    game = Game(world, Store(":memory:"))
    welcome, _ = game.join("solo", None, None, object())
    first = game.step()
    assert isinstance(first[welcome.id][-1], Snapshot)
    for _ in range(30):
        game.step()
    quiet = [game.step() for _ in range(50)]
    # Only the food bar moves while a player stands still (seed 001 hunger
    # every 5-15 rounds); nothing else may be sent.
    sent = [msg for out in quiet for msg in out.get(welcome.id, [])]
    assert all(
        isinstance(m, Delta)
        and m.me is not None
        and set(m.me) == {"food"}
        and m.ev is None
        and m.add is None
        and m.upd is None
        and m.mv is None
        and m.st is None
        and m.tiles is None
        for m in sent
    )
    assert len(sent) <= 50 // (5 * 3) + 1


def test_snapshot_fov_matches_the_world() -> None:
    world = World(9, populate=False)
    game = Game(world, Store(":memory:"))
    welcome, _ = game.join("solo", None, None, object())
    snap = game.step()[welcome.id][-1]
    assert isinstance(snap, Snapshot)
    actor = world.actors[welcome.id]
    assert actor.fov is not None
    visible = unpack_fov(snap.fov, snap.w, snap.h)
    assert visible[actor.y, actor.x]
    assert visible.sum() == actor.fov.visible.sum()


def test_names_tokens_and_resume() -> None:
    store = Store(":memory:")
    game = Game(World(4, populate=False), store)
    welcome, _ = game.join("ann", None, "mage", "s1")
    token = welcome.token
    assert token and not welcome.resumed
    for bad in (None, "wrong"):
        try:
            game.join("ann", bad, None, "s2")
        except GameError as exc:
            assert exc.code == "name_taken"
        else:
            raise AssertionError("joined without the token")
    again, replaced = game.join("ann", token, None, "s3")
    assert again.id == welcome.id and again.resumed and replaced == "s1"
    game.leave(welcome.id, "s1")  # the old connection ending must not unseat the new one
    assert welcome.id in game.seats
    game.world.actors[welcome.id].hp = 3
    game.leave(welcome.id, "s3")
    assert welcome.id not in game.world.actors
    back, _ = game.join("ann", token, None, "s4")
    assert back.resumed and game.world.actors[back.id].hp == 3
    assert game.world.actors[back.id].cls == "mage"
    try:
        game.join("newbie", None, "revenant", "s5")
    except GameError as exc:
        assert exc.code == "bad_class"
    else:
        raise AssertionError("the hidden class is not chosen at the door")


def test_connected_characters_are_saved_without_leaving() -> None:
    store = Store(":memory:")
    game = Game(World(6, populate=False), store)
    ids = [game.join(f"p{i}", None, None, object())[0].id for i in range(5)]
    for aid in ids:
        game.world.actors[aid].xp = 7
    for _ in range(game.save_every + CHECKPOINT_SPREAD_TICKS):
        game.step()
    assert game.saver.flush(10)
    for i in range(5):
        saved = store.load_player(f"p{i}")
        assert saved is not None and saved[1]["xp"] == 7


def test_replay_of_a_generated_world_is_identical() -> None:
    """A seed plus the same commands replays to the same events and messages."""

    def play() -> list[bytes]:
        game = Game(World(99), Store(":memory:"))
        rng = np.random.default_rng(5)
        ids = [game.join(f"p{i}", None, None, object())[0].id for i in range(3)]
        log: list[bytes] = []
        for tick in range(300):
            for aid in ids:
                if rng.random() < 0.5:
                    game.command(aid, tick, "move", MOVES[int(rng.integers(8))])
            if tick == 120:
                game.leave(ids[0], game.seats[ids[0]].session)
                ids.pop(0)
            for pid, msgs in sorted(game.step().items()):
                log += [pid.to_bytes(4, "big") + encode_server(m) for m in msgs]
        return log

    first, second = play(), play()
    assert len(first) > 300 and first == second


def test_players_are_coloured_by_class_and_the_hidden_class_stays_secret() -> None:
    game = Game(World(8, populate=False), Store(":memory:"))
    welcome, _ = game.join("ann", None, "mage", object())
    keys = [entry[0] for entry in welcome.kinds]  # protocol 5: a record's kind is a code
    assert welcome.kinds[keys.index("player.mage")][2:] == ["@", "blue"]
    hidden = [c.key for c in game.world.content.classes.values() if c.hidden]
    assert hidden and not any(h in str(welcome.kinds) for h in hidden)
    snap = game.step()[welcome.id][-1]
    assert isinstance(snap, Snapshot)
    assert [keys[r[1]] for r in snap.actors if r[0] == welcome.id] == ["player.mage"]
    secret = game.world.join("zed", hidden[0])
    delta = game.step()[welcome.id][-1]
    assert isinstance(delta, Delta)
    assert [keys[r[1]] for r in delta.add or [] if r[0] == secret.id] == ["player"]


def test_every_kind_code_names_its_entry_of_the_welcome_table() -> None:
    """Protocol 5: an actor record's kind is the index of the actor's entry in
    ``welcome.kinds``, for every monster kind and every class a player can show."""
    game = Game(World(8, populate=False), Store(":memory:"))
    welcome, _ = game.join("ann", None, "mage", object())
    content = game.world.content
    assert [entry[0] for entry in welcome.kinds] == kind_keys(content)
    assert len(set(kind_keys(content))) == len(welcome.kinds)
    ann = game.world.actors[welcome.id]
    actors = [ann]
    for i, cls in enumerate(content.classes):
        actors.append(game.world.join(f"c{i}", cls))
    for i, mdef in enumerate(content.monsters.values()):  # records only: not put in the world
        actors.append(new_monster(10_000 + i, mdef, ann.depth, 1, 1, Mind.WANDERING))
    seen = set()
    for actor in actors:
        record = actor_record(actor, ann.id, content)
        code = record[1]
        assert isinstance(code, int) and welcome.kinds[code][0] == wire_kind(actor, content)
        seen.add(code)
    assert len(seen) == len(welcome.kinds)  # every entry is some actor's


def test_refusals_travel_as_codes_of_the_welcome_table() -> None:
    """Protocol 6: ``welcome.reasons`` lists every refusal reason once, and a
    frame's ``rej`` is flat pairs, each code the index of its reason;
    protocol 10: each pair's first value is ``ack − seq`` with the frame's
    ``ack`` once applied (a delta's ``ack`` is the step from the last)."""
    game = Game(World(8, populate=False), Store(":memory:"))
    welcome, _ = game.join("ann", None, "warrior", object())
    assert welcome.reasons == [r.name.lower() for r in RejectReason]
    assert len(set(welcome.reasons)) == len(RejectReason)
    (snap,) = game.step()[welcome.id]
    assert isinstance(snap, Snapshot)
    ack = snap.ack
    refused: list[tuple[int, int, str]] = []
    for seq, command in enumerate(["up", "choose"]):  # depth 1 is sealed; no reward owed
        if command == "choose":
            game.command(welcome.id, seq, command, opt="health")
        else:
            game.command(welcome.id, seq, command)
        for _ in range(4):
            for msg in game.step().get(welcome.id, []):
                assert isinstance(msg, Delta)
                ack += msg.ack or 0
                rej = msg.rej or []
                assert len(rej) % 2 == 0 and all(type(v) is int for v in rej)
                refused += [
                    (rej[i], ack - rej[i], welcome.reasons[rej[i + 1]])
                    for i in range(0, len(rej), 2)
                ]
    assert refused == [(0, 0, "sealed"), (0, 1, "no_choice")]


def test_a_character_keeps_its_spells_skills_and_rewards_when_it_comes_back() -> None:
    game = Game(World(4, populate=False), Store(":memory:"))
    welcome, _ = game.join("zed", None, "mage", "s1")
    mage = game.world.actors[welcome.id]
    scroll = next(i.letter for i in mage.inventory if i.key == "scroll_of_spark")
    game.command(mage.id, 1, "read", item=scroll)
    for _ in range(4):
        game.step()
    assert "spark" in mage.known_spells
    mage.skills["attack"] = 25
    mage.choices_owed = 1
    mage.upgraded.add("spark")
    game.leave(mage.id, "s1")
    back, _ = game.join("zed", welcome.token, None, "s2")
    again = game.world.actors[back.id]
    assert again.known_spells == mage.known_spells and again.skills == {"attack": 25}
    assert again.choices_owed == 1 and again.upgraded == {"spark"}
    assert again.equipment["book"].key == "blank_spellbook"
    out = game.step()
    snap = next(m for m in out[back.id] if isinstance(m, Snapshot))
    assert [row[1] for row in snap.me["spells"]] == ["spark"]


def test_a_restart_finds_each_visited_level_as_it_was_left(tmp_path: Any) -> None:
    from server.content import Terrain
    from server.sim.items import Item

    db = tmp_path / "world.db"
    game = Game(World(11, populate=False), Store(db))
    welcome, _ = game.join("ann", None, "warrior", "s1")
    ann = game.world.actors[welcome.id]
    level = game.world.levels[1]
    wall = next(
        (x, y)
        for y in range(1, level.height - 1)
        for x in range(1, level.width - 1)
        if level.terrain_at(x, y) == Terrain.WALL
    )
    game.world.set_terrain(1, *wall, Terrain.FLOOR)  # as a digging ray leaves it
    game.world.drop_item(1, ann.x, ann.y, Item("dart", 3))
    game.save_all()
    game.store.close()

    again = Game(World(11, populate=False), Store(db))
    back, _ = again.join("ann", welcome.token, None, "s2")
    level = again.world.levels[1]
    assert level.terrain_at(*wall) == Terrain.FLOOR
    ann = again.world.actors[back.id]
    assert [(i.key, i.count) for i in level.items[(ann.x, ann.y)]] == [("dart", 3)]
    fresh = World(11, populate=False).level(1)
    assert fresh.terrain_at(*wall) == Terrain.WALL, "the seed alone would rebuild the wall"


def _collect(into: list[list[tuple[int, Any]]], batch: list[tuple[int, Any]]) -> None:
    into.append(list(batch))


def test_players_who_acted_get_their_message_first_and_the_messages_do_not_change() -> None:
    """Issue 10 (command to effect): ``Game.step(send=...)`` hands out the
    messages in batches of at most ``SEND_BATCH`` as they are built, the
    players whose command was carried out or refused this tick (an ``ack``
    or ``rej`` due) before the others; two games with the same seed and
    commands, one stepped each way, send the same bytes to every player."""
    games = []
    for _ in range(2):
        game = Game(World(21), Store(":memory:"))
        ids = seat_players(game, 2 * SEND_BATCH + 5, np.random.default_rng(3), scatter=False)
        games.append(game)
    plain, streamed = games
    rngs = [np.random.default_rng(5), np.random.default_rng(5)]
    seq = [0, 0]
    acted_first = acted_later = full = 0
    for tick in range(60):
        seq[0], _ = give_commands(plain, ids, rngs[0], tick, seq[0])
        seq[1], _ = give_commands(streamed, ids, rngs[1], tick, seq[1])
        out = plain.step()
        batches: list[list[tuple[int, Any]]] = []
        assert streamed.step(send=partial(_collect, batches)) == {}
        assert all(0 < len(b) <= SEND_BATCH for b in batches)
        sent = [pair for b in batches for pair in b]
        assert {aid: encode_server(m) for aid, m in sent} == {
            aid: encode_server(msgs[0]) for aid, msgs in out.items()
        }
        assert len(sent) == len(out) and all(len(msgs) == 1 for msgs in out.values())
        acting = [bool(m.rej or m.ack is not None) for _, m in sent if isinstance(m, Delta)]
        assert acting == sorted(acting, reverse=True), f"tick {tick}: an actor after an idler"
        full += sum(len(b) == SEND_BATCH for b in batches)
        acted_first += sum(acting)
        acted_later += len(acting) - sum(acting)
    assert acted_first > 1000 and acted_later > 1000  # both kinds were there to order
    assert full > 0  # batches were cut at SEND_BATCH


def _free_cell_in_view(game: Game, viewer: int, near: Any, dist: int) -> tuple[int, int]:
    """A free floor cell at Chebyshev distance ``dist`` from actor ``near``,
    in player ``viewer``'s field of view, off both of its axes if one is (so
    a sign error in either coordinate shows)."""
    world = game.world
    fov, level = world.actors[viewer].fov, world.level(near.depth)
    assert fov is not None
    cells = [
        (near.x + dx, near.y + dy)
        for dy in range(-dist, dist + 1)
        for dx in range(-dist, dist + 1)
        if max(abs(dx), abs(dy)) == dist
    ]
    free = [
        (x, y)
        for x, y in cells
        if level.in_bounds(x, y)
        and level.passable[y, x]
        and world.actor_at(near.depth, x, y) is None
        and fov.contains(x, y)
    ]
    assert free, f"no free cell {dist} from ({near.x}, {near.y}) in view"
    return min(free, key=lambda c: c[0] == near.x or c[1] == near.y)


def _ann_watching_bob() -> tuple[World, Game, Actor, Actor, GameModel]:
    """A fresh world with ann and bob by its entrance, and ann's client model
    after the snapshots and a quiet tick or two."""
    world = World(1)
    game = Game(world, Store(":memory:"))
    ann, _ = game.join("ann", None, "warrior", object())
    bob, _ = game.join("bob", None, "warrior", object())
    model = GameModel()
    model.apply(decode_server(encode_server(ann)))
    for _ in range(3):
        for m in game.step().get(ann.id, []):
            model.apply(decode_server(encode_server(m)))
    return world, game, world.actors[ann.id], world.actors[bob.id], model


def test_a_step_goes_in_st_a_longer_move_in_mv_and_a_hurt_step_in_upd() -> None:
    """Protocol 7: another player's one-cell step reaches a watcher as an
    ``st`` value (gap × 8 + direction), a move of more than one cell as an
    ``mv`` triple, and a step that also changed health as an ``upd`` row;
    the watcher's model follows all three."""
    world, game, ann, bob, model = _ann_watching_bob()

    def watch() -> Delta:
        msgs = game.step().get(ann.id, [])
        for m in msgs:
            model.apply(decode_server(encode_server(m)))
        assert len(msgs) == 1 and isinstance(msgs[0], Delta), msgs
        return msgs[0]

    b = world.actors[bob.id]
    assert bob.id in world.sees[ann.id]

    px, py = b.x, b.y
    x, y = _free_cell_in_view(game, ann.id, b, 1)
    world.move_actor(b, x, y)  # as a step would (a command waits out bob's delay)
    d = watch()
    assert [s for s in unpack_steps(d.st) if s[0] == bob.id] == [(bob.id, x - px, y - py)]
    assert bob.id not in [m[0] for m in unpack_moves(d.mv)] and not d.upd
    assert (model.actors[bob.id].x, model.actors[bob.id].y) == (x, y)

    x, y = _free_cell_in_view(game, ann.id, b, 3)
    world.move_actor(b, x, y)  # a blink, a knock-back
    d = watch()
    assert (bob.id, x, y) in unpack_moves(d.mv)
    assert bob.id not in [s[0] for s in unpack_steps(d.st)] and not d.upd
    assert (model.actors[bob.id].x, model.actors[bob.id].y) == (x, y)

    x, y = _free_cell_in_view(game, ann.id, b, 1)
    world.move_actor(b, x, y)
    b.hp -= 1
    d = watch()
    assert d.upd is not None and [r[:4] for r in d.upd if r[0] == bob.id] == [[bob.id, x, y, b.hp]]
    assert bob.id not in [s[0] for s in unpack_steps(d.st)]
    assert bob.id not in [m[0] for m in unpack_moves(d.mv)]
    assert (model.actors[bob.id].x, model.actors[bob.id].y, model.actors[bob.id].hp) == (
        x,
        y,
        b.hp,
    )


def _free_cell_out_of_view(game: Game, viewer: int, depth: int) -> tuple[int, int]:
    """A free floor cell on ``depth`` outside player ``viewer``'s field of view."""
    world = game.world
    fov, level = world.actors[viewer].fov, world.level(depth)
    assert fov is not None
    for y in range(level.height):
        for x in range(level.width):
            if (
                level.passable[y, x]
                and world.actor_at(depth, x, y) is None
                and not fov.contains(x, y)
            ):
                return x, y
    raise AssertionError("no free cell out of view")


def test_an_actor_comes_back_into_view_as_kept_or_whole_when_it_changed_or_was_gone_long() -> None:
    """Protocol 8: an actor that left a watcher's view and comes back with
    its health, flags and statuses unchanged since the watcher last got them
    comes ``back`` as ``[gap, x, y]``; one hurt since it left the view (also
    in the very tick it left: the client never got that health; also if
    healed again since), or gone longer than ``BACK_TICKS`` ticks, comes as
    a whole ``add`` record. The watcher's model ends each time with the
    actor where and as it is."""
    world, game, ann, bob, model = _ann_watching_bob()

    def tick() -> Delta | None:
        msgs = game.step().get(ann.id, [])
        for m in msgs:
            model.apply(decode_server(encode_server(m)))
        deltas = [m for m in msgs if isinstance(m, Delta)]
        assert deltas == msgs and len(deltas) <= 1, msgs
        return deltas[0] if deltas else None

    b = world.actors[bob.id]
    home = (b.x, b.y)

    def leave(hurt: int = 0) -> None:
        world.move_actor(b, *_free_cell_out_of_view(game, ann.id, b.depth))
        b.hp -= hurt
        d = tick()
        assert d is not None and bob.id in unpack_ids(d.rm)
        assert bob.id not in model.actors and bob.id in model.kept

    def come_back() -> Delta:
        world.move_actor(b, *home)
        d = tick()
        assert d is not None and bob.id in world.sees[ann.id]
        seen = model.actors[bob.id]
        assert (seen.name, seen.x, seen.y, seen.hp, seen.max_hp) == ("bob", *home, b.hp, b.max_hp)
        return d

    def came_back(d: Delta) -> bool:
        """Whether bob came back in ``back`` (else in ``add``, never both)."""
        backs = [m for m in unpack_moves(d.back) if m[0] == bob.id]
        adds = [r for r in d.add or [] if r[0] == bob.id]
        assert len(backs) + len(adds) == 1, d
        assert backs in ([], [(bob.id, *home)])
        return bool(backs)

    leave()
    for _ in range(5):
        tick()
    assert came_back(come_back())

    leave()
    b.hp -= 1  # hurt out of view
    assert not came_back(come_back())

    leave(hurt=1)  # hurt in the tick it left: the client kept its health before
    assert not came_back(come_back())

    leave()
    b.hp -= 1
    tick()
    b.hp += 1  # hurt and healed out of view: as the client kept it, but changed
    assert not came_back(come_back())

    b.hp = b.max_hp  # no regeneration while it waits out of view
    tick()
    leave()  # in the delta of tick T: back up to tick T + BACK_TICKS
    for _ in range(BACK_TICKS - 1):
        tick()
    assert came_back(come_back())

    leave()
    for _ in range(BACK_TICKS):
        tick()
    assert not came_back(come_back())


def test_a_delta_leaves_out_its_tick_when_it_follows_the_last_message() -> None:
    """Protocol 9: a delta for the tick right after the previous snapshot or
    delta has no ``tick``; after a tick with no message it has one. The
    watcher's model knows the tick after every message."""
    world = World(1)
    game = Game(world, Store(":memory:"))
    ann, _ = game.join("ann", None, "warrior", object())
    model = GameModel()
    model.apply(decode_server(encode_server(ann)))
    last = -1  # the tick of the last snap or delta
    implied = given = 0
    for t in range(40):
        if t % 10 < 5:  # now and then ann walks, in between nothing changes
            game.command(ann.id, t, "move", MOVES[t % len(MOVES)])
        for m in game.step().get(ann.id, []):
            model.apply(decode_server(encode_server(m)))
            assert model.tick == world.tick
            if isinstance(m, Delta) and m.tick is None:
                assert last == world.tick - 1
                implied += 1
            elif isinstance(m, Delta):
                assert m.tick == world.tick and last < world.tick - 1
                given += 1
            last = world.tick
    assert implied > 5 and given > 2
