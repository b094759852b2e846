"""The ledger: SQLite state that makes runs incremental, cheap on rerun, and resumable.

It remembers which sources were processed (by content hash), every LLM call (by cache key,
with tokens, cost and the reply, so an identical request is answered locally), every
candidate playbook and its fate, and Gemini batch jobs in flight.

Every SQL statement of the pipeline is in this package: other modules call named methods,
and group them with ``Ledger.transaction()``. Migrations are named functions
(``migrations``), recorded by name in the ``_migrations`` table once applied (as simonw/llm
does); a ledger from before names existed (``PRAGMA user_version`` = N) has its first N
recorded as applied when it is opened. The session-history queries of ``orf trends`` are
``history.HistoryQueries``, mixed into ``Ledger``.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..errors import LedgerError
from .history import HistoryQueries
from .migrations import MIGRATIONS, Migration, migration

__all__ = ["MIGRATIONS", "Ledger", "Migration", "SourceRecord", "WriteIntent", "migration"]


def _cannot_write(exc: sqlite3.DatabaseError) -> bool:
    """Whether SQLite failed for want of a writable file or folder (not a corrupt file)."""
    text = str(exc).lower()
    return any(m in text for m in ("readonly", "read-only", "unable to open", "disk i/o",
                                   "database or disk is full"))


@dataclass(frozen=True)
class SourceRecord:
    """What the ledger knows about one source file."""

    path: str
    size: int
    mtime: float
    content_hash: str
    format: str | None
    status: str
    error: str | None


@dataclass(frozen=True)
class WriteIntent:
    """A write recorded before its EXP file was created (see ``pipeline.stages.write``)."""

    key: str
    signature: str
    session_id: str | None
    payload: dict[str, Any]


class Ledger(HistoryQueries):
    """A connection to the ledger database (one per process/thread).

    ``store`` scopes the processed-source and analyzed-session state: two stores sharing one
    ledger each see only their own (the LLM cache, candidates and batch jobs stay shared).
    """

    def __init__(self, path: Path, store: Path | None = None) -> None:
        self.path = path
        self.scope = str(Path(store).resolve()) if store is not None else ""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: explicit transactions only, so each write commits at once.
            self.db = sqlite3.connect(str(path), timeout=30.0, isolation_level=None,
                                      check_same_thread=False)
            self.db.row_factory = sqlite3.Row
            self.db.execute("PRAGMA busy_timeout=30000")
            self._switch_to_wal()
            self.db.execute("PRAGMA synchronous=NORMAL")
            self._migrate()
        except OSError as exc:
            from ..errors import os_error_line

            raise LedgerError(f"cannot open the ledger: {os_error_line(exc)}") from exc
        except sqlite3.DatabaseError as exc:
            if _cannot_write(exc):
                raise LedgerError(
                    f"{path}: cannot write the ledger ({exc}); make it and its folder "
                    "writable, or point --ledger / ORF_LEDGER at a writable place") from exc
            raise LedgerError(
                f"{path}: cannot use this file as the orf ledger ({exc}); move it aside or "
                "point --ledger / ORF_LEDGER elsewhere"
            ) from exc

    def _switch_to_wal(self) -> None:
        # Switching a fresh file to WAL needs an exclusive lock, and SQLite may answer "database
        # is locked" at once, without its busy handler, when another process is opening the
        # same new ledger: retry for a while instead of failing the run.
        deadline = time.monotonic() + 30.0
        delay = 0.01
        while True:
            try:
                self.db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    def _migrate(self) -> None:
        with self.transaction():
            if not self._has_table("_migrations"):
                # A ledger of an orf that numbered its migrations: the first N are applied.
                version = int(self.db.execute("PRAGMA user_version").fetchone()[0])
                self.db.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY,"
                                " applied_at REAL NOT NULL)")
                self.db.executemany("INSERT INTO _migrations VALUES (?, ?)",
                                    [(m.__name__, 0.0) for m in MIGRATIONS[:version]])
        # MIGRATIONS as bound in this package, so a test can swap the list it runs.
        for step in MIGRATIONS:
            if step.__name__ in self.applied_migrations():
                continue
            with self.transaction():
                # Another process may have migrated while we waited for the write lock.
                if step.__name__ not in self.applied_migrations():
                    step(self.db, self.scope)
                    self.db.execute("INSERT INTO _migrations VALUES (?, ?)",
                                    (step.__name__, time.time()))
                    # Kept in step, so an older orf opening this ledger migrates nothing.
                    count = len(self.applied_migrations())
                    self.db.execute(f"PRAGMA user_version = {count}")

    def _has_table(self, name: str) -> bool:
        return self.db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                               (name,)).fetchone() is not None

    def applied_migrations(self) -> list[str]:
        """Names of the migrations applied to this ledger, in the order they were applied."""
        return [str(r[0]) for r in
                self.db.execute("SELECT name FROM _migrations ORDER BY rowid")]

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Run the block as one write transaction (BEGIN IMMEDIATE ... COMMIT / ROLLBACK).

        Inside an open transaction the block joins it, so methods can nest.
        """
        if self.db.in_transaction:
            yield
            return
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    @property
    def schema_version(self) -> int:
        """Number of migrations applied."""
        return int(self.db.execute("SELECT COUNT(*) FROM _migrations").fetchone()[0])

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- sources ----

    def source(self, path: str) -> SourceRecord | None:
        """The record of ``path``, if it was processed before."""
        row = self.db.execute(
            "SELECT path, size, mtime, content_hash, format, status, error FROM sources "
            "WHERE store = ? AND path = ?",
            (self.scope, path),
        ).fetchone()
        return SourceRecord(**dict(row)) if row else None

    def record_source(
        self,
        path: str,
        *,
        size: int,
        mtime: float,
        content_hash: str,
        format: str | None,
        status: str,
        error: str | None = None,
        sessions: int = 0,
        findings: int = 0,
        wasted_steps: int = 0,
    ) -> None:
        """Insert or replace what was learned of ``path``."""
        self.db.execute(
            "INSERT OR REPLACE INTO sources (store, path, size, mtime, content_hash, format,"
            " status, error, sessions, findings, wasted_steps, processed_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (self.scope, path, size, mtime, content_hash, format, status, error, sessions,
             findings, wasted_steps, time.time()),
        )

    def note_undrafted(self, path: str, content_hash: str, model: str, reason: str) -> int:
        """Count one more run in which ``path`` (this content, this model) went undrafted.

        Returns:
            The runs counted so far.
        """
        self.db.execute(
            "INSERT INTO draft_retries (store, path, content_hash, model, attempts, reason)"
            " VALUES (?,?,?,?,1,?) ON CONFLICT (store, path, content_hash, model) DO UPDATE"
            " SET attempts = attempts + 1, reason = excluded.reason",
            (self.scope, path, content_hash, model, reason))
        row = self.db.execute(
            "SELECT attempts FROM draft_retries WHERE store = ? AND path = ? AND"
            " content_hash = ? AND model = ?", (self.scope, path, content_hash, model)).fetchone()
        return int(row[0])

    def analyzed_fingerprint(self, session_id: str) -> str | None:
        """The findings fingerprint ``session_id`` was judged and drafted with, in this store."""
        row = self.db.execute(
            "SELECT fingerprint FROM analyzed_sessions WHERE store = ? AND session_id = ?",
            (self.scope, session_id),
        ).fetchone()
        return str(row[0]) if row else None

    def mark_analyzed(self, session_id: str, fingerprint: str) -> None:
        """Remember that ``session_id`` went through judge and draft for this store."""
        self.db.execute(
            "INSERT OR REPLACE INTO analyzed_sessions (store, session_id, fingerprint,"
            " analyzed_at) VALUES (?,?,?,?)",
            (self.scope, session_id, fingerprint, time.time()),
        )

    # ---- LLM calls ----

    def cached_response(self, cache_key: str) -> str | None:
        """The reply of an earlier successful call with the same key."""
        row = self.db.execute(
            "SELECT response FROM llm_calls WHERE cache_key = ? AND status = 'ok' "
            "ORDER BY id DESC LIMIT 1",
            (cache_key,),
        ).fetchone()
        return str(row[0]) if row and row[0] is not None else None

    def record_call(
        self,
        *,
        cache_key: str,
        model: str,
        purpose: str,
        status: str,
        session_id: str | None = None,
        tokens_in: int = 0,
        tokens_out: int = 0,
        cost_usd: float = 0.0,
        latency_ms: int = 0,
        error: str | None = None,
        response: str | None = None,
        batch: bool = False,
    ) -> None:
        """Append one LLM call (or cache hit) to the log."""
        self.db.execute(
            "INSERT INTO llm_calls (cache_key, model, purpose, session_id, tokens_in, tokens_out,"
            " cost_usd, latency_ms, status, error, response, batch, created_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (cache_key, model, purpose, session_id, tokens_in, tokens_out, cost_usd, latency_ms,
             status, error, response, int(batch), time.time()),
        )

    def call_totals(self, since: float = 0.0) -> dict[str, Any]:
        """Calls, tokens and cost since ``since`` (epoch seconds), cache hits excluded."""
        row = self.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(tokens_in),0), COALESCE(SUM(tokens_out),0),"
            " COALESCE(SUM(cost_usd),0) FROM llm_calls"
            " WHERE status != 'cached' AND created_at >= ?",
            (since,),
        ).fetchone()
        return {"calls": row[0], "tokens_in": row[1], "tokens_out": row[2], "cost_usd": row[3]}

    def cache_hits(self, since: float = 0.0) -> int:
        """Requests answered from the cache since ``since`` (epoch seconds)."""
        row = self.db.execute("SELECT COUNT(*) FROM llm_calls WHERE status = 'cached'"
                              " AND created_at >= ?", (since,)).fetchone()
        return int(row[0])

    # ---- candidates ----

    def candidates(self, status: str | None = None) -> Iterator[sqlite3.Row]:
        """Candidate rows, newest first, optionally filtered by status."""
        if status is None:
            yield from self.db.execute("SELECT * FROM candidates ORDER BY id DESC")
        else:
            yield from self.db.execute(
                "SELECT * FROM candidates WHERE status = ? ORDER BY id DESC", (status,)
            )

    def candidate_by_signature(self, signature: str) -> sqlite3.Row | None:
        """The newest candidate row for ``signature``."""
        row: sqlite3.Row | None = self.db.execute(
            "SELECT * FROM candidates WHERE signature = ? ORDER BY id DESC LIMIT 1", (signature,)
        ).fetchone()
        return row

    def record_candidate(
        self,
        *,
        signature: str,
        status: str,
        exp_id: str | None = None,
        domain: str | None = None,
        title: str | None = None,
        related_to: str | None = None,
        reason: str | None = None,
        sessions: list[str] | None = None,
        wasted_steps: int = 0,
    ) -> int:
        """Insert a candidate row; return its id."""
        now = time.time()
        cur = self.db.execute(
            "INSERT INTO candidates (signature, exp_id, domain, title, status, related_to, reason,"
            " sessions, wasted_steps, reinforcements, first_seen, last_seen)"
            " VALUES (?,?,?,?,?,?,?,?,?,0,?,?)",
            (signature, exp_id, domain, title, status, related_to, reason,
             orjson.dumps(sessions or []).decode(), wasted_steps, now, now),
        )
        return int(cur.lastrowid or 0)

    def count_reinforcement(self, exp_id: str) -> None:
        """Count one more sighting of the trap behind ``exp_id`` on its candidate row.

        Which session it was is ``add_reinforcement``'s (once per session); this is the total.
        """
        self.db.execute(
            "UPDATE candidates SET reinforcements = reinforcements + 1, last_seen = ?"
            " WHERE exp_id = ?",
            (time.time(), exp_id),
        )

    def has_candidate(self, exp_id: str) -> bool:
        """Whether a candidate row names ``exp_id``."""
        return self.db.execute("SELECT 1 FROM candidates WHERE exp_id = ?",
                               (exp_id,)).fetchone() is not None

    def uncommitted_ids(self) -> list[str]:
        """EXP ids of the ``new`` and ``related`` candidates (not yet reviewed)."""
        return [str(r[0]) for r in self.db.execute(
            "SELECT exp_id FROM candidates WHERE status IN ('new', 'related')"
            " AND exp_id IS NOT NULL")]

    def reject_candidate(self, exp_id: str, reason: str, wasted_steps: int) -> None:
        """Mark the candidate of ``exp_id`` rejected, keeping the most wasted steps seen."""
        self.db.execute(
            "UPDATE candidates SET status = 'rejected', reason = ?, wasted_steps ="
            " MAX(wasted_steps, ?) WHERE exp_id = ?", (reason, wasted_steps, exp_id))

    def rejected_wasted(self, signature: str) -> int | None:
        """Most wasted steps a rejected candidate of ``signature`` had; None if never rejected."""
        row = self.db.execute(
            "SELECT MAX(wasted_steps) FROM candidates WHERE signature = ? AND status = 'rejected'",
            (signature,),
        ).fetchone()
        return int(row[0]) if row and row[0] is not None else None

    def set_candidate_status(self, exp_id: str, status: str, reason: str | None = None) -> None:
        """Change the status of the candidate behind ``exp_id`` (e.g. ``rejected``)."""
        self.db.execute(
            "UPDATE candidates SET status = ?, reason = COALESCE(?, reason), last_seen = ?"
            " WHERE exp_id = ?",
            (status, reason, time.time(), exp_id),
        )

    def candidate_signatures(self) -> dict[str, set[str]]:
        """Signatures the candidates table ties to each playbook id (its own and duplicates)."""
        out: dict[str, set[str]] = {}
        for row in self.db.execute(
            "SELECT signature, exp_id, related_to, status FROM candidates"
            " WHERE status IN ('new', 'related', 'duplicate')"
        ):
            target = row["exp_id"] if row["status"] != "duplicate" else row["related_to"]
            if target:
                out.setdefault(target, set()).add(row["signature"])
        return out

    # ---- reinforcements ----

    def add_reinforcement(self, exp_id: str, session_id: str, signature: str,
                          wasted_steps: int) -> bool:
        """Record that ``session_id`` showed the trap of ``exp_id``; False if it already had."""
        cur = self.db.execute(
            "INSERT OR IGNORE INTO reinforcements VALUES (?,?,?,?,?)",
            (exp_id, session_id, signature, wasted_steps, time.time()),
        )
        return cur.rowcount > 0

    def reinforcement_count(self, exp_id: str) -> tuple[int, float | None]:
        """How many sessions reinforced ``exp_id``, and when last (epoch seconds)."""
        row = self.db.execute(
            "SELECT COUNT(*), MAX(seen_at) FROM reinforcements WHERE exp_id = ?", (exp_id,)
        ).fetchone()
        return int(row[0]), (float(row[1]) if row[1] is not None else None)

    # ---- write intents ----

    def record_intent(self, key: str, signature: str, session_id: str | None,
                      payload: dict[str, Any]) -> None:
        """Record a ``pending`` write before its EXP file is created (replacing any)."""
        now = time.time()
        self.db.execute(
            "INSERT OR REPLACE INTO write_intents VALUES (?,?,?,?,'pending',NULL,?,?)",
            (key, signature, session_id, orjson.dumps(payload).decode(), now, now),
        )

    def pending_intents(self) -> list[WriteIntent]:
        """Writes an interrupted run left ``pending``, oldest first."""
        return [WriteIntent(r["key"], r["signature"], r["session_id"], orjson.loads(r["payload"]))
                for r in self.db.execute("SELECT * FROM write_intents WHERE state = 'pending'"
                                         " ORDER BY created_at, rowid")]

    def close_intent(self, key: str, exp_id: str) -> None:
        """Mark the write of ``key`` done: its EXP file ``exp_id`` is in place."""
        self.db.execute("UPDATE write_intents SET state = 'done', exp_id = ?, updated_at = ?"
                        " WHERE key = ?", (exp_id, time.time(), key))

    def drop_intent(self, key: str) -> None:
        """Forget the write of ``key`` (the store refused it)."""
        self.db.execute("DELETE FROM write_intents WHERE key = ?", (key,))

    def done_intent(self, key: str) -> str | None:
        """The EXP id an earlier run wrote for ``key``, if any."""
        row = self.db.execute(
            "SELECT exp_id FROM write_intents WHERE key = ? AND state = 'done'", (key,)
        ).fetchone()
        return str(row[0]) if row and row[0] else None

    # ---- batch jobs ----

    def open_batch_job(self, model: str) -> sqlite3.Row | None:
        """The newest batch job for ``model`` that has not been collected yet."""
        row: sqlite3.Row | None = self.db.execute(
            "SELECT * FROM batch_jobs WHERE model = ? AND state NOT IN"
            " ('collected', 'failed', 'cancelled', 'expired') ORDER BY created_at DESC LIMIT 1",
            (model,),
        ).fetchone()
        return row

    def record_batch_job(self, name: str, model: str, state: str, request_keys: list[str]) -> None:
        """Insert or update a batch job."""
        now = time.time()
        self.db.execute(
            "INSERT INTO batch_jobs VALUES (?,?,?,?,?,?) ON CONFLICT(name) DO UPDATE SET"
            " state = excluded.state, updated_at = excluded.updated_at",
            (name, model, state, orjson.dumps(request_keys).decode(), now, now),
        )
