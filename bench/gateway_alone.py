"""A cluster gateway alone: its CPU per client-tick with no game behind it.

``bench/cluster_scale.py`` measures a gateway beside a worker, NATS and
PostgreSQL, which on a 2-core machine share its core and hold N to about
1,000. This script takes the worker's place with a fake one, so that the
gateway (``underhall gateway``, pinned to ``--gateway-core``) is the only
real part and N can go higher:

- a NATS server of its own (``nats-server``), pinned to ``--other-core``
  (``--nats URL`` uses another, whose CPU is then not measured);
- a fake worker (this script with ``--worker``, on ``--other-core``): it
  answers every join at once (a ``welcome`` naming the player, epoch 1),
  beats every second as a worker does, and each tick (10 a second) publishes
  the tick's frames for the gateway's players, packed by the workers' own
  :func:`server.cluster.bus.batches`: ``--frames-per-tick`` frames per
  client-tick (a credit per client, seeded) of ``--frame-bytes`` bytes, the
  *spread* scene's traffic by default (0.55 frames of about 40 B, as
  ``bench/cluster_scale.py`` measured it);
- the load generator of ``bench/floor.py`` (on ``--other-core``), whose
  clients say ``hello`` here and wait for the ``welcome`` before they send
  anything; one client in four sends ``move`` commands, 0.14 per client-tick
  in all, at ``--slots`` instants per tick (the default, 1,000, spreads them
  out in time as real clients' commands are; ``bench/floor.py`` uses 10).

Once every client is welcomed and a warm-up has passed, a window is
measured: the gateway's and NATS's CPU (``/proc/PID/stat``) per client-tick
(clients × the fake worker's ticks), the gateway's CPU as % of a core,
frames per client per second published and received, commands per second
the fake worker got and the ``Inbound`` messages that carried them.

``--trees A,B`` alternates source trees (git worktrees: each process runs
with ``PYTHONPATH`` set to the tree) in one run, round after round
(``--rounds``), so that a change is measured against its parent on the same
machine at the same time.

Usage::

    .venv/bin/python bench/gateway_alone.py [-n 2000] [--window 20]
        [--warmup 5] [--rounds 1] [--trees DIR,DIR] [--slots 1000] [--nats URL] [--json]

Linux only (``/proc``, ``taskset``); 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import msgpack  # type: ignore[import-untyped]
import uvloop

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/floor.py, bench/cluster.py

import floor
from floor import READY_TIMEOUT_S, _answer_requests, _Child
from websockets.frames import Frame, Opcode
from websockets.http11 import Response

try:  # websockets' C helper, as its own frames use
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover -- built without its C extension
    from websockets.utils import apply_mask

TICK_RATE = 10
"""The fake worker's ticks per second (a worker's default)."""
WORKER_ID = "fw"
PROTOCOL_VERSION = 12
_NAMES = itertools.count()


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    """The fake worker's settings (``--worker``, as JSON)."""

    nats: str
    prefix: str
    frames_per_tick: float
    frame_bytes: int
    seed: int


@dataclass(frozen=True, slots=True)
class LoadConfig:
    """The load generator's settings (``--load``, as JSON)."""

    port: int
    n: int
    rate: float
    slots: int
    seed: int


@dataclass(slots=True)
class Row:
    """One measured window."""

    tree: str
    clients: int
    welcomed: int = 0
    window_s: float = 0.0
    gateway_us_per_client_tick: float | None = None
    nats_us_per_client_tick: float | None = None
    gateway_cpu_pct: float = 0.0
    ticks_per_s: float = 0.0
    frames_published_per_client_s: float = 0.0
    frames_received_per_client_s: float = 0.0
    commands_per_s: float = 0.0
    inbound_per_s: float = 0.0
    note: str = ""


# --- the fake worker -------------------------------------------------------------------------


