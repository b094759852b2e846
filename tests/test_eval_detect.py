"""``orf eval detect``: the loop detector's figures from one command (shared scoring module)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from pipeline.cli import main
from pipeline.evaluate.detect_scores import Score, load_labels, score_set

REPO = Path(__file__).resolve().parent.parent
SET = REPO / "tests" / "data" / "eval_detect"
ROOT = REPO / "fixtures"
LABELS = REPO / "tests" / "data" / "labels"

ROW = ("  1     7    3    1 | 1.00 0.67 0.80 | 1.00 0.67 0.80  | 1.00 1.00 1.00 | "
       "0.50 1.00 0.67  |    -     -  (0)")


def test_figures_of_a_labelled_fixture_session() -> None:
    result = CliRunner().invoke(main, ["eval", "detect", str(SET), "--root", str(ROOT), "-v"])
    lines = result.stdout.splitlines()
    assert lines[0] == f"-- {SET / 'set_a'}"
    assert lines[2] == f"{'calc-1x':<30} {ROW}"
    # the detector misses that the second edit retries the first (labelled, not wasted)
    assert lines[3] == "    repeat: FP []  FN ['4']"
    assert lines[5] == f"{'total':<30} {ROW}"
    # a broken label file is named and the exit code says partial
    assert result.exit_code == 3
    assert (f"warning: {SET / 'set_a' / 'broken.json'}: not a label file (missing or invalid "
            "'session_id')") in result.stderr


def test_json_output() -> None:
    result = CliRunner().invoke(main, ["eval", "detect", str(SET), "--root", str(ROOT),
                                       "--json"])
    doc = json.loads(result.stdout)
    scores = doc["all"]["scores"]
    assert scores["repeat"] == {"tp": 2, "fp": 0, "fn": 1, "precision": 1.0,
                                "recall": 0.6667, "f1": 0.8}
    assert scores["wasted"]["tp"] == 1 and scores["base_wasted"]["fp"] == 1


def test_missing_sessions_are_an_error() -> None:
    result = CliRunner().invoke(main, ["eval", "detect", str(SET), "--root", str(SET)])
    assert result.exit_code == 1
    assert "calc-1x: session not found under" in result.stdout
    assert result.stderr.endswith("Error: no labelled session found (check --root)\n")


def test_score_counts() -> None:
    s = Score()
    s.add({"a", "b", "z"}, {"b", "c"}, ["a", "b", "c"])
    assert (s.tp, s.fp, s.fn, s.fps, s.fns) == (1, 1, 1, ["a"], ["c"])
    assert s.prf == (0.5, 0.5, 0.5)


def test_real_labels_match_the_library(shared_trajectories: Path) -> None:
    labels = load_labels(LABELS)
    expected = score_set("train", labels, shared_trajectories).total.as_dict()
    result = CliRunner().invoke(main, ["eval", "detect",
                                       *[str(p) for p in sorted(LABELS.glob("*.json"))],
                                       "--root", str(shared_trajectories), "--json"])
    doc = json.loads(result.stdout)
    assert doc["all"] == expected
    assert doc["all"]["sessions"] == len(labels)
