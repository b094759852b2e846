"""Score the loop detector against hand labels of repeated actions (``tests/data/labels/``).

A label file names one session (``file`` under a samples root, ``session_id``), every tool step
(``steps``, the denominator) and the steps that repeat an earlier one (``repeats``: ``repeat_of``
and whether it was ``wasted``). Two questions are scored per tool step: does it repeat
(``annotate_repeats``) and is it wasted (``Finding.wasted_source_ids``), next to the naive
baseline "identical to an earlier action" and, where a second labeller's file exists, the two
labellers' agreement (Cohen's kappa). Shared by ``orf eval detect`` and
``bench/detect_labels.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..detect import MISTAKE_FAMILIES, detect_all
from ..detect.annotate import annotate_repeats
from ..formats.base import ParseContext
from ..formats.discover import discover, parse_source
from ..model import Trajectory

QUESTIONS = ("repeat", "wasted")
COLUMNS = ("repeat", "base_repeat", "wasted", "base_wasted")


@dataclass
class Score:
    """Counts of true positives, false positives and false negatives."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    fps: list[str] = field(default_factory=list)
    fns: list[str] = field(default_factory=list)

    def add(self, predicted: set[str], truth: set[str], universe: list[str]) -> None:
        """Add one session's step sets (restricted to the labelled steps)."""
        pred = predicted & set(universe)
        self.tp += len(pred & truth)
        self.fp += len(pred - truth)
        self.fn += len(truth - pred)
        self.fps += sorted(pred - truth, key=universe.index)
        self.fns += sorted(truth - pred, key=universe.index)

    def merge(self, other: Score) -> None:
        """Add another score's counts."""
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn

    @property
    def prf(self) -> tuple[float, float, float]:
        """Precision, recall and F1 (1.0 when there is nothing to find or flag)."""
        p = self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0
        r = self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        return p, r, f

    def as_dict(self) -> dict[str, Any]:
        """Counts and rates, for JSON."""
        p, r, f = self.prf
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "precision": round(p, 4),
                "recall": round(r, 4), "f1": round(f, 4)}


@dataclass
class Agreement:
    """A 2x2 table of two labellers' yes/no answers over the same steps."""

    yy: int = 0
    yn: int = 0
    ny: int = 0
    nn: int = 0

    def add(self, a: set[str], b: set[str], universe: list[str]) -> None:
        """Add the steps of one session labelled yes by ``a`` and by ``b``."""
        for s in universe:
            if s in a:
                self.yy, self.yn = self.yy + (s in b), self.yn + (s not in b)
            else:
                self.ny, self.nn = self.ny + (s in b), self.nn + (s not in b)

    def merge(self, other: Agreement) -> None:
        """Add another table's counts."""
        self.yy += other.yy
        self.yn += other.yn
        self.ny += other.ny
        self.nn += other.nn

    @property
    def n(self) -> int:
        """Steps compared."""
        return self.yy + self.yn + self.ny + self.nn

    @property
    def kappa(self) -> float | None:
        """Cohen's kappa (None with no step; 1.0 when both always agree on one answer)."""
        n = self.n
        if not n:
            return None
        po = (self.yy + self.nn) / n
        pa, pb = (self.yy + self.yn) / n, (self.yy + self.ny) / n
        pe = pa * pb + (1 - pa) * (1 - pb)
        return 1.0 if pe >= 1 else (po - pe) / (1 - pe)


def check_label(label: Any) -> str | None:
    """Why ``label`` is not a loop label file, or None when it is one."""
    if not isinstance(label, dict):
        return "not a JSON object"
    for key, kind in (("file", str), ("session_id", str), ("steps", list), ("repeats", dict)):
        if not isinstance(label.get(key), kind):
            return f"missing or invalid {key!r}"
    return None


def read_label(path: Path, warn: Callable[[str], None] | None = None) -> dict[str, Any] | None:
    """One label file with its ``name``, or None (one line to ``warn``) when it is not one.

    Labellers write files while the scores run: a half-written or incomplete file is skipped
    with one line naming it, never fatal.
    """
    try:
        label = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        why: str | None = f"not readable: {exc}"
    else:
        why = check_label(label)
    if why is not None:
        if warn is not None:
            warn(f"{path}: not a label file ({why}); skipped")
        return None
    label["name"] = path.stem
    return dict(label)


