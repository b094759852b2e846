"""bench/detect_labels.py: the blind ``fresh`` split is read like the others and named so.

These tests point the bench at folders of their own: the real ``tests/data/labels/fresh/``
is scored once, by hand, at the end, and no test may read it.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest
from conftest import REPO


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("detect_labels_bench",
                                                  REPO / "bench" / "detect_labels.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def _label(folder: Path, name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(
        {"file": f"codex-cli/{name}.jsonl", "session_id": name, "steps": ["a", "b"],
         "repeats": {"b": {"repeat_of": "a", "wasted": True}}}), encoding="utf-8")


def test_fresh4_split_is_printed_as_the_blind_held_out(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    bench = _bench()
    _label(tmp_path / "fresh4", "codex_new-1")
    monkeypatch.setitem(bench.SPLITS, "fresh4", tmp_path / "fresh4")
    monkeypatch.setattr(bench, "SHARED", tmp_path)
    monkeypatch.setattr(bench, "SECOND", tmp_path / "second")
    assert bench.main(["--split", "fresh4"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "-- FRESH4 (blind held-out)"
    assert out[-1] == "  codex_new-1: missing from the samples"


def test_all_view_takes_every_split_and_skips_a_missing_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    bench = _bench()
    _label(tmp_path / "train", "t1")
    _label(tmp_path / "heldout", "h1")
    _label(tmp_path / "fresh", "f1")
    _label(tmp_path / "fresh3", "f3")
    _label(tmp_path / "fresh4", "f4")
    monkeypatch.setattr(bench, "SPLITS", {"train": tmp_path / "train",
                                          "heldout": tmp_path / "heldout",
                                          "fresh": tmp_path / "fresh",
                                          "fresh2": tmp_path / "fresh2",
                                          "fresh3": tmp_path / "fresh3",
                                          "fresh4": tmp_path / "fresh4"})
    monkeypatch.setattr(bench, "SHARED", tmp_path)
    monkeypatch.setattr(bench, "SECOND", tmp_path / "second")
    assert bench.main([]) == 0
    heads = [x for x in capsys.readouterr().out.splitlines() if x.startswith("--")]
    assert heads == ["-- TRAIN (tuned on)", "-- HELDOUT (dev: seen, tuned on)",
                     "-- FRESH (scored blind once, then tuned on)",
                     "-- FRESH2 (scored blind once, then tuned on): "
                     f"{tmp_path / 'fresh2'} not found; skipped",
                     "-- FRESH3 (scored blind once, then tuned on)",
                     "-- FRESH4 (blind held-out)", "--"]


def test_unknown_split_names_the_choices(capsys: pytest.CaptureFixture[str]) -> None:
    assert _bench().main(["--split", "blind"]) == 2
    assert capsys.readouterr().out == ("unknown split 'blind': use train, heldout, fresh, "
                                       "fresh2, fresh3, fresh4 or all\n")
