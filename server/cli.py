"""The ``underhall`` command: ``serve``, ``play`` and ``bots``.

This module is the composition root: it wires the server's layers together
and, for ``play`` and ``bots``, hands over to the client package.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import logging
import os
import secrets
import sys
from pathlib import Path
from typing import Any


def default_db() -> Path:
    """``$UNDERHALL_DB``, else ``$XDG_DATA_HOME/underhall/world.db``."""
    if os.environ.get("UNDERHALL_DB"):
        return Path(os.environ["UNDERHALL_DB"])
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "underhall" / "world.db"


def _use_uvloop() -> None:
    try:
        import uvloop
    except ImportError:
        return
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


def serve_main(args: argparse.Namespace) -> int:
    """Run a server until interrupted; return the exit status."""
    from server.game.game import Game
    from server.game.store import Store
    from server.net.server import GameServer
    from server.sim.world import World

    resolve_serve_options(args)
    logging.basicConfig(level=args.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    store = Store(args.db)
    stored = store.get_meta("seed")
    if stored is None:
        seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
        store.set_meta("seed", str(seed))
    else:
        seed = int(stored)
        if args.seed is not None and args.seed != seed:
            print(f"note: {args.db} holds a world with seed {seed}; --seed {args.seed} ignored "
                  "(use another --db for a new world)", file=sys.stderr)
    game = Game(World(seed), store, tick_rate=args.tick_rate, max_players=args.max_players,
                motd=args.motd)
    server = GameServer(game, args.host, args.port, args.tick_rate)
    _use_uvloop()

    async def main() -> None:
        ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(server.run(ready))
        waiting: list[asyncio.Future[Any]] = [ready, task]
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if not ready.done():  # the server failed before listening (e.g. port in use)
            task.result()
        port = ready.result()
        print(f"listening on ws://{args.host}:{port} (seed {seed}, {args.tick_rate} ticks/s, "
              f"database {args.db})", flush=True)
        await task

    try:
        asyncio.run(main())
    except OSError as exc:
        print(f"underhall serve: cannot listen on {args.host}:{args.port}: {exc.strerror}",
              file=sys.stderr)
        return 1
    finally:
        store.close()
    return 0


def play_main(args: argparse.Namespace) -> int:
    """Run the terminal client."""
    from client.ui import run_play

    return run_play(args.url, args.name, cls_key=args.cls)


def bots_main(args: argparse.Namespace) -> int:
    """Run headless bots against a server and print their report."""
    if args.lean:
        from client.loadgen import run_cli

        return run_cli(args)
    from client.bots import run_bots

    return run_bots(args.url, args.n, args.duration, as_json=args.json, seed=args.seed,
                    name_prefix=args.prefix)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``underhall``."""
    parser = argparse.ArgumentParser(
        prog="underhall", description="A shared roguelike dungeon: server, client and bots.")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("serve", help="host a dungeon", description="Host a dungeon.")
    p.add_argument("--host", help="interface to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="TCP port, 0 for any (default 8765)")
    p.add_argument("--seed", type=int, default=None,
                   help="world seed for a new world (default: random)")
    p.add_argument("--tick-rate", type=int, choices=range(1, 61), metavar="HZ",
                   help="ticks per second, 1-60 (default 10)")
    p.add_argument("--db", type=Path,
                   help=f"SQLite file holding the world and players (default {default_db()})")
    p.add_argument("--max-players", type=int, help="default 5000")
    p.add_argument("--motd", help="message of the day")
    p.add_argument("--log-level", choices=["debug", "info", "warning", "error"],
                   help="default info")
    p.add_argument("--config", type=Path, default=None,
                   help="TOML file with any of these options (command line wins)")
    p.set_defaults(func=serve_main)

    p = sub.add_parser("play", help="play in a terminal", description="Play in this terminal.")
    p.add_argument("--url", default="ws://127.0.0.1:8765", help="server (default %(default)s)")
    p.add_argument("--name", default=_login_name(), help="character name (default %(default)s)")
    p.add_argument("--class", dest="cls", default=None,
                   help="class of a new character (warrior, mage, monk)")
    p.set_defaults(func=play_main)

    p = sub.add_parser("bots", help="load-test a server with headless bots",
                       description="Run N headless bots against a server and report.")
    p.add_argument("--url", required=True, help="server, e.g. ws://127.0.0.1:8765")
    p.add_argument("-n", type=int, default=10, help="number of bots (default 10)")
    p.add_argument("--duration", type=float, default=30.0, help="seconds (default 30)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--seed", type=int, default=0, help="seed of the bots' choices")
    p.add_argument("--prefix", default="bot",
                   help="bot names are PREFIX0, PREFIX1, ... (default %(default)s); their "
                        "tokens are kept like a player's, so a rerun resumes the same bots")
    p.add_argument("--lean", action="store_true",
                   help="lean walking clients (client/loadgen.py), thousands per core, instead "
                        "of the explore-and-fight bots; live line on a terminal")
    p.add_argument("--rate", type=float, default=100.0,
                   help="with --lean: joins per second (default %(default)s)")
    p.add_argument("--procs", type=int, default=1,
                   help="with --lean: worker processes (default %(default)s)")
    p.add_argument("--depths", type=int, default=1,
                   help="with --lean: spread over depths 1..D by the stairs (default 1)")
    p.add_argument("--walk-every", type=int, default=1,
                   help="with --lean and --depths: one client in K walks once arrived")
    p.add_argument("--jsonl", action="store_true",
                   help="with --lean: a JSON snapshot of the counters every second")
    p.add_argument("--forget", action="store_true",
                   help="with --lean: do not read or save resume tokens")
    p.set_defaults(func=bots_main)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    from protocol.version import PROTOCOL_VERSION

    try:
        installed = version("underhall")
    except PackageNotFoundError:
        installed = "unknown"
    return f"underhall {installed} (protocol {PROTOCOL_VERSION})"


def _login_name() -> str:
    try:
        name = "".join(c for c in getpass.getuser() if c.isalnum() or c in "_-")[:16]
    except (KeyError, OSError):
        name = ""
    return name or "adventurer"


CONFIG_KEYS = {
    "host": str, "port": int, "seed": int, "tick_rate": int, "db": str,
    "max_players": int, "motd": str, "log_level": str,
}


def load_config(path: Path) -> dict[str, object]:
    """Read a ``serve`` configuration file (TOML, keys as in deploy/underhall.toml).

    Raises:
        SystemExit: With a message naming the file and key, for a missing
            file, bad TOML, an unknown key or a value of the wrong type.
    """
    import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SystemExit(f"underhall serve: {path}: {exc}") from None
    out: dict[str, object] = {}
    for key, value in data.items():
        kind = CONFIG_KEYS.get(key)
        if kind is None:
            raise SystemExit(f"underhall serve: {path}: unknown key {key!r} "
                             f"(known: {', '.join(sorted(CONFIG_KEYS))})")
        if not isinstance(value, kind) or isinstance(value, bool):
            raise SystemExit(f"underhall serve: {path}: {key!r} must be {kind.__name__}")
        out[key] = Path(str(value)) if key == "db" else value
    return out


SERVE_DEFAULTS: dict[str, object] = {
    "host": "127.0.0.1", "port": 8765, "seed": None, "tick_rate": 10, "db": None,
    "max_players": 5000, "motd": "Welcome to Underhall.", "log_level": "info",
}


def resolve_serve_options(args: argparse.Namespace) -> None:
    """Fill unset ``serve`` options: command line, then ``--config``, then defaults."""
    config = load_config(args.config) if args.config is not None else {}
    for key, default in SERVE_DEFAULTS.items():
        if getattr(args, key) is None:
            setattr(args, key, config.get(key, default))
    if args.db is None:
        args.db = default_db()
    if not 1 <= int(args.tick_rate) <= 60:
        raise SystemExit("underhall serve: tick_rate must be 1-60")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``underhall`` console script."""
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
