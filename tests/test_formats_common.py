"""The step-building helpers every adapter shares (pipeline/formats/common.py)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from pipeline.errors import ParseFailure
from pipeline.formats.base import ParseContext
from pipeline.formats.common import bounded, most_common
from pipeline.formats.fields import as_count, as_int
from pipeline.formats.jsonio import ReadStats
from pipeline.formats.records import load_document, opens_object
from pipeline.formats.steps import set_output, tool_step
from pipeline.formats.tools import normalize_tool, parse_exit_code


@pytest.mark.parametrize(
    ("raw", "norm"),
    [("Bash", "bash"), ("exec_command", "bash"), ("sh", "bash"), ("Read", "read"),
     ("goto", "read"), ("str_replace_editor", "edit"), ("undo_edit", "edit"),
     ("create", "write"), ("Glob", "glob"), ("find_file", "glob"), ("search_dir", "grep"),
     ("tree", "ls"), ("browser_navigate", "web"), ("Task", "task"), ("think", "think"),
     ("submit", "finish"), ("mcp__github__create_issue", "other"), (None, "other")],
)
def test_normalize_tool_covers_every_format(raw: str | None, norm: str) -> None:
    assert normalize_tool(raw) == norm


def test_as_int_tells_missing_from_zero() -> None:
    assert [as_int(v) for v in (7, -1, 3.0, " 42 ", "-2")] == [7, -1, 3, 42, -2]
    assert [as_int(v) for v in (True, None, 2.5, float("nan"), float("inf"), "x", [])] == [
        None] * 7
    assert as_count(None) == 0 and as_count("12") == 12
    # The plain-int fast path keeps as_int's rules: bools and out-of-range ints count 0.
    assert [as_count(v) for v in (5, True, 2**63, -(2**63) - 1)] == [5, 0, 0, 0]


def test_bounded_strips_and_keeps_head_and_tail() -> None:
    assert bounded(None) is None and bounded("  \n ") is None
    assert bounded("  fix the bug \n") == "fix the bug"
    long = "start " + "word " * 1000 + "the end"
    cut = bounded(long, 200)
    assert cut is not None and cut.startswith("start ") and cut.endswith("the end")
    assert "chars truncated" in cut and len(cut) < 260


def test_other_tools_keep_their_name_in_the_action_key() -> None:
    ctx = ParseContext()
    a = tool_step(0, "c1", "mcp__github__create_issue", {"title": "x"}, "", ctx)
    b = tool_step(1, "c2", "mcp__slack__post", {"title": "x"}, "", ctx)
    assert a.tool == b.tool == "other" and a.action_key != b.action_key
    assert a.extra["raw_tool"] == "mcp__github__create_issue"
    forced = tool_step(2, "c3", None, {"command": "submit"}, "", ctx, tool="finish")
    assert forced.tool == "finish" and "raw_tool" not in forced.extra


def test_set_output_fills_a_step_built_without_its_observation() -> None:
    ctx = ParseContext(output_max_chars=100)
    step = tool_step(0, "c1", "Bash", {"command": "make"}, "", ctx)
    key = step.action_key
    set_output(step, "x" * 500 + "\nmake: *** [all] Error 2", ctx, exit_code=2)
    assert step.is_error and step.exit_code == 2 and step.output_len > 500
    assert len(step.output) < 200 and step.action_key == key
    assert step.error_signature is not None and "Error <n>" in step.error_signature
    # No telling error line: the exit code groups the failure; no code, no signature.
    set_output(step, "", ctx, exit_code=1)
    assert step.error_signature == "exit code 1"
    set_output(step, "all quiet", ctx, is_error=True)
    assert step.is_error and step.error_signature is None
    set_output(step, "ok", ctx, exit_code=0)
    assert not step.is_error and step.error_signature is None


def test_parse_exit_code_phrasings() -> None:
    assert parse_exit_code("Exit code 2\nboom") == 2
    assert parse_exit_code("out\nProcess exited with code 127") == 127
    assert parse_exit_code("<returncode>1</returncode>") == 1
    assert parse_exit_code("exit status unknown") is None


def test_most_common_prefers_the_first_seen_on_ties() -> None:
    assert most_common(Counter()) is None
    assert most_common(Counter(["b", "a", "a", "b"])) == "b"


def test_load_document_names_the_missing_list(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"steps": {}}')
    assert opens_object(b'  {"a": 1}') and not opens_object(b"[1]")
    with pytest.raises(ParseFailure, match=r"x\.json: not a thing \(no 'steps' list\)"):
        load_document(path, ParseContext(), ReadStats(), "steps", "a thing")
    path.write_text('{"steps": [1]}')
    assert load_document(path, ParseContext(), ReadStats(), "steps", "a thing") == {
        "steps": [1]}


def test_opens_object_tells_a_document_from_json_lines() -> None:
    assert opens_object(b'{\n  "trajectory": [],\n  "info": {}\n}\n')
    assert opens_object(b'{"a": 1}') and opens_object(b'{"a": 1}\n')
    # Whole-file sniffers skip JSON Lines: a closed object followed by another object line.
    assert not opens_object(b'{"a": 1}\n{"b": 2}\n')
    assert not opens_object(b'{"a": 1}  \r\n{"b": 2}\r\n')


def test_tool_step_without_observation_keeps_the_step_defaults() -> None:
    ctx = ParseContext()
    step = tool_step(0, "c1", "Bash", {"command": "ls"}, "", ctx)
    assert (step.output, step.output_len, step.exit_code, step.is_error,
            step.error_signature) == ("", 0, None, False, None)
    failed = tool_step(1, "c2", "Bash", {"command": "ls"}, "", ctx, exit_code=2)
    assert failed.is_error and failed.error_signature == "exit code 2"
