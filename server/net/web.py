"""The browser's side of the game port: the web client's files, the lobby and
the ``Origin`` check (issue 47).

A :class:`WebSite` answers plain HTTP ``GET``s that are not websocket
upgrades: ``/`` (the page), the other static files of the web client (read
once, at start, from one directory: a path is a key of that table, so no
request can name a file outside it), and ``/lobby.json`` (the classes a new
character may take and who is playing). Every answer carries a strict
Content-Security-Policy: scripts and styles from the page's own origin only,
no inline script, websocket connections to the page's own host only.

:func:`origin_refused` judges a websocket upgrade by its ``Origin`` header:
a browser sends one, naming the page that opened the connection; it must be
the game port's own origin (the request's ``Host``, over ``http`` or
``https``) or one the operator allowed (``--allow-origin``). A request with
no ``Origin`` (the terminal client, the bots, any non-browser client) is not
judged.

:class:`HostRule` judges a browser's request by its ``Host`` header, against
DNS rebinding: a page of another site whose name the attacker points at
127.0.0.1 (or at a machine of the victim's network) is, to the browser, of
the same origin as that name's port, so the ``Origin`` check lets its
websocket in and nothing stops it from reading ``/lobby.json``; its ``Host``
header still names the attacker's domain. Allowed: an IP address, ``localhost``
and ``*.localhost`` (which browsers resolve to loopback themselves), this
machine's host name, the bind address when it is a name, the hosts of
``--allow-origin`` and those named with ``--allow-host`` (``*``: any).

Holds no game rule: the host supplies the lobby's rows (:class:`LobbyRow`).
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import re
import socket
import time
import urllib.parse
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from http import HTTPStatus
from pathlib import Path

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from protocol.recording import SUFFIX, RecordingError, inflate
from server.game.recordings import Shelves

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".json": "application/json",
    ".png": "image/png",
    ".svg": "image/svg+xml",
    ".ico": "image/x-icon",
}
"""File suffix -> Content-Type; files of other suffixes are not served."""

LOBBY_PATH = "/lobby.json"
RECORDINGS_PATH = "/recordings.json"
"""The list of recorded games (:meth:`WebSite.answer`)."""
RECORDINGS_PREFIX = "/recordings/"
"""A recorded game's file: ``/recordings/ID.uhrec`` or ``/recordings/NAME.uhrec``."""
INFLATED = ".msgpack"
"""The ending of a recording's path for its values uncompressed."""
RECORDINGS_LISTED = 50
"""Most recorded games ``/recordings.json`` lists, newest first."""
LOBBY_ROWS = 100
"""Most players listed in ``/lobby.json`` (highest level first); ``online`` counts all."""
LOBBY_CACHE_S = 1.0
"""Seconds one ``/lobby.json`` body is reused: polling browsers cost one listing a second."""

_HOST = re.compile(r"^[A-Za-z0-9.\-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$")
"""A ``Host`` header fit to be named in the policy: a name or IPv4 address, or
a bracketed IPv6 address, with an optional port."""
_ORIGIN = re.compile(r"^https?://([A-Za-z0-9.\-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?$")
_NAME = re.compile(r"^[a-z0-9_]([a-z0-9_\-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_\-]*[a-z0-9_])?)*$")
"""A host name as ``--allow-host`` takes it (lower-cased, no port)."""


@dataclass(frozen=True, slots=True)
class LobbyRow:
    """One player as the lobby lists it.

    Attributes:
        name: The character's name.
        cls: Its class key (``""`` for none).
        level: Its experience level.
        depth: The depth it is on.
        turns: Actions it has taken this session (commands sent).
    """

    name: str
    cls: str
    level: int
    depth: int
    turns: int


def lobby_order(level: int, depth: int, name: str) -> tuple[int, int, str]:
    """The lobby's sort key of a player at experience ``level`` on ``depth``
    named ``name``: highest level first, then deepest, then by name (any
    case). A cluster's workers cut their lists by it before the gateways
    merge them, so the merged first :data:`LOBBY_ROWS` are right."""
    return (-level, -depth, name.lower())


def parse_origins(text: str) -> tuple[str, ...]:
    """The origins of a comma-separated ``--allow-origin`` value, lower-cased.

    Raises:
        ValueError: An entry is not ``http://HOST[:PORT]`` or
            ``https://HOST[:PORT]`` (no path, no trailing slash), naming it.
    """
    out: list[str] = []
    for entry in text.split(","):
        origin = entry.strip().lower()
        if not origin:
            continue
        if not _ORIGIN.match(origin):
            raise ValueError(f"{entry.strip()!r} is not an origin such as https://example.org:8765")
        out.append(origin)
    return tuple(out)


def parse_hosts(text: str) -> tuple[str, ...]:
    """The host names of a comma-separated ``--allow-host`` value, lower-cased
    (``*``: any host).

    Raises:
        ValueError: An entry is not a host name or IP address (a scheme, a
            port or a path is not taken), naming it.
    """
    out: list[str] = []
    for entry in text.split(","):
        name = entry.strip().lower().rstrip(".")
        if not name:
            continue
        if name != "*" and not _NAME.match(name) and _ip(name) is None:
            raise ValueError(f"{entry.strip()!r} is not a host name such as dungeon.example.org")
        out.append(name)
    return tuple(out)


