"""The database schema, as numbered migrations applied in order.

Each migration is one step of the schema, written once per backend (SQLite's
and PostgreSQL's column types differ a little; the tables and keys are the
same). A store applies, in one transaction each, every migration whose
number is above the highest one recorded in its ``schema_version`` table, and
records it there. Migration 1 uses ``IF NOT EXISTS`` so a database made
before migrations existed (same three tables) is adopted as it is.

Never edit a published migration: add the next number.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step: its number, what it does, and its SQL per backend
    (statements separated by ``;``)."""

    version: int
    about: str
    sqlite: str
    postgres: str


VERSION_TABLE = {
    "sqlite": "CREATE TABLE IF NOT EXISTS schema_version ("
    "version INTEGER PRIMARY KEY, about TEXT NOT NULL, applied_at TEXT NOT NULL)",
    "postgres": "CREATE TABLE IF NOT EXISTS schema_version ("
    "version INTEGER PRIMARY KEY, about TEXT NOT NULL, applied_at TEXT NOT NULL)",
}
"""The table recording which migrations a database has had."""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "world metadata, players and levels",
        sqlite="""
            CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS players (
                name TEXT PRIMARY KEY, token_hash TEXT NOT NULL,
                record BLOB NOT NULL, saved_tick INTEGER NOT NULL);
            CREATE TABLE IF NOT EXISTS levels (
                depth INTEGER PRIMARY KEY, record BLOB NOT NULL, saved_tick INTEGER NOT NULL)
        """,
        postgres="""
            CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS players (
                name TEXT PRIMARY KEY, token_hash TEXT NOT NULL,
                record BYTEA NOT NULL, saved_tick BIGINT NOT NULL);
            CREATE TABLE IF NOT EXISTS levels (
                depth INTEGER PRIMARY KEY, record BYTEA NOT NULL, saved_tick BIGINT NOT NULL)
        """,
    ),
    Migration(
        2,
        "names looked up without case",
        sqlite="CREATE INDEX IF NOT EXISTS players_name_lower ON players (lower(name))",
        postgres="CREATE INDEX IF NOT EXISTS players_name_lower ON players (lower(name))",
    ),
    Migration(
        3,
        "cluster: a fencing epoch and a lasting actor id per character",
        sqlite="""
            ALTER TABLE players ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE players ADD COLUMN actor_id INTEGER;
            CREATE UNIQUE INDEX IF NOT EXISTS players_actor_id ON players (actor_id)
        """,
        postgres="""
            ALTER TABLE players ADD COLUMN epoch BIGINT NOT NULL DEFAULT 0;
            ALTER TABLE players ADD COLUMN actor_id BIGINT UNIQUE;
            CREATE SEQUENCE IF NOT EXISTS player_actor_ids START 1;
            CREATE UNIQUE INDEX IF NOT EXISTS players_name_lower_unique ON players (lower(name))
        """,
    ),
    Migration(
        4,
        "cluster: a fencing token per level",
        sqlite="""
            CREATE TABLE IF NOT EXISTS level_fences (
                depth INTEGER PRIMARY KEY, fence INTEGER NOT NULL)
        """,
        postgres="""
            CREATE TABLE IF NOT EXISTS level_fences (
                depth INTEGER PRIMARY KEY, fence BIGINT NOT NULL)
        """,
    ),
)

LATEST = MIGRATIONS[-1].version
"""The schema version this code writes."""


def statements(sql: str) -> list[str]:
    """Split a migration's SQL into its statements (no ``;`` inside them)."""
    return [s.strip() for s in sql.split(";") if s.strip()]
