"""The web client's files, the lobby and the ``Origin`` check on the game port
(server/net/web.py, issue 47), against a real server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import msgpack  # type: ignore[import-untyped]
import pytest
import websockets
from websockets.datastructures import Headers
from websockets.exceptions import InvalidStatus

from client.web import STATIC
from protocol.version import PROTOCOL_VERSION
from server.net.guard import NetLimits
from server.net.server import GameServer
from server.net.web import HostRule, WebSite, host_name, parse_hosts, parse_origins
from tests.net.conftest import Started, join, recv, send

CLASSES = [("warrior", "Warrior"), ("mage", "Mage")]


async def raw_get(
    port: int, path: str, headers: str = "", host: str = "127.0.0.1"
) -> tuple[int, dict[str, str], bytes]:
    """Status, headers (lower-case names) and body of ``GET path`` sent as
    written (no client normalising the path), with ``Host: HOST:PORT``."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n{headers}\r\n".encode())
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    fields = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.lower(): v for k, v in fields.items()}, body


async def served(start_server: Started, limits: NetLimits | None = None) -> GameServer:
    server = await start_server(limits=limits)
    server.web = WebSite(STATIC, CLASSES)
    return server


async def test_the_page_and_its_files_with_their_types_and_policy(start_server: Started) -> None:
    server = await served(start_server)
    status, headers, body = await raw_get(server.port, "/")
    assert status == 200 and body.startswith(b"<!doctype html>")
    assert headers["content-type"] == "text/html; charset=utf-8"
    policy = headers["content-security-policy"]
    assert "script-src 'self';" in policy and "unsafe-inline" not in policy
    assert f"connect-src 'self' ws://127.0.0.1:{server.port} wss://127.0.0.1:{server.port};" in (
        policy
    )
    assert headers["x-content-type-options"] == "nosniff"
    for path, kind in (
        ("/app.js", "text/javascript; charset=utf-8"),
        ("/msgpack.min.js", "text/javascript; charset=utf-8"),
        ("/style.css", "text/css; charset=utf-8"),
        ("/msgpack.LICENSE.txt", "text/plain; charset=utf-8"),
    ):
        status, headers, body = await raw_get(server.port, path)
        assert (status, headers["content-type"]) == (200, kind), path
        assert body == (STATIC / path[1:]).read_bytes()
    assert b"<script>" not in (STATIC / "index.html").read_bytes()  # no inline script
    status, headers, body = await raw_get(server.port, "/app.js")
    tag = headers["etag"]
    status, headers, body = await raw_get(server.port, "/app.js", f"If-None-Match: {tag}\r\n")
    assert (status, body, headers["etag"]) == (304, b"", tag)


@pytest.mark.parametrize(
    "path",
    [
        "/../pyproject.toml",
        "/%2e%2e/__init__.py",
        "/..%2f__init__.py",
        "/static/../__init__.py",
        "//etc/passwd",
        "/__init__.py",
        "/app.js/",
        "/nothing.html",
    ],
)
async def test_no_file_outside_the_site(start_server: Started, path: str) -> None:
    server = await served(start_server)
    status, _, body = await raw_get(server.port, path)
    assert status in (400, 404), (path, status)
    assert b"import" not in body


async def test_operators_paths_and_the_game_are_unchanged(start_server: Started) -> None:
    server = await served(start_server)
    assert (await raw_get(server.port, "/healthz"))[:1] == (200,)
    ws, welcome, _ = await join(server, "plain")  # no Origin: not a browser, not judged
    assert welcome["t"] == "welcome"
    await ws.close()


async def test_lobby_lists_classes_and_players(start_server: Started) -> None:
    server = await served(start_server)
    ws, _, _ = await join(server, "Lobbyist")
    await send(ws, {"t": "cmd", "seq": 0, "c": "wait"})
    await recv(ws)
    await asyncio.sleep(1.1)  # past the lobby's cache
    status, headers, body = await raw_get(server.port, "/lobby.json?x=1")
    assert status == 200 and headers["content-type"] == "application/json"
    lobby = json.loads(body)
    assert lobby["classes"] == [list(c) for c in CLASSES]
    assert lobby["online"] == 1
    [row] = lobby["players"]
    assert row == {"name": "Lobbyist", "cls": "warrior", "level": 1, "depth": 1, "turns": 1}
    await ws.close()


