from __future__ import annotations

import json
import re
from pathlib import Path

from _formats_helpers import is_real_session, json_records, parse_one, sample_notes, session_files
from conftest import FIXTURES

from pipeline.formats.discover import sniff

ROLLOUT = next((FIXTURES / "codex").rglob("rollout-*.jsonl"))


def count_calls(path: Path) -> tuple[int, int]:
    """Tool calls (function/custom/local-shell/web-search) and failed ones, from raw lines.

    Exit code: the exec_command_end event of the call, else "Exit code: N" at the output's
    start, "Process exited with code N" or JSON metadata in the output; a patch_apply_end
    with success false also fails.
    """
    calls: list[str] = []
    ends: dict[str, dict] = {}
    outputs: dict[str, str] = {}
    for rec in json_records(path):
        # Pre-Sept-2025 rollouts have bare response items, no {timestamp,type,payload} wrapper.
        p = rec["payload"] if isinstance(rec.get("payload"), dict) else rec
        t = p.get("type")
        if t in ("function_call", "custom_tool_call", "local_shell_call"):
            calls.append(p["call_id"])
        elif t == "web_search_call":
            calls.append("web")
        elif t in ("exec_command_end", "patch_apply_end"):
            ends[p["call_id"]] = p
        elif t in ("function_call_output", "custom_tool_call_output"):
            out = p["output"]
            outputs[p["call_id"]] = out if isinstance(out, str) else json.dumps(out)
    failed = 0
    for cid in calls:
        end = ends.get(cid, {})
        if end.get("type") == "patch_apply_end":
            failed += end.get("success") is False
            continue
        code = end.get("exit_code")
        if code is None:
            # Newer rollouts (shell_command, no exec_command_end) open with "Exit code: N".
            m = re.search(r"^Exit code: (\d+)|Process exited with code (\d+)"
                          r"|\"exit_code\\?\":\s*(\d+)", outputs.get(cid, ""))
            code = int(next(g for g in m.groups() if g is not None)) if m else None
        failed += bool(code)
    return len(calls), failed


def test_fixture_rollout() -> None:
    traj = parse_one(ROLLOUT)
    assert traj.source.format == "codex"
    assert traj.id == "019c9e10-4a2b-7c3d-8e4f-5a6b7c8d9e0f"
    assert (traj.agent_version, traj.model) == ("0.110.0", "gpt-5.3-codex")
    assert traj.task == "make the build pass: cargo build fails on a missing feature"
    assert (traj.tool_calls, traj.failed_calls) == count_calls(ROLLOUT) == (6, 3)
    tools = [s for s in traj.steps if s.kind == "tool"]
    assert [s.exit_code for s in tools] == [101, 101, 101, 0, 0, 0]
    assert [s.tool for s in tools] == ["bash", "bash", "bash", "edit", "bash", "bash"]
    assert len({s.action_key for s in tools[:3]}) == 1
    assert len({s.error_signature for s in tools[:3]}) == 1
    # The call that was still running when its output came back gets the full output.
    assert "Finished dev" in tools[4].output
    assert traj.tokens_in == 9000 + 9500 + 10000 + 9800 + 10100 + 10400
    assert traj.tokens_out == 40 * 3 + 120 + 30 + 60
    assert tools[0].tokens == 9040
    assert traj.outcome.task_complete is True
    assert traj.outcome.final_message.startswith("cargo build passes")


def test_real_samples(shared_trajectories: Path) -> None:
    files = session_files(shared_trajectories / "codex-cli", ".jsonl")
    folder = shared_trajectories / "codex-cli"
    real = {p for p, note in sample_notes(folder).items() if is_real_session(note)}
    assert real and real <= set(files)  # no pinned count: samples get added
    for path in files:
        assert sniff(path) == "codex", path
        traj = parse_one(path)
        assert (traj.tool_calls, traj.failed_calls) == count_calls(path), path


def test_real_exit_codes_from_exec_command_end(shared_trajectories: Path) -> None:
    path = shared_trajectories / "codex-cli" / "codemie__rollout-2026-05-11T11-26-55-019e1625.jsonl"
    traj = parse_one(path)
    codes = {s.exit_code for s in traj.steps if s.kind == "tool" and s.is_error}
    assert codes == {1, 2}
    assert traj.tokens_in and traj.tokens_out


def test_schema_ref_parses(shared_trajectories: Path) -> None:
    path = shared_trajectories / "codex-cli" / "SCHEMA-REF__agent-sessions__codex_small.jsonl"
    assert sniff(path) == "codex"
    traj = parse_one(path)
    assert traj.tool_calls == count_calls(path)[0]
    assert any(s.kind == "compaction" for s in traj.steps)


def test_code_mode_script_states_the_exit_code_it_printed(tmp_path: Path) -> None:
    # Newer rollouts run a script (``exec``) that calls the tools and prints their results;
    # no exec_command_end is written. The first result printed as JSON gives the exit code.
    def out(cid: str, *texts: str) -> dict:
        return {"type": "response_item", "payload": {
            "type": "custom_tool_call_output", "call_id": cid,
            "output": [{"type": "input_text", "text": t} for t in texts]}}

    head = "Script completed\nWall time 0.3 seconds\nOutput:\n"
    recs = [{"type": "session_meta", "payload": {"id": "s1", "cli_version": "0.144.3"}}]
    for cid in ("c1", "c2", "c3"):
        recs.append({"type": "response_item", "payload": {
            "type": "custom_tool_call", "call_id": cid, "name": "exec",
            "input": 'const r = await tools.exec_command({cmd: "git show x"});'
                     "text(JSON.stringify(r));"}})
    recs += [out("c1", head, '{"chunk_id": "a1", "exit_code": 128, "output": "fatal: bad"}',
                 '{"exit_code": 0, "output": ""}'),
             out("c2", head, '{"chunk_id": "b2", "exit_code": 0, "output": "ok"}'),
             out("c3", head, 'grep says: "exit_code": 1 (a line of output, not a result)')]
    path = tmp_path / "rollout-code-mode.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    traj = parse_one(path)
    assert [s.exit_code for s in traj.steps if s.kind == "tool"] == [128, 0, None]
    assert (traj.tool_calls, traj.failed_calls) == (3, 1)
