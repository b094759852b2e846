"""aider chat history adapter: hand-written fixture, bad input, and the real samples."""

from __future__ import annotations

import json
import random
import shutil
from dataclasses import asdict
from pathlib import Path

import pytest
from _formats_helpers import parse_all
from conftest import FIXTURES, REPO

from pipeline.formats import get_adapter
from pipeline.formats.base import ParseContext
from pipeline.formats.discover import Skipped, discover, sniff
from pipeline.model import Step, Trajectory

ADAPTER = get_adapter("aider")
AIDER_DIR = REPO / "tests" / "data" / "aider"
FIXTURE = AIDER_DIR / "calc.aider.chat.history.md"
HEADER = "\n# aider chat started at 2026-03-02 09:15:04\n\n"


def _parse(path: Path) -> tuple[list[Trajectory], ParseContext]:
    ctx = ParseContext()
    return list(ADAPTER.parse(path, ctx)), ctx


def _sessions() -> tuple[Trajectory, Trajectory]:
    trajs, ctx = _parse(FIXTURE)
    assert not ctx.issues
    first, second = trajs
    return first, second


def _tools(traj: Trajectory) -> list[Step]:
    return [s for s in traj.steps if s.kind == "tool"]


def _write(tmp_path: Path, body: str, name: str = ".aider.chat.history.md") -> Path:
    path = tmp_path / name
    path.write_text(HEADER + body, encoding="utf-8")
    return path


# ---- detection ----

def test_sniffed_by_its_opening_line_not_its_name(tmp_path: Path) -> None:
    assert sniff(FIXTURE) == "aider"
    renamed = tmp_path / "notes.md"
    shutil.copy(FIXTURE, renamed)
    assert sniff(renamed) == "aider"
    (tmp_path / "README.md").write_text("# notes\n\n#### not a turn\n> quote  \n")
    assert sniff(tmp_path / "README.md") is None


def test_history_name_is_a_hint_when_the_start_line_comes_later(tmp_path: Path) -> None:
    body = "stray text\n" + FIXTURE.read_text()
    named = tmp_path / ".aider.chat.history.md"
    named.write_text(body)
    assert sniff(named) == "aider"
    other = tmp_path / "notes.md"
    other.write_text(body)
    assert sniff(other) is None


def test_a_project_folder_yields_the_history_and_skips_the_other_aider_files(
        tmp_path: Path) -> None:
    shutil.copy(FIXTURE, tmp_path / ".aider.chat.history.md")
    (tmp_path / ".aider.input.history").write_text(
        "\n# 2026-03-02 09:15:10.123456\n+Make add() in calc.py return the sum\n")
    (tmp_path / ".aider.llm.history").write_text(
        "TO LLM 2026-03-02T09:15:11\n-------\nSYSTEM Act as an expert software developer.\n")
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    issues: list = []
    skipped: list[Skipped] = []
    sources = list(discover([tmp_path], issues=issues, skipped=skipped))
    assert [(s.path.name, s.format) for s in sources] == [(".aider.chat.history.md", "aider")]
    assert issues == []
    # Not sessions: left out like any other file, with no warning.
    assert sorted(Path(s.path).name for s in skipped) == [
        ".aider.input.history", ".aider.llm.history", "calc.py"]
    assert {s.reason for s in skipped} == {"not a session log"}


def test_json_formats_never_see_markdown_and_aider_never_claims_json() -> None:
    codex = next((FIXTURES / "codex").rglob("rollout-*.jsonl"))
    assert ADAPTER.sniff(codex, codex.read_bytes()[:65536]) == 0
    head = FIXTURE.read_bytes()[:65536]
    others = {n: get_adapter(n).sniff(FIXTURE, head) for n in
              ("claude-code", "codex", "gemini-cli", "swe-agent", "mini-swe-agent", "openhands",
               "atif", "antigravity")}
    assert max(others.values()) < ADAPTER.sniff(FIXTURE, head)


# ---- the fixture: two sessions in one file ----

