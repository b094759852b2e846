"""One-off analysis: parse sessions, find loops, judge and (optionally) draft, write nothing.

This is the library behind ``orf analyze``; the CLI only formats what ``analyze_paths``
yields. Sub-agent trajectories are reported as sessions of their own.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .config import Settings
from .detect import detect_all
from .formats.base import ParseContext
from .formats.discover import discover, parse_source
from .model import Draft, Finding, ParseIssue, Trajectory, Verdict


@dataclass
class SessionReport:
    """Everything ``orf analyze`` knows about one session."""

    trajectory: Trajectory
    """The parsed session (sub-agents are separate reports)."""
    findings: list[Finding]
    """Wasted-step loops found in it."""
    verdict: Verdict | None = None
    """How the run ended (from the log, or the backend with ``--draft``)."""
    drafts: list[Draft] = field(default_factory=list)
    """Candidate playbooks (only with ``--draft``)."""
    draft_failures: list[str] = field(default_factory=list)
    """Why drafting failed or drafts were dropped, when it did."""

    @property
    def wasted_steps(self) -> int:
        """Wasted steps over all findings."""
        return sum(f.wasted_steps for f in self.findings)


def flatten(traj: Trajectory) -> Iterator[Trajectory]:
    """Yield ``traj`` then its sub-agents (depth first)."""
    yield traj
    for sub in traj.subagents:
        yield from flatten(sub)


def iter_trajectories(
    paths: Iterable[Path], settings: Settings, issues: list[ParseIssue], fmt: str | None = None
) -> Iterator[Trajectory]:
    """Parse every session under ``paths``; problems go to ``issues``, never raise."""
    for source in discover(paths, format=fmt, issues=issues):
        ctx = ParseContext(
            output_max_chars=settings.output_max_chars, max_line_bytes=settings.max_line_bytes
        )
        for traj in parse_source(source, ctx):
            yield from flatten(traj)
        issues.extend(ctx.issues)


def analyze_paths(
    paths: Iterable[Path],
    settings: Settings,
    issues: list[ParseIssue],
    *,
    fmt: str | None = None,
    draft: bool = False,
) -> Iterator[SessionReport]:
    """Yield one report per session under ``paths``.

    Without ``draft`` the verdict comes from the log's own signals only (no LLM call). With
    ``draft`` the configured backend judges and drafts; nothing is written to the store.
    """
    from .stages.judge import judge

    backend = _backend(settings, draft)
    context = _store_context(settings) if draft else None
    for traj in iter_trajectories(paths, settings, issues, fmt):
        findings = detect_all(traj, settings.detect)
        report = SessionReport(traj, findings)
        report.verdict = judge(traj, findings, backend)
        if draft and findings and context is not None:
            _draft_into(report, backend, context)
        yield report


def _backend(settings: Settings, draft: bool):  # type: ignore[no-untyped-def]
    from .llm.backend import get_backend

    if not draft:
        # Judging from the log's own signals never needs a model.
        return get_backend(settings.model_copy(update={"backend": "heuristic"}))
    from .ledger import Ledger

    return get_backend(settings, Ledger(settings.ledger_path))


def _store_context(settings: Settings):  # type: ignore[no-untyped-def]
    from .stages.draft import StoreContext

    try:
        from .orf import Store

        store = Store(settings.store)
        if store.exists():
            return StoreContext(
                categories=[(c.id, c.name, c.description) for c in store.categories()],
                titles=[e.title for e in store.experiences()],
            )
    except Exception:  # noqa: BLE001 - a broken store must not stop an analysis
        pass
    return StoreContext(categories=[], titles=[])


def _draft_into(report: SessionReport, backend, context) -> None:  # type: ignore[no-untyped-def]
    from .llm.screen import screen_draft
    from .stages.draft import draft

    assert report.verdict is not None
    result = draft(report.trajectory, report.findings, report.verdict, backend, context)
    report.draft_failures.extend(result.failures)
    for candidate in result.drafts:
        reasons = screen_draft(candidate)
        if reasons:
            report.draft_failures.append(f"dropped {candidate.title!r}: " + "; ".join(reasons))
        else:
            report.drafts.append(candidate)
