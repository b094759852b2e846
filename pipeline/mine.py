"""``orf mine``: the nightly batch, from log folders to candidate playbooks in the store.

discover -> skip unchanged (ledger) -> parse+detect (process pool) -> select -> judge+draft
(``analyze_many``: online pool or one batch job) -> screen -> dedupe -> write -> summary.

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
import glob
import os
import signal
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config import Settings
from .errors import OrfError
from .fsutil import store_lock
from .hashing import value_hash
from .ledger import Ledger
from .model import Draft, ParseIssue
from .report.summary import MineSummary

if TYPE_CHECKING:
    from .stages.llm_run import SessionResult
from .review import rejected_wasted
from .stages.dedupe import (
    Decision,
    Known,
    dedupe,
    draft_signature,
    draft_signatures,
    duplicate_judge,
    known_from_experience,
)
from .stages.scan import ScanResult, SessionScan, scan_source, source_fingerprint, source_hash
from .stages.write import (
    WriteItem,
    done_key,
    pause_point,
    prepare,
    reconcile,
    write_candidates,
    write_key,
)
from .trends.history import record_history

EXIT_OK, EXIT_ERROR, EXIT_PARTIAL = 0, 1, 3
"""Run outcomes (the CLI's exit codes): ok, error (past ``fail_on_error``), partial."""

Progress = Callable[[str], None]
"""Progress sink: one short line per event (the CLI prints them on stderr)."""

DEFAULT_LOCATIONS = (
    "~/.claude/projects",
    "~/.codex/sessions",
    "~/.gemini/tmp/*/chats",
    "~/.gemini/antigravity*/brain",
)
"""Where each agent keeps its sessions (``--default-locations``)."""

__all__ = ["DEFAULT_LOCATIONS", "MineSummary", "default_locations", "mine"]


def default_locations(home: Path | None = None) -> list[Path]:
    """The existing default session folders of the supported agents."""
    base = str(home or Path.home())
    found: list[Path] = []
    for pattern in DEFAULT_LOCATIONS:
        expanded = pattern.replace("~", base, 1)
        found.extend(Path(p) for p in sorted(glob.glob(expanded)) if Path(p).is_dir())
    return found


@dataclass
class _Source:
    path: Path
    format: str
    is_dir: bool
    key: str
    size: int
    mtime: float
    content_hash: str = ""
    forced: bool = False


def _since_epoch(since: datetime.date | datetime.datetime | None) -> float | None:
    if since is None:
        return None
    if isinstance(since, datetime.datetime):
        moment = since if since.tzinfo else since.replace(tzinfo=datetime.timezone.utc)
    else:
        moment = datetime.datetime(since.year, since.month, since.day,
                                   tzinfo=datetime.timezone.utc)
    return moment.timestamp()


def _changed_sources(
    paths: Sequence[Path], settings: Settings, ledger: Ledger, summary: MineSummary,
    since: float | None, fmt: str | None,
) -> list[_Source]:
    from .formats.discover import Skipped, discover

    issues: list[ParseIssue] = []
    skipped: list[Skipped] = []
    todo: list[_Source] = []
    for src in discover(paths, format=fmt, issues=issues, skipped=skipped):
        summary.sessions_seen += 1
        key = str(src.path.resolve())
        try:
            size, mtime = source_fingerprint(src.path, src.is_dir)
        except OSError as exc:
            summary.issues.append(f"{src.path}: cannot stat: {exc.strerror or exc}")
            summary.sessions_failed += 1
            continue
        if since is not None and mtime < since:
            summary.sessions_unchanged += 1
            continue
        known = ledger.source(key)
        if known is not None and known.size == size and known.mtime == mtime:
            summary.sessions_unchanged += 1
            continue
        item = _Source(src.path, src.format, src.is_dir, key, size, mtime, forced=src.forced)
        if known is not None:
            # Touched but maybe not changed (copied, synced): the hash decides.
            item.content_hash = source_hash(src.path, src.is_dir)
            if item.content_hash == known.content_hash:
                summary.sessions_unchanged += 1
                if not summary.dry_run:
                    ledger.record_source(key, size=size, mtime=mtime,
                                         content_hash=known.content_hash, format=known.format,
                                         status=known.status, error=known.error)
                continue
        todo.append(item)
    summary.skipped.extend(str(s) for s in skipped if not s.special)
    summary.skipped_special.extend(str(s) for s in skipped if s.special)
    for issue in issues:
        if issue.fatal and _known_failure(issue, ledger, summary.dry_run):
            summary.sessions_seen += 1
            summary.sessions_unchanged += 1
            continue
        summary.issues.append(str(issue))
        if issue.fatal:
            summary.sessions_failed += 1
            summary.sessions_seen += 1
    return todo


def _known_failure(issue: ParseIssue, ledger: Ledger, dry_run: bool) -> bool:
    """True when the ledger already reported this unreadable, unchanged file; else record it.

    A file that cannot be read fails the same way every night: report it once, not forever.
    """
    path = Path(issue.path)
    try:
        st = path.stat()
    except OSError:
        return False
    key = str(path.resolve())
    known = ledger.source(key)
    if known is not None and known.status == "failed" and known.size == st.st_size \
            and known.mtime == st.st_mtime:
        return True
    if not dry_run and path.is_file():
        ledger.record_source(key, size=st.st_size, mtime=st.st_mtime,
                             content_hash=source_hash(path, False), format=None,
                             status="failed", error=issue.message[:2000])
    return False


def _scan_all(todo: Sequence[_Source], settings: Settings,
              progress: Progress) -> list[ScanResult]:
    options = {
        "output_max_chars": settings.output_max_chars,
        "max_line_bytes": settings.max_line_bytes,
        "detect": settings.detect.model_dump(),
        "min_wasted_steps": settings.min_wasted_steps,
    }
    results: list[ScanResult] = []
    jobs = max(1, min(settings.jobs, len(todo)))
    if jobs == 1:
        for i, s in enumerate(todo, 1):
            results.append(scan_source(str(s.path), s.format, s.is_dir,
                                       {**options, "forced": s.forced}))
            progress(f"scanned {i}/{len(todo)} sources")
        return results
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_worker_init)
    try:
        futures = [pool.submit(scan_source, str(s.path), s.format, s.is_dir,
                               {**options, "forced": s.forced}) for s in todo]
        for i, (s, fut) in enumerate(zip(todo, futures, strict=True), 1):
            try:
                results.append(fut.result())
            except Exception as exc:  # noqa: BLE001 - a crashed worker fails one source only
                results.append(ScanResult(str(s.path), s.format, issues=[
                    f"{s.path}: worker failed: {type(exc).__name__}: {exc}"], fatal=True))
            progress(f"scanned {i}/{len(todo)} sources")
    except BaseException:
        # Ctrl-C: stop now. Leaving the pool through `with` would wait for every queued scan.
        _stop_pool(pool)
        raise
    pool.shutdown(wait=True)
    return results


