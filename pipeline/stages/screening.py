"""Stage 5: the judged and drafted sessions' drafts screened, with their provenance.

A draft goes on to dedupe when no screen (``llm/screen.py``: secrets, shape) and no quality
rule (``stages/quality.py``) objects, and a reviewer did not reject its signature at this much
evidence.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..ledger import Ledger
from ..model import Draft, Verdict
from ..provenance import SessionRef, steps_label
from .dedupe import Decision, draft_signature, draft_signatures
from .scan import SessionScan
from .write import WriteItem

if TYPE_CHECKING:
    from ..llm.backend import Backend
    from ..results import SessionResult

REJECTED = "rejected:"
"""Prefix of a draft the verifier rejected (``stages/learn.py``, ``heuristic_draft.py``)."""
UNDRAFTED = "undrafted:"
"""Prefix of the model failing even after the repair attempt: the session is retried."""


def screen_problems(draft: Draft, *, quality: bool = True) -> list[str]:
    """Why ``draft`` must not be written (``reason: detail`` lines), empty when it may."""
    from ..llm.screen import screen_draft
    from .quality import quality_problems

    reasons = list(screen_draft(draft))
    return reasons + quality_problems(draft) if quality else reasons


@dataclass
class Screened:
    """The drafts that go on to dedupe, and what became of the others."""

    items: list[WriteItem] = field(default_factory=list)
    """Most wasted steps first: the first of two look-alikes becomes the playbook."""
    failed_paths: set[str] = field(default_factory=set)
    """Sources of the sessions the model failed: not recorded, retried next run."""
    errors: list[str] = field(default_factory=list)
    """``session: undrafted: why`` lines."""
    dropped: int = 0
    """Drafts dropped by a screen or a reviewer's rejection."""
    dropped_reasons: Counter[str] = field(default_factory=Counter)
    no_lesson: Counter[str] = field(default_factory=Counter)
    """Findings of the drafted sessions that taught nothing, by reason."""


def screen_results(selected: Sequence[SessionScan], results: Sequence[SessionResult],
                   backend: Backend, ledger: Ledger, *, record: bool) -> Screened:
    """Screen the drafts of each judged and drafted session.

    Args:
        selected: The sessions sent to judge and draft.
        results: ``judge_and_draft``'s results: one per session with a trajectory, in order
            (a count that does not match raises ``ValueError``: no draft goes to a wrong session).
        backend: The backend that judged and drafted (named in the provenance).
        ledger: Holds the reviewer's rejections; records the dropped drafts when ``record``.
        record: False on a dry run.
    """
    from .draft import NO_LESSON

    out = Screened()
    drafted = [s for s in selected if s.trajectory is not None]  # what judge_and_draft sent
    for scan, res in zip(drafted, results, strict=True):
        # Other notes ("attempt 1: ...", findings without a resolving step) are normal.
        errors = [f for f in res.failures if f.startswith(UNDRAFTED)]
        if errors:
            out.errors.extend(f"{scan.session_id}: {e}" for e in errors)
            out.failed_paths.add(scan.path)
        for note in res.failures:
            if note.startswith(NO_LESSON):
                out.no_lesson[note.removeprefix(NO_LESSON).split(" (")[0]] += 1
            elif note.startswith(REJECTED):
                # The verifier's rejection: counted by rule, and kept in the ledger.
                rule = note.removeprefix(REJECTED).split(":", 1)[0].strip()
                out.dropped += 1
                out.dropped_reasons[f"verifier {rule}"] += 1
                if record:
                    ledger.record_candidate(
                        signature="", status="dropped", domain="", title="",
                        reason=note, sessions=[scan.session_id], wasted_steps=0)
        for draft in res.drafts:
            item = _screen_draft(draft, scan, res.verdict, backend, ledger, out, record)
            if item is not None:
                out.items.append(item)
    out.items.sort(key=lambda it: (-it.wasted_steps, it.session_id, it.signature))
    return out


def _screen_draft(draft: Draft, scan: SessionScan, verdict: Verdict, backend: Backend,
                  ledger: Ledger, out: Screened, record: bool) -> WriteItem | None:
    reasons = screen_problems(draft)
    sig, wasted = _provenance(draft, scan, verdict, backend)
    if reasons:
        out.dropped += 1
        for r in reasons:
            out.dropped_reasons[r.split(":")[0]] += 1
        if record:
            ledger.record_candidate(signature=sig, status="dropped", domain=draft.domain,
                                    title=draft.title, reason="; ".join(reasons),
                                    sessions=[scan.session_id], wasted_steps=wasted)
        return None
    limit = ledger.rejected_wasted(sig)
    if limit is not None and wasted <= limit:
        out.dropped += 1
        out.dropped_reasons["rejected in review"] += 1
        return None
    return WriteItem(draft, Decision("new"), scan.session_id, sig, wasted)


def _provenance(draft: Draft, scan: SessionScan, verdict: Verdict,
                backend: Backend) -> tuple[str, int]:
    sig = draft_signature(draft)
    sigs = draft_signatures(draft)
    if draft.provenance.finding_kind == "episode":
        # A draft a model (or the user's agent) wrote from an episode cites its own steps.
        cited = (draft.provenance.model_extra or {}).get("evidence") or {}
        steps = [*cited.get("trap_steps", ()), *cited.get("fix_steps", ())]
        wasted = draft.provenance.wasted_steps or 0
    else:
        related = [f for f in scan.findings if f.signature in sigs] or scan.findings
        steps = [i for f in related for i in f.steps]
        wasted = sum(f.wasted_steps for f in related)
    session = SessionRef(id=scan.session_id, path=scan.path, format=scan.format,
                         steps=steps_label(steps), wasted_steps=wasted)
    draft.provenance = draft.provenance.screened(
        sig, session, verdict.model_dump(mode="json"), backend.name, backend.model)
    return sig, wasted
