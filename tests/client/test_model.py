"""GameModel: snapshots and deltas applied in the protocol's order, and robustness."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from client.model import INFO_KEPT, ActorView, GameModel
from protocol.codec import decode_server, encode_server
from protocol.errors import ProtocolError
from protocol.fov import pack_fov, pack_level_fov
from protocol.messages import BACK_TICKS, ChatOut, Delta, Info, Pong, Reject, Snapshot, Welcome

TERRAIN = [
    ["rock", "rock", " ", "white", False, False],
    ["wall", "wall", "#", "white", False, False],
    ["floor", "floor", ".", "white", True, True],
    ["door", "closed door", "+", "yellow", False, False],
    ["open_door", "open door", "'", "yellow", True, True],
]
WELCOME = Welcome(
    v=2, id=7, name="ann", token="s3cret", resumed=False, tick=100, tick_rate=10,
    terrain=TERRAIN, kinds=[["player", "player", "@", "white"], ["rat", "giant rat", "r", "red"]],
    items={"potion": ["potion", "!", "magenta"]}, classes=[["warrior", "Warrior"]], motd="hi",
)  # fmt: skip

# A 5 x 3 level:  #####
#                 #..+.      (the player at (1, 1), a rat at (2, 1))
#                 #####      the last column unknown on row 0
LEVEL = np.array([[1, 1, 1, 1, 255], [1, 2, 2, 3, 2], [1, 1, 1, 1, 1]], dtype=np.uint8)
ME = {"name": "ann", "hp": 20, "max_hp": 20, "x": 1, "y": 1, "depth": 1, "dead": False, "inv": []}


def snapshot(**changes: Any) -> Snapshot:
    base = Snapshot(
        tick=101,
        depth=1,
        w=5,
        h=3,
        map=LEVEL.tobytes(),
        fov=pack_fov(np.ones((3, 4), dtype=bool), 0, 0),
        actors=[[7, 0, "ann", 1, 1, 20, 20, 8 | 16], [9, 1, "", 2, 1, 5, 5, 1]],
        objs=[2, 1, "potion"],
        me=dict(ME),
        ack=-1,
    )
    return replace(base, **changes)


def model() -> GameModel:
    m = GameModel(WELCOME)
    m.apply(snapshot())
    return m


def test_welcome() -> None:
    m = GameModel()
    assert m.apply(WELCOME) == []
    assert (m.player_id, m.name, m.token, m.tick, m.tick_rate) == (7, "ann", "s3cret", 100, 10)
    assert m.kinds["rat"][0] == "giant rat" and m.classes == [["warrior", "Warrior"]]
    assert m.position is None and m.known.shape == (0, 0) and m.passable().shape == (0, 0)
    assert m.log.maxlen == 200 and not m.log


def test_snapshot_replaces_state() -> None:
    m = model()
    assert (m.tick, m.depth, m.width, m.height, m.ack) == (101, 1, 5, 3, -1)
    assert np.array_equal(m.known, LEVEL) and m.known.dtype == np.uint8
    assert m.visible.shape == (3, 5) and m.visible[:, :4].all() and not m.visible[:, 4].any()
    assert set(m.actors) == {7, 9}
    me_view, rat = m.actors[7], m.actors[9]
    assert me_view.is_self and me_view.is_player and not me_view.asleep
    assert rat.asleep and not rat.is_player and not rat.hunting and not rat.fleeing
    assert m.names == {7: "ann", 9: "giant rat"}
    assert m.objs == {(2, 1): "potion"}
    assert m.position == (1, 1)
    assert m.passable().tolist() == [
        [False] * 5,
        [False, True, True, False, True],
        [False] * 5,
    ]
    # a second snapshot (new level) replaces everything but names
    m.apply(snapshot(depth=2, w=2, h=1, map=b"\x02\x02", fov=[0, 0, 0, 0, b""], actors=[],
                     objs=[], me={"x": 0, "y": 0}, ack=4))  # fmt: skip
    assert (m.depth, m.known.shape, m.actors, m.objs, m.ack) == (2, (1, 2), {}, {}, 4)
    assert m.me == {"x": 0, "y": 0} and m.names[9] == "giant rat"
    assert not m.visible.any()


def test_snapshot_does_not_alias_the_message() -> None:
    snap = snapshot()
    m = GameModel(WELCOME)
    m.apply(snap)
    m.known[1, 1] = 4
    m.me["hp"] = 1
    assert snap.map == LEVEL.tobytes() and snap.me["hp"] == 20


def test_delta_order_and_fields() -> None:
    m = model()
    events = m.apply(
        Delta(
            tick=102,
            ack=1,  # the step from the snapshot's -1 (protocol 10)
            tiles=[3, 1, 4, 4, 0, 1],  # door opened; a new wall seen
            fov=pack_fov(np.ones((3, 5), dtype=bool), 0, 0),
            rm=[9],  # the rat leaves view ...
            add=[
                [9, 1, "", 3, 1, 5, 5, 4],
                [11, 0, "bob", 4, 1, 9, 20, 16],
            ],  # ... and comes back
            upd=[[9, 4, 0, 3, 5, 6], [7, 2, 1, 18, 20, 24]],
            objs=[2, 1, "", 3, 1, "potion"],
            ev=[["atk", 9, 7, "hit", 2, False], "junk", [], [3], ["door", 7, 3, 1, True]],
            me={"hp": 18, "x": 2},
        )
    )
    assert events == [["atk", 9, 7, "hit", 2, False], ["door", 7, 3, 1, True]]
    assert m.tick == 102 and m.ack == 0
    assert m.known[1, 3] == 4 and m.known[0, 4] == 1
    assert m.visible.all()
    assert set(m.actors) == {7, 9, 11}
    assert (m.actors[9].x, m.actors[9].y, m.actors[9].hp, m.actors[9].flags) == (4, 0, 3, 6)
    assert m.actors[9].fleeing and m.actors[9].hunting
    assert m.names[11] == "bob"
    assert m.objs == {(3, 1): "potion"}
    assert m.me["hp"] == 18 and m.me["max_hp"] == 20 and m.position == (2, 1)
    assert m.passable()[1, 3]


def test_rm_then_add_of_the_same_id_keeps_it() -> None:
    m = model()
    m.apply(Delta(tick=102, rm=[9], add=[[9, 1, "", 3, 1, 5, 5, 0]]))
    assert m.actors[9].x == 3


def test_empty_delta_changes_only_tick() -> None:
    m = model()
    before = (m.known.copy(), dict(m.actors), dict(m.objs), dict(m.me), m.ack)
    assert m.apply(Delta(tick=150)) == []
    assert m.tick == 150
    assert np.array_equal(before[0], m.known)
    assert before[1:] == (m.actors, m.objs, m.me, m.ack)


def test_a_delta_without_tick_is_for_the_tick_after_the_last_ones() -> None:
    """Protocol 9: a delta leaves ``tick`` out when it is one more than the
    tick of the previous snap or delta; the model counts on."""
    m = model()  # the snap of tick 101
    m.apply(Delta(me={"hp": 19}))
    assert m.tick == 102 and m.me["hp"] == 19
    m.apply(Delta())
    m.apply(Delta(tick=110))  # a quiet stretch: the tick comes again
    m.apply(Delta(me={"hp": 18}))
    assert m.tick == 111
    wire = decode_server(encode_server(Delta(ack=3)))
    assert isinstance(wire, Delta) and wire.tick is None and wire.ack == 3


def test_a_deltas_ack_is_the_step_from_the_last_one() -> None:
    """Protocol 10: a snapshot's ``ack`` is whole, a delta's the step from
    the ack before it; a delta without one leaves it."""
    m = model()  # ack -1
    for step, whole in ((1, 0), (3, 3), (None, 3), (1, 4), (-2, 2)):
        m.apply(Delta(ack=step))
        assert m.ack == whole
    m.apply(Snapshot(tick=120, depth=1, w=1, h=1, map=b"\x01", fov=[0, 0, 0, 0, b""],
                     actors=[], objs=[], me={}, ack=40))  # fmt: skip
    assert m.ack == 40
    m.apply(Delta(ack=2))
    assert m.ack == 42


def test_other_messages_change_nothing() -> None:
    m = model()
    for msg in (Pong(1, 999), Reject(3, "blocked"), ChatOut("bob", "hi", 5)):
        assert m.apply(msg) == []
    assert m.tick == 101


def test_updates_for_unknown_or_bad_records_are_ignored() -> None:
    m = model()
    m.apply(
        Delta(
            tick=103,
            tiles=[99, 0, 2, 0, 99, 2, -1, 0, 2, 0, 0, 256, 0, 0, "x", 1.5, 0, 2, 0, 0],
            rm=[12345, "x", None],
            add=[[1, "rat"], "x", [True, 1, "", 0, 0, 1, 1, 0], None],
            upd=[[404, 1, 1, 1, 1, 0], [9, "x", 1, 1, 1, 0], [9], "junk"],
            objs=[0, 0, 5, 9, 9, "potion", 1],
            ev=None,
        )
    )
    assert np.array_equal(m.known, LEVEL)
    assert set(m.actors) == {7, 9} and m.actors[9].x == 2
    assert m.objs == {(2, 1): "potion", (9, 9): "potion"}


def test_position_falls_back_to_the_own_record() -> None:
    m = model()
    m.me = {}
    assert m.position == (1, 1)
    m.actors.clear()
    assert m.position is None


def test_bad_snapshot_map_is_refused() -> None:
    m = model()
    try:
        m.apply(snapshot(map=b"\x00"))
    except ProtocolError:
        pass
    else:
        raise AssertionError("a snapshot with a short map was accepted")
    assert m.known.shape == (3, 5)


def test_bad_fov_means_nothing_in_view() -> None:
    m = GameModel(WELCOME)
    m.apply(snapshot(fov=[0, 0, 9, 9, b""]))
    assert m.visible.shape == (3, 5) and not m.visible.any()


def test_actor_view_from_record() -> None:
    keys = ["player", "rat"]
    view = ActorView.from_record([1, 1, "", 0, 0, 1, 1, 0, "future"], keys)
    assert view is not None and view.kind == "rat" and view.sts == 0
    assert ActorView.from_record([1, 1, "", 0, 0, 1, 1], keys) is None
    assert ActorView.from_record((1, 1, "", 0, 0, 1, 1, 0), keys) is None
    # protocol 5: the kind is a code into welcome.kinds, not a key
    assert ActorView.from_record([1, "rat", "", 0, 0, 1, 1, 0], keys) is None
    assert ActorView.from_record([1, 2, "", 0, 0, 1, 1, 0], keys) is None
    assert ActorView.from_record([1, -1, "", 0, 0, 1, 1, 0], keys) is None


def test_welcome_with_odd_tables() -> None:
    odd = Welcome(2, 7, "ann", "t", False, 0, 0, [None, ["x"], ["y", "y", "y", "y", "yes"]],
                  [["rat"], None, ["newt", "newt", ":", "yellow"]], {}, [], "")  # fmt: skip
    m = GameModel(odd)
    assert m.tick_rate == 10  # a non-positive rate is ignored
    m.apply(snapshot(map=bytes([0, 1, 2, 3, 255] * 3),
                     actors=[[9, 0, "", 0, 0, 1, 1, 0], [10, 1, "", 1, 0, 1, 1, 0],
                             [11, 2, "", 2, 0, 1, 1, 0]]))  # fmt: skip
    assert not m.passable().any()
    assert m.names[9] == "rat"  # a key without name, glyph and colour shows the key
    assert 10 not in m.actors  # an entry without a key names nothing
    assert m.names[11] == "newt"  # the codes after a malformed entry stay right


# Anything decode_server accepts must apply without an exception.
junk = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 300) | st.text(max_size=3) | st.binary(max_size=3),
    lambda inner: st.lists(inner, max_size=9),
    max_leaves=12,
)
# near-valid actor records and flat triples hit the per-field checks
records = st.lists(
    st.sampled_from([9, 7, 0, 1, -1, 4, "rat", "", True, None, 1.5]), min_size=5, max_size=9
)
junk_lists = st.lists(junk | records, max_size=6) | records


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.builds(
        Delta,
        tick=st.none() | st.integers(0, 10**6),
        ack=st.none() | st.integers(-1, 10),
        tiles=st.none() | st.lists(st.integers(-2, 300), max_size=30),
        fov=st.none() | st.just(pack_level_fov(np.eye(3, 5, dtype=bool))),
        add=st.none() | junk_lists,
        upd=st.none() | junk_lists,
        mv=st.none() | junk_lists,
        st=st.none() | junk_lists,
        back=st.none() | junk_lists,
        rm=st.none() | junk_lists,
        objs=st.none() | junk_lists,
        ev=st.none() | junk_lists,
        me=st.none() | st.dictionaries(st.text(max_size=3), junk, max_size=3),
    )
)
def test_decodable_junk_never_crashes(delta: Delta) -> None:
    m = model()
    events = m.apply(decode_server(encode_server(delta)))
    assert all(isinstance(e, list) and isinstance(e[0], str) for e in events)
    assert m.known.shape == (3, 5) and m.visible.shape == (3, 5)
    m.passable()
    _ = m.position


# --- version 2 fields ----------------------------------------------------------

WELCOME_2 = replace(
    WELCOME,
    items={
        "dagger": ["dagger", ")", "cyan", "weapon", {"power": 4, "slot": "weapon", "range": 5}],
        "scroll_of_spark": ["scroll of spark", "?", "bright_yellow", "scroll", {"weight": 1}],
        "wand_of_fire": ["wand of fire", "/", "red", "wand", {}],
        "potion": ["potion", "!", "magenta"],  # a version-1 entry
    },
    spells={
        "spark": ["spark", 1, "evocation", "dir"],
        "fireball": ["fireball", 3, "fire", "cell"],
        "heal": ["heal wounds", 2, "healing", "self"],
        "odd": ["odd", "x", 3, "sideways"],
    },
    statuses=[["frozen", "frozen"], ["on_fire", "on fire"], ["poisoned", "poisoned"]],
    damage_types=["fire", "cold", 7],
)
ME_2 = {
    **ME,
    "inv": [["a", "dagger", 1, "weapon", -1, 4], ["b", "scroll_of_spark", 2, "", -1, 1],
            ["c", "wand_of_fire", 1, "", 5, 6], ["d", "potion", 3], ["e", 5, 1], "junk",
            ["f", "potion", 1, 3, -1, 0]],
    "sts": [[1, 4], [2, 9], [5], "x"],
    "food": [320, 45],
    "spells": [["a", "spark", 12.5, 5, False], ["b", "fireball", 40, 15, True],
               ["c", "heal", 0, 10, False], ["d", "odd", 5, 5, False], ["e", "bad", "x", 1, 0]],
    "resist": {"fire": 2, "cold": 0, "acid": -1, "x": "y"},
    "strength": 14,
    "choice": 1,
    "options": ["health", "resist_fire", 3],
}  # fmt: skip


def model_2() -> GameModel:
    m = GameModel(WELCOME_2)
    m.apply(snapshot(me=dict(ME_2),
                     actors=[[7, 0, "ann", 1, 1, 20, 20, 8 | 16, 0],
                             [9, 1, "", 2, 1, 5, 5, 1, 0b101]]))  # fmt: skip
    return m


def test_welcome_tables_of_version_2() -> None:
    m = model_2()
    assert m.spells["fireball"][3] == "cell" and m.damage_types == ["fire", "cold"]
    assert [m.status_name(c) for c in (0, 1, 2, 3, -1)] == [
        "frozen",
        "on fire",
        "poisoned",
        "status 3",
        "status -1",
    ]
    assert m.item_entry("dagger") == (
        "dagger",
        ")",
        "cyan",
        "weapon",
        {"power": 4, "slot": "weapon", "range": 5},
    )
    assert m.item_entry("potion") == ("potion", "!", "magenta", "", {})
    assert m.item_entry("mystery_box") == ("mystery box", "?", "white", "", {})
    assert m.spell_name("heal") == "heal wounds" and m.spell_name("no_such") == "no such"


def test_actor_statuses_from_records_and_updates() -> None:
    m = model_2()
    rat = m.actors[9]
    assert rat.sts == 0b101 and m.status_names(rat.sts) == ["frozen", "poisoned"]
    assert m.actors[7].sts == 0
    m.apply(Delta(tick=102, upd=[[9, 2, 1, 4, 5, 1, 0b10]]))
    assert m.status_names(m.actors[9].sts) == ["on fire"] and m.actors[9].hp == 4
    m.apply(Delta(tick=103, upd=[[9, 3, 1, 4, 5, 1]]))  # no sts: unchanged
    assert m.actors[9].sts == 0b10 and m.actors[9].x == 3
    m.apply(Delta(tick=104, upd=[[9, 3, 1, 4, 5, 1, "x"]], add=[[12, 1, "", 0, 0, 1, 1, 0, -2]]))
    assert m.actors[9].sts == 0b10 and m.actors[12].sts == 0


def test_mv_moves_actors_and_keeps_their_other_fields() -> None:
    m = model_2()
    rat = m.actors[9]
    hp, flags, sts = rat.hp, rat.flags, rat.sts
    me = m.actors[7]
    # protocol 5: ids as gaps, [gap, x, y, ...]: here 9, then 9 + 395 = 404
    m.apply(Delta(tick=102, mv=[9, 4, 1, 395, 0, 0]))
    assert (rat.x, rat.y) == (4, 1) and (rat.hp, rat.flags, rat.sts) == (hp, flags, sts)
    assert 404 not in m.actors  # unknown id: skipped
    m.apply(Delta(tick=103, mv=[7, 1, 1, 2, 6, 2, 0, 5, 5]))  # ids 7 and 9; a gap of 0 ends it
    assert (me.x, me.y) == (1, 1) and (rat.x, rat.y) == (6, 2)
    m.apply(
        Delta(tick=104, mv=[7, "x", 2, 2, 3, 3])
    )  # a malformed triple: the ids after it are unknown
    assert isinstance(me.x, int) and (me.x, me.y) == (1, 1) and (rat.x, rat.y) == (6, 2)
    m.apply(Delta(tick=105, mv=[9, 5, 2, 7, 1]))  # a partial triple at the end: skipped
    assert (rat.x, rat.y) == (5, 2) and (me.x, me.y) == (1, 1)


def test_st_steps_actors_one_cell_and_keeps_their_other_fields() -> None:
    """Protocol 7: ``st`` is ``[gap × 8 + direction, ...]``, each a step of
    one cell from where the actor was; a longer move comes in ``mv``."""
    m = model_2()
    rat, me = m.actors[9], m.actors[7]
    x, y, hp, flags, sts = rat.x, rat.y, rat.hp, rat.flags, rat.sts
    mx, my = me.x, me.y
    # 7 × 8 + 4: actor 7 south; 2 × 8 + 1: actor 9 north-east; 395 × 8: unknown 404
    m.apply(Delta(tick=102, st=[7 * 8 + 4, 2 * 8 + 1, 395 * 8]))
    assert (me.x, me.y) == (mx, my + 1) and (rat.x, rat.y) == (x + 1, y - 1)
    assert (rat.hp, rat.flags, rat.sts) == (hp, flags, sts) and 404 not in m.actors
    m.apply(Delta(tick=103, mv=[9, 0, 0], st=[7 * 8 + 6]))  # a jump and a step west
    assert (rat.x, rat.y) == (0, 0) and (me.x, me.y) == (mx - 1, my + 1)
    m.apply(Delta(tick=104, st=[9 * 8 + 2, 0, 9 * 8 + 2]))  # a gap of 0 ends the list
    assert (rat.x, rat.y) == (1, 0) and (me.x, me.y) == (mx - 1, my + 1)
    m.apply(Delta(tick=105, st=["x", 9 * 8 + 2]))  # malformed first: nothing moves
    assert (rat.x, rat.y) == (1, 0)


def test_back_brings_a_kept_actor_back_as_it_left_at_a_new_cell() -> None:
    """Protocol 8: an actor that ``rm`` took out of view is kept ``BACK_TICKS``
    ticks; ``back``, ``[gap, x, y, ...]`` with ids as in ``mv``, brings it
    back as it was but for its cell. An id not kept is skipped, a malformed
    triple ends the list, and a snapshot forgets every kept actor."""
    m = model_2()
    rat = m.actors[9]
    m.apply(Delta(tick=102, rm=[9]))
    assert 9 not in m.actors and m.kept[9] == (rat, 102)
    m.apply(Delta(tick=110, back=[9, 4, 2, 395, 1, 1]))  # 9, and 404 never kept
    assert m.actors[9] is rat and (rat.x, rat.y) == (4, 2) and 404 not in m.actors
    assert (rat.name, rat.hp, rat.max_hp, rat.flags, rat.sts) == ("", 5, 5, 1, 0b101)
    assert m.names[9] == "giant rat" and not m.kept

    m.apply(Delta(tick=111, rm=[9]))
    m.apply(Delta(tick=112, back=[0, 4, 2, 9, 3, 3]))  # a gap of 0 ends the list
    m.apply(Delta(tick=113, back=[9, "x", 2]))  # malformed: ends it too
    assert 9 not in m.actors and 9 in m.kept
    m.apply(Delta(tick=114, add=[[9, 1, "", 3, 1, 4, 5, 1, 0]]))  # came back hurt: whole
    assert m.actors[9].hp == 4 and not m.kept

    m.apply(Delta(tick=202, rm=[9]))  # kept until an rm finds it too old
    m.apply(Delta(tick=202 + BACK_TICKS, rm=[500]))  # (500: not in view)
    assert 9 in m.kept
    m.apply(Delta(tick=203 + 2 * BACK_TICKS, rm=[500]))
    assert 9 not in m.kept  # pruned every BACK_TICKS ticks: kept at most twice that
    m.apply(Delta(tick=204 + 2 * BACK_TICKS, rm=[7]))
    m.apply(snapshot(me=dict(ME_2), actors=[[7, 0, "ann", 1, 1, 20, 20, 8 | 16, 0]]))
    assert not m.kept and set(m.actors) == {7}


def test_rm_removes_actors_given_by_gaps() -> None:
    """Protocol 6: ``rm`` is ``[gap, ...]``, ids increasing from 0 by their gaps."""
    m = model_2()
    m.apply(Delta(tick=102, add=[[12, 1, "", 3, 1, 5, 5, 0, 0]]))
    assert set(m.actors) == {7, 9, 12}
    m.apply(Delta(tick=103, rm=[9, 3]))  # 9, then 9 + 3 = 12; 3 itself is not touched
    assert set(m.actors) == {7}
    m.apply(Delta(tick=104, add=[[9, 1, "", 2, 1, 5, 5, 0, 0], [12, 1, "", 3, 1, 5, 5, 0, 0]]))
    m.apply(Delta(tick=105, rm=[9, 0, 3]))  # a gap of 0 ends the list: 12 stays
    assert set(m.actors) == {7, 12}
    m.apply(Delta(tick=106, rm=[12, "x"]))  # a malformed gap after a good one
    assert set(m.actors) == {7}


def test_inventory_records() -> None:
    inv = model_2().inventory()
    assert [i.letter for i in inv] == ["a", "b", "c", "d"]
    dagger, scrolls, wand, potions = inv
    assert dagger.slot == "weapon" and dagger.identified and not dagger.cursed
    assert scrolls.count == 2 and scrolls.cursed and not scrolls.blessed
    assert wand.charges == 5 and wand.blessed and wand.identified
    assert (potions.slot, potions.charges, potions.flags) == ("", -1, 0)  # version-1 shape


def test_spells_statuses_food_resist_and_choice() -> None:
    m = model_2()
    spells = m.known_spells()
    assert [(s.letter, s.key, s.fail_pct, s.energy_cost, s.forgotten, s.aim) for s in spells] == [
        ("a", "spark", 12, 5, False, "dir"),
        ("b", "fireball", 40, 15, True, "cell"),
        ("c", "heal", 0, 10, False, "self"),
        ("d", "odd", 5, 5, False, "dir"),
    ]
    assert (spells[0].name, spells[0].level, spells[0].school) == ("spark", 1, "evocation")
    assert (spells[3].level, spells[3].school) == (0, "")  # malformed table row
    assert m.my_statuses() == [(1, 4), (2, 9)]
    assert m.food() == (320, 45)
    assert m.resistances() == {"fire": 2, "acid": -1}
    assert m.choice_options() == ["health", "resist_fire"]
    m.apply(Delta(tick=102, me={"choice": 0, "options": [], "food": [500, 200]}))
    assert m.choice_options() == [] and m.food() == (500, 200)
    assert m.me["strength"] == 14 and m.me["spells"] == ME_2["spells"]  # merged, not replaced


def test_missing_version_2_fields_read_as_empty() -> None:
    m = model()
    assert (m.inventory(), m.known_spells(), m.my_statuses(), m.food()) == ([], [], [], None)
    assert m.resistances() == {} and m.choice_options() == []
    m.apply(
        Delta(
            tick=102,
            me={
                "inv": "x",
                "spells": 3,
                "sts": {},
                "food": [1],
                "resist": [],
                "choice": 2,
                "options": "health",
            },
        )
    )
    assert (m.inventory(), m.known_spells(), m.my_statuses(), m.food()) == ([], [], [], None)
    assert m.resistances() == {} and m.choice_options() == []


def test_info_is_kept_for_the_look_screen() -> None:
    m = model_2()
    assert m.looked_at(9) is None
    about = {"name": "", "kind": "rat", "level": 2, "hp": 4, "max_hp": 5, "en": 1, "max_en": 3,
             "power": 3, "defence": 1, "courage": 0.3, "resist": {"fire": -1, "cold": 0},
             "abilities": ["regenerate", 5], "sts": [[2, 3], "x"], "you_miss": 0.1,
             "you_crit": 0.1, "it_miss": 0.45, "it_crit": 2.0}  # fmt: skip
    assert m.apply(Info(9, True, about)) == []
    seen = m.looked_at(9)
    assert seen is not None
    found, info = seen
    assert found and info.kind_name == "giant rat" and info.level == 2 and info.hp == 4
    assert info.courage == 0.3 and info.resist == {"fire": -1}
    assert info.abilities == ("regenerate",) and info.statuses == ((2, 3),)
    assert (info.you_miss, info.it_miss, info.it_crit) == (0.1, 0.45, None)
    m.apply(Info(9, False, {}))
    seen = m.looked_at(9)
    assert seen is not None and seen[0] is False and seen[1].courage is None
    for ident in range(100, 100 + INFO_KEPT):
        m.apply(Info(ident, False, {}))
    assert len(m.info) == INFO_KEPT and 9 not in m.info


def test_replaced_tiles_remember_the_old_terrain_for_one_delta() -> None:
    m = model_2()
    m.apply(Delta(tick=102, tiles=[3, 1, 2, 3, 1, 4]))
    assert m.replaced_tiles == {(3, 1): 3} and m.known[1, 3] == 4
    m.apply(Delta(tick=103))
    assert m.replaced_tiles == {}


ME_KEYS = ("inv", "sts", "food", "spells", "resist", "choice", "options", "x", "y")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    me=st.dictionaries(st.sampled_from(ME_KEYS), junk | junk_lists, max_size=6),
    about=st.dictionaries(
        st.sampled_from(
            [
                "name",
                "kind",
                "level",
                "courage",
                "resist",
                "abilities",
                "sts",
                "you_miss",
                "it_crit",
            ]
        ),
        junk | st.floats(allow_nan=False) | st.dictionaries(st.text(max_size=3), junk),
        max_size=6,
    ),
    upd=junk_lists,
)
def test_version_2_junk_never_crashes(
    me: dict[str, Any], about: dict[str, Any], upd: list[Any]
) -> None:
    m = model_2()
    m.apply(decode_server(encode_server(Delta(tick=200, me=me, upd=upd))))
    m.apply(decode_server(encode_server(Info(9, True, about))))
    m.inventory(), m.known_spells(), m.my_statuses(), m.food(), m.resistances()
    m.choice_options(), m.looked_at(9), m.position
    for view in m.actors.values():
        m.status_names(view.sts)
