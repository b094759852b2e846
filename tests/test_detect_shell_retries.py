"""Retries through the shell: failed edits by another mechanism, commands that never ran.

Read from the blind ``fresh/`` labels: agents that edit with shell tools retry a change that
did not apply with another tool (sed, then a Python patch script), re-send a command the
shell refused to parse, and ask a missing program again. Each test writes a small log in a
real format (Codex CLI rollout, mini-swe-agent trajectory), reads it with the real adapters,
and checks the class and the case next to it that people did not count.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _detect_helpers import codex_rollout, exec_output, parse_log

from pipeline.detect import annotate_repeats, detect_all
from pipeline.model import Trajectory

CWD = "/home/dev/shop"


def _codex(tmp_path: Path, calls: list[tuple[str, int, str]]) -> Trajectory:
    """A Codex CLI rollout: ``exec_command`` calls, outputs behind the exec header."""
    return codex_rollout(tmp_path / "rollout-2026-02-09T23-41-33-019c44c8.jsonl", [
        (cmd, exec_output(k, code, out)) for k, (cmd, code, out) in enumerate(calls)],
        cwd=CWD, task="Fix the HEAD body.", session_id="019c44c8-0000-7000-8000-00000000beef")


def _mini(tmp_path: Path, calls: list[tuple[str, int, str]]) -> Trajectory:
    """A mini-swe-agent 1.x trajectory: one ```bash block per turn, results as user turns."""
    msgs: list[dict[str, Any]] = [
        {"role": "system", "content": "You can interact with a computer shell."},
        {"role": "user", "content": "<pr_description>\nHEAD returns a body.\n</pr_description>"}]
    for cmd, code, out in calls:
        msgs.append({"role": "assistant", "content": f"THOUGHT: next.\n\n```bash\n{cmd}\n```"})
        msgs.append({"role": "user", "content": f"<returncode>{code}</returncode>\n"
                                                f"<output>\n{out}\n</output>"})
    doc = {"info": {"exit_status": "Submitted", "submission": "", "mini_version": "1.15.0"},
           "messages": msgs, "trajectory_format": "mini-swe-agent-1", "instance_id": "shop-1"}
    path = tmp_path / "shop__shop-1.traj.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return parse_log(path)


def _reps(t: Trajectory) -> dict[int, tuple[int, bool]]:
    """Tool-step position -> (position repeated, wasted)."""
    pos = {s.index: k for k, s in enumerate(s for s in t.steps if s.kind == "tool")}
    return {pos[r.step]: (pos[r.repeat_of_step], r.wasted) for r in annotate_repeats(t)}


def _wasted(t: Trajectory) -> dict[int, str]:
    pos = {s.source_id: k for k, s in enumerate(s for s in t.steps if s.kind == "tool")}
    return {pos[s]: f.kind for f in detect_all(t) for s in f.wasted_source_ids}


BAD_SED = "sed -i 's/return body/return b\"\"' shop/server.py"
SED_FAILED = "sed: -e expression #1, char 25: unterminated `s' command"
SED = "sed -i 's/return body/return b\"\"/' shop/server.py"


def _patch(old: str, new: str, encoding: str = "") -> str:
    enc = f"encoding={encoding!r}" if encoding else ""
    return ("python3 - <<'PY'\nfrom pathlib import Path\np = Path('shop/server.py')\n"
            f"s = p.read_text({enc})\nold = {old!r}\nnew = {new!r}\n"
            "if old not in s:\n    raise SystemExit('not found')\n"
            "p.write_text(s.replace(old, new))\nprint('patched shop/server.py')\nPY")


DECODE = ("Traceback (most recent call last):\n  File \"<stdin>\", line 4, in <module>\n"
          "  File \"/usr/lib/python3.6/pathlib.py\", line 1197, in read_text\n"
          "    return f.read()\nUnicodeDecodeError: 'ascii' codec can't decode byte 0xc3")


# ---- a failed edit retried with another tool --------------------------------------------------

def test_a_failed_sed_edit_retried_as_a_patch_script_is_wasted(tmp_path: Path) -> None:
    denied = "sed: couldn't open temporary file shop/sedq1Xz2: Permission denied"
    t = _codex(tmp_path, [("nl -ba shop/server.py | sed -n '30,60p'", 0, "    30\tdef head():"),
                          (SED, 1, denied),
                          (_patch("return body", "return b''"), 0, "patched shop/server.py")])
    assert _reps(t) == {2: (1, True)}
    assert _wasted(t) == {2: "edit_retry"}


def test_a_patch_script_after_sed_refused_its_own_expression_is_not_wasted(
        tmp_path: Path) -> None:
    # sed never read the file: what failed is its own script (the labels' rule book, issue
    # 12's fourth round: a retry that answers the error it got is not wasted).
    t = _codex(tmp_path, [("nl -ba shop/server.py | sed -n '30,60p'", 0, "    30\tdef head():"),
                          (BAD_SED, 1, SED_FAILED),
                          (_patch("return body", "return b''"), 0, "patched shop/server.py")])
    assert _reps(t) == {2: (1, False)}
    assert _wasted(t) == {}


def test_a_patch_script_that_died_before_writing_is_retried(tmp_path: Path) -> None:
    # The traceback stops at line 4 (reading the file), before the line that writes.
    t = _mini(tmp_path, [(_patch("return body", "return b''"), 1, DECODE),
                         (SED, 0, "")])
    assert _wasted(t) == {1: "edit_retry"}


def test_the_edit_after_one_that_applied_is_the_next_edit(tmp_path: Path) -> None:
    t = _codex(tmp_path, [(SED, 0, ""),
                          (_patch("def finish(self):", "def finish(self):\n    self.close()"),
                           0, "patched shop/server.py")])
    assert _wasted(t) == {}


