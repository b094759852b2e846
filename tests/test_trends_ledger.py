"""Ledger history (migration 4): fresh and upgraded ledgers, recording, backfill on rerun."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson
from _trends_helpers import day, write_batch
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.ledger import MIGRATIONS, Ledger

HISTORY_TABLES = {"session_history", "finding_history"}


def _tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _mine(logs: Path, tmp_path: Path) -> dict[str, object]:
    if not (tmp_path / "experiences").exists():
        CliRunner().invoke(main, ["init", "--store", str(tmp_path / "experiences")])
    result = CliRunner().invoke(main, [
        "mine", str(logs), "--store", str(tmp_path / "experiences"), "--ledger",
        str(tmp_path / "ledger.db"), "--backend", "heuristic", "--json"])
    assert result.exit_code == 0, result.output
    doc: dict[str, object] = orjson.loads(result.stdout)
    return doc


def test_fresh_ledger_has_every_migration_and_the_history_tables(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.db", store=tmp_path / "s") as led:
        assert led.schema_version == len(MIGRATIONS)
    assert HISTORY_TABLES <= _tables(tmp_path / "l.db")
    assert {"sources", "analyzed_sessions", "candidates"} <= _tables(tmp_path / "l.db")


def test_mine_records_each_session_and_its_findings(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    write_batch(logs, [(day(1, 0), 3), (day(1, 2), 0)], "rec")
    _mine(logs, tmp_path)
    with Ledger(tmp_path / "ledger.db", store=tmp_path / "experiences") as led:
        sessions = led.history_sessions()
        findings = led.history_findings()
    assert [(agent, model, start) for _sid, agent, model, start, _p in sessions] == [
        ("claude-code", "claude-sonnet-4-5", 1767607200.0),  # 2026-01-05T10:00:00Z
        ("claude-code", "claude-sonnet-4-5", 1767780000.0),  # 2026-01-07T10:00:00Z
    ]
    assert sessions[0][4] == "pip pytest"
    assert [(f[0], f[2], f[3], f[4]) for f in findings] == [
        (sessions[0][0], "rerun_unchanged", 2, 2080)]
    assert findings[0][1].startswith("b2:") and findings[0][5] > 0  # seconds from timestamps


def test_existing_ledger_is_upgraded_and_backfilled_on_the_next_run(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    write_batch(logs, [(day(1, d), 3 if d < 2 else 0) for d in range(4)], "old")
    first = _mine(logs, tmp_path)
    assert first["drafts"] == {"new": 1, "related": 0, "duplicate": 1, "dropped": 0,
                               "existing": 0, "failed": 0}
    # Make it a ledger from before migration 4: no history tables, version 3.
    with sqlite3.connect(tmp_path / "ledger.db") as db:
        db.execute("DROP TABLE session_history")
        db.execute("DROP TABLE finding_history")
        db.execute("DROP TABLE draft_retries")  # a later migration's table
        db.execute("DROP TABLE _migrations")  # migrations were known by number then
        db.execute("PRAGMA user_version = 3")
    files = sorted(p.read_bytes() for p in (tmp_path / "experiences").rglob("EXP-*.md"))

    again = _mine(logs, tmp_path)
    # Every source is read again (for its history), none goes to judge or draft again.
    assert again["sessions"] == {"seen": 4, "unchanged": 0, "new": 4, "failed": 0,
                                 "selected": 0, "deferred": 0}
    assert sum(again["drafts"].values()) == 0  # type: ignore[attr-defined]
    assert sorted(p.read_bytes() for p in (tmp_path / "experiences").rglob("EXP-*.md")) == files
    with Ledger(tmp_path / "ledger.db", store=tmp_path / "experiences") as led:
        assert led.schema_version == len(MIGRATIONS)
        assert len(led.history_sessions()) == 4
        assert len(led.history_findings()) == 2
    third = _mine(logs, tmp_path)
    assert third["sessions"]["unchanged"] == 4  # type: ignore[index]


def test_dry_run_records_no_history(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    write_batch(logs, [(day(1, 0), 3)], "dry")
    CliRunner().invoke(main, ["init", "--store", str(tmp_path / "experiences")])
    result = CliRunner().invoke(main, [
        "mine", str(logs), "--store", str(tmp_path / "experiences"), "--ledger",
        str(tmp_path / "ledger.db"), "--backend", "heuristic", "--dry-run"])
    assert result.exit_code == 0, result.output
    with Ledger(tmp_path / "ledger.db", store=tmp_path / "experiences") as led:
        assert led.history_sessions() == []


def test_review_weighs_a_candidate_by_its_history(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    write_batch(logs, [(day(1, 0), 3), (day(1, 1), 3), (day(1, 2), 0), (day(1, 3), 3)], "ev")
    _mine(logs, tmp_path)
    result = CliRunner().invoke(main, ["review", "--store", str(tmp_path / "experiences"),
                                       "--ledger", str(tmp_path / "ledger.db")])
    assert result.exit_code == 0, result.output
    # Three sessions hit the trap, two wasted reruns of 1,040 tokens each.
    assert "  evidence weight: 3 session(s), 6 wasted step(s), 6,240 wasted tokens it would " \
           "have saved" in result.stdout
