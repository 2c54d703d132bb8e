"""The admin socket of a cluster gateway (``underhall gateway --admin-socket PATH``).

The channel of ``underhall serve`` (:class:`~server.net.admin.AdminSocket`:
a Unix socket of mode 0600, the ``SO_PEERCRED`` check, one JSON object per
line each way, every action logged with ``event: "admin"`` and counted in
``underhall_admin_actions_total``), with the commands that make sense for a
gateway, which holds connections and no game state:

- ``who``: the players connected through this gateway: ``name``, ``actor``
  (the lasting id), ``worker`` and ``epoch`` (its route), ``depth`` (of the
  last snapshot it was sent; None before one), ``address``, and ``state``
  (``playing``, ``moving`` during a hand-off, ``reseating`` after its worker
  was lost); and the ``gateway``'s id, the live ``workers``, ``draining``
  and the highest worker ``tick`` heard.
- ``kick`` ``name``: as ``serve``: the fatal error ``kicked``, close code
  1008, and the name refused by this gateway for
  :data:`~server.game.bans.KICK_HOLD_S` seconds.
- ``broadcast`` ``text``: one notice to every player on every gateway (over
  the cluster's chat subject), as ``serve``'s broadcast looks to a client.
  The answer's ``players_here`` counts this gateway's players only.
- ``shutdown`` [``grace`` seconds]: :meth:`~server.cluster.gateway.Gateway.drain`.

``ban``, ``unban``, ``bans`` and ``save`` are answered with an error saying
why they are not available on a gateway.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from server.net.admin import AdminError, AdminSocket, Answer, grace_field, name_field, text_field

if TYPE_CHECKING:
    from server.cluster.gateway import Gateway

NO_BANS = (
    "bans are not available on a gateway yet: they are cluster-wide state, "
    "to be kept in PostgreSQL (kick holds a name out of this gateway for a while)"
)
NO_SAVE = "a gateway holds no game state: the workers save the characters they hold"


class GatewayAdmin(AdminSocket):
    """Serve admin requests for ``gateway`` on the Unix socket ``path``.

    Use as an async context manager (see :class:`~server.net.admin.AdminSocket`).

    Raises (on entering):
        OSError: The path is in use by a running server, is not a socket, or
            cannot be bound (too long, no such directory, no permission).
    """

    def __init__(self, gateway: Gateway, path: Path) -> None:
        self.gateway = gateway
        super().__init__(
            path,
            {
                "who": self._who,
                "kick": self._kick,
                "broadcast": self._broadcast,
                "shutdown": self._shutdown,
                "ban": self._no_bans,
                "unban": self._no_bans,
                "bans": self._no_bans,
                "save": self._no_save,
            },
            count=lambda cmd: gateway.metrics.admin_actions.labels(cmd).inc(),
        )

    def _who(self, request: dict[str, Any]) -> Answer:
        gw = self.gateway
        players = [
            {
                "name": p.name,
                "actor": p.actor_id,
                "worker": p.worker,
                "epoch": p.epoch,
                "depth": p.depth,
                "address": p.address,
                "state": "reseating" if p.rejoining else "moving" if p.moving else "playing",
            }
            for p in sorted(gw.players.values(), key=lambda p: (p.name.lower(), p.actor_id))
        ]
        return {
            "gateway": gw.id,
            "players": players,
            "workers": gw.live_workers(),
            "draining": gw.draining,
            "tick": gw.tick,
        }

    def _kick(self, request: dict[str, Any]) -> Answer:
        name = name_field(request)
        if not self.gateway.kick(name):
            raise AdminError(f"nobody called {name!r} is playing through this gateway")
        return {"name": name}

    async def _broadcast(self, request: dict[str, Any]) -> Answer:
        text = text_field(request)
        await self.gateway.notice(text)
        return {"players_here": len(self.gateway.players)}

    def _shutdown(self, request: dict[str, Any]) -> Answer:
        grace = grace_field(request)
        players = len(self.gateway.players)
        return {"grace_s": self.gateway.drain(grace), "players": players}

    def _no_bans(self, request: dict[str, Any]) -> Answer:
        raise AdminError(NO_BANS)

    def _no_save(self, request: dict[str, Any]) -> Answer:
        raise AdminError(NO_SAVE)
