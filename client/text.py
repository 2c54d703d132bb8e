"""Message-log lines from events, rejections, chat and errors.

The public entry point of the client's wording: every sentence is built by
the client, so the server sends only ids, keys and numbers (see
``docs/protocol.md``, "Events"). The sentences live in

- :mod:`client.event_text`: the event table and :func:`describe_event`;
- :mod:`client.combat_text`: attacks, harm, rays, explosions and their effects;
- :mod:`client.notices`: refused commands, server errors, chat, ``note`` events;
- :mod:`client.naming`: naming actors, items, spells and rewards.

All are pure: they read a :class:`~client.model.GameModel` for names and
never change it. An event the client does not know, or one whose fields are
malformed, yields ``None`` so a newer server never crashes an older client.
"""

from __future__ import annotations

from client.event_text import describe_event
from client.naming import option_label, with_article
from client.notices import describe_chat, describe_error, describe_reject

__all__ = [
    "describe_chat",
    "describe_error",
    "describe_event",
    "describe_reject",
    "option_label",
    "with_article",
]
