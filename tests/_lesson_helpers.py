"""Real-shaped session logs for the lesson tests: Claude Code JSONL and SWE-agent .traj.

Each log is what the agent's own harness writes (record layout, tool names, error wrappers,
boilerplate), built from a short list of calls so one test reads as the loop it shows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.config import Settings
from pipeline.formats.discover import SessionSource
from pipeline.llm.heuristic import HeuristicBackend
from pipeline.model import Draft
from pipeline.stages.heuristic_draft import heuristic_drafts
from pipeline.stages.scan import ScanOptions, ScanResult, scan
from pipeline.stages.view import StoreContext

Call = tuple[str, dict[str, Any], str, bool]
"""(Claude tool name, tool input, tool result text, is_error)."""

CWD = "/Users/dana/src/shop"
"""The logged working directory: the author's home, never to appear in a playbook."""


def bash(command: str, output: str, error: bool = False, code: int = 1) -> Call:
    """A Bash call as Claude Code logs it (a failure starts with ``Exit code N``)."""
    return (
        "Bash",
        {"command": command, "description": "run it"},
        f"Exit code {code}\n{output}" if error else output,
        error,
    )


def say(text: str) -> Call:
    """An assistant text message between tool calls (the agent answering the user)."""
    return ("", {}, text, False)


def ask(text: str) -> Call:
    """A person's new request in the middle of the session (a user text turn)."""
    return ("@user", {}, text, False)


def tool(name: str, args: dict[str, Any], output: str, error: bool = False) -> Call:
    """Any other tool call; an error is wrapped in ``<tool_use_error>`` like the harness."""
    return (name, args, f"<tool_use_error>{output}</tool_use_error>" if error else output, error)


def claude_log(path: Path, sid: str, calls: list[Call], task: str = "Fix the build",
               last_words: str = "") -> Path:
    """Write a Claude Code session (one assistant tool_use and one tool_result per call).

    ``last_words``: a final assistant text message (the agent's own summary), when given.
    """
    lines: list[dict[str, Any]] = []

    def rec(**kw: Any) -> None:
        n = len(lines) + 1
        lines.append(
            {
                "isSidechain": False,
                "userType": "external",
                "cwd": CWD,
                "sessionId": sid,
                "version": "2.0.14",
                "gitBranch": "main",
                "uuid": f"{sid[:8]}-u{n:03d}",
                "timestamp": f"2026-05-09T10:{n // 60:02d}:{n % 60:02d}.000Z",
                **kw,
            }
        )

    rec(type="user", message={"role": "user", "content": task})
    for i, (name, args, out, err) in enumerate(calls):
        tid = f"toolu_01{sid[:6]}{i:04d}"
        if name == "@user":  # ``ask``: the person's own turn
            rec(type="user", message={"role": "user", "content": out})
            continue
        if not name:  # ``say``: a text message, no tool call
            rec(type="assistant", message={"id": f"msg_{sid[:6]}_{i:02d}", "role": "assistant",
                                           "model": "claude-sonnet-4-5",
                                           "content": [{"type": "text", "text": out}]})
            continue
        rec(
            type="assistant",
            message={
                "id": f"msg_{sid[:6]}_{i:02d}",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "tool_use", "id": tid, "name": name, "input": args}],
                "usage": {"input_tokens": 1200, "output_tokens": 60},
            },
        )
        rec(
            type="user",
            message={
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": tid, "content": out, "is_error": err}
                ],
            },
        )
    if last_words:
        rec(type="assistant", message={"id": f"msg_{sid[:6]}_end", "role": "assistant",
                                       "model": "claude-sonnet-4-5",
                                       "content": [{"type": "text", "text": last_words}]})
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


def swe_agent_log(path: Path, steps: list[tuple[str, str]]) -> Path:
    """Write a SWE-agent .traj: (action, observation) per step, the repo at /pkg__pkg."""
    data = {
        "trajectory": [
            {
                "action": a,
                "observation": o,
                "response": "",
                "thought": "",
                "execution_time": 0.5,
                "state": "{'open_file': '/pkg__pkg/pkg/core.py', 'working_dir': '/pkg__pkg'}",
                "messages": [],
            }
            for a, o in steps
        ],
        "history": [],
        "info": {
            "swe_agent_version": "1.0.1",
            "exit_status": "submitted",
            "submission": "diff --git a/pkg/core.py b/pkg/core.py\n",
            "model_stats": {
                "instance_cost": 0.1,
                "tokens_sent": 9000,
                "tokens_received": 500,
                "api_calls": len(steps),
            },
        },
        "environment": "pkg__pkg-1",
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def scan_log(path: Path, fmt: str = "claude-code") -> ScanResult:
    """Parse and detect one log file with the default detector settings, as ``orf mine`` does."""
    return scan(SessionSource(path, fmt, False),
                ScanOptions(detect=Settings().detect, min_wasted_steps=1))


def mined_drafts(path: Path, fmt: str = "claude-code") -> tuple[list[Draft], list[str]]:
    """Parse, detect and draft one log offline, as ``orf mine`` does: (drafts, notes)."""
    settings = Settings()
    res = scan_log(path, fmt)
    assert not res.fatal, res.issues
    drafts: list[Draft] = []
    notes: list[str] = []
    for sess in res.sessions:
        if sess.trajectory is None:
            continue
        out = heuristic_drafts(
            sess.trajectory, sess.findings, None, HeuristicBackend(settings), StoreContext(),
            settings,
        )
        drafts.extend(out.drafts)
        notes.extend(out.failures)
    return drafts, notes
