"""Score the detector against the hand labels in tests/data/labels/ (real sessions).

Usage:
    .venv/bin/python bench/detect_labels.py [--split train|heldout|all] [--sessions] [--verbose]

Two questions are scored per tool step: does it repeat the previous step of the same intent
(``annotate_repeats``), and is it wasted (``Finding.wasted_source_ids``). For each split
(train = ``tests/data/labels/*.json``, used for tuning; held-out = ``heldout/*.json``, never
tuned on) and each format it prints precision / recall / F1 of the detector, the same figures
for the naive baseline "identical to an earlier action" (equal ``action_key``), and the
agreement of two independent labellers (Cohen's kappa on both questions, over the sessions that
also have a second label in ``second/<same name>.json``). ``--sessions`` adds one row per
session; ``--verbose`` lists every false positive and false negative so each can be read.
Label files appear while labellers work: a session whose log is not in the samples is skipped.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.detect import detect_all
from pipeline.detect.annotate import annotate_repeats
from pipeline.formats.base import ParseContext
from pipeline.formats.discover import discover, parse_source
from pipeline.model import Trajectory

REPO = Path(__file__).resolve().parent.parent
LABELS = REPO / "tests" / "data" / "labels"
HELDOUT = LABELS / "heldout"
SECOND = LABELS / "second"
SHARED = REPO.parent / "shared" / "trajectories"
SPLITS = {"train": LABELS, "heldout": HELDOUT}
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


REQUIRED = {"file": str, "session_id": str, "steps": list, "repeats": dict}


def read_label(path: Path) -> dict[str, Any] | None:
    """One label file, or None (with one line on stderr) when it is unreadable or incomplete.

    Labellers write files while the bench runs: a half-written file is skipped, not fatal.
    """
    try:
        label = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        print(f"{path}: not a readable label file ({exc}); skipped", file=sys.stderr)
        return None
    missing = [k for k, t in REQUIRED.items()
               if not isinstance(label, dict) or not isinstance(label.get(k), t)]
    if missing:
        print(f"{path}: missing {', '.join(missing)}; skipped", file=sys.stderr)
        return None
    label["name"] = path.stem
    return label


def load_labels(folder: Path = LABELS) -> list[dict[str, Any]]:
    """Every readable label file (one session each), sorted by name, each with its ``name``."""
    found = (read_label(p) for p in sorted(folder.glob("*.json")))
    return [x for x in found if x is not None]


def second_label(label: dict[str, Any], folder: Path = SECOND) -> dict[str, Any] | None:
    """The second labeller's file for the same session (same name), when there is one."""
    path = folder / f"{label['name']}.json"
    other = read_label(path) if path.exists() else None
    if other is None or (other["file"], other["session_id"]) != (label["file"],
                                                                 label["session_id"]):
        return None
    return other


def format_of(label: dict[str, Any]) -> str:
    """The format of a labelled session: the samples folder its log lives in."""
    return str(label["file"]).split("/", 1)[0]


def find_session(label: dict[str, Any], root: Path = SHARED) -> Trajectory | None:
    """Parse the labelled file and return the labelled session (None when absent).

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
    pred_waste = {s for f in findings for s in f.wasted_source_ids}
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


def _prf(s: Score) -> str:
    p, r, f = s.prf
    return f"{p:4.2f} {r:4.2f} {f:4.2f}"


def _kappa(a: Agreement) -> str:
    k = a.kappa
    return "   - " if k is None else f"{k:5.2f}"


HEADER = (f"{'':<30} {'ses':>3} {'steps':>5} {'rep':>4} {'wst':>4} | "
          f"{'repeats P R F1':<14} | {'base-rep P R F1':<15} | {'wasted P R F1':<14} | "
          f"{'base-wst P R F1':<15} | kappa rep wst (n)")


def row(name: str, g: Group) -> str:
    """One printed line of figures for a group."""
    sc = g.scores
    return (f"{name[:30]:<30} {g.sessions:>3} {g.steps:>5} {g.repeats:>4} {g.wasted:>4} | "
            f"{_prf(sc['repeat']):<14} | {_prf(sc['base_repeat']):<15} | "
            f"{_prf(sc['wasted']):<14} | {_prf(sc['base_wasted']):<15} | "
            f"{_kappa(g.agree['repeat'])} {_kappa(g.agree['wasted'])} ({g.doubled})")


def run_split(name: str, labels: list[dict[str, Any]], *, sessions: bool,
              verbose: bool) -> Group:
    """Score one split; print per-session (optional), per-format and total rows."""
    print(f"-- {name.upper()}")
    print(HEADER)
    total = Group()
    by_format: dict[str, Group] = {}
    for label in labels:
        traj = find_session(label)
        if traj is None:
            print(f"{label['name'][:30]:<30} missing from the samples")
            continue
        sc = score_session(label, traj)
        other = second_label(label)
        agree = agreement(label, other) if other is not None else None
        one = Group()
        one.add(label, sc, agree)
        if sessions or verbose:
            print(row(label["name"], one))
        if verbose:
            for k in QUESTIONS:
                if sc[k].fps or sc[k].fns:
                    print(f"    {k}: FP {sc[k].fps}  FN {sc[k].fns}")
        by_format.setdefault(format_of(label), Group()).merge(one)
        total.merge(one)
    for fmt, g in sorted(by_format.items()):
        print(row(f"  {fmt}", g))
    print(row(f"{name} total", total))
    return total


def main(argv: list[str]) -> int:
    """Print the tables; exit 1 when the samples are missing."""
    split = argv[argv.index("--split") + 1] if "--split" in argv else "all"
    if split not in (*SPLITS, "all"):
        print(f"unknown split {split!r}: use train, heldout or all")
        return 2
    if not SHARED.exists():
        print(f"{SHARED} not found: the labelled sessions are not available")
        return 1
    # The train set was used to tune the detector; the held-out set never was (see the README),
    # so its figures are the honest ones.
    chosen = SPLITS if split == "all" else {split: SPLITS[split]}
    every = Group()
    for name, folder in chosen.items():
        every.merge(run_split(name, load_labels(folder), sessions="--sessions" in argv,
                              verbose="--verbose" in argv or "-v" in argv))
    if len(chosen) > 1:
        print("--")
        print(row("all splits", every))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
