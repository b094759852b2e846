"""`orf hook CLIENT`: real payload shapes in, the exact hook JSON (or silence) out."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _agents_helpers import EDIT_ERROR, MODULE_ERROR, build_store, run_cli, run_script

from pipeline.agents import hook

BASE = {"session_id": "0b1c2d3e-0000-4000-8000-00000000aaaa",
        "transcript_path": "/home/u/.claude/projects/-home-u-app/0b1c2d3e.jsonl",
        "cwd": "/home/u/app", "permission_mode": "default"}
FAILED_BASH = {**BASE, "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
               "tool_input": {"command": "pytest -x tests/", "description": "Run the tests"},
               "tool_use_id": "toolu_01ABC", "error": f"Exit code 1\n{MODULE_ERROR}",
               "is_interrupt": False}
FAILED_EDIT = {**BASE, "hook_event_name": "PostToolUseFailure", "tool_name": "Edit",
               "tool_input": {"file_path": "/home/u/app/src/fetch.py",
                              "old_string": "def fetch(url):", "new_string": "def fetch(url, t):",
                              "replace_all": False},
               "tool_use_id": "toolu_01DEF",
               "error": f"<tool_use_error>{EDIT_ERROR}\nString: def fetch(url):</tool_use_error>",
               "is_interrupt": False}
SUCCESS = {**BASE, "hook_event_name": "PostToolUse", "tool_name": "Bash",
           "tool_input": {"command": "pytest -x tests/", "description": "Run the tests"},
           "tool_response": {"stdout": "3 passed in 0.41s", "stderr": "", "interrupted": False,
                             "isImage": False},
           "tool_use_id": "toolu_01GHI"}


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "experiences"
    build_store(root)
    return root


def call(client: str, payload: Any, store: Path) -> tuple[int, str]:
    out = io.StringIO()
    code = hook.main([client, "--store", str(store)], stdin=io.BytesIO(
        json.dumps(payload).encode()), stdout=out)
    return code, out.getvalue()


def reply(event: str, store: Path, exp_id: str, title: str, insight: str, path: str,
          why: str = "a playbook in the store matches this failure") -> str:
    context = (f"orf: {why}: {exp_id} \"{title}\"\nCore Principle: {insight}\n"
               f"Validated path:\n{path}\n"
               f"Full playbook: orf read-experience --id {exp_id} --store {store}")
    return json.dumps({"hookSpecificOutput": {"hookEventName": event,
                                              "additionalContext": context}},
                      separators=(",", ":")) + "\n"


def module_reply(event: str, store: Path, **kw: str) -> str:
    return reply(event, store, "EXP-20260502-0001",
                 "Install the missing module before rerunning pytest",
                 "An import error is an environment problem; rerunning cannot fix it.",
                 "1. pip install requests\n2. pytest -x tests/", **kw)


def test_failed_bash_gets_the_playbook_of_its_trap(store: Path) -> None:
    assert call("claude-code", FAILED_BASH, store) == (
        0, module_reply("PostToolUseFailure", store))


def test_failed_edit_gets_the_edit_playbook(store: Path) -> None:
    assert call("claude-code", FAILED_EDIT, store) == (0, reply(
        "PostToolUseFailure", store, "EXP-20260502-0002",
        "Re-read the file before retrying a failed edit",
        "Edit against what the file says now, not what you remember.",
        "1. Read the lines around the change.\n2. Copy old_string from them."))


def test_success_is_silent_and_not_recorded(store: Path) -> None:
    assert call("claude-code", SUCCESS, store) == (0, "")
    assert not (hook.cache_dir() / "hook").exists()


def test_claude_post_tool_use_is_a_success_whatever_it_prints(store: Path) -> None:
    """Claude Code sends a nonzero Bash exit as PostToolUseFailure ("Exit code N" first); a
    PostToolUse response is ``{stdout, stderr, interrupted, isImage}`` of a call that worked
    (code.claude.com/docs/en/hooks, PostToolUse and PostToolUseFailure input, 2026-11)."""
    payload = {**SUCCESS, "tool_response": {"stdout": "", "interrupted": False,
                                            "stderr": f"{MODULE_ERROR}\nExit code 1",
                                            "isImage": False}}
    assert call("claude-code", payload, store) == (0, "")


def test_interrupt_and_unrelated_first_failure_are_silent(store: Path) -> None:
    assert call("claude-code", {**FAILED_BASH, "is_interrupt": True}, store) == (0, "")
    other = {**FAILED_BASH, "tool_input": {"command": "pytest tests/test_math.py"},
             "error": "Exit code 1\nE       AssertionError: assert 1 == 2"}
    assert call("claude-code", other, store) == (0, "")


def test_the_same_call_failing_twice_gets_the_closest_playbook(store: Path) -> None:
    other = {**FAILED_BASH, "tool_input": {"command": "pytest tests/test_math.py"},
             "error": "Exit code 1\nE       AssertionError: assert 1 == 2"}
    assert call("claude-code", other, store) == (0, "")
    assert call("claude-code", other, store) == (0, module_reply(
        "PostToolUseFailure", store,
        why="this call already failed once in this session; the closest playbook"))
    elsewhere = {**other, "session_id": "another-session"}
    assert call("claude-code", elsewhere, store) == (0, "")


GEMINI_SHELL = {
    "session_id": "g-1", "transcript_path": "/home/u/.gemini/tmp/chat.json",
    "cwd": "/home/u/app", "hook_event_name": "AfterTool", "timestamp": "2026-05-02T10:00:00Z",
    "tool_name": "run_shell_command", "tool_input": {"command": "pytest -x tests/"},
    "tool_response": {"llmContent": "Command: pytest -x tests/\nDirectory: (root)\n"
                                    f"Output: {MODULE_ERROR}\nError: (none)\nExit Code: 1",
                      "returnDisplay": MODULE_ERROR}}


def test_gemini_after_tool_with_text_or_parts(store: Path) -> None:
    """Gemini CLI AfterTool input: ``tool_response`` is the tool's result, ``llmContent`` a
    string or a list of ``{text}`` parts (PartListUnion; gemini-cli docs/hooks/reference.md,
    packages/core/src/tools/tools.ts ToolResult, v0.20)."""
    assert call("gemini", GEMINI_SHELL, store) == (0, module_reply("AfterTool", store))
    text = GEMINI_SHELL["tool_response"]["llmContent"]
    parts = {**GEMINI_SHELL, "session_id": "g-2", "tool_response": {
        "llmContent": [{"text": line} for line in text.split("\n")],
        "returnDisplay": MODULE_ERROR}}
    assert call("gemini", parts, store) == (0, module_reply("AfterTool", store))
    worked = {**parts, "session_id": "g-3", "tool_response": {
        "llmContent": [{"text": "Output: 3 passed"}, {"text": "Exit Code: 0"}]}}
    assert call("gemini", worked, store) == (0, "")


def test_gemini_never_sees_orf_errors(store: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Gemini CLI shows ``stdout.trim() || stderr.trim()`` of a hook to the user: an orf
    error goes to the hook's log there; Claude Code and Codex keep stderr out at exit 0."""
    def boom(*_: Any) -> None:
        raise RuntimeError("index unreadable")

    monkeypatch.setattr(hook, "respond", boom)
    assert call("gemini", GEMINI_SHELL, store) == (0, "")
    assert capsys.readouterr().err == ""
    log = (hook.cache_dir() / "hook" / "errors.log").read_text(encoding="utf-8")
    assert log.endswith(" orf hook: ignored internal error: RuntimeError: index unreadable\n")
    assert call("claude-code", FAILED_BASH, store) == (0, "")
    assert capsys.readouterr().err == (
        "orf hook: ignored internal error: RuntimeError: index unreadable\n")


