"""Already answered (issue 12, fourth round): a check asked again before its state changed.

Each class people mark wasted in unseen Claude sessions, and its exemption, written as a small
Claude Code session (or an ATIF document for mini-swe-agent-shaped shell runs) and read by the
real adapters: a package query after an install that changed nothing, the same lint run
through another filter, a typecheck after clearing its cache, a sub-agent sent again with the
same instructions, an edit re-sent after the harness asked for a read, a reproduction
re-created that fails the same way, and a patch re-sent after the shell refused it.
"""

from __future__ import annotations

import json
from pathlib import Path

from _detect_helpers import USER, Call, atif_doc, claude_lines, parse_log

from pipeline.detect import annotate_repeats, detect_all
from pipeline.detect.actions import analyze
from pipeline.detect.answered import answer, change_kinds, question
from pipeline.detect.same_error import error_lines
from pipeline.model import Trajectory

AUDITED = "Resolved 29 packages in 0.66ms\nAudited 21 packages in 0.22ms"
INSTALLED = ("Resolved 29 packages in 0.66ms\nPrepared 1 package in 20ms\n"
             "Installed 1 package in 3ms\n + events-py==0.1.0 (from file:///w/libs/events-py)")
NOT_FOUND = "WARNING: Package(s) not found: events-py"
LINT = "pnpm --filter web lint 2>&1"
TSC = "bun run typecheck 2>&1"
TSC_OK = ("$ turbo run typecheck\n• Running typecheck in 8 packages\n"
          "@chkit/core:typecheck: cache hit, replaying logs 1480607577661134\n"
          " Tasks:    8 successful, 8 total\nCached:    8 cached, 8 total")
TSC_FAIL = ("$ turbo run typecheck\n@chkit/codegen:typecheck: src/index.ts(9,8): error TS2307: "
            "Cannot find module '@chkit/core'\n Tasks:    7 successful, 8 total")
POEM: dict[str, str | bool] = {
    "description": "Poem about green curry", "subagent_type": "general-purpose",
    "prompt": "Write a poem about Thai green curry. First search the web for the adjectives "
              "people use for it.", "run_in_background": True}


def _claude(tmp_path: Path, calls: list[Call]) -> Trajectory:
    folder = tmp_path / ".claude" / "projects" / "-home-dev-shop"
    folder.mkdir(parents=True)
    path = folder / "7d1c0b7e-0000-4000-8000-00000000c0de.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in claude_lines(calls)),
                    encoding="utf-8")
    return parse_log(path)


def _atif(tmp_path: Path, calls: list[Call]) -> Trajectory:
    path = tmp_path / "run.atif.json"
    path.write_text(json.dumps(atif_doc(calls)), encoding="utf-8")
    return parse_log(path)


def _bash(command: str, out: str = "ok", failed: bool = False) -> Call:
    return ("Bash", {"command": command, "description": "check"}, out, failed)


def _sh(command: str, out: str = "ok", failed: bool = False) -> Call:
    return ("bash", {"command": command}, out, failed)


def _edit(old: str, out: str = "The file /home/dev/shop/app.ts has been updated successfully.",
          failed: bool = False) -> Call:
    return ("Edit", {"file_path": "/home/dev/shop/app.ts", "old_string": old,
                     "new_string": old + " // fixed"}, out, failed)


def _wasted(t: Trajectory) -> list[int]:
    pos = {s.source_id: k for k, s in enumerate(s for s in t.steps if s.kind == "tool")}
    return sorted(pos[s] for f in detect_all(t) for s in f.wasted_source_ids)


def _reps(t: Trajectory) -> dict[int, tuple[int, bool]]:
    """Tool-step position -> (position repeated, wasted)."""
    pos = {s.index: k for k, s in enumerate(s for s in t.steps if s.kind == "tool")}
    return {pos[r.step]: (pos[r.repeat_of_step], r.wasted) for r in annotate_repeats(t)}


# ---- the model: questions and the changes their answers depend on ----

