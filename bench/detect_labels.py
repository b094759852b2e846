"""Score the detector against the hand labels in tests/data/labels/ (real sessions).

Usage:
    .venv/bin/python bench/detect_labels.py [--split train|heldout|fresh|fresh2|fresh3|fresh4|all]
        [--sessions] [--verbose]

Two questions are scored per tool step: does it repeat the previous step of the same intent
(``annotate_repeats``), and is it wasted (``Finding.wasted_source_ids``). For each split
(train = ``tests/data/labels/*.json`` and the old held-out ``heldout/*.json``, both tuned on;
fresh, fresh2, fresh3 = ``fresh*/*.json``, each labelled blind, scored once, then tuned on;
fresh4 = ``fresh4/*.json``, the blind held-out split, labelled without the detector and scored
once)
and each format it prints precision / recall / F1 of the detector, the same figures
for the naive baseline "identical to an earlier action" (equal ``action_key``), and the
agreement of two independent labellers (Cohen's kappa on both questions, over the sessions that
also have a second label in ``second/<same name>.json``). ``--sessions`` adds one row per
session; ``--verbose`` lists every false positive and false negative so each can be read.

The scoring is ``pipeline.evaluate.detect_scores`` (what ``orf eval detect`` runs); this
script only chooses the label folders and prints. Label files appear while labellers work: a
half-written one is skipped with one line, a session whose log is not in the samples is named.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pipeline.evaluate.detect_scores import Group, load_labels, row, score_set, set_lines

REPO = Path(__file__).resolve().parent.parent
LABELS = REPO / "tests" / "data" / "labels"
SPLITS = {"train": LABELS, "heldout": LABELS / "heldout", "fresh": LABELS / "fresh",
          "fresh2": LABELS / "fresh2", "fresh3": LABELS / "fresh3", "fresh4": LABELS / "fresh4"}
TITLES = {"train": "TRAIN (tuned on)", "heldout": "HELDOUT (dev: seen, tuned on)",
          "fresh": "FRESH (scored blind once, then tuned on)",
          "fresh2": "FRESH2 (scored blind once, then tuned on)",
          "fresh3": "FRESH3 (scored blind once, then tuned on)",
          "fresh4": "FRESH4 (blind held-out)"}
"""Printed name of each split: what its figures can be trusted for (see the README)."""
SECOND = LABELS / "second"
SHARED = REPO.parent / "shared" / "trajectories"


def _warn(line: str) -> None:
    print(line, file=sys.stderr)


def main(argv: list[str]) -> int:
    """Print the tables; exit 1 when the samples are missing."""
    split = argv[argv.index("--split") + 1] if "--split" in argv else "all"
    if split not in (*SPLITS, "all"):
        print(f"unknown split {split!r}: use train, heldout, fresh, fresh2, fresh3, fresh4 or all")
        return 2
    if not SHARED.exists():
        print(f"{SHARED} not found: the labelled sessions are not available")
        return 1
    # Every split but the newest was tuned on; only fresh4/, labelled blind and scored once
    # at the end, gives honest figures (see the README).
    chosen = SPLITS if split == "all" else {split: SPLITS[split]}
    verbose = "--verbose" in argv or "-v" in argv
    every = Group()
    for name, folder in chosen.items():
        if not folder.is_dir():
            print(f"-- {TITLES[name]}: {folder} not found; skipped")
            continue
        result = score_set(name, load_labels(folder, _warn), SHARED, SECOND, _warn)
        print(f"-- {TITLES[name]}")
        for line in set_lines(result, total=f"{name} total", sessions="--sessions" in argv,
                              verbose=verbose, missing="missing from the samples"):
            print(line)
        every.merge(result.total)
    if len(chosen) > 1:
        print("--")
        print(row("all splits", every))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
