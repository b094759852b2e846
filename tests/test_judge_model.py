"""The model judge: same ranked signals, answers kept only above the confidence setting."""

from __future__ import annotations

import json
from pathlib import Path

from _llm_helpers import (  # noqa: F401
    STORE,
    fake,
    fast_retry_waits,
    gemini_backend,
    gemini_settings,
    make_finding,
    make_traj,
)

from pipeline.stages.analysis import analyze_sessions, judge_session
from pipeline.stages.judge import judge_prompt
from pipeline.testing.fake_gemini import FakeGemini


def reply(outcome: str, confidence: float, reason: str = "the suite passes") -> str:
    return json.dumps({"outcome": outcome, "reason": reason, "confidence": confidence})


def test_prompt_ranks_the_signals_strongest_first() -> None:
    traj = make_traj(command="pytest -x")
    traj.outcome.exit_status = "submitted (exit_cost)"
    traj.outcome.task_complete = True
    prompt = judge_prompt(traj, [])
    block = prompt.split("## Outcome signals, strongest first\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in block.splitlines() if line[:1].isdigit()]
    assert [line.split(" ", 2)[1] for line in lines] == [
        "harness_autosubmit", "suite_passed", "claim_done"]
    assert lines[0].startswith("1. harness_autosubmit -> failure [evidence only: tune 1/2")


def test_unsure_answers_are_unknown_with_the_models_reason(fake: FakeGemini,  # noqa: F811
                                                           tmp_path: Path) -> None:
    fake.enqueue(reply("failure", 0.4, "probably broken"), reply("success", 0.75))
    traj = make_traj()
    backend = gemini_backend(fake, None)
    verdict = judge_session(traj, [make_finding(traj)], backend, gemini_settings())
    assert verdict.outcome == "unknown" and verdict.decided_by.startswith("gemini:")
    assert verdict.reason == "unsure failure (0.40 < 0.70): probably broken"
    verdict = judge_session(make_traj("s2"), [], backend, gemini_settings())
    assert (verdict.outcome, verdict.reason) == ("success", "the suite passes")


def test_the_batch_path_reads_the_threshold_setting(fake: FakeGemini) -> None:  # noqa: F811
    fake.responder = lambda body: (reply("success", 0.9) if "outcome" in json.dumps(
        body["generationConfig"]["responseJsonSchema"]) else None)
    traj = make_traj()
    settings = gemini_settings(judge_min_confidence=0.95)
    backend = gemini_backend(fake, None, judge_min_confidence=0.95)
    [result] = analyze_sessions([(traj, [make_finding(traj)])], backend, STORE, settings,
                                concurrency=1)
    assert result.verdict.outcome == "unknown"
    assert result.verdict.reason == "unsure success (0.90 < 0.95): the suite passes"
