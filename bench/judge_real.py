"""Measure the offline judge on the labelled real runs, with their evaluation files hidden.

Usage:
    .venv/bin/python bench/judge_real.py [--split tune|heldout|extra|all] [--verbose]

Copies the trajectories named by ``tests/data/judge/real_{tune,heldout,extra}.jsonl`` (and nothing
else: no report.json, no results.json) into a temporary folder, then runs ``orf eval judge`` on
each half and prints its figures: coverage, accuracy on decided, precision/recall of success,
the confusion table and how each signal did. The tuning half was used to choose which signals
decide; the held-out half and the extra runs never were, so their figures are the honest ones
(see the README there).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LABELS = REPO / "tests" / "data" / "judge"
SHARED = REPO.parent / "shared" / "trajectories"
SPLITS = ("tune", "heldout", "extra")


def blind_copy(labels: Path, into: Path) -> int:
    """Copy the labelled trajectories alone into ``into``; return how many were copied."""
    n = 0
    for line in labels.read_text(encoding="utf-8").splitlines():
        if line.strip():
            src = SHARED / json.loads(line)["file"]
            shutil.copy2(src, into / src.name)
            n += 1
    return n


def run(labels: Path, folder: Path, verbose: bool) -> int:
    """``orf eval judge`` of one half, printed; its exit code."""
    cmd = [sys.executable, "-m", "pipeline", "eval", "judge", str(labels), str(folder)]
    if verbose:
        cmd.append("--verbose")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(cmd, cwd=REPO, env=env, check=False).returncode


def main(argv: list[str]) -> int:
    """Print the figures of each chosen half; exit 1 when the samples are missing."""
    split = argv[argv.index("--split") + 1] if "--split" in argv else "all"
    if split not in (*SPLITS, "all"):
        print(f"unknown split {split!r}: use tune, heldout, extra or all")
        return 2
    if not SHARED.exists():
        print(f"{SHARED} not found: the labelled runs are not available")
        return 1
    verbose = "--verbose" in argv or "-v" in argv
    for name in SPLITS if split == "all" else (split,):
        labels = LABELS / f"real_{name}.jsonl"
        with tempfile.TemporaryDirectory(prefix=f"orf-judge-{name}-") as tmp:
            n = blind_copy(labels, Path(tmp))
            print(f"== {name}: {n} trajectories copied alone (evaluation files hidden)")
            run(labels, Path(tmp), verbose)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
