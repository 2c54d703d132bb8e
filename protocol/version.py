"""The protocol version and the rule that checks it.

A server speaks exactly one version; a ``hello`` carrying another one is
refused with the fatal error ``version`` (docs/protocol.md, "Versioning").
"""

from __future__ import annotations

from protocol.errors import ErrorCode, ProtocolError

PROTOCOL_VERSION = 12
"""The version this package implements, sent as ``v`` in ``hello`` and ``welcome``."""


def check_version(v: int) -> None:
    """Check a peer's protocol version against :data:`PROTOCOL_VERSION`.

    Args:
        v: the ``v`` of a ``hello`` (or ``welcome``).

    Raises:
        ProtocolError: code ``version`` (fatal) if ``v`` differs; the server
            sends it as an ``error`` and closes the connection.
    """
    if v != PROTOCOL_VERSION:
        raise ProtocolError(
            ErrorCode.VERSION,
            f"protocol version {v} is not supported (this side speaks {PROTOCOL_VERSION})",
        )
