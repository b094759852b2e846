"""orf trends end to end: a git repository with a store, two mined batches, exact numbers."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from _trends_helpers import BATCH_2, day, orf, scenario
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.ledger import Ledger
from pipeline.orf import Store
from pipeline.trends import TrendRules, compute_trends
from pipeline.trends.playbooks import PlaybookInfo, programs_named


def test_playbook_committed_in_week_3_is_helping(tmp_path: Path) -> None:
    store, ledger = scenario(tmp_path, BATCH_2)
    doc = orjson.loads(orf("trends", "--store", str(store), "--ledger", str(ledger), "--json"))
    exp_id = next(store.glob("*/EXP-*.md")).stem
    sig = doc["traps"][0]["signature"]
    assert doc["schema"] == "orf.trends/1"
    assert doc["window"] == {"from": "2026-01-05T10:00:00Z", "to": "2026-02-12T10:00:00Z"}
    assert doc["sessions"] == 22
    [pb] = doc["playbooks"]
    assert pb["id"] == exp_id
    assert sig in pb["signatures"]
    assert pb["entered_at"] == "2026-01-19T12:00:00Z"  # the commit, not created_at (today)
    # Each hit wastes two reruns of 1,040 tokens each (1,000 in + 40 out).
    assert pb["before"] == {"sessions": 10, "hits": 6, "wasted_steps": 12,
                            "wasted_tokens": 12480, "rate_per_100": 60.0}
    assert pb["after"] == {"sessions": 12, "hits": 1, "wasted_steps": 2,
                           "wasted_tokens": 2080, "rate_per_100": 8.3}
    assert pb["status"] == "helping"
    example = doc["traps"][0].pop("example")
    session = doc["traps"][0].pop("example_session")
    # Named by what happened, with a session to open (the trap's costliest finding).
    assert example == "test `pytest -x tests/` rerun 2x with no change in between (failing)"
    assert isinstance(session, str) and session
    assert doc["traps"] == [{
        "signature": sig, "kind": "rerun_unchanged", "hits": 7, "wasted_steps": 14,
        "wasted_tokens": 14560, "first_seen": "2026-01-05T10:00:00Z",
        "last_seen": "2026-02-04T10:00:00Z", "playbook": exp_id}]

    # A stricter rule turns the same numbers into still-recurring; a window before the
    # playbook leaves nothing after it.
    strict = orjson.loads(orf("trends", "--store", str(store), "--ledger", str(ledger),
                               "--json", "--helping-ratio", "0.1"))
    assert strict["playbooks"][0]["status"] == "still-recurring"
    early = orjson.loads(orf("trends", "--store", str(store), "--ledger", str(ledger),
                              "--json", "--until", "2026-01-16"))
    assert early["sessions"] == 10
    assert early["window"]["to"] == "2026-01-16T23:59:59Z"
    assert early["playbooks"][0]["after"]["sessions"] == 0
    assert early["playbooks"][0]["status"] == "too-new"

    text = orf("trends", "--store", str(store), "--ledger", str(ledger))
    assert f"{exp_id}  helping         hits/100 60.0 -> 8.3  (before 6/10, after 1/12," \
           f" entered 2026-01-19)" in text
    assert (f"  {example}\n      7 session(s), 14 steps, 14,560 tokens, 2026-01-05..2026-02-04;"
            f" {exp_id}; e.g. session {session}") in text


def test_trap_unseen_for_90_days_while_sessions_came_is_stale(tmp_path: Path) -> None:
    # After the playbook: one clean session a week for 16 weeks (weeks 4-19).
    store, ledger = scenario(tmp_path, [(day(w, 1), 0) for w in range(4, 20)])
    doc = orjson.loads(orf("trends", "--store", str(store), "--ledger", str(ledger), "--json"))
    [pb] = doc["playbooks"]
    assert pb["after"] == {"sessions": 16, "hits": 0, "wasted_steps": 0, "wasted_tokens": 0,
                           "rate_per_100": 0.0}
    assert pb["status"] == "stale"  # last hit 2026-01-14, last session 2026-05-12
    # Within a window ending 80 days after the last hit it is simply helping.
    recent = orjson.loads(orf("trends", "--store", str(store), "--ledger", str(ledger),
                               "--json", "--until", "2026-04-04"))
    assert recent["playbooks"][0]["status"] == "helping"


def _history(ledger: Ledger, rows: list[tuple[str, str, float, str, bool]]) -> None:
    ledger.record_history([
        {"session_id": sid, "agent": agent, "model": "m", "started_at": start,
         "programs": programs,
         "findings": [{"signature": "b2:trap", "kind": "exact_repeat", "wasted_steps": 2,
                       "wasted_tokens": 100}] if hit else []}
        for sid, agent, start, programs, hit in rows])


def test_programs_gone_from_recent_logs_make_a_playbook_stale(tmp_path: Path) -> None:
    week = 7 * 86400.0
    pb = PlaybookInfo("EXP-20260101-0001", "t", ("b2:trap",), 10 * week,
                      programs_named("1. Run `pip install -r requirements.txt`\n"
                                     "2. Then `pytest -vv` and `-p no:randomly`"))
    assert pb.programs == frozenset({"pip", "pytest"})
    with Ledger(tmp_path / "l.db", store=tmp_path / "s") as led:
        old = [(f"a{i}", "codex", i * week, "pip pytest", i % 2 == 0) for i in range(10)]
        new = [(f"b{i}", "codex", (10 + i) * week, "uv", i == 19) for i in range(20)]
        _history(led, old + new)
        report = compute_trends(led, [pb])
        assert report.playbooks[0]["status"] == "stale"  # the trap is recent, pip is gone
        # Recent logs still run pytest: the path is current, and the trap rate fell.
        _history(led, [(f"b{i}", "codex", (10 + i) * week, "uv pytest", i == 19)
                       for i in range(20)])
        report = compute_trends(led, [pb])
        assert report.playbooks[0]["status"] == "helping"
        assert report.playbooks[0]["before"]["rate_per_100"] == 50.0
        assert report.playbooks[0]["after"]["rate_per_100"] == 5.0
        # Other agents' sessions do not dilute the rate; fewer than --min-sessions after the
        # playbook is too-new (the boundary: 20 after it, 20 needed is judged).
        _history(led, [(f"c{i}", "gemini-cli", 15 * week, "", False) for i in range(50)])
        assert compute_trends(led, [pb]).playbooks[0]["after"]["sessions"] == 20
        assert compute_trends(led, [pb], rules=TrendRules(min_sessions=21)) \
            .playbooks[0]["status"] == "too-new"
        judged = compute_trends(led, [pb], rules=TrendRules(min_sessions=20)).playbooks[0]
        assert judged["before"]["sessions"] < 20 and judged["status"] == "no-data"


def test_bad_date_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["trends", "--store", str(tmp_path / "s"), "--since",
                                       "last week"])
    assert result.exit_code == 2
    assert "Error: Invalid value for --since: 'last week' is not a date (use YYYY-MM-DD)" \
        in result.output


@pytest.mark.parametrize("flag", ["--json", None])
def test_empty_ledger_reports_no_sessions(tmp_path: Path, flag: str | None) -> None:
    Store(tmp_path / "s").init()
    args = ["trends", "--store", str(tmp_path / "s"), "--ledger", str(tmp_path / "l.db")]
    out = orf(*args, *([flag] if flag else []))
    assert not (tmp_path / "l.db").exists()  # no history: nothing written
    if flag:
        assert orjson.loads(out) == {"schema": "orf.trends/1",
                                     "window": {"from": None, "to": None}, "sessions": 0,
                                     "playbooks": [], "traps": []}
    else:
        assert out == "sessions: 0 (- .. -)\nplaybooks: none in the store\n"
