"""OpenHands adapter: every real shape (counted independently) and own fixtures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _formats_helpers import sample_notes
from conftest import FIXTURES

from pipeline.errors import ParseFailure
from pipeline.formats import get_adapter
from pipeline.formats.base import ParseContext

OURS = ("swe-agent", "mini-swe-agent", "openhands", "atif", "aider")
ADAPTER = get_adapter("openhands")
OH = FIXTURES / "openhands"
V1_DIR = OH / "conversations" / "3b0c9f7e2d5a4c1b8e6f0a9d7c5b3e1f"
V0_DIR = OH / "sessions" / "5f1c2d3e"
NOT_TOOLS = {"message", "system", "recall", "change_agent_state", "condensation"}


def _parse(path: Path) -> tuple[list, ParseContext]:
    ctx = ParseContext()
    return list(ADAPTER.parse(path, ctx)), ctx


def _best(path: Path) -> str:
    head = b"" if path.is_dir() else path.read_bytes()[:65536]
    scores = {n: get_adapter(n).sniff(path, head) for n in OURS}
    return max(scores, key=lambda n: scores[n])


def _raw_counts(events: list) -> tuple[int, int]:
    """Tool calls and failures by walking V0/V1 events directly."""
    calls = failed = 0
    for e in events:
        if isinstance(e.get("action"), str):
            calls += e["action"] not in NOT_TOOLS
        elif isinstance(e.get("observation"), str):
            obs, content = e["observation"], e.get("content") or ""
            meta = (e.get("extras") or {}).get("metadata") or {}
            code = meta.get("exit_code", e.get("exit_code"))
            if obs == "error" and e.get("cause") is None:
                calls += 1  # rejected call: no action event behind it
            failed += (obs == "error" or (code not in (None, 0, -1))
                       or (obs in ("edit", "read") and content.startswith("ERROR:")))
        elif e.get("kind") == "ActionEvent":
            calls += 1
        elif e.get("kind") == "ObservationEvent":
            o = e["observation"]
            code = o.get("exit_code", (o.get("metadata") or {}).get("exit_code"))
            failed += bool(o.get("is_error")) or code not in (None, 0, -1)
        elif e.get("kind") == "AgentErrorEvent":
            calls += 1
            failed += 1
    return calls, failed


def test_real_v0_lists(shared_trajectories: Path) -> None:
    folder = shared_trajectories / "openhands"
    files = sorted(folder.glob("runtime-trajs__*.json"))
    # Every runtime export SOURCES.md lists is here (no pinned count: samples get added).
    assert files and {p for p in sample_notes(folder) if p.name.startswith("runtime-trajs__")} \
        == set(files)
    for f in files:
        assert _best(f) == "openhands", f
        (traj,), ctx = _parse(f)
        assert not ctx.issues
        assert (traj.tool_calls, traj.failed_calls) == _raw_counts(json.loads(f.read_text()))


def test_real_eval_outputs(shared_trajectories: Path) -> None:
    for name in ("multi_swe_bench__examples__output.jsonl", "resolver__mock_output__output.jsonl"):
        f = shared_trajectories / "openhands" / name
        assert _best(f) == "openhands"
        records = [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
        trajs, ctx = _parse(f)
        assert not ctx.issues
        assert len(trajs) == len(records)
        for rec, traj in zip(records, trajs, strict=True):
            assert (traj.tool_calls, traj.failed_calls) == _raw_counts(rec["history"]), traj.id
    trajs, _ = _parse(shared_trajectories / "openhands" / "multi_swe_bench__examples__output.jsonl")
    assert [(t.id, t.tool_calls, t.failed_calls) for t in trajs] == [
        ("ponylang__ponyc-4595", 23, 6), ("ponylang__ponyc-4593", 34, 14),
        ("ponylang__ponyc-4588", 50, 25)]
    assert trajs[0].tokens_in == 565158 and trajs[2].outcome.exit_status.startswith("error: ")
    assert len({t.source.content_hash for t in trajs}) == 3


def test_real_v1_conversation(shared_trajectories: Path) -> None:
    d = shared_trajectories / "openhands" / "v1-sdk__conv_cd945624"
    assert ADAPTER.claims_dir(d) and _best(d) == "openhands"
    events = [json.loads(p.read_text()) for p in sorted((d / "events").glob("*.json"))]
    (traj,), ctx = _parse(d)
    assert not ctx.issues
    assert (traj.tool_calls, traj.failed_calls) == _raw_counts(events) == (2, 0)
    assert traj.id == "cd945624-03b9-487e-bdd4-018e3f531dfd"
    assert traj.source.path == str(d) and traj.model == "openai/gpt-4o-mini"
    assert (traj.tokens_in, traj.tokens_out) == (11583, 94)


def test_fixture_v0_list() -> None:
    (traj,), ctx = _parse(OH / "v0-trajectory.json")
    assert not ctx.issues
    assert [s.kind for s in traj.steps] == [
        "user", "tool", "tool", "tool", "tool", "tool", "tool", "compaction", "tool"]
    assert (traj.tool_calls, traj.failed_calls) == (7, 5)
    t = traj.steps
    assert [s.exit_code for s in t[1:4]] == [1, 1, 1] and t[6].exit_code == 0
    assert t[1].args == {"command": "pytest tests/test_calc.py"}
    assert t[1].action_key == t[2].action_key != t[3].action_key
    assert t[1].extra["flags"]["blocking"] is False
    assert t[4].is_error and t[4].tool == "edit"  # "ERROR:" editor result
    assert t[5].extra["unpaired"] and t[5].is_error  # rejected call, no action
    assert [s.tokens for s in t[1:4]] == [3050, 3240, 3350]  # growth of accumulated usage
    assert traj.outcome.task_complete is True
    assert traj.outcome.final_message == "The test passes with src on PYTHONPATH."
    assert traj.task == "Fix the failing test in tests/test_calc.py"
    assert traj.model == "claude-sonnet-4-20250514"


def test_fixture_v0_session_folder() -> None:
    assert ADAPTER.claims_dir(V0_DIR) and ADAPTER.claims_dir(V0_DIR / "events")
    assert not ADAPTER.claims_dir(OH)
    (traj,), _ = _parse(V0_DIR)
    assert traj.id == "5f1c2d3e" and traj.source.path == str(V0_DIR)
    # 10.json sorts after 9.json: the finish comes last.
    assert [s.source_id for s in traj.steps] == ["0", "1", "3", "5", "7", "9", "10"]
    assert (traj.tool_calls, traj.failed_calls) == (5, 3)
    assert [s.exit_code for s in traj.steps if s.kind == "tool"] == [127, 127, 1, 0, None]
    assert traj.steps[1].error_signature == "bash: pyest: command not found"
    assert traj.source.size == sum(p.stat().st_size for p in (V0_DIR / "events").glob("*.json"))


def test_fixture_eval_output() -> None:
    trajs, ctx = _parse(OH / "eval" / "output.jsonl")
    assert not ctx.issues
    one, two = trajs
    assert (one.id, one.tool_calls, one.failed_calls) == ("calc__calc-1", 3, 1)
    assert one.outcome.resolved is True and (one.tokens_in, one.tokens_out) == (2100, 40)
    assert one.extra["cost_usd"] == 0.03 and one.steps[0].raw_ref.line == 1
    assert (two.id, two.tool_calls, two.failed_calls) == ("calc__calc-2", 3, 3)
    assert two.outcome.resolved is False and two.outcome.task_complete is None
    assert two.outcome.exit_status.startswith("error: RuntimeError: Agent reached maximum")
    assert two.steps[1].raw_ref.line == 2


def test_fixture_v1_conversation() -> None:
    assert ADAPTER.claims_dir(V1_DIR) and ADAPTER.sniff(V1_DIR, b"") == 85
    (traj,), ctx = _parse(V1_DIR)
    assert not ctx.issues
    assert [s.kind for s in traj.steps] == [
        "system", "user", "tool", "tool", "tool", "tool", "compaction", "tool", "tool"]
    assert (traj.tool_calls, traj.failed_calls) == (6, 4)
    t = traj.steps
    assert [s.exit_code for s in t[2:5]] == [1, 1, 1] and t[7].exit_code == 0
    assert t[5].extra["result_kind"] == "AgentErrorEvent" and t[5].is_error
    assert t[2].text == "Run the tests." and t[2].args == {"command": "npm test", "is_input": False}
    assert traj.outcome.task_complete is True and traj.outcome.exit_status == "finished"
    assert (traj.tokens_in, traj.tokens_out) == (10000, 500)  # agent + condenser usage
    assert traj.id == "3b0c9f7e-2d5a-4c1b-8e6f-0a9d7c5b3e1f"


def test_malformed_events(tmp_path: Path) -> None:
    d = tmp_path / "sess"
    shutil.copytree(V0_DIR, d)
    (d / "events" / "3.json").write_text('{"id": 3, "action": ')
    (d / "events" / "5.json").write_text("[1, 2, 3]")
    (d / "events" / "7.json").write_text('{"id": 7, "foo": 1}')
    (traj,), ctx = _parse(d)
    msgs = [str(i) for i in ctx.issues]
    assert len(msgs) == 3
    assert msgs[0].startswith(f"{d / 'events' / '3.json'}") and "event skipped" in msgs[0]
    assert "expected an event object, got list" in msgs[1]
    assert "neither 'action', 'observation' nor 'kind'" in msgs[2]
    assert traj.tool_calls == 2  # the run at 1 and the finish


def test_malformed_eval_lines(tmp_path: Path) -> None:
    lines = (OH / "eval" / "output.jsonl").read_text().splitlines()
    f = tmp_path / "output.jsonl"
    f.write_text("\n".join([lines[0], "{not json", '{"instance_id": "x", "history": 3}', lines[1]]))
    trajs, ctx = _parse(f)
    assert [t.id for t in trajs] == ["calc__calc-1", "calc__calc-2"]
    assert [i.line for i in ctx.issues] == [2, 3]
    assert "no 'history' list" in str(ctx.issues[1])


def test_unusable_inputs(tmp_path: Path) -> None:
    f = tmp_path / "t.json"
    f.write_text("[{")
    with pytest.raises(ParseFailure, match=str(f)):
        _parse(f)
    empty = tmp_path / "conv"
    (empty / "events").mkdir(parents=True)
    (empty / "base_state.json").write_text("{}")
    with pytest.raises(ParseFailure, match="no OpenHands event files"):
        _parse(empty)
    assert ADAPTER.sniff(f, b'{"id": 3, "action": "run"}') == 0
