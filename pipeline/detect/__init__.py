"""Wasted-step loop detection: one module per family, a registry, and a merge step.

The way through a session is ``run.detect_all``: classify each step once (``classify``, reading
the command-semantics table of ``programs``), run every family over the classified steps, then
merge findings that share a wasted step. ``annotate_repeats`` marks every repeated action.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..model import Finding, Trajectory
from .actions import analyze
from .annotate import Repeat, annotate_repeats
from .base import REGISTRY, Detector, register
from .classify_shell import runs_tests
from .refusals import MISTAKE_FAMILIES
from .run import PRECEDENCE, SPECIFICITY, detect_all, merge


def top_signatures(
    findings: Iterable[tuple[str, Finding]], limit: int = 10
) -> list[dict[str, Any]]:
    """Aggregate ``(session_id, finding)`` pairs by signature, most recurring first.

    Args:
        findings: Pairs of session id and finding, across any number of sessions.
        limit: At most this many rows.

    Returns:
        Rows ``{"signature", "kind", "sessions", "occurrences", "wasted_steps", "summary"}``
        sorted by sessions, then occurrences, then wasted steps (descending).
    """
    rows: dict[str, dict[str, Any]] = {}
    sessions: dict[str, set[str]] = {}
    for session_id, f in findings:
        row = rows.get(f.signature)
        if row is None:
            row = rows[f.signature] = {
                "signature": f.signature, "kind": f.kind, "sessions": 0, "occurrences": 0,
                "wasted_steps": 0, "summary": f.summary,
            }
            sessions[f.signature] = set()
        sessions[f.signature].add(session_id)
        row["occurrences"] += 1
        row["wasted_steps"] += f.wasted_steps
    for sig, row in rows.items():
        row["sessions"] = len(sessions[sig])
    ranked = sorted(
        rows.values(), key=lambda r: (-r["sessions"], -r["occurrences"], -r["wasted_steps"],
                                      r["signature"])
    )
    return ranked[:limit]


def last_test_passed(traj: Trajectory) -> bool | None:
    """Did the last test run in the session pass? None when the session ran no test.

    A log signal for the judge ("tests passing at the end"), read with the same step
    classification the detectors use, so every format answers it alike.
    """
    for step, info in zip(reversed(traj.steps), reversed(analyze(traj)), strict=True):
        if step.kind == "tool" and runs_tests(step, info):
            if step.exit_code is None and not step.is_error and not step.output:
                return None  # no observation: the outcome is unknown, not a pass
            return not info.failed
    return None


__all__ = ["MISTAKE_FAMILIES", "PRECEDENCE", "REGISTRY", "SPECIFICITY", "Detector", "Repeat",
           "annotate_repeats", "detect_all", "last_test_passed", "merge", "register",
           "top_signatures"]