def test_two_sessions_in_one_file() -> None:
    first, second = _sessions()
    assert first.id != second.id
    assert first.id.startswith("aider-20260302T091504-")
    assert second.id.startswith("aider-20260302T144011-")
    assert _parse(FIXTURE)[0][0].id == first.id  # stable across reads
    assert (first.started_at, second.started_at) == ("2026-03-02T09:15:04",
                                                     "2026-03-02T14:40:11")
    assert (first.agent, first.agent_version, first.model) == (
        "aider", "0.86.1", "anthropic/claude-sonnet-4")
    assert (second.model, second.extra["edit_formats"]) == ("openai/gpt-4o-mini", ["diff"])
    assert first.task == "Make add() in calc.py return the sum instead of the difference."
    assert second.task == "add a sub() helper to calc.py"  # from "/code add ..."
    assert first.source.format == second.source.format == "aider"
    assert first.source.content_hash == second.source.content_hash != ""
    assert [s.kind for s in first.steps] == [
        "user", "message", "tool", "user", "tool", "user", "message", "tool", "tool", "message",
        "tool", "user", "tool", "user", "tool"]
    assert [s.index for s in second.steps] == list(range(len(second.steps)))
    # "/code X" is logged again as "X": one user step, the reasoning block is its own step.
    assert [s.kind for s in second.steps[:3]] == ["user", "reasoning", "message"]
    assert second.steps[0].output == "/code add a sub() helper to calc.py"
    assert first.outcome.final_message == ("`mul` does not exist yet, so I will add it after "
                                           "`add`.\n\n[SEARCH/REPLACE edit of calc.py]")


def test_successful_edit_has_the_keys_other_formats_use() -> None:
    first, _ = _sessions()
    edit = first.steps[2]
    assert (edit.kind, edit.tool) == ("tool", "edit")
    assert edit.args == {"file_path": "calc.py", "old_string": "def add(a, b):\n    return a - b",
                         "new_string": "def add(a, b):\n    return a + b"}
    assert (edit.is_error, edit.output, edit.extra["status"]) == (
        False, "Applied edit to calc.py", "applied")
    assert edit.raw_ref is not None and edit.raw_ref.line == 17  # the SEARCH marker
    # The reply's text keeps its prose; the block is one placeholder line.
    assert first.steps[1].output == ("The bug is the minus sign in `add`.\n\n"
                                     "[SEARCH/REPLACE edit of calc.py]")


def test_failed_search_block_then_the_fixed_one() -> None:
    first, _ = _sessions()
    failed, other, fixed = first.steps[7], first.steps[8], first.steps[10]
    assert (failed.args["file_path"], failed.args["old_string"]) == (
        "calc.py", "def mull(a, b):\n    return a * b")
    assert failed.is_error and failed.extra["status"] == "failed"
    assert failed.error_signature is not None
    assert failed.error_signature.startswith("SearchReplaceNoExactMatch: This SEARCH block")
    assert "Did you mean to match" in failed.output
    # "The other 1 SEARCH/REPLACE block were applied successfully."
    assert (other.args["file_path"], other.is_error, other.extra["status"]) == (
        "tests/test_calc.py", False, "applied")
    # The reflected reply's block, after the report, is read as a new edit.
    assert (fixed.args["file_path"], fixed.is_error, fixed.output) == (
        "calc.py", False, "Applied edit to calc.py")
    assert "def mul(a, b):" in fixed.args["new_string"]
    assert first.failed_calls == 2  # the failed block and the failing /run


