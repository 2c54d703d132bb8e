"""Kept for old imports: the store now lives in :mod:`server.store`.

``Store(path)`` here opens the SQLite backend, as it always did.
"""

from __future__ import annotations

from server.store import StoreError, hash_token
from server.store.sqlite import SqliteStore as Store

__all__ = ["Store", "StoreError", "hash_token"]
