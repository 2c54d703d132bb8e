"""wss://: the server with --tls-cert/--tls-key, clients that verify it, --ca for a private authority.

The certificates are made in the test: a private authority and a server
certificate for ``localhost`` / ``127.0.0.1`` signed by it.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import json
import ssl
import subprocess
import sys
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from client.bots import run_bots_async
from client.connection import Connection, ConnectionClosed
from server.game.game import Game
from server.game.store import Store
from server.net.server import GameServer
from server.sim.world import World

pytest.importorskip("cryptography", reason="making test certificates needs cryptography")
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass
class Certs:
    ca: Path
    cert: Path
    key: Path


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    """A private authority and a server certificate it signed, as PEM files."""
    out = tmp_path_factory.mktemp("tls")
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(_name("Underhall test authority"))
        .issuer_name(_name("Underhall test authority"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("localhost"))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    found = Certs(out / "ca.pem", out / "server.pem", out / "server.key")
    found.ca.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    found.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    found.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return found


@pytest.fixture
async def tls_server(certs: Certs, tmp_path: Path) -> AsyncIterator[GameServer]:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certs.cert, certs.key)
    store = Store(tmp_path / "w.db")
    server = GameServer(
        Game(World(4), store, tick_rate=20), "127.0.0.1", 0, 20, ssl_context=context
    )
    ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(server.run(ready, install_signals=False))
    await asyncio.wait_for(ready, 5)
    yield server
    server.stop()
    await asyncio.wait_for(task, 10)
    store.close()


async def test_client_verifies_the_server_against_the_given_authority(
    tls_server: GameServer, certs: Certs
) -> None:
    for host in ("localhost", "127.0.0.1"):
        conn = await Connection.open(
            f"wss://{host}:{tls_server.port}", f"tls{host[0]}", ca=certs.ca
        )
        assert conn.welcome.name == f"tls{host[0]}"
        assert (await conn.recv()).__class__.__name__ == "Snapshot"
        await conn.close()


async def test_an_unknown_authority_or_plain_ws_is_refused(
    tls_server: GameServer, certs: Certs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UNDERHALL_CA", raising=False)
    with pytest.raises(ConnectionClosed, match="CERTIFICATE_VERIFY_FAILED"):
        await Connection.open(f"wss://localhost:{tls_server.port}", "nobody")
    with pytest.raises(ConnectionClosed, match="cannot reach"):
        await Connection.open(f"ws://localhost:{tls_server.port}", "nobody", open_timeout=2)
    assert not tls_server.game.seats


async def test_bots_trust_the_authority_from_the_environment(
    tls_server: GameServer, certs: Certs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UNDERHALL_CA", str(certs.ca))
    report = await asyncio.wait_for(
        run_bots_async(f"wss://localhost:{tls_server.port}", 3, duration=2.0, name_prefix="tb"),
        30,
    )
    assert report.clients_connected == 3 and report.protocol_errors == 0
    assert report.deltas_received > 0


async def test_health_is_served_over_https_too(tls_server: GameServer, certs: Certs) -> None:
    context = ssl.create_default_context(cafile=str(certs.ca))

    def get() -> bytes:
        url = f"https://localhost:{tls_server.port}/healthz"
        with urllib.request.urlopen(url, context=context, timeout=5) as resp:
            body: bytes = resp.read()
            return body

    assert await asyncio.to_thread(get) == b"ok\n"


async def test_the_browser_page_is_served_over_https_and_plays_over_wss(
    tls_server: GameServer, certs: Certs
) -> None:
    import msgpack  # type: ignore[import-untyped]
    import websockets
    from websockets.typing import Origin

    from client.web import STATIC
    from server.net.web import WebSite

    tls_server.web = WebSite(STATIC, [("warrior", "Warrior")])
    context = ssl.create_default_context(cafile=str(certs.ca))
    origin = f"https://localhost:{tls_server.port}"

    def get() -> tuple[str, bytes]:
        with urllib.request.urlopen(origin + "/", context=context, timeout=5) as resp:
            return resp.headers["Content-Security-Policy"], resp.read()

    policy, page = await asyncio.to_thread(get)
    assert page.startswith(b"<!doctype html>")
    assert f"wss://localhost:{tls_server.port}" in policy
    async with websockets.connect(
        f"wss://localhost:{tls_server.port}/", ssl=context, origin=Origin(origin), compression=None
    ) as ws:
        await ws.send(msgpack.packb({"t": "ping", "id": 3}))
        assert msgpack.unpackb(await ws.recv())["id"] == 3


def test_serve_command_line_checks_its_tls_options(certs: Certs, tmp_path: Path) -> None:
    base = [
        sys.executable,
        "-m",
        "server.cli",
        "serve",
        "--port",
        "0",
        "--db",
        str(tmp_path / "w.db"),
    ]
    alone = subprocess.run(
        [*base, "--tls-cert", str(certs.cert)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert alone.returncode != 0 and "--tls-cert and --tls-key go together" in alone.stderr
    wrong = subprocess.run(
        [*base, "--tls-cert", str(certs.cert), "--tls-key", str(certs.ca)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert wrong.returncode != 0 and "cannot load" in wrong.stderr


async def test_serve_and_bots_command_lines_speak_wss(certs: Certs, tmp_path: Path) -> None:
    from tests.serverproc import underhall_command

    log = tmp_path / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(  # noqa: ASYNC220 -- returns at once
            [
                *underhall_command(),
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--db",
                str(tmp_path / "w.db"),
                "--tls-cert",
                str(certs.cert),
                "--tls-key",
                str(certs.key),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        for _ in range(600):
            if b"listening on" in log.read_bytes() or proc.poll() is not None:
                break
            await asyncio.sleep(0.05)
        line = log.read_text()
        assert "listening on wss://127.0.0.1:" in line, line
        port = line.split("listening on wss://127.0.0.1:")[1].split()[0]
        bots = await asyncio.create_subprocess_exec(
            *underhall_command(),
            "bots",
            "--url",
            f"wss://127.0.0.1:{port}",
            "-n",
            "2",
            "--duration",
            "2",
            "--json",
            "--ca",
            str(certs.ca),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        stdout, stderr = await asyncio.wait_for(bots.communicate(), 60)
        assert bots.returncode == 0, stdout.decode() + stderr.decode()
        assert json.loads(stdout.decode().splitlines()[-1])["clients_connected"] == 2
    finally:
        proc.terminate()
        await asyncio.to_thread(proc.wait, 15)
