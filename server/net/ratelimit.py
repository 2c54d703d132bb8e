"""Per-connection rate limiting: a token bucket plus a flood detector."""

from __future__ import annotations

from protocol.limits import (
    CHAT_BURST,
    CHAT_RATE_PER_S,
    FLOOD_FACTOR,
    GLOBAL_CHAT_BURST,
    GLOBAL_CHAT_RATE_PER_S,
    RATE_BURST,
    RATE_PER_S,
)


class TokenBucket:
    """Allow ``rate`` messages per second on average, bursts of ``burst``.

    Time is passed in by the caller (seconds, monotonic), so this class holds
    no clock and is tested without one.

    Args:
        rate: Sustained messages per second (> 0).
        burst: Bucket size in messages (>= 1).
        flood_factor: A connection dropping more than ``rate * flood_factor``
            messages within one second is flooding.
    """

    __slots__ = (
        "burst",
        "dropped_in_window",
        "dropped_total",
        "flood_limit",
        "rate",
        "stamp",
        "tokens",
        "window_start",
    )

    def __init__(self, rate: float, burst: float, flood_factor: float, now: float) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.stamp = now
        self.flood_limit = rate * flood_factor
        self.window_start = now
        self.dropped_in_window = 0
        self.dropped_total = 0

    def allow(self, now: float) -> bool:
        """Take one token; return False (message to be dropped) if none is left."""
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        if now - self.window_start >= 1.0:
            self.window_start = now
            self.dropped_in_window = 0
        self.dropped_in_window += 1
        self.dropped_total += 1
        return False

    @property
    def flooding(self) -> bool:
        """True once more than the flood limit was dropped within one second."""
        return self.dropped_in_window > self.flood_limit


def message_bucket(now: float) -> TokenBucket:
    """The bucket every client message passes (docs/protocol.md, "Rates")."""
    return TokenBucket(RATE_PER_S, RATE_BURST, FLOOD_FACTOR, now)


def chat_buckets(now: float) -> tuple[TokenBucket, TokenBucket]:
    """The buckets of a seated client's chat lines: every line, and global ones."""
    return (
        TokenBucket(CHAT_RATE_PER_S, CHAT_BURST, FLOOD_FACTOR, now),
        TokenBucket(GLOBAL_CHAT_RATE_PER_S, GLOBAL_CHAT_BURST, FLOOD_FACTOR, now),
    )
