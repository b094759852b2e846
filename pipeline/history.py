"""Session history: what each analysed session was and which traps it hit.

Recorded by the stages through the ledger, read by ``orf trends``: it sits below both, so
neither imports the other.

``session_facts`` runs in the scan worker (it needs the steps, which do not cross back for
sessions below the waste minimum); ``record_history`` runs in ``orf mine`` once the sources
are recorded, so a dry run or an interrupted run leaves no history behind.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .ledger import Ledger
    from .model import Finding, Trajectory
    from .stages.scan import SessionScan


def parse_time(value: str | None) -> float | None:
    """Epoch seconds of an ISO 8601 timestamp (``Z`` or an offset; naive means UTC), or None."""
    if not value:
        return None
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        try:  # epoch seconds or milliseconds, as some harnesses log them
            number = float(text)
        except ValueError:
            return None
        return number / 1000.0 if number > 1e11 else number
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return moment.timestamp()


def _started_at(traj: Trajectory) -> float | None:
    start = parse_time(traj.started_at)
    if start is not None:
        return start
    return next((t for t in (parse_time(s.timestamp) for s in traj.steps) if t is not None),
                None)


def _programs(traj: Trajectory) -> str:
    from .detect.classify import classify

    seen: set[str] = set()
    for step in traj.steps:
        if step.tool is None:
            continue
        info = classify(step)
        if info.shell and info.program:
            seen.add(info.program.rsplit("/", 1)[-1])
    return " ".join(sorted(seen))


SUMMARY_CHARS = 160
"""A finding's summary kept in the history: enough to name the trap in ``orf trends``."""


def session_facts(traj: Trajectory, findings: Iterable[Finding]) -> dict[str, Any]:
    """The history row of one session (small and picklable: it crosses the process pool)."""
    return {
        "agent": traj.agent,
        "model": traj.model,
        "started_at": _started_at(traj),
        "steps": len(traj.steps),
        "programs": _programs(traj),
        "findings": [
            {"signature": f.signature, "kind": f.kind, "wasted_steps": f.wasted_steps,
             "wasted_tokens": f.wasted_tokens or 0, "wasted_seconds": f.wasted_seconds or 0.0,
             "summary": " ".join(f.summary.split())[:SUMMARY_CHARS]}
            for f in findings
        ],
    }


def record_history(ledger: Ledger, sessions: Iterable[SessionScan]) -> None:
    """Store the history of ``sessions`` (those a scan without facts left out are skipped)."""
    rows = []
    for s in sessions:
        facts = getattr(s, "facts", None)
        if facts is None:
            continue
        rows.append({**facts, "session_id": s.session_id, "path": s.path, "format": s.format})
    ledger.record_history(rows)
