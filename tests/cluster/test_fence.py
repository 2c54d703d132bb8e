"""Epoch-fenced character saves against a real PostgreSQL database."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from server.cluster.fence import Characters
from server.store import hash_token, open_store
from tests.pgdb import empty_pg


@pytest.fixture
async def chars(request: pytest.FixtureRequest) -> AsyncIterator[Characters]:
    url = empty_pg(request.getfixturevalue("pg_database"))
    open_store(url, lock=False).close()  # apply the migrations
    db = await Characters.connect(url)
    try:
        yield db
    finally:
        await db.close()


def _record(depth: int, hp: int = 10) -> dict[str, Any]:
    return {"name": "Ann", "depth": depth, "x": 3, "y": 4, "hp": hp}


async def test_create_is_held_at_epoch_one_and_refuses_a_second_of_the_name(
    chars: Characters,
) -> None:
    aid = await chars.new_actor_id()
    assert await chars.create("Ann", hash_token("t"), _record(1), 0, aid)
    assert not await chars.create("ANN", hash_token("u"), _record(1), 0, aid + 1)
    row = await chars.load("aNn")
    assert row is not None
    assert (row.name, row.epoch, row.actor_id, row.record["depth"]) == ("Ann", 1, aid, 1)


async def test_a_stale_workers_save_is_refused(chars: Characters) -> None:
    await chars.create("Ann", hash_token("t"), _record(1), 0, await chars.new_actor_id())
    # Worker A holds Ann at epoch 1; worker B takes charge (a reconnect elsewhere).
    taken = await chars.take_charge("Ann", 1)
    assert taken is not None and taken.epoch == 2
    assert await chars.save([("Ann", 1, _record(1, hp=1), 50)]) == {"Ann"}
    row = await chars.load("Ann")
    assert row is not None and row.record["hp"] == 10 and row.epoch == 2
    assert await chars.save([("Ann", 2, _record(1, hp=7), 60)]) == set()
    row = await chars.load("Ann")
    assert row is not None and row.record["hp"] == 7
    # A taking charge from the epoch it once read is refused too.
    assert await chars.take_charge("Ann", 1) is None


async def test_hand_off_moves_the_epoch_and_fences_the_sender(chars: Characters) -> None:
    await chars.create("Ann", hash_token("t"), _record(1), 0, await chars.new_actor_id())
    assert await chars.hand_off("Ann", 1, _record(2), 10)
    assert not await chars.hand_off("Ann", 1, _record(3), 11)  # a retry of a stale sender
    assert await chars.save([("Ann", 1, _record(1), 12)]) == {"Ann"}
    row = await chars.load("Ann")
    assert row is not None and (row.epoch, row.record["depth"]) == (2, 2)


async def test_take_back_and_admission_cannot_both_win(chars: Characters) -> None:
    await chars.create("Ann", hash_token("t"), _record(1), 0, await chars.new_actor_id())
    assert await chars.hand_off("Ann", 1, _record(2), 10)  # epoch 2: the receiver's
    # The receiver admitted and saved under epoch 2; the sender's take-back is refused.
    assert await chars.save([("Ann", 2, _record(2, hp=9), 11)]) == set()
    assert await chars.take_back("Ann", 1, _record(1), 11) is False
    # Another hand-off where the sender takes back first: the receiver is fenced out.
    assert await chars.hand_off("Ann", 2, _record(3), 12)
    assert await chars.take_back("Ann", 3, _record(2, hp=8), 13)
    assert await chars.save([("Ann", 3, _record(3, hp=1), 13)]) == {"Ann"}
    row = await chars.load("Ann")
    assert row is not None and row.epoch == 4
    assert (row.record["depth"], row.record["hp"]) == (2, 8)


async def test_batch_save_refuses_only_the_stale_rows(chars: Characters) -> None:
    for n in ("Ann", "Bob", "Cy"):
        await chars.create(
            n, hash_token(n), {**_record(1), "name": n}, 0, await chars.new_actor_id()
        )
    await chars.take_charge("Bob", 1)
    refused = await chars.save(
        [(n, 1, {**_record(1, hp=3), "name": n}, 5) for n in ("Ann", "Bob", "Cy")]
    )
    assert refused == {"Bob"}
    rows = [await chars.load(n) for n in ("Ann", "Bob", "Cy")]
    assert [r.record["hp"] for r in rows if r is not None] == [3, 10, 3]


async def test_an_old_character_gets_a_lasting_actor_id(request: pytest.FixtureRequest) -> None:
    url = empty_pg(request.getfixturevalue("pg_database"))
    store = open_store(url, lock=False)
    store.save_players([("Old", hash_token("t"), _record(4), 3)])  # made by `serve`
    store.close()
    db = await Characters.connect(url)
    try:
        row = await db.load("old")
        assert row is not None and row.actor_id is None and row.epoch == 0
        taken = await db.take_charge("Old", 0)
        assert taken is not None and taken.actor_id is not None and taken.epoch == 1
        again = await db.take_charge("Old", 1)
        assert again is not None and again.actor_id == taken.actor_id
        token, saved = await db.claim_level(4)
        assert (token, saved) == (1, None)
        assert await db.save_levels([(4, token, {"shape": [1, 1]}, 3)]) == set()
        assert await db.load_level(4) == {"shape": [1, 1]}
        assert await db.load_level(5) is None
    finally:
        await db.close()


async def test_a_level_taken_over_refuses_its_former_holders_writes(chars: Characters) -> None:
    a_token, saved = await chars.claim_level(3)
    assert (a_token, saved) == (1, None)
    assert await chars.save_levels([(3, a_token, {"v": "a1"}, 10)]) == set()
    # Worker A stalls past its lease; B wins the lease and takes charge.
    b_token, saved = await chars.claim_level(3)
    assert b_token == a_token + 1 and saved == {"v": "a1"}
    # A's checkpoint, in flight when it stalled, lands now: refused, and only
    # for the level taken over.
    c_token, _ = await chars.claim_level(4)
    refused = await chars.save_levels([(3, a_token, {"v": "a2"}, 11), (4, c_token, {"v": "c"}, 11)])
    assert refused == {3}
    assert await chars.load_level(3) == {"v": "a1"}
    assert await chars.load_level(4) == {"v": "c"}
    assert await chars.save_levels([(3, b_token, {"v": "b1"}, 12)]) == set()
    assert await chars.load_level(3) == {"v": "b1"}


async def test_a_claim_racing_a_save_reads_every_write_it_does_not_refuse(
    chars: Characters,
) -> None:
    """Two connections, as two workers: A writes under its token while B
    takes charge. Whatever the interleaving, a write A was told landed is
    what B read, and a write B's claim came before is refused."""
    other = await Characters.connect(chars.url)
    workers = (chars, other)
    try:
        token, _ = await chars.claim_level(9)
        for round_ in range(60):
            # The holder of the last round writes; the other takes charge.
            holder, taker = workers[round_ % 2], workers[1 - round_ % 2]
            record = {"round": round_}
            refused, (new_token, read) = await asyncio.gather(
                holder.save_levels([(9, token, record, round_)]), taker.claim_level(9)
            )
            assert new_token == token + 1
            if refused:
                assert read != record and await taker.load_level(9) == read
            else:
                assert read == record
            # Its former holder's next write, whatever it is, is refused.
            assert await holder.save_levels([(9, token, {"late": 1}, round_)]) == {9}
            token = new_token
    finally:
        await other.close()
