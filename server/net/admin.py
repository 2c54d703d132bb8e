"""Operator commands over a local Unix socket: who, kick, ban, broadcast, save, memory, ...

The socket is never the public port. It is created with mode 0600 (only the
server's own user may open it), and each connection's peer credentials are
checked as well where the system gives them (Linux ``SO_PEERCRED``): only
the server's own user, or root, is served.

The protocol is JSON lines: one request object per line, one answer object
per line, in order, as many as the client likes on one connection::

    {"cmd": "who"}
    {"ok": true, "players": [{"name": "alice", "actor": 7, "depth": 1, ...}]}
    {"cmd": "ban", "name": "mallory", "reason": "griefing"}
    {"ok": true, "name": "mallory", "online": true}
    {"cmd": "nope"}
    {"ok": false, "error": "unknown command 'nope' (known: ban, bans, ...)"}

:class:`AdminSocket` is that plumbing (listening, the peer check, the line
protocol, errors, logging, counting) with a command table. The commands
exist once, in :func:`verbs`, which checks each request's fields and hands
them to an :class:`Operator`: :class:`ServeOperator` for ``underhall
serve``, :class:`~server.cluster.gateway_admin.GatewayOperator` for a
cluster gateway (which makes them cluster-wide). :class:`AdminServer` is
the socket with those commands.

The commands and their keys: ``who``; ``kick`` ``name``; ``ban`` ``name``
[``reason``]; ``unban`` ``name``; ``bans``; ``broadcast`` ``text``;
``save``; ``shutdown`` [``grace`` seconds]; ``memory`` [``types`` N]
[``sites`` N] [``garbage`` N] (the process's resident memory, the game's
census of its maps and caches, the N most numerous object types, under
``PYTHONTRACEMALLOC=1`` the N allocation sites holding most memory, and
the N most numerous types of cyclic garbage, which it then frees; it
changes nothing else, and is not counted as an action). Every
action is logged at INFO with ``event: "admin"``, and counted in
``underhall_admin_actions_total``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import os
import socket
import stat
import struct
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, Self, TypeAlias

from websockets.asyncio.server import ServerConnection

from protocol.errors import ErrorCode
from protocol.limits import MAX_CHAT
from server.game.census import census
from server.game.game import Game
from server.net.front import client_of
from server.net.procmem import process_memory


class Connected(Protocol):
    """A seated client, as ``who`` reads it."""

    @property
    def ws(self) -> ServerConnection: ...


class Counting(Protocol):
    """The server's metrics, as the operator uses them."""

    def count(self, key: str, *labels: str, by: float = 1) -> None: ...


class Hosting(Protocol):
    """What :class:`ServeOperator` uses of :class:`~server.net.server.GameServer`."""

    game: Game
    draining: bool

    @property
    def clients(self) -> Mapping[int, Connected]: ...

    @property
    def metrics(self) -> Counting: ...

    def disconnect(self, name: str, code: str, text: str) -> bool: ...

    def notice(self, text: str) -> int: ...

    def drain(self, grace_s: float | None = None) -> float: ...


log = logging.getLogger("underhall.admin")

MAX_REQUEST_BYTES = 4096
"""Longest request line accepted; a longer one ends the connection."""
KICK_TEXT = "an operator disconnected you"
"""The text of the ``kicked`` error a kicked player gets."""


class AdminError(Exception):
    """A request that cannot be carried out; its text goes back to the client."""


Answer: TypeAlias = dict[str, Any]
Command: TypeAlias = Callable[[dict[str, Any]], Answer | Awaitable[Answer]]
"""One admin command: takes the request object, returns the answer's fields
(``"ok"`` is added), or an awaitable of them; raises :class:`AdminError` to
refuse with that text."""

QUESTIONS = frozenset({"who", "bans", "memory"})
"""Commands that change nothing: logged at DEBUG and not counted."""


