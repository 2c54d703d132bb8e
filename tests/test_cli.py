"""The ``underhall`` command line: help, version, and the serve configuration file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from server.cli import build_parser, load_config, resolve_serve_options

UNDERHALL = [sys.executable, "-m", "server.cli"]


@pytest.mark.parametrize("args", [["--help"], ["serve", "--help"], ["play", "--help"],
                                  ["bots", "--help"]])
def test_help(args: list[str]) -> None:
    out = subprocess.run(UNDERHALL + args, capture_output=True, text=True, timeout=30,
                         check=False)
    assert out.returncode == 0 and "usage: underhall" in out.stdout


def test_version() -> None:
    out = subprocess.run(UNDERHALL + ["--version"], capture_output=True, text=True, timeout=30,
                         check=False)
    assert out.returncode == 0 and "protocol 3" in out.stdout


def test_config_file_fills_options_and_the_command_line_wins(tmp_path: Path) -> None:
    config = tmp_path / "u.toml"
    config.write_text('port = 9000\ntick_rate = 20\ndb = "/tmp/x.db"\nmotd = "hi"\n')
    args = build_parser().parse_args(["serve", "--config", str(config), "--port", "9100"])
    resolve_serve_options(args)
    assert (args.port, args.tick_rate, str(args.db), args.motd) == (9100, 20, "/tmp/x.db", "hi")
    assert args.host == "127.0.0.1"


@pytest.mark.parametrize("text, message", [
    ("prot = 1\n", "unknown key 'prot'"),
    ('port = "80"\n', "'port' must be int"),
    ("port = \n", "u.toml"),
])
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
        out = subprocess.run(UNDERHALL + ["serve", "--port", str(port), "--db",
                                          str(tmp_path / "w.db")],
                             capture_output=True, text=True, timeout=30,
                         check=False)
    assert out.returncode == 1 and "cannot listen" in out.stderr
