"""SWE-agent adapter: real samples (counted independently) and own fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES

from pipeline.errors import ParseFailure
from pipeline.formats import get_adapter
from pipeline.formats.base import ParseContext

OURS = ("swe-agent", "mini-swe-agent", "openhands", "atif", "aider")
ADAPTER = get_adapter("swe-agent")


def _parse(path: Path) -> tuple[list, ParseContext]:
    ctx = ParseContext()
    return list(ADAPTER.parse(path, ctx)), ctx


def _best(path: Path) -> str:
    head = b"" if path.is_dir() else path.read_bytes()[:65536]
    scores = {n: get_adapter(n).sniff(path, head) for n in OURS}
    return max(scores, key=lambda n: scores[n])


def _raw_failed(obs: str) -> bool:
    # Independent walk of the rule the adapter documents, kept deliberately literal.
    if "///PROCESS-DONE:" in obs and "///PROCESS-DONE:0:" not in obs:
        return True
    anywhere = ("Traceback (most recent call last):", "No replacement was performed",
                "command not found")
    if any(m in obs for m in anywhere):
        return True
    head = obs.lstrip()
    starts = ("Your proposed edit has introduced new syntax", "Error:", "ERROR:", "Usage:",
              "usage:", "No file open")
    first_line = head.split("\n", 1)[0]
    # A shell error naming a missing path (`cd x/: No such file or directory`), a missing file.
    return (head.startswith(starts) or first_line.endswith(": No such file or directory")
            or (first_line.startswith("File ") and first_line.endswith(" not found")))


def test_real_samples(shared_trajectories: Path) -> None:
    files = sorted((shared_trajectories / "swe-agent").glob("*.traj"))
    assert files
    for f in files:
        raw = json.loads(f.read_text())
        expected_calls = len(raw["trajectory"])
        expected_failed = sum(_raw_failed(s["observation"]) for s in raw["trajectory"])
        assert _best(f) == "swe-agent", f
        (traj,), ctx = _parse(f)
        assert not ctx.issues
        assert (traj.tool_calls, traj.failed_calls) == (expected_calls, expected_failed), f.name
        assert traj.outcome.exit_status == raw["info"]["exit_status"]


def test_real_pydicom_counts(shared_trajectories: Path) -> None:
    name = "sweagent-tests__pydicom__pydicom-1458.traj"
    (traj,), _ = _parse(shared_trajectories / "swe-agent" / name)
    assert (traj.tool_calls, traj.failed_calls) == (12, 4)
    assert (traj.tokens_in, traj.tokens_out) == (122612, 1369)


def test_fixture_0x() -> None:
    (traj,), ctx = _parse(FIXTURES / "swe-agent" / "calc-0x.traj")
    assert not ctx.issues
    assert traj.id == "calc-0x"
    assert [s.kind for s in traj.steps] == ["user"] + ["tool"] * 7
    assert (traj.tool_calls, traj.failed_calls) == (7, 4)
    assert traj.task is not None and traj.task.startswith("calc: tests/test_calc.py cannot import")
    tools = [s.tool for s in traj.steps[1:]]
    assert tools == ["ls", "bash", "bash", "bash", "bash", "bash", "finish"]
    sigs = [s.error_signature for s in traj.steps if s.is_error]
    assert sigs[0] == sigs[1] == sigs[2] == "ModuleNotFoundError: No module named <q>"
    assert traj.steps[2].action_key == traj.steps[3].action_key != traj.steps[4].action_key
    assert traj.steps[2].args == {"command": "python tests/test_calc.py"}
    assert (traj.tokens_in, traj.tokens_out) == (12000, 800)
    assert traj.outcome.exit_status == "submitted" and traj.outcome.task_complete is True
    assert traj.source.format == "swe-agent" and traj.source.content_hash.startswith("sha256:")


def test_fixture_1x() -> None:
    (traj,), _ = _parse(FIXTURES / "swe-agent" / "calc-1x.traj")
    assert (traj.tool_calls, traj.failed_calls) == (7, 3)
    assert traj.model == "gpt-4o-2024-08-06" and traj.agent_version == "1.0.1"
    assert traj.task == "divide(1, 0) crashes with ZeroDivisionError"
    assert traj.steps[1].tool == "read"
    assert traj.steps[4].is_error and not traj.steps[5].is_error
    assert "messages" not in traj.steps[1].extra and traj.steps[1].extra["execution_time"] == 0.12
    assert traj.outcome.task_complete is None  # autosubmitted on cost limit


def test_process_done_marker_gives_exit_code(tmp_path: Path) -> None:
    done = "///PROCESS-DONE:{}:PROCESS-DONE///"
    data = {"trajectory": [{"action": "ls x", "observation": "ls: x: nope" + done.format(2)},
                           {"action": "ls", "observation": "a b" + done.format(0)}],
            "history": [], "info": {}}
    f = tmp_path / "m.traj"
    f.write_text(json.dumps(data))
    (traj,), _ = _parse(f)
    assert [(s.exit_code, s.is_error) for s in traj.steps] == [(2, True), (0, False)]
    assert "PROCESS-DONE" not in traj.steps[0].output
    assert traj.tokens_in is None and traj.task is None


def test_bad_steps_reported_not_raised(tmp_path: Path) -> None:
    data = {"trajectory": ["oops", {"observation": "x"}, {"action": 3},
                           {"action": "ls", "observation": None}],
            "info": {"model_stats": "nope"}}
    f = tmp_path / "bad.traj"
    f.write_text(json.dumps(data))
    (traj,), ctx = _parse(f)
    assert traj.tool_calls == 1
    msgs = [str(i) for i in ctx.issues]
    assert len(msgs) == 3 and all(m.startswith(str(f)) for m in msgs)
    assert "trajectory[0]: expected an object" in msgs[0]
    assert "'action' is missing or not a string" in msgs[1]
    assert traj.issues == ctx.issues


@pytest.mark.parametrize("content", ['{"info": {}}', "[1, 2]", '{"trajectory": '])
def test_unusable_file_is_parse_failure(tmp_path: Path, content: str) -> None:
    f = tmp_path / "x.traj"
    f.write_text(content)
    with pytest.raises(ParseFailure, match=str(f)):
        _parse(f)


def test_sniff_rejects_other_formats() -> None:
    assert ADAPTER.sniff(FIXTURES / "atif" / "calc.atif.json",
                         (FIXTURES / "atif" / "calc.atif.json").read_bytes()) == 0
    mini = FIXTURES / "mini-swe-agent" / "calc__calc-1.traj.json"
    assert ADAPTER.sniff(mini, mini.read_bytes()) == 0
