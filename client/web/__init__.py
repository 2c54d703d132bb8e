"""The browser client (issue 47): static files the game port serves at ``/``.

``static/`` holds the page, its scripts and style, and the vendored msgpack
library (``static/msgpack.min.js``, with its licence beside it), all
committed: nothing is built at install time. ``package.json`` and
``package-lock.json`` here reproduce the vendored file:
``npm --prefix client/web run vendor``.

The page is just another client of docs/protocol.md: it speaks msgpack over a
websocket to the port that served it.
"""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"
"""The directory the server answers ``GET /`` from (``index.html``)."""
