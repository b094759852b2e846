from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from _mine_helpers import git, init_repo, make_draft
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.ledger import Ledger
from pipeline.orf import Store, validate_store
from pipeline.review import list_candidates, reject
from pipeline.stages.dedupe import Decision
from pipeline.stages.write import WriteItem, reconcile, write_candidates

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")

OTHER = dict(title="Regenerate lockfiles instead of merging them by hand",
             description="Use when a rebase stops on a conflict in a generated lockfile.",
             domain="git-workflow", keywords=["git", "lockfile", "rebase"],
             trap="Hand-edited package-lock.json three times; npm ci kept failing.",
             insight="Generated files are regenerated from their source, never merged.",
             validated_path="git checkout --theirs package-lock.json\nnpm install",
             checklist=["npm ci passes"], domain_title="Git Workflow",
             domain_description="Branches, rebases and merges.")


def _populate(repo: Path) -> tuple[Store, Ledger]:
    store = Store(repo / "experiences")
    store.init()
    git(repo, "add", "experiences")
    git(repo, "commit", "-q", "-m", "empty store")
    ledger = Ledger(repo / ".orf" / "ledger.db")
    items = [
        WriteItem(make_draft("b2:s1"), Decision("new"), "sess-1", "b2:s1", 3),
        WriteItem(make_draft("b2:s2", **OTHER), Decision("new"), "sess-2", "b2:s2", 2),
    ]
    report = write_candidates(items, store, ledger, backend="heuristic", model=None)
    assert [r.outcome for r in report.results] == ["new", "new"]
    return store, ledger


def test_review_lists_git_untracked_candidates_with_evidence(tmp_path: Path) -> None:
    init_repo(tmp_path / "repo")
    store, ledger = _populate(tmp_path / "repo")
    cands = list_candidates(store, ledger)
    assert [c.title for c in cands] == [make_draft().title, OTHER["title"]]
    assert cands[0].git_status == "??"
    assert cands[0].wasted_steps == 3
    assert cands[0].signature == "b2:s1"
    result = CliRunner().invoke(main, ["review", "--store", str(store.root),
                                       "--ledger", str(ledger.path)])
    assert result.exit_code == 0, result.output
    assert "wasted steps: 3" in result.output
    assert "2 candidate(s)" in result.output
    # git's code in words; a log without token counts says so rather than "0 tokens"
    assert f"{cands[0].exp_id} [new, untracked]  {make_draft().title}" in result.output
    assert "[??]" not in result.output
    assert "wasted tokens unknown (no counts in the log) it would have saved" in result.output


def test_reject_removes_file_and_index_line_and_is_remembered(tmp_path: Path) -> None:
    init_repo(tmp_path / "repo")
    store, ledger = _populate(tmp_path / "repo")
    first = list_candidates(store, ledger)[0]
    result = CliRunner().invoke(main, ["review", "--store", str(store.root), "--ledger",
                                       str(ledger.path), "--reject", first.exp_id])
    assert result.exit_code == 0, result.output
    assert f"Rejected {first.exp_id}" in result.output
    assert not (store.root / first.path).exists()
    assert first.exp_id not in (store.root / "INDEX.md").read_text()
    assert validate_store(store.root) == []
    assert ledger.rejected_wasted("b2:s1") == 3
    assert [c.exp_id for c in list_candidates(store, ledger)] != [first.exp_id]
    bad = CliRunner().invoke(main, ["review", "--store", str(store.root), "--ledger",
                                    str(ledger.path), "--reject", "EXP-20990101-0001"])
    assert bad.exit_code == 1
    assert "EXP-20990101-0001" in bad.output


def test_review_without_git_uses_the_ledger(tmp_path: Path) -> None:
    store = Store(tmp_path / "plain" / "experiences")
    store.init()
    ledger = Ledger(tmp_path / "plain" / "ledger.db")
    write_candidates([WriteItem(make_draft("b2:s1"), Decision("new"), "s", "b2:s1", 4)],
                     store, ledger, backend="heuristic", model=None)
    cands = list_candidates(store, ledger)
    assert len(cands) == 1 and cands[0].git_status is None and cands[0].wasted_steps == 4
    reject(store, ledger, cands[0].exp_id)
    assert list_candidates(store, ledger) == []


