"""Settled questions and what leaves files as they were (issue 12, fifth round).

Classes people mark wasted in long Codex spec-kit sessions, each with its exemption, written as
small Codex rollouts read by the real adapter: a file named by its absolute path under a
session folder that a sandbox pattern would cut short, a view after git bookkeeping, a file
written again byte for byte, a view after a patch Codex refused, a ``git switch`` refused
again after commits, an install re-run that changed nothing, and a repository question git
already answered.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from _detect_helpers import codex_rollout, exec_output

from pipeline.detect import detect_all
from pipeline.detect.actions import analyze
from pipeline.detect.effects import keeps_tree
from pipeline.model import Trajectory

# Deeper than the `/home/<user>/<folder>` sandbox pattern: relative paths are relative to it.
CWD = "/home/dev/misc/voice"
PLAN = "sed -n '1,120p' specs/001-api/plan.md"
PLAN_TEXT = "# Plan: API\n\n## Summary\nOne endpoint.\n## Phases\n1. Health check"
HEALTH = ("cat <<'EOF' > backend/app/api/health.py\nfrom fastapi import APIRouter\n\n"
          "router = APIRouter()\n\n\n@router.get('/health')\ndef health() -> dict[str, str]:\n"
          "    return {'status': 'ok'}\nEOF")
COMMITTED = "[001-api 5c2031e] docs: plan\n 1 file changed, 12 insertions(+)"
HOOKED = ("ruff-format..............................................................Failed\n"
          "- hook id: ruff-format\n- files were modified by this hook\n\n1 file reformatted")
SWITCH = "git switch main"
DIRTY = ("error: Your local changes to the following files would be overwritten by checkout:\n"
         "\t.codex/history.jsonl\n\t.codex/sessions/2026/02/09/rollout.jsonl\n"
         "Please commit your changes or stash them before you switch branches.\nAborting")
SYNCED = ("Resolved 29 packages in 123ms\nPrepared 4 packages in 97ms\nInstalled 2 packages in "
          "18ms\n + httpx==0.28.1\n + openai==2.14.0")
AUDITED = "Resolved 29 packages in 0.66ms\nAudited 21 packages in 0.22ms"
NO_REPO = "fatal: not a git repository (or any of the parent directories): .git"


def _patch(path: str, old: str, new: str) -> str:
    return (f"apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n"
            f"+{new}\n*** End Patch\nPATCH")


REFUSED_PATCH = ("apply_patch verification failed: Failed to find expected lines in "
                 f"{CWD}/specs/001-api/plan.md:\nTwo endpoints.")
APPLIED = "Success. Updated the following files:\nM specs/001-api/plan.md"


def _codex(tmp_path: Path, calls: list[Any]) -> Trajectory:
    """A Codex CLI rollout of ``exec_command`` calls; a plain string is a person's turn.

    A call is ``(cmd, exit code, output)``, with a dict of more arguments as a fourth item.
    """
    return codex_rollout(tmp_path / "rollout-2026-02-09T23-41-33-019c44c8.jsonl", [
        c if isinstance(c, str) else (c[0], exec_output(k, c[1], c[2]), *c[3:])
        for k, c in enumerate(calls)], cwd=CWD, task="Plan the API feature.",
        session_id="019c44c8-0000-7000-8000-00000000f00d")


def _wasted(t: Trajectory) -> dict[int, str]:
    pos = {s.source_id: k for k, s in enumerate(s for s in t.steps if s.kind == "tool")}
    return {pos[s]: f.kind for f in detect_all(t) for s in f.wasted_source_ids}


# ---- the session's folder names a file before any sandbox pattern ----------------------------

def test_a_file_named_by_its_absolute_path_under_the_session_folder_is_the_same_file(
        tmp_path: Path) -> None:
    t = _codex(tmp_path, [(PLAN, 0, PLAN_TEXT),
                          (f"sed -n '1,120p' {CWD}/specs/001-api/plan.md", 0, PLAN_TEXT)])
    infos = analyze(t)
    assert [i.paths for i in infos if i.cls == "read"] == [("specs/001-api/plan.md",)] * 2
    assert _wasted(t) == {1: "reread"}


def test_an_edit_named_by_the_absolute_path_changes_the_relative_view(tmp_path: Path) -> None:
    t = _codex(tmp_path, [
        (PLAN, 0, PLAN_TEXT),
        (_patch(f"{CWD}/specs/001-api/plan.md", "One endpoint.", "Two endpoints."), 0, APPLIED),
        (PLAN, 0, PLAN_TEXT.replace("One", "Two")),
    ])
    assert _wasted(t) == {}


# ---- git bookkeeping leaves the working tree as it was ---------------------------------------

def test_a_view_after_only_git_add_and_commit_is_a_re_read(tmp_path: Path) -> None:
    t = _codex(tmp_path, [(PLAN, 0, PLAN_TEXT), ("git add specs/001-api/plan.md", 0, ""),
                          ('git commit -m "docs: plan"', 0, COMMITTED), "Commit it, then go on.",
                          (PLAN, 0, PLAN_TEXT)])
    infos = analyze(t)
    assert [keeps_tree(t.steps[k], infos[k]) for k in range(len(infos))
            if infos[k].cls == "vcs"] == [True, True]
    assert _wasted(t) == {3: "reread"}


def test_a_commit_whose_hooks_rewrote_files_changes_them(tmp_path: Path) -> None:
    t = _codex(tmp_path, [(PLAN, 0, PLAN_TEXT), ("git add -A", 0, ""),
                          ('git commit -m "docs: plan"', 0, HOOKED + "\n" + COMMITTED),
                          (PLAN, 0, PLAN_TEXT)])
    assert _wasted(t) == {}


def test_a_commit_message_that_mentions_hooks_or_fixes_keeps_the_tree(tmp_path: Path) -> None:
    msgs = ("Fixed typo in plan", "add webhook handler", "feat: useHook for state",
            "chore: pre-commit config")
    calls = [(f'git commit -m "{m}"', 0, f"[001-api 5c2031e] {m}\n 1 file changed, 2 "
              "insertions(+)\n create mode 100644 specs/hooks.md") for m in msgs]
    calls.append(('git commit -m "docs: plan"', 0, "husky - pre-commit hook exited with code 0"
                  "\n[001-api 5c2031e] docs: plan\n 1 file changed, 2 insertions(+)"))
    t = _codex(tmp_path, calls)
    infos = analyze(t)
    assert [keeps_tree(s, i) for s, i in zip(t.steps, infos, strict=True)
            if i.cls == "vcs"] == [True, True, True, True, False]


# ---- a file written again byte for byte ------------------------------------------------------

def test_a_file_written_again_byte_for_byte_is_wasted(tmp_path: Path) -> None:
    t = _codex(tmp_path, [(HEALTH, 0, ""), ("cat <<'EOF' > backend/app/main.py\napp = 1\nEOF", 0,
                                            ""), ("git add backend && git commit -m api", 0,
                                                  COMMITTED), (HEALTH, 0, "")])
    # A `.py` written by a here-document is a script (``scripts.py``): written again unchanged.
    assert _wasted(t) == {3: "rerun_unchanged"}
    doc = HEALTH.replace("backend/app/api/health.py", ".gitignore")
    t = _codex(tmp_path, [(doc, 0, ""), ("git add -A && git commit -m ignore", 0, COMMITTED),
                          (doc, 0, "")])
    assert _wasted(t) == {2: "exact_repeat"}


def test_a_file_written_with_other_content_between_is_written_anew(tmp_path: Path) -> None:
    doc = HEALTH.replace("backend/app/api/health.py", ".gitignore")
    other = doc.replace("'ok'", "'ready'")
    t = _codex(tmp_path, [(doc, 0, ""), (other, 0, ""), (doc, 0, "")])
    assert _wasted(t) == {}


def test_a_write_refused_for_a_missing_folder_sent_after_mkdir_is_not_wasted(
        tmp_path: Path) -> None:
    missing = f"/bin/bash: line 1: {CWD}/backend/app/api/health.py: No such file or directory"
    t = _codex(tmp_path, [(HEALTH, 1, missing), ("mkdir -p backend/app/api", 0, ""),
                          (HEALTH, 0, "")])
    assert _wasted(t) == {}


# ---- a patch Codex refused wrote nothing ------------------------------------------------------

def test_a_view_after_a_refused_patch_is_a_re_read(tmp_path: Path) -> None:
    t = _codex(tmp_path, [(PLAN, 0, PLAN_TEXT),
                          (_patch("specs/001-api/plan.md", "Two endpoints.", "Three."), 0,
                           REFUSED_PATCH),
                          (PLAN, 0, PLAN_TEXT)])
    infos = analyze(t)
    assert (infos[1].cls, infos[1].failed, infos[1].paths) == (
        "edit", True, ("specs/001-api/plan.md",))
    assert _wasted(t) == {2: "reread"}


def test_a_patch_that_applies_after_a_refused_one_and_a_view_answers_it(
        tmp_path: Path) -> None:
    refused = _patch("specs/001-api/plan.md", "Two endpoints.", "Three.")
    t = _codex(tmp_path, [(refused, 0, REFUSED_PATCH), (PLAN, 0, PLAN_TEXT),
                          (_patch("specs/001-api/plan.md", "One endpoint.", "Three."), 0,
                           APPLIED)])
    assert _wasted(t) == {}


def test_a_patch_refused_again_with_the_file_unchanged_is_a_failed_edit_retried(
        tmp_path: Path) -> None:
    refused = _patch("specs/001-api/plan.md", "Two endpoints.", "Three.")
    t = _codex(tmp_path, [(refused, 0, REFUSED_PATCH),
                          (refused.replace("Three.", "Three endpoints."), 0, REFUSED_PATCH)])
    assert _wasted(t) == {1: "edit_retry"}


# ---- settled: refused again after bookkeeping ------------------------------------------------

def test_a_switch_refused_again_after_only_commits_is_wasted(tmp_path: Path) -> None:
    t = _codex(tmp_path, [(SWITCH, 1, DIRTY), "2", ("git add .codex", 0, ""),
                          ('git commit -m "chore: codex"', 0, COMMITTED),
                          ("git push", 0, "To github.com:dev/voice.git\n   5c2031e..e3ac354"),
                          (SWITCH, 1, DIRTY), "2", ("git add .codex", 0, ""),
                          ('git commit -m "chore: codex"', 0, COMMITTED), (SWITCH, 1, DIRTY)])
    assert {k: v for k, v in _wasted(t).items() if v == "exact_repeat"} == {
        4: "exact_repeat", 7: "exact_repeat"}
    assert [f.summary for f in detect_all(t) if f.kind == "exact_repeat"] == [
        "`git switch main` refused again with the same error: only git bookkeeping came "
        "between (2x)"]


def test_a_switch_after_a_stash_or_an_edit_is_a_new_attempt(tmp_path: Path) -> None:
    t = _codex(tmp_path, [(SWITCH, 1, DIRTY), ("git stash -u", 0, "Saved working directory"),
                          (SWITCH, 1, DIRTY), (HEALTH, 0, ""), (SWITCH, 1, DIRTY)])
    assert _wasted(t) == {}


# ---- settled: an install that changed nothing -------------------------------------------------

def test_an_install_re_run_that_changed_nothing_after_code_edits_is_wasted(
        tmp_path: Path) -> None:
    t = _codex(tmp_path, [("uv sync", 0, SYNCED), (HEALTH, 0, ""), "Run the tests.",
                          ("uv sync", 0, AUDITED)])
    assert _wasted(t) == {2: "rerun_unchanged"}
    assert [f.summary for f in detect_all(t)] == [
        "`uv sync` run again with no manifest, lock or environment change: it changed nothing "
        "(it printed `Audited 21 packages in 0.22ms`) (1x)"]


def test_an_install_after_its_manifest_changed_is_not_wasted(tmp_path: Path) -> None:
    t = _codex(tmp_path, [("uv sync", 0, SYNCED),
                          (_patch("backend/pyproject.toml", 'dependencies = []',
                                  'dependencies = ["openai"]'), 0,
                           "Success. Updated the following files:\nM backend/pyproject.toml"),
                          ("uv sync", 0, AUDITED)])
    assert _wasted(t) == {}


# ---- settled: is this a repository ------------------------------------------------------------

def test_a_git_check_after_git_said_there_is_no_repository_is_wasted(tmp_path: Path) -> None:
    t = _codex(tmp_path, [("git status -sb", 128, NO_REPO), (HEALTH, 0, ""),
                          ("git rev-parse --git-dir", 128, NO_REPO)])
    assert _wasted(t) == {2: "near_repeat"}


def test_whether_it_is_a_repository_after_git_worked_is_wasted(tmp_path: Path) -> None:
    t = _codex(tmp_path, [("git status -sb", 0, "## main\n?? .codex/"), (HEALTH, 0, ""),
                          ("git rev-parse --git-dir 2>/dev/null", 0, ".git"),
                          ("git log --oneline -n 3", 0, "5c2031e docs: plan")])
    # Only the question itself is settled by a git command that worked.
    assert _wasted(t) == {2: "near_repeat"}
    # The summary names the step that asked again, then the one that had answered.
    assert [f.summary for f in detect_all(t)] == [
        "`git rev-parse --git-dir 2>/dev/null` asked whether this is a git repository; "
        "`git status -sb` at #0 had already shown it is, and nothing since made or removed "
        "one (1x)"]


def test_git_commands_that_need_no_repository_answer_nothing(tmp_path: Path) -> None:
    for k, first in enumerate(("git --version", "git config --global user.name",
                               "git help status", "git ls-remote https://github.com/me/v.git")):
        folder = tmp_path / str(k)
        folder.mkdir()
        t = _codex(folder, [(first, 0, "git version 2.43.0"),
                            ("git rev-parse --show-toplevel", 128, NO_REPO)])
        assert _wasted(t) == {}, first


def test_whether_another_folder_is_a_repository_is_another_question(tmp_path: Path) -> None:
    t = _codex(tmp_path, [("git status", 128, NO_REPO),
                          ("git -C vendor/lib status", 0, "On branch main\nnothing to commit"),
                          ("cd packages/lib && git log --oneline -3", 0, "abc1234 init"),
                          ("git -C packages/lib rev-parse --git-dir", 0, ".git"),
                          ("git rev-parse --is-inside-work-tree", 128, NO_REPO)])
    # Only the last two ask what an earlier step showed about their own folder.
    assert _wasted(t) == {3: "near_repeat", 4: "near_repeat"}


def test_git_init_changes_the_answer(tmp_path: Path) -> None:
    t = _codex(tmp_path, [("git status -sb", 128, NO_REPO), ("git init", 0, "Initialized"),
                          ("git rev-parse --git-dir", 0, ".git")])
    assert _wasted(t) == {}


# ---- an install changes its environment and lock, not the project's documents ----------------

def test_a_view_after_an_install_is_a_re_read(tmp_path: Path) -> None:
    t = _codex(tmp_path, [(PLAN, 0, PLAN_TEXT), ("uv sync", 0, SYNCED), (PLAN, 0, PLAN_TEXT)])
    assert _wasted(t) == {2: "reread"}


def test_the_lock_file_after_an_install_is_read_anew(tmp_path: Path) -> None:
    lock = "sed -n '1,40p' uv.lock"
    t = _codex(tmp_path, [(lock, 0, "version = 1\n[[package]]\nname = \"httpx\""),
                          ("uv sync", 0, SYNCED),
                          (lock, 0, "version = 1\n[[package]]\nname = \"openai\"")])
    assert _wasted(t) == {}


# ---- answers to the error the last call got --------------------------------------------------

def test_a_listing_with_hidden_names_after_an_empty_one_is_new(tmp_path: Path) -> None:
    t = _codex(tmp_path, [("ls", 0, ""), ("ls -a", 0, ".\n..\n.codex\n.specify")])
    assert _wasted(t) == {}
    t = _codex(tmp_path, [("ls -a", 0, ".\n..\n.codex"), ("ls -la", 0, ".\n..\n.codex")])
    assert _wasted(t) == {1: "near_repeat"}


SCRIPT = ("{} - <<'PY'\nfrom pathlib import Path\np = Path('specs/001-api/spec.md')\n"
          "s = p.read_text()\ns = s.replace('One endpoint.', 'Two endpoints.')\n"
          "p.write_text(s)\nprint('patched')\nPY")


def test_a_script_sent_through_another_interpreter_after_command_not_found_is_not_wasted(
        tmp_path: Path) -> None:
    gone = "/bin/bash: line 1: python: command not found"
    t = _codex(tmp_path, [(SCRIPT.format("python"), 127, gone),
                          (SCRIPT.format("python3"), 0, "patched")])
    assert _wasted(t) == {}
    t = _codex(tmp_path, [(SCRIPT.format("python"), 127, gone),
                          (SCRIPT.format("python "), 127, gone)])
    assert _wasted(t) == {1: "edit_retry"}


def test_the_same_program_behind_cd_or_an_assignment_is_not_another_program(
        tmp_path: Path) -> None:
    gone = "/bin/bash: line 1: python: command not found"
    # A script behind an assignment is read as a run, not an edit: a rerun either way.
    for k, (again, kind) in enumerate(((f"cd {CWD} && " + SCRIPT.format("python"), "edit_retry"),
                                       (SCRIPT.format("PYTHONPATH=. python"), "rerun_unchanged"))):
        folder = tmp_path / str(k)
        folder.mkdir()
        t = _codex(folder, [(SCRIPT.format("python"), 127, gone), (again, 127, gone)])
        assert _wasted(t) == {1: kind}, again
    t = _codex(tmp_path, [("python tests/smoke.py", 127, gone),
                          ("cd backend && PYTHONPATH=. python tests/smoke.py", 127, gone)])
    assert _wasted(t) == {1: "rerun_unchanged"}


LS_REMOTE = "git ls-remote --heads origin | rg -n 'refs/heads/001-api$'"
NO_DNS = "ssh: Could not resolve hostname github.com: Temporary failure in name resolution"


def test_a_call_sent_again_outside_the_sandbox_after_it_failed_is_not_wasted(
        tmp_path: Path) -> None:
    t = _codex(tmp_path, [(LS_REMOTE, 1, NO_DNS),
                          (LS_REMOTE, 1, "", {"sandbox_permissions": "require_escalated"})])
    assert _wasted(t) == {}
    t = _codex(tmp_path, [(LS_REMOTE, 1, NO_DNS), (LS_REMOTE, 1, NO_DNS)])
    assert list(_wasted(t)) == [1]  # inside the sandbox again: the same failure


def test_a_range_whose_last_line_is_empty_did_not_reach_the_end(tmp_path: Path) -> None:
    rows = "line 1\nline 2\nline 3\n"
    t = _codex(tmp_path, [("sed -n '1,4p' app.js", 0, rows),  # line 4 is empty
                          ("sed -n '5,8p' app.js", 0, "line 5\nline 6\nline 7\nline 8")])
    assert [i.to_end for i in analyze(t)] == [False, False]
    assert _wasted(t) == {}
    t = _codex(tmp_path, [("sed -n '1,8p' app.js", 0, rows.rstrip("\n")),
                          ("sed -n '5,8p' app.js", 0, "")])
    assert [i.to_end for i in analyze(t)] == [True, False]


# ---- a listing of names changes only when a name comes or goes --------------------------------

LS = ("ls -a", 0, ".\n..\n.codex\n.git\n.specify")


def test_a_listing_after_only_edits_of_existing_files_is_wasted(tmp_path: Path) -> None:
    t = _codex(tmp_path, [LS, (_patch("specs/001-api/plan.md", "One endpoint.", "Two."), 0,
                               APPLIED), ('git add -A && git commit -m plan', 0, COMMITTED),
                          "Next feature.", LS])
    assert _wasted(t) == {3: "exact_repeat"}


def test_a_listing_after_a_file_was_written_is_asked_anew(tmp_path: Path) -> None:
    t = _codex(tmp_path, [LS, ("cat <<'EOF' > notes.md\ntodo\nEOF", 0, ""), LS])
    assert _wasted(t) == {}