def test_run_with_a_failing_command_and_test_statuses() -> None:
    first, second = _sessions()
    run = first.steps[4]
    assert (run.tool, run.args, run.extra["via"]) == ("bash", {"command": "python -m pytest -q"},
                                                     "/run")
    # aider pre-fills "What's wrong? Fix" only after a non-zero exit whose output was added.
    assert run.is_error and run.extra["failure_signal"].endswith("What's wrong? Fix")
    assert run.exit_code is None and run.error_signature == "non-zero exit"
    passing_test, declined_run = first.steps[12], first.steps[14]
    assert (passing_test.extra["via"], passing_test.is_error, passing_test.exit_code) == (
        "/test", False, 0)
    assert (declined_run.args, declined_run.is_error) == ({"command": "ls -la"}, False)
    by_via = {s.extra.get("via"): s for s in _tools(second) if "via" in s.extra}
    # /test adds its output to the chat only on a non-zero exit.
    assert by_via["/test"].is_error and by_via["/test"].output.startswith("Added 3 lines")
    auto = by_via["auto-test"]
    assert (auto.args, auto.is_error) == ({"command": "python -m pytest -q"}, True)
    lint = by_via["lint"]
    assert lint.is_error and lint.args["command"].endswith("--isolated calc.py")
    assert lint.error_signature == "calc.py:<n>:<n>: F<n> undefined name <q>"
    suggested = by_via["suggested"]
    assert (suggested.args, suggested.is_error, suggested.extra["output_added"]) == (
        {"command": "python -m calc 2 3"}, False, True)
    assert second.failed_calls == 3


def test_declined_and_unconfirmed_edits_are_not_failures() -> None:
    _, second = _sessions()
    edits = [s for s in _tools(second) if s.tool == "edit"]
    statuses = [(s.args["file_path"], s.extra["status"], s.is_error) for s in edits]
    assert statuses == [("calc.py", "applied", False), ("notes.md", "skipped", False),
                        ("calc.py", "applied", False), ("calc.py", "unconfirmed", False)]
    # A "> " line inside the block is file content, not aider output.
    assert "> sub() added on request" in edits[1].args["new_string"]


def test_token_lines_give_per_step_tokens_and_cost() -> None:
    first, second = _sessions()
    messages = [s for s in first.steps if s.kind == "message"]
    assert [s.tokens for s in messages] == [2504, 3310, 3695]
    assert (messages[0].extra["tokens_sent"], messages[0].extra["tokens_received"],
            messages[0].extra["cost"]) == (2400, 104, 0.0042)
    assert all(s.tokens is None for s in first.steps if s.kind != "message")
    assert (first.tokens_in, first.tokens_out, first.extra["cost"]) == (9100, 409, 0.0153)
    assert (second.tokens_in, second.tokens_out, second.extra["cost"]) == (6800, 219, 0.0011)


def test_crlf_and_byte_order_mark_read_the_same(tmp_path: Path) -> None:
    path = tmp_path / "windows.md"
    path.write_bytes(b"\xef\xbb\xbf" + FIXTURE.read_bytes().lstrip(b"\n").replace(b"\n", b"\r\n"))
    assert sniff(path) == "aider"
    trajs, ctx = _parse(path)
    assert not ctx.issues
    assert [[(s.kind, s.tool, s.is_error) for s in t.steps] for t in trajs] == \
        [[(s.kind, s.tool, s.is_error) for s in t.steps] for t in _sessions()]


def test_a_quote_or_heading_in_a_reply_stays_in_the_reply(tmp_path: Path) -> None:
    path = _write(tmp_path, (
        "#### how do I install it?  \n\n"
        "#### With npm:\n> Note: use a recent Node.\n\n```bash\nnpm install\n```\n\n"
        "> Tokens: 900 sent, 30 received.  \n"))
    (traj,), ctx = _parse(path)
    assert not ctx.issues
    assert [s.kind for s in traj.steps] == ["user", "message"]
    assert traj.steps[1].output == ("#### With npm:\n> Note: use a recent Node.\n\n"
                                    "```bash\nnpm install\n```")
    assert traj.steps[1].tokens == 930


# ---- bad input ----

def test_malformed_block_is_warned_and_the_rest_is_read(tmp_path: Path) -> None:
    path = _write(tmp_path, (
        "#### fix calc  \n\n"
        "calc.py\n```python\n<<<<<<< SEARCH\ndef add(a, b):\n=======\n"
        "def add(a: int, b: int):\n```\n\n"
        "> Tokens: 1k sent, 10 received.  \n\n"
        "#### try again  \n\n"
        "calc.py\n```python\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n\n"
        "> Tokens: 1k sent, 12 received.  \n"
        "> Applied edit to calc.py  \n"))
    (traj,), ctx = _parse(path)
    [issue] = ctx.issues
    assert (issue.line, issue.fatal) == (8, False)
    assert "SEARCH/REPLACE block has no >>>>>>> REPLACE line" in issue.message
    assert traj.issues == ctx.issues
    [edit] = _tools(traj)
    assert (edit.args["new_string"], edit.is_error) == ("x = 2", False)
    assert "def add(a: int, b: int):" in traj.steps[1].output  # kept as the reply's text


