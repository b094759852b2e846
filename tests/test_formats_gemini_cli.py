from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from _formats_helpers import is_real_session, parse_one, sample_notes
from conftest import FIXTURES

from pipeline.formats.discover import sniff

CHATS = FIXTURES / "gemini-cli" / "tmp" / "9f86d081" / "chats"
LEGACY = CHATS / "session-2026-03-01T10-00-b7e2c1d0.json"
JSONL = CHATS / "session-2026-04-02T09-00-c0ffee00.jsonl"


def raw_messages(path: Path) -> list[dict]:
    """Messages of a legacy record, or of a v0.40+ JSONL log (last write of an id wins,
    ``$rewindTo`` drops that id and everything after it)."""
    if path.suffix == ".json":
        return json.loads(path.read_text())["messages"]
    by_id: dict[str, dict] = {}
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        if "$rewindTo" in rec:
            ids = list(by_id)
            cut = ids.index(rec["$rewindTo"]) if rec["$rewindTo"] in ids else len(ids)
            by_id = {k: by_id[k] for k in ids[:cut]}
        elif "id" in rec and "type" in rec:
            by_id[rec["id"]] = rec
    return list(by_id.values())


def count_calls(path: Path) -> tuple[int, int]:
    """toolCalls in a session; failed = error status or 'Exit Code: N' with N != 0."""
    calls = failed = 0
    for msg in raw_messages(path):
        for call in msg.get("toolCalls") or []:
            calls += 1
            text = json.dumps(call.get("result"))
            m = re.search(r"Exit Code: (\d+)", text)
            failed += call.get("status") in ("error", "cancelled") or bool(m and m.group(1) != "0")
    return calls, failed


def test_legacy_fixture_exit_code_despite_success_status() -> None:
    traj = parse_one(LEGACY)
    assert traj.source.format == "gemini-cli"
    assert traj.id == "b7e2c1d0-1111-4a2b-9c3d-222233334444"
    assert (traj.tool_calls, traj.failed_calls) == count_calls(LEGACY) == (5, 3)
    tools = [s for s in traj.steps if s.kind == "tool"]
    assert [s.exit_code for s in tools] == [1, 1, 1, None, 0]
    assert all(s.extra["status"] == "success" for s in tools)
    assert tools[0].error_signature == tools[2].error_signature
    assert "AssertionError" in (tools[0].error_signature or "")
    assert traj.model == "gemini-2.5-pro"
    assert traj.tokens_in == 5000 + 5100 + 5200 + 5400 + 5600 + 5700
    assert traj.tokens_out == 3 * 42 + 100 + 20 + 10
    assert traj.task == "make tests/test_cli.py pass"


def test_jsonl_fixture_last_write_set_and_rewind() -> None:
    traj = parse_one(JSONL)
    assert traj.id == "c0ffee00-2222-4b3c-8d4e-555566667777"
    users = [s.output for s in traj.steps if s.kind == "user"]
    assert users == ["lint the project and fix what ruff reports", "fix it instead"]
    tools = [s for s in traj.steps if s.kind == "tool"]
    # a1 was written twice (the second write carries the result); a2 was rewound away.
    assert [s.args["command"] for s in tools] == ["ruff check .", "ruff check --fix ."]
    assert [s.exit_code for s in tools] == [1, 0]
    assert traj.failed_calls == 1
    assert traj.extra["summary"] == "ruff fix"
    assert traj.tokens_in == 3000 + 3200 + 3300
    assert [s.index for s in traj.steps] == list(range(len(traj.steps)))


def test_real_samples(shared_trajectories: Path) -> None:
    folder = shared_trajectories / "gemini-cli"
    files = [p for p, note in sample_notes(folder).items() if is_real_session(note)]
    assert files
    for path in files:
        assert sniff(path) == "gemini-cli", path
        traj = parse_one(path)
        assert (traj.tool_calls, traj.failed_calls) == count_calls(path), path
        models = Counter(m["model"] for m in raw_messages(path) if m.get("model"))
        # A chat whose only message is a warning (a failed hook at exit) names no model.
        assert traj.model == (models.most_common(1)[0][0] if models else None), path
        if any(m.get("tokens") for m in raw_messages(path)):
            assert traj.tokens_in, path


def test_entire_metadata_is_not_a_session(shared_trajectories: Path) -> None:
    for path in (shared_trajectories / "gemini-cli").glob("*entire-metadata.json"):
        assert sniff(path) is None


def test_schema_ref_jsonl_parses(shared_trajectories: Path) -> None:
    name = "SCHEMA-REF__agent-sessions__gemini_jsonl_v040.jsonl"
    path = shared_trajectories / "gemini-cli" / name
    assert sniff(path) == "gemini-cli"
    traj = parse_one(path)
    assert (traj.tool_calls, traj.failed_calls) == (1, 0)
    assert traj.task == "Say hello and list files."
