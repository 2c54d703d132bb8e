"""The ``underhall`` command: ``serve``, ``play``, ``watch``, ``bots``, ``db`` and ``admin``;
``worker`` and ``gateway`` for a cluster (:mod:`server.cluster`).

This module is the composition root: it wires the server's layers together
and, for ``play`` and ``bots``, hands over to the client package.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import math
import os
import secrets
import ssl
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def default_db() -> Path | str:
    """``$UNDERHALL_DB`` (a file or a ``postgresql://`` URL), else
    ``$XDG_DATA_HOME/underhall/world.db``."""
    env = os.environ.get("UNDERHALL_DB")
    if env:
        return env if env.startswith(("postgresql://", "postgres://")) else Path(env)
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "underhall" / "world.db"


def default_admin_socket(db: object) -> Path:
    """The admin socket of a server: beside its SQLite file (``world.db.admin.sock``),
    or beside the default database when the database is a URL."""
    text = str(db)
    if "://" in text:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
        return base / "underhall" / "admin.sock"
    return Path(text).with_name(Path(text).name + ".admin.sock")


def default_recordings(db: object) -> Path | str | None:
    """Where a server keeps its games' recordings by default: beside its
    SQLite file (``world.db.recordings``), in the database itself when it is
    PostgreSQL (its URL), nowhere for an in-memory database."""
    text = str(db)
    if text == ":memory:":
        return None
    if "://" in text:
        return text
    return Path(text).with_name(Path(text).name + ".recordings")


def _server_ssl(cert: Path | None, key: Path | None) -> ssl.SSLContext | None:
    """The TLS context for ``--tls-cert``/``--tls-key``, or None for plain ws://.

    Raises:
        SystemExit: Only one of the two given, or they cannot be loaded.
    """
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise SystemExit("underhall serve: --tls-cert and --tls-key go together")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        raise SystemExit(f"underhall serve: cannot load {cert} / {key}: {exc}") from None
    return context


def _use_uvloop() -> None:
    try:
        import uvloop
    except ImportError:
        return
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


ENVIRONMENT_HELP = """\
environment:
  UNDERHALL_DB      serve: the database file when --db and the config file give none
  XDG_DATA_HOME     serve: the default database is $XDG_DATA_HOME/underhall/world.db
                    (~/.local/share/underhall/world.db when unset)
  UNDERHALL_HOME    play, bots: directory of tokens.json, the saved resume tokens
                    (~/.config/underhall when unset)
  HOME              where ~ is
  TERM              play: the terminal type (colours, keys)
  USER, LOGNAME     play: the default --name
"""
"""The environment variables the program reads, for ``--help`` and the README."""

LOG_LEVELS = ("debug", "info", "warning", "error")


def _port(text: str) -> int:
    """argparse type: a TCP port 0-65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port {port} is not in 0-65535")
    return port


def _positive(kind: type[int | float], what: str) -> Callable[[str], int | float]:
    """argparse type: a number of ``kind`` greater than 0."""

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number of {what}: {text!r}") from None
        if not (value > 0 and math.isfinite(value)):
            raise argparse.ArgumentTypeError(f"{what} must be more than 0, not {text}")
        return value

    return parse


def _ws_url(text: str) -> str:
    """argparse type: a ``ws://`` or ``wss://`` URL with a host and a valid port."""
    from urllib.parse import urlsplit

    parts = urlsplit(text)
    if parts.scheme not in ("ws", "wss"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a ws:// or wss:// URL")
    try:
        port = parts.port
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: the port must be 1-65535") from None
    if not parts.hostname:
        raise argparse.ArgumentTypeError(f"{text!r} names no host")
    if port == 0:
        raise argparse.ArgumentTypeError(f"{text!r}: the port must be 1-65535")
    return text


def _player_name(text: str) -> str:
    """argparse type: a name the protocol accepts (1-16 of A-Z a-z 0-9 _ -)."""
    from protocol.limits import MAX_NAME, NAME_RE

    if NAME_RE.fullmatch(text) is None:
        raise argparse.ArgumentTypeError(
            f"{text!r}: a name is 1-{MAX_NAME} characters from A-Z a-z 0-9 _ -"
        )
    return text


def check_port_free(host: str, port: int) -> str | None:
    """Whether the server could listen on ``host:port`` (0: any port is fine).

    Binds a socket the way asyncio's server does (address reuse on) and
    closes it, so a start that is bound to fail stops before it creates a
    database file.

    Returns:
        None if the port can be bound, else the reason ("Address already in use").
    """
    import socket

    if port == 0:
        return None
    try:
        infos = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except (OSError, UnicodeError) as exc:
        return str(exc)
    for family, kind, proto, _, address in infos:
        try:
            with socket.socket(family, kind, proto) as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind(address)
        except OSError as exc:
            return exc.strerror or str(exc)
    return None


def serve_main(args: argparse.Namespace) -> int:
    """Run a server until interrupted; return the exit status."""
    from server.game.bans import BanList
    from server.game.game import Game
    from server.net import collector
    from server.net.logs import setup_logging
    from server.net.server import GameServer
    from server.sim.world import World
    from server.store import StoreError, open_store

    resolve_serve_options(args)
    busy = check_port_free(args.host, args.port)
    if busy is not None:
        print(f"underhall serve: cannot listen on {args.host}:{args.port}: {busy}", file=sys.stderr)
        return 1
    setup_logging(args.log_level, args.log_format)
    ssl_context = _server_ssl(args.tls_cert, args.tls_key)
    try:
        store = open_store(args.db)
    except StoreError as exc:
        print(f"underhall serve: {exc}", file=sys.stderr)
        return 1
    try:
        stored = store.get_meta("seed")
        if stored is None:
            seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
            store.set_meta("seed", str(seed))
        else:
            seed = int(stored)
            if args.seed is not None and args.seed != seed:
                print(
                    f"note: {store.url} holds a world with seed {seed}; --seed {args.seed} "
                    "ignored (use another --db for a new world)",
                    file=sys.stderr,
                )
        game = Game(
            World(seed),
            store,
            tick_rate=args.tick_rate,
            max_players=args.max_players,
            motd=args.motd,
            save_interval_s=args.save_s,
        )
        game.bans = BanList.from_meta(store)
    except (StoreError, ValueError) as exc:
        store.close()
        print(f"underhall serve: {store.url}: {exc}", file=sys.stderr)
        return 1
    server = GameServer(
        game,
        args.host,
        args.port,
        args.tick_rate,
        ssl_context=ssl_context,
        drain_s=args.drain_s,
        metrics_port=args.metrics_port,
        limits=net_limits(args),
        admin_socket=args.admin_socket or default_admin_socket(args.db),
    )
    server.web = web_site(_classes(game.world.content))
    server.keeper.idle_ticks = round(float(args.level_idle_s) * args.tick_rate)
    where = default_recordings(args.db) if args.recordings is None else args.recordings
    if where is not None and str(where) != "off":
        from protocol.recording import RecordingError

        try:
            server.recorder = _recorder(
                where, int(args.recordings_max_mb), float(args.recordings_days)
            )
        except RecordingError as exc:
            store.close()
            print(f"underhall serve: {exc}", file=sys.stderr)
            return 1
        server.web.recordings = server.recorder.shelf
    if args.record_world is not None:
        from server.game.worldrecord import WorldRecorder

        try:
            game.recorder = WorldRecorder.open(
                Path(args.record_world),
                game.world,
                tick_rate=args.tick_rate,
                keeper_idle_ticks=server.keeper.idle_ticks,
            )
        except OSError as exc:
            store.close()
            print(f"underhall serve: --record-world: {exc}", file=sys.stderr)
            return 1
    _use_uvloop()
    collector.tune()  # process-wide: start-up data frozen, the server collects between ticks

    async def main() -> None:
        ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(server.run(ready))
        waiting: list[asyncio.Future[Any]] = [ready, task]
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if not ready.done():  # the server failed before listening (e.g. port in use)
            task.result()
        port = ready.result()
        scheme = "ws" if ssl_context is None else "wss"
        said = [
            (
                f"listening on {scheme}://{args.host}:{port} (seed {seed}, "
                f"{args.tick_rate} ticks/s, database {store.url})"
            )
        ]
        if server.metrics_port is not None:
            said.append(f"metrics on http://{args.host}:{server.metrics_port}/metrics")
        if game.recorder is not None:
            said.append(f"recording the world to {game.recorder.path}")
        if server.recorder is not None:
            said.append(f"recording games to {server.recorder.shelf.where}")
        for line in said:
            if args.log_format == "json":  # every line of output is then one JSON object
                print(json.dumps({"event": "listening", "msg": line}), flush=True)
            else:
                print(line, flush=True)
        await task

    try:
        asyncio.run(main())
    except OSError as exc:
        print(
            f"underhall serve: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}",
            file=sys.stderr,
        )
        return 1
    finally:
        if game.recorder is not None:
            game.recorder.close()
        if server.recorder is not None:
            server.recorder.close()
        store.close()
    return 0


def replay_main(args: argparse.Namespace) -> int:
    """``replay WHAT``: replay a recorded game in this terminal."""
    from client.replay import run_replay

    where = default_recordings(default_db())
    # a server on PostgreSQL keeps them there: ask it with --url
    directory = args.dir if args.dir is not None else (where if isinstance(where, Path) else None)
    return run_replay(args.what, url=args.url, directory=directory)


def replay_world_main(args: argparse.Namespace) -> int:
    """``replay-world PATH``: re-run a recording of the world and check it."""
    from server.game.worldrecord import RecordingError, newest_recording
    from server.game.worldreplay import replay_world

    try:
        path = newest_recording(Path(args.path))
        report = replay_world(path)
    except (OSError, RecordingError) as exc:
        print(f"underhall replay-world: {exc}", file=sys.stderr)
        return 2
    print(report.summary())
    return 0 if report.ok else 1


def _trust_ca(ca: str | None) -> None:
    """Make the client trust ``ca`` for wss:// (``UNDERHALL_CA``, read by client.connection)."""
    if ca is not None:
        if not Path(ca).is_file():
            raise SystemExit(f"underhall: --ca {ca}: no such file")
        os.environ["UNDERHALL_CA"] = str(Path(ca).resolve())


def play_main(args: argparse.Namespace) -> int:
    """Run the terminal client."""
    from client.ui import run_play

    _trust_ca(args.ca)
    return run_play(args.url, args.name, cls_key=args.cls)


def watch_main(args: argparse.Namespace) -> int:
    """Run the terminal client as a spectator of ``args.player``."""
    from client.watch import run_watch

    _trust_ca(args.ca)
    return run_watch(args.url, args.player, name=args.name)


def bots_main(args: argparse.Namespace) -> int:
    """Run headless bots against a server and print their report."""
    if args.lean:
        from client.loadgen import run_cli

        return run_cli(args)
    from client.bots import run_bots
    from client.connection import ConnectionClosed, probe
    from client.safe_text import clean_text
    from client.ui import describe_open_failure

    _trust_ca(args.ca)
    try:
        asyncio.run(probe(args.url, timeout=5.0, ca=args.ca))
    except ConnectionClosed as exc:  # fail at once rather than after --duration
        line = clean_text(describe_open_failure(args.url, exc))
        print(f"underhall bots: {line}", file=sys.stderr)
        return 1
    return run_bots(
        args.url, args.n, args.duration, as_json=args.json, seed=args.seed, name_prefix=args.prefix
    )


def db_main(args: argparse.Namespace) -> int:
    """``db export FILE`` / ``db import FILE``: copy a world to or from JSON lines."""
    from server.store import StoreError, is_url, open_store
    from server.store.dump import export_world, import_world

    target = args.db if args.db is not None else str(default_db())
    if args.action == "export" and not is_url(target) and not Path(target).is_file():
        print(f"underhall db export: no database at {target}", file=sys.stderr)
        return 1
    from protocol.recording import RecordingError
    from server.game.recordings import open_shelf

    where = default_recordings(target) if args.recordings is None else args.recordings
    shelf = None if where is None or str(where) == "off" else open_shelf(where)
    try:
        # export only reads (one transaction), so it may run beside a server
        store = open_store(target, lock=args.action == "import")
        try:
            if args.action == "export":
                games = [] if shelf is None else shelf.recordings()
                found = ((r.id, shelf.read(r.id)) for r in games if shelf is not None)
                counts = export_world(store, Path(args.file), found)
            else:
                counts = import_world(
                    store,
                    Path(args.file),
                    replace=args.replace,
                    recordings=None if shelf is None else shelf.put,
                )
        finally:
            store.close()
    except (StoreError, RecordingError, OSError) as exc:
        print(f"underhall db {args.action}: {exc}", file=sys.stderr)
        return 1
    verb = "exported to" if args.action == "export" else "imported from"
    print(
        f"{verb} {args.file}: {counts['meta']} meta, {counts['players']} players, "
        f"{counts['levels']} levels, {counts['recordings']} recorded games ({store.url})"
    )
    return 0


def admin_main(args: argparse.Namespace) -> int:
    """Send one admin command to the running server; print the answer.

    Exit status 0 if done, 1 if the server refused it, 2 if no server answers.
    """
    from server.net.admin import request

    if args.admin_socket is not None:
        path = args.admin_socket
    else:
        config = load_config(args.config) if args.config is not None else {}
        if config.get("admin_socket"):
            path = Path(str(config["admin_socket"]))
        else:
            path = default_admin_socket(args.db or config.get("db") or default_db())
    req: dict[str, Any] = {"cmd": args.action}
    for key in ("name", "reason", "text", "grace", "types", "sites", "garbage"):
        value = getattr(args, key, None)
        if value is not None:
            req[key] = " ".join(value) if key == "text" else value
    try:
        answer = request(path, req)
    except (OSError, ValueError) as exc:
        print(f"underhall admin: no server answers on {path}: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(answer))
    elif not answer.get("ok"):
        print(f"underhall admin: {answer.get('error')}", file=sys.stderr)
    else:
        _print_admin_answer(args.action, answer)
    return 0 if answer.get("ok") else 1


def _print_admin_answer(action: str, answer: dict[str, Any]) -> None:
    if action == "who":
        players = answer.get("players", [])
        gateway = answer.get("gateway")  # a cluster gateway's answer
        cluster = answer.get("cluster")  # ... with every gateway's players
        listed = (
            [{**p, "gateway": g["gateway"]} for g in cluster for p in g.get("players", [])]
            if cluster is not None
            else players
        )
        for p in sorted(listed, key=lambda p: (str(p["name"]).lower(), str(p.get("gateway")))):
            if gateway is None:
                where = f"level {p.get('level')!s:>3}"
            else:
                where = f"worker {p.get('worker')} epoch {p.get('epoch')} {p.get('state')}"
                if cluster is not None:
                    where = f"gateway {p.get('gateway')}  {where}"
            print(f"{p['name']:<16} depth {p['depth']!s:>3}  {where}  {p.get('address') or ''}")
        state = ", draining" if answer.get("draining") else ""
        if gateway is not None:
            workers = ", ".join(answer.get("workers", [])) or "none"
            state += f", gateway {gateway}, live workers: {workers}"
        print(f"{len(players)} playing (tick {answer.get('tick')}{state})")
        if cluster is not None:
            each = ", ".join(f"{g['gateway']} {len(g.get('players', []))}" for g in cluster)
            print(f"{len(listed)} playing in the cluster ({each}){_silent(answer)}")
    elif action == "memory":  # nested counts: shown as they come
        print(json.dumps({k: v for k, v in answer.items() if k != "ok"}, indent=1))
    elif action == "bans":
        for b in answer.get("bans", []):
            print(f"{b['name']:<16} {b['reason']}")
        print(f"{len(answer.get('bans', []))} banned")
    elif action in ("kick", "ban") and "gateways" in answer:  # a cluster gateway's answer
        verb = "kicked" if action == "kick" else "banned"
        asked = ", ".join(answer["gateways"])
        if answer.get("online"):
            found = f"disconnected from {', '.join(answer.get('where', []))}"
        else:
            found = f"not playing on the gateways that answered ({asked})"
        held = (
            f"; held out of every gateway for {answer['hold_s']:.0f} s"
            if "hold_s" in answer
            else ""
        )
        print(f"{verb} {answer.get('name')}: {found}{held}{_silent(answer)}")
    else:
        print(", ".join(f"{k} {v}" for k, v in answer.items() if k != "ok") or "done")


def _silent(answer: dict[str, Any]) -> str:
    """``"; no answer from g3"`` for a cluster gateway's answer naming silent gateways."""
    silent = answer.get("silent") or []
    return f"; no answer from {', '.join(silent)}" if silent else ""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``underhall``."""
    parser = argparse.ArgumentParser(
        prog="underhall",
        description="A shared roguelike dungeon: server, client and bots.",
        epilog=ENVIRONMENT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser(
        "serve",
        help="host a dungeon",
        description="Host a dungeon.",
        epilog=ENVIRONMENT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--host", help="interface to bind (default 127.0.0.1)")
    p.add_argument("--port", type=_port, help="TCP port, 0 for any (default 8765)")
    p.add_argument(
        "--seed", type=int, default=None, help="world seed for a new world (default: random)"
    )
    p.add_argument(
        "--tick-rate",
        type=int,
        choices=range(1, 61),
        metavar="HZ",
        help="ticks per second, 1-60 (default 10)",
    )
    p.add_argument(
        "--db",
        help="SQLite file, or postgresql://USER@HOST/DB, holding the world and "
        f"players (default {default_db()})",
    )
    p.add_argument(
        "--save-s",
        type=float,
        default=None,
        metavar="S",
        help="seconds between two saves of the changed characters and levels; "
        "at most this much play is lost to a crash (default 3)",
    )
    p.add_argument("--max-players", type=_positive(int, "players"), help="default 5000")
    p.add_argument("--motd", help="message of the day")
    p.add_argument("--log-level", choices=LOG_LEVELS, help="default info")
    p.add_argument(
        "--log-format",
        choices=["text", "json"],
        help="text, or json: one object per line (default text)",
    )
    p.add_argument(
        "--metrics-port",
        type=int,
        default=None,
        help="also serve /metrics, /healthz and /readyz on this port "
        "(they are always on the game port)",
    )
    p.add_argument(
        "--drain-s",
        type=float,
        default=None,
        metavar="S",
        help="seconds from SIGTERM to the last connection closed (default 10)",
    )
    p.add_argument(
        "--level-idle-s",
        type=float,
        default=None,
        metavar="S",
        help="put away (save and drop from memory) a level nobody has been on for S "
        "seconds; its monsters are restocked when someone comes back (default 300; 0: never)",
    )
    p.add_argument(
        "--tls-cert",
        type=Path,
        default=None,
        help="certificate chain (PEM): serve wss:// (with --tls-key)",
    )
    p.add_argument("--tls-key", type=Path, default=None, help="private key (PEM) of --tls-cert")
    p.add_argument(
        "--admin-socket",
        type=Path,
        default=None,
        help="admin Unix socket (default: beside the database, DB.admin.sock)",
    )
    p.add_argument(
        "--record-world",
        type=Path,
        default=None,
        metavar="DIR",
        help="write a recording of the world (seed, joins, leaves, every command, a "
        "checksum per tick) to a new file in DIR, for `underhall replay-world` and bug reports",
    )
    p.add_argument(
        "--recordings",
        default=None,
        metavar="DIR|URL",
        help="keep every player's game (the frames it was written) in DIR or the "
        "PostgreSQL database at URL, for `underhall replay` and /recordings/ (default: "
        "beside the database, DB.recordings, or in it when it is PostgreSQL; off: none)",
    )
    p.add_argument(
        "--recordings-max-mb",
        type=int,
        default=None,
        metavar="MB",
        help="delete the oldest finished recordings beyond MB in all (default 1024)",
    )
    p.add_argument(
        "--recordings-days",
        type=float,
        default=None,
        metavar="DAYS",
        help="delete finished recordings older than DAYS (default 30)",
    )
    add_limit_options(p)
    p.add_argument(
        "--config",
        type=Path,
        default=None,
        help="TOML file with any of these options (command line wins)",
    )
    p.set_defaults(func=serve_main)

    p = sub.add_parser(
        "replay",
        help="replay a recorded game in this terminal",
        description="Replay a player's recorded game in this terminal, as the player "
        "saw it: space pauses, 1 2 4 8 set the speed, the arrows seek 10 or 100 "
        "turns, g and G go to the start and the end, q quits.",
    )
    p.add_argument(
        "what",
        help="a recording file (.uhrec), a recording's id, or a player's name (their newest game)",
    )
    p.add_argument(
        "--url",
        default=None,
        help="fetch it from this server (ws://, wss://, http:// or https://) "
        "instead of this machine's recordings",
    )
    p.add_argument(
        "--dir",
        type=Path,
        default=None,
        help="the recordings directory to look in (default: the default database's, DB.recordings)",
    )
    p.set_defaults(func=replay_main)

    p = sub.add_parser(
        "replay-world",
        help="re-run a recording of the world (serve --record-world) and check it",
        description="Re-run the simulation headless from a recording made by "
        "`underhall serve --record-world DIR` and check that every recorded tick's "
        "checksum is reproduced. Prints a summary; the exit status is 1 if the "
        "replay diverged (the summary says at which tick and what differs), 2 if "
        "the file cannot be read.",
    )
    p.add_argument(
        "path",
        help="a recording (world-*.msgpack.gz), or a directory: its newest recording",
    )
    p.set_defaults(func=replay_world_main)

    p = sub.add_parser(
        "play",
        help="play in a terminal",
        description="Play in this terminal.",
        epilog=ENVIRONMENT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _terminal_client_options(p, "character name")
    p.add_argument(
        "--class",
        dest="cls",
        default=None,
        help="class of a new character (warrior, mage, monk on the default "
        "server; a server that has no such class lists its own)",
    )
    p.set_defaults(func=play_main)

    p = sub.add_parser(
        "watch",
        help="watch a player live in a terminal, read-only",
        description="Watch a player live in this terminal, as a spectator: you see what "
        "the player sees and can chat with the player and its other spectators, but act "
        "on nothing (docs/protocol.md, 'Watching a player'). Q quits.",
        epilog=ENVIRONMENT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("player", type=_player_name, help="the name of the player to watch")
    _terminal_client_options(p, "your name in the chat")
    p.set_defaults(func=watch_main)

    p = sub.add_parser(
        "bots",
        help="load-test a server with headless bots",
        description="Run N headless bots against a server and report.",
        epilog=ENVIRONMENT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--url", required=True, type=_ws_url, help="server, e.g. ws://127.0.0.1:8765")
    p.add_argument(
        "-n", type=_positive(int, "bots"), default=10, help="number of bots (default 10)"
    )
    p.add_argument(
        "--duration", type=_positive(float, "seconds"), default=30.0, help="seconds (default 30)"
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--seed", type=int, default=0, help="seed of the bots' choices")
    p.add_argument(
        "--prefix",
        default="bot",
        help="bot names are PREFIX0, PREFIX1, ... (default %(default)s); their "
        "tokens are kept like a player's, so a rerun resumes the same bots",
    )
    p.add_argument(
        "--ca",
        default=None,
        metavar="FILE",
        help="certificate authority (PEM) to trust for a wss:// server (also $UNDERHALL_CA)",
    )
    p.add_argument(
        "--lean",
        action="store_true",
        help="lean walking clients (client/loadgen.py), thousands per core, instead "
        "of the explore-and-fight bots; live line on a terminal",
    )
    p.add_argument(
        "--rate",
        type=float,
        default=100.0,
        help="with --lean: joins per second (default %(default)s)",
    )
    p.add_argument(
        "--procs", type=int, default=1, help="with --lean: worker processes (default %(default)s)"
    )
    p.add_argument(
        "--depths",
        type=int,
        default=1,
        help="with --lean: spread over depths 1..D by the stairs (default 1)",
    )
    p.add_argument(
        "--walk-every",
        type=int,
        default=1,
        help="with --lean and --depths: one client in K walks once arrived",
    )
    p.add_argument(
        "--jsonl",
        action="store_true",
        help="with --lean: a JSON snapshot of the counters every second",
    )
    p.add_argument(
        "--forget", action="store_true", help="with --lean: do not read or save resume tokens"
    )
    p.set_defaults(func=bots_main)

    p = sub.add_parser(
        "db",
        help="back up a world, or move it between databases",
        description="Copy a world to or from a JSON-lines file (one row per "
        "line, records in base64). Export reads in one transaction "
        "and may run beside a server; import needs the database "
        "to itself.",
    )
    p.add_argument("action", choices=["export", "import"])
    p.add_argument("file", help="the JSON-lines file to write or read")
    p.add_argument(
        "--db",
        default=None,
        help=f"SQLite file or postgresql://USER@HOST/DB (default {default_db()})",
    )
    p.add_argument(
        "--replace", action="store_true", help="import over a database that already holds a world"
    )
    p.add_argument(
        "--recordings",
        default=None,
        metavar="DIR",
        help="the recorded games to export, or where imported ones go (default: "
        "beside the database, DB.recordings; off: none)",
    )
    p.set_defaults(func=db_main)

    p = sub.add_parser(
        "admin",
        help="manage a running server (on its machine)",
        description="Send an operator command to the running server over its "
        "admin Unix socket (only the server's user can open it). A cluster gateway "
        "started with --admin-socket PATH answers who, kick, broadcast and shutdown "
        "on that path.",
    )
    p.add_argument(
        "--admin-socket",
        type=Path,
        default=None,
        help="the server's admin socket (default: beside --db), or a gateway's",
    )
    p.add_argument(
        "--db",
        default=None,
        help=f"the server's database, to find its socket (default {default_db()})",
    )
    p.add_argument(
        "--config",
        type=Path,
        default=None,
        help="the server's TOML configuration, to find its socket",
    )
    p.add_argument("--json", action="store_true", help="print the answer as JSON")
    act = p.add_subparsers(dest="action", required=True)
    act.add_parser("who", help="list the players online")
    act.add_parser("bans", help="list the banned names")
    q = act.add_parser("kick", help="disconnect a player (kept out for a minute)")
    q.add_argument("name")
    q = act.add_parser("ban", help="ban a name (kept across restarts) and disconnect it")
    q.add_argument("name")
    q.add_argument("--reason", default=None)
    q = act.add_parser("unban", help="lift a ban")
    q.add_argument("name")
    q = act.add_parser("broadcast", help="send every player a notice")
    q.add_argument("text", nargs="+")
    act.add_parser("save", help="save every character and level now")
    q = act.add_parser(
        "memory",
        help="what the server holds: resident memory, players, levels, floors, caches",
    )
    q.add_argument(
        "--types", type=int, default=0, metavar="N", help="also the N most numerous object types"
    )
    q.add_argument(
        "--sites",
        type=int,
        default=0,
        metavar="N",
        help="also the N allocation sites holding most memory (server under PYTHONTRACEMALLOC=1)",
    )
    q.add_argument(
        "--garbage",
        type=int,
        default=0,
        metavar="N",
        help="also collect everything and list the N commonest types of cyclic garbage freed",
    )
    q = act.add_parser("shutdown", help="drain: warn the players, save, stop")
    q.add_argument(
        "--grace",
        type=float,
        default=None,
        metavar="S",
        help="seconds of play left to the players (default: the server's drain)",
    )
    p.set_defaults(func=admin_main)
    _cluster_parsers(sub)
    return parser


def _cluster_parsers(sub: Any) -> None:
    """The ``worker`` and ``gateway`` subcommands (docs/cluster.md)."""
    p = sub.add_parser(
        "worker",
        help="run dungeon levels for a cluster (NATS + PostgreSQL)",
        description="Tick the levels this worker holds a lease on; see docs/cluster.md.",
    )
    p.add_argument("--nats", default="nats://127.0.0.1:4222", help="NATS server URL")
    p.add_argument("--db", required=True, help="postgresql://USER@HOST/DB of the world")
    p.add_argument(
        "--motd",
        default=SERVE_DEFAULTS["motd"],
        help="message of the day, in every player's welcome (default %(default)r)",
    )
    p.add_argument("--id", default=None, help="worker id (default: worker-<pid>)")
    p.add_argument("--prefix", default="uh", help="subject and bucket prefix of the cluster")
    p.add_argument("--seed", type=int, default=None, help="world seed for a new world")
    p.add_argument("--levels", default="", help="depths to claim at start and when free, e.g. 1,2")
    p.add_argument("--tick-rate", type=int, default=10, help="ticks per second")
    p.add_argument("--lease", type=float, default=6.0, help="lease time in seconds")
    p.add_argument(
        "--save-interval", type=float, default=3.0, help="seconds between two checkpoints"
    )
    p.add_argument(
        "--no-monsters", action="store_true", help="levels without monsters (tests, benches)"
    )
    p.add_argument("--log-level", default="info", help="debug, info, warning or error")
    p.add_argument(
        "--log-format",
        choices=["text", "json"],
        default="text",
        help="text, or json: one object per line (default text)",
    )
    p.add_argument(
        "--metrics-port",
        type=_port,
        default=None,
        help="serve /metrics, /healthz and /readyz on this TCP port, 0 for any (default: none)",
    )
    p.add_argument(
        "--metrics-host",
        default="127.0.0.1",
        help="interface of --metrics-port (default %(default)s)",
    )
    p.set_defaults(func=worker_main)

    p = sub.add_parser(
        "gateway",
        help="serve players' websockets for a cluster",
        description="Speak the client protocol and route players to the workers; "
        "see docs/cluster.md.",
    )
    p.add_argument("--nats", default="nats://127.0.0.1:4222", help="NATS server URL")
    p.add_argument("--host", default="127.0.0.1", help="interface to bind")
    p.add_argument("--port", type=int, default=8765, help="TCP port (0: any free one)")
    p.add_argument("--id", default=None, help="gateway id (default: gateway-<pid>)")
    p.add_argument("--prefix", default="uh", help="subject prefix of the cluster")
    add_limit_options(p)
    p.add_argument(
        "--max-players",
        type=int,
        metavar="N",
        default=None,
        help="players this gateway seats at most; more are refused server_full (default: no cap)",
    )
    p.add_argument(
        "--admin-socket",
        type=Path,
        default=None,
        metavar="PATH",
        help="admin Unix socket for `underhall admin --admin-socket PATH` (default: none)",
    )
    p.add_argument(
        "--recordings",
        default=None,
        metavar="DIR|URL",
        help="keep the game of every player of this gateway in DIR, or in the PostgreSQL "
        "database at URL (the cluster's, say), for `underhall replay` and /recordings/ "
        "(default: none; a directory of its own for each gateway)",
    )
    p.add_argument("--recordings-max-mb", type=int, default=1024, metavar="MB")
    p.add_argument("--recordings-days", type=float, default=30.0, metavar="DAYS")
    p.add_argument("--log-level", default="info", help="debug, info, warning or error")
    p.set_defaults(func=gateway_main)


def _terminal_client_options(p: argparse.ArgumentParser, name: str) -> None:
    """``--url``, ``--name`` (meaning ``name``) and ``--ca`` of ``play`` and ``watch``."""
    p.add_argument(
        "--url", default="ws://127.0.0.1:8765", type=_ws_url, help="server (default %(default)s)"
    )
    p.add_argument(
        "--name",
        default=_login_name(),
        type=_player_name,
        help=f"{name}, 1-16 of A-Z a-z 0-9 _ - (default %(default)s)",
    )
    p.add_argument(
        "--ca",
        default=None,
        metavar="FILE",
        help="certificate authority (PEM) to trust for a wss:// server (also $UNDERHALL_CA)",
    )


def add_limit_options(p: argparse.ArgumentParser) -> None:
    """The network limits' options, which ``serve`` and ``gateway`` share
    (unset ones are None: :func:`resolve_limit_options` fills them)."""
    p.add_argument(
        "--max-conns-per-addr",
        type=int,
        metavar="N",
        help="concurrent connections per IP address, 0 for no cap (default "
        f"{SERVE_DEFAULTS['max_conns_per_addr']})",
    )
    p.add_argument(
        "--new-chars-per-hour",
        type=int,
        metavar="N",
        help="new characters per IP address per hour, 0 for no cap (default "
        f"{SERVE_DEFAULTS['new_chars_per_hour']})",
    )
    p.add_argument(
        "--token-failures-per-name",
        type=int,
        metavar="N",
        help="failed token attempts per name per minute after which the "
        "addresses that made them may not try that name for a while; others "
        "(its owner) still may (default "
        f"{SERVE_DEFAULTS['token_failures_per_name']})",
    )
    p.add_argument(
        "--token-failures-per-addr",
        type=int,
        metavar="N",
        help="failed token attempts per IP address per minute, for any names, "
        "after which that address may not join at all for a while "
        f"(default {SERVE_DEFAULTS['token_failures_per_addr']})",
    )
    p.add_argument(
        "--keepalive-interval",
        type=float,
        metavar="S",
        help="seconds between keepalive pings to each client (default "
        f"{SERVE_DEFAULTS['keepalive_interval']:g})",
    )
    p.add_argument(
        "--keepalive-timeout",
        type=float,
        metavar="S",
        help="seconds a client may take to answer one; a silent client's "
        "character leaves the world at most interval + timeout seconds "
        f"after its last answer (default {SERVE_DEFAULTS['keepalive_timeout']:g})",
    )
    p.add_argument(
        "--trusted-proxy",
        metavar="ADDR[,ADDR...]",
        help="reverse proxies (addresses or networks such as 10.0.0.0/8) whose "
        "X-Forwarded-For or Forwarded header names the client: its address is "
        "then the one the per-address caps, the logs and `admin who` use "
        "(default: none)",
    )
    p.add_argument(
        "--allow-origin",
        metavar="ORIGIN[,ORIGIN...]",
        help="web pages (such as https://example.org) besides this port's own "
        "whose browsers may open game connections here; a browser's connection "
        "from any other origin is refused, other clients are not concerned "
        "(default: none)",
    )
    p.add_argument(
        "--allow-host",
        metavar="NAME[,NAME...]",
        help="host names (such as dungeon.example.org; '*': any) browsers may "
        "reach this port by, besides IP addresses, localhost, this machine's "
        "name, --host and the hosts of --allow-origin: the page, the lobby "
        "and a browser's game connection under any other name are refused "
        "(DNS rebinding; default: none)",
    )


def worker_main(args: argparse.Namespace) -> int:
    """``underhall worker``: run until SIGTERM, then drain.

    Exit status 0 when stopped, 1 if ``--metrics-port`` cannot be bound.
    """
    from server.cluster.worker import Worker
    from server.net.logs import setup_logging

    setup_logging(args.log_level, args.log_format)
    if not str(args.db).startswith(("postgresql://", "postgres://")):
        raise SystemExit("underhall worker: --db must be a postgresql:// URL")
    if args.metrics_port is not None:
        busy = check_port_free(args.metrics_host, args.metrics_port)
        if busy is not None:
            where = f"{args.metrics_host}:{args.metrics_port}"
            print(f"underhall worker: cannot serve metrics on {where}: {busy}", file=sys.stderr)
            return 1
    worker = Worker(
        args.nats,
        args.db,
        worker_id=args.id or f"worker-{os.getpid()}",
        prefix=args.prefix,
        seed=args.seed,
        levels=tuple(int(d) for d in args.levels.split(",") if d.strip()),
        tick_rate=args.tick_rate,
        lease_s=args.lease,
        monsters=not args.no_monsters,
        save_interval_s=args.save_interval,
        metrics_port=args.metrics_port,
        metrics_host=args.metrics_host,
        motd=str(args.motd),
    )
    _use_uvloop()

    def say(line: str) -> None:
        if args.log_format == "json":  # every line of output is then one JSON object
            print(json.dumps({"event": "ready", "msg": line}), flush=True)
        else:
            print(line, flush=True)

    def started(ready: asyncio.Future[str]) -> None:
        say(f"worker {ready.result()} ready")
        if worker.metrics_port is not None:
            say(f"metrics on http://{args.metrics_host}:{worker.metrics_port}/metrics")

    async def main() -> None:
        ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        ready.add_done_callback(started)
        await worker.run(ready)

    asyncio.run(main())
    return 0


def gateway_main(args: argparse.Namespace) -> int:
    """``underhall gateway``: serve until SIGTERM (or ``admin shutdown``).

    Exit status 0 when stopped, 1 if the port or the admin socket cannot be bound.
    """
    from server.cluster.gateway import Gateway
    from server.net.front import FrontOptions
    from server.net.logs import setup_logging

    setup_logging(args.log_level, "text")
    for key in LIMIT_KEYS:
        if getattr(args, key) is None:
            setattr(args, key, SERVE_DEFAULTS[key])
    check_limit_options(args, "gateway")
    if args.max_players is not None and args.max_players < 1:
        raise SystemExit("underhall gateway: max_players must be at least 1")
    gateway = Gateway(
        args.nats,
        gateway_id=args.id or f"gateway-{os.getpid()}",
        front=FrontOptions(args.host, args.port, net_limits(args), args.admin_socket),
        prefix=args.prefix,
        max_players=args.max_players,
    )
    from server.content.loader import default_content

    gateway.web = web_site(_classes(default_content()))
    if args.recordings is not None:
        if args.recordings_max_mb < 1 or not args.recordings_days > 0:
            raise SystemExit("underhall gateway: recordings_max_mb and recordings_days must be > 0")
        gateway.recorder = _recorder(args.recordings, args.recordings_max_mb, args.recordings_days)
        gateway.web.recordings = gateway.recorder.shelf
    _use_uvloop()

    async def main() -> None:
        ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        ready.add_done_callback(
            lambda f: print(f"listening on ws://{args.host}:{f.result()}", flush=True)
        )
        await gateway.run(ready)

    try:
        asyncio.run(main())
    except OSError as exc:
        print(f"underhall gateway: {exc.strerror or exc}", file=sys.stderr)
        return 1
    finally:
        if gateway.recorder is not None:
            gateway.recorder.close()
    return 0


def _recorder(where: Path | str, max_mb: int, days: float) -> Any:
    """The :class:`server.game.recordings.Recorder` of a front's games, in
    ``where``: a directory, or a ``postgresql://`` database.

    Raises:
        RecordingError: the database cannot be reached.
    """
    from protocol.version import PROTOCOL_VERSION
    from server.game.recordings import Caps, Recorder, open_shelf

    return Recorder(open_shelf(where), PROTOCOL_VERSION, caps=Caps(max_mb * 10**6, days * 86400.0))


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
    "host": str,
    "port": int,
    "seed": int,
    "tick_rate": int,
    "db": str,
    "max_players": int,
    "motd": str,
    "log_level": str,
    "save_s": float,
    "log_format": str,
    "metrics_port": int,
    "drain_s": float,
    "level_idle_s": float,
    "tls_cert": str,
    "tls_key": str,
    "admin_socket": str,
    "max_conns_per_addr": int,
    "new_chars_per_hour": int,
    "token_failures_per_name": int,
    "token_failures_per_addr": int,
    "keepalive_interval": float,
    "keepalive_timeout": float,
    "trusted_proxy": str,
    "allow_origin": str,
    "allow_host": str,
    "record_world": str,
    "recordings": str,
    "recordings_max_mb": int,
    "recordings_days": float,
}
PATH_KEYS = ("tls_cert", "tls_key", "admin_socket", "record_world")


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
            raise SystemExit(
                f"underhall serve: {path}: unknown key {key!r} "
                f"(known: {', '.join(sorted(CONFIG_KEYS))})"
            )
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise SystemExit(f"underhall serve: {path}: {key!r} must be {kind.__name__}")
        out[key] = Path(str(value)) if key in PATH_KEYS else value
    return out


SERVE_DEFAULTS: dict[str, object] = {
    "host": "127.0.0.1",
    "port": 8765,
    "seed": None,
    "tick_rate": 10,
    "db": None,
    "max_players": 5000,
    "motd": "Welcome to Underhall.",
    "log_level": "info",
    "save_s": 3.0,
    "log_format": "text",
    "metrics_port": None,
    "drain_s": 10.0,
    "level_idle_s": 300.0,
    "tls_cert": None,
    "tls_key": None,
    "admin_socket": None,
    "max_conns_per_addr": 32,
    "new_chars_per_hour": 30,
    "token_failures_per_name": 10,
    "token_failures_per_addr": 30,
    "keepalive_interval": 5.0,
    "keepalive_timeout": 10.0,
    "trusted_proxy": "",
    "allow_origin": "",
    "allow_host": "",
    "record_world": None,
    "recordings": None,
    "recordings_max_mb": 1024,
    "recordings_days": 30.0,
}


def resolve_serve_options(args: argparse.Namespace) -> None:
    """Fill unset ``serve`` options: command line, then ``--config``, then defaults."""
    config = load_config(args.config) if args.config is not None else {}
    for key, default in SERVE_DEFAULTS.items():
        if getattr(args, key) is None:
            setattr(args, key, config.get(key, default))
    if args.db is None:
        args.db = default_db()
    where = f" (from {args.config})" if args.config is not None else ""
    if not 1 <= int(args.tick_rate) <= 60:
        raise SystemExit(f"underhall serve: tick_rate must be 1-60{where}")
    if not 0 <= int(args.port) <= 65535:
        raise SystemExit(f"underhall serve: port {args.port} is not in 0-65535{where}")
    if int(args.max_players) < 1:
        raise SystemExit(f"underhall serve: max_players must be at least 1{where}")
    if str(args.log_level).lower() not in LOG_LEVELS:
        raise SystemExit(
            f"underhall serve: log_level {args.log_level!r} is not one of "
            f"{', '.join(LOG_LEVELS)}{where}"
        )
    if not 0 < float(args.save_s) <= 3600:
        raise SystemExit("underhall serve: save_s must be above 0 and at most 3600")
    if args.log_format not in ("text", "json"):
        raise SystemExit("underhall serve: log_format must be text or json")
    if not 0 <= float(args.drain_s) <= 3600:
        raise SystemExit("underhall serve: drain_s must be 0-3600 seconds")
    if not 0 <= float(args.level_idle_s) <= 86400:
        raise SystemExit("underhall serve: level_idle_s must be 0-86400 seconds")
    if int(args.recordings_max_mb) < 1:
        raise SystemExit("underhall serve: recordings_max_mb must be at least 1")
    if not float(args.recordings_days) > 0:
        raise SystemExit("underhall serve: recordings_days must be more than 0")
    check_limit_options(args, "serve")


LIMIT_KEYS = (
    "max_conns_per_addr",
    "new_chars_per_hour",
    "token_failures_per_name",
    "token_failures_per_addr",
    "keepalive_interval",
    "keepalive_timeout",
    "trusted_proxy",
    "allow_origin",
    "allow_host",
)
"""The options of :func:`add_limit_options` (their ``SERVE_DEFAULTS`` keys)."""


def check_limit_options(args: argparse.Namespace, command: str) -> None:
    """Check the resolved network limits' options of ``underhall COMMAND``.

    Raises:
        SystemExit: With a message naming the option, for a negative cap, a
            keepalive time that is not positive, or a trusted proxy that is
            not an IP address or network.
    """
    from server.net.guard import parse_networks

    for key in LIMIT_KEYS[:4]:
        if int(getattr(args, key)) < 0:
            raise SystemExit(f"underhall {command}: {key} must be 0 or more")
    for key in ("keepalive_interval", "keepalive_timeout"):
        if not float(getattr(args, key)) > 0:
            raise SystemExit(f"underhall {command}: {key} must be more than 0 seconds")
    try:
        parse_networks(_proxies(args))
    except ValueError as exc:
        raise SystemExit(f"underhall {command}: trusted_proxy: {exc}") from None
    from server.net.web import parse_hosts, parse_origins

    try:
        parse_origins(str(args.allow_origin or ""))
    except ValueError as exc:
        raise SystemExit(f"underhall {command}: allow_origin: {exc}") from None
    try:
        parse_hosts(str(args.allow_host or ""))
    except ValueError as exc:
        raise SystemExit(f"underhall {command}: allow_host: {exc}") from None


def _proxies(args: argparse.Namespace) -> tuple[str, ...]:
    return tuple(p.strip() for p in str(args.trusted_proxy or "").split(",") if p.strip())


def net_limits(args: argparse.Namespace) -> Any:
    """The :class:`server.net.guard.NetLimits` of resolved ``serve`` options."""
    from server.net.guard import NetLimits
    from server.net.web import parse_hosts, parse_origins

    return NetLimits(
        max_conns_per_addr=int(args.max_conns_per_addr),
        new_chars_per_hour=int(args.new_chars_per_hour),
        token_failures_per_name=int(args.token_failures_per_name),
        token_failures_per_addr=int(args.token_failures_per_addr),
        keepalive_interval_s=float(args.keepalive_interval),
        keepalive_timeout_s=float(args.keepalive_timeout),
        trusted_proxies=_proxies(args),
        allowed_origins=parse_origins(str(args.allow_origin or "")),
        allowed_hosts=parse_hosts(str(args.allow_host or "")),
    )


def web_site(classes: Any) -> Any:
    """The :class:`server.net.web.WebSite` of the packaged browser client
    (``client/web/static``), offering ``classes`` (``[key, name]``) in its lobby."""
    from client.web import STATIC
    from server.net.web import WebSite

    return WebSite(STATIC, classes)


def _classes(content: Any) -> list[tuple[str, str]]:
    """The ``[key, name]`` of the classes a new character may take."""
    return [(c.key, c.name) for c in content.classes.values() if not c.hidden]


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``underhall`` console script."""
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
