"""Commands that say they write nothing write nothing; a missing store is refused alike."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "mine"


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_analyze_with_drafts_creates_no_ledger(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "alpha.jsonl"
    shutil.copy(FIX / "alpha-session.jsonl", log)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["analyze", str(log), "--draft", "--json"])
    assert result.exit_code == 0, result.output
    assert '"drafts"' in result.stdout
    assert _tree(tmp_path) == ["alpha.jsonl"]


@pytest.mark.parametrize("verb", [["trends"], ["search", "x"], ["review"]])
def test_a_missing_store_is_refused_in_the_same_words(verb: list[str], tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, [*verb, "--store", "nosuch"])
    assert result.exit_code == 1
    assert result.stderr == ("Error: no ORF store at nosuch (INDEX.md not found); create one "
                             "with `orf init --store nosuch`\n")
    assert _tree(tmp_path) == []
