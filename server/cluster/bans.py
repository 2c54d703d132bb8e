"""Bans in a cluster: ``serve``'s ban list, kept where ``serve`` keeps it.

The list is the JSON document of :class:`~server.game.bans.BanList` under the
key ``"bans"`` of the ``meta`` table (:data:`~server.game.bans.META_KEY`),
so a database moved between ``underhall serve`` and a cluster keeps its
bans. Workers check it at every join (:meth:`ClusterBans.refusal`) from a
copy in memory, which they read again when a ``P.bans`` notice says the list
changed and every :data:`RELOAD_S` seconds in case a notice was missed.

A change (:meth:`ClusterBans.answer`, for a gateway's ``ban``/``unban``
request on ``P.admin``) is a read-modify-write of the one ``meta`` row in one
transaction, the row locked (``SELECT ... FOR UPDATE``), on a short-lived
connection of its own: the worker's :class:`~server.cluster.fence.Characters`
connection runs one autocommit statement at a time and must never hold a
transaction open (see that module). Two operators banning at once are so
serialised, and neither ban is lost.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TypeVar

import psycopg
from nats.aio.client import Client as NatsClient

from protocol.limits import MAX_CHAT
from server.cluster.bus import Subjects
from server.cluster.messages import (
    AdminReply,
    AdminRequest,
    Ban,
    BanNotice,
    BanRow,
    ListBans,
    encode,
)
from server.game.bans import META_KEY, BanList

log = logging.getLogger("underhall.worker")

RELOAD_S = 30.0
"""Seconds between two reads of the list by a worker (besides those a
``P.bans`` notice causes)."""
CONNECT_TIMEOUT_S = 5
"""Seconds to open the short-lived connection of a read or a change."""

T = TypeVar("T")


async def read_bans(db_url: str) -> BanList:
    """The bans saved in the ``postgresql://`` database at ``db_url``.

    Raises:
        psycopg.Error: The database cannot be read.
        ValueError: The saved document is not a list of bans.
    """
    async with await psycopg.AsyncConnection.connect(
        db_url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
    ) as conn:
        cur = await conn.execute("SELECT value FROM meta WHERE key = %s", (META_KEY,))
        row = await cur.fetchone()
    text = None if row is None else str(row[0])
    return BanList(lambda: text)


async def change_bans(db_url: str, change: Callable[[BanList], T]) -> T:
    """Apply ``change`` to the saved bans, in one transaction with the row locked.

    ``change`` gets the list as saved and may call its ``ban``/``unban``; what
    those write replaces the saved document before the transaction commits.
    A concurrent change waits for this one and then sees its result.

    Returns:
        What ``change`` returns.

    Raises:
        psycopg.Error: The database cannot be reached or written (nothing
            changed).
        ValueError: The saved document is not a list of bans (nothing changed).
    """
    written: list[str] = []
    async with (
        await psycopg.AsyncConnection.connect(db_url, connect_timeout=CONNECT_TIMEOUT_S) as conn,
        conn.transaction(),
    ):
        # The row must exist to be locked; a racing insert makes this wait.
        await conn.execute(
            "INSERT INTO meta (key, value) VALUES (%s, '[]') ON CONFLICT (key) DO NOTHING",
            (META_KEY,),
        )
        cur = await conn.execute("SELECT value FROM meta WHERE key = %s FOR UPDATE", (META_KEY,))
        row = await cur.fetchone()
        text = None if row is None else str(row[0])
        result = change(BanList(lambda: text, written.append))
        if not written:  # nothing changed: not even the empty row is kept
            raise psycopg.Rollback()
        await conn.execute("UPDATE meta SET value = %s WHERE key = %s", (written[-1], META_KEY))
    return result


class ClusterBans:
    """A worker's copy of the cluster's bans, and its answers to operators.

    Args:
        db_url: The ``postgresql://`` database.
        nc: The worker's NATS connection (for the ``P.bans`` notices).
        subjects: The cluster's subjects.
    """

    def __init__(self, db_url: str, nc: NatsClient, subjects: Subjects) -> None:
        self.db_url = db_url
        self.nc = nc
        self.subjects = subjects
        self.list = BanList()
        self._reading = False
        self._again = False
        self._tasks: set[asyncio.Task[None]] = set()

    def refusal(self, name: str) -> tuple[str, str] | None:
        """Why ``name`` may not join: ``("banned", "'name' is banned: reason")``
        as ``serve`` says it, or None."""
        return self.list.refusal(name)

    async def load(self) -> None:
        """Read the list now (at start).

        Raises:
            psycopg.Error: The database cannot be read.
            ValueError: The saved document is not a list of bans.
        """
        self.list = await read_bans(self.db_url)

    async def refresh(self) -> None:
        """Read the list again; keep the old one (and log why) if that fails.

        Calls made while a read is under way make it read once more when it
        ends, so the last read always starts after the last notice heard.
        """
        if self._reading:
            self._again = True
            return
        self._reading = True
        try:
            self._again = True
            while self._again:
                self._again = False
                try:
                    self.list = await read_bans(self.db_url)
                except (psycopg.Error, ValueError, OSError) as exc:
                    log.error("reading the bans failed (the old list stays): %s", exc)
                    return
        finally:
            self._reading = False

    async def keep_fresh(self) -> None:
        """Read the list every :data:`RELOAD_S` seconds, for ever."""
        while True:
            await asyncio.sleep(RELOAD_S)
            await self.refresh()

    def heard(self, notice: BanNotice) -> asyncio.Task[None]:
        """A ``P.bans`` notice (:class:`~server.cluster.messages.Ban` or
        :class:`~server.cluster.messages.Unban`).

        The change is applied to the copy at once (a reconnect of a banned
        player must not slip in before the read), then the list is read
        again from the database, which is what counts.

        Returns:
            The task of that read.
        """
        if isinstance(notice, Ban):
            self.list.ban(notice.name, notice.reason)
        else:
            self.list.unban(notice.name)
        task = asyncio.ensure_future(self.refresh())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def answer(self, req: AdminRequest) -> AdminReply:
        """Carry out a gateway's request on ``P.admin``.

        A ban or an unban is written (:func:`change_bans`), then announced on
        ``P.bans`` (a ban's notice carries the requester's ``inbox`` as its
        reply subject: each gateway answers there with
        :class:`~server.cluster.messages.Closed`).

        Returns:
            ``ok`` with ``name`` for a ban or an unban, or ``bans`` (as
            ``serve`` lists them) for :class:`~server.cluster.messages.ListBans`;
            or not ``ok`` and the ``error``. Never raises.
        """
        try:
            if isinstance(req, ListBans):
                self.list = await read_bans(self.db_url)
                return AdminReply(ok=True, bans=_listed(self.list))
            name = req.name
            if not 1 <= len(name) <= 64:
                return AdminReply(ok=False, error='this command needs a "name"')
            if isinstance(req, Ban):
                reason = req.reason
                if len(reason) > MAX_CHAT:
                    error = f"reason must be text of at most {MAX_CHAT} characters"
                    return AdminReply(ok=False, error=error)
                await change_bans(self.db_url, lambda bans: bans.ban(name, reason))
                notice = Ban(name, reason)
                self.heard(notice)
                await self.nc.publish(self.subjects.bans, encode(notice), reply=req.inbox)
            else:
                if not await change_bans(self.db_url, lambda bans: bans.unban(name)):
                    return AdminReply(ok=False, error=f"{name!r} is not banned")
                self.heard(req)
                await self.nc.publish(self.subjects.bans, encode(req))
            await self.nc.flush(timeout=2)
            return AdminReply(ok=True, name=name)
        except Exception as exc:
            log.exception("admin %r failed", req)
            return AdminReply(ok=False, error=f"{type(req).__name__.lower()} failed: {exc}")


def _listed(bans: BanList) -> list[BanRow]:
    return [BanRow(b.name, b.reason, b.at) for b in bans.bans()]
