"""Real-shaped Claude Code sessions for the episode, digest, verifier and submit tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _formats_helpers import parse_one

from pipeline.lessons.episodes import SessionEpisodes, build_episodes
from pipeline.lessons.verify import Evidence, Proposal
from pipeline.model import Draft

Call = tuple[str, dict[str, Any], str, bool]
"""(tool name, its input, the tool's output, is_error); ("user", {}, text, False) a turn,
("compaction", {}, "", False) the context compacted (Claude Code's ``compact_boundary``)."""


def bash(command: str, output: str, error: bool = False) -> Call:
    """A Bash call (a failure prints Claude Code's ``Exit code N`` header)."""
    return ("Bash", {"command": command}, f"Exit code 1\n{output}" if error else output, error)


def user(text: str) -> Call:
    return ("user", {}, text, False)


def claude_log(path: Path, calls: list[Call], sid: str = "5e55ion0-0000-4000-8000-000000000001",
               cwd: str = "/home/dev/shop", task: str = "Make the tests pass") -> Path:
    """Write a Claude Code JSONL session: the task, then each call and its result."""
    lines: list[dict[str, Any]] = []

    def rec(**kw: Any) -> None:
        n = len(lines) + 1
        lines.append({"isSidechain": False, "userType": "external", "cwd": cwd,
                      "sessionId": sid, "version": "2.0.14", "uuid": f"{sid[:8]}-u{n:03d}",
                      "timestamp": f"2026-05-09T10:{n // 60:02d}:{n % 60:02d}.000Z", **kw})

    rec(type="user", message={"role": "user", "content": task})
    for i, (tool, args, out, err) in enumerate(calls):
        if tool == "user":
            rec(type="user", message={"role": "user", "content": out})
            continue
        if tool == "compaction":
            rec(type="system", subtype="compact_boundary", content="Conversation compacted")
            continue
        tid = f"toolu_{i:04d}abcdefgh"
        rec(type="assistant", message={
            "id": f"msg_{i:04d}", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": tid, "name": tool, "input": args}],
            "usage": {"input_tokens": 1000, "output_tokens": 40}})
        rec(type="user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tid, "content": out, "is_error": err}]})
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


def session_of(path: Path) -> SessionEpisodes:
    """The parsed session and its episodes."""
    return build_episodes(parse_one(path))


def proposal(trap_steps: tuple[int, ...], fix: tuple[int, ...], error: str, path: str = "",
             **changes: Any) -> Proposal:
    """A draft citing ``trap``/``fix`` steps and quoting ``error``; ``path`` its validated path."""
    fields: dict[str, Any] = dict(
        title="Install the missing module before rerunning the tests",
        description="When pytest fails with ModuleNotFoundError.", domain="python-testing",
        keywords=["pytest", "import", "install"], complexity="low",
        objective="Run the test suite.", trap="pytest failed on an import.",
        insight="The module was not installed.", validated_path=path,
        checklist=["pytest passes"])
    fields.update(changes)
    return Proposal(Draft(**fields), Evidence(trap_steps, fix, error))
