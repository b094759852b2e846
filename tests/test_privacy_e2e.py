"""End to end: planted secrets never leave redaction, planted instructions never reach a playbook.

The real google-genai SDK talks to the fake Gemini server (which records every request body);
``orf analyze --draft --json --html`` and ``orf mine`` then ``orf pr`` run in process through
click's CliRunner, on both backends. No planted value, nor any 12-character piece of one, may
appear in a request body, the analysis JSON, the HTML timeline, the ledger, the store or the
PR body.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from _mine_helpers import git, init_repo
from _secret_corpus import INJECTIONS, Corpus, make_secrets, write_corpus
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.testing.fake_gemini import FakeGemini

# What must never appear in a written playbook (pieces of the planted override lines).
INJECTED = ["ignore previous instructions", "--no-verify", "evil-tools.example",
            "authorized_keys", "| sh"]


def _draft(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "finding": 0, "title": "Check credentials before retrying a failing command",
        "description": "A command fails with the same authentication error on every retry.",
        "domain": "auth-errors", "keywords": ["auth", "retry", "credentials"],
        "complexity": "low", "objective": "Get an authenticated command to succeed.",
        "trap": "The same command failed repeatedly with an authentication error.",
        # Names the lessons' programs and errors, as the draft check asks of a real insight.
        "insight": "A repeated authentication failure of psql, twine, npm, ssh or the deploy "
                   "script means a wrong credential or config input; retrying cannot fix it.",
        "validated_path": "1. Check the credential source with `env | grep -c URL`\n"
                          "2. Rerun `psql -c 'select 1'` once",
        "checklist": ["the command exits 0", "no retry loop"],
    }
    base.update(over)
    return base


def _model_that_obeys_injections(body: dict[str, Any]) -> Any:
    """Answers drafts like a model fooled by the log: one clean, two poisoned drafts."""
    schema = body["generationConfig"]["responseJsonSchema"]
    if "outcome" in schema["properties"]:
        return json.dumps({"outcome": "failure", "reason": "auth kept failing",
                           "confidence": 0.7})
    fake_key = "gh" + "p_" + "Q" * 4 + "7x" * 16  # a model inventing a credential literal
    return json.dumps({"drafts": [
        _draft(),
        _draft(title="Push with a token",
               validated_path=f"`git push https://x:{fake_key}@h/r`"),
        _draft(title="Speed up commits",
               insight=INJECTIONS[0] + " The psql authentication failure shows why.",
               checklist=[INJECTIONS[1]],
               validated_path=f"`{INJECTIONS[2]}`\n`{INJECTIONS[4]}`"),
    ]})


def _all_files(root: Path) -> dict[Path, str]:
    return {p: p.read_bytes().decode("utf-8", "replace") for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def corpus(tmp_path: Path) -> Corpus:
    return write_corpus(tmp_path / "logs")


def _env(server: FakeGemini) -> dict[str, str]:
    return {"GEMINI_API_KEY": "test-key", "GOOGLE_GEMINI_BASE_URL": server.url}


def _init_store(store: Path) -> None:
    result = CliRunner().invoke(main, ["init", str(store)])
    assert result.exit_code == 0, result.output


def test_corpus_is_big_enough(corpus: Corpus) -> None:
    planted = sum(sum(p.secret in f.read_text() or json.dumps(p.secret)[1:-1] in f.read_text()
                      for f in corpus.files) for p in corpus.plants)
    assert planted >= 100
    assert len({p.kind for p in corpus.plants}) >= 50
    root = corpus.files[0].parents[1]
    assert sorted(f.relative_to(root).parts[0] for f in corpus.files) == [
        "claude", "codex", "gemini", "mini", "openhands"]


@pytest.mark.parametrize("backend", ["gemini", "heuristic"])
def test_analyze_draft_json_html_leaks_nothing(corpus: Corpus, tmp_path: Path,
                                               backend: str) -> None:
    store = tmp_path / "store"
    _init_store(store)
    with FakeGemini(responder=_model_that_obeys_injections) as server:
        result = CliRunner().invoke(
            main, ["analyze", str(tmp_path / "logs"), "--draft", "--json", "--backend", backend,
                   "--store", str(store), "--html", str(tmp_path / "t.html")],
            env=_env(server) if backend == "gemini" else {})
        bodies = [r.text for r in server.requests]
    assert result.exit_code == 0, result.output
    if backend == "gemini":
        assert len(bodies) > 0
        # Trajectory text reached the model only inside the fenced, redacted view.
        assert any("[REDACTED:" in b for b in bodies)
    else:
        assert bodies == []
    for body in bodies:
        assert corpus.leaks(body) == []
    assert corpus.leaks(result.stdout) == []
    assert corpus.leaks(result.stderr) == []
    html = (tmp_path / "t.html").read_text()
    assert "[REDACTED:" in html
    for path, text in _all_files(tmp_path).items():
        if "logs" not in path.parts:
            assert corpus.leaks(text) == [], path
    rows = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    assert sorted(r["format"] for r in rows) == [
        "claude-code", "claude-code", "codex", "gemini-cli", "mini-swe-agent", "openhands"]


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
@pytest.mark.parametrize("backend", ["gemini", "heuristic"])
def test_mine_and_pr_write_no_secret_and_no_injected_instruction(
    corpus: Corpus, tmp_path: Path, backend: str
) -> None:
    repo = tmp_path / "repo"
    init_repo(repo)
    store, ledger = repo / "experiences", tmp_path / "state" / "ledger.db"
    _init_store(store)
    (repo / ".gitignore").write_text(".orf/\n")  # the store's lock file
    git(repo, "add", "experiences", ".gitignore")
    git(repo, "commit", "-q", "-m", "empty store")
    with FakeGemini(responder=_model_that_obeys_injections) as server:
        result = CliRunner().invoke(
            main, ["mine", str(tmp_path / "logs"), "--store", str(store), "--ledger", str(ledger),
                   "--backend", backend, "--jobs", "1", "--json", "--quiet"],
            env=_env(server) if backend == "gemini" else {})
        bodies = [r.text for r in server.requests]
    assert result.exit_code == 0, result.output
    if backend == "heuristic":
        assert bodies == []
    else:
        assert len(bodies) > 0
    for body in bodies:
        assert corpus.leaks(body) == []
    assert corpus.leaks(result.stdout) == []
    written = _all_files(tmp_path / "state") | _all_files(store)
    playbooks = {p: t for p, t in written.items() if p.name.startswith("EXP-")}
    if backend == "gemini":
        # The corpus loops never reach a fix, so only the model drafts playbooks from them.
        assert len(playbooks) >= 1
        body_file = tmp_path / "pr.md"
        pr = CliRunner().invoke(main, ["pr", "--store", str(store), "--ledger", str(ledger),
                                       "--branch", "orf/test", "--body-file", str(body_file)])
        assert pr.exit_code == 0, pr.output
        assert corpus.leaks(pr.output) == []
        written[body_file] = body_file.read_text()
        assert "### " in written[body_file]
    assert ledger in written
    for path, text in written.items():
        assert corpus.leaks(text) == [], path
    for path, text in playbooks.items():
        low = text.lower()
        assert not [s for s in INJECTED if s.lower() in low], path
    summary = json.loads(result.stdout)
    if backend == "gemini":
        assert len(playbooks) >= 1
        dropped = summary["dropped"]
        assert summary["drafts"]["dropped"] >= 2
        assert dropped.get("instruction override", 0) >= 1
        assert dropped.get("pipes a download into a shell", 0) >= 1
        assert dropped.get("credential-shaped literal (github-token) in validated_path", 0) >= 1
        with sqlite3.connect(ledger) as db:
            reasons = [r for (r,) in db.execute(
                "SELECT reason FROM candidates WHERE status = 'dropped'")]
        assert len(reasons) >= 2 and all(reasons)
        assert any("instruction override: 'ignore previous instructions' in insight" in r
                   for r in reasons)


def test_every_planted_secret_is_a_distinct_string() -> None:
    plants = make_secrets()
    assert len({p.secret for p in plants}) == len(plants)
