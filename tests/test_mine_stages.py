"""orf mine as a chain of typed stages: each stage on its own, the events, the computed summary."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipeline.analyze import SessionReport, analyze_paths, scan_paths
from pipeline.cli.mine_cmd import _Progress
from pipeline.config import Settings, load_settings
from pipeline.detect.annotate import annotate_repeats
from pipeline.exit_codes import EXIT_ERROR, EXIT_OK
from pipeline.ledger import Ledger
from pipeline.mine import mine
from pipeline.report.json_out import session_json
from pipeline.run_events import (
    BatchPolled,
    DefaultLocations,
    Event,
    FindingsFound,
    LLMUsage,
    Progress,
    SourcesFound,
    Written,
)
from pipeline.run_summary import RunFacts, StageResults, summarize
from pipeline.stages.scan import ScanOptions, ScanResult, scan_all
from pipeline.stages.select import (
    ANALYZED_BEFORE,
    DEFERRED,
    findings_fingerprint,
    select_sessions,
)
from pipeline.stages.sources import DEFAULT_LOCATIONS, Sources, find_sources, source_hash

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "mine"
SAME_TRAP = ["alpha-session.jsonl", "beta-session.jsonl"]


def _logs(tmp_path: Path) -> Path:
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in SAME_TRAP:
        shutil.copy(FIX / name, logs / name)
    return logs


def _settings(tmp_path: Path) -> Settings:
    return load_settings({"store": tmp_path / "experiences", "ledger": tmp_path / "ledger.db",
                          "jobs": 1, "backend": "heuristic"})


def _scan(logs: Path, ledger: Ledger) -> tuple[Sources, list[ScanResult]]:
    sources = find_sources([logs], ledger, since=None, fmt=None, dry_run=True)
    return sources, scan_all([s.session_source() for s in sources.todo], ScanOptions(), 1,
                             lambda _e: None)


def test_mine_emits_typed_events_that_match_its_summary(tmp_path: Path) -> None:
    events: list[Event] = []
    summary = mine([_logs(tmp_path)], _settings(tmp_path), progress=events.append)
    assert summary.exit_code == 0, summary.errors
    scanned = [e for e in events if isinstance(e, Progress) and e.stage == "scanned"]
    assert scanned == [Progress("scanned", 1, 2), Progress("scanned", 2, 2)]
    assert events[0] == SourcesFound(seen=2, todo=2, unchanged=0)
    assert FindingsFound(summary.findings, summary.wasted_steps) in events
    assert LLMUsage(0, 0, 0, 0.0) in events  # the offline backend calls no model
    written = [e for e in events if isinstance(e, Written)]
    assert [(e.outcome, e.exp_id) for e in written] == \
        [(w["outcome"], w["id"]) for w in summary.written] + \
        [("duplicate", r["exp_id"]) for r in summary.reinforced]
    order = [type(e) for e in events if not isinstance(e, Progress)]
    assert order == [SourcesFound, FindingsFound, LLMUsage, Written, Written]


def test_rerun_emits_nothing_after_discovery_but_the_empty_scan(tmp_path: Path) -> None:
    logs, settings = _logs(tmp_path), _settings(tmp_path)
    mine([logs], settings)
    events: list[Event] = []
    again = mine([logs], settings, progress=events.append)
    assert events == [SourcesFound(seen=2, todo=0, unchanged=2), FindingsFound(0, 0)]
    assert (again.sessions_unchanged, again.sessions_selected) == (2, 0)


def test_selection_defers_past_the_maximum_and_skips_sessions_analysed_before(
        tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.db") as ledger:
        _sources, scans = _scan(_logs(tmp_path), ledger)
        first = select_sessions(scans, ledger, min_wasted=1, max_sessions=1)
        assert (first.read, first.failed, len(first.selected), len(first.deferred)) == \
            (2, 0, 1, 1)
        ranked = sorted((s for r in scans for s in r.sessions),
                        key=lambda s: (-s.wasted_steps, s.session_id))
        assert [s.session_id for s in first.selected] == [ranked[0].session_id]
        assert [(p.session_id, p.reason) for p in first.passed_over] == \
            [(ranked[1].session_id, DEFERRED)]
        assert first.deferred_paths == {ranked[1].path}

        chosen = first.selected[0]
        ledger.mark_analyzed(chosen.session_id, findings_fingerprint(chosen))
        second = select_sessions(scans, ledger, min_wasted=1, max_sessions=1)
        assert [s.session_id for s in second.selected] == [ranked[1].session_id]
        assert (chosen.session_id, ANALYZED_BEFORE) in \
            [(p.session_id, p.reason) for p in second.passed_over]


def test_analyze_and_mine_share_one_scan(tmp_path: Path) -> None:
    logs = _logs(tmp_path)
    (logs / "gamma-session.jsonl").write_bytes((FIX / "gamma-session.jsonl").read_bytes())
    with Ledger(tmp_path / "ledger.db") as ledger:
        _sources, scans = _scan(logs, ledger)
    mined = sorted((s.session_id, [f.signature for f in s.findings], s.wasted_steps)
                   for r in scans for s in r.sessions)
    analysed = sorted((s.session_id, [f.signature for f in s.findings], s.wasted_steps)
                      for s in scan_paths([logs], Settings(), []))
    assert mined == analysed
    assert any(findings for _sid, findings, _w in mined)


def test_the_report_shows_the_repeats_the_scan_marked(tmp_path: Path) -> None:
    logs = _logs(tmp_path)
    reports = list(analyze_paths([logs], Settings(), []))
    assert reports
    for r in reports:
        fresh = annotate_repeats(r.trajectory, findings=r.findings)
        assert r.repeats == fresh
    report = next(r for r in reports if r.repeats)
    # The JSON is the scan's: an empty list marked by the scan stays empty.
    marked = SessionReport(report.trajectory, report.findings, report.verdict, repeats=[])
    assert session_json(marked)["repeats"] == []
    # Nothing is re-detected at report time: a report built without the scan's marks has none.
    unmarked = SessionReport(report.trajectory, report.findings, report.verdict)
    assert session_json(unmarked)["repeats"] == []
    assert len(session_json(report)["repeats"]) == len(report.repeats)


def test_the_cli_renders_each_event(capsys: pytest.CaptureFixture[str]) -> None:
    render = _Progress()
    render.tty = False
    render(DefaultLocations((), DEFAULT_LOCATIONS))
    render(DefaultLocations((Path("/a"), Path("/b")), DEFAULT_LOCATIONS))
    render(SourcesFound(3, 2, 1))
    for i in range(1, 21):
        render(Progress("scanned", i, 20))
    render(FindingsFound(5, 7))
    render(Progress("sessions", 1, 1))
    render(BatchPolled("batches/7", "running", 0, 4, 5.0))
    render(BatchPolled("batches/7", "running", 0, 4, 6.0))  # same decile, same state: quiet
    render(BatchPolled("batches/7", "succeeded", 4, 4, 70.0))
    # The Gemini API counts no answers while a job runs: the state and time, a line per 10 min.
    render(BatchPolled("batches/8", "running", None, 4, 1.0))
    render(BatchPolled("batches/8", "running", None, 4, 599.0))
    render(BatchPolled("batches/8", "running", None, 4, 600.0))
    render(BatchPolled("batches/8", "succeeded", None, 4, 3700.0))
    render(LLMUsage(3, 100, 20, 0.01234))
    render(Written("new", "EXP-20260101-0001"))
    render(Written("failed", None, "disk full"))
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "orf: default locations: none found (looked for " + ", ".join(DEFAULT_LOCATIONS) + ")",
        "orf: default locations: /a, /b",
        "orf: sessions: 3 seen, 2 new or changed, 1 unchanged",
        # Off a terminal a counter shows every 10%, and its last value.
        *(f"orf: scanned {i}/20 sources" for i in (1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20)),
        "orf: findings: 5 (7 wasted steps)",
        "orf: sessions: 1/1",
        "orf: batch batches/7 running: 0/4, 0m05s",
        "orf: batch batches/7 succeeded: 4/4, 1m10s",
        "orf: batch batches/8 running: 4 requests, 0m01s",
        "orf: batch batches/8 running: 4 requests, 10m00s",
        "orf: batch batches/8 succeeded: 4 requests, 1h01m",
        "orf: llm: 3 calls, 100 in / 20 out tokens, $0.0123 so far",
        "orf: new: EXP-20260101-0001",
        "orf: failed: disk full",
    ]


def _facts(**kw: object) -> RunFacts:
    base: dict[str, object] = dict(store="s", backend="heuristic", model=None, dry_run=False,
                                   batch=False, usage=LLMUsage(0, 0, 0, 0.0), cached=0,
                                   elapsed_s=0.0, fail_on_error=0.5)
    base.update(kw)
    return RunFacts(**base)  # type: ignore[arg-type]


def test_summary_is_computed_from_the_stages() -> None:
    sources = Sources(seen=4, unchanged=1, failed=1, issues=["x.jsonl: cannot stat: gone"],
                      skipped=["notes.txt: not a session log"])
    stages = StageResults(sources)
    stages.screened.dropped = 2
    stages.screened.dropped_reasons["secret"] += 2
    stages.published.outcomes.update({"new": 1, "existing": 1})
    summary = summarize(stages, _facts(usage=LLMUsage(2, 10, 5, 0.5), cached=1))
    assert (summary.sessions_seen, summary.sessions_unchanged, summary.sessions_failed) == \
        (4, 1, 1)
    assert dict(summary.drafts) == {"new": 1, "existing": 1, "dropped": 2}
    assert dict(summary.dropped) == {"secret": 2}
    assert (summary.llm_calls, summary.llm_cached, summary.cost_usd) == (2, 1, 0.5)
    assert summary.issues == ["x.jsonl: cannot stat: gone"]
    # One failed source of one attempted: past fail_on_error.
    assert summary.exit_code == EXIT_ERROR
    assert summarize(StageResults(Sources(seen=1, unchanged=1)), _facts()).exit_code == EXIT_OK
    assert summarize(StageResults(Sources()), _facts()).exit_code == EXIT_ERROR


def test_judge_and_draft_reuse_the_scans_step_analysis(tmp_path: Path) -> None:
    from pipeline.detect import actions
    from pipeline.llm.registry import get_backend
    from pipeline.stages.judge_draft import judge_and_draft
    from pipeline.stages.view import StoreContext

    with Ledger(tmp_path / "ledger.db") as ledger:
        sources = find_sources([_logs(tmp_path)], ledger, since=None, fmt=None, dry_run=True)
        # Two workers: the trajectories come back through pickling, analysis included.
        scans = scan_all([s.session_source() for s in sources.todo], ScanOptions(), 2,
                         lambda _e: None)
        selected = select_sessions(scans, ledger, min_wasted=1, max_sessions=10).selected
    assert len(selected) == 2
    trajs = [s.trajectory for s in selected if s.trajectory is not None]
    scanned = [t.analysis for t in trajs]
    assert len(scanned) == 2 and all(a is not None for a in scanned)
    settings = _settings(tmp_path)
    results = judge_and_draft(selected, get_backend(settings), StoreContext(), settings,
                              concurrency=1, batch=False, emit=lambda _e: None)
    assert [r.session_id for r in results] == [s.session_id for s in selected]
    assert sum(len(r.drafts) for r in results) == 2
    # The judge and the lesson builder read the scan's analysis: the very object it left.
    assert all(r.trajectory.analysis is a for r, a in zip(results, scanned, strict=True))
    traj = trajs[0]
    traj.steps.append(traj.steps[-1])  # changed steps: analysed again
    actions.analyze(traj)
    assert traj.analysis is not scanned[0]
    assert traj.analysis is not None and traj.analysis[0] == len(traj.steps)


def test_a_terminal_sees_counters_redrawn_in_place(capsys: pytest.CaptureFixture[str]) -> None:
    render = _Progress()
    render.tty = True
    render(Progress("scanned", 1, 2))
    render(Progress("scanned", 2, 2))
    render(SourcesFound(1, 0, 1))
    render(Progress("sessions", 1, 3))
    render(FindingsFound(0, 0))  # a line after an open counter starts on a new line
    # (click drops the erase-line escape when the stream is not a real terminal)
    assert capsys.readouterr().err == (
        "\rorf: scanned 1/2 sources\rorf: scanned 2/2 sources\n"
        "orf: sessions: 1 seen, 0 new or changed, 1 unchanged\n"
        "\rorf: sessions: 1/3\norf: findings: 0 (0 wasted steps)\n")


def test_sources_skips_what_the_ledger_saw_and_rehashes_a_touched_file(tmp_path: Path) -> None:
    import os

    logs = _logs(tmp_path)
    with Ledger(tmp_path / "ledger.db") as ledger:
        first = find_sources([logs], ledger, since=None, fmt=None, dry_run=False)
        assert (first.seen, len(first.todo), first.unchanged) == (2, 2, 0)
        assert all(s.content_hash == "" for s in first.todo)  # new: no hash needed yet
        for s in first.todo:
            ledger.record_source(s.key, size=s.size, mtime=s.mtime,
                                 content_hash=source_hash(s.path, s.is_dir), format=s.format,
                                 status="ok", error=None)
        touched = logs / SAME_TRAP[0]
        os.utime(touched, (1_700_000_000, 1_700_000_000))
        again = find_sources([logs], ledger, since=None, fmt=None, dry_run=False)
        assert (again.seen, again.todo, again.unchanged) == (2, [], 2)
        # The touched file's new mtime is recorded: the next run needs no hash.
        known = ledger.source(str(touched.resolve()))
        assert known is not None and known.mtime == 1_700_000_000
        later = find_sources([logs], ledger, since=1_800_000_000, fmt=None, dry_run=False)
        assert (later.todo, later.unchanged) == ([], 2)
