"""The ``underhall`` command line: help, version, and the serve configuration file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from server.cli import build_parser, load_config, resolve_serve_options
from tests.serverproc import running_server

UNDERHALL = [sys.executable, "-m", "server.cli"]


@pytest.mark.parametrize(
    "args", [["--help"], ["serve", "--help"], ["play", "--help"], ["bots", "--help"]]
)
def test_help(args: list[str]) -> None:
    out = subprocess.run(UNDERHALL + args, capture_output=True, text=True, timeout=30, check=False)
    assert out.returncode == 0 and "usage: underhall" in out.stdout


def test_version() -> None:
    out = subprocess.run(
        UNDERHALL + ["--version"], capture_output=True, text=True, timeout=30, check=False
    )
    assert out.returncode == 0 and "protocol 12" in out.stdout


def test_config_file_fills_options_and_the_command_line_wins(tmp_path: Path) -> None:
    config = tmp_path / "u.toml"
    config.write_text('port = 9000\ntick_rate = 20\ndb = "/tmp/x.db"\nmotd = "hi"\n')
    args = build_parser().parse_args(["serve", "--config", str(config), "--port", "9100"])
    resolve_serve_options(args)
    assert (args.port, args.tick_rate, str(args.db), args.motd) == (9100, 20, "/tmp/x.db", "hi")
    assert args.host == "127.0.0.1"


@pytest.mark.parametrize(
    "text, message",
    [
        ("prot = 1\n", "unknown key 'prot'"),
        ('port = "80"\n', "'port' must be int"),
        ("port = \n", "u.toml"),
    ],
)
def test_bad_config_is_refused_with_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "u.toml"
    config.write_text(text)
    with pytest.raises(SystemExit) as info:
        load_config(config)
    assert message in str(info.value)


def test_example_deploy_config_loads() -> None:
    example = Path(__file__).resolve().parents[1] / "deploy" / "underhall.toml"
    assert load_config(example)["port"] == 8765


def test_serve_reports_a_port_in_use(tmp_path: Path) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = subprocess.run(
            UNDERHALL + ["serve", "--port", str(port), "--db", str(tmp_path / "w.db")],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    assert out.returncode == 1 and "cannot listen" in out.stderr
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "w.db").exists(), "a failed start created a database file"


def _run(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*UNDERHALL, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def _one_clear_line(out: subprocess.CompletedProcess[str], *words: str) -> str:
    """The run failed with a line holding ``words`` and no traceback; that line."""
    assert out.returncode != 0, out
    assert "Traceback" not in out.stderr, out.stderr
    lines = [line for line in out.stderr.splitlines() if all(w in line for w in words)]
    assert len(lines) == 1, out.stderr
    return lines[0]


@pytest.mark.parametrize(
    "args, words",
    [
        (["play", "--url", "ws://127.0.0.1:99999"], ["--url", "1-65535"]),
        (["play", "--url", "http://127.0.0.1:8765"], ["--url", "ws://"]),
        (["play", "--name", "b!d"], ["--name", "'b!d'", "1-16"]),
        (["bots", "--url", "ws://127.0.0.1:9", "--duration", "-5"], ["--duration", "-5"]),
        (["bots", "--url", "ws://127.0.0.1:9", "-n", "0"], ["-n", "more than 0"]),
        (["serve", "--port", "70000"], ["--port", "70000", "0-65535"]),
        (["serve", "--port", "http"], ["--port", "'http'"]),
    ],
)
def test_bad_arguments_get_one_line_and_status_2(
    tmp_path: Path, args: list[str], words: list[str]
) -> None:
    out = _run(*args, "--db", str(tmp_path / "w.db")) if args[0] == "serve" else _run(*args)
    assert out.returncode == 2
    _one_clear_line(out, "error:", *words)
    assert not (tmp_path / "w.db").exists()


@pytest.mark.parametrize(
    "text, words",
    [
        ('log_level = "verbose"\n', ["'verbose'", "debug, info, warning, error", "u.toml"]),
        ("port = 70000\n", ["70000", "0-65535", "u.toml"]),
        ("max_players = 0\n", ["max_players", "u.toml"]),
        ('trusted_proxy = "10.0.0.0/8, proxy.lan"\n', ["trusted_proxy", "'proxy.lan'"]),
        ('allow_origin = "https://ok.example, example.org"\n', ["allow_origin", "'example.org'"]),
        ('allow_host = "ok.example, https://x.example"\n', ["allow_host", "'https://x.example'"]),
    ],
)
def test_bad_config_values_get_one_line(tmp_path: Path, text: str, words: list[str]) -> None:
    config = tmp_path / "u.toml"
    config.write_text(text)
    port = [] if text.startswith("port") else ["--port", "0"]  # the command line would win
    out = _run("serve", "--config", str(config), *port, "--db", str(tmp_path / "w.db"))
    assert out.returncode == 1
    _one_clear_line(out, "underhall serve:", *words)
    assert not (tmp_path / "w.db").exists()


def test_a_gateway_refuses_a_trusted_proxy_that_is_no_address() -> None:
    out = _run("gateway", "--port", "0", "--trusted-proxy", "127.0.0.1,proxy.lan")
    assert out.returncode == 1
    _one_clear_line(out, "underhall gateway:", "trusted_proxy", "'proxy.lan'")


def test_a_gateway_refuses_an_allowed_origin_that_is_no_origin() -> None:
    out = _run("gateway", "--port", "0", "--allow-origin", "https://a.example/path")
    assert out.returncode == 1
    _one_clear_line(out, "underhall gateway:", "allow_origin", "'https://a.example/path'")


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_bots_against_no_server_fail_at_once() -> None:
    url = f"ws://127.0.0.1:{_free_port()}"
    out = _run("bots", "--url", url, "--duration", "600", timeout=60)
    assert out.returncode == 1
    _one_clear_line(out, "underhall bots:", f"cannot reach {url}", "refused")


def test_wss_against_a_plain_server_says_why(tmp_path: Path) -> None:
    with running_server(tmp_path) as url:
        secure = url.replace("ws://", "wss://").rstrip("/")
        out = _run("bots", "--url", secure, "--duration", "600", timeout=60)
    assert out.returncode == 1
    _one_clear_line(out, f"cannot reach {secure}", "TLS handshake failed", "ws://")


@pytest.mark.parametrize("command", ["serve", "play", "bots"])
def test_help_names_the_environment_variables(command: str) -> None:
    out = _run(command, "--help")
    assert out.returncode == 0
    for name in ("UNDERHALL_DB", "XDG_DATA_HOME", "UNDERHALL_HOME"):
        assert name in out.stdout, (name, out.stdout)