async def _fake_worker(cfg: WorkerConfig) -> None:
    import nats
    from nats.aio.msg import Msg

    from server.cluster.bus import Subjects, batches
    from server.cluster.messages import (
        FromClient,
        Heartbeat,
        Inbound,
        JoinReply,
        JoinRequest,
        Leave,
        Resync,
        decode,
        encode,
    )

    subjects = Subjects(cfg.prefix)
    nc = await nats.connect(cfg.nats, name="gateway_alone worker")
    rng = random.Random(cfg.seed)
    seated: dict[int, tuple[str, list[float]]] = {}
    """Actor id -> (its gateway, [its frame credit])."""
    ids: dict[str, int] = {}
    fresh: set[int] = set()
    """Players whose next frame is a snapshot (joined, or asked for one: a
    gateway writes a player nothing before its first snapshot)."""
    counts = {"tick": 0, "frames": 0, "commands": 0, "inbound": 0}

    async def on_join(msg: Msg) -> None:
        req = decode(msg.data, JoinRequest)
        aid = ids.setdefault(req.name, len(ids) + 1)
        seated[aid] = (req.gw, [rng.random()])
        fresh.add(aid)
        welcome = msgpack.packb(
            {"t": "welcome", "v": PROTOCOL_VERSION, "name": req.name, "token": "t" + req.name}
        )
        reply = JoinReply(ok=True, welcome=welcome, worker=WORKER_ID, epoch=1, actor=aid)
        await msg.respond(encode(reply))

    async def on_inbound(msg: Msg) -> None:
        counts["inbound"] += 1
        for event in decode(msg.data, Inbound).events:
            if isinstance(event, FromClient):
                counts["commands"] += 1
            elif isinstance(event, Leave):
                seated.pop(event.actor, None)
            elif isinstance(event, Resync):
                fresh.add(event.actor)

    await nc.subscribe(subjects.join, queue="workers", cb=on_join)
    await nc.subscribe(subjects.join_at(WORKER_ID), cb=on_join)
    await nc.subscribe(subjects.inbox(WORKER_ID), cb=on_inbound)
    stop = asyncio.Event()
    _answer_requests(lambda: dict(counts, players=len(seated)), stop)
    loop = asyncio.get_running_loop()
    due = beat = loop.time()
    pad = b"x" * max(0, cfg.frame_bytes - 24)
    while not stop.is_set():
        due += 1.0 / TICK_RATE
        await asyncio.sleep(max(0.0, due - loop.time()))
        counts["tick"] += 1
        tick = counts["tick"]
        if loop.time() >= beat:
            beat += 1.0
            await nc.publish(subjects.heartbeat(WORKER_ID), encode(Heartbeat(tick, len(seated))))
        frame = msgpack.packb({"t": "delta", "tick": tick, "ack": -1, "pad": pad})
        snap = msgpack.packb({"t": "snap", "tick": tick, "depth": 1, "pad": pad})
        out: dict[str, list[tuple[int, int, bytes]]] = {}
        for aid, (gateway, credit) in seated.items():
            if aid in fresh:
                fresh.discard(aid)
                out.setdefault(gateway, []).append((aid, 1, snap))
                continue
            credit[0] += cfg.frames_per_tick
            if credit[0] >= 1.0:
                credit[0] -= 1.0
                out.setdefault(gateway, []).append((aid, 1, frame))
        for gateway, frames in out.items():
            counts["frames"] += len(frames)
            for payload in batches(frames):
                await nc.publish(subjects.gateway(gateway), payload)
    await nc.close()


# --- the load generator ------------------------------------------------------------------------


class GatewayClient(floor.FloorClient):
    """:class:`floor.FloorClient` that says ``hello`` once the handshake is
    done and counts itself connected (and may send commands) from the
    ``welcome`` on, which it does not count as a frame (the frames are cut
    by :meth:`floor.FloorClient._frames`, which calls :meth:`_binary`)."""

    def _to_websockets(self, data: bytes) -> None:
        ws = self.ws
        ws.receive_data(data)
        for ev in ws.events_received():
            if isinstance(ev, Frame):
                if ev.opcode is Opcode.BINARY:
                    self._binary(len(ev.data))
            elif isinstance(ev, Response):
                if ws.handshake_exc is not None:
                    self.load.failed += 1
                elif self.transport is not None:
                    self.transport.write(self._hello())
        self._flush()

    def _hello(self) -> bytes:
        name = f"ga{next(_NAMES)}"
        data = msgpack.packb({"t": "hello", "v": PROTOCOL_VERSION, "name": name})
        key = os.urandom(4)
        return bytes((0x82, 0x80 | len(data))) + key + apply_mask(data, key)

    def _binary(self, length: int) -> None:
        if not self.open:
            self.open = True  # the welcome
            self.load.connected += 1
            return
        super()._binary(length)


