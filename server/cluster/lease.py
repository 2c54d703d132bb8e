"""Level leases in a JetStream key-value bucket.

A level is run by the worker holding its lease: the key ``level.<depth>`` of
the bucket, whose value is the holder's worker id. NATS 2.9 has no per-key
time to live, so the bucket's *max age* is the lease time: every write
restarts a key's clock, a holder renews by compare-and-swap well within it,
and a key whose holder died (no more renewals) is removed by the server after
at most the max age (plus the server's expiry sweep, under a second).

- **claim**: ``kv.create`` writes only if the key is absent; of any number of
  racers exactly one gets a revision, the others a wrong-sequence error.
- **renew**: ``kv.update(key, value, last=revision)`` writes only if nobody
  wrote the key since our revision; a holder whose renewal is refused, or
  that could not renew within the lease time, has lost the lease and must
  stop serving the level at once (:meth:`Leases.renew_all` says which).
- **release**: ``kv.delete(key, last=revision)``, so a lease already taken
  over is never deleted by its former holder.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from nats import errors as nats_errors
from nats.js.client import JetStreamContext
from nats.js.errors import (
    BucketNotFoundError,
    KeyNotFoundError,
    KeyValueError,
    KeyWrongLastSequenceError,
)
from nats.js.kv import KeyValue

LEASE_S = 6.0
"""Lease time, in seconds: the bucket's max age."""
SAFETY = 0.75
"""A holder deems its lease gone once this fraction of the lease time has
passed since it *sent* its last acknowledged renewal (the server's clock
started later than that, so the holder always stops first; the rest of the
lease time covers clock drift and a tick in progress)."""
RENEW_S = 2.0
"""Seconds between two renewals (a third of the lease time)."""


def level_key(depth: int) -> str:
    """The bucket key of the lease on level ``depth``."""
    return f"level.{depth}"


async def open_bucket(js: JetStreamContext, bucket: str, lease_s: float = LEASE_S) -> KeyValue:
    """Open the lease bucket ``bucket``, creating it (history 1, max age
    ``lease_s`` seconds) when it does not exist yet.

    Raises:
        nats.errors.Error: NATS or JetStream is unreachable.
    """
    try:
        return await js.key_value(bucket)
    except BucketNotFoundError:
        return await js.create_key_value(bucket=bucket, ttl=lease_s, history=1)


@dataclass(slots=True)
class Held:
    """A lease this process holds: the key's last revision we wrote, and
    when (``time.monotonic()`` seconds) that write was acknowledged."""

    revision: int
    renewed_at: float
    """When the write that gave :attr:`revision` was sent."""


class Leases:
    """The leases one worker holds in the bucket ``kv``.

    Args:
        kv: The lease bucket (:func:`open_bucket`).
        owner: This worker's id (the value written under each key it holds).
        lease_s: The bucket's max age in seconds (must match the bucket).
    """

    def __init__(self, kv: KeyValue, owner: str, lease_s: float = LEASE_S) -> None:
        self.kv = kv
        self.owner = owner
        self.lease_s = lease_s
        self.held: dict[int, Held] = {}
        """Depth -> our lease on it."""

    async def owner_of(self, depth: int) -> str | None:
        """The id of the worker holding level ``depth``'s lease, or None.

        A lease whose holder died is still reported until the bucket's max
        age removes it.
        """
        try:
            entry = await self.kv.get(level_key(depth))
        except KeyNotFoundError:
            return None
        if entry.value is None or not entry.value:
            return None
        return entry.value.decode()

    async def claim(self, depth: int) -> bool:
        """Try to take level ``depth``'s lease; True if this worker now holds it
        (it already did, or its create won), False if another holds it."""
        if depth in self.held:
            return True
        sent = time.monotonic()
        try:
            revision = await self.kv.create(level_key(depth), self.owner.encode())
        except KeyWrongLastSequenceError:
            return False
        self.held[depth] = Held(revision, sent)
        return True

    async def renew_all(self) -> list[int]:
        """Renew every lease held; return the depths whose lease is lost
        (they are forgotten here: the caller must stop serving them now).

        A lease is lost when its compare-and-swap is refused (someone else
        wrote the key: it expired and was claimed), or when it could not be
        renewed for longer than the lease time (NATS unreachable: by now the
        key may have expired).
        """
        lost: list[int] = []
        now = time.monotonic()
        for depth, held in list(self.held.items()):
            sent = time.monotonic()
            try:
                revision = await self.kv.update(
                    level_key(depth), self.owner.encode(), last=held.revision
                )
            except KeyWrongLastSequenceError:
                pass
            except (TimeoutError, nats_errors.Error):
                if now - held.renewed_at < self.lease_s * SAFETY:
                    continue  # try again next round; the lease may still be ours
            else:
                if self.held.get(depth) is held:  # not given up meanwhile
                    held.revision, held.renewed_at = revision, sent
                continue
            if self.held.get(depth) is held:
                lost.append(depth)
                del self.held[depth]
        return lost

    def expired(self) -> list[int]:
        """Depths whose last acknowledged renewal was sent more than
        :data:`SAFETY` of the lease time ago (a stalled process: the key may
        soon be another's); they are forgotten here, and the caller must stop
        serving them at once."""
        now = time.monotonic()
        limit = self.lease_s * SAFETY
        gone = [d for d, h in self.held.items() if now - h.renewed_at >= limit]
        for depth in gone:
            del self.held[depth]
        return gone

    def forget(self, depth: int) -> None:
        """Stop counting level ``depth``'s lease as held, without writing
        (another worker is known to hold the level now)."""
        self.held.pop(depth, None)

    async def release(self, depth: int) -> None:
        """Give up level ``depth``'s lease (only if it is still ours)."""
        held = self.held.pop(depth, None)
        if held is None:
            return
        try:
            await self.kv.delete(level_key(depth), last=held.revision)
        except (TimeoutError, KeyValueError, nats_errors.Error):
            pass  # taken over already, or NATS is gone: it expires anyway

    async def release_all(self) -> None:
        """Give up every lease held (a worker stopping cleanly)."""
        for depth in sorted(self.held):
            await self.release(depth)
