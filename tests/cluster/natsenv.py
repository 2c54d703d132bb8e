"""NATS for the cluster tests: reach the server or skip, and name things uniquely.

The server is ``$UNDERHALL_TEST_NATS``, else ``nats://127.0.0.1:4222`` (it must
have JetStream). Every test gets its own subject prefix, which also names its
key-value buckets, so two tests (or two runs) never see each other's leases,
subjects or frames.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from concurrent.futures import ThreadPoolExecutor

import pytest

NATS_URL = os.environ.get("UNDERHALL_TEST_NATS", "nats://127.0.0.1:4222")


def unique_prefix() -> str:
    """A subject prefix no other test or run uses (letters, digits, ``_``)."""
    return f"uht{os.getpid()}_{secrets.token_hex(4)}"


async def _check() -> str | None:
    import nats

    try:
        nc = await nats.connect(NATS_URL, connect_timeout=2, max_reconnect_attempts=0)
    except Exception as exc:  # noqa: BLE001 - any failure means "not reachable"
        return f"NATS not reachable at {NATS_URL}: {exc!r}"
    try:
        js = nc.jetstream()
        await js.account_info()
    except Exception as exc:  # noqa: BLE001
        return f"NATS at {NATS_URL} has no JetStream: {exc!r}"
    finally:
        await nc.close()
    return None


_reason: list[str | None] = []


def require_nats() -> str:
    """Return the NATS URL, or skip the test saying why it cannot be used."""
    pytest.importorskip("nats")
    if not _reason:  # in a thread of its own: the caller may be inside an event loop
        with ThreadPoolExecutor(1) as pool:
            _reason.append(pool.submit(asyncio.run, _check()).result())
    if _reason[0] is not None:
        pytest.skip(_reason[0])
    return NATS_URL
