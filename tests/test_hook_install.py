"""`orf hook install CLIENT`: the hook merged into the client's settings, nothing else touched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _agents_helpers import build_store, run_cli

from pipeline.agents.install import TARGETS, hook_command
from pipeline.agents.search import cache_file

EXISTING = {
    "permissions": {"allow": ["Bash(npm run lint)"], "deny": ["Read(./.env)"]},
    "env": {"FOO": "1"},
    "hooks": {
        "PostToolUse": [{"matcher": "Edit|Write",
                         "hooks": [{"type": "command", "command": "npx prettier --write"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
    },
}


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "experiences"
    build_store(root)
    return root


def test_claude_code_install_merges_and_is_idempotent(tmp_path: Path, store: Path) -> None:
    project = tmp_path / "app"
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps(EXISTING, indent=4), encoding="utf-8")
    code, out, err = run_cli("hook", "install", "claude-code", "--project", project,
                             "--store", store)
    assert (code, out, err) == (0, f"Added the orf hook to {settings}\n", "")
    command = hook_command("claude-code", store)
    assert json.loads(settings.read_text(encoding="utf-8")) == {
        "permissions": EXISTING["permissions"],
        "env": {"FOO": "1"},
        "hooks": {
            # failures only: a successful call starts no orf process
            "PostToolUse": EXISTING["hooks"]["PostToolUse"],
            "Stop": EXISTING["hooks"]["Stop"],
            "PostToolUseFailure": [
                {"matcher": "*",
                 "hooks": [{"type": "command", "command": command, "timeout": 5}]},
            ],
        },
    }
    assert command.endswith(f" hook claude-code --store {store.resolve()}")
    assert cache_file(store).is_file()
    before = settings.read_bytes()
    code, out, _ = run_cli("hook", "install", "claude-code", "--project", project,
                           "--store", store)
    assert (code, out) == (0, f"The orf hook is already in {settings}\n")
    assert settings.read_bytes() == before


def test_a_moved_store_replaces_the_old_orf_entry(tmp_path: Path, store: Path) -> None:
    project = tmp_path / "app"
    run_cli("hook", "install", "claude-code", "--project", project, "--store", store)
    other = tmp_path / "other-store"
    build_store(other)
    run_cli("hook", "install", "claude-code", "--project", project, "--store", other)
    data = json.loads((project / ".claude" / "settings.json").read_text(encoding="utf-8"))
    commands = [h["command"] for groups in data["hooks"].values() for g in groups
                for h in g["hooks"]]
    assert commands == [hook_command("claude-code", other)]


def test_an_older_post_tool_use_entry_is_removed(tmp_path: Path, store: Path) -> None:
    """orf once registered Claude Code's PostToolUse for Bash too; reinstalling drops it and
    keeps the user's own hooks of that event."""
    project = tmp_path / "app"
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    old = {"type": "command", "command": "orf hook claude-code --store experiences",
           "timeout": 5}
    settings.write_text(json.dumps({"hooks": {
        "PostToolUse": [{"matcher": "Bash", "hooks": [old]},
                        {"matcher": "Edit", "hooks": [old, {"type": "command",
                                                            "command": "npx prettier"}]}],
        "PostToolUseFailure": [{"matcher": "*", "hooks": [old]}]}}), encoding="utf-8")
    code, out, _ = run_cli("hook", "install", "claude-code", "--project", project,
                           "--store", store)
    assert (code, out) == (0, f"Added the orf hook to {settings}\n")
    data = json.loads(settings.read_text(encoding="utf-8"))
    assert data["hooks"]["PostToolUse"] == [
        {"matcher": "Edit", "hooks": [{"type": "command", "command": "npx prettier"}]}]
    assert data["hooks"]["PostToolUseFailure"] == [{"matcher": "*", "hooks": [{
        "type": "command", "command": hook_command("claude-code", store), "timeout": 5}]}]


def test_gemini_and_codex_files(tmp_path: Path, store: Path) -> None:
    project = tmp_path / "app"
    for client in ("gemini", "codex"):
        code, _, _ = run_cli("hook", "install", client, "--project", project, "--store", store)
        assert code == 0
    gemini = json.loads((project / ".gemini" / "settings.json").read_text(encoding="utf-8"))
    assert gemini == {"hooks": {"AfterTool": [{"matcher": ".*", "hooks": [{
        "type": "command", "command": hook_command("gemini", store), "timeout": 5000,
        "name": "orf-playbooks",
        "description": "The matching ORF playbook after a failed tool call"}]}]}}
    codex = json.loads((project / ".codex" / "hooks.json").read_text(encoding="utf-8"))
    assert codex == {"hooks": {"PostToolUse": [{"matcher": "Bash|apply_patch|mcp__.*", "hooks": [{
        "type": "command", "command": hook_command("codex", store), "timeout": 5}]}]}}
    assert set(TARGETS) == {"claude-code", "gemini", "codex"}


def test_invalid_settings_are_left_alone(tmp_path: Path, store: Path) -> None:
    project = tmp_path / "app"
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text("{\"hooks\": [", encoding="utf-8")
    code, _, err = run_cli("hook", "install", "claude-code", "--project", project,
                           "--store", store)
    assert code == 1
    assert err.startswith(f"Error: {settings}: not valid JSON (")
    assert err.endswith("fix it or move it away, nothing was changed\n")
    settings.write_text("{\"hooks\": {\"PostToolUseFailure\": {}}}", encoding="utf-8")
    code, _, err = run_cli("hook", "install", "claude-code", "--project", project,
                           "--store", store)
    assert code == 1
    assert err == (f"Error: {settings}: 'hooks.PostToolUseFailure' is not a JSON array; "
                   "nothing was changed\n")
    assert settings.read_text(encoding="utf-8") == "{\"hooks\": {\"PostToolUseFailure\": {}}}"


def test_install_without_a_store_warns(tmp_path: Path) -> None:
    code, out, err = run_cli("hook", "install", "claude-code", "--project", tmp_path,
                             "--store", tmp_path / "none")
    assert code == 0
    assert err == (f"warning: no ORF store at {tmp_path / 'none'} yet; the hook stays silent "
                   "until there is one\n")


def test_the_command_written_holds_no_path_of_this_machine(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline.agents import install

    project = tmp_path / "app"
    script = project / ".venv" / "bin" / "orf"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    monkeypatch.setattr(install, "orf_executable", lambda: str(script))
    monkeypatch.setattr(install.shutil, "which", lambda name: None)
    store = project / "experiences"
    assert hook_command("gemini", store, project) == (
        ".venv/bin/orf hook gemini --store experiences")
    assert hook_command("gemini", store, project, absolute=True) == (
        f"{script} hook gemini --store {store.resolve()}")
    monkeypatch.setattr(install.shutil, "which", lambda name: str(script))
    assert hook_command("gemini", store, project) == "orf hook gemini --store experiences"
    code, _, _ = run_cli("hook", "install", "gemini", "--project", project, "--store", store)
    data = json.loads((project / ".gemini" / "settings.json").read_text())
    assert code == 0 and data["hooks"]["AfterTool"][0]["hooks"][0]["command"] == (
        "orf hook gemini --store experiences")
    assert str(tmp_path) not in (project / ".gemini" / "settings.json").read_text()
