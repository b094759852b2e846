"""`orf analyze`: the orf.analysis/1 contract, exit codes, text and HTML reports."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
from click.testing import CliRunner
from conftest import FIXTURES, MALFORMED, REPO

from pipeline.cli import main

REQUIRED = {"schema", "format", "session_id", "path", "agent", "model", "task", "steps",
            "tool_calls", "failed_calls", "tokens_in", "tokens_out", "findings",
            "wasted_steps_total", "verdict"}


def _json_lines(output: str) -> list[dict]:
    return [orjson.loads(line) for line in output.splitlines() if line.strip()]


def test_json_contract_for_every_good_fixture(tmp_path: Path) -> None:
    good = tmp_path / "logs"
    shutil.copytree(FIXTURES, good)
    shutil.copytree(REPO / "tests" / "data" / "aider", good / "aider")
    result = CliRunner().invoke(main, ["analyze", str(good), "--json"])
    assert result.exit_code == 0, result.output
    objs = _json_lines(result.stdout)
    formats = {o["format"] for o in objs}
    assert {"claude-code", "codex", "gemini-cli", "antigravity", "swe-agent",
            "mini-swe-agent", "openhands", "atif", "aider"} <= formats
    for obj in objs:
        assert REQUIRED <= obj.keys()
        assert obj["schema"] == "orf.analysis/1"
        assert obj["failed_calls"] <= obj["tool_calls"] <= obj["steps"]
        assert obj["wasted_steps_total"] == sum(f["wasted_steps"] for f in obj["findings"])
        assert obj["verdict"]["outcome"] in {"success", "failure", "unknown"}
        for f in obj["findings"]:
            assert f["wasted_steps"] == len(f["wasted_source_ids"])
            assert set(f["wasted_source_ids"]) <= set(f["source_ids"])
        assert "drafts" not in obj  # only with --draft
    # Sub-agents are separate objects pointing at their parent.
    subs = [o for o in objs if o["parent_session_id"]]
    assert subs and all(o["parent_session_id"] in {p["session_id"] for p in objs} for o in subs)
    # The fixtures plant failing retries: the detector must find waste in several formats.
    wasted_formats = {o["format"] for o in objs if o["wasted_steps_total"] > 0}
    assert len(wasted_formats) >= 5


def test_bad_inputs_exit_3_and_are_named(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["analyze", str(MALFORMED), "--json"])
    assert result.exit_code == 3
    lines = result.stderr.splitlines()
    # Files no adapter claims are one summary line, not failures; -v lists them.
    assert "skipped 5 file(s): not a session log (-v lists them)" in lines
    assert f"failed: {MALFORMED / 'deeply_nested.json'}:1: JSON nested deeper than" \
        in result.stderr
    assert f"warning: {MALFORMED / 'bad_line_middle.jsonl'}:4: invalid JSON" in result.stderr
    assert "Traceback" not in result.output
    verbose = CliRunner().invoke(main, ["analyze", str(MALFORMED), "--json", "-v"])
    assert verbose.exit_code == 3
    assert f"skipped: {MALFORMED / 'empty.jsonl'}: not a session log (empty file)" \
        in verbose.stderr.splitlines()
    assert (f"skipped: {MALFORMED / 'compressed.jsonl.gz'}: not a session log (file is "
            "gzip-compressed; decompress it first)") in verbose.stderr.splitlines()
    # The good lines of the file with one bad line are still analysed.
    assert any(o["format"] for o in _json_lines(result.stdout))


def test_text_report_and_totals() -> None:
    result = CliRunner().invoke(main, ["analyze", str(FIXTURES / "swe-agent")])
    assert result.exit_code == 0, result.output
    assert "swe-agent  calc-0x" in result.stdout
    assert "KIND" in result.stdout and "WASTED" in result.stdout
    assert result.stdout.count("Total: 2 sessions") == 1


def test_unknown_format_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["analyze", str(FIXTURES / "atif"), "--format", "nope"])
    assert result.exit_code == 2
    assert "unknown format 'nope'" in result.output


def test_forced_format_mismatch_is_one_line_per_file(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["analyze", str(FIXTURES / "atif"), "--format", "codex"])
    atif = FIXTURES / "atif" / "calc.atif.json"
    records = len(atif.read_text().splitlines())
    assert result.exit_code == 1  # nothing could be read: nothing done
    assert result.stderr.splitlines() == [
        f"failed: {atif}: not a codex log: {records} of its records could not be read as "
        "codex (first: line 1: invalid JSON: unexpected end of data at column 2); "
        "drop --format to detect the format",
        f"Error: no agent session logs found in {FIXTURES / 'atif'}",
    ]


def test_empty_folder_is_an_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["analyze", str(tmp_path)])
    assert result.exit_code == 1
    assert f"Error: no agent session logs found in {tmp_path}" in result.stderr


def test_draft_heuristic_prints_drafts_and_writes_nothing(tmp_path: Path) -> None:
    store = tmp_path / "experiences"
    assert CliRunner().invoke(main, ["init", str(store)]).exit_code == 0
    before = sorted(p.name for p in store.rglob("*"))
    result = CliRunner().invoke(
        main,
        ["analyze", str(FIXTURES / "mine" / "alpha-session.jsonl"), "--json", "--draft",
         "--backend", "heuristic", "--store", str(store)],
    )
    assert result.exit_code == 0, result.output
    (obj,) = _json_lines(result.stdout)
    assert obj["drafts"], obj.get("draft_failures")
    draft = obj["drafts"][0]
    assert draft["title"] and draft["checklist"]
    assert draft["complexity"] in {"low", "medium", "high"}
    assert sorted(p.name for p in store.rglob("*")) == before  # read, never written


def test_html_timeline(tmp_path: Path) -> None:
    out = tmp_path / "t.html"
    result = CliRunner().invoke(
        main, ["analyze", str(FIXTURES / "swe-agent" / "calc-0x.traj"), "--html", str(out)]
    )
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert page.startswith("<!doctype html>") and 'class="wasted' in page
    assert "<script" not in page
