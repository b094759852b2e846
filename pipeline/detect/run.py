"""One way through a session: classify each step once, run every family, merge.

``detect_all`` analyzes the trajectory once (``actions.analyze``: each step classified by
``classify`` with the table of ``programs``, and its state tokens), runs every registered
family over that analysis, then merges: findings that share a wasted step are one trap and
become one finding, named by ``SPECIFICITY`` (an ``exact_repeat`` and an ``edit_retry`` over
the same failed edits are one ``edit_retry``), so each wasted step belongs to one finding.
"""

from __future__ import annotations

from ..config import DetectSettings
from ..model import Finding, Trajectory
from . import (  # noqa: F401  (importing registers the families)
    answered,
    context_thrash,
    cycle,
    edit_retry,
    edit_revert,
    exact_repeat,
    near_repeat,
    refusals,
    reread,
    rerun_unchanged,
    retry_variation,
    same_error,
    scripts,
    settled,
    shell_edits,
    text_loops,
    unran,
)
from .actions import analyze, infos_for, set_current
from .base import REGISTRY
from .build import evidence_for, retrim

PRECEDENCE = (
    "cycle",            # a repeated block explains its steps better than pairwise repeats
    "edit_revert",      # undoing work is the trap, whatever else repeats around it
    "refused_resubmit", # the user refused it: going on around the user is the trap
    "rerun_unchanged",  # test/build/lint/script reruns: the most common, most actionable waste
    "reread",           # file re-reads, including overlapping ranges and other read tools
    "exact_repeat",     # any other identical action
    "near_repeat",      # the same action spelled differently
    "edit_retry",       # a failed edit of a file retried with the file unchanged
    "rule_refusal",     # the harness refused one usage rule twice in a row
    "retry_variation",  # different actions, same error: the loosest evidence
    "monologue",
    "chanting",
    "context_thrash",
)
"""Order of findings that start at the same step, and tie-break among equally specific ones."""


SPECIFICITY = (
    "cycle",            # a repeated block explains its steps better than pairwise repeats
    "edit_revert",      # undoing work says the most about what went wrong
    "edit_retry",       # failed edits of one file: the same four edits are not "exact repeats"
    "rerun_unchanged",
    "reread",
    "near_repeat",
    "exact_repeat",
    "retry_variation",
    # Repeated mistakes (not actions) name a trap only where no repeated action explains it.
    "refused_resubmit",
    "rule_refusal",
    "monologue",
    "chanting",
    "context_thrash",
)
"""Which family names a trap when findings of several families share steps (first wins)."""


def _rank(kind: str) -> int:
    return PRECEDENCE.index(kind) if kind in PRECEDENCE else len(PRECEDENCE)


def _specific(kind: str) -> int:
    return SPECIFICITY.index(kind) if kind in SPECIFICITY else len(SPECIFICITY)


def _components(wasted: list[list[int]],
                chains: list[tuple[str, list[int]]] | None = None) -> list[list[int]]:
    """Groups of findings (by position) linked by a shared wasted step (union-find, linear).

    ``chains`` (each finding's family and steps) also links findings of one family that share
    any step: ``#14-15``, ``#15-16`` and ``#16-17`` of one re-spelled search are one loop.
    """
    parent = list(range(len(wasted)))

    def root(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    owner: dict[object, int] = {}
    keyed: list[list[object]] = [list(steps) for steps in wasted]
    for k, (kind, steps) in enumerate(chains or ()):
        keyed[k].extend((kind, i) for i in steps)
    for k, keys in enumerate(keyed):
        for key in keys:
            j = owner.setdefault(key, k)
            if j != k:
                parent[root(k)] = root(j)
    groups: dict[int, list[int]] = {}
    for k in range(len(wasted)):
        groups.setdefault(root(k), []).append(k)
    return list(groups.values())


def _wasted_steps(traj: Trajectory, f: Finding, index: dict[str, int]) -> list[int]:
    wasted = [index[s] for s in f.wasted_source_ids if s in index]
    # Source ids may repeat in a sloppy log; map by position within the finding instead.
    if len(wasted) != len(f.wasted_source_ids):
        ids = set(f.wasted_source_ids)
        wasted = [i for i in f.steps if traj.steps[i].source_id in ids]
    return wasted


def merge(traj: Trajectory, findings: list[Finding], settings: DetectSettings) -> list[Finding]:
    """One finding per trap: findings that share a wasted step (or a step, in one family).

    The joined finding is the one of the most specific family (``SPECIFICITY``: the same four
    failed edits are an ``edit_retry``, not also an ``exact_repeat``), holding every step and
    every wasted step of the group, so each wasted step belongs to exactly one finding.
    Findings with no wasted step are dropped.

    Args:
        traj: The trajectory the findings point into.
        findings: Raw findings of every family.
        settings: Thresholds (severity is re-graded after joining).

    Returns:
        Findings sorted by first step, then family precedence.
    """
    index = {s.source_id: i for i, s in enumerate(traj.steps)}
    wasted = [_wasted_steps(traj, f, index) for f in findings]
    kept: list[Finding] = []
    for group in _components(wasted, [(f.kind, list(f.steps)) for f in findings]):
        if not any(wasted[k] for k in group):
            continue
        best = min(group, key=lambda k: (_specific(findings[k].kind), _rank(findings[k].kind),
                                         findings[k].steps[0] if findings[k].steps else 0))
        f = findings[best]
        if len(group) > 1:
            steps = sorted({i for k in group for i in findings[k].steps})
            f.steps = steps
            f.source_ids = [traj.steps[i].source_id for i in steps]
            f.evidence = evidence_for(traj, infos_for(traj), steps)
        lost = sorted({i for k in group for i in wasted[k]})
        if len(group) > 1 or len(lost) != f.wasted_steps:
            f = retrim(f, traj, lost, settings)
        kept.append(f)
    kept.sort(key=lambda f: (f.steps[0] if f.steps else 0, _rank(f.kind)))
    return kept


def detect_all(traj: Trajectory, settings: DetectSettings | None = None) -> list[Finding]:
    """Run every registered family over ``traj`` and merge overlapping findings.

    Args:
        traj: A normalized trajectory (any format).
        settings: Detector thresholds; defaults when None.

    Returns:
        Findings sorted by first step; each wasted step appears in one finding only.
    """
    settings = settings or DetectSettings()
    infos = analyze(traj)
    set_current(traj, infos)
    try:
        raw: list[Finding] = []
        for name in PRECEDENCE + tuple(n for n in REGISTRY if n not in PRECEDENCE):
            detector = REGISTRY.get(name)
            if detector is not None:
                raw.extend(detector(traj, settings))
        return merge(traj, raw, settings)
    finally:
        set_current(None)
