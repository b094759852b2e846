"""The ledger's session history of one store: what ``orf trends`` and review evidence read."""

from __future__ import annotations

import sqlite3
import time
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any


class HistoryQueries:
    """The ``session_history`` and ``finding_history`` queries, mixed into ``Ledger``.

    They use the ledger's connection, store scope and transactions.
    """

    db: sqlite3.Connection
    scope: str

    if TYPE_CHECKING:

        def transaction(self) -> AbstractContextManager[None]:
            """``Ledger.transaction``: one write transaction, joining an open one."""
            ...

    def record_history(self, sessions: list[dict[str, Any]]) -> None:
        """Replace the history of each session (keys as ``session_history`` plus ``findings``).

        Each finding is a dict with ``signature``, ``kind``, ``wasted_steps``,
        ``wasted_tokens``, ``wasted_seconds`` and ``summary``. A re-read session replaces its
        old rows.
        """
        if not sessions:
            return
        now = time.time()
        with self.transaction():
            for s in sessions:
                key = (self.scope, s["session_id"])
                self.db.execute("DELETE FROM finding_history WHERE store = ? AND session_id = ?",
                                key)
                self.db.execute(
                    "INSERT OR REPLACE INTO session_history (store, session_id, path, format,"
                    " agent, model, started_at, steps, programs, recorded_at)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?)",
                    (*key, s.get("path"), s.get("format"), s.get("agent"), s.get("model"),
                     s.get("started_at"), s.get("steps", 0), s.get("programs", ""), now))
                self.db.executemany(
                    "INSERT INTO finding_history (store, session_id, ordinal, signature, kind,"
                    " wasted_steps, wasted_tokens, wasted_seconds, summary)"
                    " VALUES (?,?,?,?,?,?,?,?,?)",
                    [(*key, i, f["signature"], f["kind"], f.get("wasted_steps", 0),
                      f.get("wasted_tokens", 0), f.get("wasted_seconds", 0.0),
                      f.get("summary", "")) for i, f in enumerate(s.get("findings", ()))])

    def history_sessions(self, since: float | None = None,
                         until: float | None = None) -> list[tuple[Any, ...]]:
        """``(session_id, agent, model, started_at, programs)`` of this store, oldest first.

        Sessions without a start time are left out (they cannot be placed before or after).
        """
        return self.db.execute(
            "SELECT session_id, agent, model, started_at, programs FROM session_history"
            " WHERE store = ? AND started_at IS NOT NULL AND started_at >= ?"
            " AND started_at <= ? ORDER BY started_at",
            (self.scope, -1e18 if since is None else since, 1e18 if until is None else until),
        ).fetchall()

    def history_examples(self) -> dict[str, tuple[str, str]]:
        """``signature -> (summary, session_id)``: one named example of each trap.

        The example is the trap's costliest finding that has a summary.
        """
        out: dict[str, tuple[str, str]] = {}
        for sig, summary, sid in self.db.execute(
                "SELECT signature, summary, session_id FROM finding_history WHERE store = ?"
                " AND summary != '' ORDER BY wasted_tokens DESC, wasted_steps DESC, session_id",
                (self.scope,)):
            out.setdefault(sig, (summary, sid))
        return out

    def history_findings(self) -> list[tuple[Any, ...]]:
        """``(session_id, signature, kind, wasted_steps, wasted_tokens, wasted_seconds)`` rows."""
        return self.db.execute(
            "SELECT session_id, signature, kind, wasted_steps, wasted_tokens, wasted_seconds"
            " FROM finding_history WHERE store = ?", (self.scope,)).fetchall()

    def _window(self, since: float | None, until: float | None) -> tuple[Any, ...]:
        return (self.scope, -1e18 if since is None else since, 1e18 if until is None else until)

    def history_population(self, since: float | None = None,
                           until: float | None = None) -> list[tuple[Any, ...]]:
        """``(agent, model, programs, started_at)`` of every dated session, oldest first."""
        return self.db.execute(
            "SELECT agent, model, programs, started_at FROM session_history WHERE store = ?"
            " AND started_at BETWEEN ? AND ? ORDER BY started_at",
            self._window(since, until)).fetchall()

    def history_hits(self, since: float | None = None,
                     until: float | None = None) -> list[tuple[Any, ...]]:
        """Every finding of a dated session in the window, with its session's facts.

        Rows are ``(session_id, agent, model, started_at, signature, kind, wasted_steps,
        wasted_tokens)``.
        """
        return self.db.execute(
            "SELECT f.session_id, s.agent, s.model, s.started_at, f.signature, f.kind,"
            " f.wasted_steps, f.wasted_tokens FROM finding_history f JOIN session_history s"
            " ON s.store = f.store AND s.session_id = f.session_id WHERE f.store = ?"
            " AND s.started_at BETWEEN ? AND ?", self._window(since, until)).fetchall()

    def signature_evidence(self, signatures: list[str]) -> tuple[int, int, int]:
        """Sessions of this store that hit any of ``signatures``, and their wasted steps/tokens."""
        if not signatures:
            return 0, 0, 0
        marks = ",".join("?" * len(signatures))
        row = self.db.execute(
            "SELECT COUNT(DISTINCT session_id), COALESCE(SUM(wasted_steps), 0),"
            f" COALESCE(SUM(wasted_tokens), 0) FROM finding_history WHERE store = ?"
            f" AND signature IN ({marks})", (self.scope, *signatures)).fetchone()
        return int(row[0]), int(row[1]), int(row[2])
