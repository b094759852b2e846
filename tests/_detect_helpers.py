"""Builders for synthetic steps and trajectories used by the detector tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline import normalize
from pipeline.model import RawRef, SourceInfo, Step, Trajectory


def tool(tool_name: str, output: str = "", *, error: bool = False, tokens: int | None = None,
         ts: str | None = None, **args: Any) -> Step:
    """A tool step (index/source_id are filled by ``traj``)."""
    return Step(
        index=0, source_id="", kind="tool", tool=tool_name, args=dict(args),
        action_key=normalize.action_key(tool_name, args), output=output, output_len=len(output),
        exit_code=1 if error else 0, is_error=error,
        error_signature=normalize.error_signature(output) if error else None,
        tokens=tokens, timestamp=ts,
    )


def lines(lo: int, hi: int) -> str:
    """The numbered lines ``lo``..``hi`` of a file, as a viewer prints them."""
    return "\n".join(f"{n:6}\tline {n}" for n in range(lo, hi + 1))


def sh(command: str, output: str = "ok", *, error: bool = False, **kw: Any) -> Step:
    """A bash step."""
    return tool("bash", output, error=error, command=command, **kw)


def read(path: str, output: str = "", **kw: Any) -> Step:
    """A read tool step (``view_range=[a, b]``, ``offset``/``limit``... go in ``kw``)."""
    return tool("read", output or f"contents of {path} {kw}", path=path, **kw)


def edit(path: str, old: str, new: str, *, error: bool = False) -> Step:
    """A string-replacement edit."""
    out = "ERROR: no match" if error else f"edited {path}"
    return tool("edit", out, error=error, path=path, old_str=old, new_str=new)


def write(path: str, content: str) -> Step:
    """A whole-file write."""
    return tool("write", f"wrote {path}", path=path, content=content)


def msg(text: str) -> Step:
    """An agent message without a tool call."""
    return Step(index=0, source_id="", kind="message", text=text, output=text)


def user(text: str) -> Step:
    """A user turn."""
    return Step(index=0, source_id="", kind="user", output=text)


def compaction() -> Step:
    """A context compaction event."""
    return Step(index=0, source_id="", kind="compaction", output="summary")


def traj(*steps: Step, prefix: str = "s") -> Trajectory:
    """A trajectory with dense indices and ``<prefix><n>`` source ids."""
    out = []
    for i, s in enumerate(steps):
        s.index = i
        s.source_id = f"{prefix}{i}"
        s.raw_ref = RawRef("log.jsonl", i + 1)
        out.append(s)
    return Trajectory(id="t", source=SourceInfo(format="test", path="log.jsonl"), steps=out)


def kinds(findings: list[Any]) -> list[str]:
    """Family names of findings, in order."""
    return [f.kind for f in findings]


def wasted(findings: list[Any], kind: str | None = None) -> list[int]:
    """Indices (from source ids ``s<n>``) of wasted steps, optionally of one family."""
    return sorted(int(s[1:]) for f in findings if kind in (None, f.kind)
                  for s in f.wasted_source_ids)


# ---- real-shaped logs: the same calls written as an ATIF document or a Claude Code session ----

Call = tuple[str, dict[str, Any], str, bool]
"""(tool name as the agent logs it, arguments, observation, failed)."""


def atif_doc(calls: list[Call], session_id: str = "atif-loop-1") -> dict[str, Any]:
    """An ATIF-v1.5 trajectory: one agent step per call, its result paired by call id."""
    steps: list[dict[str, Any]] = [
        {"step_id": 1, "timestamp": "2026-02-01T10:00:00Z", "source": "user",
         "message": "Fix the failing script."},
    ]
    for k, (name, args, out, failed) in enumerate(calls):
        cid = f"call_{k}"
        steps.append({
            "step_id": k + 2, "timestamp": f"2026-02-01T10:{k // 60 + 1:02d}:{k % 60:02d}Z",
            "source": "agent", "model_name": "anthropic/claude-sonnet-4-5",
            "message": f"step {k}",
            "tool_calls": [{"tool_call_id": cid, "function_name": name, "arguments": args}],
            "observation": {"results": [{"source_call_id": cid, "content": out,
                                         "extra": {"exit_code": 1 if failed else 0}}]},
            "metrics": {"prompt_tokens": 1000 + k, "completion_tokens": 20},
        })
    return {"schema_version": "ATIF-v1.5", "session_id": session_id,
            "agent": {"name": "terminus-2", "version": "2.0.0",
                      "model_name": "anthropic/claude-sonnet-4-5"},
            "steps": steps}


USER = "<user>"
"""Tool name of a ``Call`` that is a person's turn (its observation is the text)."""


