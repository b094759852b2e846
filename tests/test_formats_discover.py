from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from _formats_helpers import is_real_session, parse_all, sample_notes
from click.testing import CliRunner
from conftest import FIXTURES, MALFORMED, REPO

from pipeline.cli import main
from pipeline.errors import UnknownFormat
from pipeline.formats import ADAPTER_MODULES
from pipeline.formats.base import ParseContext
from pipeline.formats.discover import SessionSource, Skipped, discover, parse_source, sniff

CLAUDE = FIXTURES / "claude-code" / "-home-dev-shop" / "5f0c3a1e-2b7d-4c1e-9a44-0d6f1b2c3e4f.jsonl"
CODEX = next((FIXTURES / "codex").rglob("rollout-*.jsonl"))
GEMINI = FIXTURES / "gemini-cli" / "tmp" / "9f86d081" / "chats"
BRAIN = FIXTURES / "antigravity" / "brain" / "3e9a7c52-8d1f-4b6e-a0c2-7f5e4d3c2b1a"
AIDER = REPO / "tests" / "data" / "aider" / "calc.aider.chat.history.md"


@pytest.mark.parametrize(("path", "expected"), [
    (CLAUDE, "claude-code"),
    (CLAUDE.with_suffix("") / "subagents" / "agent-b12c9f0.jsonl", "claude-code"),
    (CODEX, "codex"),
    (GEMINI / "session-2026-03-01T10-00-b7e2c1d0.json", "gemini-cli"),
    (GEMINI / "session-2026-04-02T09-00-c0ffee00.jsonl", "gemini-cli"),
    (BRAIN, "antigravity"),
    (BRAIN / ".system_generated" / "logs" / "transcript_full.jsonl", "antigravity"),
    (AIDER, "aider"),
    (MALFORMED / "README.md", None),
    (MALFORMED / "not_a_log.json", None),
    (MALFORMED / "empty.jsonl", None),
    (MALFORMED / "binary.json", None),
])
def test_sniff_by_content(path: Path, expected: str | None) -> None:
    assert sniff(path) == expected


def test_sniff_ignores_file_names(tmp_path: Path) -> None:
    renamed = tmp_path / "whatever.log"
    shutil.copy(CODEX, renamed)
    assert sniff(renamed) == "codex"


def test_claude_subagents_not_separate_when_parent_exists() -> None:
    issues: list = []
    sources = list(discover([FIXTURES / "claude-code"], issues=issues))
    assert sources == [SessionSource(CLAUDE, "claude-code")]
    assert not issues


def test_subagent_named_explicitly_is_a_source() -> None:
    sub = CLAUDE.with_suffix("") / "subagents" / "agent-b12c9f0.jsonl"
    assert list(discover([sub], issues=[])) == [SessionSource(sub, "claude-code")]


def test_walk_skips_hidden_dirs_and_ignores_non_logs(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    shutil.copy(CODEX, tmp_path / ".git" / "rollout.jsonl")
    (tmp_path / "README.md").write_text("# notes\n")
    (tmp_path / "notes.txt").write_text("not a log\n")
    shutil.copy(CODEX, tmp_path / "a.jsonl")
    (tmp_path / "b.json").write_text('{"hello": 1}')
    issues: list = []
    skipped: list[Skipped] = []
    sources = list(discover([tmp_path], issues=issues, skipped=skipped))
    assert sources == [SessionSource(tmp_path / "a.jsonl", "codex")]
    assert issues == []
    assert [str(s) for s in skipped] == [f"{tmp_path / n}: not a session log"
                                         for n in ("README.md", "b.json", "notes.txt")]


def test_whole_fixture_tree_in_one_batch() -> None:
    trajs, issues = parse_all(*(FIXTURES / d for d in
                                ("claude-code", "codex", "gemini-cli", "antigravity")))
    assert sorted(t.source.format for t in trajs) == [
        "antigravity", "antigravity", "claude-code", "codex", "gemini-cli", "gemini-cli"]
    assert not issues


def test_forced_format(tmp_path: Path) -> None:
    odd = tmp_path / "odd.jsonl"
    odd.write_bytes(CODEX.read_bytes())
    assert list(discover([odd], format="codex", issues=[])) == [
        SessionSource(odd, "codex", forced=True)]


def test_unknown_forced_format_lists_valid_names() -> None:
    with pytest.raises(UnknownFormat) as err:
        list(discover([CODEX], format="nope", issues=[]))
    assert str(err.value) == f"unknown format 'nope'; valid formats: {', '.join(ADAPTER_MODULES)}"


def test_missing_path_is_reported(tmp_path: Path) -> None:
    issues: list = []
    assert list(discover([tmp_path / "gone.jsonl"], issues=issues)) == []
    assert str(issues[0]) == f"{tmp_path / 'gone.jsonl'}: no such file or folder"


def test_parse_source_turns_adapter_crash_into_issue(tmp_path: Path) -> None:
    # Forcing the wrong adapter on a file whose records have unexpected shapes.
    weird = tmp_path / "weird.json"
    weird.write_text("[1, 2, 3]")
    ctx = ParseContext()
    assert list(parse_source(SessionSource(weird, "gemini-cli"), ctx)) == []
    [issue] = ctx.issues
    assert issue.fatal and issue.path == str(weird)
    assert "expected a JSON object" in issue.message


def test_orf_formats_command() -> None:
    result = CliRunner().invoke(main, ["formats"])
    assert result.exit_code == 0
    for name in ("antigravity", "claude-code", "codex", "gemini-cli"):
        assert name in result.output
    result = CliRunner().invoke(main, ["formats", "--json"])
    rows = orjson.loads(result.output)
    by_name = {r["name"]: r for r in rows}
    assert by_name["codex"]["where"] == "~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl"
    assert set(by_name) <= set(ADAPTER_MODULES)
    assert all(r["description"] and r["where"] for r in rows)


def test_real_tree_each_sample_gets_its_format(shared_trajectories: Path) -> None:
    expected = {"claude-code": "claude-code", "codex-cli": "codex", "gemini-cli": "gemini-cli",
                "antigravity": "antigravity"}
    for folder, fmt in expected.items():
        root = shared_trajectories / folder
        issues: list = []
        skipped: list[Skipped] = []
        sources = list(discover([root], issues=issues, skipped=skipped))
        assert sources and {s.format for s in sources} == {fmt}, folder
        assert issues == [], folder
        notes = sample_notes(root)
        # Every file its SOURCES.md calls a real session is found; only files it does not
        # (metadata, manifests, prompt logs, hook logs, notes) are skipped as not logs.
        claimed = {s.path for s in sources}
        for path, note in notes.items():
            if is_real_session(note):
                assert path in claimed, path
        for skip in skipped:
            assert skip.reason.startswith("not a session log"), skip
            assert not is_real_session(notes.get(Path(skip.path), "")), skip


def test_markdown_quoting_json_keys_is_not_a_session(shared_trajectories: Path,
                                                     tmp_path: Path) -> None:
    # FORMATS.md quotes "projectHash", "sessionId" and "messages": no positive evidence.
    assert sniff(shared_trajectories / "FORMATS.md") is None
    page = tmp_path / "notes.json.md"
    page.write_text('Gemini CLI: `{"projectHash": "...", "sessionId": "...", "messages": []}`\n')
    assert sniff(page) is None
    page.write_text('{"projectHash": "ab", "sessionId": "s1", "messages": []}\n')
    assert sniff(page) == "gemini-cli"
