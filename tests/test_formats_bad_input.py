from __future__ import annotations

import json
from pathlib import Path

import pytest
from _formats_helpers import parse_all
from conftest import FIXTURES, MALFORMED

from pipeline.formats.base import ParseContext
from pipeline.formats.discover import Skipped, discover, parse_source

BAD = MALFORMED
CODEX = next((FIXTURES / "codex").rglob("rollout-*.jsonl"))


def messages_by_name() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Issue lines and skip lines of the malformed folder, by file name."""
    skipped: list[Skipped] = []
    _, issues = parse_all(BAD, skipped=skipped)
    out: tuple[dict[str, list[str]], dict[str, list[str]]] = ({}, {})
    for kind, items in enumerate((issues, skipped)):
        for item in items:
            out[kind].setdefault(Path(item.path).name, []).append(str(item))
    return out


@pytest.mark.parametrize(("name", "expected"), [
    ("bad_line_middle.jsonl", "bad_line_middle.jsonl:4: invalid JSON: unexpected end of data"),
    ("invalid_utf8.jsonl", "invalid_utf8.jsonl:3: invalid UTF-8 at byte"),
    ("deeply_nested.json", "deeply_nested.json:1: JSON nested deeper than"),
])
def test_each_bad_file_gets_a_clear_message(name: str, expected: str) -> None:
    issues, skipped = messages_by_name()
    [message] = issues[name]
    assert expected in message and name not in skipped
    assert "Traceback" not in message


@pytest.mark.parametrize(("name", "expected"), [
    ("binary.json", "binary.json: not a session log (binary file (NUL bytes), not a text log)"),
    ("compressed.jsonl.gz", "compressed.jsonl.gz: not a session log (file is gzip-compressed; "
                            "decompress it first)"),
    ("empty.jsonl", "empty.jsonl: not a session log (empty file)"),
    ("not_a_log.json", "not_a_log.json: not a session log"),
    ("README.md", "README.md: not a session log"),
])
def test_files_no_adapter_claims_are_skipped_not_failed(name: str, expected: str) -> None:
    issues, skipped = messages_by_name()
    [line] = skipped[name]
    assert line == str(BAD / expected.split(": ", 1)[0]) + ": " + expected.split(": ", 1)[1]
    assert name not in issues


def test_rest_of_file_and_batch_still_parsed() -> None:
    skipped: list[Skipped] = []
    trajs, issues = parse_all(BAD, CODEX, skipped=skipped)
    by_file = {Path(t.source.path).name: t for t in trajs}
    # The line after the broken one is still used.
    assert by_file["bad_line_middle.jsonl"].tool_calls == 1
    assert by_file["invalid_utf8.jsonl"].tool_calls == 1
    assert CODEX.name in by_file
    # Only a file an adapter claimed and could not read fails.
    assert {Path(i.path).name for i in issues if i.fatal} == {"deeply_nested.json"}
    assert {Path(s.path).name for s in skipped} == {
        "binary.json", "compressed.jsonl.gz", "empty.jsonl", "not_a_log.json", "README.md"}


def test_nan_literal_is_read() -> None:
    trajs, issues = parse_all(BAD / "nan_literal.json")
    [traj] = trajs
    assert traj.id == "nan-1" and traj.tokens_in == 0 and traj.tokens_out == 1
    assert not issues


def test_huge_single_line_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    lines = CODEX.read_text().splitlines()
    big = json.dumps({"type": "event_msg", "payload": {"type": "agent_message",
                                                       "message": "x" * 5000}})
    path.write_text("\n".join([lines[0], big, *lines[1:]]) + "\n")
    ctx = ParseContext(max_line_bytes=4000)
    [src] = discover([path], issues=ctx.issues)
    [traj] = list(parse_source(src, ctx))
    assert traj.tool_calls == 6
    [issue] = ctx.issues
    assert str(issue).startswith(f"{path}:2: line of ") and "exceeds the limit" in str(issue)


def test_non_object_lines_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    lines = CODEX.read_text().splitlines()
    path.write_text("\n".join([lines[0], "[1, 2]", "42", *lines[1:]]) + "\n")
    trajs, issues = parse_all(path)
    assert trajs[0].tool_calls == 6
    assert [str(i) for i in issues] == [f"{path}:2: expected a JSON object; skipped",
                                        f"{path}:3: expected a JSON object; skipped"]


def test_unreadable_file_is_reported(tmp_path: Path) -> None:
    import os
    path = tmp_path / "locked.jsonl"
    path.write_bytes(CODEX.read_bytes())
    path.chmod(0)
    if os.access(path, os.R_OK):  # running as root: permissions are not enforced
        pytest.skip("root can read anything")
    issues: list = []
    assert list(discover([path], issues=issues)) == []
    assert issues[0].fatal and "cannot read" in issues[0].message


def test_numbers_past_float_range_are_read_not_dropped(tmp_path: Path) -> None:
    from pipeline.formats.base import ParseContext
    from pipeline.formats.jsonio import iter_jsonl

    log = tmp_path / "huge.jsonl"
    log.write_text('{"a": 1e400, "b": "x"}\n{"c": 1}\n')
    ctx = ParseContext()
    rows = list(iter_jsonl(log, ctx))
    assert [n for n, _ in rows] == [1, 2] and rows[0][1]["b"] == "x"
    assert rows[0][1]["a"] == float("inf") and not ctx.issues


def test_two_records_run_together_on_one_line_are_both_read(tmp_path: Path) -> None:
    # A later run appended to a log whose last record had lost its newline.
    from pipeline.formats.jsonio import iter_jsonl

    log = tmp_path / "joined.jsonl"
    log.write_text('{"a": 1}\n{"b": 2}{"c": [3]}\n{"d": 4}\n{"e": 5} x\n')
    ctx = ParseContext()
    rows = list(iter_jsonl(log, ctx))
    assert rows == [(1, {"a": 1}), (2, {"b": 2}), (2, {"c": [3]}), (3, {"d": 4})]
    assert [str(i) for i in ctx.issues] == [
        f"{log}:2: 2 JSON documents on one line; read each",
        f"{log}:4: invalid JSON: unexpected content after document at column 10"]
