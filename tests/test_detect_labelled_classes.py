"""Repetition classes read from the labelled sessions, each with its exemption.

Every test writes a small log in a real format (a Codex rollout, old or new, or a Claude Code
session), reads it with the real adapters and checks what ``annotate_repeats`` and
``detect_all`` say: the rule that made a labelled repeat found, and the case next to it that
people did not count.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _detect_helpers import Call, claude_lines, codex_rollout, lines, parse_log

from pipeline.detect import annotate_repeats, detect_all
from pipeline.model import Trajectory

CWD = "/home/dev/shop"


def _codex(tmp_path: Path, calls: list[tuple[str, str]]) -> Trajectory:
    """A Codex CLI rollout (0.98 shape): ``exec_command`` calls, outputs with the exec header."""
    return codex_rollout(tmp_path / "rollout-2026-02-09T23-41-33-019c44c8.jsonl", list(calls),
                         cwd=CWD, task="Implement the plan.")


def _codex_old(tmp_path: Path, calls: list[tuple[str, str]]) -> Trajectory:
    """An older Codex rollout (2025-09 shape): argv ``shell`` calls, JSON outputs."""
    rows: list[dict[str, Any]] = [
        {"id": "5dcebca3-0000-4000-8000-00000000c0de", "timestamp": "2025-09-07T01:30:59.205Z",
         "instructions": None},
        {"record_type": "state"},
        {"type": "message", "id": None, "role": "user",
         "content": [{"type": "input_text", "text": "Read the app and tell me what it does."}]},
    ]
    for k, (cmd, out) in enumerate(calls):
        call_id = f"call_{k:04d}"
        rows.append({"type": "function_call", "id": f"fc_{k}", "name": "shell",
                     "arguments": json.dumps({"command": ["bash", "-lc", cmd]}),
                     "call_id": call_id})
        rows.append({"type": "function_call_output", "call_id": call_id, "output": json.dumps(
            {"output": out, "metadata": {"exit_code": 0, "duration_seconds": 0.0}})})
    path = tmp_path / "rollout-2025-09-07T01-30-59-5dcebca3.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return parse_log(path)


def _exec(out: str, total: int | None = None) -> str:
    """Codex's exec header in front of what the command printed (a new chunk id each call)."""
    _exec.calls = getattr(_exec, "calls", 0) + 1  # type: ignore[attr-defined]
    shown = f"Total output lines: {total}\n\n" if total else ""
    return (f"Chunk ID: {_exec.calls:06x}\nWall time: 0.0508 seconds\n"  # type: ignore[attr-defined]
            f"Process exited with code 0\nOriginal token count: 900\nOutput:\n{shown}{out}\n")


def _reps(t: Trajectory) -> dict[int, tuple[int, str, bool]]:
    """Tool-step position -> (position repeated, kind, wasted)."""
    pos = {s.index: k for k, s in enumerate(s for s in t.steps if s.kind == "tool")}
    return {pos[r.step]: (pos[r.repeat_of_step], r.kind, r.wasted) for r in annotate_repeats(t)}


def _wasted(t: Trajectory) -> list[int]:
    pos = {s.source_id: k for k, s in enumerate(s for s in t.steps if s.kind == "tool")}
    return sorted(pos[s] for f in detect_all(t) for s in f.wasted_source_ids)


SPEC = "\n".join(f"spec line {n}" for n in range(1, 121))
NUMBERED = "\n".join(f"{n:6}\tspec line {n}" for n in range(1, 121))


# ---- Codex's exec header is not the file ------------------------------------------------------

def test_codex_reread_with_line_numbers_is_a_wasted_reread(tmp_path: Path) -> None:
    # The same spec shown again through `nl -ba`: each call has its own chunk id and wall
    # time, and the second view numbers its lines, yet it is the same text.
    t = _codex(tmp_path, [("sed -n '1,200p' specs/011/spec.md", _exec(SPEC)),
                          ("rg -n '^#' specs/011/plan.md", _exec("1:# Plan")),
                          ("nl -ba specs/011/spec.md | sed -n '1,200p'", _exec(NUMBERED))])
    assert _reps(t) == {2: (0, "reread", True)}
    assert [f.kind for f in detect_all(t)] == ["reread"] and _wasted(t) == [2]


def test_codex_view_of_a_changed_file_is_not_a_reread(tmp_path: Path) -> None:
    changed = SPEC.replace("spec line 7", "spec line seven")
    t = _codex(tmp_path, [("sed -n '1,200p' specs/011/spec.md", _exec(SPEC)),
                          ("sed -n '1,200p' specs/011/spec.md", _exec(changed))])
    assert detect_all(t) == []


