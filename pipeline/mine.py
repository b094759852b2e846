"""``orf mine``: the nightly batch, from log folders to candidate playbooks in the store.

A chain of typed stages, each a function of the previous one's output (``stages/``):
sources (discover, skip unchanged) -> scan (parse + detect, process pool) -> selection ->
judge and draft (``stages.analysis.analyze_sessions``: online pool or batch jobs) -> screened ->
deduped and written -> recorded; the summary is computed from what they returned
(``run_summary.py``).

Incremental: a source whose size and mtime (then content hash) match the ledger is skipped, so
a rerun over unchanged logs parses nothing and makes no LLM call. Resumable: sources are marked
processed only after their drafts are written, and writes are keyed intents (see
``stages/write.py``), so a run killed anywhere is finished by the next one without duplicates.

``dry_run`` goes as far as drafting and dedupe, and writes nothing to the store; the only ledger
rows it adds are the LLM calls the backend records (the cache), so the real run that follows
does not pay for the same calls twice.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config import Settings
from .fsutil import store_lock
from .ledger import Ledger
from .report.summary import MineSummary
from .run_events import DefaultLocations, Emit, FindingsFound, LLMUsage, SourcesFound, ignore
from .run_summary import RunFacts, StageResults, summarize
from .stages.judge_draft import judge_and_draft
from .stages.pause import pause_point
from .stages.publish import preview, publish, record_run
from .stages.scan import ScanOptions, scan_all
from .stages.screening import Screened, screen_results
from .stages.select import select_sessions
from .stages.sources import (
    DEFAULT_LOCATIONS,
    Source,
    default_locations,
    find_sources,
    since_epoch,
    source_hash,
)
from .stages.view import store_context
from .stages.write import prepare, reconcile

if TYPE_CHECKING:
    from .llm.backend import Backend
    from .stages.store_like import StoreLike

__all__ = ["DEFAULT_LOCATIONS", "MineRequest", "MineSummary", "default_locations", "mine", "run"]


@dataclass(frozen=True)
class MineRequest:
    """One ``orf mine`` run: what to read, how, and where to (``settings.store``)."""

    paths: tuple[Path, ...]
    """Files and folders holding session logs."""
    settings: Settings
    """Store, ledger, backend, thresholds, jobs, lock timeout."""
    since: datetime.date | datetime.datetime | None = None
    """Only sources modified on or after this date."""
    dry_run: bool = False
    """Draft and dedupe but write nothing (see the module docstring)."""
    batch: bool = False
    """Send judge/draft requests as one Gemini Batch Mode job."""
    default_locations: bool = False
    """Also look in each agent's usual session folder."""
    format: str | None = None
    """Force a log format (skip sniffing)."""
    client: Any = None
    """A ready SDK client for the backend (tests point it at a fake server)."""


def mine(
    paths: Sequence[Path],
    settings: Settings,
    *,
    since: datetime.date | datetime.datetime | None = None,
    dry_run: bool = False,
    batch: bool = False,
    default_locations: bool = False,
    progress: Emit | None = None,
    format: str | None = None,
    client: Any = None,
) -> MineSummary:
    """Run the nightly batch over ``paths`` into ``settings.store`` (see ``MineRequest``).

    ``progress`` receives the run's events (``run_events``); the CLI renders them on stderr.

    Returns:
        The run's summary; ``exit_code`` is 0 ok, 1 error, 3 partial.

    Raises:
        LockTimeout: Another run held the store lock past ``settings.lock_timeout_s``.
    """
    request = MineRequest(tuple(paths), settings, since=since, dry_run=dry_run, batch=batch,
                          default_locations=default_locations, format=format, client=client)
    return run(request, progress or ignore)


