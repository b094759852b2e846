"""Records of an unexpected shape cost one record, never the session (issue 3).

A seeded, deterministic fuzz: every JSON value of every fixture log may be swapped for a
value of another type (None, numbers, lists, objects, huge ints) or dropped, while the
top-level containers (the step list of a whole-file document, an eval line's ``history``)
stay lists. Every adapter must still yield its session, with no fatal issue, warnings that
name the file, steps whose fields have their declared types, and detectors and the
``orf analyze`` report writers (terminal and JSON) that run.
The regression tests below pin the crashes the fuzz first found.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from _formats_helpers import parse_one
from conftest import FIXTURES

from pipeline.analyze import analyze_paths
from pipeline.config import Settings
from pipeline.detect import detect_all
from pipeline.formats.base import ParseContext
from pipeline.formats.discover import SessionSource, discover, parse_source
from pipeline.formats.fields import as_int, as_key
from pipeline.formats.records import RECORD_ERRORS, skip_record
from pipeline.model import ParseIssue, Step, Trajectory
from pipeline.report.json_out import session_json
from pipeline.report.terminal import session_lines

# Swapped-in values: each is a type some adapter did not expect somewhere.
_VALUES: tuple[Any, ...] = (None, 0, -1, 1.5, "", "x", [], {}, [1, "a"], {"a": None}, True,
                            "Exit code 1", 10**20)
_RATE = 0.1
_SEEDS = range(12)
_FORMAT_DIRS = ("antigravity", "atif", "claude-code", "codex", "gemini-cli", "mini-swe-agent",
                "openhands", "swe-agent")


def _mutate(value: Any, rng: random.Random, *, top: bool = False) -> Any:
    """``value`` with random leaves/subtrees swapped or dropped; top-level lists stay lists."""
    if not top and rng.random() < _RATE:
        return rng.choice(_VALUES)
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not top and rng.random() < 0.03:
                continue  # a missing key
            # The containers that make a document this format stay lists; their items don't.
            out[k] = ([_mutate(x, rng) for x in v] if top and isinstance(v, list)
                      else _mutate(v, rng))
        return out
    if isinstance(value, list):
        return [_mutate(x, rng) for x in value]
    return value


def _mutate_file(path: Path, rng: random.Random) -> None:
    if path.suffix == ".jsonl":
        lines = [json.dumps(_mutate(json.loads(line), rng, top=True))
                 for line in path.read_text().splitlines() if line.strip()]
        path.write_text("\n".join(lines) + "\n")
    else:
        path.write_text(json.dumps(_mutate(json.loads(path.read_text()), rng, top=True)))


def _clean_sources() -> list[SessionSource]:
    issues: list[ParseIssue] = []
    return list(discover([FIXTURES / d for d in _FORMAT_DIRS], issues=issues))


SOURCES = _clean_sources()


def _check_step(step: Step, i: int) -> None:
    assert step.index == i
    assert isinstance(step.source_id, str)
    assert step.tool is None or isinstance(step.tool, str)
    assert isinstance(step.args, dict)
    assert isinstance(step.action_key, str)
    assert isinstance(step.output, str)
    assert step.exit_code is None or type(step.exit_code) is int
    assert isinstance(step.is_error, bool)
    assert step.error_signature is None or isinstance(step.error_signature, str)
    assert step.tokens is None or type(step.tokens) is int
    assert step.timestamp is None or isinstance(step.timestamp, str)
    assert isinstance(step.text, str)


def _check_trajectory(traj: Trajectory) -> None:
    assert isinstance(traj.id, str) and traj.id
    for value in (traj.agent, traj.agent_version, traj.model, traj.task, traj.started_at,
                  traj.parent_session_id, traj.outcome.final_message, traj.outcome.exit_status):
        assert value is None or isinstance(value, str)
    for count in (traj.tokens_in, traj.tokens_out):
        assert count is None or type(count) is int
    for i, step in enumerate(traj.steps):
        _check_step(step, i)
    detect_all(traj)
    for sub in traj.subagents:
        _check_trajectory(sub)


def test_fixture_sources_cover_every_format() -> None:
    assert {s.format for s in SOURCES} == set(_FORMAT_DIRS)
    # Every shape of the multi-shape formats is in the fuzz.
    names = {s.path.name for s in SOURCES}
    assert {"output.jsonl", "v0-trajectory.json", "5f1c2d3e"} <= names
    assert {".json", ".jsonl"} <= {s.path.suffix for s in SOURCES if s.format == "gemini-cli"}


@pytest.mark.parametrize("src", SOURCES, ids=[str(s.path.relative_to(FIXTURES)) for s in SOURCES])
def test_mutated_records_never_lose_the_session(src: SessionSource, tmp_path: Path) -> None:
    fmt_dir = src.path.relative_to(FIXTURES).parts[0]
    rel = src.path.relative_to(FIXTURES / fmt_dir)
    for seed in _SEEDS:
        rng = random.Random(seed)
        root = tmp_path / f"seed-{seed}"
        shutil.copytree(FIXTURES / fmt_dir, root)
        for path in sorted(root.rglob("*")):
            if path.is_file() and path.suffix in (".json", ".jsonl", ".traj"):
                _mutate_file(path, rng)
        ctx = ParseContext()
        mutated = SessionSource(root / rel, src.format, src.is_dir)
        trajs = list(parse_source(mutated, ctx))
        where = f"seed {seed}: {[str(i) for i in ctx.issues]}"
        assert not [i for i in ctx.issues if i.fatal], where
        assert trajs, where
        for issue in ctx.issues:
            # Every warning names a file of this copy, and its line when it has one.
            assert issue.path.startswith(str(root)), where
            assert str(issue).startswith(issue.path), where
        for traj in trajs:
            _check_trajectory(traj)
        # What `orf analyze` and `--json` do with the same input: no value of a wrong type
        # (an int past 64 bits, a list for a name) may reach the report writers.
        for report in analyze_paths([mutated.path], Settings(), [], fmt=src.format):
            orjson.dumps(session_json(report))
            session_lines(report)


# ---- regressions: the first crashes the fuzz found ----

CODEX = next((FIXTURES / "codex").rglob("rollout-*.jsonl"))
CLAUDE = next((FIXTURES / "claude-code").rglob("5f0c3a1e-*.jsonl"))
GEMINI_JSONL = next((FIXTURES / "gemini-cli").rglob("session-*.jsonl"))


def _rewrite_lines(src: Path, dst: Path, change: dict[int, Any]) -> Path:
    """Copy a JSONL file, passing line ``n`` (1-based) through ``change[n]``."""
    lines = src.read_bytes().splitlines()
    for n, fn in change.items():
        lines[n - 1] = orjson.dumps(fn(orjson.loads(lines[n - 1])))
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(b"\n".join(lines) + b"\n")
    return dst


def _first_line(path: Path, pred: Any) -> int:
    for n, raw in enumerate(path.read_bytes().splitlines(), 1):
        if raw.strip() and pred(orjson.loads(raw)):
            return n
    raise AssertionError(f"no matching line in {path}")


def _parse(path: Path, fmt: str) -> tuple[list[Trajectory], list[ParseIssue]]:
    ctx = ParseContext()
    trajs = list(parse_source(SessionSource(path, fmt), ctx))
    return trajs, ctx.issues


def test_codex_record_with_a_list_type_is_skipped_with_its_line(tmp_path: Path) -> None:
    clean = parse_one(CODEX)
    line = _first_line(CODEX, lambda r: r.get("type") == "response_item"
                       and r["payload"].get("type") == "message")
    bad = _rewrite_lines(CODEX, tmp_path / CODEX.name,
                         {line: lambda r: {**r, "payload": {**r["payload"], "type": ["x"]}}})
    trajs, issues = _parse(bad, "codex")
    assert len(trajs) == 1
    assert trajs[0].tool_calls == clean.tool_calls
    assert trajs[0].failed_calls == clean.failed_calls
    assert [str(i) for i in issues] == [
        f"{bad}:{line}: record has an unexpected shape (TypeError: unhashable type: 'list');"
        " skipped"]


def test_claude_wrongly_typed_fields_keep_the_rest_of_the_session(tmp_path: Path) -> None:
    clean = parse_one(CLAUDE)
    use = _first_line(CLAUDE, lambda r: r.get("type") == "assistant" and any(
        isinstance(b, dict) and b.get("type") == "tool_use" for b in r["message"]["content"]))

    def break_call(rec: dict[str, Any]) -> dict[str, Any]:
        # A float tool name, a list timestamp: both used to crash the whole file.
        for block in rec["message"]["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                block["name"] = 1.5
        rec["timestamp"] = ["2026"]
        return rec

    bad = _rewrite_lines(CLAUDE, tmp_path / CLAUDE.name, {use: break_call})
    trajs, issues = _parse(bad, "claude-code")
    assert not [i for i in issues if i.fatal]
    traj = trajs[0]
    assert traj.tool_calls == clean.tool_calls
    broken = [s for s in traj.steps if s.raw_ref is not None and s.raw_ref.line == use
              and s.kind == "tool"]
    assert broken and all(s.tool == "other" and s.timestamp is None for s in broken)
    detect_all(traj)


def test_gemini_non_list_tool_calls_keep_the_message_text(tmp_path: Path) -> None:
    line = _first_line(GEMINI_JSONL, lambda r: isinstance(r.get("toolCalls"), list)
                       and r["toolCalls"] and r.get("content"))
    original = orjson.loads(GEMINI_JSONL.read_bytes().splitlines()[line - 1])
    bad = _rewrite_lines(GEMINI_JSONL, tmp_path / GEMINI_JSONL.name,
                         {line: lambda r: {**r, "toolCalls": 1.5}})
    trajs, issues = _parse(bad, "gemini-cli")
    assert not [i for i in issues if i.fatal]
    texts = [s.output for s in trajs[0].steps if s.kind == "message"]
    assert any(t.strip() and t.strip() in str(original["content"]) for t in texts)


def test_gemini_ids_that_are_not_strings_do_not_merge_messages(tmp_path: Path) -> None:
    clean = parse_one(GEMINI_JSONL)
    records = {n: orjson.loads(raw)
               for n, raw in enumerate(GEMINI_JSONL.read_bytes().splitlines(), 1) if raw.strip()}
    ids = [r["id"] for r in records.values() if "type" in r and "id" in r]
    # Messages written once (no rewrite of the same id) after the last rewind, so each is
    # one step whatever its id.
    lines = [n for n, r in records.items()
             if "type" in r and "id" in r and ids.count(r["id"]) == 1 and r["type"] != "info"]
    assert len(lines) >= 2
    # Two messages whose ids became the same object: str() of both is "{}", which would
    # keep only the last one as a rewrite of the first.
    bad = _rewrite_lines(GEMINI_JSONL, tmp_path / GEMINI_JSONL.name,
                         {n: (lambda r: {**r, "id": {}}) for n in lines[-2:]})
    trajs, _ = _parse(bad, "gemini-cli")
    assert len(trajs[0].steps) == len(clean.steps)


def test_wrong_session_level_types_are_dropped_not_fatal(tmp_path: Path) -> None:
    line = _first_line(CODEX, lambda r: r.get("type") == "session_meta")
    bad = _rewrite_lines(CODEX, tmp_path / CODEX.name, {line: lambda r: {
        **r, "payload": {**r["payload"], "id": ["a"], "cli_version": 7}}})
    (traj,), issues = _parse(bad, "codex")
    assert not issues
    assert traj.id == bad.stem  # the list id is no id: the file name stands in
    assert traj.agent_version is None


def test_skip_record_reports_file_line_and_reason() -> None:
    ctx = ParseContext()
    try:
        {}[["unhashable"]]  # type: ignore[index]
    except RECORD_ERRORS as exc:
        skip_record(ctx, Path("/logs/a.jsonl"), 7, "record", exc)
    assert [str(i) for i in ctx.issues] == [
        "/logs/a.jsonl:7: record has an unexpected shape (TypeError: unhashable type: "
        "'list'); skipped"]
    assert not ctx.issues[0].fatal


def test_skip_record_reraises_in_debug_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORF_RAISE_ERRORS", "1")
    with pytest.raises(KeyError):
        skip_record(ParseContext(), "a.jsonl", 1, "record", KeyError("x"))


@pytest.mark.parametrize(("value", "key"), [
    ("abc", "abc"), (12, "12"), ([1], None), ({"a": 1}, None), (1.5, None), (True, None),
    (None, None),
])
def test_as_key_accepts_only_strings_and_ints(value: Any, key: str | None) -> None:
    assert as_key(value) == key


@pytest.mark.parametrize(("value", "expected"), [
    (7, 7), (2.0, 2), ("-3", -3), (1e20, None), (2**63, None), (-(2**63), -(2**63)),
    ("9" * 30, None), (float("nan"), None), (float("inf"), None), (True, None), ([1], None),
])
def test_as_int_keeps_only_64_bit_whole_numbers(value: Any, expected: int | None) -> None:
    # orjson reads 1e20 as a float; as an int it would break JSON output and SQLite.
    assert as_int(value) == expected