def _ip(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name.removeprefix("[").removesuffix("]"))
    except ValueError:
        return None


def host_name(header: str) -> str:
    """The host of a ``Host`` header, lower-cased, without its port or a
    final dot (``"[::1]"`` for a bracketed IPv6 address)."""
    host = header.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        return host[: end + 1] if end > 0 else host
    name, colon, port = host.rpartition(":")
    if colon and port.isdigit():
        host = name
    return host.rstrip(".")


@dataclass(frozen=True, slots=True)
class HostRule:
    """The ``Host`` header values a browser's request may carry (see the
    module's docstring: DNS rebinding).

    Attributes:
        names: Host names allowed besides IP addresses and ``localhost``.
        anything: Every host is allowed (``--allow-host '*'``).
    """

    names: frozenset[str]
    anything: bool = False

    @classmethod
    def of(cls, bind: str, origins: Iterable[str], hosts: Iterable[str]) -> HostRule:
        """The rule of a port bound to ``bind``, with the ``--allow-origin``
        origins ``origins`` (as :func:`parse_origins` gives them) and the
        ``--allow-host`` names ``hosts`` (as :func:`parse_hosts` gives them);
        this machine's host name is allowed too."""
        names = {host_name(o.split("://", 1)[-1]) for o in origins}
        names.update(hosts)
        names.add(host_name(bind))
        names.add(socket.gethostname().lower())
        return cls(frozenset(n for n in names if n), "*" in names)

    def refused(self, headers: Headers) -> str | None:
        """Why a request with these headers is refused, or None to answer
        it. A request without ``Host`` (not from a browser) is answered."""
        header = headers.get("Host")
        if header is None or self.anything:
            return None
        host = host_name(header)
        if host in self.names or host == "localhost" or host.endswith(".localhost"):
            return None
        if _ip(host) is not None:
            return None
        return (
            f"host {host[:100]!r} is not served here (the operator can allow it: --allow-host NAME)"
        )


def is_upgrade(headers: Headers) -> bool:
    """True when the request asks for a websocket."""
    return "websocket" in headers.get("Upgrade", "").lower()


def origin_refused(headers: Headers, allowed: Iterable[str]) -> str | None:
    """Why a websocket upgrade's ``Origin`` is refused, or None to let it in.

    No ``Origin`` (a client that is not a browser): let in. Otherwise the
    origin must be ``http://`` or ``https://`` plus the request's ``Host``
    (the page this server served), or one of ``allowed``.
    """
    origin = headers.get("Origin")
    if origin is None:
        return None
    origin = origin.strip().lower()
    host = headers.get("Host", "").strip().lower()
    if host and origin in (f"http://{host}", f"https://{host}"):
        return None
    if origin in allowed:
        return None
    return f"origin {origin[:100]!r} may not open a game connection here"


