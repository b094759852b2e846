"""The rules a mined playbook must keep against its source log, one real-shaped log per rule.

1. Only a step the log shows working is the fix: a fallback that ran (``|| echo``), an edit
   later undone, a comment-only edit and a session the agent gave up on are not.
2. The trap quotes the last failing attempt's own error, lists each attempt with its error,
   and leaves out attempts of another error class.
3. What the agent did inside the loop that did not help is named, never offered as the fix.
4. Objective and principle name this case (the step's purpose, the task, the mechanism).
5. Checks hold after the fix; titles carry no path or line number.
"""

from __future__ import annotations

from pathlib import Path

from _lesson_helpers import CWD, Call, bash, claude_log, mined_drafts, tool

from pipeline.model import Draft

F = CWD
GUTTER_OLD = "    12\tdef total(items):\n    13\t    return sum(items)"
NOT_FOUND = "String to replace not found in file.\nString: " + GUTTER_OLD


def _mine(tmp_path: Path, calls: list[Call], task: str = "Fix the build",
          last_words: str = "") -> tuple[list[Draft], list[str]]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    log = claude_log(tmp_path / "s.jsonl", "d00dfeed-0000-4000-8000-000000000001", calls,
                     task, last_words)
    return mined_drafts(log)


def _edit(old: str, new: str, out: str, error: bool = False) -> Call:
    return tool("Edit", {"file_path": f"{F}/app/cart.py", "old_string": old,
                         "new_string": new}, out, error)


def _fence(draft: Draft) -> str:
    return draft.trap.split("```text\n", 1)[1].split("\n```", 1)[0]


# ---- rule 1: the fix is what the log shows working ----

def test_a_fallback_that_ran_is_not_a_fix_step(tmp_path: Path) -> None:
    fail = bash("pytest -x tests/", "E   ModuleNotFoundError: No module named 'requests'", True)
    drafts, notes = _mine(tmp_path, [
        fail, fail,
        bash('git checkout requirements.txt 2>/dev/null || echo "No original file"',
             "No original file"),
        bash("pip install requests", "Successfully installed requests-2.32.3"),
        bash("pytest -x tests/", "3 passed in 0.41s"),
    ])
    [made] = drafts
    assert made.validated_path.splitlines() == [
        "1. Install what is missing: `pip install requests`.",
        "2. `pytest -x tests/` succeeds.",
    ]


def test_an_edit_undone_later_is_not_the_fix(tmp_path: Path) -> None:
    line = "    return sum(i.price for i in items)"
    drafts, notes = _mine(tmp_path, [
        _edit(GUTTER_OLD, "x", NOT_FOUND, True),
        _edit(GUTTER_OLD, "y", NOT_FOUND, True),
        tool("Write", {"file_path": f"{F}/app/cart.py", "content": f"{line}\n{line}\n"},
             f"The file {F}/app/cart.py has been updated successfully."),
        _edit(f"{line}\n{line}", "", f"The file {F}/app/cart.py has been updated "
              "successfully."),
        _edit(GUTTER_OLD, "z", NOT_FOUND, True),
    ])
    assert drafts == []
    assert any("no later step on the same target succeeded" in n for n in notes), notes


def test_a_comment_only_edit_is_not_the_fix(tmp_path: Path) -> None:
    drafts, notes = _mine(tmp_path, [
        _edit(GUTTER_OLD, "x", NOT_FOUND, True),
        _edit(GUTTER_OLD, "y", NOT_FOUND, True),
        _edit("def total(items):", "# handle discounts here\ndef total(items):",
              f"The file {F}/app/cart.py has been updated successfully."),
    ])
    assert drafts == []
    assert any("no later step on the same target succeeded" in n for n in notes), notes


def test_a_session_the_agent_gave_up_on_teaches_nothing(tmp_path: Path) -> None:
    drafts, notes = _mine(tmp_path, [
        _edit(GUTTER_OLD, "x", NOT_FOUND, True),
        _edit(GUTTER_OLD, "y", NOT_FOUND, True),
        _edit("    return sum(items)", "    return sum(i.price for i in items)",
              f"The file {F}/app/cart.py has been updated successfully."),
    ], last_words="I am unable to make the necessary changes to app/cart.py.")
    assert drafts == []
    assert any("the session ended unresolved" in n for n in notes), notes


# ---- rule 2: the right error for the right attempt ----