async def test_no_page_without_a_site(start_server: Started) -> None:
    server = await start_server()
    status, _, _ = await raw_get(server.port, "/")
    assert status == 426  # websockets: a plain GET where a websocket is expected


async def hello_through(port: int, origin: str | None, host: str | None = None) -> str:
    """Open a game connection with ``Origin`` (and ``Host``), say hello; the
    answer's type."""
    headers = {} if origin is None else {"Origin": origin}
    url = f"ws://{host or '127.0.0.1'}:{port}/"
    async with websockets.connect(
        url, compression=None, additional_headers=headers, origin=None
    ) as ws:
        await ws.send(msgpack.packb({"t": "hello", "v": PROTOCOL_VERSION, "name": "o" + str(port)}))
        return str(msgpack.unpackb(await ws.recv())["t"])


async def test_browser_connections_from_other_origins_are_refused(start_server: Started) -> None:
    server = await served(start_server)
    port = server.port
    assert await hello_through(port, f"http://127.0.0.1:{port}") == "welcome"
    for origin in ("http://evil.example", f"http://127.0.0.1:{port + 1}", "null"):
        with pytest.raises(InvalidStatus) as refused:
            await hello_through(port, origin)
        assert refused.value.response.status_code == 403


async def test_allowed_origins_widen_the_check(start_server: Started) -> None:
    limits = NetLimits(allowed_origins=parse_origins("https://play.example.org, http://x.test:81"))
    server = await served(start_server, limits)
    assert await hello_through(server.port, "https://play.example.org") == "welcome"
    with pytest.raises(InvalidStatus):
        await hello_through(server.port, "https://other.example.org")