# ---- a range that reached the end of the file showed all of it -------------------------------

def test_whole_file_read_after_a_range_that_reached_its_end(tmp_path: Path) -> None:
    # `sed -n '1,160p'` printed 120 lines: the file ends there, so `nl -ba` of the whole
    # file showed nothing new.
    t = _codex(tmp_path, [("sed -n '1,160p' specs/005/plan.md", _exec(SPEC)),
                          ("nl -ba specs/005/plan.md", _exec(NUMBERED))])
    assert _reps(t) == {1: (0, "reread", True)} and _wasted(t) == [1]


def test_whole_file_read_after_a_full_range_is_new(tmp_path: Path) -> None:
    # The range printed every line it asked for: the file may go on.
    t = _codex(tmp_path, [("sed -n '1,120p' specs/005/plan.md", _exec(SPEC)),
                          ("nl -ba specs/005/plan.md", _exec(NUMBERED + "\n   121\tmore"))])
    assert _reps(t) == {} and detect_all(t) == []


# ---- the middle of a long output Codex did not show ------------------------------------------

def test_codex_paging_into_the_middle_it_withheld(tmp_path: Path) -> None:
    # "Total output lines" after the exec header: Codex showed the model head and tail only.
    t = _codex(tmp_path, [("sed -n '1,400p' app.js", _exec(lines(1, 40), total=400)),
                          ("sed -n '200,260p' app.js", _exec(lines(200, 260))),
                          ("sed -n '1,60p' app.js", _exec(lines(1, 60)))])
    # The middle was new; the head again is a re-read (of the file's latest read).
    assert _reps(t) == {2: (1, "reread", True)} and _wasted(t) == [2]


def test_old_codex_long_output_showed_only_head_and_tail(tmp_path: Path) -> None:
    # A 10 KiB output of the argv shell: the model saw 128 lines of each end.
    long = "\n".join(f"    const row{n} = build({n}); // a long line of code" for n in range(321))
    t = _codex_old(tmp_path, [("sed -n '240,560p' scripts/app.js", long),
                              ("sed -n '352,440p' scripts/app.js", lines(352, 440)),
                              ("sed -n '250,300p' scripts/app.js", lines(250, 300))])
    assert _reps(t) == {2: (1, "reread", True)} and _wasted(t) == [2]


# ---- an inline reproduction re-run with a slightly edited body (mini-swe-agent) ---------------

def _mini(tmp_path: Path, calls: list[tuple[str, int, str]]) -> Trajectory:
    """A mini-swe-agent 1.x trajectory: one ```bash block per turn, results as user turns."""
    msgs: list[dict[str, Any]] = [
        {"role": "system", "content": "You can interact with a computer shell."},
        {"role": "user", "content": "<pr_description>\nHEAD requests return a body.\n"
                                    "</pr_description>"}]
    for cmd, code, out in calls:
        msgs.append({"role": "assistant", "content": f"THOUGHT: next.\n\n```bash\n{cmd}\n```"})
        msgs.append({"role": "user", "content": f"<returncode>{code}</returncode>\n"
                                                f"<output>\n{out}\n</output>"})
    doc = {"info": {"exit_status": "Submitted", "submission": "", "mini_version": "1.15.0"},
           "messages": msgs, "trajectory_format": "mini-swe-agent-1", "instance_id": "shop-1"}
    path = tmp_path / "shop__shop-1.traj.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return parse_log(path)


def _check(extra: str = "") -> str:
    return ("python - <<'PY'\nimport io\nfrom shop.server import Handler\n\n"
            "class Request:\n    def __init__(self, method):\n        self.method = method\n"
            "        self.server = object()\n\n"
            f"for method in ('GET', 'HEAD'):\n    out = io.BytesIO()\n{extra}"
            "    Handler(Request(method), out).run()\n    print(method, out.getvalue())\nPY")


def _patch(old: str, new: str) -> str:
    return ("python - <<'PY'\nfrom pathlib import Path\np = Path('shop/server.py')\n"
            "s = p.read_text()\n"
            f"old = {old!r}\nnew = {new!r}\nif old not in s:\n    raise SystemExit('not found')\n"
            "s = s.replace(old, new)\np.write_text(s)\nprint('patched')\nPY")