def test_write_is_idempotent_and_reconciles_a_pending_intent(tmp_path: Path) -> None:
    store = Store(tmp_path / "experiences")
    store.init()
    ledger = Ledger(tmp_path / "ledger.db")
    item = WriteItem(make_draft("b2:s1"), Decision("new"), "sess-1", "b2:s1", 3)
    write_candidates([item], store, ledger, backend="heuristic", model=None)
    again = write_candidates([item], store, ledger, backend="heuristic", model=None)
    assert again.results[0].outcome == "existing"
    assert len(store.experiences()) == 1
    # Simulate a kill after the EXP file was written but before the intent was closed.
    ledger.db.execute("UPDATE write_intents SET state = 'pending'")
    assert reconcile(store, ledger)[0].startswith("closed interrupted write")
    # And a kill after the intent but before the file: the next run writes it.
    exp = store.experiences()[0]
    store.remove_experience(exp.id)
    ledger.db.execute("UPDATE write_intents SET state = 'pending'")
    assert reconcile(store, ledger)[0].startswith("finished interrupted write")
    assert len(store.experiences()) == 1
    assert validate_store(store.root) == []


def test_duplicates_reinforce_once_per_session(tmp_path: Path) -> None:
    store = Store(tmp_path / "experiences")
    store.init()
    ledger = Ledger(tmp_path / "ledger.db")
    first = write_candidates([WriteItem(make_draft("b2:s1"), Decision("new"), "a", "b2:s1", 3)],
                             store, ledger, backend="heuristic", model=None)
    exp_id = first.results[0].exp_id
    dup = WriteItem(make_draft("b2:s1"), Decision("duplicate", exp_id), "b", "b2:s1", 2)
    write_candidates([dup], store, ledger, backend="heuristic", model=None)
    write_candidates([dup], store, ledger, backend="heuristic", model=None)
    row = ledger.db.execute("SELECT reinforcements FROM candidates WHERE exp_id = ?",
                            (exp_id,)).fetchone()
    assert row[0] == 1
    assert len(store.experiences()) == 1


def test_pr_creates_branch_commit_and_body(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    init_repo(repo)
    store, ledger = _populate(repo)
    body_file = tmp_path / "body.md"
    result = CliRunner().invoke(main, ["pr", "--store", str(store.root), "--ledger",
                                       str(ledger.path), "--branch", "orf/test",
                                       "--body-file", str(body_file)])
    assert result.exit_code == 0, result.output
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "orf/test"
    files = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert "experiences/INDEX.md" in files
    assert len([f for f in files if f.endswith(".md") and "/EXP-" in f]) == 2
    assert git(repo, "log", "--format=%s", "-1").strip() == "Add 2 ORF playbooks from mined " \
        "agent sessions"
    assert git(repo, "status", "--porcelain", "--", "experiences") == ""
    body = body_file.read_text()
    assert "### " + make_draft().title in body
    assert "**Trap.**" in body and "**Insight.**" in body
    assert "session `sess-1`" in body
    assert "wasted steps it would have saved: 3" in body
    assert "not pushed" in result.output
    assert git(repo, "branch", "-r") == ""


def test_pr_refuses_dirty_tree_outside_store(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    init_repo(repo)
    store, ledger = _populate(repo)
    (repo / "README.md").write_text("changed\n")
    result = CliRunner().invoke(main, ["pr", "--store", str(store.root), "--ledger",
                                       str(ledger.path)])
    assert result.exit_code == 1
    assert "changes outside the store (README.md)" in result.output
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"


def test_pr_outside_git_and_without_candidates(tmp_path: Path) -> None:
    store = Store(tmp_path / "nogit" / "experiences")
    store.init()
    result = CliRunner().invoke(main, ["pr", "--store", str(store.root)])
    assert result.exit_code == 1
    assert "is not inside a git repository" in result.output
    init_repo(tmp_path / "repo")
    store = Store(tmp_path / "repo" / "experiences")
    store.init()
    git(tmp_path / "repo", "add", "-A")
    git(tmp_path / "repo", "commit", "-q", "-m", "store")
    result = CliRunner().invoke(main, ["pr", "--store", str(store.root)])
    assert result.exit_code == 1
    assert "no uncommitted candidate playbooks" in result.output
