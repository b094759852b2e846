"""Traps people wrote playbooks about, as general rules, from ATIF and Claude Code logs.

Each class is one hand-written example's shape (``../shared/playbook-examples``), rebuilt
here with other files and commands: a harness usage rule refused twice in a row, a failing
run repeated after an install that changed nothing, a here-document script that never ran
resubmitted, and a user's refusal worked around. Each has its exemption beside it.
"""

from __future__ import annotations

import json
from pathlib import Path

from _detect_helpers import USER, Call, atif_doc, claude_lines, parse_log

from pipeline.detect import annotate_repeats, detect_all
from pipeline.model import Trajectory

NOT_READ = ("<tool_use_error>File has not been read yet. Read it first before writing to it."
            "</tool_use_error>")
REFUSED = ("The user doesn't want to proceed with this tool use. The tool use was rejected "
           "(eg. if it was a file edit, the new_string was NOT written to the file). To tell "
           "you how to proceed, the user said:\n{}")
SPAWN = ("Exit code: 2\nWall time: 0 seconds\nOutput:\nerror: Failed to spawn: `ruff`\n"
         "  Caused by: No such file or directory (os error 2)\n")
HEREDOC = ("cp shop/cart.py shop/cart.py.bak && python - <<'PY'\nfrom pathlib import Path\n"
           "p = Path('shop/cart.py')\ns = p.read_text()\n{guard}s = s.replace('total = 0', "
           "'total = 0.0')\np.write_text(s)\nPY && python - <<'PY'\nfrom shop.cart import "
           "total\nprint(total([]))\nPY")
NEVER_RAN = ("  File \"<stdin>\", line {}\n    PY && python - <<'PY'\n        ^\n"
             "SyntaxError: invalid syntax")


def _atif(tmp_path: Path, calls: list[Call]) -> Trajectory:
    path = tmp_path / "run.atif.json"
    path.write_text(json.dumps(atif_doc(calls)), encoding="utf-8")
    return parse_log(path)


def _claude(tmp_path: Path, calls: list[Call]) -> Trajectory:
    folder = tmp_path / ".claude" / "projects" / "-home-dev-shop"
    folder.mkdir(parents=True)
    path = folder / "7d1c0b7e-0000-4000-8000-00000000c0de.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in claude_lines(calls)),
                    encoding="utf-8")
    return parse_log(path)


def _found(t: Trajectory) -> list[tuple[str, list[int]]]:
    """(family, wasted tool-step positions) of every finding."""
    pos = {s.source_id: k for k, s in enumerate(s for s in t.steps if s.kind == "tool")}
    return [(f.kind, sorted(pos[s] for s in f.wasted_source_ids)) for f in detect_all(t)]


def _write(path: str, out: str = "File created successfully", failed: bool = False) -> Call:
    return ("Write", {"file_path": f"/home/dev/shop/{path}", "content": f"// {path}\n"}, out,
            failed)


def _edit(old: str, new: str, out: str, failed: bool = False) -> Call:
    return ("Edit", {"file_path": "/home/dev/shop/scripts/release.sh", "old_string": old,
                     "new_string": new}, out, failed)


# ---- a harness usage rule refused again (EX-04: Write before Read, on two files) ----

def test_the_same_harness_rule_refused_twice_in_a_row_is_one_trap(tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        _write("docs/site.toml"),
        _write("docs/src/render.ts", NOT_READ, True),
        _write("docs/functions/proxy.ts", NOT_READ, True),
        ("Bash", {"command": "ls docs/src/", "description": "look"}, "render.ts", False),
    ])
    assert _found(t) == [("rule_refusal", [2])]
    f = detect_all(t)[0]
    assert f.summary == "write refused 2x in a row for one harness rule (read-before-write)"
    # Another file each time: a repeated mistake, not a repeated action.
    assert [r.step for r in annotate_repeats(t)] == []


def test_a_rule_refusal_followed_by_a_read_is_not_a_trap(tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        _write("docs/src/render.ts", NOT_READ, True),
        ("Read", {"file_path": "/home/dev/shop/docs/src/render.ts"}, "1\u2192export {}", False),
        _write("docs/functions/proxy.ts", NOT_READ, True),
    ])
    assert _found(t) == []


# ---- a failing run repeated after an install that changed nothing (EX-05: `uv sync`) ----

def _uv(sync_out: str) -> list[Call]:
    return [("bash", {"command": "uv run ruff check ."}, SPAWN, True),
            ("bash", {"command": "uv sync"}, sync_out, False),
            ("bash", {"command": "uv run ruff check ."}, SPAWN, True)]


def test_a_failing_run_after_a_no_op_sync_is_a_rerun(tmp_path: Path) -> None:
    t = _atif(tmp_path, _uv("Exit code: 0\nWall time: 0 seconds\nOutput:\n"
                            "Resolved 29 packages in 0.66ms\nAudited 21 packages in 0.22ms\n"))
    assert _found(t) == [("rerun_unchanged", [2])]


