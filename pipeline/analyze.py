"""One-off analysis: parse sessions, find loops, judge and (optionally) draft, write nothing.

This is the library behind ``orf analyze``; the CLI only formats what ``analyze_paths``
yields. Sessions come from the scan ``orf mine`` uses too (``stages/scan.py``), so both see
the same sessions and findings. Sub-agent trajectories are reported as sessions of their own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .config import Settings
from .formats.discover import Skipped, discover
from .model import Draft, Finding, ParseIssue, Trajectory, Verdict
from .stages.scan import ScanOptions, SessionScan, scan

if TYPE_CHECKING:
    from .detect.annotate import Repeat
    from .llm.backend import Backend
    from .stages.view import StoreContext


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
    repeats: list[Repeat] = field(default_factory=list)
    """Steps repeating an earlier action, as the scan marked them (none when it was not asked
    to: ``analyze_paths(repeats=False)``, the terminal report, shows none)."""

    @property
    def wasted_steps(self) -> int:
        """Wasted steps over all findings."""
        return sum(f.wasted_steps for f in self.findings)


__all__ = ["SessionReport", "analyze_paths", "iter_trajectories", "scan_paths"]


def iter_trajectories(
    paths: Iterable[Path], settings: Settings, issues: list[ParseIssue], fmt: str | None = None,
    skipped: list[Skipped] | None = None,
) -> Iterator[Trajectory]:
    """Parse every session under ``paths``, no detection (the scan's parse-only mode)."""
    for s in scan_paths(paths, settings, issues, fmt=fmt, skipped=skipped, parse_only=True):
        yield _trajectory(s)


def scan_paths(
    paths: Iterable[Path], settings: Settings, issues: list[ParseIssue], *,
    fmt: str | None = None, skipped: list[Skipped] | None = None, repeats: bool = True,
    parse_only: bool = False,
) -> Iterator[SessionScan]:
    """Every session under ``paths`` scanned, trajectory kept; problems go to ``issues``.

    ``parse_only`` runs no detector (no findings, no repeats): ``orf eval`` judges the logs.
    """
    # A detector bug raises here, as it always did for `orf analyze` (mine contains it).
    options = ScanOptions.from_settings(settings, keep_all=True, repeats=repeats and not parse_only,
                                        facts=False, contain_errors=False, parse_only=parse_only)
    for source in discover(paths, format=fmt, issues=issues, skipped=skipped):
        result = scan(source, options)
        yield from result.sessions
        issues.extend(result.issues)


def analyze_paths(
    paths: Iterable[Path],
    settings: Settings,
    issues: list[ParseIssue],
    *,
    fmt: str | None = None,
    draft: bool = False,
    skipped: list[Skipped] | None = None,
    repeats: bool = True,
) -> Iterator[SessionReport]:
    """Yield one report per session under ``paths``, in discovery order.

    Without ``draft`` the verdict comes from the log's own signals only (no LLM call). With
    ``draft`` the configured backend judges and drafts, ``settings.concurrency`` sessions at a
    time; nothing is written to the store. ``repeats`` marks the repeated steps in the scan
    (the JSON and HTML reports show them; the terminal report does not).
    """
    from .ledger import Ledger
    from .llm.registry import get_backend
    from .stages.judge import heuristic_verdict

    sessions = scan_paths(paths, settings, issues, fmt=fmt, skipped=skipped, repeats=repeats)
    if not draft:
        # Judging from the log's own signals never needs a model.
        for s in sessions:
            traj = _trajectory(s)
            yield _done(SessionReport(traj, s.findings, heuristic_verdict(traj),
                                      repeats=s.repeats or []))
        return
    # An existing ledger caches the model's answers; none is created: analyze writes nothing.
    with (Ledger(settings.ledger_path) if settings.ledger_path.exists()
          else contextlib.nullcontext(None)) as ledger:
        backend = get_backend(settings, ledger)
        context = _store_context(settings)
        # Chunks keep output streaming on a big folder while the pool stays busy.
        chunk: list[SessionScan] = []
        for item in sessions:
            chunk.append(item)
            if len(chunk) >= 4 * max(1, settings.concurrency):
                yield from _draft_chunk(chunk, backend, context, settings)
                chunk = []
        yield from _draft_chunk(chunk, backend, context, settings)


def _done(report: SessionReport) -> SessionReport:
    # Judged and drafted: the reports need the findings and repeats, not the step analysis
    # (every report is kept to the end of the run, so it would add a third to the memory).
    report.trajectory.analysis = None
    return report


def _trajectory(s: SessionScan) -> Trajectory:
    if s.trajectory is None:  # keep_all keeps every one
        raise AssertionError(f"{s.session_id}: scanned without its trajectory")
    return s.trajectory


def _draft_chunk(
    chunk: list[SessionScan],
    backend: Backend,
    context: StoreContext,
    settings: Settings,
) -> Iterator[SessionReport]:
    from .stages.analysis import analyze_sessions
    from .stages.screening import screen_problems

    items = [(_trajectory(s), s.findings) for s in chunk]
    results = analyze_sessions(items, backend, context, settings,
                               concurrency=settings.concurrency)
    for scanned, result in zip(chunk, results, strict=True):
        report = SessionReport(result.trajectory, result.findings, result.verdict,
                               repeats=scanned.repeats or [])
        report.draft_failures.extend(result.failures)
        for candidate in result.drafts:
            reasons = screen_problems(candidate, quality=False)
            if reasons:
                report.draft_failures.append(
                    f"dropped {candidate.title!r}: " + "; ".join(reasons))
            else:
                report.drafts.append(candidate)
        yield _done(report)


def _store_context(settings: Settings) -> StoreContext:
    from .stages.view import StoreContext, store_context

    try:
        from .orf import Store

        return store_context(Store(settings.store))
    except Exception:  # noqa: BLE001 - a broken store must not stop an analysis
        return StoreContext(categories=[], titles=[])
