"""Two programs taught to orf by a row each in ``pipeline/detect/programs.py`` (written by a
contributor new to the code, following docs/architecture.md "How to teach orf a new program").

``poetry lock`` rewrites ``poetry.lock`` whatever its arguments, and ``kubectl rollout status``
waits on a deployment (live output). Both are a program with its subcommand, so their rows are
keyed by the words the command starts with (``program_of``); ``poetry`` and ``kubectl`` alone
keep the rows they had (none). Modelled on ``tests/test_programs_table.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _detect_helpers import Call, bash_call, claude_session, wasted_calls

from pipeline.detect.actions import analyze
from pipeline.detect.programs import PROGRAMS, Program, program, program_of

LOCK = '[[package]]\nname = "requests"\nversion = "2.31.0"\n'


def _lock_session(lock: str) -> list[Call]:
    return [bash_call("cat poetry.lock", LOCK),
            bash_call(lock, "Resolving dependencies...\nWriting lock file"),
            bash_call("cat poetry.lock", LOCK)]


ROLLOUT = [bash_call("kubectl rollout status deployment/web",
                 'Waiting for deployment "web" rollout to finish: 1 of 3 updated replicas'),
           bash_call("kubectl rollout status deployment/web",
                 'Waiting for deployment "web" rollout to finish: 1 of 3 updated replicas')]


def test_the_rows_are_found_by_program_and_subcommand() -> None:
    assert program_of(["poetry", "lock", "--no-update"]).writes_files == ("poetry.lock",)
    assert program_of(["kubectl", "rollout", "status", "deploy/web"]).asks == "poll"
    # The program alone, or another subcommand, is not taught anything.
    assert program("poetry") == program_of(["poetry", "show"]) == Program()
    assert program_of(["kubectl", "rollout", "restart", "deploy/web"]) == Program()
    assert program_of(["kubectl", "apply", "-f", "web.yaml"]) == Program()


def test_without_the_row_the_reread_after_poetry_lock_iswasted_calls(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(PROGRAMS, "poetry lock")
    assert wasted_calls(claude_session(tmp_path / "untaught", _lock_session("poetry lock"))) == [2]


@pytest.mark.parametrize("lock", ["poetry lock", "poetry lock --no-update",
                                  "poetry --no-interaction lock"])
def test_poetry_lock_rewrites_its_lock_file(tmp_path: Path, lock: str) -> None:
    t = claude_session(tmp_path / "taught", _lock_session(lock))
    infos = [i for s, i in zip(t.steps, analyze(t), strict=True) if s.kind == "tool"]
    assert (infos[1].cls, infos[1].writes) == ("write", ("poetry.lock",))
    # The read after it sees a new version of the file: not a re-read.
    assert infos[2].state != infos[0].state
    assert wasted_calls(t) == []


def test_poetry_lock_writes_the_lock_file_where_it_runs(tmp_path: Path) -> None:
    calls = [bash_call("cat app/poetry.lock", LOCK),
             bash_call("cd app && poetry lock", "Writing lock file"),
             bash_call("cat app/poetry.lock", LOCK)]
    assert wasted_calls(claude_session(tmp_path / "cd", calls)) == []


def test_other_poetry_commands_still_leave_the_lock_file_alone(tmp_path: Path) -> None:
    calls = [bash_call("cat poetry.lock", LOCK), bash_call("poetry show", "requests 2.31.0"),
             bash_call("cat poetry.lock", LOCK)]
    assert wasted_calls(claude_session(tmp_path / "show", calls)) == [2]


def test_kubectl_rollout_status_asked_again_is_waiting(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t = claude_session(tmp_path / "taught", ROLLOUT)
    assert [i.cls for s, i in zip(t.steps, analyze(t), strict=True) if s.kind == "tool"] == [
        "poll", "poll"]
    assert wasted_calls(t) == []
    monkeypatch.delitem(PROGRAMS, "kubectl rollout status")
    assert wasted_calls(claude_session(tmp_path / "untaught", ROLLOUT)) == [1]


def test_other_kubectl_commands_repeated_are_still_repeats(tmp_path: Path) -> None:
    calls = [bash_call("kubectl apply -f web.yaml", "deployment.apps/web configured"),
             bash_call("kubectl apply -f web.yaml", "deployment.apps/web configured")]
    assert wasted_calls(claude_session(tmp_path / "apply", calls)) == [1]
