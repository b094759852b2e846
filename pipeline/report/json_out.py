"""The ``orf.analysis/1`` JSON contract printed by ``orf analyze --json``.

Other tools read these objects: keep field names stable. Renaming or changing the meaning of
a field means bumping ``ANALYSIS_SCHEMA``; adding a field does not.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from ..analyze import SessionReport
from ..model import Finding
from ..privacy import redact_value

ANALYSIS_SCHEMA = "orf.analysis/1"


def finding_json(f: Finding) -> dict[str, Any]:
    """A finding as plain JSON (DESIGN.md field names)."""
    return asdict(f)


def session_json(report: SessionReport, *, with_drafts: bool = False) -> dict[str, Any]:
    """One ``orf.analysis/1`` object for a session; every string passes through ``redact``."""
    t = report.trajectory
    wasted_tokens = [f.wasted_tokens for f in report.findings if f.wasted_tokens is not None]
    obj: dict[str, Any] = {
        "schema": ANALYSIS_SCHEMA,
        "format": t.source.format,
        "session_id": t.id,
        "parent_session_id": t.parent_session_id,
        "path": t.source.path,
        "content_hash": t.source.content_hash or None,
        "agent": t.agent,
        "agent_version": t.agent_version,
        "model": t.model,
        "task": t.task,
        "started_at": t.started_at,
        "steps": len(t.steps),
        "tool_calls": t.tool_calls,
        "failed_calls": t.failed_calls,
        "tokens_in": t.tokens_in,
        "tokens_out": t.tokens_out,
        "outcome": asdict(t.outcome),
        "findings": [finding_json(f) for f in report.findings],
        "wasted_steps_total": report.wasted_steps,
        # Additive (orf.analysis/1 unchanged): every step repeating an earlier action.
        "repeats": [
            {"source_id": r.source_id, "repeat_of": r.repeat_of_source_id,
             "first_of": r.first_of_source_id, "kind": r.kind, "wasted": r.wasted}
            for r in report.repeats
        ],
        "wasted_tokens_total": sum(wasted_tokens) if wasted_tokens else None,
        "verdict": report.verdict.model_dump() if report.verdict else None,
        "issues": [str(i) for i in t.issues],
    }
    if with_drafts:
        obj["drafts"] = [d.model_dump() for d in report.drafts]
        obj["draft_failures"] = list(report.draft_failures)
    return dict(redact_value(obj))
