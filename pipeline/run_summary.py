"""The ``orf mine`` summary, computed from what each stage returned."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .exit_codes import EXIT_ERROR, EXIT_OK, EXIT_PARTIAL
from .report.summary import MineSummary
from .run_events import LLMUsage
from .stages.publish import Published
from .stages.screening import Screened
from .stages.select import Selection
from .stages.sources import Sources


@dataclass(frozen=True)
class StageResults:
    """Every stage's output of one run (the later ones stay empty when nothing reached them)."""

    sources: Sources
    selection: Selection = field(default_factory=Selection)
    screened: Screened = field(default_factory=Screened)
    published: Published = field(default_factory=Published)
    repaired: list[str] = field(default_factory=list)
    """What the start-of-run repair and resume fixed."""


@dataclass(frozen=True)
class RunFacts:
    """What the summary tells about the run itself rather than its stages."""

    store: str
    backend: str
    model: str | None
    dry_run: bool
    batch: bool
    usage: LLMUsage
    cached: int
    elapsed_s: float
    fail_on_error: float


def summarize(stages: StageResults, run: RunFacts) -> MineSummary:
    """The summary of a run, its exit code included."""
    src, sel, scr, pub = stages.sources, stages.selection, stages.screened, stages.published
    drafts = Counter(pub.outcomes)
    if scr.dropped:
        drafts["dropped"] += scr.dropped
    summary = MineSummary(
        store=run.store, backend=run.backend, model=run.model, dry_run=run.dry_run,
        batch=run.batch, sessions_seen=src.seen, sessions_unchanged=src.unchanged,
        sessions_new=sel.read, sessions_failed=src.failed + sel.failed,
        sessions_selected=len(sel.selected), sessions_deferred=len(sel.deferred),
        findings=sel.findings, wasted_steps=sel.wasted_steps, drafts=drafts,
        dropped=Counter(scr.dropped_reasons), no_lesson=Counter(scr.no_lesson),
        llm_calls=run.usage.calls, llm_cached=run.cached, tokens_in=run.usage.tokens_in,
        tokens_out=run.usage.tokens_out, cost_usd=run.usage.cost_usd,
        written=list(pub.written), reinforced=list(pub.reinforced),
        issues=src.issues + sel.issues, skipped=list(src.skipped),
        skipped_special=list(src.skipped_special), errors=scr.errors + pub.errors,
        repaired=list(stages.repaired), elapsed_s=run.elapsed_s,
    )
    summary.exit_code = exit_code(summary, run.fail_on_error)
    return summary


def exit_code(s: MineSummary, fail_on_error: float) -> int:
    """0 ok, 1 error (nothing found, or failures past ``fail_on_error``), 3 partial."""
    if not s.sessions_seen:
        return EXIT_ERROR  # nothing to do: no session log under the given paths
    failed = s.sessions_failed + len(s.errors) + s.drafts.get("failed", 0)
    if not failed:
        return EXIT_OK
    attempted = max(1, s.sessions_new + s.sessions_failed)
    if failed / attempted > fail_on_error:
        return EXIT_ERROR
    return EXIT_PARTIAL
