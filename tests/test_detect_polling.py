"""Waiting on a running process (Codex write_stdin, Claude BashOutput) is polling, not a loop."""

from __future__ import annotations

from _detect_helpers import sh, tool, traj

from pipeline.detect import annotate_repeats, detect_all


def test_empty_stdin_writes_to_a_running_process_are_polling() -> None:
    t = traj(
        sh("npm run build", "Process running with session ID 98003"),
        *(tool("bash", "still building...", chars="", session_id=98003) for _ in range(5)),
        tool("bash", "Process exited with code 0", chars="", session_id=98003),
    )
    assert detect_all(t) == []
    assert annotate_repeats(t) == []


def test_the_same_shell_command_polled_by_hand_is_still_a_repeat() -> None:
    t = traj(sh("pytest -x", "E boom", error=True), sh("pytest -x", "E boom", error=True))
    assert [f.kind for f in detect_all(t)] == ["rerun_unchanged"]


def test_a_run_with_different_environment_is_an_experiment_not_a_rerun() -> None:
    t = traj(
        sh("export STRATEGY=manual && ./harness.sh verify", "ok"),
        sh("export STRATEGY=auto && ./harness.sh verify", "ok"),
    )
    assert annotate_repeats(t) == []
    again = traj(
        sh("export STRATEGY=manual && ./harness.sh verify", "ok"),
        sh("git status", "clean"),
        sh("export STRATEGY=manual && ./harness.sh verify", "ok"),
    )
    assert [r.source_id for r in annotate_repeats(again)] == [again.steps[2].source_id]