# Codex PostToolUse input as codex-rs sends it: hooks/schema/generated/
# post-tool-use.command.input.schema.json (openai/codex bde5e18) for the fields, and
# core/src/tools/context.rs ExecCommandToolOutput::post_tool_use_response for the response:
# the command's truncated output as a plain string, with no exit code.
CODEX = {"session_id": "019a0000-0000-7000-8000-00000000c0de", "turn_id": "turn-3",
         "cwd": "/home/u/app", "hook_event_name": "PostToolUse", "model": "gpt-5-codex",
         "permission_mode": "default", "tool_name": "Bash", "tool_use_id": "call_7Hq2",
         "tool_input": {"command": "pytest -x tests/"}}
TRACEBACK = ("Traceback (most recent call last):\n  File \"/home/u/app/tests/test_fetch.py\", "
             f"line 1, in <module>\n    import requests\n{MODULE_ERROR}\n")


def rollout(tmp_path: Path, *records: dict[str, Any]) -> str:
    """A rollout file ending with ``records`` (``event_msg`` payloads), as Codex writes it."""
    path = tmp_path / "rollout-2026-05-02T10-00-00-019a.jsonl"
    lines = [{"timestamp": "2026-05-02T10:00:00.000Z", "type": "session_meta",
              "payload": {"id": CODEX["session_id"], "cwd": "/home/u/app"}}]
    lines += [{"timestamp": "2026-05-02T10:00:01.000Z", "type": "event_msg", "payload": r}
              for r in records]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return str(path)


def test_codex_failing_bash_read_from_the_rollout(store: Path, tmp_path: Path) -> None:
    failed = {**CODEX, "tool_response": TRACEBACK, "transcript_path": rollout(
        tmp_path, {"type": "exec_command_end", "call_id": "call_7Hq2", "exit_code": 1,
                   "stdout": "", "stderr": TRACEBACK, "duration": {"secs": 0, "nanos": 4}})}
    assert call("codex", failed, store) == (0, module_reply("PostToolUse", store))


