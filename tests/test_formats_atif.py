"""ATIF adapter: the real sample (counted independently) and own fixture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES

from pipeline.errors import ParseFailure
from pipeline.formats import get_adapter
from pipeline.formats.base import ParseContext

OURS = ("swe-agent", "mini-swe-agent", "openhands", "atif", "aider")
ADAPTER = get_adapter("atif")
FIXTURE = FIXTURES / "atif" / "calc.atif.json"


def _parse(path: Path) -> tuple[list, ParseContext]:
    ctx = ParseContext()
    return list(ADAPTER.parse(path, ctx)), ctx


def test_real_sample(shared_trajectories: Path) -> None:
    files = sorted((shared_trajectories / "interchange").glob("*.json"))
    assert files
    for f in files:
        head = f.read_bytes()[:65536]
        scores = {n: get_adapter(n).sniff(f, head) for n in OURS}
        assert max(scores, key=lambda n: scores[n]) == "atif"
        raw = json.loads(f.read_text())
        calls = sum(len(s.get("tool_calls") or []) for s in raw["steps"])
        results = [r for s in raw["steps"] for r in (s.get("observation") or {}).get("results", [])]
        failed = sum((r.get("extra") or {}).get("exit_code") not in (None, 0) for r in results)
        (traj,), ctx = _parse(f)
        assert not ctx.issues
        assert (traj.tool_calls, traj.failed_calls) == (calls, failed)
        assert traj.id == raw["session_id"] and traj.agent == raw["agent"]["name"]
        assert traj.tokens_in is None  # the sample withholds usage (zeros)


def test_fixture() -> None:
    (traj,), ctx = _parse(FIXTURE)
    assert not ctx.issues
    assert traj.id == "atif-calc-0001"
    assert [(s.source_id, s.kind) for s in traj.steps] == [
        ("1", "system"), ("2", "user"), ("3", "tool"), ("4", "tool"), ("5", "tool"),
        ("5.1", "tool"), ("6", "tool"), ("7", "message")]
    assert (traj.tool_calls, traj.failed_calls) == (5, 3)
    # Results are paired by source_call_id, not by position (step 5 lists them reversed).
    assert traj.steps[4].exit_code == 1 and "ModuleNotFoundError" in traj.steps[4].output
    assert traj.steps[5].tool == "read" and traj.steps[5].output.startswith("[metadata]")
    assert traj.steps[6].exit_code == 0  # from the step-level extra
    assert traj.steps[2].action_key == traj.steps[3].action_key
    assert traj.steps[2].text == "Start by reproducing.\nRunning the tests."
    assert traj.steps[2].tokens == 1240
    assert (traj.tokens_in, traj.tokens_out) == (7000, 190)
    assert traj.task == "Make the calc tests pass."
    assert traj.model == "anthropic/claude-sonnet-4-5" and traj.agent_version == "2.0.0"
    assert traj.outcome.final_message == "The tests pass with src on PYTHONPATH."
    assert traj.started_at == "2026-02-01T10:00:00Z"


def test_subagents_and_bad_steps(tmp_path: Path) -> None:
    data = json.loads(FIXTURE.read_text())
    data["steps"].insert(2, "junk")
    data["steps"][3]["tool_calls"].append(7)
    data["subagent_trajectories"] = [
        {"session_id": "sub-1", "agent": {"name": "helper", "version": "1"},
         "steps": [{"step_id": 1, "source": "agent", "tool_calls": [
             {"tool_call_id": "x", "function_name": "grep", "arguments": {"pattern": "calc"}}],
             "observation": {"results": [{"source_call_id": "x", "content": "",
                                          "extra": {"is_error": True}}]}}]},
        {"session_id": "sub-2"},
    ]
    f = tmp_path / "t.json"
    f.write_text(json.dumps(data))
    (traj,), ctx = _parse(f)
    msgs = [str(i) for i in ctx.issues]
    assert msgs == [f"{f}: steps[2]: expected an object, got str; skipped",
                    f"{f}: steps[3].tool_calls[1]: expected an object; skipped",
                    f"{f}: subagent_trajectories[1]: no 'steps' list; skipped"]
    assert traj.tool_calls == 5
    (sub,) = traj.subagents
    assert sub.parent_session_id == "atif-calc-0001" and sub.failed_calls == 1
    assert sub.steps[0].tool == "grep"


def test_not_atif_is_parse_failure(tmp_path: Path) -> None:
    f = tmp_path / "x.json"
    f.write_text('{"schema_version": "ATIF-v1.4", "steps": {}}')
    with pytest.raises(ParseFailure, match="no 'steps' list"):
        _parse(f)
    assert ADAPTER.sniff(f, f.read_bytes()) == 98
    assert ADAPTER.sniff(f, b'{"messages": []}') == 0