def test_a_command_is_a_question_with_its_filters_stripped(tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        _bash(f"{LINT} | grep 'no-explicit-any' | head -30", ""),
        _bash("rm -rf node_modules/.cache/turbo && bun run typecheck 2>&1", TSC_OK),
        _bash("uv pip list 2>&1 | grep -iE 'event|shared'", ""),
        _bash("gh run view 22058740928 --log-failed 2>&1 | tail -80", "verify\tTypecheck"),
    ])
    tools = [(s, i) for s, i in zip(t.steps, analyze(t), strict=True) if s.kind == "tool"]
    assert [question(s, i) for s, i in tools] == [
        ("output", "pnpm --filter web lint", "grep no-explicit-any | head -30", frozenset()),
        ("output", "bun run typecheck", "", frozenset()),
        ("package", "", "grep -iE event|shared", frozenset({"event", "shared"})),
        None,  # a CI run changes by itself: asking again is polling
    ]
    # Clearing a cache is a change of its own kind, which an output question ignores.
    assert sorted(change_kinds(*tools[1])) == ["clean"]


# ---- an installed package asked about again after an install that changed nothing ----

def test_a_package_query_after_a_no_op_sync_is_already_answered(tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        _bash("uv pip show events-py 2>&1 | head -20", NOT_FOUND),
        _bash("uv sync 2>&1", AUDITED),
        _bash("uv pip show events-py 2>&1", NOT_FOUND, failed=True),
        _bash("uv pip list 2>&1 | grep -i event", ""),
    ])
    assert _wasted(t) == [2, 3]
    assert _reps(t) == {2: (0, True), 3: (2, True)}


def test_a_package_query_after_a_sync_that_installed_is_new(tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        _bash("uv pip show events-py 2>&1 | head -20", NOT_FOUND),
        _bash("uv sync --all-packages 2>&1", INSTALLED),
        _bash("uv pip show events-py 2>&1", "Name: events-py\nVersion: 0.1.0"),
    ])
    assert _wasted(t) == []


def test_a_query_about_another_package_is_another_question(tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        _bash("uv pip show events-py 2>&1", NOT_FOUND, failed=True),
        _bash("uv pip show pydantic 2>&1", "Name: pydantic\nVersion: 2.9.2"),
    ])
    assert _wasted(t) == []


# ---- the same run piped through another filter ----

def test_the_same_lint_run_through_other_filters_is_already_answered(tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        _bash(f"{LINT} | grep \"no-explicit-any\" | head -30", ""),
        _bash(f"{LINT} | grep -i \"any\\|warning\\|error\" | head -30", ""),
        _bash(f"{LINT} | tail -20", "> @cipherbox/web@0.13.2 lint\n> eslint src/**/*.{ts,tsx}"),
    ])
    assert _wasted(t) == [1, 2]
    assert _reps(t) == {1: (0, True), 2: (1, True)}
    # The summary names the wasted step first, the session folder left out, and the change.
    assert [f.summary for f in detect_all(t)] == [
        "`pnpm --filter web lint 2>&1 | grep -i \"any\\|warning\\|error\" | head -30` asked "
        "again what `pnpm --filter web lint 2>&1 | grep \"no-explicit-a…` (#1) already showed "
        "(and 1x more): only the filter changed (`grep no-explicit-any | head -30` -> "
        "`grep -i any\\|warning\\|error | head -30`), and no file was edited between"]


def test_a_search_summary_leaves_the_session_folder_out(tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        _bash("rg -n TODO /home/dev/shop/src/routes", "/home/dev/shop/src/routes/cart.ts:9:TODO"),
        _bash("rg -n TODO /home/dev/shop/src/routes | wc -l", "1"),
    ])
    assert [f.summary for f in detect_all(t)] == [
        "`rg -n TODO src/routes | wc -l` asked again what `rg -n TODO src/routes` (#1) already "
        "showed: only the filter changed (`none` -> `wc -l`), and no file was edited between"]


def test_a_lint_run_after_an_edit_is_a_new_answer(tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        _bash(f"{LINT} | grep \"no-explicit-any\" | head -30", "src/a.ts:3 no-explicit-any"),
        _edit("let x: any"),
        _bash(f"{LINT} | tail -20", "> eslint src/**/*.{ts,tsx}"),
    ])
    assert _wasted(t) == []


def test_a_grep_for_other_words_asks_the_output_another_question(tmp_path: Path) -> None:
    cfg = "git -C /home/dev/shop config --list --show-origin 2>&1"
    t = _claude(tmp_path, [_bash(f"{cfg} | grep -i gc", ""),
                           _bash(f"{cfg} | grep -i \"maintenance\\|schedule\\|cron\"", "")])
    assert _wasted(t) == []
    assert _reps(t) == {1: (0, False)}  # a repeat of the command, not a waste


