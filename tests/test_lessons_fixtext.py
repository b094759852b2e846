"""The fix's own text reaches the playbook and the Gemini view.

The edit's before/after, the agent's stated reason (as its words), and the diagnostic step
whose output showed the cause.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _lesson_helpers import CWD, ask, bash, claude_log, mined_drafts, say, scan_log, tool

from pipeline.lessons.build import build_lesson
from pipeline.stages.quality import quality_problems
from pipeline.stages.view import StoreContext, build_view

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
DATE_FAIL = ("Exit code 1\n> web@1.0.0 test\n> vitest run\n\nFAIL src/date.test.js > formatDate\n"
             "AssertionError: expected '2026-05-05' but received '2026-05-04'\n"
             "Tests: 1 failed, 4 passed")
REASON = "formatDate uses local time; switching to UTC."


def _date_log(tmp_path: Path, reason: str = REASON) -> Path:
    fail = ("Bash", {"command": "npm test", "description": "Run the test suite"}, DATE_FAIL, True)
    return claude_log(tmp_path / "date.jsonl", "da7e0000-0000-4000-8000-000000000001", [
        fail, fail, fail,
        tool("Read", {"file_path": f"{CWD}/src/date.js"},
             "     1→export const formatDate = d => d.toLocaleDateString('en-CA');\n"),
        say(reason),
        tool("Edit", {"file_path": f"{CWD}/src/date.js",
                      "old_string": "d.toLocaleDateString('en-CA')",
                      "new_string": "d.toISOString().slice(0, 10)"},
             f"The file {CWD}/src/date.js has been updated successfully."),
        bash("npm test", "> web@1.0.0 test\n> vitest run\n\nTests: 5 passed"),
    ], task="npm test fails on formatDate, fix it")


def test_code_fix_carries_the_edit_and_the_agents_reason(tmp_path: Path) -> None:
    [made], notes = mined_drafts(_date_log(tmp_path))
    assert made.title == "Change the code the failing assertion names, then rerun the same test"
    assert made.validated_path.splitlines() == [
        "1. Change the code: `edit src/date.js`: `d.toLocaleDateString('en-CA')` -> "
        "`d.toISOString().slice(0, 10)`. The agent's stated reason: \"" + REASON + "\"",
        "2. `npm test` succeeds.",
    ]
    assert made.insight.endswith(
        " The edit: `d.toLocaleDateString('en-CA')` -> `d.toISOString().slice(0, 10)`.")
    # The agent's reason is its claim: quoted in the path, never stated as the cause.
    assert REASON not in made.insight and "Cause:" not in made.trap
    assert quality_problems(made) == []


@pytest.mark.parametrize("vague", [
    "It seems there was a mistake in the previous attempts. I will carefully fix it.",
    "Running the tests.",
    "Let me look at the date helper.",
])
def test_words_that_only_say_try_again_are_not_a_stated_reason(tmp_path: Path,
                                                                vague: str) -> None:
    [made], _notes = mined_drafts(_date_log(tmp_path, vague))
    assert made.validated_path.splitlines()[0] == (
        "1. Change the code: `edit src/date.js`: `d.toLocaleDateString('en-CA')` -> "
        "`d.toISOString().slice(0, 10)`.")


def test_edit_naming_only_its_new_text_takes_the_replaced_text_from_the_read() -> None:
    """Antigravity's replace_file_content names the new text only; the read shows the old."""
    [made], _notes = mined_drafts(
        FIXTURES / "antigravity/brain/3e9a7c52-8d1f-4b6e-a0c2-7f5e4d3c2b1a", "antigravity")
    assert made.validated_path.splitlines()[0] == (
        "1. Change the code: `edit src/date.js`: `d.toLocaleDateString('en-CA')` -> "
        "`d.toISOString().slice(0, 10)`. The agent's stated reason: \"" + REASON + "\"")


def test_gemini_view_shows_the_edit_and_the_reason(tmp_path: Path) -> None:
    log = _date_log(tmp_path)
    res = scan_log(log)
    [sess] = [s for s in res.sessions if s.trajectory is not None]
    assert sess.trajectory is not None and sess.findings
    lesson, why = build_lesson(sess.trajectory, sess.findings[0])
    assert lesson is not None, why
    view = build_view(sess.trajectory, sess.findings[:1], StoreContext(), lessons=[lesson])
    assert ("The fix's edit (one line each side):\n<<<LOG\nbefore: d.toLocaleDateString('en-CA')"
            "\nafter: d.toISOString().slice(0, 10)\nLOG>>>") in view
    assert ("The agent's stated reason, its own words (not checked by the log):\n<<<LOG\n"
            + REASON + "\nLOG>>>") in view


MODULE_FAIL = ("Exit code 1\nbun test v1.3.5\n\nsrc/index.test.ts:\n\n# Unhandled error between "
               "tests\n-------------------------------\nerror: Cannot find module '@chkit/core' "
               "from 'src/index.ts'\n-------------------------------\n 0 pass\n 1 fail")