def _worker_init() -> None:
    # Ctrl-C reaches the whole process group: the parent stops the workers, so they ignore it
    # (no traceback per worker).
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel queued scans and end the workers at once (they hold nothing to save)."""
    pool.shutdown(wait=False, cancel_futures=True)
    procs = list((getattr(pool, "_processes", None) or {}).values())
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.join(timeout=1.0)


def _filter_rejected(scan: SessionScan, ledger: Ledger, min_wasted: int) -> bool:
    """Drop findings a reviewer rejected (unless the evidence grew); True if any remain."""
    kept = []
    for f in scan.findings:
        limit = rejected_wasted(ledger, f.signature)
        if limit is None or f.wasted_steps > limit:
            kept.append(f)
    scan.findings = kept
    scan.wasted_steps = sum(f.wasted_steps for f in kept)
    return bool(kept) and scan.wasted_steps >= min_wasted


def _fingerprint(scan: SessionScan) -> str:
    return value_hash(sorted((f.signature, f.wasted_steps) for f in scan.findings))


def _analyzed_before(ledger: Ledger, scan: SessionScan) -> bool:
    """True when this session went through judge/draft with these very findings.

    A source is re-read when any of its sessions changed or was deferred; its other sessions
    (and every session after a run killed between writing and recording its sources) are not
    sent to the model again.
    """
    return ledger.analyzed_fingerprint(scan.session_id) == _fingerprint(scan)


def _steps_label(indices: Iterable[int]) -> str:
    idx = sorted(set(indices))
    if not idx:
        return ""
    runs: list[str] = []
    start = prev = idx[0]
    for i in idx[1:] + [None]:  # type: ignore[list-item]
        if i is not None and i == prev + 1:
            prev = i
            continue
        runs.append(f"{start}-{prev}" if prev != start else str(start))
        if i is not None:
            start = prev = i
    return ",".join(runs)


def _provenance(draft: Draft, scan: SessionScan, verdict: Any, backend: Any) -> tuple[str, int]:
    sig = draft_signature(draft)
    sigs = draft_signatures(draft)
    related = [f for f in scan.findings if f.signature in sigs] or scan.findings
    wasted = sum(f.wasted_steps for f in related)
    prov = dict(draft.provenance or {})
    prov["signature"] = sig
    prov["sessions"] = [{
        "id": scan.session_id, "path": scan.path, "format": scan.format,
        "steps": _steps_label(i for f in related for i in f.steps),
        "wasted_steps": wasted,
    }]
    if verdict is not None:
        dump = verdict.model_dump(mode="json") if hasattr(verdict, "model_dump") else verdict
        prov["verdict"] = {k: dump.get(k) for k in ("outcome", "reason", "decided_by")
                           if dump.get(k) is not None}
    prov["backend"] = getattr(backend, "name", None) or prov.get("backend")
    prov["model"] = getattr(backend, "model", None) or prov.get("model")
    draft.provenance = prov
    return sig, wasted


def _store_context(store: Any) -> Any:
    from .stages.view import StoreContext

    if not store.exists():
        return StoreContext()
    return StoreContext(categories=[(c.id, c.name, c.description) for c in store.categories()],
                        titles=[e.title for e in store.experiences()])


def _known(store: Any, ledger: Ledger) -> list[Known]:
    if not store.exists():
        return []
    extra = ledger.candidate_signatures()
    return [known_from_experience(e, extra.get(e.id, ())) for e in store.experiences()]


def _analyze(sessions: list[SessionScan], backend: Any, context: Any, settings: Settings,
             batch: bool, progress: Progress) -> list[SessionResult]:
    from .stages.llm_run import analyze_many

    done = 0

    def on_progress(what: str, n: int, total: int) -> None:
        nonlocal done
        progress(f"{what}: {n}/{total}")
        if n > done:
            done = n
            pause_point("drafting")

    items = [(s.trajectory, s.findings) for s in sessions if s.trajectory is not None]
    results = list(analyze_many(items, backend, context, concurrency=settings.concurrency,
                                batch=batch, progress=on_progress))
    if not done:
        pause_point("drafting")  # the offline backend reports no progress
    return results


def mine(
    paths: Sequence[Path],
    settings: Settings,
    *,
    since: datetime.date | datetime.datetime | None = None,
    dry_run: bool = False,
    batch: bool = False,
    default_locations: bool = False,
    progress: Progress | None = None,
    format: str | None = None,
    client: Any = None,
) -> MineSummary:
    """Run the nightly batch over ``paths`` into ``settings.store``.

    Args:
        paths: Files and folders holding session logs.
        settings: Run settings (store, ledger, backend, thresholds, jobs, lock timeout).
        since: Only sources modified on or after this date.
        dry_run: Draft and dedupe but write nothing (see the module docstring).
        batch: Send judge/draft requests as one Gemini Batch Mode job.
        default_locations: Also look in each agent's usual session folder.
        progress: Receives one line per event (stderr in the CLI).
        format: Force a log format (skip sniffing).
        client: A ready ``google.genai.Client`` (tests point it at the fake server).

    Returns:
        The run's summary; ``exit_code`` is 0 ok, 1 error, 3 partial.

    Raises:
        LockTimeout: Another run held the store lock past ``settings.lock_timeout_s``.
    """
    from .llm.registry import get_backend
    from .orf import Store

    started = time.time()
    say = progress or (lambda _line: None)
    all_paths = list(paths)
    if default_locations:
        found = _default_paths()
        all_paths += found
        say("default locations: " + (", ".join(map(str, found)) if found else
                                     "none found (looked for " + ", ".join(DEFAULT_LOCATIONS)
                                     + ")"))
    store = Store(settings.store, lock_timeout=settings.lock_timeout_s)
    ledger = Ledger(settings.ledger_path, store=settings.store)
    try:
        backend = get_backend(settings, ledger, client=client)
        summary = MineSummary(store=str(settings.store), backend=getattr(backend, "name", ""),
                              model=getattr(backend, "model", None), dry_run=dry_run,
                              batch=batch)
        _run(all_paths, settings, store, ledger, backend, summary, since, batch, say, format,
             started)
        totals = ledger.call_totals(since=started)
        summary.llm_calls = int(totals["calls"])
        summary.tokens_in = int(totals["tokens_in"])
        summary.tokens_out = int(totals["tokens_out"])
        summary.cost_usd = float(totals["cost_usd"])
        row = ledger.db.execute("SELECT COUNT(*) FROM llm_calls WHERE status = 'cached'"
                                " AND created_at >= ?", (started,)).fetchone()
        summary.llm_cached = int(row[0])
    finally:
        ledger.close()
    summary.elapsed_s = time.time() - started
    summary.exit_code = _exit_code(summary, settings.fail_on_error)
    return summary


def _default_paths() -> list[Path]:
    return default_locations()


def _exit_code(s: MineSummary, fail_on_error: float) -> int:
    if not s.sessions_seen:
        return EXIT_ERROR  # nothing to do: no session log under the given paths
    failed = s.sessions_failed + len(s.errors) + s.drafts.get("failed", 0)
    if not failed:
        return EXIT_OK
    attempted = max(1, s.sessions_new + s.sessions_failed)
    if failed / attempted > fail_on_error:
        return EXIT_ERROR
    return EXIT_PARTIAL


def _run(paths: list[Path], settings: Settings, store: Any, ledger: Ledger, backend: Any,
         summary: MineSummary, since: datetime.date | datetime.datetime | None, batch: bool,
         say: Progress, fmt: str | None, started: float) -> None:
    todo = _changed_sources(paths, settings, ledger, summary, _since_epoch(since), fmt)
    say(f"sessions: {summary.sessions_seen} seen, {len(todo)} new or changed, "
        f"{summary.sessions_unchanged} unchanged")
    scans = _scan_all(todo, settings, say) if todo else []
    by_key = {s.key: s for s in todo}
    selectable: list[SessionScan] = []
    for res in scans:
        summary.issues.extend(res.issues)
        if res.fatal and not res.sessions:
            summary.sessions_failed += 1
            continue
        summary.sessions_new += 1
        for sess in res.sessions:
            summary.findings += len(sess.findings)
            summary.wasted_steps += sess.wasted_steps
            if sess.trajectory is not None and _filter_rejected(sess, ledger,
                                                                settings.min_wasted_steps) \
                    and not _analyzed_before(ledger, sess):
                selectable.append(sess)
    say(f"findings: {summary.findings} ({summary.wasted_steps} wasted steps)")
    pause_point("scanned")

    selectable.sort(key=lambda s: (-s.wasted_steps, s.session_id))
    selected = selectable[: settings.max_sessions_per_run]
    deferred_paths = {s.path for s in selectable[settings.max_sessions_per_run:]}
    summary.sessions_selected = len(selected)
    summary.sessions_deferred = len(selectable) - len(selected)

    results = _analyze(selected, backend, _store_context(store), settings, batch, say) \
        if selected else []
    if selected:
        so_far = ledger.call_totals(since=started)
        say(f"llm: {so_far['calls']} calls, {so_far['tokens_in']} in / {so_far['tokens_out']}"
            f" out tokens, ${so_far['cost_usd']:.4f} so far")
    items, failed_paths = _collect(selected, results, backend, ledger, summary)

    if summary.dry_run:
        _preview(items, store, ledger, settings, summary)
        return
    with store_lock(Path(settings.store), settings.lock_timeout_s):
        summary.repaired.extend(prepare(store))
        summary.repaired.extend(reconcile(store, ledger))
        _dedupe_and_write(items, store, ledger, backend, settings, summary, say)
        for sess in selected:
            if sess.path not in failed_paths:
                ledger.mark_analyzed(sess.session_id, _fingerprint(sess))
        pause_point("written")
        skip = deferred_paths | failed_paths
        failed_by_path = {r.path: r for r in scans if r.fatal and not r.sessions}
        for res in scans:
            if res.path in skip:
                continue
            src = by_key[str(Path(res.path).resolve())]
            if not src.content_hash:
                src.content_hash = source_hash(src.path, src.is_dir)
            bad = failed_by_path.get(res.path)
            ledger.record_source(
                src.key, size=src.size, mtime=src.mtime, content_hash=src.content_hash,
                format=src.format, status="failed" if bad else "ok",
                error="; ".join(bad.issues)[:2000] if bad else None,
                sessions=len(res.sessions), findings=sum(len(s.findings) for s in res.sessions),
                wasted_steps=sum(s.wasted_steps for s in res.sessions),
            )
            record_history(ledger, res.sessions)


def _collect(selected: list[SessionScan], results: list[SessionResult], backend: Any,
             ledger: Ledger, summary: MineSummary) -> tuple[list[WriteItem], set[str]]:
    from .llm.screen import screen_draft
    from .stages.draft import NO_LESSON
    from .stages.quality import quality_problems

    items: list[WriteItem] = []
    failed_paths: set[str] = set()
    for scan, res in zip(selected, results, strict=False):
        drafts: list[Draft] = list(res.drafts)
        # "undrafted: <why>" is the model failing even after the repair attempt: retry the
        # session next run (its good replies are cached). Other notes ("attempt 1: ...",
        # findings without a resolving step) are normal and not errors.
        errors = [f for f in res.failures if f.startswith("undrafted:")]
        if errors:
            summary.errors.extend(f"{scan.session_id}: {e}" for e in errors)
            failed_paths.add(scan.path)
        for note in res.failures:
            if note.startswith(NO_LESSON):
                summary.no_lesson[note.removeprefix(NO_LESSON).split(" (")[0]] += 1
        verdict = res.verdict
        for draft in drafts:
            reasons = list(screen_draft(draft)) + quality_problems(draft)
            sig, wasted = _provenance(draft, scan, verdict, backend)
            if reasons:
                summary.drafts["dropped"] += 1
                for r in reasons:
                    summary.dropped[r.split(":")[0]] += 1
                if not summary.dry_run:
                    ledger.record_candidate(signature=sig, status="dropped", domain=draft.domain,
                                            title=draft.title, reason="; ".join(reasons),
                                            sessions=[scan.session_id], wasted_steps=wasted)
                continue
            limit = rejected_wasted(ledger, sig)
            if limit is not None and wasted <= limit:
                summary.drafts["dropped"] += 1
                summary.dropped["rejected in review"] += 1
                continue
            items.append(WriteItem(draft, Decision("new"), scan.session_id, sig, wasted))
    # Most valuable first: the first of two look-alikes becomes the playbook.
    items.sort(key=lambda it: (-it.wasted_steps, it.session_id, it.signature))
    return items, failed_paths


def _decide(items: list[WriteItem], store: Any, ledger: Ledger, settings: Settings,
            backend: Any) -> None:
    decisions = dedupe([it.draft for it in items], _known(store, ledger),
                       duplicate=settings.dedupe_duplicate, related=settings.dedupe_related,
                       judge=duplicate_judge(backend))
    for it, dec in zip(items, decisions, strict=True):
        it.decision = dec


def _preview(items: list[WriteItem], store: Any, ledger: Ledger, settings: Settings,
             summary: MineSummary) -> None:
    _decide(items, store, ledger, settings, None)
    for it in items:
        dec = it.decision
        if done_key(ledger, write_key(it.signature, it.session_id, ledger.scope)):
            summary.drafts["existing"] += 1
            continue
        summary.drafts[dec.outcome] += 1
        if dec.outcome == "duplicate":
            summary.reinforced.append({"exp_id": dec.target or f"draft {dec.run_index}",
                                       "session_id": it.session_id})
        else:
            summary.written.append({"id": None, "domain": it.draft.domain,
                                    "title": it.draft.title, "outcome": dec.outcome,
                                    "related_to": dec.target, "session_id": it.session_id,
                                    "draft": it.draft.model_dump(mode="json")})


def _dedupe_and_write(items: list[WriteItem], store: Any, ledger: Ledger, backend: Any,
                      settings: Settings, summary: MineSummary, say: Progress) -> None:
    fresh: list[WriteItem] = []
    for it in items:
        if done_key(ledger, write_key(it.signature, it.session_id, ledger.scope)):
            summary.drafts["existing"] += 1  # written by an earlier (interrupted) run
        else:
            fresh.append(it)
    _decide(fresh, store, ledger, settings, backend)

    def on_written(result: Any) -> None:
        say(f"{result.outcome}: {result.exp_id or result.error}")

    report = write_candidates(fresh, store, ledger, backend=summary.backend,
                              model=summary.model, on_written=on_written)
    for it, res in zip(fresh, report.results, strict=True):
        summary.drafts[res.outcome] += 1
        if res.outcome == "duplicate":
            summary.reinforced.append({"exp_id": res.exp_id, "session_id": it.session_id})
        elif res.outcome == "failed":
            summary.errors.append(f"{it.session_id}: store refused {it.draft.title!r}: "
                                  f"{res.error}")
        else:
            summary.written.append({"id": res.exp_id, "path": res.path,
                                    "title": it.draft.title, "outcome": res.outcome,
                                    "related_to": res.related_to,
                                    "session_id": it.session_id})


def check_paths(paths: Sequence[Path]) -> None:
    """Raise ``OrfError`` for a path that does not exist (before any work starts)."""
    for p in paths:
        if not os.path.exists(p):
            raise OrfError(f"{p}: no such file or folder")