def security_headers(host: str) -> dict[str, str]:
    """The headers of every web answer; ``host`` is the request's ``Host``,
    named in ``connect-src`` when it is a plain host (else only ``'self'``)."""
    connect = "'self'"
    if _HOST.match(host):
        connect += f" ws://{host} wss://{host}"
    policy = (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        f"connect-src {connect}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
    return {
        "Content-Security-Policy": policy,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "X-Frame-Options": "DENY",
        "Cross-Origin-Opener-Policy": "same-origin",
    }


def respond(
    conn: ServerConnection,
    status: HTTPStatus,
    content_type: str,
    body: bytes,
    headers: dict[str, str],
    cache: str = "no-cache",
) -> Response:
    """A plain HTTP answer to a handshake: ``body`` as ``content_type`` with ``headers``."""
    response = conn.respond(status, "")
    response.body = body
    for key in ("Content-Type", "Content-Length"):
        del response.headers[key]
    response.headers["Content-Type"] = content_type
    if status is not HTTPStatus.NOT_MODIFIED:  # a 304 has no body of its own to measure
        response.headers["Content-Length"] = str(len(body))
    response.headers["Cache-Control"] = cache
    for key, value in headers.items():
        response.headers[key] = value
    return response


class WebSite:
    """The web client's files and the lobby.

    Args:
        root: The directory of the client's static files (``index.html`` is
            answered at ``/``). Read once, here: later changes are not seen.
        classes: ``[key, name]`` of the classes a new character may take.

    Raises:
        OSError: ``root`` cannot be read.
    """

    def __init__(self, root: Path, classes: Iterable[tuple[str, str]]) -> None:
        self.files: dict[str, tuple[bytes, str, str]] = {}
        """URL path -> (body, content type, entity tag)."""
        for path in sorted(root.rglob("*")):
            kind = CONTENT_TYPES.get(path.suffix)
            if kind is None or not path.is_file():
                continue
            body = path.read_bytes()
            tag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
            self.files["/" + path.relative_to(root).as_posix()] = (body, kind, tag)
        if "/index.html" in self.files:
            self.files["/"] = self.files["/index.html"]
        self.classes = [[key, name] for key, name in classes]
        self._lobby: tuple[float, bytes] | None = None
        self._listed: tuple[float, bytes] | None = None
        self.recordings: Shelves | None = None
        """The server's recorded games, answered at ``/recordings.json`` and
        ``/recordings/…`` (set by the composition root; None: 404)."""

    def answer(
        self,
        conn: ServerConnection,
        request: Request,
        players: Callable[[], tuple[int, list[LobbyRow]] | None],
    ) -> Response | None:
        """The answer to a ``GET`` that is not a websocket upgrade, or None
        (an upgrade: the caller decides). Files carry an entity tag and are
        revalidated on each load (``no-cache``): a matching
        ``If-None-Match`` gets 304 and no body.

        ``players`` gives the players online and the rows to list (None
        where this server cannot list them).
        """
        if is_upgrade(request.headers):
            return None
        path = request.path.split("?", 1)[0]
        headers = security_headers(request.headers.get("Host", ""))
        if path == LOBBY_PATH:
            return respond(
                conn, HTTPStatus.OK, "application/json", self.lobby(players), headers, "no-store"
            )
        if path == RECORDINGS_PATH or path.startswith(RECORDINGS_PREFIX):
            return self._recording(conn, path, headers)
        found = self.files.get(path)
        if found is None:
            return respond(
                conn, HTTPStatus.NOT_FOUND, CONTENT_TYPES[".txt"], b"not found\n", headers
            )
        body, kind, tag = found
        headers["ETag"] = tag
        if request.headers.get("If-None-Match") == tag:  # the browser's copy is current
            return respond(conn, HTTPStatus.NOT_MODIFIED, kind, b"", headers)
        return respond(conn, HTTPStatus.OK, kind, body, headers)

    def _recording(self, conn: ServerConnection, path: str, headers: dict[str, str]) -> Response:
        """``/recordings.json``: the newest :data:`RECORDINGS_LISTED` recorded
        games (``id``, ``name``, ``started`` in Unix seconds, ``bytes``);
        ``/recordings/ID.uhrec`` or ``/recordings/NAME.uhrec`` (that player's
        newest): the file, to download (``protocol/recording.py``'s format);
        ``/recordings/ID.msgpack``: its msgpack values uncompressed, for the
        browser client's replay.
        404 when there are none or no such recording."""
        shelf = self.recordings
        text = CONTENT_TYPES[".txt"]
        if shelf is None:
            return respond(conn, HTTPStatus.NOT_FOUND, text, b"no recordings here\n", headers)
        if path == RECORDINGS_PATH:
            now = time.monotonic()
            if self._listed is None or now - self._listed[0] >= LOBBY_CACHE_S:
                listed = [
                    {"id": r.id, "name": r.name, "started": r.started, "bytes": r.size}
                    for r in shelf.recordings()[:RECORDINGS_LISTED]
                ]
                body = json.dumps({"recordings": listed}, separators=(",", ":")).encode()
                self._listed = (now, body)  # one directory scan a second at most
            body = self._listed[1]
            return respond(conn, HTTPStatus.OK, "application/json", body, headers, "no-store")
        what = urllib.parse.unquote(path[len(RECORDINGS_PREFIX) :])
        inflated = what.endswith(INFLATED)
        what = what.removesuffix(SUFFIX).removesuffix(INFLATED)
        try:
            info = shelf.find(what)
            body = shelf.read(info.id)
        except RecordingError:
            return respond(conn, HTTPStatus.NOT_FOUND, text, b"no such recording\n", headers)
        if inflated:  # for a browser: its gzip reader stops at the first member
            body = inflate(body)[0]
        else:
            headers["Content-Disposition"] = f'attachment; filename="{info.id}{SUFFIX}"'
        return respond(conn, HTTPStatus.OK, "application/octet-stream", body, headers, "no-store")

    def lobby(self, players: Callable[[], tuple[int, list[LobbyRow]] | None]) -> bytes:
        """The body of ``/lobby.json``: ``classes`` (``[key, name]``),
        ``online`` (players in the game: ``serve``'s, or a cluster's as its
        workers last reported them to the gateway; null where this server
        cannot count them) and ``players`` (at most :data:`LOBBY_ROWS` rows
        in :func:`lobby_order`: ``name``, ``cls``, ``level``, ``depth``,
        ``turns``; null where this server cannot list them), built at most
        once per :data:`LOBBY_CACHE_S`."""
        now = time.monotonic()
        if self._lobby is not None and now - self._lobby[0] < LOBBY_CACHE_S:
            return self._lobby[1]
        found = players()
        online, rows = (None, None) if found is None else found
        if rows is not None:
            rows = sorted(rows, key=lambda r: lobby_order(r.level, r.depth, r.name))[:LOBBY_ROWS]
        body = json.dumps(
            {
                "classes": self.classes,
                "online": online,
                "players": None if rows is None else [asdict(r) for r in rows],
            },
            separators=(",", ":"),
        ).encode()
        self._lobby = (now, body)
        return body
