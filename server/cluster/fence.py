"""Characters in PostgreSQL, saved under an epoch that fences stale workers out.

Every character row carries ``epoch`` (migration 3): the number of times a
worker has taken charge of it. A worker holds a character under the epoch it
read when it took charge, and every write it makes is conditional on that
epoch still being the row's (``UPDATE ... WHERE name = %s AND epoch = %s``).
Whoever takes charge next (an admission after a reconnect, a hand-off on the
stairs, a take-over after a worker died) moves the epoch on in the same
statement, so from then on the former holder's writes change no row: it
learns it is stale and drops the character without writing (the fencing
token of Kleppmann's "How to do distributed locking", with the database
itself checking the token).

Levels are fenced the same way: winning a level's lease in NATS is not
enough to write it, because a worker that stalled past its lease may still
have a checkpoint in flight. The new holder first moves the level's token on
in ``level_fences`` (migration 4, :meth:`Characters.claim_level`), and every
level write is conditional on the writer's token (:meth:`Characters.save_levels`).

Each character also keeps one actor id for life (``actor_id``, from the
sequence ``player_actor_ids``), so it has the same id on every worker and the
client's model, keyed on the ``welcome`` id, stays valid across hand-offs.

All calls are asynchronous (psycopg's ``AsyncConnection``), so a worker's
tick never waits on the database. Every call is one statement in autocommit
mode, never an explicit transaction: the worker's coroutines share the one
connection, and a statement of one of them run inside another's open
transaction would stay uncommitted (and invisible to the other workers) for
as long as that transaction lasts. Errors are :class:`psycopg.Error`; the
caller decides whether to retry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from server.store import pack_record, unpack_record

CONNECT_TIMEOUT_S = 5


@dataclass(frozen=True, slots=True)
class Character:
    """A character row: its name (as created), token hash, record, epoch and
    lasting actor id (None until a cluster worker first took charge)."""

    name: str
    token_hash: str
    record: dict[str, Any]
    epoch: int
    actor_id: int | None


_COLUMNS = "name, token_hash, record, epoch, actor_id"


Record = dict[str, Any] | bytes
"""A record to write: as a dict, or already packed with :func:`pack_record`
(a checkpoint's records, :class:`~server.game.host.Checkpoint`)."""


def _columns(rows: Sequence[tuple[Any, int, Record, int]]) -> tuple[list[Any], ...]:
    """Batch-write rows ``(key, token, record, tick)`` as four column lists
    (records packed), for one ``unnest`` statement."""
    return (
        [r[0] for r in rows],
        [r[1] for r in rows],
        [r[2] if isinstance(r[2], bytes) else pack_record(r[2]) for r in rows],
        [r[3] for r in rows],
    )


def _character(row: tuple[Any, ...] | None) -> Character | None:
    if row is None:
        return None
    name, token_hash, record, epoch, actor_id = row
    return Character(
        str(name),
        str(token_hash),
        unpack_record(bytes(record)),
        int(epoch),
        None if actor_id is None else int(actor_id),
    )


class Characters:
    """Fenced reads and writes of characters (and levels) in one database.

    Open with :meth:`connect`; the database's tables must exist already (open
    it once with :func:`server.store.open_store` to apply the migrations).

    Args:
        conn: An autocommit connection.
        url: Where it leads (to connect again after the database restarted).
    """

    def __init__(self, conn: psycopg.AsyncConnection[Any], url: str) -> None:
        self.conn = conn
        self.url = url

    @classmethod
    async def connect(cls, url: str) -> Characters:
        """Connect to the ``postgresql://`` database at ``url``.

        Raises:
            psycopg.Error: It cannot be reached.
        """
        conn = await psycopg.AsyncConnection.connect(
            url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
        )
        return cls(conn, url)

    async def close(self) -> None:
        """Close the connection."""
        await self.conn.close()

    async def _ensure(self) -> None:
        """Reopen the connection if it broke (the database restarted)."""
        if self.conn.broken or self.conn.closed:
            self.conn = await psycopg.AsyncConnection.connect(
                self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
            )

    async def load(self, name: str) -> Character | None:
        """The character called ``name`` (any case), or None."""
        await self._ensure()
        cur = await self.conn.execute(
            f"SELECT {_COLUMNS} FROM players WHERE lower(name) = lower(%s)", (name,)
        )
        return _character(await cur.fetchone())

    async def create(
        self, name: str, token_hash: str, record: dict[str, Any], tick: int, actor_id: int
    ) -> bool:
        """Insert a new character at epoch 1 (held by its creator); False if
        the name (any case) exists already (a racing creation won)."""
        await self._ensure()
        cur = await self.conn.execute(
            "INSERT INTO players (name, token_hash, record, saved_tick, epoch, actor_id) "
            "SELECT %s, %s, %s, %s, 1, %s WHERE NOT EXISTS "
            "(SELECT 1 FROM players WHERE lower(name) = lower(%s)) ON CONFLICT DO NOTHING",
            (name, token_hash, pack_record(record), tick, actor_id, name),
        )
        return cur.rowcount == 1

    async def new_actor_id(self) -> int:
        """A fresh lasting actor id from the sequence."""
        await self._ensure()
        cur = await self.conn.execute("SELECT nextval('player_actor_ids')")
        row = await cur.fetchone()
        assert row is not None
        return int(row[0])

    async def take_charge(self, name: str, epoch: int) -> Character | None:
        """Take charge of the character (exact ``name``) found at ``epoch``:
        move its epoch on by one (and give it a lasting actor id if it has
        none). Returns the row as it now is, or None when its epoch is no
        longer ``epoch`` (someone else took charge first)."""
        await self._ensure()
        cur = await self.conn.execute(
            "UPDATE players SET epoch = epoch + 1, "
            "actor_id = COALESCE(actor_id, nextval('player_actor_ids')) "
            f"WHERE name = %s AND epoch = %s RETURNING {_COLUMNS}",
            (name, epoch),
        )
        return _character(await cur.fetchone())

    async def save(self, rows: Sequence[tuple[str, int, Record, int]]) -> set[str]:
        """Write ``(name, epoch, record, tick)`` rows, each only where the
        row's epoch is still the one given, in one transaction (a record
        may come packed).

        Returns:
            The names whose write was refused (their epoch moved on: this
            worker is stale for them and must drop them without writing).
        """
        if not rows:
            return set()
        await self._ensure()
        cur = await self.conn.execute(
            "UPDATE players AS p SET record = v.record, saved_tick = v.tick "
            "FROM unnest(%s::text[], %s::bigint[], %s::bytea[], %s::bigint[]) "
            "AS v(name, epoch, record, tick) "
            "WHERE p.name = v.name AND p.epoch = v.epoch RETURNING p.name",
            _columns(rows),
        )
        saved = {str(r[0]) for r in await cur.fetchall()}
        return {r[0] for r in rows} - saved

    async def hand_off(self, name: str, epoch: int, record: dict[str, Any], tick: int) -> bool:
        """Save the character leaving this worker (its record already names
        the new depth) with epoch ``epoch + 1``, only if its epoch is still
        ``epoch``; False if it is not (this worker was stale)."""
        await self._ensure()
        cur = await self.conn.execute(
            "UPDATE players SET record = %s, saved_tick = %s, epoch = epoch + 1 "
            "WHERE name = %s AND epoch = %s",
            (pack_record(record), tick, name, epoch),
        )
        return cur.rowcount == 1

    async def take_back(self, name: str, epoch: int, record: dict[str, Any], tick: int) -> bool:
        """Move the epoch from ``epoch`` to ``epoch + 1`` and write ``record``
        (a hand-off whose admission kept failing: its sender keeps the
        character, back on its own level). False if the epoch is not
        ``epoch`` (the admission did happen after all)."""
        await self._ensure()
        cur = await self.conn.execute(
            "UPDATE players SET record = %s, saved_tick = %s, epoch = epoch + 1 "
            "WHERE name = %s AND epoch = %s",
            (pack_record(record), tick, name, epoch),
        )
        return cur.rowcount == 1

    async def claim_level(self, depth: int) -> tuple[int, dict[str, Any] | None]:
        """Take charge of level ``depth`` in the database, after winning its
        lease: move its fencing token on by one, then read its saved record.

        The token is bumped before the read, so once this returns no write
        made under an older token can land: what was read is the level's
        last state, and :meth:`save_levels` refuses the former holder.

        Returns:
            ``(token, record)``: the token to write under, and the saved
            record (None when the level was never saved).

        Raises:
            psycopg.Error: The database cannot be reached.
        """
        await self._ensure()
        cur = await self.conn.execute(
            "INSERT INTO level_fences (depth, fence) VALUES (%s, 1) "
            "ON CONFLICT (depth) DO UPDATE SET fence = level_fences.fence + 1 RETURNING fence",
            (depth,),
        )
        row = await cur.fetchone()
        assert row is not None
        return int(row[0]), await self.load_level(depth)

    async def save_levels(self, rows: Sequence[tuple[int, int, dict[str, Any], int]]) -> set[int]:
        """Write ``(depth, token, level record, tick)`` rows in one statement,
        each only where ``token`` is still the level's fencing token (from
        :meth:`claim_level`).

        The token rows are locked while the levels are written, so a claim
        racing this write either waits for it (and then reads it) or moved
        the token first (and the write is refused).

        Returns:
            The depths whose write was refused (another worker took charge of
            them: this one must stop serving them without writing).

        Raises:
            psycopg.Error: The database cannot be reached.
        """
        if not rows:
            return set()
        await self._ensure()
        cur = await self.conn.execute(
            "WITH v AS (SELECT * FROM unnest(%s::integer[], %s::bigint[], %s::bytea[], "
            "%s::bigint[]) AS v(depth, fence, record, tick)), "
            "ok AS (SELECT f.depth FROM level_fences f JOIN v "
            "ON f.depth = v.depth AND f.fence = v.fence FOR UPDATE OF f) "
            "INSERT INTO levels (depth, record, saved_tick) "
            "SELECT v.depth, v.record, v.tick FROM v JOIN ok ON ok.depth = v.depth "
            "ON CONFLICT (depth) DO UPDATE SET record = excluded.record, "
            "saved_tick = excluded.saved_tick RETURNING depth",
            _columns(rows),
        )
        saved = {int(r[0]) for r in await cur.fetchall()}
        return {r[0] for r in rows} - saved

    async def load_level(self, depth: int) -> dict[str, Any] | None:
        """The saved record of level ``depth``, or None."""
        await self._ensure()
        cur = await self.conn.execute("SELECT record FROM levels WHERE depth = %s", (depth,))
        row = await cur.fetchone()
        return None if row is None else unpack_record(bytes(row[0]))
