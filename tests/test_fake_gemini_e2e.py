"""The real google-genai SDK against the fake Gemini server: faults, repairs, cache on rerun."""

from __future__ import annotations

import json
import threading
from collections import deque
from pathlib import Path
from typing import Any

import pytest
from _llm_helpers import (  # noqa: F401
    GOOD_DRAFT,
    STORE,
    fake,
    fast_retry_waits,
    gemini_backend,
    gemini_settings,
    make_finding,
    make_traj,
    open_ledger,
)

from pipeline.model import OutcomeHints
from pipeline.stages.analysis import analyze_sessions, draft_session, judge_session
from pipeline.testing.fake_gemini import (
    FakeGemini,
    Item,
    blocked,
    empty_candidates,
    invalid_json,
    max_tokens,
    rate_limited,
    server_error,
    slow,
)

JUDGE_OK = json.dumps({"outcome": "failure", "reason": "tests still fail", "confidence": 0.8})
DRAFT_OK = json.dumps({"drafts": [GOOD_DRAFT]})


def scripted(**per_purpose: list[Item]) -> Any:
    """A responder that answers judge and draft requests from separate scripts."""
    queues = {k: deque(v) for k, v in per_purpose.items()}
    lock = threading.Lock()

    def respond(body: dict[str, Any]) -> Item | None:
        schema = body["generationConfig"]["responseJsonSchema"]
        purpose = "judge" if "outcome" in schema["properties"] else "draft"
        with lock:
            queue = queues.get(purpose)
            return queue.popleft() if queue else None

    return respond


def run_once(server: FakeGemini, tmp_path: Path, **settings: Any) -> tuple[Any, Any]:
    traj = make_traj()
    findings = [make_finding(traj)]
    with open_ledger(tmp_path) as ledger:
        backend, run = gemini_backend(server, ledger, **settings), gemini_settings(**settings)
        verdict = judge_session(traj, findings, backend, run)
        result = draft_session(traj, findings, verdict, backend, STORE, run)
    return verdict, result


def test_faults_are_retried_and_rerun_makes_no_call(
    fake: FakeGemini, tmp_path: Path, fast_retry_waits: list[float]  # noqa: F811
) -> None:
    fake.responder = scripted(judge=[rate_limited("7s"), JUDGE_OK],
                              draft=[server_error(500), server_error(503), DRAFT_OK])
    verdict, result = run_once(fake, tmp_path)
    assert verdict.outcome == "failure"
    assert verdict.decided_by.startswith("gemini:")
    assert [d.title for d in result.drafts] == [GOOD_DRAFT["title"]]
    assert result.drafts[0].provenance.signature == "b2:sig-pytest"
    assert result.drafts[0].provenance.wire()["lesson"]["class"] == "missing_module"
    assert result.drafts[0].provenance.wire()["sessions"] == ["s1"]
    assert result.drafts[0].provenance.model
    assert 7.0 in fast_retry_waits  # RetryInfo honoured
    assert fake.count(":generateContent") == 5
    before = fake.model_calls
    verdict2, result2 = run_once(fake, tmp_path)
    assert fake.model_calls == before
    assert verdict2 == verdict
    assert result2.drafts == result.drafts
    with open_ledger(tmp_path) as ledger:
        assert ledger.call_totals()["calls"] == 2  # cache hits are not billed calls
        rows = ledger.db.execute("SELECT status, COUNT(*) FROM llm_calls GROUP BY status")
        assert dict(rows.fetchall()) == {"ok": 2, "cached": 2}


def test_timeout_is_retried(fake: FakeGemini, tmp_path: Path) -> None:  # noqa: F811
    fake.responder = scripted(judge=[slow(8.0), JUDGE_OK], draft=[DRAFT_OK])
    verdict, result = run_once(fake, tmp_path, call_timeout_s=2.0)
    # The verdict is the second judge reply: the first one timed out and was retried. (No
    # exact request count: on a loaded machine a fast reply may time out too.)
    assert verdict.outcome == "failure" and verdict.reason == "tests still fail"
    assert len(result.drafts) == 1
    judge_calls = [r for r in fake.requests if r.path.endswith(":generateContent")
                   and "outcome" in r.json["generationConfig"]["responseJsonSchema"]
                   ["properties"]]
    assert len(judge_calls) >= 2


@pytest.mark.parametrize("bad", [invalid_json(), empty_candidates(), max_tokens(), blocked()],
                         ids=["invalid-json", "empty", "max-tokens", "blocked"])
def test_bad_reply_is_repaired_once(fake: FakeGemini, tmp_path: Path, bad: Item) -> None:  # noqa: F811
    fake.responder = scripted(judge=[bad, JUDGE_OK], draft=[bad, DRAFT_OK])
    verdict, result = run_once(fake, tmp_path)
    assert verdict.outcome == "failure" and verdict.unscored_reason is None
    assert len(result.drafts) == 1
    assert len(result.failures) == 1 and result.failures[0].startswith("attempt 1:")
    bodies = [r.json for r in fake.requests if r.path.endswith(":generateContent")]
    assert len(bodies) == 4
    repairs = [b for b in bodies if "could not be used" in b["contents"][0]["parts"][0]["text"]]
    assert len(repairs) == 2