def test_an_edited_reproduction_script_is_the_same_reproduction(tmp_path: Path) -> None:
    t = _mini(tmp_path, [
        (_check(), 1, "Traceback (most recent call last):\nAttributeError: 'Request' object "
                      "has no attribute 'log_request'"),
        (_check("    Request.log_request = lambda self, *a: None\n"), 0,
         "GET b'HTTP/1.1 200 OK body'\nHEAD b'HTTP/1.1 200 OK'"),
        ("grep -n 'def finish' shop/server.py", 0, "40:    def finish(self):"),
        (_check("    Request.log_request = lambda self, *a: None  # quiet\n"), 0,
         "GET b'HTTP/1.1 200 OK body'\nHEAD b'HTTP/1.1 200 OK'")])
    reps = _reps(t)
    # The fixed reproduction repeats the failing one (not wasted: it was fixed); the same
    # check once more after it passed, nothing changed, is wasted.
    assert reps == {1: (0, "script", False), 3: (1, "script", True)}
    assert _wasted(t) == [3]


def test_short_scripts_with_other_inputs_are_experiments(tmp_path: Path) -> None:
    t = _mini(tmp_path, [
        (f"python - <<'PY'\nimport inspect, shop.server\n"
         f"print(inspect.getsource(shop.server.{name}))\nPY", 0, f"class {name}:")
        for name in ("Handler", "BaseHandler", "SimpleHandler")])
    assert _reps(t) == {} and detect_all(t) == []


def test_the_next_patch_script_after_one_applied_is_the_next_edit(tmp_path: Path) -> None:
    t = _mini(tmp_path, [
        (_patch("return body", "return b''"), 1, "not found"),
        (_patch("    return body", "    return b''"), 0, "patched"),
        (_patch("    def finish(self):", "    def finish(self):\n        self.close()"), 0,
         "patched")])
    # The retry of the patch that found nothing to replace repeats it, wasted (the file was
    # as it was: the blind fresh/ labels); the patch after the one that applied is new.
    assert _reps(t) == {1: (0, "script", True)}
    assert [(f.kind, len(f.wasted_source_ids)) for f in detect_all(t)] == [("edit_retry", 1)]


# ---- a file written whole after reading it is an edit (Gemini write_file) ---------------------

def _gemini(tmp_path: Path, calls: list[tuple[str, dict[str, Any], str]]) -> Trajectory:
    """A Gemini CLI chat file (tmp/<hash>/chats/session-*.json), one tool call per turn."""
    msgs: list[dict[str, Any]] = [{"id": "m0", "timestamp": "2026-03-01T10:00:00.000Z",
                                   "type": "user", "content": "Edit hello.md as I say."}]
    for k, (name, args, out) in enumerate(calls):
        cid = f"{name}-{k}"
        msgs.append({"id": f"m{k + 1}", "timestamp": f"2026-03-01T10:01:{k:02d}.000Z",
                     "type": "gemini", "content": "", "thoughts": [], "model": "gemini-2.5-pro",
                     "tokens": {"input": 5000, "output": 30, "cached": 0, "thoughts": 0,
                                "tool": 0, "total": 5030},
                     "toolCalls": [{"id": cid, "name": name, "args": args, "status": "success",
                                    "timestamp": f"2026-03-01T10:01:{k:02d}.500Z",
                                    "result": [{"functionResponse": {
                                        "id": cid, "name": name,
                                        "response": {"output": out}}}]}]})
    doc = {"sessionId": "b7e2c1d0-0000-4000-8000-000000000001", "projectHash": "9f86d081",
           "startTime": "2026-03-01T10:00:00.000Z", "lastUpdated": "2026-03-01T10:02:00.000Z",
           "messages": msgs}
    folder = tmp_path / "tmp" / "9f86d081" / "chats"
    folder.mkdir(parents=True)
    path = folder / "session-2026-03-01T10-00-b7e2c1d0.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return parse_log(path)


def _write_file(body: str) -> tuple[str, dict[str, Any], str]:
    return ("write_file", {"file_path": "hello.md", "content": body},
            "Successfully overwrote file: /home/dev/shop/hello.md.")


def test_rewriting_a_file_after_reading_it_is_an_edit(tmp_path: Path) -> None:
    t = _gemini(tmp_path, [
        _write_file("# Hello World"),
        ("read_file", {"absolute_path": "/home/dev/shop/hello.md"}, "# Hello World"),
        _write_file("# Hello World\nThe quick brown fox."),
        ("read_file", {"absolute_path": "/home/dev/shop/hello.md"},
         "# Hello World\nThe quick brown fox."),
        _write_file("# Hello World\nA wizard's job.")])
    # Only the read of the changed file repeats a read (legitimately); no write re-creates.
    assert _reps(t) == {3: (1, "exact", False)}
    assert detect_all(t) == []


