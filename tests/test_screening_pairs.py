"""Screening pairs each judged session with its own result, never silently off by one."""

from __future__ import annotations

from pathlib import Path

import pytest
from _llm_helpers import make_finding, make_traj, open_ledger

from pipeline.config import Settings
from pipeline.llm.registry import get_backend
from pipeline.stages.analysis import analyze_sessions
from pipeline.stages.scan import SessionScan
from pipeline.stages.screening import screen_results
from pipeline.stages.view import StoreContext


def _scan(sid: str, *, kept: bool = True) -> SessionScan:
    traj = make_traj(sid)
    findings = [make_finding(traj)]
    return SessionScan(session_id=sid, path=f"/logs/{sid}.jsonl", format="claude-code",
                       findings=findings, wasted_steps=findings[0].wasted_steps,
                       steps=len(traj.steps), trajectory=traj if kept else None)


def test_a_session_without_trajectory_is_skipped_and_the_rest_stay_paired(
        tmp_path: Path) -> None:
    settings = Settings()
    backend = get_backend(settings)
    selected = [_scan("gone", kept=False), _scan("s1"), _scan("s2")]
    results = analyze_sessions(
        [(s.trajectory, s.findings) for s in selected if s.trajectory is not None],
        backend, StoreContext(), settings)
    with open_ledger(tmp_path) as ledger:
        out = screen_results(selected, results, backend, ledger, record=False)
    assert sorted(it.session_id for it in out.items) == ["s1", "s2"]
    assert all(it.draft.provenance.session_ids() == [it.session_id] for it in out.items)


def test_a_result_missing_for_a_session_raises(tmp_path: Path) -> None:
    settings = Settings()
    backend = get_backend(settings)
    selected = [_scan("s1"), _scan("s2")]
    one = analyze_sessions([(selected[0].trajectory, selected[0].findings)], backend,
                           StoreContext(), settings)
    with open_ledger(tmp_path) as ledger, pytest.raises(ValueError, match="zip"):
        screen_results(selected, one, backend, ledger, record=False)