def test_each_attempt_is_listed_with_its_own_error_and_the_last_is_quoted(
        tmp_path: Path) -> None:
    drafts, _notes = _mine(tmp_path, [
        bash("bun run typecheck", "web typecheck: /bin/bash: tsc: command not found", True, 127),
        bash("npx tsc --noEmit -p .", "This is not the tsc command you are looking for", True),
        bash("./node_modules/.bin/tsc --noEmit -p .",
             "(eval):1: no such file or directory: ./node_modules/.bin/tsc", True, 127),
        bash("ls node_modules/.bin/", "ls: node_modules/.bin/: No such file or directory"),
        bash("bun install", "bun install v1.3.9\n+ typescript@5.9.3\n988 packages installed"),
        bash("./node_modules/.bin/tsc --noEmit -p .", ""),
    ])
    [made] = drafts
    assert made.trap.splitlines()[:5] == [
        "3 attempts failed, each with its own error:",
        "",
        "1. `bun run typecheck` -> `web typecheck: /bin/bash: tsc: command not found`",
        "2. `npx tsc --noEmit -p .` -> `This is not the tsc command you are looking for`",
        "3. `./node_modules/.bin/tsc --noEmit -p .` -> "
        "`(eval):1: no such file or directory: ./node_modules/.bin/tsc`",
    ]
    assert _fence(made) == "(eval):1: no such file or directory: ./node_modules/.bin/tsc"
    assert made.title == ("Install the project's dependencies when `tsc` is not found, "
                          "instead of trying other launchers")


def test_an_earlier_error_of_another_class_is_left_out(tmp_path: Path) -> None:
    drafts, _notes = _mine(tmp_path, [
        bash("pytest tests/test_price.py", "E   ModuleNotFoundError: No module named 'app'",
             True),
        bash("pip install -e .", "Successfully installed shop-0.1.0"),
        *[bash("pytest tests/test_price.py", "E       assert 110.0 == 90\n1 failed in 0.05s",
               True)] * 2,
        tool("Edit", {"file_path": f"{F}/app/price.py", "old_string": "p * (1 + d)",
                      "new_string": "p * (1 - d)"},
             f"The file {F}/app/price.py has been updated successfully."),
        bash("pytest tests/test_price.py", "1 passed in 0.04s"),
    ])
    [made] = drafts
    assert made.trap.splitlines()[:3] == [
        "2 attempts failed with the same error:", "",
        "1. `pytest tests/test_price.py` -> `E       assert 110.0 == 90` (× 2)"]
    assert "ModuleNotFoundError" not in made.trap


# ---- rule 3: what did not help is named, not offered as the fix ----

def test_an_install_that_did_not_help_is_named_and_the_build_is_the_fix(
        tmp_path: Path) -> None:
    fail = bash("bun test packages/web/src/app.test.ts",
                "error: Cannot find module '@acme/core' from 'packages/web/src/app.test.ts'\n"
                " 0 pass\n 1 fail", True)
    drafts, _notes = _mine(tmp_path, [
        fail,
        bash("bun install", "bun install v1.3.5\n988 packages installed"),
        fail,
        bash("bun run build --filter=@acme/core", "@acme/core:build: done"),
        bash("bun test packages/web/src/app.test.ts", " 18 pass\n 0 fail"),
    ])
    [made] = drafts
    assert made.title == "Build the workspace package `@acme/core` before running what imports it"
    assert "Did not help: `bun install` (the next attempt failed the same way)." in made.trap
    assert made.validated_path.splitlines() == [
        "1. Build what the command imports: `bun run build --filter=@acme/core`.",
        "2. `bun test packages/web/src/app.test.ts` succeeds.",
    ]
    assert "Install" not in made.insight


def test_re_reading_that_did_not_help_is_named(tmp_path: Path) -> None:
    held = "    12→def total(items):\n    13→\treturn sum(items)"
    old = "def total(items):\n    return sum(items)"
    miss = "String to replace not found in file.\nString: " + old
    drafts, _notes = _mine(tmp_path, [
        _edit(old, "x", miss, True),
        tool("Read", {"file_path": f"{F}/app/cart.py"}, held),
        _edit(old, "x", miss, True),
        _edit("def total(items):\n\treturn sum(items)", "def total(items):\n\treturn 0",
              f"The file {F}/app/cart.py has been updated successfully."),
    ])
    [made] = drafts
    assert made.title == ("Copy the old text's indentation from the file, tab for tab, before "
                          "retrying the edit")
    assert "Did not help: `re-read app/cart.py`" in made.trap
    assert made.checklist == [
        "`edit app/cart.py` succeeds",
        "The old text's first line has 1 tab(s) of indentation, as the file's line does",
    ]


