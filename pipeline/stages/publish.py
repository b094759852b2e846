"""Stages 6 and 7 of ``orf mine``: screened drafts deduped against the store, then written.

``preview`` decides without writing (a dry run); ``publish`` skips what an interrupted run
already wrote, decides, writes through keyed intents (``stages/write.py``), and then records the
run in the ledger: the sessions analysed with their findings, and every source read (except
those whose sessions were deferred or failed the model, so the next run reads them again).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Settings
from ..history import record_history
from ..ledger import Ledger
from ..run_events import Emit, Written
from .dedupe import Known, dedupe, duplicate_judge, known_from_experience
from .pause import pause_point
from .scan import ScanResult, SessionScan
from .select import findings_fingerprint
from .sources import Source, source_hash
from .store_like import StoreLike
from .write import WriteItem, WriteResult, write_candidates, write_key

if TYPE_CHECKING:
    from ..llm.backend import Backend


@dataclass
class Published:
    """What became of the screened drafts."""

    outcomes: Counter[str] = field(default_factory=Counter)
    """By outcome: new, related, duplicate, existing (written before), failed."""
    written: list[dict[str, Any]] = field(default_factory=list)
    """Per playbook written (or, on a dry run, that would be)."""
    reinforced: list[dict[str, Any]] = field(default_factory=list)
    """Duplicates: which playbook they reinforced and from which session."""
    errors: list[str] = field(default_factory=list)
    """Drafts the store refused."""


def _known(store: StoreLike, ledger: Ledger) -> list[Known]:
    if not store.exists():
        return []
    extra = ledger.candidate_signatures()
    return [known_from_experience(e, extra.get(e.id, ())) for e in store.experiences()]


def _decide(items: list[WriteItem], store: StoreLike, ledger: Ledger, settings: Settings,
            backend: Backend | None) -> None:
    decisions = dedupe([it.draft for it in items], _known(store, ledger),
                       duplicate=settings.dedupe_duplicate, related=settings.dedupe_related,
                       judge=duplicate_judge(backend))
    for it, dec in zip(items, decisions, strict=True):
        it.decision = dec


def _written_before(it: WriteItem, ledger: Ledger) -> bool:
    return bool(ledger.done_intent(write_key(it.signature, it.session_id, ledger.scope)))


def preview(items: list[WriteItem], store: StoreLike, ledger: Ledger,
            settings: Settings) -> Published:
    """What ``publish`` would do, writing nothing (no model asked about look-alikes)."""
    out = Published()
    _decide(items, store, ledger, settings, None)
    for it in items:
        dec = it.decision
        if _written_before(it, ledger):
            out.outcomes["existing"] += 1
            continue
        out.outcomes[dec.outcome] += 1
        if dec.outcome == "duplicate":
            out.reinforced.append({"exp_id": dec.target or f"draft {dec.run_index}",
                                   "session_id": it.session_id})
        else:
            out.written.append({"id": None, "domain": it.draft.domain,
                                "title": it.draft.title, "outcome": dec.outcome,
                                "related_to": dec.target, "session_id": it.session_id,
                                "draft": it.draft.model_dump(mode="json")})
    return out


def publish(items: list[WriteItem], store: StoreLike, ledger: Ledger, backend: Backend,
            settings: Settings, emit: Emit) -> Published:
    """Dedupe and write the drafts not written before; emits ``Written`` per draft."""
    out = Published()
    fresh: list[WriteItem] = []
    for it in items:
        if _written_before(it, ledger):
            out.outcomes["existing"] += 1  # written by an earlier (interrupted) run
        else:
            fresh.append(it)
    _decide(fresh, store, ledger, settings, backend)

    def on_written(result: WriteResult) -> None:
        emit(Written(result.outcome, result.exp_id, result.error))

    report = write_candidates(fresh, store, ledger, backend=backend.name, model=backend.model,
                              on_written=on_written, absolute_paths=settings.absolute_paths)
    for it, res in zip(fresh, report.results, strict=True):
        out.outcomes[res.outcome] += 1
        if res.outcome == "duplicate":
            out.reinforced.append({"exp_id": res.exp_id, "session_id": it.session_id})
        elif res.outcome == "failed":
            out.errors.append(f"{it.session_id}: store refused {it.draft.title!r}: "
                              f"{res.error}")
        else:
            out.written.append({"id": res.exp_id, "path": res.path,
                                "title": it.draft.title, "outcome": res.outcome,
                                "related_to": res.related_to,
                                "session_id": it.session_id})
    return out


def record_run(ledger: Ledger, sources: Sequence[Source], scanned: Sequence[ScanResult],
               analyzed: Sequence[SessionScan], retry: set[str]) -> None:
    """Record the analysed sessions and the sources read, so the next run skips them.

    Args:
        ledger: Where they are recorded.
        sources: The sources that were read (their fingerprints).
        scanned: Their scan (with rejected findings removed).
        analyzed: The sessions judged and drafted.
        retry: Source paths to read again next run (deferred or failed by the model).
    """
    for sess in analyzed:
        if sess.path not in retry:
            ledger.mark_analyzed(sess.session_id, findings_fingerprint(sess))
    pause_point("written")
    by_key = {s.key: s for s in sources}
    for res in scanned:
        if res.path in retry:
            continue
        src = by_key[str(Path(res.path).resolve())]
        bad = res.fatal and not res.sessions
        ledger.record_source(
            src.key, size=src.size, mtime=src.mtime,
            content_hash=src.content_hash or source_hash(src.path, src.is_dir),
            format=src.format, status="failed" if bad else "ok",
            error="; ".join(str(i) for i in res.issues)[:2000] if bad else None,
            sessions=len(res.sessions), findings=sum(len(s.findings) for s in res.sessions),
            wasted_steps=sum(s.wasted_steps for s in res.sessions),
        )
        record_history(ledger, res.sessions)