async def _load(cfg: LoadConfig) -> None:
    floor.FloorClient = GatewayClient  # type: ignore[misc]
    floor.SLOTS_PER_TICK = cfg.slots
    spread = floor.SCENES["spread"]
    load = floor.Load(
        floor.LoadConfig(
            cfg.port, cfg.n, cfg.rate, spread.commands_per_tick, spread.walk_every, TICK_RATE,
            cfg.seed,
        )
    )  # fmt: skip
    stop = asyncio.Event()
    _answer_requests(load.snapshot, stop)
    tasks = [asyncio.create_task(load.ramp()), asyncio.create_task(load.pace())]
    await stop.wait()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for client in load.clients:
        if client.transport is not None:
            client.transport.abort()


# --- the parent --------------------------------------------------------------------------------


def _cpu_s(pid: int) -> float:
    from scale import read_cpu

    user, system, _ = read_cpu(pid)
    return user + system


def _taskset(core: str, cmd: list[str]) -> list[str]:
    return ["taskset", "-c", core, *cmd]


def measure(args: argparse.Namespace, tree: str, n: int) -> Row:
    """Start NATS, a gateway from ``tree``, the fake worker and the load; measure a window."""
    from cluster import start_nats

    row = Row(tree, n)
    env = dict(os.environ, PYTHONPATH=tree, PYTHONUNBUFFERED="1")
    me = [sys.executable, str(Path(__file__).resolve())]
    with tempfile.TemporaryDirectory(prefix="underhall-gateway-alone-") as tmp_name:
        tmp = Path(tmp_name)
        nats_proc: subprocess.Popen[bytes] | None = None
        if args.nats is None:
            nats_proc, nats_url = start_nats(tmp)
            subprocess.run(["taskset", "-pc", args.other_core, str(nats_proc.pid)], check=False,
                           capture_output=True)  # fmt: skip
        else:
            nats_url = args.nats
        prefix = f"ga{os.getpid()}"
        log_path = tmp / "gateway.log"
        with log_path.open("wb") as log:
            gateway = subprocess.Popen(
                _taskset(args.gateway_core, [
                    sys.executable, "-m", "server.cli", "gateway", "--nats", nats_url,
                    "--port", "0", "--id", "g0", "--prefix", prefix, "--max-conns-per-addr", "0",
                ]),
                stdout=log, stderr=subprocess.STDOUT, env=env, cwd=tmp,
            )  # fmt: skip
        children: list[_Child] = []
        err = (tmp / "children.err").open("wb")
        try:
            port = _listening(log_path, gateway)
            if port is None:
                row.note = "the gateway did not start: " + log_path.read_text()[-500:]
                return row
            wcfg = WorkerConfig(nats_url, prefix, args.frames_per_tick, args.frame_bytes, args.seed)
            os.environ["PYTHONPATH"] = tree  # _Child passes the environment on
            worker = _Child(
                _taskset(args.other_core, [*me, "--worker", json.dumps(asdict(wcfg))]), err
            )
            children.append(worker)
            time.sleep(1.5)  # the gateway hears its first heartbeat
            lcfg = LoadConfig(port, n, args.rate, args.slots, args.seed)
            load = _Child(_taskset(args.other_core, [*me, "--load", json.dumps(asdict(lcfg))]), err)
            children.append(load)
            _window(
                args, row, gateway.pid, None if nats_proc is None else nats_proc.pid, worker, load
            )
        finally:
            for child in reversed(children):
                child.stop()
            gateway.terminate()
            try:
                gateway.wait(10)
            except subprocess.TimeoutExpired:
                gateway.kill()
            if nats_proc is not None:
                nats_proc.terminate()
                nats_proc.wait(10)
            err.close()
            if row.note:
                row.note += " " + (tmp / "children.err").read_text(errors="replace")[-1000:]
    return row


def _listening(log_path: Path, proc: subprocess.Popen[bytes]) -> int | None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline and proc.poll() is None:
        text = log_path.read_text(errors="replace")
        if "listening on ws://" in text:
            return int(text.split("listening on ws://", 1)[1].split()[0].rsplit(":", 1)[1])
        time.sleep(0.05)
    return None


