from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _formats_helpers import (
    is_real_session,
    json_records,
    parse_all,
    parse_one,
    sample_notes,
    session_files,
)
from conftest import FIXTURES

from pipeline.formats.discover import sniff

SESSION = FIXTURES / "claude-code" / "-home-dev-shop" / "5f0c3a1e-2b7d-4c1e-9a44-0d6f1b2c3e4f.jsonl"


def count_calls(path: Path) -> tuple[int, int]:
    """Main-thread tool_use blocks, and tool_results that are errors or exit non-zero."""
    calls, failed = set(), set()
    for rec in json_records(path):
        if rec.get("isSidechain"):
            continue
        content = (rec.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use":
                calls.add(block["id"])
            elif block.get("type") == "tool_result":
                text = block.get("content")
                if isinstance(text, list):
                    text = "\n".join(b.get("text", "") for b in text if isinstance(b, dict))
                m = re.match(r"(?:Error: )?Exit code:? (\d+)", text or "")
                if block.get("is_error") or (m and m.group(1) != "0"):
                    failed.add(block["tool_use_id"])
    return len(calls), len(failed & calls)


def test_fixture_session_steps_and_pairing() -> None:
    traj = parse_one(SESSION)
    assert traj.source.format == "claude-code"
    assert traj.id == "5f0c3a1e-2b7d-4c1e-9a44-0d6f1b2c3e4f"
    assert traj.task.startswith("The test tests/test_prices.py fails")
    assert (traj.tool_calls, traj.failed_calls) == (7, 3)
    tools = [s for s in traj.steps if s.kind == "tool"]
    assert [s.tool for s in tools] == ["bash", "bash", "bash", "task", "read", "edit", "bash"]
    first = tools[0]
    assert first.exit_code == 1 and first.is_error
    assert first.error_signature
    assert first.error_signature == tools[1].error_signature == tools[2].error_signature
    assert first.action_key == tools[1].action_key == tools[2].action_key
    assert first.text == "Let me run the failing test first."
    assert first.raw_ref is not None and first.raw_ref.line is not None
    assert tools[-1].exit_code is None and not tools[-1].is_error
    assert [s.index for s in traj.steps] == list(range(len(traj.steps)))


def test_fixture_tokens_counted_once_per_message_id() -> None:
    traj = parse_one(SESSION)
    # 8 message ids, each streamed on 1-2 lines; input = input + 100 cache writes + 1000 reads.
    ins = [10, 12, 14, 20, 22, 24, 26, 28]
    outs = [50, 30, 30, 40, 20, 60, 20, 25]
    assert traj.tokens_in == sum(i + 1100 for i in ins)
    assert traj.tokens_out == sum(outs)
    assert sum(s.tokens or 0 for s in traj.steps) == traj.tokens_in + traj.tokens_out


def test_fixture_system_events_compaction_and_subagent() -> None:
    traj = parse_one(SESSION)
    kinds = [s.kind for s in traj.steps]
    api = [s for s in traj.steps if s.kind == "system"]
    assert [s.extra["retryAttempt"] for s in api] == [1, 2]
    assert kinds.count("compaction") == 2  # the boundary and the summary that follows it
    assert traj.model == "claude-sonnet-4-5"
    [sub] = traj.subagents
    assert sub.parent_session_id == traj.id
    assert sub.source.path.endswith("subagents/agent-b12c9f0.jsonl")
    assert (sub.tool_calls, sub.steps[1].tool) == (1, "grep")


def test_subagent_file_alone_is_its_own_session(tmp_path: Path) -> None:
    lone = tmp_path / "s" / "subagents" / "agent-b12c9f0.jsonl"
    lone.parent.mkdir(parents=True)
    lone.write_bytes((SESSION.with_suffix("") / "subagents" / "agent-b12c9f0.jsonl").read_bytes())
    [traj], issues = parse_all(tmp_path)
    assert not issues
    assert traj.parent_session_id == "5f0c3a1e-2b7d-4c1e-9a44-0d6f1b2c3e4f"
    assert traj.tool_calls == 1


def test_sidechain_lines_in_main_file_become_subagents(tmp_path: Path) -> None:
    main = [json.loads(x) for x in SESSION.read_text().splitlines()[:4]]
    sub_file = SESSION.with_suffix("") / "subagents" / "agent-b12c9f0.jsonl"
    side = [json.loads(x) for x in sub_file.read_text().splitlines()]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in main + side) + "\n")
    traj = parse_one(path)
    assert traj.tool_calls == 1
    assert [s.tool_calls for s in traj.subagents] == [1]
    assert traj.subagents[0].id == f"{traj.id}:agent-b12c9f0"


def test_real_samples(shared_trajectories: Path) -> None:
    folder = shared_trajectories / "claude-code"
    files = [p for p in session_files(folder, ".jsonl")
             if "subagents" not in p.parts and "hook_logs" not in p.name]
    # Every file SOURCES.md calls a real session is among them (no pinned count).
    real = {p for p, note in sample_notes(folder).items() if is_real_session(note)}
    assert real and real <= set(files)
    for path in files:
        assert sniff(path) == "claude-code", path
        traj = parse_one(path)
        assert (traj.tool_calls, traj.failed_calls) == count_calls(path), path
        sub_dir = path.with_suffix("") / "subagents"
        if sub_dir.is_dir():
            subs = sorted(sub_dir.glob("*.jsonl"))
            by_path = {Path(s.source.path): s for s in traj.subagents}
            for sub_path in subs:
                if sub_path in by_path:
                    assert by_path[sub_path].tool_calls == count_calls_any(sub_path)[0]
                    assert by_path[sub_path].parent_session_id == traj.id