async def upgrade_status(port: int, host: str, origin: str | None, more: str = "") -> int:
    """The HTTP status of a websocket upgrade to 127.0.0.1:``port`` naming
    ``Host: HOST:PORT`` (and ``Origin``): 101 taken, 403 refused."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    lines = [
        "GET / HTTP/1.1",
        f"Host: {host}:{port}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version: 13",
    ]
    if origin is not None:
        lines.append(f"Origin: {origin}")
    writer.write(("\r\n".join(lines) + "\r\n" + more + "\r\n").encode())
    await writer.drain()
    status = await asyncio.wait_for(reader.readline(), 5)
    writer.close()
    return int(status.split()[1])


async def test_dns_rebinding_another_name_is_refused(start_server: Started) -> None:
    """A page of evil.example whose name resolves to 127.0.0.1 is the same
    origin as evil.example:PORT: its Origin matches its Host, so only the
    Host check stops it reading the lobby or opening a game connection."""
    server = await served(start_server)
    port = server.port
    for path in ("/", "/lobby.json", "/app.js"):
        status, _, body = await raw_get(port, path, host="evil.example")
        assert status == 403 and b"--allow-host" in body, path
        assert b"classes" not in body
    evil = f"http://evil.example:{port}"
    assert await upgrade_status(port, "evil.example", evil) == 403
    for host in ("127.0.0.1", "localhost", "[::1]", "game.localhost", socket.gethostname()):
        assert (await raw_get(port, "/lobby.json", host=host))[0] == 200, host
        assert await upgrade_status(port, host, f"http://{host}:{port}") == 101, host
    # Not a browser (no Origin): any name, as the terminal client uses it.
    assert await upgrade_status(port, "dungeon.example.org", None) == 101
    # The operators' paths are not the browser's (a monitor may use any name).
    assert (await raw_get(port, "/healthz", host="evil.example"))[0] == 200


async def test_allowed_hosts_and_origins_widen_the_host_check(start_server: Started) -> None:
    limits = NetLimits(
        allowed_origins=parse_origins("https://play.example.org"),
        allowed_hosts=parse_hosts("dungeon.example.org"),
    )
    server = await served(start_server, limits)
    port = server.port
    for host in ("dungeon.example.org", "DUNGEON.example.org.", "play.example.org"):
        assert (await raw_get(port, "/", host=host))[0] == 200, host
    assert (await raw_get(port, "/", host="other.example.org"))[0] == 403
    own = f"http://dungeon.example.org:{port}"
    assert await upgrade_status(port, "dungeon.example.org", own) == 101


async def test_a_trusted_proxy_forwards_any_name(start_server: Started) -> None:
    """Behind a reverse proxy (trusted, saying for whom it forwards) the
    public name needs no option: the proxy serves the names it is set to."""
    server = await served(start_server, NetLimits(trusted_proxies=("127.0.0.1",)))
    port = server.port
    forwarded = "X-Forwarded-For: 203.0.113.9\r\n"
    assert (await raw_get(port, "/lobby.json", forwarded, host="dungeon.example.org"))[0] == 200
    origin = f"http://dungeon.example.org:{port}"
    assert await upgrade_status(port, "dungeon.example.org", origin, forwarded) == 101
    assert await upgrade_status(port, "dungeon.example.org", origin) == 403
    # The proxy's own address without a forwarding header: judged as any other.
    assert (await raw_get(port, "/lobby.json", host="dungeon.example.org"))[0] == 403


def test_host_rule() -> None:
    rule = HostRule.of("0.0.0.0", parse_origins("https://play.example.org:8443"), ())
    for header in ("127.0.0.1:8765", "10.1.2.3", "[::1]:8765", "[fe80::1]", "localhost:1"):
        assert rule.refused(Headers({"Host": header})) is None, header
    for header in ("play.example.org", "a.localhost:9", socket.gethostname()):
        assert rule.refused(Headers({"Host": header})) is None, header
    for header in ("evil.example:8765", "127.0.0.1.evil.example", "localhost.evil.example"):
        assert rule.refused(Headers({"Host": header})) is not None, header
    assert rule.refused(Headers()) is None  # no Host: not a browser
    assert HostRule.of("game.lan", (), ()).refused(Headers({"Host": "game.lan:80"})) is None
    assert HostRule.of("127.0.0.1", (), ("*",)).refused(Headers({"Host": "any.example"})) is None
    assert host_name("Dungeon.Example.ORG.:443") == "dungeon.example.org"
    assert host_name("[::1]:8765") == "[::1]"


def test_parse_hosts() -> None:
    assert parse_hosts("") == ()
    assert parse_hosts("Dungeon.Example.org, 10.0.0.1,*") == (
        "dungeon.example.org",
        "10.0.0.1",
        "*",
    )
    for bad in ("https://a.example", "a.example:8765", "a b", "a.example/x"):
        with pytest.raises(ValueError, match="is not a host name"):
            parse_hosts(bad)


def test_parse_origins() -> None:
    assert parse_origins("") == ()
    assert parse_origins("HTTPS://A.example:8765,http://[::1]:9") == (
        "https://a.example:8765",
        "http://[::1]:9",
    )
    for bad in ("a.example", "https://a.example/", "ftp://a.example", "https://a b"):
        with pytest.raises(ValueError, match="is not an origin"):
            parse_origins(bad)


def test_the_package_ships_the_client() -> None:
    names = {p.name for p in Path(STATIC).iterdir()}
    assert {"index.html", "app.js", "model.js", "text.js", "style.css"} <= names
    assert {"msgpack.min.js", "msgpack.LICENSE.txt"} <= names


def test_the_page_and_the_document_speak_this_protocol_version() -> None:
    app = (Path(STATIC) / "app.js").read_text(encoding="utf-8")
    assert f"const PROTOCOL_VERSION = {PROTOCOL_VERSION};" in app
    doc = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text("utf-8")
    assert f"the server's protocol version (**{PROTOCOL_VERSION}**)" in doc
