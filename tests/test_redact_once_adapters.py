"""Every adapter but Codex bounds task and final message from the session's redacted text.

Like Codex (tests/test_redact_once.py): the task and the final message are cut from the text
their step was redacted to, or redacted by the session's memory, so no module-level scan sees
them again, and they stay redacted without ``clean_trajectory``'s finishing pass over them.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from dataclasses import asdict
from pathlib import Path

import pytest
from _formats_helpers import parse_one

from pipeline.formats import common
from pipeline.model import Trajectory

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
KEY = "sk-ant-api03-" + "Q7vLm2Xp9RtZ4wYb8NcK1dHf6JsG3uEa5oPi0qTl" + "-AbCdEfGh"
PLACEHOLDER = "[REDACTED:anthropic-api-key]"
# (fixture copied, session file parsed, its task, its final message)
CASES = {
    "claude-code": (
        "claude-code", "-home-dev-shop/5f0c3a1e-2b7d-4c1e-9a44-0d6f1b2c3e4f.jsonl",
        "The test tests/test_prices.py fails with an ImportError. Fix it so pytest passes.",
        "Fixed: the test imported round_price from the wrong module. pytest passes now."),
    "gemini-cli-jsonl": (
        "gemini-cli", "tmp/9f86d081/chats/session-2026-04-02T09-00-c0ffee00.jsonl",
        "lint the project and fix what ruff reports", "Done: ruff reports no errors."),
    "gemini-cli-json": (
        "gemini-cli", "tmp/9f86d081/chats/session-2026-03-01T10-00-b7e2c1d0.json",
        "make tests/test_cli.py pass", "Tests pass now."),
    "openhands-finish": (
        "openhands", "v0-trajectory.json", "Fix the failing test in tests/test_calc.py",
        "The test passes with src on PYTHONPATH."),
    "antigravity": (
        "antigravity", "brain/3e9a7c52-8d1f-4b6e-a0c2-7f5e4d3c2b1a",
        "npm test fails on formatDate, fix it", "npm test passes: formatDate now formats in UTC."),
    "atif": ("atif", "calc.atif.json", "Make the calc tests pass.",
             "The tests pass with src on PYTHONPATH."),
    "swe-agent": ("swe-agent", "calc-1x.traj", "divide(1, 0) crashes with ZeroDivisionError",
                  "Done."),
    "mini-swe-agent": ("mini-swe-agent", "calc__calc-1.traj.json",
                       "calc: tests/test_calc.py cannot import the calc package",
                       "THOUGHT: Submit."),
}


def _planted(tmp_path: Path, case: str) -> tuple[Path, str, str]:
    """Copy the case's fixture with ``KEY`` added to its task and final message texts."""
    folder, rel, task, final = CASES[case]
    root = tmp_path / folder
    shutil.copytree(FIXTURES / folder, root)
    path = root / rel
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    planted = 0
    for file in files:
        raw = file.read_text()
        if task in raw or final in raw:
            file.write_text(raw.replace(task, f"{task} key {KEY}")
                            .replace(final, f"{final} key {KEY}"))
            planted += 1
    assert planted
    return path, f"{task} key {PLACEHOLDER}", f"{final} key {PLACEHOLDER}"


def _no_leak(traj: Trajectory) -> None:
    dumped = json.dumps(asdict(traj), default=str)
    assert KEY[:16] not in dumped and KEY[-16:] not in dumped


@pytest.mark.parametrize("case", sorted(CASES))
def test_task_and_final_message_take_no_module_level_scan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    path, task, final = _planted(tmp_path, case)
    scanned: list[str] = []
    real = common.redact

    def record(text: str, counts: Counter[str] | None = None) -> str:
        scanned.append(text)
        return real(text, counts)

    monkeypatch.setattr(common, "redact", record)
    traj = parse_one(path)
    assert traj.task is not None and traj.outcome.final_message is not None
    assert (traj.task.startswith(task), traj.outcome.final_message) == (True, final)
    assert [t for t in scanned if KEY in t] == []
    _no_leak(traj)


@pytest.mark.parametrize("case", sorted(CASES))
def test_task_and_final_message_do_not_depend_on_the_finishing_pass(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    path, task, final = _planted(tmp_path, case)
    monkeypatch.setattr(common, "_finish_redaction", lambda traj, secrets: None)
    traj = parse_one(path)
    assert traj.task is not None and traj.outcome.final_message is not None
    assert (traj.task.startswith(task), traj.outcome.final_message) == (True, final)
    _no_leak(traj)


# A template phrase with a secret's value inside it: the task is cut from the raw message and
# redacted as a piece, so the phrase is removed before the scan and the value stays next to
# its name. Cut from the message redacted whole, the placeholder broke the phrase and
# ``hunter2hunter2`` reached the task.
_PHRASE = ("<pr_description>\nDB_PASSWORD=Consider the following PR description:hunter2hunter2\n"
           "</pr_description>")
_PHRASE_LOGS = {
    "x.traj": {"trajectory": [{"action": "ls", "observation": "a.py", "thought": "look"}],
               "history": [{"role": "user", "content": _PHRASE}],
               "info": {"exit_status": "submitted"}},
    "x.traj.json": {"info": {"exit_status": "Submitted", "mini_version": "1.15.0"},
                    "messages": [{"role": "system", "content": "sys"},
                                 {"role": "user", "content": _PHRASE},
                                 {"role": "assistant", "content": "ok\n```bash\nls\n```"},
                                 {"role": "user", "content": "<returncode>0</returncode>"}]},
}


@pytest.mark.parametrize("name", sorted(_PHRASE_LOGS))
def test_a_task_cut_from_a_template_is_redacted_as_a_piece(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(json.dumps(_PHRASE_LOGS[name]))
    traj = parse_one(path)
    assert traj.task == "DB_PASSWORD=[REDACTED:password]"
    assert "hunter2hunter2" not in json.dumps(asdict(traj), default=str)
