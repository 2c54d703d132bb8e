"""Structured logs: ``--log-format json`` writes one object per line with the event's fields."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import time
from pathlib import Path
from typing import Any

import websockets

from protocol.version import PROTOCOL_VERSION
from server.net.logs import JsonFormatter, address
from tests.net.conftest import recv, recv_until, send
from tests.serverproc import underhall_command


def test_json_formatter_puts_the_fields_beside_the_message() -> None:
    record = logging.LogRecord(
        "underhall.net", logging.INFO, __file__, 1, "%s joined", ("ann",), None
    )
    record.event, record.player, record.actor = "join", "ann", 7
    line = JsonFormatter().format(record)
    assert "\n" not in line
    out = json.loads(line)
    assert out["msg"] == "ann joined" and out["level"] == "info"
    assert (out["event"], out["player"], out["actor"]) == ("join", "ann", 7)
    assert out["logger"] == "underhall.net" and out["time"].endswith("Z")


def test_address_formats() -> None:
    assert address(("127.0.0.1", 5000)) == "127.0.0.1:5000"
    assert address(("::1", 5000, 0, 0)) == "[::1]:5000"
    assert address(None) == "?"


async def test_serve_logs_events_as_json_lines_at_their_levels(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    cmd = [
        *underhall_command(),
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--db",
        str(tmp_path / "w.db"),
        "--log-format",
        "json",
        "--log-level",
        "debug",
    ]
    said = tmp_path / "stdout.txt"
    with log.open("wb") as err, said.open("wb") as out:
        proc = subprocess.Popen(  # noqa: ASYNC220 -- returns at once
            cmd,
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
        )
    try:
        deadline = time.monotonic() + 30
        while said.read_text().count("\n") < 2:  # listening on ..., recording games to ...
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            await asyncio.sleep(0.05)
        started, recording = [json.loads(x) for x in said.read_text().splitlines()]
        assert started["event"] == recording["event"] == "listening"
        assert recording["msg"].startswith("recording games to ")
        port = started["msg"].split("ws://127.0.0.1:")[1].split()[0]
        ws = await websockets.connect(f"ws://127.0.0.1:{port}", compression=None)
        await send(ws, {"t": "hello", "v": PROTOCOL_VERSION, "name": "ann"})
        await recv_until(ws, lambda m: m["t"] == "snap")
        other = await websockets.connect(f"ws://127.0.0.1:{port}", compression=None)
        await send(other, {"t": "hello", "v": PROTOCOL_VERSION, "name": "bad name!"})
        await recv(other)
        await other.close()
        await ws.close()
        await asyncio.sleep(0.5)
    finally:
        proc.terminate()
        await asyncio.to_thread(proc.wait, 15)
    lines = log.read_text().splitlines()
    records = [json.loads(x) for x in lines]  # every line is one JSON object
    by_event: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_event.setdefault(str(r.get("event")), []).append(r)
    assert {r["level"] for r in by_event["open"] + by_event["close"]} == {"debug"}
    assert len(by_event["open"]) == 2 and len(by_event["close"]) == 2
    [joined] = by_event["join"]
    assert joined["level"] == "info" and joined["player"] == "ann" and joined["depth"] == 1
    assert isinstance(joined["actor"], int) and joined["address"].startswith("127.0.0.1:")
    [left] = by_event["leave"]
    assert (left["level"], left["player"], left["actor"]) == ("info", "ann", joined["actor"])
    assert not any(r["logger"].startswith("websockets") for r in records)
    assert by_event["protocol_error"][0]["code"] == "bad_field"