def test_codex_passing_bash_is_silent_whatever_it_prints(store: Path, tmp_path: Path) -> None:
    grep = {**CODEX, "tool_use_id": "call_ok", "tool_input": {"command": "grep -r requests ."},
            "tool_response": f"./notes.md:{MODULE_ERROR}\n", "transcript_path": rollout(
                tmp_path, {"type": "exec_command_end", "call_id": "call_ok", "exit_code": 0})}
    assert call("codex", grep, store) == (0, "")
    assert call("codex", grep, store) == (0, "")  # a repeated success is no repeated failure


def test_codex_apply_patch_failure_counts_as_a_failed_call(store: Path, tmp_path: Path) -> None:
    """apply_patch's PostToolUse response is its output text too; the rollout's
    ``patch_apply_end`` says whether it applied."""
    patch = {**CODEX, "tool_name": "apply_patch", "tool_use_id": "call_p1",
             "tool_input": {"command": "*** Begin Patch\n*** Update File: src/fetch.py\n"},
             "tool_response": "apply_patch verification failed: Failed to find expected "
                              "lines in src/fetch.py:\ndef fetch(url):",
             "transcript_path": rollout(tmp_path, {"type": "patch_apply_end",
                                                   "call_id": "call_p1", "success": False})}
    assert call("codex", patch, store) == (0, "")  # no playbook's trap; first failure
    assert call("codex", patch, store) == (0, reply(
        "PostToolUse", store, "EXP-20260502-0002", "Re-read the file before retrying a failed edit",
        "Edit against what the file says now, not what you remember.",
        "1. Read the lines around the change.\n2. Copy old_string from them.",
        why="this call already failed once in this session; the closest playbook"))


def test_codex_without_its_rollout_matches_traps_only(store: Path, tmp_path: Path) -> None:
    """No transcript (``transcript_path`` null, or not written yet): the output may be a
    failure, so a playbook whose recorded error it holds answers; a repeat proves nothing."""
    unknown = {**CODEX, "tool_response": TRACEBACK, "transcript_path": None}
    assert call("codex", unknown, store) == (0, module_reply("PostToolUse", store))
    other = {**unknown, "tool_use_id": "call_x", "tool_input": {"command": "pytest tests/m.py"},
             "tool_response": "E       AssertionError: assert 1 == 2"}
    assert call("codex", other, store) == (0, "")
    assert call("codex", other, store) == (0, "")
    missing = {**other, "transcript_path": str(tmp_path / "gone.jsonl")}
    assert call("codex", missing, store) == (0, "")
    header = {**other, "tool_response": f"Exit code: 1\nWall time: 0.4 seconds\nOutput:\n"
                                        f"{MODULE_ERROR}"}
    assert call("codex", header, store) == (0, module_reply("PostToolUse", store))
    assert call("codex", {**header, "tool_response": "Exit code: 0\nOutput:\nok"}, store) == (
        0, "")


@pytest.mark.parametrize("stdin", [b"", b"{not json", b"[1, 2]", b'{"hook_event_name": 3}'])
def test_bad_input_is_silent_and_exits_0(store: Path, stdin: bytes) -> None:
    out = io.StringIO()
    assert hook.main(["claude-code", "--store", str(store)], stdin=io.BytesIO(stdin),
                     stdout=out) == 0
    assert out.getvalue() == ""


def test_missing_store_is_silent(tmp_path: Path) -> None:
    assert call("claude-code", FAILED_BASH, tmp_path / "nowhere") == (0, "")


def test_console_script_fast_path_answers_the_same(store: Path) -> None:
    done = run_script(["hook", "claude-code", "--store", str(store)], json.dumps(FAILED_BASH))
    assert (done.returncode, done.stdout, done.stderr) == (
        0, module_reply("PostToolUseFailure", store), "")
    done = run_script(["hook", "claude-code", "--store", str(store)], "garbage")
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr.startswith("orf hook: ignored internal error: JSONDecodeError")
    code, out, _ = run_cli("hook", "claude-code", "--store", store)
    assert (code, out) == (0, "")


def test_fast_path_imports_neither_the_cli_nor_the_sdks(store: Path) -> None:
    probe = (
        "import io, sys\n"
        f"sys.argv = ['orf', 'hook', 'claude-code', '--store', {str(store)!r}]\n"
        f"sys.stdin = io.TextIOWrapper(io.BytesIO({json.dumps(FAILED_BASH).encode()!r}))\n"
        "from pipeline.entry import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('pipeline.cli', 'pydantic', 'google.genai', 'mcp', 'click',\n"
        "                      'numpy') if m in sys.modules]\n"
        "print('HEAVY', heavy, file=sys.stderr)\n")
    # First run builds the cache (that may parse playbooks); the second is a hook's usual run.
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                              timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == module_reply("PostToolUseFailure", store)
    assert "HEAVY []" in done.stderr


def test_old_session_state_is_pruned(store: Path) -> None:
    import os

    other = {**FAILED_BASH, "session_id": "old-session"}
    call("claude-code", other, store)
    folder = hook.cache_dir() / "hook"
    (old,) = list(folder.iterdir())
    os.utime(old, (1, 1))
    call("claude-code", {**FAILED_BASH, "session_id": "new-session"}, store)
    assert len(list(folder.iterdir())) == 1 and not old.exists()
