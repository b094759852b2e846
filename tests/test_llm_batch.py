"""Batch Mode through the real SDK's batches/files calls against the fake server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _llm_helpers import (  # noqa: F401
    STORE,
    fake,
    fast_retry_waits,
    gemini_backend,
    gemini_settings,
    make_finding,
    make_traj,
    open_ledger,
)

from pipeline.llm import batch as batch_mod
from pipeline.run_events import BatchPolled, Counted
from pipeline.stages.analysis import analyze_sessions
from pipeline.testing.fake_gemini import FakeGemini, invalid_json


def items(n: int = 4) -> list[tuple[Any, Any]]:
    out = []
    for i in range(n):
        traj = make_traj(f"b{i}", task=f"batch task {i}")
        out.append((traj, [make_finding(traj, signature=f"b2:batch{i}")]))
    return out


def test_inline_batch_one_job_half_price(fake: FakeGemini, tmp_path: Path) -> None:  # noqa: F811
    fake.batch_polls_until_done = 3
    seen: list[Counted] = []
    with open_ledger(tmp_path) as ledger:
        results = analyze_sessions(items(), gemini_backend(fake, ledger), STORE,
                                   gemini_settings(), batch=True, progress=seen.append)
        rows = ledger.db.execute("SELECT batch, cost_usd, status FROM llm_calls").fetchall()
        jobs = ledger.db.execute("SELECT state FROM batch_jobs").fetchall()
    assert fake.count(":batchGenerateContent") == 1
    assert fake.count(":generateContent") == 0
    assert not any(r.path.startswith("/upload/") for r in fake.requests)
    assert all(len(r.drafts) == 1 and r.verdict.decided_by.startswith("gemini:") for r in results)
    assert len(rows) == 8 and all(r[0] == 1 and r[2] == "ok" for r in rows)
    assert [j[0] for j in jobs] == ["collected"]
    states = [e.state for e in seen if isinstance(e, BatchPolled)]
    assert states[0] == "running" and states[-1] == "succeeded"
    job = next(e.job for e in seen if isinstance(e, BatchPolled))
    assert all(e.job == job and e.total == 8 for e in seen if isinstance(e, BatchPolled))
    with open_ledger(tmp_path) as ledger:
        analyze_sessions(items(), gemini_backend(fake, ledger), STORE,
                         gemini_settings(), batch=True)
    assert fake.model_calls == 1  # rerun: everything from the ledger


def test_large_batch_goes_through_file_upload(
    fake: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    monkeypatch.setattr(batch_mod, "INLINE_LIMIT_BYTES", 1000)
    with open_ledger(tmp_path) as ledger:
        results = analyze_sessions(items(3), gemini_backend(fake, ledger), STORE,
                                   gemini_settings(), batch=True)
    # /upload/v1beta/files on google-genai 1.45 (the floor), /upload/v1/files on later SDKs
    assert sum(r.path.startswith("/upload/v1") and r.path.endswith("/files")
               for r in fake.requests) == 1
    assert fake.count(":batchGenerateContent") == 1
    assert fake.count(":download") == 1
    assert all(len(r.drafts) == 1 for r in results)
    uploaded = [r for r in fake.requests if r.path.startswith("/upload-session/")][0]
    assert uploaded.text.count('"key"') == 6


def test_repairs_go_in_a_second_job(fake: FakeGemini, tmp_path: Path) -> None:  # noqa: F811
    fake.enqueue(invalid_json())  # the first request of the first job
    with open_ledger(tmp_path) as ledger:
        results = analyze_sessions(items(2), gemini_backend(fake, ledger), STORE,
                                   gemini_settings(), batch=True)
    assert fake.count(":batchGenerateContent") == 2
    assert all(r.verdict.unscored_reason is None for r in results)
    assert all(len(r.drafts) == 1 for r in results)


class Interrupted(Exception):
    pass


def test_resume_after_interrupt_picks_the_stored_job(
    fake: FakeGemini, tmp_path: Path  # noqa: F811
) -> None:
    fake.batch_polls_until_done = 3

    def stop_while_running(event: Counted) -> None:
        if isinstance(event, BatchPolled) and event.state == "running":
            raise Interrupted

    with open_ledger(tmp_path) as ledger:
        with pytest.raises(Interrupted):
            analyze_sessions(items(), gemini_backend(fake, ledger), STORE,
                             gemini_settings(), batch=True, progress=stop_while_running)
        assert ledger.open_batch_job(gemini_backend(fake, None).model) is not None
    assert fake.count(":batchGenerateContent") == 1
    # A new process: fresh ledger connection and fresh SDK client.
    with open_ledger(tmp_path) as ledger:
        results = analyze_sessions(items(), gemini_backend(fake, ledger), STORE,
                                   gemini_settings(), batch=True)
        assert ledger.open_batch_job(gemini_backend(fake, None).model) is None
    assert fake.count(":batchGenerateContent") == 1  # not submitted again
    assert all(len(r.drafts) == 1 for r in results)


def test_failed_job_records_reasons(fake: FakeGemini, tmp_path: Path,  # noqa: F811
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    def failing(backend: Any, name: str, keys: list[str], **kw: Any) -> Any:
        raise batch_mod.BatchJobFailed(f"batch job {name} ended JOB_STATE_FAILED")

    monkeypatch.setattr(batch_mod, "collect", failing)
    with open_ledger(tmp_path) as ledger:
        results = analyze_sessions(items(1), gemini_backend(fake, ledger), STORE,
                                   gemini_settings(), batch=True)
    assert results[0].verdict.unscored_reason is not None
    assert "JOB_STATE_FAILED" in results[0].failures[-1]