def test_rewriting_a_file_without_reading_it_is_a_re_creation(tmp_path: Path) -> None:
    t = _gemini(tmp_path, [_write_file("import shop\nprint(shop.total())"),
                           _write_file("import shop\nprint(shop.total(1))")])
    assert _reps(t) == {1: (0, "rewrite", False)}


# ---- Claude Code: an edit put back because the build named it; one change at several places --

def _claude(tmp_path: Path, calls: list[Call]) -> Trajectory:
    folder = tmp_path / ".claude" / "projects" / "-home-dev-shop"
    folder.mkdir(parents=True)
    path = folder / "7d1c0b7e-0000-4000-8000-00000000c0de.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in claude_lines(calls)),
                    encoding="utf-8")
    return parse_log(path)


PATHS = "/home/dev/shop/paths.go"
IMPORTS = 'import (\n\t"fmt"\n\t"regexp"\n\t"strings"\n)'
NO_REGEXP = 'import (\n\t"fmt"\n\t"strings"\n)'


def _edit(path: str, old: str, new: str, failed: bool = False) -> Call:
    out = ("<tool_use_error>String to replace not found in file.\nString: " + old
           + "</tool_use_error>") if failed else f"The file {path} has been updated successfully."
    return ("Edit", {"file_path": path, "old_string": old, "new_string": new}, out, failed)


def _build(out: str, failed: bool) -> Call:
    return ("Bash", {"command": "go build ./...", "description": "build"},
            ("Exit code 1\n" if failed else "") + out, failed)


def test_an_edit_put_back_after_the_build_named_it_is_the_fix(tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        _edit(PATHS, "var safe = regexp.MustCompile(`^[a-z]+$`)", ""),
        _edit(PATHS, IMPORTS, NO_REGEXP),
        _build("paths.go:149:28: undefined: regexp", True),
        _edit(PATHS, NO_REGEXP, IMPORTS),
        _build("", False)])
    assert detect_all(t) == []
    assert 3 not in _reps(t)


def test_an_edit_undone_after_a_failure_that_does_not_name_it_is_a_revert(
        tmp_path: Path) -> None:
    t = _claude(tmp_path, [_edit(PATHS, IMPORTS, NO_REGEXP),
                           _build("FAIL shop/paths 0.01s", True),
                           _edit(PATHS, NO_REGEXP, IMPORTS)])
    assert [f.kind for f in detect_all(t)] == ["edit_revert"] and _wasted(t) == [0, 2]


TESTS = "/home/dev/shop/validators_test.go"


def _guard(name: str, lead: bool = True) -> str:
    """One test's error check (each test names its function and its input field)."""
    field = name.removeprefix("Validate")[0].lower() + name.removeprefix("Validate")[1:]
    head = f"\t\terr := {name}(tt.{field})\n" if lead else ""
    return (head + "\t\tif tt.wantErr {\n\t\t\tif err == nil {\n"
            f'\t\t\t\tt.Errorf("{name}(%q) expected an error", tt.{field})\n'
            "\t\t\t}\n\t\t}")


def test_one_change_tried_at_several_places_is_a_batch_not_retries(tmp_path: Path) -> None:
    names = ("ValidateSessionID", "ValidateToolUseID", "ValidateAgentID")
    calls = [_edit(TESTS, _guard(n), _guard(n).replace("if err", "if err :="), True)
             for n in names]
    calls.append(("Read", {"file_path": TESTS, "offset": 100, "limit": 20},
                  lines(100, 119), False))
    # The first place again, without its first line: a retry of that edit.
    calls.append(_edit(TESTS, _guard(names[0], lead=False), "", True))
    t = _claude(tmp_path, calls)
    assert {k: v[:2] for k, v in _reps(t).items()} == {4: (0, "edit_retry")}
    assert _wasted(t) == [4]


# ---- Claude Code: the session folder spelled out, a question asked again, a push after a commit

def _glob(pattern: str, path: str | None, out: str) -> Call:
    args = {"pattern": pattern, **({"path": path} if path else {})}
    return ("Glob", args, out, False)


def test_a_glob_naming_the_session_folder_repeats_the_glob_without_it(tmp_path: Path) -> None:
    found = "/home/dev/shop/README.md\n/home/dev/shop/node_modules/x/README.md"
    t = _claude(tmp_path, [_glob("README.md", None, found),
                           _glob("README.md", "/home/dev/shop", found),
                           _glob("README.md", "/home/dev/shop/docs", "No files found")])
    # The third looks in another folder: a narrower search, not a repeat.
    assert _reps(t) == {1: (0, "same_action", True)} and _wasted(t) == [1]