@pytest.mark.parametrize(("bad", "reason"), [
    (invalid_json(), "invalid json"), (empty_candidates(), "empty reply"),
    (max_tokens(), "MAX_TOKENS"), (blocked(), "blocked: SAFETY"),
])
def test_twice_bad_ends_unscored_and_undrafted_with_reason(
    fake: FakeGemini, tmp_path: Path, bad: Item, reason: str  # noqa: F811
) -> None:
    fake.responder = scripted(judge=[bad, bad], draft=[bad, bad])
    verdict, result = run_once(fake, tmp_path)
    assert verdict.outcome == "unknown"
    assert verdict.unscored_reason and verdict.unscored_reason.startswith("grade_parse_failure")
    assert result.drafts == []
    assert result.failures[-1].startswith("undrafted:")
    assert reason.lower() in result.failures[-1].lower()
    before = fake.model_calls
    verdict2, result2 = run_once(fake, tmp_path)
    assert fake.model_calls == before  # the unusable answers are cached too
    assert verdict2.unscored_reason == verdict.unscored_reason
    assert result2.failures == result.failures


def test_client_error_is_not_retried(fake: FakeGemini, tmp_path: Path) -> None:  # noqa: F811
    fake.responder = scripted(judge=[server_error(400), server_error(400)],
                              draft=[server_error(400), server_error(400)])
    verdict, result = run_once(fake, tmp_path)
    assert verdict.unscored_reason and "HTTP 400" in verdict.unscored_reason
    assert "HTTP 400" in result.failures[-1]
    assert fake.count(":generateContent") == 4  # one per attempt, no tenacity retries
    with open_ledger(tmp_path) as ledger:
        rows = ledger.db.execute("SELECT status, error FROM llm_calls").fetchall()
    assert {r[0] for r in rows} == {"failed"}
    assert all("HTTP 400" in r[1] for r in rows)


def test_retries_are_bounded(fake: FakeGemini, tmp_path: Path) -> None:  # noqa: F811
    fake.responder = lambda body: server_error(503)
    verdict, _ = run_once(fake, tmp_path, max_attempts=3)
    assert verdict.unscored_reason and "HTTP 503" in verdict.unscored_reason
    assert fake.count(":generateContent") == 3 * 2 * 2  # 3 attempts x 2 tries x 2 stages


def test_log_outcome_means_no_judge_call(fake: FakeGemini, tmp_path: Path) -> None:  # noqa: F811
    traj = make_traj(outcome=OutcomeHints(resolved=True))
    with open_ledger(tmp_path) as ledger:
        verdict = judge_session(traj, [make_finding(traj)], gemini_backend(fake, ledger),
                                gemini_settings())
    assert verdict.decided_by == "log" and verdict.outcome == "success"
    assert fake.model_calls == 0


def test_analyze_sessions_online_pool(fake: FakeGemini, tmp_path: Path) -> None:  # noqa: F811
    items = []
    for i in range(6):
        traj = make_traj(f"s{i}", task=f"task number {i}")
        items.append((traj, [make_finding(traj, signature=f"b2:sig{i}")] if i % 3 else []))
    with open_ledger(tmp_path) as ledger:
        results = analyze_sessions(items, gemini_backend(fake, ledger), STORE,
                                   gemini_settings(), concurrency=3)
    assert [r.session_id for r in results] == [f"s{i}" for i in range(6)]
    # judge + draft for the 4 sessions with findings; none for the 2 without
    assert fake.count(":generateContent") == 8
    assert all(len(r.drafts) == 1 for r in results if r.findings)
    assert all(r.drafts == [] for r in results if not r.findings)
    with open_ledger(tmp_path) as ledger:
        analyze_sessions(items, gemini_backend(fake, ledger), STORE, gemini_settings(),
                         concurrency=3)
    assert fake.count(":generateContent") == 8


def test_count_tokens_through_sdk(fake: FakeGemini) -> None:  # noqa: F811
    backend = gemini_backend(fake, None)
    assert backend.count_tokens("x" * 400) == 100
    assert fake.count(":countTokens") == 1


def test_every_prompt_goes_through_redact(
    fake: FakeGemini, tmp_path: Path  # noqa: F811
) -> None:
    token = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
    key = "AKIA" + "IOSFODNN7EXAMPLE"
    traj = make_traj(task=f"deploy with token {token}")
    traj.steps[0].output += f" key {key}"
    traj.outcome.final_message = f"used {token}"
    finding = make_finding(traj)
    finding.evidence[0].quote += f" {key}"
    with open_ledger(tmp_path) as ledger:
        backend, settings = gemini_backend(fake, ledger), gemini_settings()
        verdict = judge_session(traj, [finding], backend, settings)
        draft_session(traj, [finding], verdict, backend, STORE, settings)
    bodies = [r.text for r in fake.requests if r.path.endswith(":generateContent")]
    assert len(bodies) == 2  # judge + draft
    assert all(token not in b and key not in b for b in bodies)
    assert all("[REDACTED:github-token]" in b for b in bodies)
    assert "[REDACTED:aws-access-key-id]" in bodies[1]  # the draft view quotes the error
