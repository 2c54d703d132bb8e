"""A lean load generator: thousands of walking clients per core.

Each client is an :class:`asyncio.Protocol` on a raw transport (uvloop when
installed) that drives websockets' sans-I/O :class:`~websockets.client.ClientProtocol`
(``receive_data`` / ``events_received`` / ``data_to_send``) for the opening
handshake, control frames (ping, close) and anything unusual, and decodes
frames with msgpack, skipping the full client model of :mod:`client.bots`.
The common case takes a lean path that costs a third as much: while the
connection is open and websockets holds no partial frame, whole unmasked
binary frames are cut out of the received bytes here, and each command is
framed here (masked, RFC 6455 section 5.3, with websockets' ``apply_mask``). A client
says ``hello`` (its name and class), then walks: after the ``ack`` of its last
command it waits until its character can act again (``me.speed`` ticks, less
a random part of one tick, as :mod:`client.bots` does) and sends its next
``move``; a ``reject`` of that command makes it try another direction at
once (a ``reject`` message in protocol 2, a ``rej`` entry of the frame in
protocol 3). It keeps going in one direction while the remembered map shows a
walkable cell ahead, else turns to a random walkable neighbour.

With ``depths`` > 1 (the *spread* scene), client ``i`` first goes down the
stairs to depth ``1 + i % depths`` (python-tcod paths over its remembered map
to known down stairs, else to the nearest unexplored cell), then only one in
``walk_every`` of them keeps walking; the others stay where they are and
only read.

The clients are :class:`client.leanclient.LeanClient`; what is measured,
per process and cumulatively (:class:`client.loadstats.Counters`): frames
and payload bytes received, commands sent and answered, command→effect
latency (from sending a ``cmd`` to the first ``snap``/``delta`` whose ``ack``
reaches its ``seq``) as a 1 ms histogram, join latency (from the start of the
TCP connect to ``welcome`` and to the first ``snap``, also 1 ms histograms;
each client keeps its own times too), rejects by reason, ``error`` codes,
join refusals and connection failures, the depths clients stand on, and the
process's CPU time. ``procs`` > 1 runs the clients in that many worker
processes (multiprocessing, ``spawn``) and merges their counters.

Entry points: :func:`run_load` (blocking; returns the final merged snapshot),
:func:`run_load_async` (one process, in the running loop) and :func:`main`
(``python -m client.loadgen``, also behind ``underhall bots --lean``).
Snapshots are plain dicts (JSON-able; see
:meth:`client.loadstats.Counters.snapshot`); :func:`client.loadstats.diff`
of two of them describes the window between them.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import multiprocessing
import os
import random
import signal
import struct
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from multiprocessing.connection import Connection as Pipe
from typing import Any

import msgpack  # type: ignore[import-untyped]
import numpy as np
from websockets.uri import parse_uri

try:  # websockets' C helper, as its own frames use
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover -- built without its C extension
    from websockets.utils import apply_mask

from client.connection import _read_tokens, _server_key, token_path
from client.leanclient import ACK_TIMEOUT_S, DOOR_CLOSED, LAVA, UNKNOWN, LeanClient
from client.loadstats import Counters, format_report, live_line, merge
from protocol.limits import NAME_RE

__all__ = [
    "Generator", "LoadConfig", "main", "raise_open_files", "run_cli", "run_load",
    "run_load_async",
]  # fmt: skip

CLASSES: tuple[str, ...] = ("warrior", "warrior", "mage")
"""Classes of new characters, client ``i`` taking ``CLASSES[i % 3]`` (as the bots do)."""


@dataclass(slots=True)
class LoadConfig:
    """What to run. Times in seconds, rates in joins per second.

    Attributes:
        url: ``ws://host:port``.
        n: Clients in all.
        duration: Seconds from the first join to the end (``inf``: until interrupted).
        rate: Joins per second over all processes (the ramp).
        procs: Worker processes (1: run in this process).
        prefix: Client ``i`` is named ``f"{prefix}{i}"``.
        seed: Seed of the clients' random choices.
        depths: Spread the clients over depths ``1..depths`` by the stairs.
        walk_every: With ``depths`` > 1, one client in this many walks once arrived.
        classes: Classes of new characters in turn (``()``: the server's default).
        tokens: Resume tokens by name (from an earlier run); new ones are returned.
    """

    url: str
    n: int
    duration: float = float("inf")
    rate: float = 100.0
    procs: int = 1
    prefix: str = "lean"
    seed: int = 0
    depths: int = 1
    walk_every: int = 1
    classes: tuple[str, ...] = CLASSES
    tokens: dict[str, str] = field(default_factory=dict)

    def check(self) -> None:
        """Raises:
        ValueError: a value out of range, or a client name that is no valid player name.
        """
        if self.n < 0 or not self.duration > 0 or not self.rate > 0 or self.procs < 1:
            raise ValueError("need n >= 0, duration > 0, rate > 0 and procs >= 1")
        if self.depths < 1 or self.walk_every < 1:
            raise ValueError("need depths >= 1 and walk_every >= 1")
        for i in {0, max(self.n - 1, 0)}:
            if not NAME_RE.fullmatch(f"{self.prefix}{i}"):
                raise ValueError(f"client name {self.prefix}{i} is not a valid player name")
        parse_uri(self.url)  # raises InvalidURI, a ValueError


class Generator:
    """The clients of one process, their counters and shared helpers."""

    def __init__(self, cfg: LoadConfig, worker: int, procs: int) -> None:
        self.cfg = cfg
        self.worker = worker
        self.procs = procs
        self.uri = parse_uri(cfg.url)
        self.counters = Counters()
        self.rng = random.Random(f"{cfg.seed}/{worker}")
        self.np_rng = np.random.default_rng([cfg.seed, worker])
        self.pack = msgpack.Packer(use_bin_type=True).pack
        # A delta's keys are integers (protocol 11).
        self.unpack: Callable[[bytes], Any] = functools.partial(
            msgpack.unpackb, raw=False, strict_map_key=False
        )
        # Walkable terrain codes: floor-like passable ones and closed doors, not lava.
        # Fixed codes (docs/protocol.md); 255 (unknown) is not walkable.
        walk = [False] * 256
        for code in (2, 3, 4, 7, 9, 10, 11, 12):  # floor, doors, rubble, fountain, altar, stairs
            walk[code] = True
        self.passable = walk
        self.passable_np = np.array(walk, dtype=bool)
        self.passable_np[[DOOR_CLOSED, LAVA, UNKNOWN]] = False  # walkable_cells adds doors back
        self.clients: list[LeanClient] = []
        self.new_tokens: dict[str, str] = {}
        self._keys = os.urandom(4096)
        self._key_at = 0
        self.loop = asyncio.get_running_loop()

    def frame(self, payload: bytes) -> bytes:
        """A final binary websocket frame from a client (RFC 6455 5.2): masked with
        a random key drawn from a pool of ``os.urandom`` bytes."""
        k = self._key_at
        if k + 4 > len(self._keys):
            self._keys, k = os.urandom(4096), 0
        key = self._keys[k : k + 4]
        self._key_at = k + 4
        n = len(payload)
        if n < 126:
            head = bytes((0x82, 0x80 | n))
        elif n < 65536:
            head = struct.pack("!BBH", 0x82, 0xFE, n)
        else:
            head = struct.pack("!BBQ", 0x82, 0xFF, n)
        return head + key + apply_mask(payload, key)

    async def ramp(self) -> None:
        """Open this process's share of the connections, ``rate / procs`` per second."""
        cfg = self.cfg
        mine = range(self.worker, cfg.n, self.procs)
        per_s = cfg.rate / self.procs
        host, port = self.uri.host, self.uri.port
        start = time.perf_counter()
        tasks: set[asyncio.Task[Any]] = set()
        for k, i in enumerate(mine):
            delay = start + k / per_s - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            client = LeanClient(self, i)
            self.clients.append(client)
            self.counters.joins += 1
            task = asyncio.create_task(self._connect(client, host, port))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        if tasks:
            await asyncio.gather(*tasks)

    async def _connect(self, client: LeanClient, host: str, port: int) -> None:
        client.connect_t = time.perf_counter()
        try:
            await self.loop.create_connection(lambda: client, host, port)
        except OSError as exc:
            self.counters.connect_failures[exc.strerror or type(exc).__name__] += 1

    def resend_stuck(self) -> None:
        """Let clients whose last command went unanswered for too long act again."""
        now = time.perf_counter()
        for c in self.clients:
            if c.playing and not c.answered and c.timer is None and now - c.sent_t > ACK_TIMEOUT_S:
                c.answered = True
                c.act()

    async def close_all(self) -> None:
        """Close every connection; wait up to 2 s for the closing handshakes."""
        for c in self.clients:
            c.close()
        deadline = time.perf_counter() + 2.0
        while self.counters.connected > 0 and time.perf_counter() < deadline:
            await asyncio.sleep(0.05)

    def snapshot(self) -> dict[str, Any]:
        """:meth:`Counters.snapshot` over this process's clients."""
        return self.counters.snapshot(self.clients)


async def run_load_async(
    cfg: LoadConfig,
    *,
    on_snapshot: Callable[[dict[str, Any]], None] | None = None,
    stop: asyncio.Event | None = None,
    worker: int = 0,
    procs: int = 1,
) -> tuple[dict[str, Any], dict[str, str]]:
    """Run this process's share of the clients in the running loop.

    Calls ``on_snapshot`` with a snapshot about once a second; ends after
    ``cfg.duration`` seconds or when ``stop`` is set, closing every connection.

    Returns:
        The final snapshot and the resume tokens of new characters by name.
    """
    gen = Generator(cfg, worker, procs)
    stop = stop or asyncio.Event()
    started = time.perf_counter()
    ramp = asyncio.create_task(gen.ramp())
    try:
        while not stop.is_set():
            left = cfg.duration - (time.perf_counter() - started)
            if left <= 0:
                break
            try:
                await asyncio.wait_for(stop.wait(), min(1.0, left))
            except TimeoutError:
                pass
            gen.resend_stuck()
            if on_snapshot is not None:
                on_snapshot(gen.snapshot())
    finally:
        ramp.cancel()
        await asyncio.gather(ramp, return_exceptions=True)
        before = gen.snapshot()  # where the clients stood, before they leave
        await gen.close_all()
    final = gen.snapshot()
    final["depths"], final["settled"] = before["depths"], before["settled"]
    return final, gen.new_tokens


def raise_open_files(wanted: int) -> int:
    """Raise this process's soft limit of open files towards ``wanted`` (at most the
    hard limit), so thousands of sockets fit; return the soft limit now in force."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        new = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
        soft = new
    return int(soft)


def _new_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def _worker_main(cfg: LoadConfig, worker: int, procs: int, pipe: Pipe) -> None:
    """A worker process: run its clients, send snapshots up ``pipe``, stop on ``"stop"``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop

    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        def asked() -> None:  # the parent wrote "stop"; stop watching the pipe
            loop.remove_reader(pipe.fileno())
            stop.set()

        loop.add_reader(pipe.fileno(), asked)
        final, tokens = await run_load_async(
            cfg, on_snapshot=pipe.send, stop=stop, worker=worker, procs=procs
        )
        final["final"] = True
        final["tokens"] = tokens
        pipe.send(final)

    with asyncio.Runner(loop_factory=_new_loop) as runner:
        runner.run(run())


class _Stopper:
    """Set by SIGINT / SIGTERM."""

    def __init__(self) -> None:
        self.stopped = False

    def __call__(self, *_: object) -> None:
        self.stopped = True


def run_load(
    cfg: LoadConfig, on_snapshot: Callable[[dict[str, Any]], None] | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """Run the load (``cfg.procs`` processes) until ``cfg.duration`` or SIGINT / SIGTERM.

    Calls ``on_snapshot`` with the merged snapshot about once a second.

    Returns:
        The final merged snapshot and the new characters' resume tokens.

    Raises:
        ValueError: as :meth:`LoadConfig.check`.
    """
    cfg.check()
    raise_open_files(cfg.n + 256)  # inherited by the workers
    stopper = _Stopper()
    old = {s: signal.signal(s, stopper) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        if cfg.procs == 1:
            return _run_here(cfg, stopper, on_snapshot)
        return _run_workers(cfg, stopper, on_snapshot)
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


def _run_here(
    cfg: LoadConfig, stopper: _Stopper, on_snapshot: Callable[[dict[str, Any]], None] | None
) -> tuple[dict[str, Any], dict[str, str]]:
    async def run() -> tuple[dict[str, Any], dict[str, str]]:
        stop = asyncio.Event()

        def tick(snap: dict[str, Any]) -> None:
            if stopper.stopped:
                stop.set()
            if on_snapshot is not None:
                on_snapshot(snap)

        loop = asyncio.get_running_loop()
        for s in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(s, stop.set)
        return await run_load_async(cfg, on_snapshot=tick, stop=stop)

    with asyncio.Runner(loop_factory=_new_loop) as runner:
        return runner.run(run())


def _run_workers(
    cfg: LoadConfig, stopper: _Stopper, on_snapshot: Callable[[dict[str, Any]], None] | None
) -> tuple[dict[str, Any], dict[str, str]]:
    ctx = multiprocessing.get_context("spawn")
    pipes: list[Pipe] = []
    workers = []
    for w in range(cfg.procs):
        here, there = ctx.Pipe()
        p = ctx.Process(target=_worker_main, args=(cfg, w, cfg.procs, there), daemon=True)
        p.start()
        there.close()
        pipes.append(here)
        workers.append(p)
    latest: list[dict[str, Any] | None] = [None] * cfg.procs
    finals: list[dict[str, Any] | None] = [None] * cfg.procs
    started = time.monotonic()
    asked = False
    last_emit = 0.0
    while any(f is None for f in finals):
        if not asked and (stopper.stopped or time.monotonic() - started > cfg.duration + 1.0):
            for w, pipe in enumerate(pipes):
                if finals[w] is not None:
                    continue  # that worker has already finished and may have exited
                try:
                    pipe.send("stop")
                except OSError:  # it exited since (BrokenPipeError): its final is read below
                    pass
            asked = True
        for w, pipe in enumerate(pipes):
            try:
                while pipe.poll():
                    snap = pipe.recv()
                    if snap.get("final"):
                        finals[w] = snap
                    latest[w] = snap
            except (EOFError, OSError):
                if finals[w] is None:  # the worker died: keep what it last said
                    finals[w] = latest[w] or {"t": time.time(), "tokens": {}}
        now = time.monotonic()
        if on_snapshot is not None and now - last_emit >= 1.0 and all(latest):
            last_emit = now
            merged = merge(s for s in latest if s is not None)
            merged["cpu_s"] += time.process_time()
            on_snapshot(merged)
        time.sleep(0.05)
    for p in workers:
        p.join(5)
    tokens: dict[str, str] = {}
    for f in finals:
        if f is not None:
            tokens.update(f.pop("tokens", {}))
    final = merge(f for f in finals if f is not None and "joins" in f)
    final["cpu_s"] += time.process_time()
    return final, tokens


# --- reports and the command line ----------------------------------------------------------


def load_tokens(url: str) -> dict[str, str]:
    """The saved resume tokens for the server at ``url`` (as :mod:`client.connection` keeps them)."""
    servers = _read_tokens(token_path()).get(_server_key(url))
    if not isinstance(servers, dict):
        return {}
    return {k: v for k, v in servers.items() if isinstance(k, str) and isinstance(v, str)}


def save_tokens(url: str, tokens: Mapping[str, str]) -> bool:
    """Add ``tokens`` to the token file in one write (mode 0600); False if it failed."""
    if not tokens:
        return True
    path = token_path()
    data = _read_tokens(path)
    key = _server_key(url)
    servers = data.get(key)
    servers = dict(servers) if isinstance(servers, dict) else {}
    servers.update(tokens)
    data[key] = servers
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        return False
    return True


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The load generator's own options (shared with ``underhall bots --lean``)."""
    p.add_argument(
        "--rate", type=float, default=100.0, help="joins per second, the ramp (default %(default)s)"
    )
    p.add_argument("--procs", type=int, default=1, help="worker processes (default %(default)s)")
    p.add_argument(
        "--depths",
        type=int,
        default=1,
        help="spread clients over depths 1..D by the stairs (default 1)",
    )
    p.add_argument(
        "--walk-every",
        type=int,
        default=1,
        help="with --depths > 1, one client in K walks once arrived (default 1)",
    )
    p.add_argument(
        "--jsonl", action="store_true", help="print a merged snapshot as one JSON line every second"
    )
    p.add_argument(
        "--forget",
        action="store_true",
        help="neither read nor save resume tokens (new characters every run)",
    )


def run_cli(args: argparse.Namespace) -> int:
    """Run from parsed arguments (``url``, ``n``, ``duration``, ``seed``, ``prefix``,
    ``json`` and :func:`add_arguments`'s); print the report; return the exit status:
    0 if some client joined and no ``error``, undecodable frame or close by the
    server happened (rejects and refused joins are load, not errors), else 1."""
    duration = float("inf") if args.duration == 0 else args.duration
    cfg = LoadConfig(
        url=args.url,
        n=args.n,
        duration=duration,
        rate=args.rate,
        procs=args.procs,
        prefix=args.prefix,
        seed=args.seed,
        depths=args.depths,
        walk_every=args.walk_every,
    )
    try:
        cfg.check()
    except ValueError as exc:
        print(f"loadgen: {exc}", file=sys.stderr)
        return 2
    if not args.forget:
        cfg.tokens = load_tokens(cfg.url)
    live = sys.stderr.isatty() and not args.jsonl
    first: list[dict[str, Any]] = []
    last: list[dict[str, Any]] = []

    def on_snapshot(snap: dict[str, Any]) -> None:
        if not first:
            first.append(snap)
        if args.jsonl:
            print(json.dumps(snap, separators=(",", ":")), flush=True)
        if live:
            line = live_line(snap, last[0] if last else None, cfg.n)
            print(f"\r\x1b[K{line}", end="", file=sys.stderr, flush=True)
        last[:] = [snap]

    final, tokens = run_load(cfg, on_snapshot)
    if live:
        print(file=sys.stderr)
    if not args.forget:
        save_tokens(cfg.url, tokens)
    final["requested"] = cfg.n
    if args.json or args.jsonl:
        final["final"] = True
        print(json.dumps(final, separators=(",", ":")), flush=True)
    else:
        print(format_report(final, first[0] if first else None, cfg.n), flush=True)
    ok = final["welcomed"] > 0 and not final["errors"]
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    """``python -m client.loadgen``: see the module docstring."""
    p = argparse.ArgumentParser(
        prog="python -m client.loadgen",
        description="Drive many lean walking clients against a server.",
    )
    p.add_argument("--url", required=True, help="server, e.g. ws://127.0.0.1:8765")
    p.add_argument("-n", type=int, default=100, help="clients (default %(default)s)")
    p.add_argument(
        "--duration",
        type=float,
        default=30.0,
        help="seconds; 0 runs until interrupted (default 30)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the clients' choices")
    p.add_argument("--prefix", default="lean", help="names are PREFIX0, PREFIX1, ...")
    p.add_argument("--json", action="store_true", help="print the final report as JSON")
    add_arguments(p)
    return run_cli(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
