"""One-off analysis: parse sessions, find loops, judge and (optionally) draft, write nothing.

This is the library behind ``orf analyze``; the CLI only formats what ``analyze_paths``
yields. Sub-agent trajectories are reported as sessions of their own.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .config import Settings
from .detect import detect_all
from .formats.base import ParseContext
from .formats.discover import Skipped, discover, parse_source
from .model import Draft, Finding, ParseIssue, Trajectory, Verdict

if TYPE_CHECKING:
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
    paths: Iterable[Path], settings: Settings, issues: list[ParseIssue], fmt: str | None = None,
    skipped: list[Skipped] | None = None,
) -> Iterator[Trajectory]:
    """Parse every session under ``paths``; problems go to ``issues``, never raise."""
    for source in discover(paths, format=fmt, issues=issues, skipped=skipped):
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
    skipped: list[Skipped] | None = None,
) -> Iterator[SessionReport]:
    """Yield one report per session under ``paths``, in discovery order.

    Without ``draft`` the verdict comes from the log's own signals only (no LLM call). With
    ``draft`` the configured backend judges and drafts, ``settings.concurrency`` sessions at a
    time; nothing is written to the store.
    """
    from .stages.judge import judge

    sessions = ((t, detect_all(t, settings.detect))
                for t in iter_trajectories(paths, settings, issues, fmt, skipped))
    if not draft:
        offline = _backend(settings, False)
        for traj, findings in sessions:
            yield SessionReport(traj, findings, judge(traj, findings, offline))
        return
    backend = _backend(settings, True)
    context = _store_context(settings)
    # Chunks keep output streaming on a big folder while the pool stays busy.
    chunk: list[tuple[Trajectory, list[Finding]]] = []
    for item in sessions:
        chunk.append(item)
        if len(chunk) >= 4 * max(1, settings.concurrency):
            yield from _draft_chunk(chunk, backend, context, settings)
            chunk = []
    yield from _draft_chunk(chunk, backend, context, settings)


def _draft_chunk(
    chunk: list[tuple[Trajectory, list[Finding]]],
    backend: Backend,
    context: StoreContext,
    settings: Settings,
) -> Iterator[SessionReport]:
    from .llm.screen import screen_draft
    from .stages.llm_run import analyze_many

    for result in analyze_many(chunk, backend, context, concurrency=settings.concurrency):
        report = SessionReport(result.trajectory, result.findings, result.verdict)
        report.draft_failures.extend(result.failures)
        for candidate in result.drafts:
            reasons = screen_draft(candidate)
            if reasons:
                report.draft_failures.append(
                    f"dropped {candidate.title!r}: " + "; ".join(reasons))
            else:
                report.drafts.append(candidate)
        yield report


def _backend(settings: Settings, draft: bool) -> Backend:
    from .llm.registry import get_backend

    if not draft:
        # Judging from the log's own signals never needs a model.
        return get_backend(settings.model_copy(update={"backend": "heuristic"}))
    from .ledger import Ledger

    return get_backend(settings, Ledger(settings.ledger_path))


def _store_context(settings: Settings) -> StoreContext:
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
