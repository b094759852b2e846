"""Outcome signals, one by one, and their ranking (issue 13)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.analyze import iter_trajectories
from pipeline.config import Settings
from pipeline.model import OutcomeHints, SourceInfo, Step, Trajectory
from pipeline.stages.judge import heuristic_verdict, verdict_from_log
from pipeline.stages.judge_signals import SIGNALS, collect_signals

RUNS = Path(__file__).parent / "data" / "judge" / "runs"


def shell(i: int, command: str, output: str = "", code: int = 0) -> Step:
    return Step(index=i, source_id=f"c{i}", kind="tool", tool="bash", args={"command": command},
                action_key=f"bash {command}", output=output, exit_code=code, is_error=code != 0)


def run(*steps: Step, path: str = "/nowhere/s.jsonl", **hints: object) -> Trajectory:
    return Trajectory(id="s", source=SourceInfo(format="claude-code", path=path),
                      steps=list(steps), outcome=OutcomeHints(**hints))  # type: ignore[arg-type]


EDIT = "sed -i 's/a \\/ b/a \\/ b if b else 0/' src/calc.py"


def names(traj: Trajectory) -> list[tuple[str, str]]:
    return [(s.name, s.outcome) for s in collect_signals(traj)]


def test_table_is_ranked_and_every_row_says_what_it_proves() -> None:
    kinds = [row.kind for row in SIGNALS]
    # evaluation first, then harness, tests, claims: the order of what they prove
    assert kinds[:3] == ["evaluation"] * 3 and kinds[-2:] == ["claim", "claim"]
    assert all(row.proves and row.measured for row in SIGNALS)
    deciders = {row.name: sorted(row.decides) for row in SIGNALS if row.decides}
    assert deciders == {"eval_resolved": ["failure", "success"],
                        "eval_reward": ["failure", "success"],
                        "eval_file": ["failure", "success"], "no_submission": ["failure"],
                        "harness_limit": ["failure"], "suite_failed": ["failure"]}


@pytest.mark.parametrize(("hints", "outcome", "signal"), [
    ({"resolved": True}, "success", "eval_resolved"),
    ({"resolved": False, "tests_passed_at_end": True}, "failure", "eval_resolved"),
    ({"score": 1.0}, "success", "eval_reward"),
    ({"score": 0.5}, "failure", "eval_reward"),
    ({"submitted_patch": False, "exit_status": "submitted"}, "failure", "no_submission"),
    ({"exit_status": "exit_cost"}, "failure", "harness_limit"),
    ({"exit_status": "error: RuntimeError: Agent reached maximum iteration in headless mode"},
     "failure", "harness_limit"),
    ({"exit_status": "LimitsExceeded"}, "failure", "harness_limit"),  # mini-swe-agent
    ({"exit_status": "stuck"}, "failure", "harness_limit"),  # OpenHands stuck detector
    ({"exit_status": "submitted", "tests_passed_at_end": False}, "failure", "suite_failed"),
])
def test_signal_decides(hints: dict[str, object], outcome: str, signal: str) -> None:
    verdict = verdict_from_log(run(shell(0, "ls"), **hints))
    assert verdict is not None
    assert (verdict.outcome, verdict.signal, verdict.decided_by) == (outcome, signal, "log")
    assert verdict.signals[0]["name"] == signal


@pytest.mark.parametrize(("hints", "signal", "points"), [
    ({"exit_status": "submitted (exit_cost)"}, "harness_autosubmit", "failure"),
    ({"exit_status": "turn_aborted:interrupted"}, "user_interrupt", "failure"),
    ({"exit_status": "submitted"}, "harness_submitted", "success"),
    ({"task_complete": True}, "claim_done", "success"),
    ({"task_complete": False}, "claim_not_done", "failure"),
    ({"tests_passed_at_end": True, "task_complete": True}, "suite_passed", "success"),
])
def test_evidence_only_signals_leave_the_verdict_unknown(
        hints: dict[str, object], signal: str, points: str) -> None:
    verdict = heuristic_verdict(run(shell(0, "ls"), **hints))
    assert verdict.outcome == "unknown" and verdict.signal is None
    assert verdict.signals[0]["name"] == signal and verdict.signals[0]["outcome"] == points
    assert verdict.signals[0]["decides"] is False
    assert verdict.reason.startswith(f"no signal earned a verdict: {signal} -> {points}")


def test_silent_log_says_so() -> None:
    verdict = heuristic_verdict(run(shell(0, "ls")))
    assert verdict.outcome == "unknown" and verdict.signals == []
    assert verdict.reason == ("the log has no outcome signal (no evaluation, exit status, test "
                              "run or claim)")


def test_suite_failing_after_the_last_edit_decides_failure_with_its_step() -> None:
    traj = run(shell(0, "cat src/calc.py", "def divide(a, b):"), shell(1, EDIT),
               shell(2, "pytest tests/", "1 failed, 3 passed in 0.1s", 1))
    verdict = verdict_from_log(traj)
    assert verdict is not None and verdict.outcome == "failure"
    assert (verdict.signal, verdict.evidence_step) == ("suite_failed", "c2")
    assert verdict.reason == "test suite failed after the last edit: 'pytest tests/' (suite_failed)"


def test_suite_run_before_the_last_edit_says_nothing() -> None:
    traj = run(shell(0, "pytest tests/", "1 failed in 0.1s", 1), shell(1, EDIT))
    assert names(traj) == []


def test_suite_passing_after_the_last_edit_is_evidence_only() -> None:
    traj = run(shell(0, EDIT), shell(1, "python -m pytest -q tests", "4 passed in 0.2s"))
    assert names(traj) == [("suite_passed", "success")]
    assert heuristic_verdict(traj).outcome == "unknown"


def test_masked_exit_code_is_read_from_the_output() -> None:
    traj = run(shell(0, EDIT), shell(1, "pytest -q || true", "2 failed, 10 passed", 0))
    assert names(traj) == [("suite_failed", "failure")]


def test_tests_that_never_ran_are_no_signal() -> None:
    traj = run(shell(0, EDIT), shell(1, "./gradlew test", "ERROR: JAVA_HOME is not set", 1),
               shell(2, "mvn test", "/bin/bash: mvn: command not found", 127))
    assert names(traj) == []


def test_text_a_command_only_writes_or_sends_runs_no_test() -> None:
    # a PR body and a plan file that name the test runner are no test run (a Codex session
    # read its `gh pr create --body "... pytest ..."` as the suite passing)
    traj = run(shell(0, EDIT),
               shell(1, 'gh pr create --title "fix" --body "## Test\n- uv run pytest -q: 4 passed"',
                     "https://github.com/o/r/pull/7"),
               shell(2, "cat <<'EOF' > plan.md\n1. run pytest -q\nEOF", "4 passed"),
               shell(3, 'git commit -m "fix: pytest -q passes" && echo 4 passed', "4 passed"))
    assert names(traj) == []
    traj = run(shell(0, EDIT), shell(1, 'git commit -m "wip" && pytest -q', "4 passed"))
    assert names(traj) == [("suite_passed", "success")]


def test_script_the_agent_wrote_is_its_own_test_not_the_suite() -> None:
    traj = run(shell(0, EDIT),
               shell(1, "cat > test_fix.py <<'EOF'\nfrom calc import divide\nEOF"),
               shell(2, "python -m pytest test_fix.py", "1 passed in 0.01s"))
    assert names(traj) == [("own_test", "success")]


def test_a_script_that_edits_the_project_counts_as_an_edit() -> None:
    patcher = ("cat > /tmp/patch.py <<'PY'\nfrom pathlib import Path\np = Path('src/calc.py')\n"
               "p.write_text(p.read_text().replace('a / b', 'a / b if b else 0'))\nPY")
    traj = run(shell(0, "pytest tests/", "1 failed", 1), shell(1, patcher),
               shell(2, "python /tmp/patch.py", "patched"))
    assert names(traj) == []  # the patch script edits src/calc.py after the failing run


def test_ranking_max_iterations_beats_a_passing_own_script() -> None:
    traj = run(shell(0, EDIT), shell(1, "cat > test_fix.py <<'EOF'\nassert True\nEOF"),
               shell(2, "pytest test_fix.py", "1 passed"),
               exit_status="error: RuntimeError: Agent reached maximum iteration")
    verdict = heuristic_verdict(traj)
    assert verdict.outcome == "failure" and verdict.signal == "harness_limit"
    assert verdict.evidence_step == "c2"  # the harness stopped the run at its last step
    assert [s["name"] for s in verdict.signals] == ["harness_limit", "own_test"]


def test_ranking_harness_limit_beats_a_passing_suite() -> None:
    traj = run(shell(0, EDIT), shell(1, "pytest", "5 passed"), exit_status="exit_context")
    assert heuristic_verdict(traj).signal == "harness_limit"


def test_ranking_evaluation_beats_the_harness_and_the_tests() -> None:
    traj = run(shell(0, EDIT), shell(1, "pytest", "1 failed", 1), exit_status="exit_cost",
               resolved=True)
    verdict = heuristic_verdict(traj)
    assert (verdict.outcome, verdict.signal) == ("success", "eval_resolved")
    assert [s["name"] for s in verdict.signals] == ["eval_resolved", "harness_limit",
                                                    "suite_failed"]


def _mini_run(folder: Path, name: str = "x.traj.json") -> Path:
    path = folder / name
    path.write_text("{}", encoding="utf-8")
    return path


@pytest.mark.parametrize("layout", ["stem", "unwrapped", "swebench_logs", "eval_results"])
def test_swebench_report_beside_the_trajectory(tmp_path: Path, layout: str) -> None:
    report: dict[str, object] = {"calc__calc-9": {"resolved": False}}
    if layout == "unwrapped":  # a per-instance report without its id as the key
        report = {"patch_exists": True, "resolved": False, "tests_status": {}}
    if layout in ("stem", "unwrapped"):
        traj_path = _mini_run(tmp_path, "calc__calc-9.traj.json")
        where = tmp_path / "calc__calc-9.report.json"
    elif layout == "swebench_logs":  # trajs/<id>/<id>.traj.json beside logs/<id>/report.json
        (tmp_path / "trajs" / "calc__calc-9").mkdir(parents=True)
        traj_path = _mini_run(tmp_path / "trajs" / "calc__calc-9", "calc__calc-9.traj.json")
        where = tmp_path / "logs" / "calc__calc-9" / "report.json"
    else:  # <id>/<id>.traj.json beside eval_results/<model>/<id>/report.json
        (tmp_path / "calc__calc-9").mkdir()
        traj_path = _mini_run(tmp_path / "calc__calc-9", "calc__calc-9.traj.json")
        where = tmp_path / "eval_results" / "openai__gpt" / "calc__calc-9" / "report.json"
    where.parent.mkdir(parents=True, exist_ok=True)
    where.write_text(json.dumps(report), encoding="utf-8")
    traj = run(shell(0, "pytest", "3 passed"), path=str(traj_path))
    traj.id = "calc__calc-9"
    verdict = heuristic_verdict(traj)
    assert (verdict.outcome, verdict.signal) == ("failure", "eval_file")
    assert verdict.reason == f"{where} says resolved=False (eval_file)"


def test_multi_swebench_results_and_harbor_reward(tmp_path: Path) -> None:
    results = {"resolved": ["org__repo-1"], "unresolved_ids": ["org__repo-2"],
               "empty_patch_ids": ["org__repo-3"]}
    (tmp_path / "batch__results.json").write_text(json.dumps(results), encoding="utf-8")
    for sid, outcome in (("batch__org__repo-1", "success"), ("batch__org__repo-3", "failure")):
        traj = run(path=str(_mini_run(tmp_path, f"{sid}.traj")))
        traj.id = sid
        assert heuristic_verdict(traj).outcome == outcome
    trial = tmp_path / "trial-1"
    (trial / "agent").mkdir(parents=True)
    (trial / "verifier").mkdir()
    (trial / "verifier" / "reward.txt").write_text("1.0\n", encoding="utf-8")
    traj = run(path=str(_mini_run(trial / "agent", "trajectory.json")))
    traj.id = "harbor-trial"
    verdict = heuristic_verdict(traj)
    assert (verdict.outcome, verdict.signal) == ("success", "eval_file")


def test_adapters_record_an_empty_or_missing_submission() -> None:
    found = {t.id: t.outcome.submitted_patch for t in
             iter_trajectories([RUNS], Settings(), [])}
    assert found["calc__calc-3"] is False  # mini-swe-agent: info.submission == ""
    assert found["swe-cost-limit"] is False  # swe-agent: exit_cost, no submission
    assert found["calc__calc-1"] is True and found["swe-no-java"] is True


def test_verdict_evidence_is_in_the_analysis_json() -> None:
    from pipeline.analyze import SessionReport
    from pipeline.report.json_out import session_json

    traj = run(shell(0, EDIT), shell(1, "pytest", "1 failed", 1))
    doc = session_json(SessionReport(traj, [], heuristic_verdict(traj)))
    assert doc["verdict"]["signal"] == "suite_failed"
    assert doc["verdict"]["evidence_step"] == "c1"
    assert doc["verdict"]["signals"] == [{
        "name": "suite_failed", "outcome": "failure", "decides": True, "step": 1,
        "source_id": "c1", "detail": "test suite failed after the last edit: 'pytest'"}]


def test_tool_edits_and_writes_count_like_shell_ones() -> None:
    edit = Step(index=1, source_id="e1", kind="tool", tool="edit",
                args={"file_path": "/repo/src/calc.py", "old_string": "a / b",
                      "new_string": "a / b if b else 0"}, output="The file has been updated.")
    write = Step(index=1, source_id="w1", kind="tool", tool="write",
                 args={"file_path": "/repo/tests/test_new.py", "content": "def test_x(): pass"},
                 output="File created")
    before = shell(0, "pytest tests/test_calc.py", "1 failed", 1)
    after = shell(2, "pytest tests/test_calc.py", "1 failed, 2 passed", 1)
    assert names(run(before, edit, after)) == [("suite_failed", "failure")]
    # a test file the agent wrote itself proves only what it chose to check
    assert names(run(before, write, shell(2, "pytest tests/test_new.py", "1 passed"))) == [
        ("own_test", "success")]
