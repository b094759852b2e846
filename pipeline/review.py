"""``orf review``: list the uncommitted candidate playbooks with their evidence; reject one.

Uncommitted means: changed or untracked EXP files per ``git status`` when the store sits in a
git work tree, otherwise the ledger's ``new``/``related`` candidates whose files still exist.
A rejection removes the file and its INDEX line and is remembered in the ledger with the
wasted steps seen at that time, so ``orf mine`` drafts the same signature again only when
the evidence grows (``Ledger.rejected_wasted``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import gitutil
from .errors import StoreError
from .fsutil import store_lock
from .ledger import Ledger
from .provenance import Provenance, VerdictRef

_EXP_PATH = re.compile(r"(?:^|/)([a-z0-9][a-z0-9-]*)/(EXP-\d{8}-\d{4})\.md$")


@dataclass
class Candidate:
    """One uncommitted playbook and the evidence behind it."""

    exp_id: str
    path: str
    """File path (relative to the store)."""
    domain: str
    title: str
    trap: str = ""
    insight: str = ""
    signature: str | None = None
    sessions: list[dict[str, Any]] = field(default_factory=list)
    """``{id, path, steps, wasted_steps}`` per source session."""
    wasted_steps: int = 0
    verdict: str = ""
    """``outcome (decided_by): reason``."""
    related_to: str | None = None
    reinforcements: int = 0
    """Later sessions that showed the same trap (ledger)."""
    git_status: str | None = None
    """``??`` untracked, `` M`` modified, ... (None outside git)."""
    evidence: dict[str, int] = field(default_factory=dict)
    """Evidence weight: ``sessions`` that hit its traps (ledger history, else provenance),
    and the ``wasted_steps`` and ``wasted_tokens`` it would have saved there."""
    replaces: list[str] = field(default_factory=list)
    """For a consolidation (``orf consolidate``): the playbooks it merges."""
    consolidation: str | None = None
    """``overlap`` or ``conflict`` for a consolidation."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready view."""
        return dict(self.__dict__)


def _verdict(prov: Provenance) -> str:
    v = prov.verdict
    if isinstance(v, VerdictRef):
        text = f"{v.outcome or 'unknown'} ({v.decided_by or '?'})"
        return f"{text}: {v.reason}" if v.reason else text
    return str(v) if v else ""


def candidate_from(exp: Any, root: Path, ledger: Ledger | None) -> Candidate:
    """Build a ``Candidate`` from a store ``Experience``."""
    prov = Provenance.read(getattr(exp, "provenance", None))
    try:
        rel = str(Path(exp.path).resolve().relative_to(root.resolve()))
    except ValueError:
        rel = str(exp.path)
    count = 0
    if ledger is not None:
        count = ledger.reinforcement_count(exp.id)[0]
    return Candidate(
        exp_id=exp.id, path=rel, domain=exp.domain, title=exp.title, trap=exp.trap,
        insight=exp.insight, signature=prov.signature,
        sessions=[s.as_mapping() for s in prov.sessions],
        wasted_steps=prov.wasted_steps or 0, verdict=_verdict(prov),
        related_to=prov.related_to, reinforcements=count,
        evidence=_evidence(exp, prov, ledger),
        replaces=list(prov.consolidates or []),
        consolidation=prov.consolidation,
    )


def _evidence(exp: Any, prov: Provenance, ledger: Ledger | None) -> dict[str, int]:
    """What the playbook would have saved: from the ledger's history of its signatures.

    Without history (no ledger, or sessions mined before it was kept) the provenance's own
    sessions and wasted steps are the evidence.
    """
    from .stages.dedupe import known_from_experience

    fallback = {"sessions": len(prov.sessions),
                "wasted_steps": prov.wasted_steps or sum(
                    s.wasted_steps or 0 for s in prov.sessions),
                "wasted_tokens": prov.wasted_tokens or 0}
    if ledger is None:
        return fallback
    extra = ledger.candidate_signatures().get(exp.id, set())
    sigs = sorted(known_from_experience(exp, extra).signatures)
    hits, steps, tokens = ledger.signature_evidence(sigs)
    if not hits:
        return fallback
    return {"sessions": hits, "wasted_steps": steps, "wasted_tokens": tokens}