def _window(
    args: argparse.Namespace,
    row: Row,
    gateway: int,
    nats: int | None,
    worker: _Child,
    load: _Child,
) -> None:
    n = row.clients
    deadline = time.monotonic() + n / args.rate + READY_TIMEOUT_S
    snap = load.ask()
    while snap is not None and snap["connected"] < n and time.monotonic() < deadline:
        time.sleep(0.5)
        snap = load.ask()
    if snap is None or snap["connected"] == 0:
        row.note = "no client was welcomed"
        return
    time.sleep(args.warmup)

    def nats_cpu() -> float:
        return 0.0 if nats is None else _cpu_s(nats)

    w0, l0, g0, n0, t0 = worker.ask(), load.ask(), _cpu_s(gateway), nats_cpu(), time.monotonic()
    time.sleep(args.window)
    w1, l1, g1, n1, t1 = worker.ask(), load.ask(), _cpu_s(gateway), nats_cpu(), time.monotonic()
    if w0 is None or w1 is None or l0 is None or l1 is None:
        row.note = "a child did not answer"
        return
    secs = t1 - t0
    clients = (l0["connected"] + l1["connected"]) / 2
    client_ticks = (w1["tick"] - w0["tick"]) * clients
    row.welcomed = l1["connected"]
    row.window_s = round(secs, 1)
    if client_ticks:
        row.gateway_us_per_client_tick = round(1e6 * (g1 - g0) / client_ticks, 2)
        if nats is not None:
            row.nats_us_per_client_tick = round(1e6 * (n1 - n0) / client_ticks, 2)
    row.gateway_cpu_pct = round(100 * (g1 - g0) / secs, 1)
    row.ticks_per_s = round((w1["tick"] - w0["tick"]) / secs, 2)
    if clients:
        row.frames_published_per_client_s = round((w1["frames"] - w0["frames"]) / secs / clients, 2)
        row.frames_received_per_client_s = round((l1["frames"] - l0["frames"]) / secs / clients, 2)
    row.commands_per_s = round((w1["commands"] - w0["commands"]) / secs, 1)
    row.inbound_per_s = round((w1["inbound"] - w0["inbound"]) / secs, 1)


def _print(row: Row, as_json: bool) -> None:
    if as_json:
        print(json.dumps(asdict(row)), flush=True)
        return
    print(
        f"{row.tree} n={row.clients} welcomed={row.welcomed}: gateway "
        f"{row.gateway_us_per_client_tick} us/client-tick ({row.gateway_cpu_pct}% of a core), "
        f"NATS {row.nats_us_per_client_tick}; {row.ticks_per_s} ticks/s; frames/client/s "
        f"{row.frames_published_per_client_s} published, {row.frames_received_per_client_s} "
        f"received; {row.commands_per_s} commands/s in {row.inbound_per_s} Inbound/s"
        + (f"; {row.note}" if row.note else ""),
        flush=True,
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("-n", default="2000", help="client counts, comma-separated (default 2000)")
    p.add_argument("--window", type=float, default=20.0, help="measured seconds (default 20)")
    p.add_argument("--warmup", type=float, default=5.0, help="seconds after joins (default 5)")
    p.add_argument("--rounds", type=int, default=1, help="rounds over the trees (default 1)")
    p.add_argument("--trees", help="source trees to alternate, comma-separated (default: this)")
    p.add_argument("--rate", type=float, default=400.0, help="joins per second (default 400)")
    p.add_argument("--slots", type=int, default=1000, help="command instants per tick (1000)")
    p.add_argument("--frames-per-tick", type=float, default=0.55, help="per client (0.55)")
    p.add_argument("--frame-bytes", type=int, default=40, help="payload bytes (default 40)")
    p.add_argument("--gateway-core", default="0", help="the gateway's core (default 0)")
    p.add_argument("--other-core", default="1", help="NATS, fake worker, load (default 1)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--nats", help="use this NATS (its CPU is not measured) instead of one's own")
    p.add_argument("--json", action="store_true", help="print one JSON object per run")
    p.add_argument("--worker", help=argparse.SUPPRESS)  # internal: the fake worker, JSON config
    p.add_argument("--load", help=argparse.SUPPRESS)  # internal: the load generator, JSON config
    args = p.parse_args()
    if args.worker is not None:
        wcfg = WorkerConfig(**json.loads(args.worker))
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(_fake_worker(wcfg))
        return 0
    if args.load is not None:
        lcfg = LoadConfig(**json.loads(args.load))
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(_load(lcfg))
        return 0
    here = str(Path(__file__).resolve().parent.parent)
    trees = [str(Path(t).resolve()) for t in (args.trees or here).split(",")]
    for _ in range(args.rounds):
        for n in (int(x) for x in args.n.split(",")):
            for tree in trees:
                _print(measure(args, tree, n), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