class AdminSocket:
    """Serve admin requests on the Unix socket ``path`` with a command table.

    The plumbing every server shares: the private socket, the peer check,
    the JSON-lines protocol, error answers, logging (logger
    ``underhall.admin``, ``event: "admin"``) and counting.

    Use as an async context manager: the socket exists inside the block and
    is removed after.

    Args:
        path: Where the socket goes (at most 107 bytes on Linux).
        commands: Command name -> :data:`Command`.
        count: Called with the command's name after each action carried out
            (not after questions, nor refused requests): a metrics counter.

    Raises (on entering):
        OSError: The path is in use by a running server, is not a socket, or
            cannot be bound (too long, no such directory, no permission).
    """

    def __init__(
        self,
        path: Path,
        commands: Mapping[str, Command],
        count: Callable[[str], None] | None = None,
    ) -> None:
        self.path = Path(path)
        self._commands = dict(commands)
        self._count = count
        self._unix: asyncio.Server | None = None

    async def __aenter__(self) -> Self:
        sock = bind_private_socket(self.path)
        self._unix = await asyncio.start_unix_server(
            self._serve, sock=sock, limit=MAX_REQUEST_BYTES
        )
        log.info(
            "admin socket at %s", self.path, extra={"event": "admin_socket", "path": str(self.path)}
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._unix is not None:
            self._unix.close()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._unix.wait_closed(), 1.0)
        with contextlib.suppress(OSError):
            self.path.unlink()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        uid = peer_uid(writer.get_extra_info("socket"))
        try:
            if uid is not None and uid not in (os.geteuid(), 0):
                log.warning(
                    "admin socket: refused uid %d",
                    uid,
                    extra={"event": "admin_refused", "uid": uid},
                )
                await _write(writer, {"ok": False, "error": "not the server's user"})
                return
            while True:
                try:
                    line = await reader.readline()
                except ValueError:  # longer than MAX_REQUEST_BYTES
                    await _write(writer, {"ok": False, "error": "request too long"})
                    return
                if not line:
                    return
                await _write(writer, await self.handle(line, uid))
        except (ConnectionError, OSError):
            pass
        except asyncio.CancelledError:  # the server is closing with this client still on
            pass
        finally:
            writer.close()

    async def handle(self, line: bytes, uid: int | None = None) -> Answer:
        """Carry out one request line; return the answer (never raises).

        Args:
            line: One JSON object (``{"cmd": ..., ...}``), UTF-8.
            uid: The requesting user's id, for the log (None: unknown).
        """
        try:
            request = json.loads(line)
        except ValueError:
            return {"ok": False, "error": "a request is one JSON object per line"}
        if not isinstance(request, dict) or not isinstance(request.get("cmd"), str):
            return {"ok": False, "error": 'a request is an object with a string "cmd"'}
        cmd = request["cmd"]
        run = self._commands.get(cmd)
        if run is None:
            known = ", ".join(sorted(self._commands))
            return {"ok": False, "error": f"unknown command {cmd!r} (known: {known})"}
        try:
            answer = run(request)
            if inspect.isawaitable(answer):
                answer = await answer
        except AdminError as exc:
            return {"ok": False, "error": str(exc)}
        except Exception as exc:  # a failing save must not take the admin channel down
            log.exception("admin %s failed", cmd)
            return {"ok": False, "error": f"{cmd} failed: {exc}"}
        fields = {k: v for k, v in request.items() if k in ("name", "reason", "text", "grace")}
        said = " ".join([cmd, *(f"{k}={v!r}" for k, v in fields.items())])
        if "name" in fields:
            fields["player"] = fields.pop("name")
        extra = {"event": "admin", "action": cmd, "uid": uid, **fields}
        if cmd in QUESTIONS:
            log.debug("admin %s", said, extra=extra)
        else:
            if self._count is not None:
                self._count(cmd)
            log.info("admin %s", said, extra=extra)
        return {"ok": True, **answer}


class Operator(Protocol):
    """What the admin commands ask of a server: ``underhall serve``, or a
    cluster gateway for the whole cluster. Each returns the answer's fields
    (``"ok"`` is added) and raises :class:`AdminError` to refuse."""

    def count(self, cmd: str) -> None:
        """Count an action carried out (``underhall_admin_actions_total``)."""

    async def who(self) -> Answer:
        """``players`` (``name``, ``actor``, ``depth``, ``address``, ...), ``draining``, ``tick``."""

    async def kick(self, name: str) -> Answer:
        """Disconnect ``name`` (``kicked``) and hold it out for a minute."""

    async def ban(self, name: str, reason: str) -> Answer:
        """Ban ``name`` (kept across restarts) and disconnect it (``banned``)."""

    async def unban(self, name: str) -> Answer:
        """Lift the ban of ``name``."""

    async def bans(self) -> Answer:
        """``bans``: ``name``, ``reason``, ``at``."""

    async def broadcast(self, text: str) -> Answer:
        """Send every player a notice."""

    async def save(self) -> Answer:
        """Save every character and level now."""

    async def shutdown(self, grace: float | None) -> Answer:
        """Drain: warn the players, save, stop (``grace`` seconds of play, None: the default)."""

    async def memory(self, types: int, sites: int, garbage: int) -> Answer:
        """What the process holds: :func:`~server.net.procmem.process_memory`
        (``types`` object types, ``sites`` allocation sites, ``garbage``
        types of cyclic garbage, which are then freed; 0: none), and
        what a server with a game has in its maps and caches
        (:func:`~server.game.census.census`)."""