def test_pip_that_found_everything_satisfied_changed_nothing(tmp_path: Path) -> None:
    out = ("Requirement already satisfied: ruff in ./.venv/lib/python3.12/site-packages "
           "(0.6.9)\nRequirement already satisfied: pytest in ./.venv/lib/python3.12/"
           "site-packages (8.3.3)\n")
    calls = _uv(out)
    calls[1] = ("bash", {"command": "pip install ruff pytest"}, out, False)
    assert _found(_atif(tmp_path, calls)) == [("rerun_unchanged", [2])]


def test_a_sync_that_installed_something_may_fix_the_run(tmp_path: Path) -> None:
    t = _atif(tmp_path, _uv("Resolved 29 packages in 0.66ms\nInstalled 2 packages in 3ms\n"
                            " + pytest==8.3.3\n + ruff==0.6.9\n"))
    assert _found(t) == []


# ---- a here-document script that never ran, resubmitted (EX-07) ----

def test_a_heredoc_script_that_never_parsed_resubmitted_is_wasted(tmp_path: Path) -> None:
    first = HEREDOC.format(guard="")
    guarded = HEREDOC.format(guard="if 'total = 0.0' in s:\n    raise SystemExit('done')\n")
    t = _atif(tmp_path, [
        ("bash", {"command": "grep -n 'total = 0' shop/cart.py"}, "12:    total = 0", False),
        ("bash", {"command": first}, NEVER_RAN.format(8), True),
        ("bash", {"command": first}, NEVER_RAN.format(8), True),
        ("bash", {"command": guarded}, NEVER_RAN.format(10), True),
    ])
    # The backup `cp` made again copies the unchanged file: nothing changed between tries.
    assert _found(t) == [("exact_repeat", [2, 3])]


def test_a_heredoc_script_that_ran_and_wrote_the_file_is_a_change(tmp_path: Path) -> None:
    ran = ("Traceback (most recent call last):\n  File \"<stdin>\", line 5, in <module>\n"
           "ValueError: cart is empty")
    first = HEREDOC.format(guard="")
    guarded = HEREDOC.format(guard="if 'total = 0.0' in s:\n    raise SystemExit('done')\n")
    t = _atif(tmp_path, [
        ("bash", {"command": "grep -n 'total = 0' shop/cart.py"}, "12:    total = 0", False),
        ("bash", {"command": first}, ran, True),
        ("bash", {"command": first}, ran, True),
        ("bash", {"command": guarded}, ran, True),
    ])
    # The script ran up to its error: it rewrote shop/cart.py, so the variant after it is a
    # new attempt on a changed file (the identical resubmission still repeats it).
    assert _found(t) == [("exact_repeat", [2])]


# ---- a user's refusal worked around (EX-08) ----

OLD = "git add .gitignore\ngit commit -m release"


def test_a_refused_edit_resubmitted_in_another_form_is_a_trap(tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        (USER, {}, "Dropping `git add dist/manifest.json` is wrong, the manifest must be "
                   "committed", False),
        _edit(OLD, "git add .gitignore dist/manifest.json\ngit commit -m release",
              REFUSED.format("why not run the build first?"), True),
        ("Grep", {"pattern": "manifest", "path": "/home/dev/shop/src"}, "src/build.ts:4",
         False),
        _edit(OLD, "git add .gitignore dist/\ngit commit -m release", "The file has been "
              "updated.", False),
        ("Bash", {"command": "./scripts/release.sh", "description": "run"},
         "fatal: pathspec 'dist/manifest.json' did not match any files", True),
        _edit("git add .gitignore dist/\n", "git add .gitignore\n",
              REFUSED.format("why not make the build write the manifest?"), True),
        ("Edit", {"file_path": "/home/dev/shop/src/build.ts", "old_string": "emit()",
                  "new_string": "emit(); writeManifest()"}, "The file has been updated.",
         False),
        _edit("git add .gitignore dist/\n", "git add .gitignore dist/manifest.json\n",
              "The file has been updated.", False),
    ])
    assert _found(t) == [("refused_resubmit", [2, 4])]
    f = detect_all(t)[0]
    assert f.summary == ("`scripts/release.sh`: refused by the user 2x and resubmitted in "
                         "another form 2x")


def test_doing_what_the_refusal_asked_is_not_a_trap(tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        _edit(OLD, "git add .gitignore dist/\ngit commit -m release",
              REFUSED.format("keep the commit message as it is, add dist/manifest.json"), True),
        _edit(OLD, "git add .gitignore dist/manifest.json\ngit commit -m release",
              "The file has been updated.", False),
    ])
    assert _found(t) == []


def test_a_persons_new_turn_after_a_refusal_starts_over(tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        _edit(OLD, "git add dist/\ngit commit -m release", REFUSED.format("wait"), True),
        (USER, {}, "ok, now change the release script to add dist/", False),
        _edit(OLD, "git add dist/ build/\ngit commit -m release",
              REFUSED.format("not like this"), True),
    ])
    assert _found(t) == []
