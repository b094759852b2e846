"""Repetition classes people count and their exemptions, from ATIF and Claude Code logs.

Each test writes a small log in a real format (an ATIF document or a Claude Code session),
reads it with the real adapters and checks what ``annotate_repeats`` and ``detect_all`` say.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _detect_helpers import USER, Call, atif_doc, claude_lines, lines, parse_log

from pipeline.detect import annotate_repeats, detect_all
from pipeline.model import Trajectory

ERR = "Traceback (most recent call last):\nModuleNotFoundError: No module named 'shop'"
LISTING = ("total 40\ndrwxr-xr-x 1 root root 4096 .git\n-rw-r--r-- 1 root root 310 setup.py\n"
           "-rw-r--r-- 1 root root 900 README.md\ndrwxr-xr-x 1 root root 4096 shop\n"
           "drwxr-xr-x 1 root root 4096 tests\n-rw-r--r-- 1 root root 120 tox.ini\n")


def _atif(tmp_path: Path, calls: list[Call]) -> Trajectory:
    path = tmp_path / "run.atif.json"
    path.write_text(json.dumps(atif_doc(calls)), encoding="utf-8")
    return parse_log(path)


def _claude(tmp_path: Path, calls: list[Call]) -> Trajectory:
    folder = tmp_path / ".claude" / "projects" / "-home-dev-shop"
    folder.mkdir(parents=True)
    path = folder / "7d1c0b7e-0000-4000-8000-00000000c0de.jsonl"
    rows = claude_lines(calls)
    path.write_text("".join(json.dumps(x) + "\n" for x in rows), encoding="utf-8")
    return parse_log(path)


def _bash(command: str, out: str = "ok", failed: bool = False, fmt: str = "atif") -> Call:
    if fmt == "claude":
        return ("Bash", {"command": command, "description": "run it"}, out, failed)
    return ("bash", {"command": command}, out, failed)


BUILD = {"atif": _atif, "claude": _claude}


def _reps(t: Trajectory) -> dict[int, tuple[int, int, str, bool]]:
    """Tool-step position -> (position repeated, earliest position, kind, wasted)."""
    pos = {s.index: k for k, s in enumerate(s for s in t.steps if s.kind == "tool")}
    return {pos[r.step]: (pos[r.repeat_of_step], pos[r.first_of_step], r.kind, r.wasted)
            for r in annotate_repeats(t)}


def _wasted(t: Trajectory) -> list[int]:
    pos = {s.source_id: k for k, s in enumerate(s for s in t.steps if s.kind == "tool")}
    return sorted(pos[s] for f in detect_all(t) for s in f.wasted_source_ids)


# ---- delete-and-recreate --------------------------------------------------------------------

def _recreate(fmt: str, body: str) -> Call:
    if fmt == "claude":
        return ("Write", {"file_path": "/home/dev/shop/reproduce.py", "content": body},
                "File created successfully at: /home/dev/shop/reproduce.py", False)
    return _bash(f"cat > reproduce.py <<'EOF'\n{body}\nEOF", "")


@pytest.mark.parametrize("fmt", ["atif", "claude"])
def test_delete_and_recreate_is_a_repeat_of_the_latest_creation(tmp_path: Path,
                                                                  fmt: str) -> None:
    calls = [_recreate(fmt, "import shop\nprint(shop.total())"),
             _bash("python reproduce.py", ERR, True, fmt), _bash("rm reproduce.py", "", fmt=fmt),
             _recreate(fmt, "import shop\nprint(shop.total(1))"),
             _bash("python reproduce.py", ERR, True, fmt), _bash("rm reproduce.py", "", fmt=fmt),
             _recreate(fmt, "import shop\nprint(shop.total(2))")]
    t = BUILD[fmt](tmp_path, calls)
    reps = _reps(t)
    assert reps[3][:3] == (0, 0, "rewrite") and reps[6][:3] == (3, 0, "rewrite")
    # Each rm repeats the one before; repeat_of is the latest, first_of the earliest.
    assert reps[5][:2] == (2, 2)
    assert reps[4][:2] == (1, 1)


def test_appending_to_a_script_is_not_recreating_it(tmp_path: Path) -> None:
    t = _atif(tmp_path, [_bash("cat > t.py <<'EOF'\nimport shop\nEOF", ""),
                         _bash("cat >> t.py <<'EOF'\nprint(shop.total())\nEOF", "")])
    assert _reps(t) == {}


# ---- the same script with another env or cwd prefix ----------------------------------------

@pytest.mark.parametrize("fmt", ["atif", "claude"])
def test_rerun_with_another_location_prefix_is_a_wasted_repeat(tmp_path: Path, fmt: str) -> None:
    t = BUILD[fmt](tmp_path, [
        _bash("cd /work/shop && PYTHONPATH=src:lib python3 x.py", ERR, True, fmt),
        _bash("cd /work/shop && PYTHONPATH=src python3 x.py", ERR, True, fmt)])
    assert _reps(t) == {1: (0, 0, "same_action", True)}
    assert [f.kind for f in detect_all(t)] == ["rerun_unchanged"]


def test_rerun_from_another_directory_is_a_repeat(tmp_path: Path) -> None:
    t = _atif(tmp_path, [_bash("cd /work/shop && python3 x.py", ERR, True),
                         _bash("python3 /work/shop/x.py", ERR, True),
                         _bash("python3 x.py", ERR, True)])
    assert {k: v[:3] for k, v in _reps(t).items()} == {1: (0, 0, "same_action"),
                                                       2: (1, 0, "rerun")}


def test_location_prefix_rerun_after_a_real_edit_is_not_wasted(tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        _bash("PYTHONPATH=src python3 x.py", ERR, True, "claude"),
        ("Edit", {"file_path": "/home/dev/shop/x.py", "old_string": "import shop",
                  "new_string": "import src.shop as shop"}, "The file has been updated.", False),
        _bash("PYTHONPATH=src:. python3 x.py", ERR, True, "claude")])
    assert _reps(t) == {2: (0, 0, "same_action", False)}
    assert detect_all(t) == []


def test_location_prefix_rerun_with_new_output_is_not_wasted(tmp_path: Path) -> None:
    t = _atif(tmp_path, [_bash("PYTHONPATH=src python3 x.py", ERR, True),
                         _bash("PYTHONPATH=src:lib python3 x.py", "total: 3")])
    assert _reps(t) == {1: (0, 0, "same_action", False)}
    assert detect_all(t) == []


def test_another_input_variable_is_an_experiment(tmp_path: Path) -> None:
    t = _atif(tmp_path, [_bash("STRATEGY=manual ./verify.sh", "ok"),
                         _bash("STRATEGY=auto ./verify.sh", "ok")])
    assert _reps(t) == {}


# ---- the same exploration at another spelling of the same place -----------------------------

def test_listing_of_the_same_checkout_mounted_twice(tmp_path: Path) -> None:
    t = _atif(tmp_path, [_bash("ls -la /workspace/repo", LISTING),
                         _bash("ls -la /testbed", LISTING),
                         _bash("ls -la /mnt/src/shop", LISTING), _bash("ls /srv/shop", LISTING)])
    assert {k: v[:3] for k, v in _reps(t).items()} == {
        1: (0, 0, "same_action"), 2: (1, 0, "same_place"), 3: (2, 0, "same_place")}
    assert _wasted(t) == [1, 2, 3]


def test_listing_elsewhere_that_shows_other_names_is_not_a_repeat(tmp_path: Path) -> None:
    t = _atif(tmp_path, [_bash("ls -la /mnt/src/shop", LISTING),
                         _bash("ls -la /srv/shop", "total 0\n-rw-r--r-- 1 root root 1 README\n")])
    assert _reps(t) == {}


# ---- repeated actions with no arguments -----------------------------------------------------

def test_bare_actions_repeated(tmp_path: Path) -> None:
    t = _atif(tmp_path, [("localize", {}, "shop/money.py:12", False),
                         ("write_patch", {}, "patch failed: hunk 1", True),
                         ("write_patch", {}, "patch failed: hunk 1", True),
                         ("localize", {}, "shop/money.py:12", False)])
    reps = _reps(t)
    assert reps[2] == (1, 1, "exact", True)
    assert reps[3][:3] == (0, 0, "exact")


def test_bare_action_with_new_output_is_a_repeat_not_waste(tmp_path: Path) -> None:
    t = _atif(tmp_path, [("write_patch", {}, "patch failed: hunk 1", True),
                         ("write_patch", {}, "patch applied", False)])
    assert _reps(t) == {1: (0, 0, "exact", False)}
    assert detect_all(t) == []


def test_a_trimmed_call_of_a_tool_that_needs_arguments_compares_to_nothing(
        tmp_path: Path) -> None:
    t = _claude(tmp_path, [("Read", {}, "", False), ("Read", {}, "", False)])
    assert _reps(t) == {}


# ---- plan, to-do and think tools ------------------------------------------------------------

@pytest.mark.parametrize("fmt,name,args", [
    ("claude", "TodoWrite", {"todos": [{"content": "fix total", "status": "in_progress"}]}),
    ("atif", "update_plan", {"plan": [{"step": "fix total", "status": "in_progress"}]}),
    ("atif", "task_tracker", {"command": "view"}),
    ("atif", "think", {"thought": "the import path is wrong"}),
])
def test_plan_tools_are_never_reruns(tmp_path: Path, fmt: str, name: str,
                                     args: dict[str, Any]) -> None:
    t = BUILD[fmt](tmp_path, [(name, args, "Todos have been modified successfully", False)] * 3)
    assert _reps(t) == {} and detect_all(t) == []


# ---- polling and paging ---------------------------------------------------------------------

def test_polling_a_running_job_is_not_a_repeat(tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        ("Bash", {"command": "pytest -x", "run_in_background": True}, "Command running in "
         "background with ID: 1", False),
        ("BashOutput", {"bash_id": "1"}, "<status>running</status>", False),
        ("BashOutput", {"bash_id": "1"}, "<status>running</status>", False),
        _bash("sleep 30", "", fmt="claude"),
        ("BashOutput", {"bash_id": "1"}, "<status>completed</status>", False)])
    assert _reps(t) == {} and detect_all(t) == []


@pytest.mark.parametrize("fmt", ["atif", "claude"])
def test_paging_through_a_file_is_not_a_reread(tmp_path: Path, fmt: str) -> None:
    pages = [_bash("cat -n shop/money.py | head -100", lines(1, 100), fmt=fmt),
             _bash("sed -n '101,200p' shop/money.py", lines(101, 200), fmt=fmt),
             _bash("sed -n '201,300p' shop/money.py", lines(201, 300), fmt=fmt),
             _bash("sed -n '120,140p' shop/money.py", lines(120, 140), fmt=fmt)]
    t = BUILD[fmt](tmp_path, pages)
    assert {k: v[2:] for k, v in _reps(t).items()} == {3: ("reread", True)}
    assert [f.kind for f in detect_all(t)] == ["reread"]


def test_reading_in_consecutive_ranges_with_the_read_tool(tmp_path: Path) -> None:
    path = "/home/dev/shop/shop/money.py"
    t = _claude(tmp_path, [("Read", {"file_path": path, "offset": k * 200 + 1, "limit": 200},
                            lines(k * 200 + 1, k * 200 + 200), False) for k in range(4)])
    assert _reps(t) == {} and detect_all(t) == []


# ---- the same command re-run only to filter its output ---------------------------------------

def test_refiltering_the_same_command_is_a_repeat(tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        _bash("git fsck --no-dangling 2>&1 | head -30", "Checking objects: 100%", fmt="claude"),
        _bash('git fsck --no-dangling 2>&1 | grep -E "^(error|missing)" | head -20', "",
              fmt="claude")])
    assert {k: v[:3] for k, v in _reps(t).items()} == {1: (0, 0, "refilter")}


# ---- one finding per trap -------------------------------------------------------------------

def test_identical_failed_edits_are_one_edit_retry_finding(tmp_path: Path) -> None:
    edit: Call = ("Edit", {"file_path": "/home/dev/shop/shop/money.py",
                           "old_string": "return round(v)", "new_string": "return round(v, 2)"},
                  "<tool_use_error>String to replace not found in file.</tool_use_error>", True)
    t = _claude(tmp_path, [edit] * 4)
    found = detect_all(t)
    assert [(f.kind, f.wasted_steps) for f in found] == [("edit_retry", 3)]


def _edit(k: int, back: bool = False) -> Call:
    old, new = (f"rate_{k} = 2", f"rate_{k} = 1") if back else (f"rate_{k} = 1", f"rate_{k} = 2")
    return ("Edit", {"file_path": "/home/dev/shop/shop/rates.py", "old_string": old,
                     "new_string": new}, "The file has been updated.", False)


def test_a_batch_of_edits_undone_on_one_file_is_one_finding(tmp_path: Path) -> None:
    calls = [_edit(k) for k in range(7)] + [_bash("pytest tests", "7 failed", True, "claude")]
    calls += [_edit(k, back=True) for k in range(7)]
    found = detect_all(_claude(tmp_path, calls))
    assert [f.kind for f in found] == ["edit_revert"]
    assert found[0].wasted_steps == 14
    assert found[0].summary == ("shop/rates.py: edit replaced back (7 edit/revert pairs, "
                                "13 edit(s) undone, no net change)")


def test_revert_batches_split_by_a_kept_edit_are_two_findings(tmp_path: Path) -> None:
    keep: Call = ("Edit", {"file_path": "/home/dev/shop/shop/rates.py",
                           "old_string": "# rates", "new_string": "# tax rates"},
                  "The file has been updated.", False)
    calls = [_edit(0), _edit(0, back=True), keep, _edit(1), _edit(1, back=True)]
    found = detect_all(_claude(tmp_path, calls))
    assert [(f.kind, f.wasted_steps) for f in found] == [("edit_revert", 2), ("edit_revert", 2)]


# ---- exploring is not retrying ---------------------------------------------------------------

def test_searches_that_find_nothing_in_other_places_are_exploring(tmp_path: Path) -> None:
    t = _atif(tmp_path, [_bash('rg -n "popup" specs/research.md', "", True),
                         _bash('rg -n "sudden" styles.css', "", True),
                         _bash('rg -n "locked" -g"*.js"', "", True)])
    assert _reps(t) == {} and detect_all(t) == []


def test_an_argv_shell_call_is_classified_by_its_script() -> None:
    from _detect_helpers import tool

    from pipeline.detect.classify import classify

    info = classify(tool("bash", " M app.js", command=["bash", "-lc", "git status --short"]))
    assert (info.cls, info.program, info.label) == ("inspect", "git", "git status --short")


def test_two_inline_scripts_are_two_runs(tmp_path: Path) -> None:
    t = _atif(tmp_path, [_bash("python3 - <<'PY'\nimport shop\nprint(shop.total())\nPY", ERR, True),
                         _bash("python3 - <<'PY'\nimport shop.money\nprint(1)\nPY", ERR, True),
                         _bash("python3 - <<'PY'\nimport shop.money\nprint(1)\nPY", ERR, True)])
    assert {k: v[:3] for k, v in _reps(t).items()} == {2: (1, 1, "exact")}


def test_a_new_request_does_not_make_looking_again_legitimate(tmp_path: Path) -> None:
    spec = ("Read", {"file_path": "/home/dev/shop/specs/spec.md"}, "1\t# Spec", False)
    t = _claude(tmp_path, [spec, (USER, {}, "Now update the spec for two winners.", False),
                           spec])
    assert _reps(t) == {1: (0, 0, "exact", True)}


def test_status_in_another_format_is_the_same_check(tmp_path: Path) -> None:
    t = _atif(tmp_path, [_bash("git status", "On branch main\nnothing to commit"),
                         _bash("git status --short 2>&1 | head -20", ""),
                         _bash("git status -sb", "## main")])
    assert {k: v[:3] for k, v in _reps(t).items()} == {1: (0, 0, "same_action"),
                                                       2: (1, 0, "same_action")}


def test_one_listing_filtered_two_ways_repeats_the_listing(tmp_path: Path) -> None:
    t = _atif(tmp_path, [
        _bash("ls -lt /srv/pack/*.pack 2>&1 | head -10", "pack-1.pack\npack-2.pack"),
        _bash('ls -lt /srv/pack/*.pack | wc -l; echo "---"; ls -lt /srv/pack/*.pack | grep Feb',
              "29\n---\npack-1.pack")])
    assert {k: v[:3] for k, v in _reps(t).items()} == {1: (0, 0, "refilter")}


def test_a_readme_that_says_pip_install_is_a_write_not_an_install(tmp_path: Path) -> None:
    from pipeline.detect.actions import analyze

    t = _atif(tmp_path, [_bash("cat <<'EOF' > README.md\nRun `pip install -e .`\nEOF", "")])
    assert [i.cls for i in analyze(t) if i.cls != "none"] == ["write"]


def test_the_same_command_filtered_for_something_else_much_later_is_a_new_question(
        tmp_path: Path) -> None:
    heads = "git ls-remote --heads origin | rg -n "
    calls = [_bash(heads + '"001-scaffold$"', "", True)]
    calls += [_bash(f"cat > f{k}.txt <<'EOF'\n{k}\nEOF", "") for k in range(20)]
    calls += [_bash(heads + '"002-stt-api$"', "", True)]
    assert _reps(_atif(tmp_path, calls)) == {}


def test_reading_a_background_job_output_again_is_polling(tmp_path: Path) -> None:
    out = "/tmp/claude/tasks/b81f2.output"
    t = _claude(tmp_path, [
        ("Bash", {"command": "pnpm --filter api dev", "run_in_background": True},
         "Command running in background with ID: b81f2", False),
        _bash(f"sleep 5 && tail -5 {out}", "compiling...", fmt="claude"),
        _bash(f"tail -5 {out}", "compiling...", fmt="claude"),
        _bash(f'grep -i "error\\|fail" {out} | tail -20', "", fmt="claude"),
        _bash(f'grep -i "error\\|fail" {out} | tail -20', "ERROR boom", fmt="claude")])
    assert _reps(t) == {} and detect_all(t) == []


def test_browser_snapshots_watch_the_page(tmp_path: Path) -> None:
    snap: Call = ("mcp__playwright__browser_snapshot", {}, "- button 'Upload'", False)
    click: Call = ("mcp__playwright__browser_click", {"element": "Upload", "ref": "e12"},
                   "clicked", False)
    t = _claude(tmp_path, [snap, click, snap, snap])
    assert _reps(t) == {} and detect_all(t) == []


def test_starting_a_server_again_after_stopping_it_is_not_waste(tmp_path: Path) -> None:
    start = _bash("pnpm --filter api dev", "Error: listen EADDRINUSE :3000", True, "claude")
    t = _claude(tmp_path, [start, _bash("pkill -f 'nest start'", "", fmt="claude"), start])
    assert _reps(t) == {2: (0, 0, "exact", False)}
    assert detect_all(t) == []


MAKE_ERR = "src/libponyc/expr/match.c:317:1: error: expected declaration\nmake: *** [all] Error 2"


def test_cleaning_the_build_and_failing_the_same_way_is_waste(tmp_path: Path) -> None:
    t = _atif(tmp_path, [_bash("cd /workspace/ponyc && make", MAKE_ERR, True),
                         _bash("cd /workspace/ponyc && make clean && make", MAKE_ERR, True),
                         _bash("rm -rf /workspace/ponyc/build && cd /workspace/ponyc && make",
                               MAKE_ERR, True)])
    assert {k: v[2:] for k, v in _reps(t).items()} == {1: ("rerun", True), 2: ("rerun", True)}
    assert [(f.kind, f.wasted_steps) for f in detect_all(t)] == [("rerun_unchanged", 2)]


def test_cleaning_the_build_after_a_fix_is_not_waste(tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        _bash("make", MAKE_ERR, True, "claude"),
        ("Edit", {"file_path": "/home/dev/shop/src/libponyc/expr/match.c",
                  "old_string": " }", "new_string": "}"}, "The file has been updated.", False),
        _bash("make clean && make", MAKE_ERR, True, "claude")])
    assert _reps(t) == {2: (0, 0, "rerun", False)}
    assert detect_all(t) == []


def test_cleaning_the_build_and_failing_otherwise_is_news(tmp_path: Path) -> None:
    t = _atif(tmp_path, [_bash("make", MAKE_ERR, True),
                         _bash("make clean && make", "ld: cannot find -lLLVM\nError 2", True)])
    assert _reps(t) == {1: (0, 0, "rerun", False)}
    assert detect_all(t) == []


PATCH = ("python3 - <<'PY'\nfrom pathlib import Path\np = Path('shop/money.py')\n"
         "p.write_text(p.read_text().replace('round(v)', 'round(v, 2)'))\nPY")


def test_a_patch_script_is_a_real_edit_in_between(tmp_path: Path) -> None:
    view = _bash("nl -ba shop/money.py | sed -n '1,40p'", "1 def total(v):")
    t = _atif(tmp_path, [view, _bash(PATCH, ""), view])
    assert _reps(t) == {2: (0, 0, "exact", False)}
    assert detect_all(t) == []


def test_a_patch_script_file_run_later_is_a_real_edit(tmp_path: Path) -> None:
    body = PATCH.split("\n", 1)[1].rsplit("\n", 1)[0]
    view = _bash("cat shop/money.py", "def total(v):\n    return round(v)")
    t = _atif(tmp_path, [view, _bash(f"cat > fix.py <<'EOF'\n{body}\nEOF", ""),
                         _bash("python3 fix.py", ""), view])
    assert _reps(t) == {3: (0, 0, "exact", False)}
    assert detect_all(t) == []


def test_a_script_that_only_reads_changes_nothing(tmp_path: Path) -> None:
    view = _bash("cat shop/money.py", "def total(v):\n    return round(v)")
    check = "python3 - <<'PY'\nimport py_compile\npy_compile.compile('shop/money.py')\nPY"
    t = _atif(tmp_path, [view, _bash(check, ""), view])
    assert _reps(t) == {2: (0, 0, "exact", True)}


def test_clearing_output_then_running_is_a_run(tmp_path: Path) -> None:
    from pipeline.detect.actions import analyze

    t = _atif(tmp_path, [_bash("rm -rf packages/core/dist && bun run typecheck", "ok"),
                         _bash("rm -rf node_modules/.cache/turbo && bun run typecheck", "ok")])
    assert [i.cls for i in analyze(t) if i.cls != "none"] == ["run", "run"]
    # A repeat; passing after clearing output is not called waste when the run really ran
    # (only a run replayed from its cache, or the same failure, is: test_detect_answered.py).
    assert {k: v[2:] for k, v in _reps(t).items()} == {1: ("rerun", False)}


def test_sibling_packages_that_look_alike_are_two_folders(tmp_path: Path) -> None:
    small = "package.json\nsrc\ntsconfig.json\n"
    t = _atif(tmp_path, [_bash("ls packages/core", small), _bash("ls packages/cli", small)])
    assert _reps(t) == {}


def test_a_long_output_codex_clipped_covers_only_its_head(tmp_path: Path) -> None:
    clipped = "Total output lines: 321\n\n240 a\n[... omitted 65 of 321 lines ...]\n560 z"
    t = _atif(tmp_path, [_bash("sed -n '240,560p' app.js", clipped),
                         _bash("sed -n '352,440p' app.js", "352 x"),
                         _bash("sed -n '250,300p' app.js", "250 y")])
    assert {k: v[2:] for k, v in _reps(t).items()} == {2: ("reread", True)}


def test_another_path_to_the_same_binary_is_the_same_run(tmp_path: Path) -> None:
    err = "src/cli.ts(3,1): error TS2304: Cannot find name 'x'."
    t = _atif(tmp_path, [_bash("npx tsc -p tsconfig.json --noEmit", err, True),
                         _bash("./node_modules/.bin/tsc -p tsconfig.json --noEmit", err, True),
                         _bash("./mvnw test -Dtest=ReproTest", err, True),
                         _bash("export JAVA_HOME=/usr/lib/jvm/java-11 && mvn test -Dtest=ReproTest",
                               err, True)])
    assert {k: v[2:] for k, v in _reps(t).items()} == {1: ("same_action", True),
                                                       3: ("rerun", True)}
