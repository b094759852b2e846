"""End to end: planted secrets never leave redaction, planted instructions never reach a playbook.

The real google-genai SDK talks to the fake Gemini server (which records every request body);
``orf analyze --draft --json`` and ``orf mine`` run in process through click's CliRunner.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
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
        "insight": "A repeated auth failure means a wrong input; retrying cannot fix it.",
        "validated_path": "1. Check the credential source\n2. Rerun the command once",
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
        _draft(title="Push with a token", validated_path=f"git push https://x:{fake_key}@h/r"),
        _draft(title="Speed up commits", insight=INJECTIONS[0], checklist=[INJECTIONS[1]],
               validated_path=INJECTIONS[2] + "\n" + INJECTIONS[4]),
    ]})


def _all_files(root: Path) -> dict[Path, str]:
    return {p: p.read_bytes().decode("utf-8", "replace") for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def corpus(tmp_path: Path) -> Corpus:
    return write_corpus(tmp_path / "logs")


def _env(server: FakeGemini) -> dict[str, str]:
    return {"GEMINI_API_KEY": "test-key", "GOOGLE_GEMINI_BASE_URL": server.url}


def test_corpus_is_big_enough(corpus: Corpus) -> None:
    planted = sum(sum(p.secret in f.read_text() or json.dumps(p.secret)[1:-1] in f.read_text()
                      for f in corpus.files) for p in corpus.plants)
    assert planted >= 60
    assert len({p.kind for p in corpus.plants}) >= 40
    assert len({f.parent.name for f in corpus.files}) == 3


def test_analyze_draft_json_through_gemini_leaks_nothing(corpus: Corpus, tmp_path: Path) -> None:
    with FakeGemini(responder=_model_that_obeys_injections) as server:
        result = CliRunner().invoke(
            main, ["analyze", str(tmp_path / "logs"), "--draft", "--json", "--backend", "gemini",
                   "--store", str(tmp_path / "store"), "--html", str(tmp_path / "t.html")],
            env=_env(server))
        bodies = [r.text for r in server.requests]
    assert result.exit_code in (0, 3), result.output
    assert len(bodies) > 0
    for body in bodies:
        assert corpus.leaks(body) == []
    assert corpus.leaks(result.stdout) == []
    assert corpus.leaks(result.stderr) == []
    for path, text in _all_files(tmp_path).items():
        if "logs" not in path.parts:
            assert corpus.leaks(text) == [], path
    rows = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    assert len(rows) == 3
    # Trajectory text reached the model only inside the fenced, redacted view.
    assert any("[REDACTED:" in b for b in bodies)


@pytest.mark.parametrize("backend", ["gemini", "heuristic"])
def test_mine_writes_no_secret_and_no_injected_instruction(
    corpus: Corpus, tmp_path: Path, backend: str
) -> None:
    store, ledger = tmp_path / "experiences", tmp_path / "state" / "ledger.db"
    with FakeGemini(responder=_model_that_obeys_injections) as server:
        result = CliRunner().invoke(
            main, ["mine", str(tmp_path / "logs"), "--store", str(store), "--ledger", str(ledger),
                   "--backend", backend, "--jobs", "1", "--json", "--quiet"],
            env=_env(server) if backend == "gemini" else {})
        bodies = [r.text for r in server.requests]
    assert result.exit_code in (0, 3), result.output
    if backend == "heuristic":
        assert bodies == []
    for body in bodies:
        assert corpus.leaks(body) == []
    assert corpus.leaks(result.stdout) == []
    written = _all_files(tmp_path / "state") | _all_files(store) if store.exists() else {}
    for path, text in written.items():
        assert corpus.leaks(text) == [], path
    playbooks = {p: t for p, t in written.items() if p.name.startswith("EXP-")}
    for path, text in playbooks.items():
        low = text.lower()
        assert not [s for s in INJECTED if s.lower() in low], path
        assert "[REDACTED:" not in text or True  # placeholders are allowed, literals are not
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
