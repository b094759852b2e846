"""`orf learn` then `orf submit`, end to end: digest -> an agent's drafts -> verified -> written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from _agents_helpers import build_store, run_cli
from _mine_helpers import git, init_repo
from test_skill import ALPHA, agent_drafts

from pipeline.orf import Store, validate_store


def _repo(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A git repository with a store and the alpha session's log."""
    repo = tmp_path / "repo"
    init_repo(repo)
    store = repo / "experiences"
    build_store(store)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "store")
    log = tmp_path / "logs" / "alpha.jsonl"
    log.parent.mkdir()
    shutil.copy(ALPHA, log)
    return repo, store, log


def test_learn_writes_one_request_per_session_and_nothing_else(tmp_path: Path) -> None:
    _, _, log = _repo(tmp_path)
    code, out, err = run_cli("learn", log.parent, "-o", tmp_path / "learn")
    assert code == 0, err
    (request,) = sorted((tmp_path / "learn").iterdir())
    assert out == f"{request}  (" + out.split("  (")[1]
    assert err == "orf learn: 1 session(s) with something to learn from\n"
    text = request.read_text()
    assert text.startswith("# Instructions\n")
    assert '"evidence"' in text and "# The session\n# Session a1f0c2d4-" in text
    assert "#6 [bash] pytest -x tests/ => ok\n    3 passed in 0.41s" in text
    assert f'"session": "{log}"' in text
    assert not (tmp_path / ".orf").exists()


def test_submit_verifies_then_writes_as_working_tree_changes(tmp_path: Path) -> None:
    repo, store, log = _repo(tmp_path)
    entries = agent_drafts()
    entries[0]["session"] = str(log)
    bad = json.loads(json.dumps(entries[0]["drafts"][0]))
    bad["title"] = "Reinstall pytest when it cannot import requests"
    bad["validated_path"] = "`pip install pytest`"
    entries[0]["drafts"].append(bad)  # type: ignore[attr-defined]
    drafts = tmp_path / "drafts.json"
    drafts.write_text(json.dumps(entries))
    code, out, err = run_cli("submit", drafts, "--store", store)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == ("rejected: Reinstall pytest when it cannot import requests: path_ran: "
                        "the validated command `pip install pytest` never ran after the trap")
    assert lines[1].startswith("written EXP-") and "Install the module pytest" in lines[1]
    assert err == "orf submit: 1 rejected, 1 written\n"
    assert validate_store(store) == []
    new = [e for e in Store(store).experiences() if e.title.startswith("Install the module")]
    assert len(new) == 1
    prov = new[0].provenance or {}
    assert prov["drafted_by"] == "agent" and prov["evidence"]["fix_steps"] == [5, 6]
    status = git(repo, "status", "--porcelain", "--untracked-files=all", "experiences")
    assert status.splitlines() == [" M experiences/INDEX.md",
                                   f"?? experiences/python-testing/{new[0].id}.md"]
    assert git(repo, "log", "--oneline").count("\n") == 2  # nothing committed
    again = run_cli("submit", drafts, "--store", store, "--json")
    report = json.loads(again[1])
    assert again[0] == 0 and report["schema"] == "orf.submit/1"
    assert [d["outcome"] for d in report["drafts"]] == ["rejected", "already-written"]


def test_a_malformed_file_and_an_unknown_session_get_one_line_each(tmp_path: Path) -> None:
    _, store, _ = _repo(tmp_path)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    code, out, err = run_cli("submit", broken, "--store", store)
    assert (code, out) == (2, "")
    assert err.startswith(f"Error: {broken}: not JSON: ") and err.count("\n") == 1
    shape = tmp_path / "shape.json"
    shape.write_text(json.dumps([{"drafts": []}]))
    assert run_cli("submit", shape, "--store", store)[2] == (
        f'Error: {shape}: entry 1: expected {{"session": "<log path>", "drafts": [...]}}\n')
    unknown = tmp_path / "unknown.json"
    entries = agent_drafts()
    entries[0]["session"] = str(tmp_path / "gone.jsonl")
    unknown.write_text(json.dumps(entries))
    code, out, err = run_cli("submit", unknown, "--store", store)
    assert code == 0
    assert out == ("rejected: Install the module pytest cannot import before running it again:"
                   " unknown session: no such file\n")
    assert err.splitlines()[0] == f"orf: {tmp_path / 'gone.jsonl'}: no such file"


def _submitted_from_the_repository(tmp_path: Path) -> tuple[Path, Any]:
    """The alpha log kept inside the store's repository, its drafts submitted: (log, EXP)."""
    repo, store, _ = _repo(tmp_path)
    log = repo / "logs" / "alpha.jsonl"
    log.parent.mkdir()
    shutil.copy(ALPHA, log)
    entries = agent_drafts()
    entries[0]["session"] = str(log)
    drafts = tmp_path / "drafts.json"
    drafts.write_text(json.dumps(entries))
    assert run_cli("submit", drafts, "--store", store)[0] == 0
    (exp,) = [e for e in Store(store).experiences() if e.title.startswith("Install the module")]
    return log, exp


def test_provenance_paths_are_relative_to_the_repository_unless_asked(tmp_path: Path) -> None:
    _, exp = _submitted_from_the_repository(tmp_path)
    prov = exp.provenance or {}
    assert prov["source_paths"] == ["logs/alpha.jsonl"]
    assert prov["sessions"][0]["path"] == "logs/alpha.jsonl"


def test_absolute_paths_keeps_them_for_a_private_store(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORF_ABSOLUTE_PATHS", "true")
    log, exp = _submitted_from_the_repository(tmp_path)
    assert (exp.provenance or {})["source_paths"] == [str(log)]


def test_a_validated_path_sent_as_a_list_is_kept_as_numbered_steps(tmp_path: Path) -> None:
    # Coding agents (and every stand-in model asked in round three) often send the path as a
    # list of steps although the schema asks for a string: the steps are kept, in order.
    _, store, log = _repo(tmp_path)
    entries = agent_drafts()
    entries[0]["session"] = str(log)
    draft = entries[0]["drafts"][0]  # type: ignore[index]
    draft["validated_path"] = ["`pip install requests`", "`pytest -x tests/`"]
    drafts = tmp_path / "drafts.json"
    drafts.write_text(json.dumps(entries))
    code, out, err = run_cli("submit", drafts, "--store", store)
    assert code == 0, err
    assert out.startswith("written EXP-")
    (new,) = [e for e in Store(store).experiences() if e.title.startswith("Install the module")]
    text = new.path.read_text()
    assert "1. `pip install requests`\n2. `pytest -x tests/`" in text
