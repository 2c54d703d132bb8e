"""Recorded games (issue 45, item 2; README, "Replaying a recorded game"):
``serve`` and a cluster's gateway started with ``--recordings`` keep each
player's game, the frames it was written from its ``welcome`` (token
blanked) to its leave, and answer it at ``/recordings/NAME.uhrec``."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request

import msgpack  # type: ignore[import-untyped]

from protocol.messages import CommandName
from protocol.recording import SUFFIX, Recording, read_recording
from tests.conformance.conftest import Server


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return int(answer.status), bytes(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, b""


async def _ended(base: str, name: str, timeout: float = 15.0) -> Recording:
    """``name``'s recording once it holds the game's end (a flush comes
    within 2 s of the leave)."""
    async with asyncio.timeout(timeout):
        while True:
            status, data = await asyncio.to_thread(_get, f"{base}/recordings/{name}{SUFFIX}")
            if status == 200:
                recording = read_recording(data)
                if recording.ended is not None:
                    return recording
            await asyncio.sleep(0.2)


async def test_a_players_game_is_recorded_frame_for_frame(server: Server) -> None:
    name = server.name("Rec")
    player, _ = await server.join(name)
    for step in ((1, 0), (0, 1), (-1, 0), (0, -1)):
        await player.command(CommandName.MOVE, step)
    await player.say("for the record")
    await player.recv_until(lambda m: m.get("t") == "chat" and m.get("text") == "for the record")
    received = list(player.raw)
    await player.close()

    base = "http://" + server.url.split("://", 1)[1].rstrip("/")
    recording = await _ended(base, name)
    assert recording.name == name and recording.complete
    frames = [data for _, _, data in recording.frames]
    welcome = msgpack.unpackb(frames[0], raw=False)
    assert welcome["t"] == "welcome" and welcome["name"] == name and welcome["token"] == ""
    assert player.welcome["token"] and all(
        player.welcome["token"].encode() not in frame for frame in frames
    )
    # Every frame the client read after its welcome, in order (frames written
    # after its last read and before its close may follow).
    assert frames[1 : len(received)] == received[1:]
    listed = json.loads((await asyncio.to_thread(_get, f"{base}/recordings.json"))[1])
    assert name in [r["name"] for r in listed["recordings"]]
