"""A few thousand hostile frames of every kind against a real server on
127.0.0.1: each is answered with an error, a close code or nothing; the log
holds no traceback; an honest player is served all along."""

from __future__ import annotations

import asyncio
import logging

import pytest

from server.net.guard import NetLimits
from tests.net.conftest import Started, join, recv_until, send
from tests.net.fuzzframes import KINDS, ONE_PER_CONNECTION, fuzz


def _per_kind(kind: str) -> int:
    return 1000 if kind in ONE_PER_CONNECTION else 2000


async def test_fuzzed_frames_break_nothing(
    start_server: Started, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    # Failed-token caps off: the fuzzer's wrong tokens would otherwise lock this
    # address out of resuming, and every frame would be sent before hello.
    server = await start_server(
        limits=NetLimits(token_failures_per_name=0, token_failures_per_addr=0)
    )
    honest, _, _ = await join(server, "honest")
    resume = []
    for n in range(4):
        ws, welcome, _ = await join(server, f"fuzz{n}")
        resume.append(
            {"t": "hello", "v": welcome["v"], "name": welcome["name"], "token": welcome["token"]}
        )
        await ws.close()
    task = asyncio.create_task(
        fuzz(server.port, _per_kind, seed=11, resume=resume, big_max=64 * 1024)
    )
    pings = 0
    while not task.done():
        await send(honest, {"t": "ping", "id": pings})
        pong = await recv_until(honest, lambda m: m["t"] == "pong")
        assert pong["id"] == pings
        pings += 1
        await asyncio.sleep(0.2)
    tally = task.result()
    assert pings > 3
    for kind in KINDS:
        assert tally.frames[kind] >= _per_kind(kind), kind
        assert tally.outcomes[kind], kind
    assert tally.outcomes["big"]["closed 1009"] == tally.frames["big"]
    assert tally.outcomes["early"]["error not_allowed"] >= 1000
    assert tally.outcomes["text"]["error bad_message"] > 1000
    assert tally.outcomes["random"]["error bad_msgpack"] > 1000
    bad = [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert not bad, [r.getMessage() for r in bad[:5]]
    await send(honest, {"t": "cmd", "seq": 1, "c": "wait"})
    assert (await recv_until(honest, lambda m: m.get("ack") == 1))["ack"] == 1