def run(request: MineRequest, emit: Emit) -> MineSummary:
    """Run ``request``, emitting its events; the summary is computed from the stages."""
    from .llm.registry import get_backend
    from .orf import Store

    started = time.time()
    settings = request.settings
    paths = list(request.paths)
    if request.default_locations:
        found = default_locations()
        paths += found
        emit(DefaultLocations(tuple(found), DEFAULT_LOCATIONS))
    store = Store(settings.store, lock_timeout=settings.lock_timeout_s)
    ledger = Ledger(settings.ledger_path, store=settings.store)
    try:
        backend = get_backend(settings, ledger, client=request.client)
        stages = _stages(request, paths, store, ledger, backend, emit, started)
        usage, cached = _usage(ledger, started), ledger.cache_hits(since=started)
    finally:
        ledger.close()
    return summarize(stages, RunFacts(
        store=str(settings.store), backend=backend.name, model=backend.model,
        dry_run=request.dry_run, batch=request.batch,
        usage=usage, cached=cached, elapsed_s=time.time() - started,
        fail_on_error=settings.fail_on_error))


def _usage(ledger: Ledger, started: float) -> LLMUsage:
    totals = ledger.call_totals(since=started)
    return LLMUsage(int(totals["calls"]), int(totals["tokens_in"]), int(totals["tokens_out"]),
                    float(totals["cost_usd"]))


def retried(ledger: Ledger, todo: Sequence[Source], screened: Screened, backend: Backend,
            bound: int) -> set[str]:
    """The sources whose sessions the model failed that are read again next run.

    Each such run is counted by content and model; past ``bound`` runs the source is recorded
    with its reason instead, so unchanged logs stop costing requests every night. A changed
    log or another model starts the count again.
    """
    by_path = {str(s.path): s for s in todo}
    again: set[str] = set()
    for path in sorted(screened.failed_paths):
        src = by_path.get(path)
        if src is None:
            again.add(path)
            continue
        why = "; ".join(screened.errors)[:500]
        runs = ledger.note_undrafted(src.key, src.content_hash or source_hash(src.path,
                                                                             src.is_dir),
                                     backend.model or backend.name, why)
        if runs < bound:
            again.add(path)
    return again


def _stages(request: MineRequest, paths: list[Path], store: StoreLike, ledger: Ledger,
            backend: Backend, emit: Emit, started: float) -> StageResults:
    settings, dry_run = request.settings, request.dry_run
    sources = find_sources(paths, ledger, since=since_epoch(request.since), fmt=request.format,
                           dry_run=dry_run)
    emit(SourcesFound(sources.seen, len(sources.todo), sources.unchanged))
    # A model reads every session with an episode; the heuristic only the rules' lessons.
    episodes = backend.name != "heuristic" and settings.reader == "episodes"
    scans = scan_all([s.session_source() for s in sources.todo],
                     ScanOptions.from_settings(settings, episodes=episodes), settings.jobs,
                     emit) if sources.todo else []
    selection = select_sessions(scans, ledger, min_wasted=settings.min_wasted_steps,
                                max_sessions=settings.max_sessions_per_run, episodes=episodes)
    emit(FindingsFound(selection.findings, selection.wasted_steps))
    pause_point("scanned")

    selected = selection.selected
    results = judge_and_draft(selected, backend, store_context(store), settings,
                              concurrency=settings.concurrency, batch=request.batch,
                              emit=emit) if selected else []
    if selected:
        emit(_usage(ledger, started))
    screened = screen_results(selected, results, backend, ledger, record=not dry_run)
    if dry_run:
        return StageResults(sources, selection, screened,
                            preview(screened.items, store, ledger, settings))
    with store_lock(Path(settings.store), settings.lock_timeout_s):
        repaired = prepare(store) + reconcile(store, ledger)
        published = publish(screened.items, store, ledger, backend, settings, emit)
        retry = retried(ledger, sources.todo, screened, backend, settings.max_draft_retries)
        record_run(ledger, sources.todo, selection.scanned, selected,
                   retry=selection.deferred_paths | retry)
    return StageResults(sources, selection, screened, published, repaired)
