"""Wasted-step loop detection: one module per family, a registry, and a merge step.

``detect_all`` analyzes the trajectory once (``actions.analyze``), runs every registered
family over that analysis, then merges: each wasted step is kept by one finding only, chosen
by ``PRECEDENCE`` (the most specific explanation wins), and findings left with no wasted step
are dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..config import DetectSettings
from ..model import Finding, Trajectory
from . import (  # noqa: F401  (importing registers the families)
    context_thrash,
    cycle,
    edit_retry,
    edit_revert,
    exact_repeat,
    near_repeat,
    reread,
    rerun_unchanged,
    retry_variation,
    text_loops,
)
from .actions import analyze, runs_tests, set_current
from .annotate import Repeat, annotate_repeats
from .base import REGISTRY, Detector, register
from .build import retrim

PRECEDENCE = (
    "cycle",            # a repeated block explains its steps better than pairwise repeats
    "edit_revert",      # undoing work is the trap, whatever else repeats around it
    "rerun_unchanged",  # test/build/lint/script reruns: the most common, most actionable waste
    "reread",           # file re-reads, including overlapping ranges and other read tools
    "exact_repeat",     # any other identical action
    "near_repeat",      # the same action spelled differently
    "edit_retry",       # a failed edit of a file retried with the file unchanged
    "retry_variation",  # different actions, same error: the loosest evidence
    "monologue",
    "chanting",
    "context_thrash",
)
"""Merge order: a wasted step claimed by an earlier family is removed from later ones."""


def _rank(kind: str) -> int:
    return PRECEDENCE.index(kind) if kind in PRECEDENCE else len(PRECEDENCE)


def merge(traj: Trajectory, findings: list[Finding], settings: DetectSettings) -> list[Finding]:
    """Keep each wasted step in one finding (by ``PRECEDENCE``), drop emptied findings.

    Args:
        traj: The trajectory the findings point into.
        findings: Raw findings of every family.
        settings: Thresholds (severity is re-graded after trimming).

    Returns:
        Findings sorted by first step, then family precedence.
    """
    index = {s.source_id: i for i, s in enumerate(traj.steps)}
    claimed: set[int] = set()
    kept: list[Finding] = []
    ordered = sorted(findings, key=lambda f: (_rank(f.kind), f.steps[0] if f.steps else 0))
    for f in ordered:
        wasted = [index[s] for s in f.wasted_source_ids if s in index]
        # Source ids may repeat in a sloppy log; map by position within the finding instead.
        if len(wasted) != len(f.wasted_source_ids):
            wasted = [i for i in f.steps if traj.steps[i].source_id in set(f.wasted_source_ids)]
        keep = [i for i in wasted if i not in claimed]
        if not keep:
            continue
        if len(keep) != len(wasted):
            f = retrim(f, traj, keep, settings)
        claimed.update(keep)
        kept.append(f)
    kept.sort(key=lambda f: (f.steps[0] if f.steps else 0, _rank(f.kind)))
    return kept


def detect_all(traj: Trajectory, settings: DetectSettings | None = None) -> list[Finding]:
    """Run every registered family over ``traj`` and merge overlapping findings.

    Args:
        traj: A normalized trajectory (any format).
        settings: Detector thresholds; defaults when None.

    Returns:
        Findings sorted by first step; each wasted step appears in one finding only.
    """
    settings = settings or DetectSettings()
    infos = analyze(traj)
    set_current(traj, infos)
    try:
        raw: list[Finding] = []
        for name in PRECEDENCE + tuple(n for n in REGISTRY if n not in PRECEDENCE):
            detector = REGISTRY.get(name)
            if detector is not None:
                raw.extend(detector(traj, settings))
    finally:
        set_current(None)
    return merge(traj, raw, settings)


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


__all__ = ["PRECEDENCE", "REGISTRY", "Detector", "Repeat", "annotate_repeats", "detect_all",
           "last_test_passed", "merge", "register", "top_signatures"]