# ---- rule 4: objective and principle name this case ----

def test_objective_states_the_step_purpose_and_the_task(tmp_path: Path) -> None:
    fail = ("Bash", {"command": "python hoge.py", "description": "Run the greeting script"},
            "Exit code 1\nerror: target shim binary not found", True)
    drafts, _notes = _mine(tmp_path, [
        fail, fail,
        bash("python3 hoge.py", "2"),
    ], task="Create hoge.py that prints 1+1 and run it")
    [made] = drafts
    assert made.objective == ("Run the greeting script (`python`), for the task \"Create "
                              "hoge.py that prints 1+1 and run it\".")
    assert made.title == "Call `python3` when `python` is a shim whose target is not installed"
    assert made.insight.startswith("A version-manager shim named `python` is on PATH")
    assert "here " not in made.insight


# ---- rule 5: checks hold after the fix; titles carry no path or line number ----

def test_checks_hold_after_the_fix_and_never_probe_the_broken_name(tmp_path: Path) -> None:
    fail = bash("python hoge.py", "error: target shim binary not found", True)
    drafts, _notes = _mine(tmp_path, [fail, fail, bash("python3 hoge.py", "2")])
    [made] = drafts
    assert made.checklist == ["`python3 hoge.py` succeeds",
                              "The command calls `python3`, not the `python` shim"]
    assert not any("command -v" in item for item in made.checklist)


def test_counts_agree_and_titles_carry_no_path(tmp_path: Path) -> None:
    drafts, _notes = _mine(tmp_path, [
        *[bash("./node_modules/.bin/tsc --noEmit -p .",
               "(eval):1: no such file or directory: ./node_modules/.bin/tsc", True, 127)] * 3,
        bash("bun install", "988 packages installed"),
        bash("./node_modules/.bin/tsc --noEmit -p .", ""),
    ])
    [made] = drafts
    assert made.trap.splitlines()[0] == "3 attempts failed with the same error:"
    assert "wasted step" not in made.trap
    assert "/" not in made.title and not any(c.isdigit() for c in made.title)
    assert made.checklist == ["`./node_modules/.bin/tsc --noEmit -p .` succeeds",
                              "`test -x ./node_modules/.bin/tsc` succeeds"]


def test_same_class_with_another_cause_is_another_lesson(tmp_path: Path) -> None:
    fail = bash("pytest tests/", "E   ModuleNotFoundError: No module named 'calc'", True)
    installed, _n = _mine(tmp_path / "a", [fail, fail, bash("pip install calc", "ok"),
                                           bash("pytest tests/", "3 passed")])
    pathed, _n = _mine(tmp_path / "b", [fail, fail, bash("PYTHONPATH=src pytest tests/",
                                                         "3 passed")])
    assert installed[0].title == ("Install `calc` into the environment the command runs in, "
                                  "then rerun it")
    assert pathed[0].title == ("Put the package's directory on the import path "
                               "(`PYTHONPATH=src`) instead of rerunning")
    assert installed[0].provenance.wire()["signatures"][1] != \
        pathed[0].provenance.wire()["signatures"][1]


def test_a_refusal_the_log_shows_no_answer_to_teaches_nothing(tmp_path: Path) -> None:
    refused = ("The user doesn't want to proceed with this tool use. The tool use was rejected. "
               "To tell you how to proceed, the user said:\nwhy not use the enable command?")
    drafts, notes = _mine(tmp_path, [
        *[_edit("x = 1", "x = 2", refused, True)] * 2,
        _edit("x = 1", "x = 3", f"The file {F}/app/cart.py has been updated successfully."),
    ])
    assert drafts == []
    assert any("the log shows no answer to the user's refusal" in n for n in notes), notes


def test_a_shortened_error_quote_ends_with_an_ellipsis(tmp_path: Path) -> None:
    long_error = "error: Cannot find module 'left-pad' from 'src/a.test.ts'\n" + "\n".join(
        f"    at frame{n} (src/a.test.ts:{n}:1)" for n in range(12))
    fail = bash("bun test src/a.test.ts", long_error, True)
    drafts, _notes = _mine(tmp_path, [fail, fail, bash("bun add left-pad", "installed"),
                                      bash("bun test src/a.test.ts", " 3 pass\n 0 fail")])
    [made] = drafts
    fence = _fence(made).splitlines()
    assert fence[0] == "error: Cannot find module 'left-pad' from 'src/a.test.ts'"
    assert fence[-1] == "…"
