"""Score the detector against the hand labels in tests/data/labels/ (real sessions).

Usage:
    .venv/bin/python bench/detect_labels.py [--verbose]

For each labelled session, and over all of them, prints step-level precision / recall / F1 of
(a) ``annotate_repeats`` against the ``repeat`` labels and (b) the findings' wasted steps
(``Finding.wasted_source_ids``) against the ``wasted`` labels, for the train set
(``tests/data/labels/*.json``, used for tuning), the held-out set (``heldout/*.json``, never
tuned on) and both, next to a baseline that flags
a step when its ``action_key`` equals an earlier step's (what today's live detectors catch).
``--verbose`` lists every false positive and false negative so each can be read by hand.
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
SHARED = REPO.parent / "shared" / "trajectories"


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


def load_labels(folder: Path = LABELS) -> list[dict[str, Any]]:
    """Every label file (one session each), sorted by name."""
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]


def find_session(label: dict[str, Any], root: Path = SHARED) -> Trajectory | None:
    """Parse the labelled file and return the labelled session (None when absent)."""
    path = root / label["file"]
    if not path.exists():
        return None
    for src in discover([path], issues=[]):
        for traj in parse_source(src, ParseContext()):
            if traj.id == label["session_id"]:
                return traj
    return None


def exact_baseline(traj: Trajectory) -> set[str]:
    """Steps whose action key equals an earlier step's (today's exact-repeat detectors)."""
    seen: set[str] = set()
    out: set[str] = set()
    for s in traj.steps:
        if s.kind != "tool" or not s.action_key:
            continue
        if s.action_key in seen:
            out.add(s.source_id)
        seen.add(s.action_key)
    return out


def score_session(label: dict[str, Any], traj: Trajectory) -> dict[str, Score]:
    """Scores of one session: repeat/wasted for the detector and the baseline."""
    steps: list[str] = label["steps"]
    rep_truth = set(label["repeats"])
    waste_truth = {k for k, v in label["repeats"].items() if v["wasted"]}
    repeats = annotate_repeats(traj)
    findings = detect_all(traj)
    pred_rep = {r.source_id for r in repeats}
    pred_waste = {s for f in findings for s in f.wasted_source_ids}
    base = exact_baseline(traj)
    out = {k: Score() for k in ("repeat", "wasted", "base_repeat", "base_wasted")}
    out["repeat"].add(pred_rep, rep_truth, steps)
    out["wasted"].add(pred_waste, waste_truth, steps)
    out["base_repeat"].add(base, rep_truth, steps)
    out["base_wasted"].add(base, waste_truth, steps)
    return out


def _fmt(s: Score) -> str:
    p, r, f = s.prf
    return f"{p:5.2f} {r:5.2f} {f:5.2f}"


def _table(name: str, labels: list[dict[str, Any]], verbose: bool) -> dict[str, Score]:
    """Print one row per session and a total row; return the totals."""
    total = {k: Score() for k in ("repeat", "wasted", "base_repeat", "base_wasted")}
    n_steps = n_rep = n_waste = 0
    for label in labels:
        traj = find_session(label)
        if traj is None:
            print(f"{label['session_id'][:28]:<28} missing")
            continue
        sc = score_session(label, traj)
        reps = label["repeats"]
        n_steps += len(label["steps"])
        n_rep += len(reps)
        n_waste += sum(1 for v in reps.values() if v["wasted"])
        print(f"{label['session_id'][:28]:<28} {len(label['steps']):>5} {len(reps):>4} "
              f"{sum(1 for v in reps.values() if v['wasted']):>4} | {_fmt(sc['repeat'])}"
              f"         | {_fmt(sc['wasted'])}        | {_fmt(sc['base_repeat'])}"
              f"          | {_fmt(sc['base_wasted'])}")
        if verbose:
            for k in ("repeat", "wasted"):
                if sc[k].fps or sc[k].fns:
                    print(f"    {k}: FP {sc[k].fps}  FN {sc[k].fns}")
        for k, s in sc.items():
            total[k].merge(s)
    _total_row(f"{name} ({len(labels)} sessions)", n_steps, n_rep, n_waste, total)
    return total


def _total_row(name: str, n_steps: int, n_rep: int, n_waste: int, total: dict[str, Score]) -> None:
    print(f"{name:<28} {n_steps:>5} {n_rep:>4} "
          f"{n_waste:>4} | {_fmt(total['repeat'])}         | {_fmt(total['wasted'])}        "
          f"| {_fmt(total['base_repeat'])}          | {_fmt(total['base_wasted'])}")


def _counts(labels: list[dict[str, Any]]) -> tuple[int, int, int]:
    reps = [v for x in labels for v in x["repeats"].values()]
    return sum(len(x["steps"]) for x in labels), len(reps), sum(1 for v in reps if v["wasted"])


def main(argv: list[str]) -> int:
    verbose = "--verbose" in argv or "-v" in argv
    if not SHARED.exists():
        print(f"{SHARED} not found: the labelled sessions are not available")
        return 1
    # The train set was used to tune the detector; the held-out set never was (see the README),
    # so its figures are the honest ones.
    groups = {"TRAIN": load_labels(), "HELD-OUT": load_labels(HELDOUT)}
    head = "P     R     F1"
    totals: list[dict[str, Score]] = []
    for name, labels in groups.items():
        print(f"-- {name}")
        print(f"{'session':<28} {'steps':>5} {'rep':>4} {'wst':>4} | repeats {head} | "
              f"wasted {head} | base-rep {head} | base-wst {head}")
        totals.append(_table(name, labels, verbose))
    every = {k: Score() for k in totals[0]}
    for t in totals:
        for k, s in t.items():
            every[k].merge(s)
    all_labels = [x for labels in groups.values() for x in labels]
    print("--")
    _total_row(f"ALL ({len(all_labels)} sessions)", *_counts(all_labels), every)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