def load_labels(folder: Path, warn: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Every readable label file of ``folder`` (one session each), sorted by name.

    Files that are not label files are skipped, each with one line to ``warn``.
    """
    found = (read_label(p, warn) for p in sorted(folder.glob("*.json")))
    return [x for x in found if x is not None]


def second_label(label: dict[str, Any], folder: Path,
                 warn: Callable[[str], None] | None = None) -> dict[str, Any] | None:
    """The second labeller's file for the same session (same name), when there is one."""
    path = folder / f"{label['name']}.json"
    other = read_label(path, warn) if path.exists() else None
    if other is None or (other["file"], other["session_id"]) != (label["file"],
                                                                 label["session_id"]):
        return None
    return other


def format_of(label: dict[str, Any]) -> str:
    """The format of a labelled session: the samples folder its log lives in."""
    return str(label["file"]).split("/", 1)[0]


def find_session(label: dict[str, Any], root: Path) -> Trajectory | None:
    """Parse the labelled file under ``root``; the labelled session, or None when absent.

    Sub-agent sessions (Claude ``subagents/*.jsonl``) are found under their parent too.
    """
    path = root / label["file"]
    if not path.exists():
        return None
    for src in discover([path], issues=[]):
        for traj in parse_source(src, ParseContext()):
            for t in (traj, *traj.subagents):
                if t.id == label["session_id"]:
                    return t
    return None


def exact_baseline(traj: Trajectory) -> set[str]:
    """Steps whose action key equals an earlier step's (the naive "identical action" rule)."""
    seen: set[str] = set()
    out: set[str] = set()
    for s in traj.steps:
        if s.kind != "tool" or not s.action_key:
            continue
        if s.action_key in seen:
            out.add(s.source_id)
        seen.add(s.action_key)
    return out


def truth_sets(label: dict[str, Any]) -> tuple[set[str], set[str]]:
    """The steps a label file marks as repeats, and as wasted repeats."""
    reps = label["repeats"]
    return set(reps), {k for k, v in reps.items() if v["wasted"]}


def score_session(label: dict[str, Any], traj: Trajectory) -> dict[str, Score]:
    """Scores of one session: repeat/wasted for the detector and the baseline."""
    steps: list[str] = label["steps"]
    rep_truth, waste_truth = truth_sets(label)
    findings = detect_all(traj)
    repeats = annotate_repeats(traj, findings=findings)
    pred_rep = {r.source_id for r in repeats}
    # The labels ask "is this step a wasted repeat": a repeated mistake on another target
    # (``MISTAKE_FAMILIES``) is a trap, but not an answer to that question.
    pred_waste = {s for f in findings if f.kind not in MISTAKE_FAMILIES
                  for s in f.wasted_source_ids}
    base = exact_baseline(traj)
    out = {k: Score() for k in COLUMNS}
    out["repeat"].add(pred_rep, rep_truth, steps)
    out["wasted"].add(pred_waste, waste_truth, steps)
    out["base_repeat"].add(base, rep_truth, steps)
    out["base_wasted"].add(base, waste_truth, steps)
    return out


def agreement(label: dict[str, Any], other: dict[str, Any]) -> dict[str, Agreement]:
    """The two labellers' agreement on both questions, over the steps both listed."""
    theirs = set(other["steps"])
    common = [s for s in dict.fromkeys(label["steps"]) if s in theirs]
    out = {q: Agreement() for q in QUESTIONS}
    for q, a, b in zip(QUESTIONS, truth_sets(label), truth_sets(other), strict=True):
        out[q].add(a, b, common)
    return out


@dataclass
class Group:
    """Totals of a set of sessions (a split, a format within it, or everything)."""

    sessions: int = 0
    steps: int = 0
    repeats: int = 0
    wasted: int = 0
    scores: dict[str, Score] = field(default_factory=lambda: {k: Score() for k in COLUMNS})
    agree: dict[str, Agreement] = field(
        default_factory=lambda: {q: Agreement() for q in QUESTIONS})
    doubled: int = 0

    def add(self, label: dict[str, Any], sc: dict[str, Score],
            agree: dict[str, Agreement] | None) -> None:
        """Count one scored session (and its agreement table when it has a second label)."""
        rep, waste = truth_sets(label)
        self.sessions += 1
        self.steps += len(label["steps"])
        self.repeats += len(rep)
        self.wasted += len(waste)
        for k, s in sc.items():
            self.scores[k].merge(s)
        if agree is not None:
            self.doubled += 1
            for q, a in agree.items():
                self.agree[q].merge(a)

    def merge(self, other: Group) -> None:
        """Add another group's totals."""
        self.sessions += other.sessions
        self.steps += other.steps
        self.repeats += other.repeats
        self.wasted += other.wasted
        self.doubled += other.doubled
        for k, s in other.scores.items():
            self.scores[k].merge(s)
        for q, a in other.agree.items():
            self.agree[q].merge(a)

    def as_dict(self) -> dict[str, Any]:
        """Totals and scores, for JSON."""
        kappa = {q: (None if a.kappa is None else round(a.kappa, 4))
                 for q, a in self.agree.items()}
        return {"sessions": self.sessions, "steps": self.steps, "repeats": self.repeats,
                "wasted": self.wasted, "scores": {k: s.as_dict() for k, s in self.scores.items()},
                "kappa": kappa, "second_labels": self.doubled}


def _prf(s: Score) -> str:
    p, r, f = s.prf
    return f"{p:4.2f} {r:4.2f} {f:4.2f}"


def _kappa(a: Agreement) -> str:
    k = a.kappa
    return "   - " if k is None else f"{k:5.2f}"


HEADER = (f"{'':<30} {'ses':>3} {'steps':>5} {'rep':>4} {'wst':>4} | "
          f"{'repeats P R F1':<14} | {'base-rep P R F1':<15} | {'wasted P R F1':<14} | "
          f"{'base-wst P R F1':<15} | kappa rep wst (n)")
"""Column heads of ``row``."""


def row(name: str, g: Group) -> str:
    """One printed line of figures for a group."""
    sc = g.scores
    return (f"{name[:30]:<30} {g.sessions:>3} {g.steps:>5} {g.repeats:>4} {g.wasted:>4} | "
            f"{_prf(sc['repeat']):<14} | {_prf(sc['base_repeat']):<15} | "
            f"{_prf(sc['wasted']):<14} | {_prf(sc['base_wasted']):<15} | "
            f"{_kappa(g.agree['repeat'])} {_kappa(g.agree['wasted'])} ({g.doubled})")


@dataclass
class SetResult:
    """One label set scored: per-session groups, per-format groups, the total, what was missing."""

    name: str
    sessions: dict[str, Group] = field(default_factory=dict)
    formats: dict[str, Group] = field(default_factory=dict)
    total: Group = field(default_factory=Group)
    missing: list[str] = field(default_factory=list)
    errors: dict[str, Score] = field(default_factory=dict)
    """Per session and question: the scores with their false positive / negative step ids."""


def score_set(name: str, labels: list[dict[str, Any]], root: Path,
              second: Path | None = None,
              warn: Callable[[str], None] | None = None) -> SetResult:
    """Score every label of one set against the sessions under ``root``.

    Args:
        name: The set's name (``train``, ``heldout``, a folder name).
        labels: Label files as loaded by ``load_labels``.
        root: Folder the labels' ``file`` paths are relative to.
        second: Folder of second labels (same file names), for the labellers' agreement.
        warn: Receives one line per second label file that is not a label file (skipped).

    Returns:
        The set's groups; sessions whose log is not under ``root`` are listed in ``missing``.
    """
    out = SetResult(name)
    for label in labels:
        traj = find_session(label, root)
        if traj is None:
            out.missing.append(label["name"])
            continue
        sc = score_session(label, traj)
        other = second_label(label, second, warn) if second is not None else None
        one = Group()
        one.add(label, sc, agreement(label, other) if other is not None else None)
        out.sessions[label["name"]] = one
        for q in QUESTIONS:
            out.errors[f"{label['name']}:{q}"] = sc[q]
        out.formats.setdefault(format_of(label), Group()).merge(one)
        out.total.merge(one)
    return out


def set_lines(result: SetResult, *, total: str = "total", sessions: bool = False,
              verbose: bool = False, missing: str = "session not found") -> Iterator[str]:
    """The printed table of one scored set: header, sessions (optional), formats, total.

    ``orf eval detect`` and ``bench/detect_labels.py`` both print through this, so their
    totals are the same figures from the same code.

    Args:
        result: The set as scored by ``score_set``.
        total: Name of the total row.
        sessions: One row per session too.
        verbose: Also each session's false positive and false negative step ids.
        missing: Text after the name of a session whose log was not found.
    """
    yield HEADER
    for sid, g in result.sessions.items() if sessions or verbose else ():
        yield row(sid, g)
        for q in QUESTIONS if verbose else ():
            sc = result.errors[f"{sid}:{q}"]
            if sc.fps or sc.fns:
                yield f"    {q}: FP {sc.fps}  FN {sc.fns}"
    for fmt_name, g in sorted(result.formats.items()):
        yield row(f"  {fmt_name}", g)
    yield row(total, result.total)
    for m in result.missing:
        yield f"  {m}: {missing}"


__all__ = ["COLUMNS", "HEADER", "QUESTIONS", "Agreement", "Group", "Score", "SetResult",
           "agreement", "check_label", "exact_baseline", "find_session", "format_of",
           "load_labels", "read_label", "row", "score_session", "score_set", "second_label",
           "set_lines", "truth_sets"]