def claude_lines(calls: list[Call], cwd: str = "/home/dev/shop",
                 session_id: str = "7d1c0b7e-0000-4000-8000-00000000c0de") -> list[dict[str, Any]]:
    """A Claude Code session: assistant ``tool_use`` lines, user ``tool_result`` lines, and
    the person's own turns for calls named ``USER``."""
    base = {"isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": session_id,
            "version": "2.1.30", "gitBranch": "main"}
    lines: list[dict[str, Any]] = [{
        **base, "type": "user", "uuid": "u-0", "timestamp": "2026-03-04T10:00:00.000Z",
        "message": {"role": "user", "content": "Fix the failing script."}}]
    for k, (name, args, out, failed) in enumerate(calls):
        ts = f"2026-03-04T10:{k // 60 + 1:02d}:{k % 60:02d}.000Z"
        if name == USER:
            lines.append({**base, "type": "user", "uuid": f"u-{k + 1}", "parentUuid": f"u-{k}",
                          "timestamp": ts, "message": {"role": "user", "content": out}})
            continue
        tid = f"toolu_{k:04d}"
        lines.append({**base, "type": "assistant", "uuid": f"a-{k}", "parentUuid": f"u-{k}",
                      "timestamp": ts, "message": {
                          "model": "claude-sonnet-4-5", "id": f"msg_{k}", "type": "message",
                          "role": "assistant",
                          "content": [{"type": "tool_use", "id": tid, "name": name,
                                       "input": args}],
                          "usage": {"input_tokens": 5, "output_tokens": 10}}})
        content = f"Exit code 1\n{out}" if failed and name == "Bash" else out
        lines.append({**base, "type": "user", "uuid": f"u-{k + 1}", "parentUuid": f"a-{k}",
                      "timestamp": ts, "message": {"role": "user", "content": [
                          {"type": "tool_result", "tool_use_id": tid, "content": content,
                           "is_error": failed}]}})
    return lines


CodexCall = str | tuple[str, str] | tuple[str, str, dict[str, Any]]
"""A person's turn (a string), or ``(cmd, output)``, with a dict of more arguments third."""


def exec_output(k: int, code: int, out: str) -> str:
    """Codex 0.98's ``exec_command`` output: the exec header (chunk id, wall time, exit code)."""
    return (f"Chunk ID: {k:06x}\nWall time: 0.05 seconds\nProcess exited with code {code}\n"
            f"Original token count: 90\nOutput:\n{out}\n")


def codex_rollout(path: Any, calls: list[CodexCall], *, cwd: str, task: str,
                  session_id: str = "019c44c8-0000-7000-8000-00000000c0de") -> Trajectory:
    """A Codex CLI rollout (0.98 shape) of ``exec_command`` calls written to ``path``, read back."""
    rows: list[dict[str, Any]] = [
        {"timestamp": "2026-02-09T23:41:33.819Z", "type": "session_meta",
         "payload": {"id": session_id, "cwd": cwd, "originator": "codex_cli_rs",
                     "cli_version": "0.98.0", "source": "cli"}},
        {"timestamp": "2026-02-09T23:41:34.000Z", "type": "response_item",
         "payload": {"type": "message", "role": "user",
                     "content": [{"type": "input_text", "text": task}]}},
    ]
    for k, call in enumerate(calls):
        ts = f"2026-02-09T23:{42 + k // 60:02d}:{k % 60:02d}.000Z"
        if isinstance(call, str):
            rows.append({"timestamp": ts, "type": "response_item", "payload": {
                "type": "message", "role": "user",
                "content": [{"type": "input_text", "text": call}]}})
            continue
        cmd, out = call[0], call[1]
        more = call[2] if len(call) > 2 else {}
        rows.append({"timestamp": ts, "type": "response_item", "payload": {
            "type": "function_call", "name": "exec_command", "call_id": f"call_{k:04d}",
            "arguments": json.dumps({"cmd": cmd, "workdir": cwd, **more})}})
        rows.append({"timestamp": ts, "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": f"call_{k:04d}", "output": out}})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return parse_log(path)


def parse_log(path: Any) -> Trajectory:
    """The one session of a log file, read by the real adapters."""
    from pipeline.formats.base import ParseContext
    from pipeline.formats.discover import discover, parse_source

    found = [t for src in discover([path], issues=[]) for t in parse_source(src, ParseContext())]
    assert len(found) == 1, found
    return found[0]


def claude_session(folder: Any, calls: list[Call]) -> Trajectory:
    """A Claude Code session of ``calls`` written under ``folder`` and read by the adapter."""
    project = Path(folder) / ".claude" / "projects" / "-home-dev-shop"
    project.mkdir(parents=True)
    path = project / "7d1c0b7e-0000-4000-8000-00000000c0de.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in claude_lines(calls)),
                    encoding="utf-8")
    return parse_log(path)


def bash_call(command: str, out: str = "ok") -> Call:
    """A Bash call of Claude Code that succeeded."""
    return ("Bash", {"command": command, "description": "check"}, out, False)


def wasted_calls(t: Trajectory) -> list[int]:
    """Positions among the tool calls of the steps ``detect_all`` calls wasted."""
    from pipeline.detect import detect_all

    pos = {s.source_id: k for k, s in enumerate(s for s in t.steps if s.kind == "tool")}
    return sorted(pos[s] for f in detect_all(t) for s in f.wasted_source_ids)
