"""``orf eval detect``: the loop detector's figures from one command (shared scoring module)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
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


def test_half_written_label_files_are_skipped_with_one_line(tmp_path: Path) -> None:
    good = json.loads((SET / "set_a" / "calc-1x.json").read_text(encoding="utf-8"))
    (tmp_path / "a.json").write_text(json.dumps(good), encoding="utf-8")
    (tmp_path / "b.json").write_text('{"file": "x.jsonl", "steps": [', encoding="utf-8")
    (tmp_path / "c.json").write_text('{"file": "x.jsonl"}', encoding="utf-8")
    lines: list[str] = []
    labels = load_labels(tmp_path, lines.append)
    assert [x["name"] for x in labels] == ["a"]
    assert len(lines) == 2
    assert lines[0].startswith(f"{tmp_path / 'b.json'}: not a label file (not readable: ")
    assert lines[1] == (f"{tmp_path / 'c.json'}: not a label file (missing or invalid "
                        "'session_id'); skipped")


def test_the_bench_prints_the_library_figures(shared_trajectories: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    # bench/detect_labels.py is a printer over pipeline.evaluate.detect_scores: its train
    # total is the row `orf eval detect` prints for the same labels.
    spec = importlib.util.spec_from_file_location("detect_labels", REPO / "bench" /
                                                  "detect_labels.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--split", "train"]) == 0
    printed = capsys.readouterr().out.splitlines()
    result = CliRunner().invoke(main, ["eval", "detect",
                                       *[str(p) for p in sorted(LABELS.glob("*.json"))],
                                       "--root", str(shared_trajectories),
                                       "--second", str(LABELS / "second")])
    total = next(x for x in result.stdout.splitlines() if x.startswith("total "))
    bench_total = next(x for x in printed if x.startswith("train total "))
    assert bench_total[30:] == total[30:]
    assert bench_total[30:].split()[0] == str(len(load_labels(LABELS)))
