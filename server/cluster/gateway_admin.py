"""The admin commands of a cluster gateway (``underhall gateway --admin-socket PATH``).

The channel and the commands of ``underhall serve`` (:class:`~server.net.admin.AdminServer`:
a Unix socket of mode 0600, the ``SO_PEERCRED`` check, one JSON object per
line each way, every action logged with ``event: "admin"`` and counted in
``underhall_admin_actions_total``, the fields checked by
:func:`~server.net.admin.verbs`), with :class:`GatewayOperator` making
them cluster-wide. A gateway holds connections and no game state, so what needs
the other gateways is asked of them over NATS (:meth:`Gateway.gather
<server.cluster.gateway.Gateway.gather>`: answers collected for at most
:data:`~server.cluster.gateway.GATHER_S` seconds), and what needs the
database goes to a worker (``P.admin``, :mod:`server.cluster.bans`).
Answers carry ``serve``'s fields, and these:

- ``gateways``: the ids of the gateways that answered in time (this one
  included), and ``silent``: gateways heard from lately that did not.

The commands:

- ``who``: this gateway's players as before (``players``: ``name``,
  ``actor``, ``worker``, ``epoch``, ``depth`` of the last snapshot sent,
  ``address``, ``state``; ``gateway``, the live ``workers``, ``draining``,
  the highest worker ``tick`` heard), and ``cluster``: one entry per
  gateway that answered, ``{"gateway", "players", "draining"}``, by id.
- ``kick`` ``name``: every gateway holds the name out for
  :data:`~server.game.bans.KICK_HOLD_S` seconds (``kicked``), and the one
  the player is on disconnects it as ``serve`` does (the fatal error
  ``kicked``, close code 1008). ``online`` says whether it was found on a
  gateway that answered, ``where`` on which.
- ``ban`` ``name`` [``reason``]: a worker adds it to the bans in PostgreSQL
  (where ``serve`` keeps them) and announces it; workers then refuse the
  name (``banned``, with the reason) and the gateway the player is on
  disconnects it (``banned``, close code 1008). ``online`` and ``where`` as
  for ``kick``.
- ``unban`` ``name``; ``bans``: as ``serve``'s, answered by a worker.
- ``broadcast`` ``text``: one notice to every player on every gateway (over
  the cluster's chat subject), as ``serve``'s broadcast looks to a client.
  The answer's ``players_here`` counts this gateway's players only.
- ``shutdown`` [``grace`` seconds]: :meth:`~server.cluster.gateway.Gateway.drain`.

- ``memory`` [``types`` N] [``sites`` N] [``garbage`` N]: this gateway's process only
  (:func:`~server.net.procmem.process_memory`) and ``players_here``; a
  gateway holds no game to take a census of.

``save`` is answered with an error: the workers save.

A ban, an unban or ``bans`` that no worker answers within
:data:`WORKER_ANSWER_S` seconds is answered with an error saying so.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sized
from typing import Protocol, TypeVar

from msgspec.structs import asdict
from nats.aio.client import Client as NatsClient
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeout

from server.cluster.bus import Subjects
from server.cluster.messages import (
    AdminReply,
    AdminRequest,
    Ban,
    Closed,
    Kick,
    ListBans,
    PlayerRow,
    Present,
    Unban,
    Who,
    decode,
    encode,
)
from server.cluster.messages import Answer as Reply
from server.game.bans import KICK_HOLD_S
from server.net.admin import AdminError, Answer, Counting
from server.net.procmem import process_memory

T = TypeVar("T")


class Cluster(Protocol):
    """What the admin commands use of :class:`~server.cluster.gateway.Gateway`."""

    id: str
    nc: NatsClient
    subjects: Subjects
    draining: bool
    tick: int

    @property
    def metrics(self) -> Counting: ...

    @property
    def players(self) -> Sized: ...

    def who_here(self) -> list[PlayerRow]: ...

    def live_workers(self) -> list[str]: ...

    def live_gateways(self) -> list[str]: ...

    async def gather(
        self, send: Callable[[str], Awaitable[T]], wait_s: float = ...
    ) -> tuple[T, dict[str, Reply]]: ...

    async def notice(self, text: str) -> None: ...

    def drain(self, grace_s: float | None = None) -> float: ...


WORKER_ANSWER_S = 8.0
"""Seconds a ban, an unban or ``bans`` waits for a worker's answer (a worker
opens a connection of its own to the database: up to 5 s)."""
NO_SAVE = "a gateway holds no game state: the workers save the characters they hold"


class GatewayOperator:
    """The admin commands' :class:`~server.net.admin.Operator` for ``gateway``:
    cluster-wide where the command's subject is."""

    def __init__(self, gateway: Cluster) -> None:
        self.gateway = gateway

    def count(self, cmd: str) -> None:
        self.gateway.metrics.count("admin_actions", cmd)

    def _heard(self, answers: dict[str, Reply]) -> Answer:
        """The ``gateways`` that answered and the ``silent`` ones."""
        return {
            "gateways": sorted(answers),
            "silent": [g for g in self.gateway.live_gateways() if g not in answers],
        }

    async def who(self) -> Answer:
        gw = self.gateway
        here = gw.who_here()
        _, answers = await gw.gather(
            lambda inbox: gw.nc.publish(gw.subjects.who, encode(Who()), reply=inbox)
        )
        answers[gw.id] = Present(gw.id, here, gw.draining)  # as it is now
        cluster = [
            {
                "gateway": g,
                "players": [asdict(row) for row in body.players],
                "draining": body.draining,
            }
            for g, body in sorted(answers.items())
            if isinstance(body, Present)
        ]
        return {
            "gateway": gw.id,
            "players": [asdict(row) for row in here],
            "workers": gw.live_workers(),
            "draining": gw.draining,
            "tick": gw.tick,
            "cluster": cluster,
            **self._heard(answers),
        }

    async def kick(self, name: str) -> Answer:
        gw = self.gateway
        _, answers = await gw.gather(
            lambda inbox: gw.nc.publish(gw.subjects.kick, encode(Kick(name)), reply=inbox)
        )
        where = _closed_on(answers)
        return {
            "name": name,
            "online": bool(where),
            "where": where,
            "hold_s": KICK_HOLD_S,
            **self._heard(answers),
        }

    async def _ask_worker(self, req: AdminRequest) -> AdminReply:
        """Send ``req`` to a worker on ``P.admin``; its answer if ``ok``.

        Raises:
            AdminError: No worker answered within :data:`WORKER_ANSWER_S`,
                none listens, or the worker refused (its text).
        """
        gw = self.gateway
        started = time.monotonic()
        try:
            reply = await gw.nc.request(gw.subjects.admin, encode(req), timeout=WORKER_ANSWER_S)
            answer = decode(reply.data, AdminReply)
        except NoRespondersError as exc:
            raise AdminError("no worker is running to carry it out (nobody listens)") from exc
        except NatsTimeout as exc:
            raise AdminError(
                f"no worker answered within {time.monotonic() - started:.0f} s: "
                "it may or may not have been done (ask again, or see 'bans')"
            ) from exc
        if not answer.ok:
            raise AdminError(answer.error)
        return answer

    async def ban(self, name: str, reason: str) -> Answer:
        gw = self.gateway
        _, answers = await gw.gather(lambda inbox: self._ask_worker(Ban(name, reason, inbox)))
        where = _closed_on(answers)
        return {"name": name, "online": bool(where), "where": where, **self._heard(answers)}

    async def unban(self, name: str) -> Answer:
        await self._ask_worker(Unban(name))
        return {"name": name}

    async def bans(self) -> Answer:
        answer = await self._ask_worker(ListBans())
        return {"bans": [asdict(row) for row in answer.bans]}

    async def broadcast(self, text: str) -> Answer:
        await self.gateway.notice(text)
        return {"players_here": len(self.gateway.players)}

    async def shutdown(self, grace: float | None) -> Answer:
        players = len(self.gateway.players)
        return {"grace_s": self.gateway.drain(grace), "players": players}

    async def save(self) -> Answer:
        raise AdminError(NO_SAVE)

    async def memory(self, types: int, sites: int, garbage: int) -> Answer:
        return {
            **process_memory(types, sites, garbage),
            "players_here": len(self.gateway.players),
        }


def _closed_on(answers: dict[str, Reply]) -> list[str]:
    """The gateways that closed a connection, by their answers."""
    return sorted(g for g, a in answers.items() if isinstance(a, Closed) and a.count)