def test_a_filter_after_one_that_hit_its_cap_shows_what_it_hid(tmp_path: Path) -> None:
    warnings = "".join(f"warning in tree {k:040x}: hasDotgit\n" for k in range(3))
    t = _claude(tmp_path, [
        _bash("git fsck --no-dangling 2>&1 | head -3", warnings.rstrip()),
        _bash("git fsck --no-dangling 2>&1 | grep -E '^(error|missing)'", "missing blob 8c02"),
    ])
    assert _wasted(t) == []


def test_grep_context_values_are_not_the_pattern(tmp_path: Path) -> None:
    # `-A 3` then `-B 3`: the pattern is `error` then `warning`, not `3` both times.
    t = _claude(tmp_path, [
        _bash(f"{LINT} | grep -A 3 error", "src/routes/cart.ts:14:7 error Unexpected any"),
        _bash(f"{LINT} | grep -B 3 -m 5 warning", "src/lib/fmt.ts:2:1 warning prefer-const"),
    ])
    assert _wasted(t) == []
    assert _reps(t) == {1: (0, False)}


def test_grep_e_patterns_are_the_terms(tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        _bash(f"{LINT} | grep -m 1 -e error", "src/routes/cart.ts:14:7 error Unexpected any"),
        _bash(f"{LINT} | grep -m 1 -e warning", "src/lib/fmt.ts:2:1 warning prefer-const"),
        _bash(f"{LINT} | grep -e unused -e warn", "src/lib/fmt.ts:2:1 warning prefer-const"),
    ])
    assert _wasted(t) == [2]  # `warn` is inside the term asked before: the same question


def test_an_inverted_count_or_names_grep_asks_another_question(tmp_path: Path) -> None:
    for flag in ("-v", "-c", "-l", "--invert-match"):
        folder = tmp_path / flag.strip("-")
        t = _claude(folder, [
            _bash(f"{LINT} | grep error", "src/routes/cart.ts:14:7 error Unexpected any"),
            _bash(f"{LINT} | grep {flag} error", "src/lib/fmt.ts:2:1 warning prefer-const"),
        ])
        assert _wasted(t) == [], flag


def test_a_grep_reading_its_patterns_from_a_file_is_unknown_never_the_same(
        tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        _bash(f"{LINT} | tail -3", "src/routes/cart.ts:14:7 error Unexpected any"),
        _bash(f"{LINT} | grep -f /tmp/rules.txt", "src/lib/fmt.ts:2:1 warning prefer-const"),
    ])
    assert _wasted(t) == []


def test_filters_come_from_the_parsed_pipe_not_the_text(tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        _bash('grep -rnE "TODO|FIXME" src', "src/cart.ts:9:// TODO totals"),
        _bash("make test || echo failed", "FAIL cart\nfailed", failed=True),
        _bash('grep -rnE "TODO|FIXME" src 2>&1 | wc -l', "1"),
    ])
    tools = [(s, i) for s, i in zip(t.steps, analyze(t), strict=True) if s.kind == "tool"]
    got = [question(s, i) for s, i in tools]
    assert got[1] == ("output", "make test", "", frozenset())  # `|| echo` is no filter
    assert got[2] is not None and got[2][2] == "wc -l"  # the quoted `|` is the pattern's


def test_a_capped_output_whose_blank_last_line_was_trimmed_still_hit_its_cap(
        tmp_path: Path) -> None:
    # `tail -5` printed 5 lines, the last blank; the log keeps 4. The grep after it shows
    # which issue the cap cut: a repeat, not waste (labels rule book).
    credo = ("Analysis took 0.2 seconds\n1 mods/funs, found 1 code readability issue.\n\n"
             "Showing priority issues: ↑ ↗ →")
    t = _claude(tmp_path, [
        _bash("mix credo --strict 2>&1 | tail -5", credo),
        _bash('mix credo --strict 2>&1 | grep -E "^┃"', "┃ [R] → Modules should have a @moduledoc"),
    ])
    assert _wasted(t) == []
    assert _reps(t) == {1: (0, False)}