def evidence_line(c: Candidate) -> str:
    """``N session(s), S wasted step(s), T tokens`` of a candidate's evidence weight.

    Logs without token counts give 0 tokens: that is unknown, not "nothing wasted".
    """
    e = c.evidence
    tokens = e.get("wasted_tokens") or 0
    spent = (f"{tokens:,} wasted tokens" if tokens
             else "wasted tokens unknown (no counts in the log)")
    return (f"{e.get('sessions', 0)} session(s), {e.get('wasted_steps', 0)} wasted step(s), "
            f"{spent}")


def list_candidates(store: Any, ledger: Ledger | None) -> list[Candidate]:
    """Uncommitted candidates of ``store`` (a ``pipeline.orf.Store``), oldest id first."""
    root = Path(store.root)
    if not store.exists():
        return []
    repo = gitutil.repo_root(root)
    by_id = {exp.id: exp for exp in store.experiences()}
    chosen: dict[str, str | None] = {}
    if repo is not None:
        for code, path in gitutil.status(repo, str(root.resolve().relative_to(repo))):
            m = _EXP_PATH.search(path)
            if m and m.group(2) in by_id and code != " D":
                chosen[m.group(2)] = code
    elif ledger is not None:
        for exp_id in ledger.uncommitted_ids():
            if exp_id in by_id:
                chosen[exp_id] = None
    out = []
    for exp_id in sorted(chosen):
        cand = candidate_from(by_id[exp_id], root, ledger)
        cand.git_status = chosen[exp_id]
        out.append(cand)
    return out


def reject(store: Any, ledger: Ledger, exp_id: str, *, lock_timeout: float = 60.0,
           reason: str = "rejected in review") -> Candidate:
    """Remove candidate ``exp_id`` (file and INDEX line) and remember the rejection.

    Raises:
        StoreError: When the store has no such experience.
        LockTimeout: When another run holds the store lock past ``lock_timeout``.
    """
    root = Path(store.root)
    with store_lock(root, lock_timeout):
        try:
            exp = store.read_experience(exp_id)
        except (KeyError, FileNotFoundError):
            exp = None
        if exp is None:
            raise StoreError(f"no experience {exp_id} in {root}; see `orf review` for the list")
        cand = candidate_from(exp, root, ledger)
        store.remove_experience(exp_id)
    with ledger.transaction():
        if ledger.has_candidate(exp_id):
            ledger.reject_candidate(exp_id, reason, cand.wasted_steps)
        else:
            ledger.record_candidate(
                signature=cand.signature or exp_id, status="rejected", exp_id=exp_id,
                domain=cand.domain, title=cand.title, reason=reason,
                sessions=[str(s.get("id")) for s in cand.sessions],
                wasted_steps=cand.wasted_steps,
            )
    return cand


GIT_STATES = {"??": "new, untracked", "A": "new, staged", "M": "modified", "AM": "new, edited",
              "MM": "modified", "R": "renamed"}
"""``git status --porcelain`` codes of a candidate file, as the review reads them."""


def format_candidates(cands: list[Candidate]) -> str:
    """Plain-text listing for the terminal."""
    if not cands:
        return "No uncommitted candidate playbooks."
    lines: list[str] = []
    for c in cands:
        code = (c.git_status or "").strip()
        flag = f" [{GIT_STATES.get(code, code)}]" if code else ""
        lines.append(f"{c.exp_id}{flag}  {c.title}")
        lines.append(f"  file: {c.path}")
        for s in c.sessions:
            steps = s.get("steps")
            steps_txt = f" steps {steps}" if steps else ""
            lines.append(f"  session: {s.get('id')}{steps_txt}"
                         + (f" ({s.get('path')})" if s.get("path") else ""))
        lines.append(f"  wasted steps: {c.wasted_steps}"
                     + (f"; seen again in {c.reinforcements} session(s)" if c.reinforcements
                        else ""))
        if c.verdict:
            lines.append(f"  verdict: {c.verdict}")
        if c.related_to:
            lines.append(f"  related to: {c.related_to}")
        if c.evidence:
            lines.append(f"  evidence weight: {evidence_line(c)} it would have saved")
        if c.replaces:
            lines.append(f"  consolidates ({c.consolidation or 'overlap'}): "
                         + ", ".join(c.replaces)
                         + "; delete them in the same PR when you keep this one")
        lines.append("")
    lines.append(f"{len(cands)} candidate(s). Reject one with: orf review --reject EXP-ID")
    return "\n".join(lines)