def test_a_diagnosis_between_two_attempts_informs_the_second(tmp_path: Path) -> None:
    # Reading the file with another encoding found why the first attempt died.
    t = _mini(tmp_path, [
        (_patch("return body", "return b''"), 1, DECODE),
        ("python3 -c \"print(len(open('shop/server.py', encoding='utf-8').read()))\"", 0,
         "13619"),
        (_patch("return body", "return b''", "utf-8"), 0, "patched shop/server.py")])
    assert _wasted(t) == {}


def test_a_script_refused_by_its_parser_then_made_runnable_is_a_fix(tmp_path: Path) -> None:
    # Text after the here-document's end: Python refused the script, nothing of it ran.
    refused = _patch("return body", "return b''").replace("\nPY", "\nPY && nl shop/server.py")
    t = _mini(tmp_path, [
        (refused + "\nPY", 1, "  File \"<stdin>\", line 11\n    PY && nl shop/server.py\n"
                              "        ^\nSyntaxError: invalid syntax"),
        (_patch("return body", "return b''"), 0, "patched shop/server.py")])
    assert 1 not in _wasted(t)


# ---- a command that never ran, sent again -----------------------------------------------------

REFUSED = ("bash: -c: line 1: unexpected EOF while looking for matching `''\n"
           "bash: -c: line 3: syntax error: unexpected end of file")


def test_a_command_the_shell_refused_sent_again_is_wasted(tmp_path: Path) -> None:
    t = _mini(tmp_path, [
        ("THOUGHT: I'll look for the other callers.\n\ngrep -rn 'send_body(' shop || true", 2,
         REFUSED),
        ("grep -rn 'send_body(' shop || true", 0, "shop/server.py:41:    send_body(self)")])
    assert _reps(t) == {1: (0, True)}
    assert _wasted(t) == {1: "near_repeat"}


def test_a_command_that_ran_before_its_syntax_error_is_not_refused(tmp_path: Path) -> None:
    # The patch ran (it printed), the shell stopped at a later line: the next view is new.
    t = _mini(tmp_path, [
        (_patch("return body", "return b''") + "\n&& nl -ba shop/server.py", 2,
         "patched shop/server.py\nbash: -c: line 12: syntax error near unexpected token `&&'"),
        ("nl -ba shop/server.py", 0, "     1\timport io")])
    assert _wasted(t) == {}


def test_a_missing_program_asked_again_is_already_answered(tmp_path: Path) -> None:
    t = _codex(tmp_path, [
        ("javac -cp . ShopTest.java && java -cp . ShopTest", 127,
         "/bin/bash: line 1: javac: command not found"),
        ("java -version", 127, "/bin/bash: line 1: java: command not found"),
        ("javac -version", 127, "/bin/bash: line 1: javac: command not found")])
    assert _wasted(t) == {2: "near_repeat"}


def test_another_program_or_an_install_makes_the_next_call_new(tmp_path: Path) -> None:
    t = _codex(tmp_path, [
        ("python shop/gen.py", 127, "/bin/bash: line 1: python: command not found"),
        ("python3 shop/gen.py", 0, "Sum: 307"),
        ("javac -version", 127, "/bin/bash: line 1: javac: command not found"),
        ("apt-get install -y default-jdk", 0, "Setting up default-jdk (2:1.17-75) ..."),
        ("javac -version", 0, "javac 17.0.8")])
    assert _wasted(t) == {}


UNMATCHED = "grep: Unmatched ) or \\)"


def test_a_refused_search_re_spelled_that_tells_nothing_again_is_wasted(tmp_path: Path) -> None:
    t = _mini(tmp_path, [
        ("grep -R \"\\.only(\\\"pk\\\"\\)\" -n || true", 0, UNMATCHED),
        ("grep -R \"\\.only(\\'pk\\'\\)\" -n || true", 0, UNMATCHED),
        ("grep -R \"\\.only\\(\\\"pk\\\"\\)\" -n || true", 0, "")])
    assert _wasted(t) == {1: "near_repeat", 2: "near_repeat"}


def test_a_refused_search_re_spelled_that_finds_something_is_new(tmp_path: Path) -> None:
    t = _mini(tmp_path, [
        ("grep -R \"\\.only(\\\"pk\\\"\\)\" -n || true", 0, UNMATCHED),
        ("grep -R -F '.only(\"pk\")' -n || true", 0,
         "django/core/serializers/python.py:81:    return qs.only(\"pk\")")])
    assert _wasted(t) == {}


# ---- a relative cd in one shared shell ---------------------------------------------------------

def _swe(tmp_path: Path, steps: list[tuple[str, str]]) -> Trajectory:
    from _lesson_helpers import swe_agent_log  # the SWE-agent .traj writer the lesson tests use

    return parse_log(swe_agent_log(tmp_path / "pkg__pkg-1.traj", steps))


def test_a_relative_cd_after_the_shell_moved_is_another_folder(tmp_path: Path) -> None:
    # SWE-agent keeps one shell: `cd com && ls -a` under src/test is not the one under src/main.
    t = _swe(tmp_path, [("cd src && ls -a", ". .. main test"), ("cd main && ls -a", ". .. com"),
                        ("cd com && ls -a", ". .. pkg"), ("cd ../../test && ls -a", ". .. com"),
                        ("cd com && ls -a", ". .. pkg")])
    assert t.agent == "swe-agent"
    assert 4 not in _reps(t)


def test_a_listing_repeated_where_the_shell_stayed_is_a_repeat(tmp_path: Path) -> None:
    t = _swe(tmp_path, [("cd src && ls -a", ". .. main test"), ("ls -a", ". .. main test"),
                        ("ls -a", ". .. main test")])
    assert _reps(t)[2] == (1, True)