def test_files_with_matches_after_an_edit_is_asked_anew(tmp_path: Path) -> None:
    # Its answer depends on what the files say, which an edit changes: not a list of names.
    t = _claude(tmp_path, [
        _bash("rg --files-with-matches TODO src", "src/cart.ts"),
        _edit("let total = 0"),
        _bash("rg --files-with-matches TODO src", "src/cart.ts"),
    ])
    assert _wasted(t) == []


def test_an_error_line_that_says_cached_is_part_of_the_answer(tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        _bash("npm test 2>&1", "Error: stale cached value for key user\nTests: 1 failed"),
        _bash("npm test 2>&1", "Error: cached session expired\nTests: 1 failed"),
        _bash(TSC, TSC_OK),
    ])
    tools = [(s, i) for s, i in zip(t.steps, analyze(t), strict=True) if s.kind == "tool"]
    assert answer(*tools[0]) != answer(*tools[1])
    assert answer(*tools[2]) == (False, frozenset({  # the turbo cache report left out
        "$ turbo run typecheck", "• Running typecheck in # packages",
        "Tasks: # successful, # total"}))


def test_a_filter_of_the_whole_output_that_prints_new_lines_is_a_new_answer(
        tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        _bash("npm test 2>&1", "FAIL src/a.test.ts\nError: stale cached value for key user\n"
              "Tests: 1 failed", failed=True),
        _bash("npm test 2>&1 | tail -5", "FAIL src/a.test.ts\nError: cached session expired\n"
              "Tests: 1 failed", failed=True),
    ])
    assert _wasted(t) == []


def test_each_package_query_has_its_own_slot(tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        _bash("uv pip show httpx 2>&1", "Name: httpx\nVersion: 0.28.1"),
        _bash("uv pip show pydantic 2>&1", "Name: pydantic\nVersion: 2.9.2"),
        _bash("uv pip list 2>&1 | grep -i httpx", "httpx 0.28.1"),
    ])
    assert _reps(t) == {2: (0, True)}  # httpx asked again, not compared with pydantic


def test_a_ci_run_asked_again_through_another_filter_is_polling(tmp_path: Path) -> None:
    run = "gh run view 22058740928 --log-failed 2>&1"
    t = _claude(tmp_path, [_bash(f"{run} | tail -80", "verify\tTypecheck\tin progress"),
                           _bash(f"{run} | grep -i error", "")])
    assert _wasted(t) == []


# ---- a cache or build output cleared, then the same check ----

def test_a_typecheck_after_clearing_its_cache_that_prints_the_same_is_wasted(
        tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        _bash(TSC, TSC_OK),
        _bash("rm -rf /home/dev/shop/node_modules/.cache/turbo && bun run typecheck 2>&1", TSC_OK),
        _bash("rm -rf /home/dev/shop/packages/core/dist && bun run typecheck 2>&1", TSC_OK),
    ])
    assert _wasted(t) == [1, 2]


def test_a_typecheck_after_clearing_its_cache_that_fails_now_is_new(tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        _bash(TSC, TSC_OK),
        _bash("rm -rf /home/dev/shop/packages/core/dist && bun run typecheck 2>&1", TSC_FAIL,
              failed=True),
    ])
    assert _wasted(t) == []


def test_a_typecheck_after_an_edit_is_not_answered(tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        _bash(TSC, TSC_OK),
        _edit("import { x } from '@chkit/core'"),
        _bash("rm -rf /home/dev/shop/node_modules/.cache/turbo && bun run typecheck 2>&1", TSC_OK),
    ])
    assert _wasted(t) == []


# ---- a sub-agent launched again with the same instructions ----

def test_a_sub_agent_sent_again_with_the_same_prompt_is_wasted(tmp_path: Path) -> None:
    launched = "Async agent launched successfully.\nagentId: a9cad17\nThe agent is working."
    t = _claude(tmp_path, [
        ("Task", POEM, launched, False),
        ("TaskOutput", {"task_id": "a9cad17", "block": False}, "No task found with ID: a9cad17",
         True),
        (USER, {}, "<task-notification>a9cad17 completed</task-notification>", False),
        ("Task", POEM, launched.replace("a9cad17", "afbbf75"), False),
    ])
    assert _wasted(t) == [2]  # the person's turn (a notification) is no tool step
    assert _reps(t) == {2: (0, True)}


