"""The ledger's schema: named migrations, applied in order and recorded by name.

A ledger from before names existed (``PRAGMA user_version`` = N) has its first N recorded as
applied when it is opened (``Ledger._migrate``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

Migration = Callable[[sqlite3.Connection, str], None]
"""One schema step: ``(connection, store scope)``, run inside the migrating transaction."""

MIGRATIONS: list[Migration] = []
"""Every migration, in order. Each is recorded by its function name in ``_migrations`` once
applied; never rename or edit a shipped one, append the next."""


def migration(fn: Migration) -> Migration:
    """Append ``fn`` to ``MIGRATIONS`` (its name is what the ledger records)."""
    MIGRATIONS.append(fn)
    return fn


def _script(db: sqlite3.Connection, script: str) -> None:
    # Statement by statement: executescript() would COMMIT the migrating transaction.
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


@migration
def m001_initial(db: sqlite3.Connection, scope: str) -> None:
    """Sources, LLM calls, candidates and batch jobs."""
    _script(db, """
        CREATE TABLE sources (
            path TEXT PRIMARY KEY,
            size INTEGER NOT NULL,
            mtime REAL NOT NULL,
            content_hash TEXT NOT NULL,
            format TEXT,
            status TEXT NOT NULL,            -- ok | failed | skipped
            error TEXT,
            sessions INTEGER DEFAULT 0,
            findings INTEGER DEFAULT 0,
            wasted_steps INTEGER DEFAULT 0,
            processed_at REAL NOT NULL
        );
        CREATE TABLE llm_calls (
            id INTEGER PRIMARY KEY,
            cache_key TEXT NOT NULL,
            model TEXT NOT NULL,
            purpose TEXT NOT NULL,           -- judge | draft | dedupe
            session_id TEXT,
            tokens_in INTEGER DEFAULT 0,
            tokens_out INTEGER DEFAULT 0,
            cost_usd REAL DEFAULT 0,
            latency_ms INTEGER DEFAULT 0,
            status TEXT NOT NULL,            -- ok | failed | cached
            error TEXT,
            response TEXT,
            batch INTEGER DEFAULT 0,
            created_at REAL NOT NULL
        );
        CREATE INDEX llm_calls_key ON llm_calls(cache_key, status);
        CREATE TABLE candidates (
            id INTEGER PRIMARY KEY,
            signature TEXT NOT NULL,
            exp_id TEXT,
            domain TEXT,
            title TEXT,
            status TEXT NOT NULL,            -- new | duplicate | related | dropped | rejected
            related_to TEXT,
            reason TEXT,
            sessions TEXT,                   -- JSON list of session ids
            wasted_steps INTEGER DEFAULT 0,
            reinforcements INTEGER DEFAULT 0,
            first_seen REAL NOT NULL,
            last_seen REAL NOT NULL
        );
        CREATE INDEX candidates_sig ON candidates(signature);
        CREATE TABLE batch_jobs (
            name TEXT PRIMARY KEY,
            model TEXT NOT NULL,
            state TEXT NOT NULL,
            request_keys TEXT NOT NULL,      -- JSON list of cache keys, in request order
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
    """)


@migration
def m002_write_intents_and_reinforcements(db: sqlite3.Connection, scope: str) -> None:
    """Resumable writes (intent before the EXP file) and per-session reinforcements."""
    _script(db, """
        CREATE TABLE write_intents (
            key TEXT PRIMARY KEY,            -- value_hash(signature, session): one draft, one file
            signature TEXT NOT NULL,
            session_id TEXT,
            payload TEXT NOT NULL,           -- JSON: the draft and its dedupe decision
            state TEXT NOT NULL,             -- pending | done
            exp_id TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE TABLE reinforcements (
            exp_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            signature TEXT,
            wasted_steps INTEGER DEFAULT 0,
            seen_at REAL NOT NULL,
            PRIMARY KEY (exp_id, session_id)
        );
        CREATE TABLE analyzed_sessions (
            session_id TEXT PRIMARY KEY,
            fingerprint TEXT NOT NULL,       -- value_hash of its findings (signature, wasted)
            analyzed_at REAL NOT NULL
        );
    """)


@migration
def m003_per_store_state(db: sqlite3.Connection, scope: str) -> None:
    """Processed-session state per store, so two stores sharing a ledger stay independent.

    Before it one ledger served whatever store used it; the store upgrading it keeps that
    history, so its next run does not redo (and re-pay) old sessions.
    """
    _script(db, """
        CREATE TABLE sources_v3 (
            store TEXT NOT NULL DEFAULT '',  -- resolved store path
            path TEXT NOT NULL,
            size INTEGER NOT NULL,
            mtime REAL NOT NULL,
            content_hash TEXT NOT NULL,
            format TEXT,
            status TEXT NOT NULL,
            error TEXT,
            sessions INTEGER DEFAULT 0,
            findings INTEGER DEFAULT 0,
            wasted_steps INTEGER DEFAULT 0,
            processed_at REAL NOT NULL,
            PRIMARY KEY (store, path)
        );
        INSERT INTO sources_v3 SELECT '', path, size, mtime, content_hash, format, status, error,
            sessions, findings, wasted_steps, processed_at FROM sources;
        DROP TABLE sources;
        ALTER TABLE sources_v3 RENAME TO sources;
        CREATE TABLE analyzed_v3 (
            store TEXT NOT NULL DEFAULT '',
            session_id TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            analyzed_at REAL NOT NULL,
            PRIMARY KEY (store, session_id)
        );
        INSERT INTO analyzed_v3 SELECT '', session_id, fingerprint, analyzed_at
            FROM analyzed_sessions;
        DROP TABLE analyzed_sessions;
        ALTER TABLE analyzed_v3 RENAME TO analyzed_sessions;
    """)
    if scope:
        for table in ("sources", "analyzed_sessions"):
            db.execute(f"UPDATE {table} SET store = ? WHERE store = ''", (scope,))


@migration
def m004_session_history(db: sqlite3.Connection, scope: str) -> None:
    """History of every analysed session and its trap signatures, for ``orf trends``.

    Sources read before it are marked changed (mtime -1, no hash) so the next run re-reads
    them and backfills their history; their findings are unchanged, so nothing goes to a model
    again.
    """
    _script(db, """
        CREATE TABLE session_history (
            store TEXT NOT NULL DEFAULT '',
            session_id TEXT NOT NULL,
            path TEXT,
            format TEXT,
            agent TEXT,
            model TEXT,
            started_at REAL,                 -- epoch seconds, from the log's own timestamps
            steps INTEGER DEFAULT 0,
            programs TEXT DEFAULT '',        -- space-separated programs the session ran
            recorded_at REAL NOT NULL,
            PRIMARY KEY (store, session_id)
        );
        CREATE INDEX session_history_started ON session_history(store, started_at);
        CREATE TABLE finding_history (
            store TEXT NOT NULL DEFAULT '',
            session_id TEXT NOT NULL,
            ordinal INTEGER NOT NULL,
            signature TEXT NOT NULL,
            kind TEXT NOT NULL,
            wasted_steps INTEGER DEFAULT 0,
            wasted_tokens INTEGER DEFAULT 0,
            wasted_seconds REAL DEFAULT 0,
            PRIMARY KEY (store, session_id, ordinal)
        );
        UPDATE sources SET mtime = -1, content_hash = '' WHERE status = 'ok';
    """)


@migration
def m005_draft_retries(db: sqlite3.Connection, scope: str) -> None:
    """Runs in which a source's sessions went undrafted, by content and model.

    Past a bound the source is recorded and not sent again (``orf mine``'s ``retried``).
    """
    _script(db, """
        CREATE TABLE draft_retries (
            store TEXT NOT NULL DEFAULT '',
            path TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            model TEXT NOT NULL,
            attempts INTEGER NOT NULL,
            reason TEXT,
            PRIMARY KEY (store, path, content_hash, model)
        );
    """)


@migration
def m006_finding_summary(db: sqlite3.Connection, scope: str) -> None:
    """Each finding's one-line summary, so trends can name a trap (not only its hash)."""
    _script(db, "ALTER TABLE finding_history ADD COLUMN summary TEXT NOT NULL DEFAULT '';")
