"""mini-swe-agent adapter: real samples (counted independently) and own fixture."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import FIXTURES

from pipeline.errors import ParseFailure
from pipeline.formats import get_adapter
from pipeline.formats.base import ParseContext
from pipeline.formats.discover import sniff

OURS = ("swe-agent", "mini-swe-agent", "openhands", "atif", "aider")
ADAPTER = get_adapter("mini-swe-agent")
FIXTURE = FIXTURES / "mini-swe-agent" / "calc__calc-1.traj.json"


def _parse(path: Path) -> tuple[list, ParseContext]:
    ctx = ParseContext()
    return list(ADAPTER.parse(path, ctx)), ctx


def _raw_counts(raw: dict) -> tuple[int, int]:
    # A tool call is an assistant turn with exactly one ```bash block; it failed when the
    # next message reports a non-zero <returncode>. In toolcall mode (2.x) each entry of
    # tool_calls is a call, failed when its role=tool result reports a non-zero returncode.
    calls = failed = 0
    msgs = raw["messages"]
    # (search, not match: a timed-out command's result opens with an <exception> block)
    codes = {m["tool_call_id"]: re.search(r"<returncode>(-?\d+)</returncode>", m["content"] or "")
             for m in msgs if m["role"] == "tool"}
    for i, m in enumerate(msgs):
        if m["role"] == "assistant" and m.get("tool_calls"):
            calls += len(m["tool_calls"])
            rcs = [codes.get(c["id"]) for c in m["tool_calls"]]
            failed += sum(bool(rc and rc.group(1) != "0") for rc in rcs)
        elif m["role"] == "assistant" and len(re.findall(r"```bash\s*\n",
                                                         m["content"] or "")) == 1:
            calls += 1
            nxt = msgs[i + 1]["content"] if i + 1 < len(msgs) else ""
            rc = re.match(r"<returncode>(-?\d+)</returncode>", nxt)
            failed += bool(rc and rc.group(1) != "0")
    return calls, failed


def test_real_samples(shared_trajectories: Path) -> None:
    files = sorted((shared_trajectories / "mini-swe-agent").glob("*.traj.json"))
    assert files
    for f in files:
        head = f.read_bytes()[:65536]
        scores = {n: get_adapter(n).sniff(f, head) for n in OURS}
        assert max(scores, key=lambda n: scores[n]) == "mini-swe-agent"
        raw = json.loads(f.read_text())
        (traj,), ctx = _parse(f)
        assert not ctx.issues
        assert (traj.tool_calls, traj.failed_calls) == _raw_counts(raw), f.name
        assert traj.agent_version == raw["info"]["mini_version"]
        usage = [m["extra"]["response"]["usage"] for m in raw["messages"]
                 if m["role"] == "assistant"]
        assert traj.tokens_in == sum(u["prompt_tokens"] for u in usage)
        last = raw["messages"][-1]
        if last["role"] == "exit":  # 2.x: the closing message is the submit call's output
            finish = [s for s in traj.steps if s.kind == "tool"][-1]
            assert finish.tool == "finish", f.name
            assert finish.output[:200] == last["content"][:200], f.name
            assert traj.outcome.exit_status == last["extra"]["exit_status"], f.name


def test_real_pylint_counts(shared_trajectories: Path) -> None:
    name = "pylint-dev__pylint-8898.traj.json"
    (traj,), _ = _parse(shared_trajectories / "mini-swe-agent" / name)
    assert (traj.tool_calls, traj.failed_calls) == (53, 17)
    assert traj.model == "google/gemini-3-pro-preview"


def test_fixture() -> None:
    (traj,), ctx = _parse(FIXTURE)
    assert not ctx.issues
    assert traj.id == "calc__calc-1"
    assert [s.kind for s in traj.steps] == [
        "system", "user", "tool", "tool", "tool", "message", "error", "tool", "tool"]
    assert (traj.tool_calls, traj.failed_calls) == (5, 3)
    assert [s.exit_code for s in traj.steps if s.kind == "tool"] == [1, 1, 1, 0, None]
    assert traj.steps[2].action_key == traj.steps[3].action_key != traj.steps[4].action_key
    assert traj.steps[2].output.startswith("ImportError while importing")
    assert traj.steps[2].error_signature == traj.steps[4].error_signature
    assert traj.steps[-1].tool == "finish" and traj.steps[-1].output.startswith("diff --git")
    assert traj.steps[5].extra == {"actions_found": 2}
    assert traj.steps[2].tokens == 1040
    assert (traj.tokens_in, traj.tokens_out) == (7500, 230)
    assert traj.model == "gemini/gemini-2.5-pro" and traj.agent_version == "1.15.0"
    assert traj.task is not None and traj.task.startswith("calc: tests/test_calc.py")
    assert traj.outcome.exit_status == "Submitted" and traj.outcome.task_complete is True
    assert traj.started_at == "2025-10-09T08:53:20+00:00"


def test_malformed_messages(tmp_path: Path) -> None:
    data = json.loads(FIXTURE.read_text())
    data["messages"][3] = 42
    data["messages"].insert(4, {"role": "robot", "content": "?"})
    data["info"] = "broken"
    f = tmp_path / "m.traj.json"
    f.write_text(json.dumps(data))
    (traj,), ctx = _parse(f)
    msgs = [str(i) for i in ctx.issues]
    assert msgs == [f"{f}: messages[3]: expected an object, got int; skipped",
                    f"{f}: messages[4]: unknown role 'robot'; skipped"]
    assert traj.outcome.exit_status is None
    assert traj.tool_calls == 5


def test_no_messages_is_parse_failure(tmp_path: Path) -> None:
    f = tmp_path / "x.traj.json"
    f.write_text('{"info": {"mini_version": "1.0"}}')
    with pytest.raises(ParseFailure, match="no 'messages' list"):
        _parse(f)


def test_tool_call_messages(tmp_path: Path) -> None:
    msgs = [
        {"role": "user", "content": "do it"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "bash", "arguments": json.dumps({"command": "false"})}}]},
        {"role": "tool", "tool_call_id": "c1",
         "content": "<returncode>1</returncode>\n<output>\n</output>"},
    ]
    f = tmp_path / "v2.traj.json"
    f.write_text(json.dumps({"info": {"mini_version": "2.0"}, "messages": msgs}))
    (traj,), _ = _parse(f)
    step = traj.steps[1]
    assert (step.tool, step.args) == ("bash", {"command": "false"})
    assert (step.exit_code, step.is_error) == (1, True)


def test_format_tag_alone_is_positive_evidence(tmp_path: Path) -> None:
    # No model_stats/mini_version in info, the tag after 70 KB of messages, compact JSON.
    raw = json.loads(FIXTURE.read_text())
    raw["info"] = {"exit_status": "Submitted", "submission": ""}
    raw["messages"][1]["content"] += "\n" + "context " * 10_000
    for m in raw["messages"]:
        m["content"] = m["content"].replace("<returncode>", "<rc>")
    raw["trajectory_format"] = "mini-swe-agent-1"
    path = tmp_path / "run.traj.json"
    path.write_text(json.dumps(raw, separators=(",", ":")))
    assert path.read_bytes().find(b'"trajectory_format"') > 65536
    assert sniff(path) == "mini-swe-agent"
    del raw["trajectory_format"]
    path.write_text(json.dumps(raw, separators=(",", ":")))
    assert sniff(path) is None