def test_a_sub_agent_with_other_instructions_or_after_an_edit_is_new(tmp_path: Path) -> None:
    launched = "Async agent launched successfully.\nagentId: a9cad17"
    other = {**POEM, "prompt": str(POEM["prompt"]).replace("green", "red")}
    t = _claude(tmp_path, [("Task", POEM, launched, False), ("Task", other, launched, False),
                           _edit("let x = 1"), ("Task", POEM, launched, False)])
    assert _wasted(t) == []


# ---- an edit re-sent after the harness asked for a read first ----

READ_FIRST = "<tool_use_error>File has not been read yet. Read it first before writing to it."
NO_MATCH = "<tool_use_error>String to replace not found in file.</tool_use_error>"
APP = "     1→const a = 1\n     2→let x: any\n"


def test_an_edit_re_sent_after_the_read_the_harness_asked_for_is_not_wasted(
        tmp_path: Path) -> None:
    t = _claude(tmp_path, [_edit("let x: any", READ_FIRST + "</tool_use_error>", failed=True),
                           ("Read", {"file_path": "/home/dev/shop/app.ts"}, APP, False),
                           _edit("let x: any")])
    assert _wasted(t) == []
    assert _reps(t) == {2: (0, False)}


def test_an_edit_re_sent_unchanged_after_a_no_match_is_still_wasted(tmp_path: Path) -> None:
    t = _claude(tmp_path, [_edit("let  x: any", NO_MATCH, failed=True),
                           ("Read", {"file_path": "/home/dev/shop/app.ts"}, APP, False),
                           _edit("let  x: any", NO_MATCH, failed=True)])
    assert _wasted(t) == [2]


def test_a_read_of_a_file_that_mentions_a_directory_is_a_read(tmp_path: Path) -> None:
    text = ("     1→# Local storage: LOCAL_UPLOAD_DIR is the directory that holds uploads/\n"
            "     2→import os\n")
    t = _claude(tmp_path, [("Read", {"file_path": "/home/dev/shop/gcs.py"}, text, False)])
    assert [i.cls for s, i in zip(t.steps, analyze(t), strict=True) if s.kind == "tool"] == [
        "read"]


# ---- a reproduction re-created after a failing run (labels rule book) ----

REPRO = ("cat > tests/quick_test.py <<'PY'\nimport django\nfrom django.conf import settings\n"
         "settings.configure(INSTALLED_APPS=['tests.quickapp']){extra}\ndjango.setup()\nPY\n"
         "python3 tests/quick_test.py")
NO_TESTS = ("Traceback (most recent call last):\n  File \"/testbed/tests/quick_test.py\", line 4, "
            "in <module>\n    django.setup()\nModuleNotFoundError: No module named 'tests'")
NOT_READY = ("Traceback (most recent call last):\n  File \"/testbed/tests/quick_test.py\", line 3,"
             " in <module>\ndjango.core.exceptions.AppRegistryNotReady: Apps aren't loaded yet.")


def test_a_reproduction_re_created_that_fails_the_same_way_is_wasted(tmp_path: Path) -> None:
    t = _atif(tmp_path, [_sh(REPRO.format(extra=""), NO_TESTS, failed=True),
                         _sh(REPRO.format(extra="\nimport sys"), NO_TESTS, failed=True),
                         _sh(REPRO.format(extra="\nimport os"), NO_TESTS, failed=True)])
    assert _wasted(t) == [1, 2]


def test_a_reproduction_re_created_that_answers_its_error_is_not_wasted(
        tmp_path: Path) -> None:
    t = _atif(tmp_path, [_sh(REPRO.format(extra=""), NOT_READY, failed=True),
                         _sh(REPRO.format(extra="\nimport sys"), NO_TESTS, failed=True)])
    assert _wasted(t) == []
    assert _reps(t) == {1: (0, False)}


def test_a_document_written_again_before_the_same_run_is_an_experiment(
        tmp_path: Path) -> None:
    run = "cat <<'EOF' > docs/index.rst\n{links}\nEOF\ncd docs && sphinx-build -b linkcheck . _b"
    broken = "(line    1) broken    doesntexist - path not found\nbuild finished with problems."
    t = _atif(tmp_path, [_sh(run.format(links="broken local-link_"), broken, failed=True),
                         _sh(run.format(links="broken local-link_\nvalid foo_"), broken,
                             failed=True)])
    assert _wasted(t) == []


# ---- a patch re-sent after the shell refused it ----

