from __future__ import annotations

import json
from pathlib import Path

from _formats_helpers import parse_all, parse_one
from conftest import FIXTURES

from pipeline.formats.discover import SessionSource, discover, sniff

BRAIN = FIXTURES / "antigravity" / "brain" / "3e9a7c52-8d1f-4b6e-a0c2-7f5e4d3c2b1a"
LOGS = BRAIN / ".system_generated" / "logs"


def count_calls(path: Path) -> tuple[int, int]:
    """Planner tool_calls plus unrequested result records; failed = exit code / failure text.

    transcript_full files are deduped by (step_index, type, source), keeping the last record.
    """
    recs = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    if "full" in path.name:
        keyed: dict = {}
        for r in recs:
            keyed[(r.get("step_index"), r.get("type"), r.get("source"))] = r
        recs = list(keyed.values())
    calls = failed = pending = 0
    for r in recs:
        if r.get("type") == "PLANNER_RESPONSE":
            pending = len(r.get("tool_calls") or [])
            calls += pending
        elif r.get("source") == "MODEL" and r.get("type") not in ("GENERIC",) or (
                r.get("source") == "MODEL" and pending):
            if pending:
                pending -= 1
            else:
                calls += 1
            text = r.get("content") or ""
            failed += bool(r.get("exit_code")) or r.get("success") is False or (
                "The command failed with exit code" in text)
    return calls, failed


def test_brain_folder_is_one_session() -> None:
    issues: list = []
    sources = list(discover([FIXTURES / "antigravity"], issues=issues))
    # Two brain folders; the third (a sub-agent) comes with its parent.
    parent = BRAIN.with_name("5b7d9e21-4c3a-4f0e-9a8b-1d2c3e4f5a6b")
    assert sources == [SessionSource(BRAIN, "antigravity", is_dir=True),
                       SessionSource(parent, "antigravity", is_dir=True)]
    assert not issues


def test_brain_fixture() -> None:
    traj = parse_one(BRAIN)
    assert traj.id == BRAIN.name
    assert traj.source.path == str(BRAIN)
    assert traj.task == "npm test fails on formatDate, fix it"
    assert traj.model == "Gemini 3 Pro (High)"
    assert (traj.tool_calls, traj.failed_calls) == count_calls(LOGS / "transcript_full.jsonl")
    assert (traj.tool_calls, traj.failed_calls) == (6, 3)
    tools = [s for s in traj.steps if s.kind == "tool"]
    assert [s.tool for s in tools] == ["bash", "bash", "bash", "read", "edit", "bash"]
    assert [s.exit_code for s in tools[:3]] == [1, 1, 1]
    # toolSummary is volatile: the three runs compare equal.
    assert len({s.action_key for s in tools[:3]}) == 1
    assert tools[0].args["CommandLine"] == "npm test"
    # transcript_full's RUNNING snapshots were replaced by the final DONE records.
    assert all(s.extra["status"] == "DONE" for s in tools)
    assert any(s.kind == "compaction" for s in traj.steps)
    assert traj.extra["artifacts"] == ["implementation_plan.md", "task.md",
                                       "task.md.metadata.json", "walkthrough.md"]
    assert traj.outcome.final_message.startswith("npm test passes")


def test_transcript_and_full_agree() -> None:
    a = parse_one(LOGS / "transcript.jsonl")
    b = parse_one(LOGS / "transcript_full.jsonl")
    assert a.id == b.id == BRAIN.name
    assert [s.action_key for s in a.steps] == [s.action_key for s in b.steps]


def test_full_snapshot_dedupe_keeps_final(shared_trajectories: Path) -> None:
    path = shared_trajectories / "antigravity" / "parser-fixtures" / \
        "transcript_full.fixture-gaal-exitcode.jsonl"
    traj = parse_one(path)
    [call] = [s for s in traj.steps if s.kind == "tool"]
    assert (call.args["CommandLine"], call.exit_code, call.is_error) == ("false", 2, True)


def test_real_samples(shared_trajectories: Path) -> None:
    folder = shared_trajectories / "antigravity"
    files = [folder / "SCHEMA-REF__agent-sessions__antigravity_cli_small.jsonl",
             *sorted((folder / "parser-fixtures").glob("transcript*.jsonl"))]
    for path in files:
        assert sniff(path) == "antigravity", path
        traj = parse_one(path)
        assert (traj.tool_calls, traj.failed_calls) == count_calls(path), path
    skipped: list = []
    trajs, issues = parse_all(folder / "parser-fixtures", skipped=skipped)
    # history/summary JSON files are not transcripts: skipped as not session logs, not failed.
    assert issues == []
    assert {Path(s.path).name for s in skipped} == {
        "history.fixture-agysource.jsonl", "summary.template-from-AnalyzerService.json"}


def test_user_request_unwrapped_and_subagent_ids(shared_trajectories: Path) -> None:
    pf = shared_trajectories / "antigravity" / "parser-fixtures"
    assert parse_one(pf / "transcript.fixture-agysource.jsonl").task == "fix the bug"
    sub = parse_one(pf / "transcript.fixture-subagent.jsonl")
    assert sub.extra["subagent_ids"] == ["9c036cf3-623e-4f36-9700-68577dfc9226"]


def test_subagent_brain_is_attached_to_its_parent_and_reported_once() -> None:
    from pipeline.formats.base import ParseContext
    from pipeline.formats.discover import discover, parse_source

    brains = FIXTURES / "antigravity" / "brain"
    issues: list = []
    sources = list(discover([brains], issues=issues))
    child = "9f8e7d6c-5b4a-4c3d-8e2f-1a0b9c8d7e6f"
    parent = "5b7d9e21-4c3a-4f0e-9a8b-1d2c3e4f5a6b"
    assert child not in {s.path.name for s in sources}  # found through its parent only
    by_id = {}
    for src in sources:
        for traj in parse_source(src, ParseContext()):
            by_id[traj.id] = traj
    (sub,) = by_id[parent].subagents
    assert sub.id == child and sub.parent_session_id == parent
    assert sub.source.path.endswith(child) and sub.tool_calls == 2
    assert sub.task == "Map how export.py builds CSV rows."
    # Pointed at directly, the sub-agent still knows its parent.
    (alone,) = parse_source(discover([brains / child], issues=issues).__next__(), ParseContext())
    assert alone.parent_session_id == parent and not issues
