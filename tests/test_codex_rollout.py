"""Whether a Codex call failed, read from its rollout as the PostToolUse hook sees it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.agents.codex_rollout import TAIL_BYTES, call_failed


def write(path: Path, *payloads: dict[str, Any], tail: bytes = b"") -> str:
    lines = [json.dumps({"timestamp": "2026-05-02T10:00:00Z", "type": kind, "payload": p})
             for kind, p in (("response_item" if p["type"].endswith("_output") else "event_msg",
                              p) for p in payloads)]
    path.write_bytes(("\n".join(lines) + "\n").encode() + tail)
    return str(path)


@pytest.mark.parametrize(("payload", "failed"), [
    ({"type": "exec_command_end", "call_id": "c1", "exit_code": 2}, True),
    ({"type": "exec_command_end", "call_id": "c1", "exit_code": 0}, False),
    ({"type": "patch_apply_end", "call_id": "c1", "success": False}, True),
    ({"type": "patch_apply_end", "call_id": "c1", "success": True}, False),
    # older rollouts: the exit code in the output's JSON metadata, or an exit line
    ({"type": "function_call_output", "call_id": "c1",
      "output": json.dumps({"output": "boom", "metadata": {"exit_code": 1}})}, True),
    ({"type": "function_call_output", "call_id": "c1",
      "output": "Process exited with code 0\nOutput:\nok"}, False),
    ({"type": "custom_tool_call_output", "call_id": "c1",
      "output": "Exit code: 1\nWall time: 0.2 seconds\nOutput:\nerror"}, True),
    ({"type": "function_call_output", "call_id": "c1", "output": "no code here"}, None),
    ({"type": "exec_command_end", "call_id": "other", "exit_code": 1}, None),
])
def test_each_end_record(tmp_path: Path, payload: dict[str, Any], failed: bool | None) -> None:
    assert call_failed(write(tmp_path / "r.jsonl", payload), "c1") is failed


def test_the_latest_record_of_the_call_decides_and_torn_lines_are_skipped(
        tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl",
                 {"type": "function_call_output", "call_id": "c1", "output": "Exit code: 0"},
                 {"type": "exec_command_end", "call_id": "c1", "exit_code": 1},
                 tail=b'{"type":"event_msg","payload":{"type":"exec_command_end","call_id":"c1"')
    assert call_failed(path, "c1") is True


def test_only_the_tail_is_read(tmp_path: Path) -> None:
    filler = {"type": "agent_message", "message": "x" * 1000}
    path = tmp_path / "r.jsonl"
    write(path, {"type": "exec_command_end", "call_id": "early", "exit_code": 1},
          *[filler] * (TAIL_BYTES // 1000 + 10))
    assert call_failed(str(path), "early") is None  # beyond the tail: unknown, not success


@pytest.mark.parametrize(("where", "call"), [(None, "c1"), ("", "c1"), ("gone.jsonl", "c1"),
                                             ("r.jsonl", None), ("r.jsonl", "")])
def test_missing_inputs_are_unknown(tmp_path: Path, where: str | None, call: str | None) -> None:
    write(tmp_path / "r.jsonl", {"type": "exec_command_end", "call_id": "c1", "exit_code": 1})
    path = str(tmp_path / where) if where else where
    assert call_failed(path, call) is None


def test_real_rollouts_at_the_moment_each_call_ended(shared_trajectories: Path,
                                                     tmp_path: Path) -> None:
    """Each real rollout cut right after a call's end record (what the hook can read then):
    the reader agrees with the record for every Bash call and patch, until 20 failed."""
    seen = {True: 0, False: 0}
    files = sorted((shared_trajectories / "codex-cli").glob("*.jsonl"))
    for source in files:
        data = source.read_bytes()
        offset = 0
        for line in data.splitlines(keepends=True):
            offset += len(line)
            if b"_end" not in line:
                continue
            try:
                payload = json.loads(line).get("payload") or {}
            except ValueError:
                continue
            if payload.get("type") == "exec_command_end" and isinstance(
                    payload.get("exit_code"), int):
                want = payload["exit_code"] != 0
            elif payload.get("type") == "patch_apply_end":
                want = not payload.get("success")
            else:
                continue
            cut = tmp_path / "rollout.jsonl"
            cut.write_bytes(data[:offset])
            assert call_failed(str(cut), payload["call_id"]) is want, (source.name, offset)
            seen[want] += 1
        if seen[True] >= 20:
            break
    assert seen[True] >= 20 and seen[False] >= 20