def _build_log(tmp_path: Path, listing: str, error: bool) -> Path:
    test = ("Bash", {"command": "bun test", "description": "Run the plugin tests"},
            MODULE_FAIL, True)
    return claude_log(tmp_path / "build.jsonl", "b0170000-0000-4000-8000-000000000001", [
        test,
        bash("bun install", "bun install v1.3.5\n\nChecked 212 installs across 240 packages"),
        test,
        bash("ls packages/core/src/index.ts; ls packages/core/dist/", listing, error),
        bash("bun run build --filter=@chkit/core",
             "$ turbo run build --filter=@chkit/core\n Tasks: 1 successful, 1 total"),
        bash("bun test", "bun test v1.3.5\n\n 18 pass\n 0 fail"),
    ])


def test_trap_quotes_the_probe_that_showed_the_cause(tmp_path: Path) -> None:
    missing = "packages/core/src/index.ts\nls: packages/core/dist/: No such file or directory"
    [made], notes = mined_drafts(_build_log(tmp_path, missing, True))
    assert ("What the log showed before the fix: `ls packages/core/dist/` printed "
            "`ls: packages/core/dist/: No such file or directory`.") in made.trap.splitlines()
    assert made.validated_path.splitlines()[0] == (
        "1. Look before changing anything: `ls packages/core/dist/` (here it printed "
        "`ls: packages/core/dist/: No such file or directory`).")
    assert quality_problems(made) == []


def test_a_probe_that_found_what_it_looked_for_is_not_proof(tmp_path: Path) -> None:
    found = "packages/core/src/index.ts\nindex.js\nindex.d.ts"
    drafts, _notes = mined_drafts(_build_log(tmp_path, found, False))
    assert drafts
    assert all("What the log showed" not in d.trap for d in drafts)
    assert all("Look before" not in d.validated_path for d in drafts)


SPAWN = "error: Failed to spawn: `ruff`\n  Caused by: No such file or directory (os error 2)"
LINT = ("warning: The top-level linter settings are deprecated in favour of their counterparts "
        "in the `lint` section.\nE501 Line too long (108 > 100)\n  --> app/api/llm.py:21:101\n"
        "Found 1 error.")


def test_a_new_error_after_the_fix_ends_the_loop_and_keeps_its_attempts(tmp_path: Path) -> None:
    """EX-05's shape: the loop's error is gone when the tool runs and reports findings."""
    ruff = bash("uv run ruff check .", SPAWN, True, 2)
    log = claude_log(tmp_path / "uv.jsonl", "0c0d0000-0000-4000-8000-000000000001", [
        ruff,
        bash("uv sync", "Resolved 29 packages in 0.66ms\nAudited 21 packages in 0.22ms"),
        ruff,
        bash("uv run --with ruff ruff check .", "Installed 1 package in 4ms\n" + LINT, True),
        tool("Edit", {"file_path": f"{CWD}/app/api/llm.py", "old_string": "    responses={400: "
                      "{'model': ErrorResponse}, 502: {'model': ErrorResponse}},",
                      "new_string": "    responses=ERRORS,"},
             f"The file {CWD}/app/api/llm.py has been updated successfully."),
        bash("uv run --with ruff ruff check .", "All checks passed!"),
    ])
    [made], notes = mined_drafts(log)
    assert made.title == "Give `uv run` the tool with `--with ruff` when it cannot spawn `ruff`"
    assert ("Did not help: `uv sync` (it printed `Audited 21 packages in 0.22ms`) (the next "
            "attempt failed the same way).") in made.trap.splitlines()
    assert made.validated_path.splitlines() == [
        "1. Change the command: `uv run ruff check .` -> `uv run --with ruff ruff check .`; the "
        "error is gone and it now reports `E501 Line too long (108 > 100)`.",
        "2. `uv run --with ruff ruff check .` passes once what it reports is fixed.",
    ]
    assert quality_problems(made) == []


def test_objective_names_the_request_of_the_loops_turn(tmp_path: Path) -> None:
    """A long session's first message can be a template; the turn's own request says more."""
    ruff = ("Bash", {"command": "uv run ruff check ."}, f"Exit code 2\n{SPAWN}", True)
    log = claude_log(tmp_path / "turn.jsonl", "0c0d0000-0000-4000-8000-000000000002", [
        bash("ls", "backend\nREADME.md"),
        ask("Run the backend linter please"),
        ruff, ruff,
        bash("uv run --with ruff ruff check .", "All checks passed!"),
    ], task="## User Input\n\n```text\n\n```\n\nYou **MUST** consider the user input.")
    [made], _notes = mined_drafts(log)
    assert made.objective == 'Run `uv`, for the task "Run the backend linter please".'