PATCH = ("{prose}python3 - <<'PY'\nfrom pathlib import Path\np = Path('shop/cart.py')\n"
         "s = p.read_text()\np.write_text(s.replace('total = 0', 'total = 0.0'))\nPY")
REFUSED = ("bash: -c: line 1: syntax error near unexpected token `('\n"
           "bash: -c: line 1: `THOUGHT: I will patch the total (it is an int).'")


def test_a_patch_the_shell_refused_re_sent_and_accepted_is_not_wasted(
        tmp_path: Path) -> None:
    t = _atif(tmp_path, [
        _sh(PATCH.format(prose="THOUGHT: I will patch the total (it is an int).\n\n"), REFUSED,
            failed=True),
        _sh(PATCH.format(prose=""), "")])
    assert _wasted(t) == []
    assert _reps(t) == {1: (0, False)}  # a repeat of the refused one, that answered it


def test_a_check_the_shell_refused_re_sent_is_still_wasted(tmp_path: Path) -> None:
    t = _atif(tmp_path, [
        _sh("THOUGHT: I will look at the total (it is an int).\n\nnl -ba shop/cart.py | "
            "sed -n '1,20p'", REFUSED, failed=True),
        _sh("nl -ba shop/cart.py | sed -n '1,20p'", "     1\ttotal = 0")])
    assert _wasted(t) == [1]


def test_a_call_cancelled_with_its_sibling_is_no_rerun(tmp_path: Path) -> None:
    cancelled = "<tool_use_error>Sibling tool call errored</tool_use_error>"
    t = _claude(tmp_path, [
        _bash("ls /home/dev/shop/.planning/todos/*.md 2>/dev/null | wc -l", cancelled, True),
        _bash("ls /home/dev/shop/.planning/debug/*.md 2>/dev/null | grep -v x | wc -l",
              cancelled, True)])
    assert _wasted(t) == []


def test_a_typecheck_answer_is_its_outcome_not_its_cache_report(tmp_path: Path) -> None:
    # Clearing the cache turns turbo's `cache miss, executing` into `cache hit, replaying
    # logs`, and parallel tasks print in another order: the same answer.
    miss = ("$ turbo run typecheck\n@chkit/core:typecheck: cache miss, executing 1480607577661134"
            "\n@chkit/cli:typecheck: cache miss, executing 3a8956a58ae8793c\n"
            "@chkit/core:typecheck: $ tsc -p tsconfig.json --noEmit\n"
            "@chkit/cli:typecheck: $ tsc -p tsconfig.json --noEmit\n Tasks:    2 successful")
    hit = ("$ turbo run typecheck\n@chkit/cli:typecheck: cache hit, replaying logs 3a8956a58ae8"
           "793c\n@chkit/cli:typecheck: $ tsc -p tsconfig.json --noEmit\n"
           "@chkit/core:typecheck: cache hit, replaying logs 1480607577661134\n"
           "@chkit/core:typecheck: $ tsc -p tsconfig.json --noEmit\n Tasks:    2 successful")
    t = _claude(tmp_path, [
        _bash(TSC, miss),
        _bash("rm -rf /home/dev/shop/node_modules/.cache/turbo && bun run typecheck 2>&1", hit)])
    assert _wasted(t) == [1]


# ---- a log redacted to hashes (Codex sample sessions) ----

def _redacted(args: int, out: int, sha: str) -> Call:
    return ("bash", {"input": f"[REDACTED_ARGUMENTS len={args} sha=0941d609]"},
            f"[REDACTED_OUTPUT len={out} sha={sha}]", False)


def test_a_redacted_call_sent_again_with_an_output_of_the_same_length_is_wasted(
        tmp_path: Path) -> None:
    # The hash covers the harness's exec header too (a new chunk id on every call).
    t = _atif(tmp_path, [_redacted(107, 1935, "7d546993"), _redacted(107, 1935, "bb80b3f0")])
    assert _wasted(t) == [1]


def test_a_redacted_call_sent_again_with_an_output_of_another_length_is_new(
        tmp_path: Path) -> None:
    t = _atif(tmp_path, [_redacted(77, 113, "339fb0f3"), _redacted(77, 102, "62c6aa4d")])
    assert _wasted(t) == []
    assert _reps(t) == {1: (0, False)}


# ---- an edit tool that refused its own program or patch text (labels rule book) ----

