"""The cluster tests' NATS: a URL that answers is used as it is; where none
answers, a private ``nats-server`` with JetStream is started once."""

from __future__ import annotations

import socket

import nats
import pytest

from tests.cluster.natsenv import unique_prefix, usable_nats

pytestmark = pytest.mark.xdist_group("private-nats")
"""One worker runs these under pytest-xdist: they share the private server
the first one starts (one per worker process)."""


def _dead_url() -> str:
    """A ``nats://`` URL of a port of 127.0.0.1 that nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"nats://127.0.0.1:{s.getsockname()[1]}"


async def test_a_url_that_does_not_answer_gets_a_private_server_with_jetstream() -> None:
    dead = _dead_url()
    url = usable_nats(dead)
    assert url != dead
    assert usable_nats(_dead_url()) == url  # one private server for the session
    nc = await nats.connect(url, connect_timeout=2)
    try:
        js = nc.jetstream()
        name = unique_prefix()
        await js.add_stream(name=name, subjects=[f"{name}.>"])
        ack = await js.publish(f"{name}.x", b"kept")
        assert (await js.get_msg(name, ack.seq)).data == b"kept"
        await js.delete_stream(name)
    finally:
        await nc.close()


def test_a_url_that_answers_is_used_as_it_is() -> None:
    running = usable_nats(_dead_url())  # the private server: a NATS that answers
    assert usable_nats(running) == running