def test_unparseable_reply_marks_its_blocks_failed(tmp_path: Path) -> None:
    path = _write(tmp_path, (
        "#### rename x  \n\n"
        "calc.py\n```python\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n\n"
        "> Tokens: 1k sent, 12 received.  \n"
        "> The LLM did not conform to the edit format.  \n"
        "> https://aider.chat/docs/troubleshooting/edit-errors.html  \n"
        "> calc.py\n<<<<<<< SEARCH\nx = 1\n\n^^^ Expected `=======`  \n\n"
        "Sorry, here is the block again.\n\n"
        "> Tokens: 1k sent, 9 received.  \n"))
    (traj,), ctx = _parse(path)
    assert not ctx.issues
    [edit] = _tools(traj)
    assert edit.is_error and edit.output.startswith("The LLM did not conform")
    # The report's echo of the block is aider's output, not a reply: one more message only.
    assert [s.kind for s in traj.steps] == ["user", "message", "tool", "message"]


def test_text_before_the_first_session_and_a_bad_start_time(tmp_path: Path) -> None:
    path = tmp_path / "h.md"
    path.write_text("leftover line\n\n# aider chat started at 2026-13-40 99:00:00\n\n"
                    "#### hello  \n\nHi.\n\n> Tokens: 10 sent, 2 received.  \n")
    (traj,), ctx = _parse(path)
    assert [(i.line, i.message.split(";")[0]) for i in ctx.issues] == [
        (1, "text before the first '# aider chat started at' line belongs to no session"),
        (3, "start time '2026-13-40 99:00:00' is not YYYY-MM-DD HH:MM:SS")]
    assert traj.started_at is None and traj.id.startswith("aider-line3-")
    assert [s.kind for s in traj.steps] == ["user", "message"]
    assert (traj.tokens_in, traj.tokens_out) == (10, 2)


def test_invalid_utf8_is_warned_and_read(tmp_path: Path) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_bytes(HEADER.encode() + b"#### caf\xe9 menu  \n\nDone.\n")
    (traj,), ctx = _parse(path)
    [issue] = ctx.issues
    assert issue.line == 4 and issue.message.startswith("invalid UTF-8 at byte 8")
    assert traj.steps[0].output == "caf\ufffd menu"


def test_forced_on_a_json_log_is_one_fatal_line() -> None:
    codex = next((FIXTURES / "codex").rglob("rollout-*.jsonl"))
    trajs, issues = parse_all(codex, fmt="aider")
    assert trajs == []
    [issue] = issues
    assert issue.fatal and issue.message.startswith("not a aider log")


def test_no_reshuffle_of_lines_crashes_the_adapter(tmp_path: Path) -> None:
    lines = FIXTURE.read_text().splitlines(keepends=True)
    rng = random.Random(7)
    for n in range(40):
        cut = lines[:]
        for _ in range(rng.randint(1, 12)):
            i, j = rng.randrange(len(cut)), rng.randrange(len(cut))
            cut[i], cut[j] = cut[j], cut[i]
        del cut[rng.randrange(len(cut)):][:rng.randint(0, 30)]
        path = tmp_path / f"shuffled{n}.md"
        path.write_text(HEADER + "".join(cut))
        trajs, ctx = _parse(path)
        assert trajs and not [i for i in ctx.issues if i.fatal]
        for traj in trajs:
            assert [s.index for s in traj.steps] == list(range(len(traj.steps)))
            assert len({s.source_id for s in traj.steps}) == len(traj.steps)
            assert all(isinstance(s.output, str) and isinstance(s.args, dict)
                       for s in traj.steps)