PY_INSERT = ("python3 - <<'PY'\nfrom pathlib import Path\np = Path('shop/forms.py')\n"
             "s = p.read_text()\np.write_text(s.replace('required=False)', "
             "'required=False, disabled=True)'))\nprint('Inserted')\nPY")
AWK = ("awk '{print $0; if($0 ~ /required, False/) { print \"    disabled=True,\" }}' "
       "shop/forms.py > /tmp/f.py && mv /tmp/f.py shop/forms.py")


def test_a_retry_after_awk_refused_its_own_program_is_not_wasted(tmp_path: Path) -> None:
    t = _atif(tmp_path, [_sh(AWK, "awk: line 1: syntax error at or near ,", failed=True),
                         _sh(PY_INSERT, "Inserted")])
    assert _wasted(t) == []
    assert _reps(t) == {1: (0, False)}  # the same edit retried, answering the refusal


def test_a_retry_after_git_apply_refused_its_patch_text_is_not_wasted(tmp_path: Path) -> None:
    patch = ("git apply -p0 <<'PATCH'\n*** Begin Patch\n*** Update File: shop/forms.py\n"
             "-    required=False)\n+    required=False, disabled=True)\n*** End Patch\nPATCH")
    sed = "sed -i 's/required=False)/required=False, disabled=True)/' shop/forms.py"
    t = _atif(tmp_path, [_sh(patch, "error: unrecognized input", failed=True), _sh(sed, "")])
    assert _wasted(t) == []


def test_a_retry_after_git_apply_did_not_match_the_file_is_wasted(tmp_path: Path) -> None:
    patch = ("git apply <<'PATCH'\n--- a/shop/forms.py\n+++ b/shop/forms.py\n@@ -10 +10 @@\n"
             "-    required=False)\n+    required=False, disabled=True)\nPATCH")
    sed = "sed -i 's/required=False)/required=False, disabled=True)/' shop/forms.py"
    t = _atif(tmp_path, [
        _sh(patch, "error: patch failed: shop/forms.py:10\nerror: shop/forms.py: patch does "
            "not apply", failed=True),
        _sh(sed, "")])
    assert _wasted(t) == [1]


# ---- context compaction (labels rule book): what was shown before it left the context ----

def test_questions_asked_again_after_a_compaction_are_repeats_not_waste() -> None:
    from _detect_helpers import compaction, sh, traj

    lint = "pnpm --filter web lint 2>&1"
    t = traj(sh(f"{lint} | tail -20", "src/a.ts:3 error"), compaction(),
             sh(f"{lint} | grep error", "src/a.ts:3 error"),
             sh("cat src/a.ts", "let x: any"), compaction(), sh("cat src/a.ts", "let x: any"))
    assert detect_all(t) == []
    tools = [s.index for s in t.steps if s.kind == "tool"]
    assert [(r.step, r.repeat_of_step, r.wasted) for r in annotate_repeats(t)] == [
        (tools[1], tools[0], False), (tools[3], tools[2], False)]


def test_a_forced_typecheck_without_the_build_output_asks_something_new(
        tmp_path: Path) -> None:
    forced = ("• Running typecheck in 8 packages\n@chkit/core:typecheck: cache bypass, force "
              "executing 1480607577661134\n Tasks:    8 successful, 8 total")
    run = "npx turbo run typecheck --force --filter='*' 2>&1"
    t = _claude(tmp_path, [
        _bash(run, forced), (USER, {}, "is it working now? verify it before you push", False),
        _bash(f"rm -rf /home/dev/shop/packages/*/dist && {run}", forced)])
    assert _wasted(t) == []


def test_one_mask_for_the_same_error_and_the_same_answer(tmp_path: Path) -> None:
    # A lock error naming another object id is the same error, in both families.
    a = "error: cannot lock ref 'refs/heads/main': is at 5c2031ea but expected e3ac3541"
    b = "error: cannot lock ref 'refs/heads/main': is at 9f1b77d0 but expected 0a4c2e9b"
    assert error_lines(a) == error_lines(b) == frozenset({
        "error: cannot lock ref 'refs/heads/main': is at # but expected #"})
    t = _claude(tmp_path, [_bash("git pull 2>&1", a, failed=True),
                           _bash("git pull 2>&1", b, failed=True)])
    tools = [(s, i) for s, i in zip(t.steps, analyze(t), strict=True) if s.kind == "tool"]
    assert answer(*tools[0]) == answer(*tools[1])