def count_calls_any(path: Path) -> tuple[int, int]:
    calls = 0
    for rec in json_records(path):
        content = (rec.get("message") or {}).get("content")
        calls += sum(1 for b in content if b.get("type") == "tool_use") \
            if isinstance(content, list) else 0
    return calls, 0


def test_real_api_error_and_compaction(shared_trajectories: Path) -> None:
    traj = parse_one(shared_trajectories / "claude-code" / "session-share__0ccf1a04.jsonl")
    assert sum(1 for s in traj.steps if s.extra.get("subtype") == "api_error") == 9
    assert len(traj.subagents) == 5
    name = "fasthooks__sample_main_transcript.jsonl"
    compacted = parse_one(shared_trajectories / "claude-code" / name)
    assert any(s.kind == "compaction" for s in compacted.steps)


def test_hook_log_is_not_a_session(shared_trajectories: Path) -> None:
    assert sniff(shared_trajectories / "claude-code" / "fasthooks__sample_hook_logs.jsonl") is None


@pytest.mark.parametrize("name", ["spotter__short.jsonl"])
def test_real_task_is_first_typed_request(shared_trajectories: Path, name: str) -> None:
    traj = parse_one(shared_trajectories / "claude-code" / name)
    assert traj.task == "mix phx.server doesnt seem to start"


def test_resumed_session_copies_are_not_new_calls(tmp_path: Path) -> None:
    # A resumed session repeats earlier lines under a new sessionId: same call id, same result.
    lines = SESSION.read_text().splitlines()
    copied = [json.loads(x) for x in lines if '"tool_use' in x][:4]
    for rec in copied:
        rec["sessionId"] = "b162b1ae-97bc-475f-9b5f-ffbf55ca5b3f"
    path = tmp_path / "resumed.jsonl"
    path.write_text("\n".join(lines + [json.dumps(r) for r in copied]) + "\n")
    traj = parse_one(path)
    assert (traj.tool_calls, traj.failed_calls) == (7, 3) == count_calls(path)
    assert not traj.issues


def test_result_of_a_call_before_the_file_is_no_call(tmp_path: Path) -> None:
    # A log that starts mid-session: its first line answers a call made in the part before.
    base = {"sessionId": "s1", "isSidechain": False, "timestamp": "2026-02-02T06:24:36Z"}
    recs = [
        {**base, "type": "user", "uuid": "u1", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_before", "is_error": True,
             "content": "The user doesn't want to proceed with this tool use."}]}},
        {**base, "type": "user", "uuid": "u2",
         "message": {"role": "user", "content": "run the tests"}},
        {**base, "type": "assistant", "uuid": "a1", "message": {
            "id": "m1", "role": "assistant", "model": "claude-sonnet-4-5", "content": [
                {"type": "tool_use", "id": "toolu_here", "name": "Bash",
                 "input": {"command": "pytest"}}]}},
        {**base, "type": "user", "uuid": "u3", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_here", "is_error": True,
             "content": "Exit code 1"}]}},
    ]
    path = tmp_path / "part2.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    trajs, issues = parse_all(path)
    [traj] = trajs
    assert (traj.tool_calls, traj.failed_calls) == (1, 1) == count_calls(path)
    assert [s.tool for s in traj.steps if s.kind == "tool"] == ["bash"]
    assert traj.task == "run the tests"
    assert [(i.line, "toolu_before" in i.message) for i in issues] == [(1, True)]


def test_exit_code_echoed_by_the_command_is_output_not_the_exit(tmp_path: Path) -> None:
    # Claude Code opens a failed Bash result with "Exit code N"; ``cmd; echo "Exit code: $?"``
    # prints the same words last, and that call (the echo) exited 0.
    base = {"sessionId": "s1", "isSidechain": False, "timestamp": "2026-01-06T18:02:36Z"}
    recs: list[dict] = [{**base, "type": "user", "uuid": "u0",
                         "message": {"role": "user", "content": "try a bad subcommand"}}]
    results = {"t1": (False, 'Unknown command "enabl".\nExit code: 1'),
               "t2": (True, "Exit code 1\nUsage:\n  entire [command]")}
    for n, (tid, (is_error, text)) in enumerate(results.items()):
        recs += [
            {**base, "type": "assistant", "uuid": f"a{n}", "message": {
                "id": f"m{n}", "role": "assistant", "content": [
                    {"type": "tool_use", "id": tid, "name": "Bash",
                     "input": {"command": "entire enabl 2>&1; echo \"Exit code: $?\""}}]}},
            {**base, "type": "user", "uuid": f"r{n}", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": tid, "is_error": is_error,
                 "content": text}]}},
        ]
    path = tmp_path / "echo.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    traj = parse_one(path)
    tools = [s for s in traj.steps if s.kind == "tool"]
    assert [(s.exit_code, s.is_error) for s in tools] == [(None, False), (1, True)]
    assert (traj.tool_calls, traj.failed_calls) == (2, 1) == count_calls(path)
