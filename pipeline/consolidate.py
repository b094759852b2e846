"""``orf consolidate``: one merged candidate for each group of overlapping or conflicting playbooks.

Two playbooks overlap when they cover a common trap signature or their trap and insight read
alike (the dedupe stage's TF-IDF similarity); they conflict when their triggers match but their
validated paths disagree. Each group becomes one ordinary candidate playbook, written like
``orf mine`` writes one (uncommitted, for ``orf review`` and ``orf pr``), whose provenance
names the playbooks it replaces and keeps their sessions and signatures. The sources are left
in place: removing them is the reviewer's decision, in the same PR.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .provenance import Provenance
from .stages.dedupe import Similarity, known_from_experience

OVERLAP = 0.55
"""Trap + insight similarity from which two playbooks say the same thing."""
SAME_TRIGGER = 0.55
"""Description (when to load it) similarity from which two playbooks share a trigger."""
PATHS_DISAGREE = 0.25
"""Validated-path similarity under which two paths for one trigger contradict each other."""
MAX_KEYWORDS = 12


@dataclass
class Group:
    """Playbooks to merge, the reason, and the merged candidate."""

    ids: list[str]
    """Source playbook ids, strongest evidence first (the first is the base)."""
    kind: str
    """``overlap`` or ``conflict`` (conflict wins when any pair conflicts)."""
    reasons: list[str] = field(default_factory=list)
    """One line per linked pair: ``A ~ B: shared signature`` or ``similarity 0.71``."""
    merged: dict[str, Any] = field(default_factory=dict)
    """``create_experience`` keyword arguments of the merged candidate."""
    written: str | None = None
    """Id of the candidate written (None on a dry run or when it already existed)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready view."""
        return {"ids": self.ids, "kind": self.kind, "reasons": self.reasons,
                "title": self.merged.get("title"), "written": self.written}


def _text(exp: Any) -> str:
    return "\n".join((exp.title, exp.trap, exp.insight))


def _prov(exp: Any) -> Provenance:
    return Provenance.read(exp.provenance)


def _weight(exp: Any) -> int:
    return _prov(exp).evidence_steps()


class _Union:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def join(self, i: int, j: int) -> None:
        self.parent[self.find(i)] = self.find(j)


def find_groups(experiences: Sequence[Any], extra_signatures: dict[str, set[str]] | None = None,
                ) -> list[Group]:
    """Groups of two or more playbooks that overlap or conflict (merged candidates filled in).

    Playbooks that are themselves consolidations are left out, and a group whose members an
    existing consolidation already covers is not proposed again.
    """
    extra = extra_signatures or {}
    done = [set(_prov(e).consolidates or ()) for e in experiences]
    exps = sorted((e for e in experiences if not _prov(e).consolidates),
                  key=lambda e: e.id)
    sigs = [known_from_experience(e, extra.get(e.id, ())).signatures for e in exps]
    body = Similarity([_text(e) for e in exps])
    trigger = Similarity([e.description for e in exps])
    path = Similarity([e.validated_path for e in exps])
    union = _Union(len(exps))
    links: list[tuple[int, int, str, bool]] = []
    for i in range(len(exps)):
        for j in range(i + 1, len(exps)):
            shared = bool(sigs[i] & sigs[j])
            same = body(i, j)
            conflict = (shared or trigger(i, j) >= SAME_TRIGGER) and path(i, j) < PATHS_DISAGREE
            if shared or same >= OVERLAP or conflict:
                why = "shared signature" if shared else f"similarity {same:.2f}"
                if conflict:
                    why += f", validated paths disagree (similarity {path(i, j):.2f})"
                links.append((i, j, why, conflict))
                union.join(i, j)
    members: dict[int, list[int]] = {}
    for i in range(len(exps)):
        members.setdefault(union.find(i), []).append(i)
    groups = []
    for idx in members.values():
        if len(idx) < 2:
            continue
        ids = {exps[i].id for i in idx}
        if any(ids <= d for d in done):
            continue
        order = sorted(idx, key=lambda i: (-_weight(exps[i]), exps[i].id))
        pairs = [(i, j, why, c) for i, j, why, c in links if i in idx]
        group = Group(ids=[exps[i].id for i in order],
                      kind="conflict" if any(c for *_x, c in pairs) else "overlap",
                      reasons=[f"{exps[i].id} ~ {exps[j].id}: {why}" for i, j, why, _c in pairs])
        group.merged = merge([exps[i] for i in order], group.kind,
                             set().union(*(sigs[i] for i in order)))
        groups.append(group)
    return sorted(groups, key=lambda g: g.ids[0])


def _unique(items: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        key = " ".join(item.lower().split())
        if key and key not in seen:
            seen.add(key)
            out.append(item)
    return out


def merge(exps: Sequence[Any], kind: str, signatures: set[str]) -> dict[str, Any]:
    """The merged candidate: the base (first) playbook's text, the others' paths and evidence.

    A conflict keeps every validated path, each under the playbook it came from, so the
    reviewer picks one; an overlap keeps the base path. Checklists and keywords are unions.
    """
    base = exps[0]
    others = exps[1:]
    path = base.validated_path.strip()
    if kind == "conflict":
        path = "\n\n".join(
            [f"Path from {base.id} (the most evidence):\n\n{path}"]
            + [f"Path from {e.id} (contradicts the one above; keep one):\n\n"
               f"{e.validated_path.strip()}" for e in others])
    complexity = max((e.complexity for e in exps), key=("low", "medium", "high").index)
    provenance = Provenance.merged(
        [(e.id, e.title, e.created_at, _prov(e)) for e in exps],
        signature=_prov(base).signature or (sorted(signatures)[0] if signatures else None),
        signatures=sorted(signatures), kind=kind).wire()
    return {
        "domain": base.domain, "title": base.title, "description": base.description,
        "keywords": _unique([k for e in exps for k in e.keywords])[:MAX_KEYWORDS],
        "complexity": complexity, "objective": base.objective,
        "trap": base.trap.strip() + "".join(
            f"\n\nAlso seen as ({e.id}): {e.trap.strip()}" for e in others
            if e.trap.strip() != base.trap.strip()),
        "insight": base.insight.strip(), "validated_path": path,
        "checklist": _unique([c for e in exps for c in e.checklist]),
        "provenance": provenance,
    }


def consolidate(store: Any, ledger: Any, *, dry_run: bool = False,
                lock_timeout: float = 60.0) -> list[Group]:
    """Find the groups of ``store`` and, unless ``dry_run``, write one candidate per group.

    Args:
        store: The ``pipeline.orf.Store``.
        ledger: A ``Ledger`` scoped to the store (signatures of duplicates; the candidate row).
        dry_run: Only report the groups.
        lock_timeout: Seconds to wait for the store lock.
    """
    from .fsutil import store_lock

    if not store.exists():
        return []
    groups = find_groups(store.experiences(), ledger.candidate_signatures())
    if dry_run or not groups:
        return groups
    with store_lock(store.root, lock_timeout):
        for g in groups:
            exp = store.create_experience(**g.merged)
            g.written = exp.id
            prov = g.merged["provenance"]
            ledger.record_candidate(
                signature=prov["signature"] or exp.id, status="new", exp_id=exp.id,
                domain=exp.domain, title=exp.title,
                reason="consolidates " + ", ".join(g.ids), wasted_steps=prov["wasted_steps"],
                sessions=Provenance.read(prov).session_ids())
    return groups
