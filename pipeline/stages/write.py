"""Write new candidate playbooks into the store: resumable, idempotent, never half-done.

Each draft to write gets a key, ``value_hash([signature, session])``. Before its EXP file is
created the ledger records an *intent* (the draft and its decision, state ``pending``); the EXP
file carries the key in ``provenance.write_key``; once the file and its INDEX line are in place
the intent turns ``done`` in the same transaction that records the candidate. So after a kill
at any point, ``reconcile`` (run under the store lock before anything else) either finds the
file by its key and closes the intent, or writes it from the recorded payload; and a rerun that
drafts the same thing again finds the key ``done`` and writes nothing. File-level atomicity
(temp + fsync + rename, INDEX repair) is the store's job (``Store.repair``).

Callers hold the store lock around ``prepare``/``reconcile``/``write_candidates``.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import StoreError
from ..fsutil import remove_stale_temps
from ..gitutil import repo_root
from ..hashing import value_hash
from ..ledger import Ledger, WriteIntent
from ..model import Draft
from ..orf.records import Experience
from ..provenance import Provenance, SessionRef
from .dedupe import Decision
from .pause import pause_point
from .store_like import StoreLike


@dataclass
class WriteItem:
    """One draft on its way to the store, with what dedupe decided."""

    draft: Draft
    decision: Decision
    session_id: str
    """Session the draft was made from (with the signature, the idempotency key)."""
    signature: str
    """Finding signature."""
    wasted_steps: int = 0
    """Wasted steps of the findings behind the draft."""


@dataclass
class WriteResult:
    """What became of one ``WriteItem``."""

    outcome: str
    """new | related | duplicate | existing (written by an earlier run) | failed."""
    exp_id: str | None = None
    """The EXP written (new/related/existing) or reinforced (duplicate)."""
    path: str | None = None
    """File written, when one was."""
    related_to: str | None = None
    """The EXP a related/duplicate draft points at."""
    error: str | None = None
    """Why the store refused the draft (outcome ``failed``)."""


@dataclass
class WriteReport:
    """Everything ``write_candidates`` did."""

    results: list[WriteResult] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)
    """Fixes made by ``Store.repair`` and intent reconciliation."""


def write_key(signature: str, session_id: str, scope: str = "") -> str:
    """Idempotency key of one draft: same trap, same session, same store, same file.

    ``scope`` is the ledger's store (``Ledger.scope``); keys written before stores were
    scoped have none and are accepted by any store.
    """
    return value_hash([signature, session_id, scope] if scope else [signature, session_id])


def _other_store(ledger: Ledger, intent: WriteIntent) -> bool:
    """Whether a write intent was recorded for another store sharing this ledger."""
    scope = ledger.scope
    session = intent.session_id or ""
    mine = {write_key(intent.signature, session, scope), write_key(intent.signature, session)}
    return intent.key not in mine


def now_iso() -> str:
    """Current UTC time, ISO-8601 to the second."""
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()


def prepare(store: StoreLike) -> list[str]:
    """Create the store when missing, drop stale temp files, repair half-done writes."""
    fixes: list[str] = []
    if not store.exists():
        store.init()
        fixes.append("created the store")
    removed = remove_stale_temps(store.root)
    if removed:
        fixes.append(f"removed {removed} stale temp file(s)")
    fixes.extend(store.repair())
    return fixes


def _exp_by_key(store: StoreLike) -> dict[str, Experience]:
    out: dict[str, Experience] = {}
    for exp in store.experiences():
        key = Provenance.read(exp.provenance).write_key
        if key is not None:
            out[key] = exp
    return out


def reconcile(store: StoreLike, ledger: Ledger) -> list[str]:
    """Close or finish the intents an interrupted run left ``pending``."""
    intents = ledger.pending_intents()
    if not intents:
        return []
    by_key = _exp_by_key(store)
    fixes: list[str] = []
    for intent in intents:
        if _other_store(ledger, intent):
            continue
        payload = intent.payload
        exp = by_key.get(intent.key)
        if exp is None:
            try:
                exp = _create(store, payload)
            except StoreError as exc:
                ledger.drop_intent(intent.key)
                fixes.append(f"dropped interrupted write of {payload['draft']['title']!r}: {exc}")
                continue
            fixes.append(f"finished interrupted write of {exp.id}")
        else:
            fixes.append(f"closed interrupted write of {exp.id}")
        _close_intent(ledger, intent.key, payload, str(exp.id))
    return fixes


def _provenance(item: WriteItem, related_to: str | None, backend: str, model: str | None,
                key: str, seen: str) -> dict[str, Any]:
    return item.draft.provenance.for_write(
        write_key=key, signature=item.signature, backend=backend, model=model, seen=seen,
        wasted_steps=item.wasted_steps, session_id=item.session_id,
        related_to=related_to).wire()


def _create(store: StoreLike, payload: dict[str, Any]) -> Experience:
    d = payload["draft"]
    return store.create_experience(
        domain=d["domain"], title=d["title"], description=d["description"],
        keywords=d["keywords"], complexity=d["complexity"], objective=d["objective"],
        trap=d["trap"], insight=d["insight"], validated_path=d["validated_path"],
        checklist=d["checklist"], domain_title=d.get("domain_title"),
        domain_description=d.get("domain_description"), provenance=payload["provenance"],
    )


def _close_intent(ledger: Ledger, key: str, payload: dict[str, Any], exp_id: str) -> None:
    d = payload["draft"]
    with ledger.transaction():
        ledger.close_intent(key, exp_id)
        if not ledger.has_candidate(exp_id):
            ledger.record_candidate(
                signature=payload["signature"], status=payload["outcome"], exp_id=exp_id,
                domain=d["domain"], title=d["title"], related_to=payload.get("related_to"),
                reason=payload.get("reason"), sessions=[payload["session_id"]],
                wasted_steps=int(payload.get("wasted_steps", 0)),
            )


def reinforce(ledger: Ledger, exp_id: str, item: WriteItem, reason: str = "") -> bool:
    """Count one more session showing the trap of ``exp_id`` (once per session)."""
    with ledger.transaction():
        fresh = ledger.add_reinforcement(exp_id, item.session_id, item.signature,
                                         item.wasted_steps)
        if fresh:
            ledger.count_reinforcement(exp_id)
            ledger.record_candidate(
                signature=item.signature, status="duplicate", domain=item.draft.domain,
                title=item.draft.title, related_to=exp_id, reason=reason,
                sessions=[item.session_id], wasted_steps=item.wasted_steps,
            )
    return fresh


def write_candidates(
    items: Sequence[WriteItem],
    store: StoreLike,
    ledger: Ledger,
    *,
    backend: str,
    model: str | None,
    on_written: Callable[[WriteResult], None] | None = None,
    absolute_paths: bool = False,
) -> WriteReport:
    """Write new/related drafts and record duplicates as reinforcements, in order.

    Args:
        items: Drafts with their decisions, in dedupe order (``run_index`` refers to it).
        store: The store (initialised and reconciled; the caller holds its lock).
        ledger: The ledger.
        backend: Backend name recorded in provenance when the draft has none.
        model: Model name recorded in provenance.
        on_written: Called after each item (progress display).
        absolute_paths: Keep log paths as given (a private store) instead of repo-relative
            or ``~/…`` ones.

    Returns:
        One ``WriteResult`` per item, in order.
    """
    report = WriteReport()
    seen = now_iso()
    root = repo_root(Path(store.root))
    for item in items:
        if not absolute_paths:
            item.draft.provenance = item.draft.provenance.portable(root)
        dec = item.decision
        target = dec.target
        if target is None and dec.run_index is not None:
            target = report.results[dec.run_index].exp_id
        if dec.outcome == "duplicate":
            result = WriteResult("duplicate", target, related_to=target)
            if target and reinforce(ledger, target, item, dec.reason):
                _add_session(store, target, item, seen)
        else:
            result = _write_one(item, target, store, ledger, backend, model, seen)
        report.results.append(result)
        if on_written is not None:
            on_written(result)
    return report


def _add_session(store: StoreLike, exp_id: str, item: WriteItem, seen: str) -> None:
    """Record a reinforcing session in the playbook's own provenance (every session shows).

    The ledger row is the source of truth; a file gone (or unwritable) since only loses the
    copy in the file.
    """
    try:
        prov = Provenance.read(store.read_experience(exp_id).provenance)
    except (StoreError, OSError):
        return
    # The draft's own reference to the session (path, steps) when it has one.
    entry = next((s for s in item.draft.provenance.sessions
                  if not s.is_bare and s.id == item.session_id),
                 SessionRef(id=item.session_id))
    grown = prov.reinforced(entry, seen)
    if grown is prov:
        return
    try:
        store.update_provenance(exp_id, grown.wire())
    except (StoreError, OSError):
        return


def _write_one(item: WriteItem, related_to: str | None, store: StoreLike, ledger: Ledger,
               backend: str, model: str | None, seen: str) -> WriteResult:
    key = write_key(item.signature, item.session_id, ledger.scope)
    earlier = ledger.done_intent(key)
    if earlier is not None:
        return WriteResult("existing", earlier)
    payload = {
        "draft": item.draft.model_dump(mode="json", exclude={"provenance"}),
        "provenance": _provenance(item, related_to, backend, model, key, seen),
        "outcome": item.decision.outcome,
        "related_to": related_to,
        "reason": item.decision.reason,
        "signature": item.signature,
        "session_id": item.session_id,
        "wasted_steps": item.wasted_steps,
    }
    ledger.record_intent(key, item.signature, item.session_id, payload)
    try:
        exp = _create(store, payload)
    except StoreError as exc:
        # A draft the store refuses (bad slug, ...) must not block every later run.
        ledger.drop_intent(key)
        return WriteResult("failed", None, error=str(exc))
    pause_point("writing")
    _close_intent(ledger, key, payload, str(exp.id))
    return WriteResult(item.decision.outcome, str(exp.id), str(exp.path), related_to)