def verbs(op: Operator) -> dict[str, Command]:
    """The admin commands, each checking its request's fields and calling ``op``."""
    return {
        "who": lambda request: op.who(),
        "kick": lambda request: op.kick(name_field(request)),
        "ban": lambda request: op.ban(name_field(request), reason_field(request)),
        "unban": lambda request: op.unban(name_field(request)),
        "bans": lambda request: op.bans(),
        "broadcast": lambda request: op.broadcast(text_field(request)),
        "save": lambda request: op.save(),
        "shutdown": lambda request: op.shutdown(grace_field(request)),
        "memory": lambda request: op.memory(
            count_field(request, "types"),
            count_field(request, "sites"),
            count_field(request, "garbage"),
        ),
    }


class AdminServer(AdminSocket):
    """Serve the admin commands (:func:`verbs`) of ``operator`` on the Unix socket ``path``.

    Use as an async context manager (see :class:`AdminSocket`).

    Raises (on entering):
        OSError: The path is in use by a running server, is not a socket, or
            cannot be bound (too long, no such directory, no permission).
    """

    def __init__(self, operator: Operator, path: Path) -> None:
        super().__init__(path, verbs(operator), count=operator.count)


class ServeOperator:
    """The admin commands' :class:`Operator` for ``underhall serve``'s ``server``."""

    def __init__(self, server: Hosting) -> None:
        self.server = server

    def count(self, cmd: str) -> None:
        self.server.metrics.count("admin_actions", cmd)

    async def who(self) -> Answer:
        server = self.server
        game = server.game
        players = []
        for actor_id, seat in sorted(game.seats.items(), key=lambda item: item[1].name):
            actor = game.world.actors.get(actor_id)
            client = server.clients.get(actor_id)
            players.append(
                {
                    "name": seat.name,
                    "actor": actor_id,
                    "depth": None if actor is None else int(actor.depth),
                    "level": None if actor is None else int(actor.level),
                    "address": None if client is None else client_of(client.ws),
                }
            )
        return {"players": players, "draining": server.draining, "tick": game.world.tick}

    async def kick(self, name: str) -> Answer:
        if not self.server.disconnect(name, ErrorCode.KICKED.value, KICK_TEXT):
            raise AdminError(f"nobody called {name!r} is playing")
        self.server.game.bans.kick(name)
        return {"name": name}

    async def ban(self, name: str, reason: str) -> Answer:
        self.server.game.bans.ban(name, reason)
        online = self.server.disconnect(
            name, ErrorCode.BANNED.value, "banned" + (f": {reason}" if reason else "")
        )
        return {"name": name, "online": online}

    async def unban(self, name: str) -> Answer:
        if not self.server.game.bans.unban(name):
            raise AdminError(f"{name!r} is not banned")
        return {"name": name}

    async def bans(self) -> Answer:
        return {
            "bans": [
                {"name": b.name, "reason": b.reason, "at": b.at}
                for b in self.server.game.bans.bans()
            ]
        }

    async def broadcast(self, text: str) -> Answer:
        return {"players": self.server.notice(text)}

    async def save(self) -> Answer:
        started = time.perf_counter()
        self.server.game.save_all()
        return {
            "players": len(self.server.game.seats),
            "seconds": round(time.perf_counter() - started, 3),
        }

    async def shutdown(self, grace: float | None) -> Answer:
        given = self.server.drain(grace)
        return {"grace_s": given, "players": len(self.server.game.seats)}

    async def memory(self, types: int, sites: int, garbage: int) -> Answer:
        game = self.server.game
        return {
            **process_memory(types, sites, garbage),
            "clients": len(self.server.clients),
            **census(game, game.world),
        }