def test_a_secret_in_the_prompt_is_redacted(tmp_path: Path) -> None:
    key = "sk-ant-api03-" + "Q7vLm2Xp9RtZ4wYb8NcK1dHf6JsG3uEa5oPi0qTl" + "-AbCdEfGh"
    path = _write(tmp_path, f"#### /code use key {key} in calc.py  \n\n#### use key {key} in "
                            f"calc.py  \n\nDone, the key {key} is set.\n\n")
    traj, = parse_all(path)[0]
    assert traj.task == "use key [REDACTED:anthropic-api-key] in calc.py"
    assert key[:16] not in json.dumps(asdict(traj), default=str)


# ---- the real samples ----

def test_real_samples(shared_trajectories: Path) -> None:
    root = shared_trajectories / "aider"
    skipped: list[Skipped] = []
    trajs, issues = parse_all(root, skipped=skipped)
    assert issues == []
    # The input and LLM histories are not sessions: skipped as not logs, no warning.
    assert sorted(Path(s.path).name for s in skipped) == [
        "SOURCES.md", "Simple-Calulator__.aider.input.history",
        "Simple-Calulator__.aider.llm.history", "metadata-aider__.aider.input.history"]
    by_file = {Path(t.source.path).name.split("__")[0]: t for t in trajs}
    assert len(trajs) == len(by_file) == 2  # one "# aider chat started at" line each

    calc = by_file["Simple-Calulator"]
    kinds = [s.kind for s in calc.steps]
    # 35 user turns minus 8 "/code X" echoes; 20 replies (one Tokens line each), 4 <think>.
    assert (len(calc.steps), kinds.count("user"), kinds.count("message"),
            kinds.count("reasoning"), calc.tool_calls, calc.failed_calls) == (86, 27, 20, 4, 35, 2)
    tools = [(s.tool, s.extra.get("status"), s.is_error) for s in _tools(calc)]
    # 26 SEARCH markers: 24 in diff-fenced replies, one echoed by aider's failure report and
    # one bare block a whole-format model wrote (aider ignored it).
    assert tools.count(("edit", "applied", False)) == 23
    assert tools.count(("edit", "failed", True)) == 1
    assert tools.count(("write", "applied", False)) == 10  # whole-format listings applied
    [failed] = [s for s in _tools(calc) if s.tool == "edit" and s.is_error]
    assert (failed.args["file_path"], failed.raw_ref and failed.raw_ref.line) == (
        "src/components/EmojiBubble.jsx", 806)
    [lint] = [s for s in _tools(calc) if s.extra.get("via") == "lint"]
    assert lint.is_error and "src/styles.css:" in lint.output
    assert (calc.tokens_in, calc.tokens_out, calc.extra["cost"]) == (148200, 18044, 0.02702)
    assert (calc.agent_version, calc.model, calc.started_at) == (
        "0.82.2", "gemini/gemini-2.5-pro-exp-03-25", "2025-05-04T17:02:36")
    assert calc.extra["edit_formats"] == ["diff-fenced", "whole"]
    assert calc.task == "give me a quick summarized overview of this repo"

    meta = by_file["metadata-aider"]
    kinds = [s.kind for s in meta.steps]
    # 24 SEARCH/REPLACE blocks, each confirmed by an "Applied edit to" line; the suggested
    # mkdir commands were declined, so they are no steps.
    assert (len(meta.steps), kinds.count("user"), kinds.count("message"), meta.tool_calls,
            meta.failed_calls) == (48, 12, 12, 24, 0)
    assert all(s.extra["status"] == "applied" for s in _tools(meta))
    assert (meta.tokens_in, meta.tokens_out, meta.extra["cost"]) == (73600, 4303, 0.01346)
    assert (meta.agent_version, meta.model) == ("0.86.1", "openrouter/openai/gpt-4o-mini")
    readme = next(s for s in _tools(meta) if s.args["file_path"] == "frontend/README.md")
    # Fences inside the new file's text do not end the block.
    assert readme.args["new_string"].endswith("ts-node frontend/display.ts\n```")


@pytest.mark.parametrize("name", ["Simple-Calulator__.aider.input.history",
                                  "Simple-Calulator__.aider.llm.history"])
def test_real_side_files_are_not_sessions(shared_trajectories: Path, name: str) -> None:
    assert sniff(shared_trajectories / "aider" / name) is None