def _ask(question: str, answer: str) -> Call:
    return ("AskUserQuestion", {"questions": [{"question": question, "header": "Next",
                                               "options": [{"label": "Go on"}]}]},
            f'User has answered your questions: "{question}"="{answer}".', False)


def test_asking_the_person_again_is_not_a_rerun(tmp_path: Path) -> None:
    t = _claude(tmp_path, [_ask("More questions, or move on?", "More"),
                           _ask("More questions, or move on?", "Next area")])
    assert _reps(t) == {} and detect_all(t) == []


def _git(command: str, out: str) -> Call:
    return ("Bash", {"command": command, "description": "git"}, out, False)


def test_a_push_after_a_new_commit_is_new_work_and_a_second_push_is_not(
        tmp_path: Path) -> None:
    pushed = "To https://github.com/dev/shop.git\n   8235..25b2  fix -> fix"
    t = _claude(tmp_path, [_git("git push", pushed),
                           _git("git commit -am 'fix: rates'", "[fix 7cf6d41] fix: rates"),
                           _git("git push", pushed), _git("git push", "Everything up-to-date")])
    assert {k: v[:2] for k, v in _reps(t).items()} == {3: (2, "exact")}


def test_a_push_again_after_a_rejected_push_is_the_same_push(tmp_path: Path) -> None:
    t = _claude(tmp_path, [
        ("Bash", {"command": "git push", "description": "push"},
         "Exit code 1\n ! [rejected]        fix -> fix (fetch first)", True),
        _git("git pull --rebase", "Successfully rebased and updated refs/heads/fix."),
        _git("git push", "To https://github.com/dev/shop.git\n   c14c..8235  fix -> fix")])
    assert {k: v[:2] for k, v in _reps(t).items()} == {2: (0, "exact")}


LOG = "7992b41 docs: capture todo\n900916e docs: add protocol\n7a3078f fix(api): migration"


def test_history_asked_again_after_only_file_edits_is_already_answered(tmp_path: Path) -> None:
    # Edits and a checkout of one file leave `git log` as it was: the answer was known.
    t = _claude(tmp_path, [_git("git log --oneline -3", LOG),
                           _git("git checkout main -- api/schema.ts", ""),
                           _edit("/home/dev/shop/NOTES.md", "old note", "new note"),
                           _git("git log --oneline -3", LOG)])
    assert _reps(t) == {3: (0, "exact", True)} and _wasted(t) == [3]


def test_history_asked_again_after_a_commit_is_a_new_question(tmp_path: Path) -> None:
    t = _claude(tmp_path, [_git("git log --oneline -3", LOG),
                           _git("git commit -am 'fix: rates'", "[fix 25b2856] fix: rates"),
                           _git("git log --oneline -3", "25b2856 fix: rates\n" + LOG)])
    assert _reps(t) == {2: (0, "exact", False)} and detect_all(t) == []


def test_a_long_view_cut_by_the_adapter_is_known_by_its_first_lines(tmp_path: Path) -> None:
    # 20 KB of spec: our adapter keeps head and tail by characters, and `nl -ba` moves the
    # cut; the same lines of the same file are still the same view.
    spec = "\n".join(f"- [ ] T{n:03d} implement the part {n} of the feature as the plan says"
                     for n in range(1, 201))
    numbered = "\n".join(f"{n:6}\t{line}" for n, line in enumerate(spec.splitlines(), 1))
    t = _codex(tmp_path, [("sed -n '1,220p' specs/005/tasks.md", _exec(spec)),
                          ("nl -ba specs/005/tasks.md | sed -n '1,220p'", _exec(numbered))])
    assert len(t.steps[-1].output) < len(numbered)  # the adapter did cut it
    assert _reps(t) == {1: (0, "reread", True)} and _wasted(t) == [1]


def test_status_again_after_the_index_was_rebuilt_is_not_wasted(tmp_path: Path) -> None:
    # `git read-tree HEAD` rebuilt the index the first status could not read.
    t = _claude(tmp_path, [
        ("Bash", {"command": "git status 2>&1", "description": "status"},
         "Exit code 128\nfatal: unable to read e53647ba1f1e5203bedff558b482f178db045555", True),
        _git("git read-tree HEAD 2>&1", ""),
        _git("git status --short 2>&1 | head -20", "")])
    assert {k: v[:2] for k, v in _reps(t).items()} == {2: (0, "same_action")}
    assert detect_all(t) == []