# ------------------------------------------------------------- request fields


def name_field(request: dict[str, Any]) -> str:
    """The request's ``name``.

    Raises:
        AdminError: Missing, not text, or not 1-64 characters.
    """
    name = request.get("name")
    if not isinstance(name, str) or not 1 <= len(name) <= 64:
        raise AdminError('this command needs a "name"')
    return name


def reason_field(request: dict[str, Any]) -> str:
    """The request's ``reason`` (``""`` when absent).

    Raises:
        AdminError: Not text, or longer than ``MAX_CHAT`` characters.
    """
    reason = request.get("reason") or ""
    if not isinstance(reason, str) or len(reason) > MAX_CHAT:
        raise AdminError(f"reason must be text of at most {MAX_CHAT} characters")
    return reason


def text_field(request: dict[str, Any]) -> str:
    """The request's ``text``: a notice for every player.

    Raises:
        AdminError: Missing, blank, longer than ``MAX_CHAT`` characters, or
            holding control characters.
    """
    text = request.get("text")
    if (
        not isinstance(text, str)
        or not text.strip()
        or len(text) > MAX_CHAT
        or any(ord(c) < 32 or 127 <= ord(c) < 160 for c in text)
    ):
        raise AdminError(f"text must be 1-{MAX_CHAT} characters without control characters")
    return text


def grace_field(request: dict[str, Any]) -> float | None:
    """The request's ``grace``, in seconds (None when absent).

    Raises:
        AdminError: Not a number from 0 to 3600.
    """
    grace = request.get("grace")
    if grace is None:
        return None
    if isinstance(grace, bool) or not isinstance(grace, int | float) or not 0 <= grace <= 3600:
        raise AdminError("grace must be a number of seconds, 0-3600")
    return float(grace)


MAX_COUNT = 1000
"""Most entries ``memory`` lists of object types or of allocation sites."""


def count_field(request: dict[str, Any], key: str) -> int:
    """The request's ``key``: how many entries to list (0 when absent).

    Raises:
        AdminError: Not a whole number from 0 to :data:`MAX_COUNT`.
    """
    value = request.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise AdminError(f"{key} must be a whole number, 0-{MAX_COUNT}")
    return value


async def _write(writer: asyncio.StreamWriter, answer: Answer) -> None:
    writer.write(json.dumps(answer).encode() + b"\n")
    await writer.drain()


def peer_uid(sock: socket.socket | None) -> int | None:
    """The user id of a Unix socket's peer (Linux ``SO_PEERCRED``), or None if unknown."""
    option = getattr(socket, "SO_PEERCRED", None)
    if sock is None or option is None:
        return None
    try:
        _pid, uid, _gid = struct.unpack(
            "3i", sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
        )
    except OSError:
        return None
    return int(uid)


def bind_private_socket(path: Path) -> socket.socket:
    """Bind a listening Unix socket at ``path`` that only this user can open (mode 0600).

    A leftover socket file nobody listens on is replaced.

    Raises:
        OSError: Another server listens there, the path is not a socket, or
            it cannot be bound.
    """
    path = Path(path)
    if path.exists() or path.is_symlink():
        if not stat.S_ISSOCK(path.lstat().st_mode):
            raise OSError(f"{path} exists and is not a socket")
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(str(path))
        except OSError:
            path.unlink()  # left by a server that did not stop cleanly
        else:
            raise OSError(f"{path} is in use by a running server")
        finally:
            probe.close()
    path.parent.mkdir(parents=True, exist_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # the file is never, even for a moment, open to others
    try:
        sock.bind(str(path))
    except OSError:
        sock.close()
        raise
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(16)
    sock.setblocking(False)
    return sock


def request(path: Path, req: dict[str, Any], timeout: float = 15.0) -> dict[str, Any]:
    """Send one request to the admin socket at ``path``; return its answer.

    Raises:
        OSError: No server listens there (or no permission).
        ValueError: The answer is not a JSON object.
    """
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(path))
        sock.sendall(json.dumps(req).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    answer: Any = json.loads(data)
    if isinstance(answer, dict):
        return answer
    raise ValueError("the admin answer is not a JSON object")
