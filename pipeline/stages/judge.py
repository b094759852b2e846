"""Judge how a run ended: the log's own outcome first, the model only when the log is silent.

The rubric is strict because a false success is worse than a false failure: a wrong lesson is
copied into every later session. So a model's ``success`` below ``MIN_SUCCESS_CONFIDENCE`` is
recorded as ``unknown``, and a reply that cannot be parsed leaves the run unscored (outcome
``unknown`` with ``unscored_reason``), never guessed.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..llm.backend import Backend, LLMReply, LLMRequest
from ..llm.redact import redact
from ..model import Finding, Trajectory, Verdict
from ..prompts import load_prompt
from .view import estimate_tokens, outcome_lines, quote

MIN_SUCCESS_CONFIDENCE = 0.7
"""A model verdict of success below this confidence is recorded as unknown."""

JUDGE_TOKENS = 2500
"""Budget of the judging prompt: the task, the outcome signals and the end of the run."""

FAILED_EXIT = ("error", "exit_cost", "exit_context", "exit_format", "exit_api", "abort",
               "timeout", "early_exit", "killed", "crash", "limit")
"""Substrings of an exit status that mean the agent stopped without finishing."""


class JudgeReply(BaseModel):
    """What the model returns (see ``prompts/judge.schema.json``)."""

    model_config = ConfigDict(extra="ignore")

    outcome: str
    reason: str
    confidence: float = Field(ge=0.0, le=1.0)


@cache
def judge_schema() -> dict[str, Any]:
    """The judge's JSON schema, kept next to its prompt."""
    value: dict[str, Any] = json.loads(load_prompt("judge.schema.json"))
    return value


def verdict_from_log(traj: Trajectory) -> Verdict | None:
    """The verdict the log itself gives, or None when it is silent or undecided."""
    hints = traj.outcome
    if hints.resolved is not None:
        return Verdict(outcome="success" if hints.resolved else "failure",
                       reason=f"the log's resolved flag is {hints.resolved}",
                       decided_by="log", confidence=0.95)
    if hints.score is not None:
        if hints.score >= 1.0:
            return Verdict(outcome="success", reason=f"the log's score is {hints.score}",
                           decided_by="log", confidence=0.9)
        # Partial credit counts as failure: the strict rubric prefers a false failure.
        return Verdict(outcome="failure", reason=f"the log's score is {hints.score} (below 1)",
                       decided_by="log", confidence=0.8)
    tests_passed = hints.tests_passed_at_end
    if tests_passed is None:
        from ..detect import last_test_passed  # late: detect imports heavy tables

        tests_passed = last_test_passed(traj)
    status = (hints.exit_status or "").lower()
    if status and any(word in status for word in FAILED_EXIT):
        return Verdict(outcome="failure", reason=f"the agent exited with {hints.exit_status!r}",
                       decided_by="log", confidence=0.85)
    if tests_passed is False:
        return Verdict(outcome="failure", reason="the last test run in the log failed",
                       decided_by="log", confidence=0.8)
    if tests_passed and hints.task_complete is not False:
        return Verdict(outcome="success",
                       reason="the last test run in the log passed"
                       + (" and the agent declared the task complete"
                          if hints.task_complete else ""),
                       decided_by="log", confidence=0.75)
    if hints.task_complete is False:
        return Verdict(outcome="failure", reason="the log says the task was not completed",
                       decided_by="log", confidence=0.7)
    return None


def heuristic_verdict(traj: Trajectory) -> Verdict:
    """The log's verdict, or ``unknown`` when the log is silent."""
    verdict = verdict_from_log(traj)
    if verdict is not None:
        return verdict
    return Verdict(outcome="unknown", reason="the log does not say how the run ended",
                   decided_by="heuristic", confidence=0.0)


def judge_prompt(traj: Trajectory, findings: list[Finding]) -> str:
    """The judging prompt: task, outcome signals, final message and the last steps."""
    parts = ["## Task", quote(traj.task or "(the log does not state the task)", 1500)]
    signals = outcome_lines(traj)
    parts.append("## Outcome signals in the log")
    parts.append("\n".join(signals) if signals else "(none)")
    if traj.outcome.final_message:
        parts.append("## Agent's final message")
        parts.append(quote(traj.outcome.final_message, 1500))
    wasted = sum(f.wasted_steps for f in findings)
    parts.append(f"## Run size\n{len(traj.steps)} steps, {traj.tool_calls} tool calls, "
                 f"{traj.failed_calls} failed, {wasted} wasted in loops")
    parts.append("## Last steps (oldest first)")
    tail: list[str] = []
    for step in reversed(traj.steps):
        line = (f"[{step.index}] {step.kind} {step.tool or ''} exit={step.exit_code} "
                f"error={step.is_error}\n{step.action_key[:300]}\n{step.output[-600:]}")
        if estimate_tokens("\n".join([*parts, *tail, line])) > JUDGE_TOKENS:
            break
        tail.insert(0, line)
    parts.append(quote("\n\n".join(tail), JUDGE_TOKENS * 4))
    return redact("\n".join(parts))


REPAIR_HINT = (
    "\n\n## Note\nYour previous reply could not be used ({reason}). Reply with one JSON object "
    "only, exactly matching the schema, no prose."
)


def judge_request(traj: Trajectory, findings: list[Finding], backend: Backend, *,
                  repair: str | None = None) -> LLMRequest:
    """The judging request for ``traj`` (``repair``: why the first attempt failed)."""
    system = load_prompt("judge.md")
    prompt = judge_prompt(traj, findings)
    if repair is not None:
        prompt += REPAIR_HINT.format(reason=repair)
    schema = judge_schema()
    return LLMRequest(
        key=backend.cache_key(system, prompt, schema), purpose="judge", session_id=traj.id,
        system=system, prompt=prompt, schema=schema, max_output_tokens=1024,
        attempt=2 if repair is not None else 1,
    )


def parse_judge_reply(reply: LLMReply, decided_by: str) -> tuple[Verdict | None, str | None]:
    """A verdict from the reply, or (None, why it is unusable)."""
    if not reply.ok or reply.text is None:
        return None, reply.error or "empty reply"
    try:
        data = orjson.loads(reply.text)
        parsed = JudgeReply.model_validate(data)
    except (orjson.JSONDecodeError, ValidationError) as exc:
        return None, f"invalid reply: {str(exc).splitlines()[0][:200]}"
    if parsed.outcome not in ("success", "failure", "unknown"):
        return None, f"invalid reply: outcome {parsed.outcome!r}"
    outcome: Literal["success", "failure", "unknown"] = parsed.outcome  # type: ignore[assignment]
    reason = parsed.reason.strip() or "(no reason given)"
    if outcome == "success" and parsed.confidence < MIN_SUCCESS_CONFIDENCE:
        # Strict rubric: an unsure success is not a success.
        outcome = "unknown"
        reason = f"unsure success ({parsed.confidence:.2f}): {reason}"
    return Verdict(outcome=outcome, reason=reason, decided_by=decided_by,
                   confidence=parsed.confidence), None


def unscored(decided_by: str, why: str) -> Verdict:
    """The record of a run the judge could not score."""
    return Verdict(outcome="unknown", reason=f"unscored: {why}", decided_by=decided_by,
                   confidence=0.0, unscored_reason=f"grade_parse_failure: {why}")


def judge(traj: Trajectory, findings: list[Finding], backend: Backend) -> Verdict:
    """Verdict for one run: the log's outcome, else the model (one repair try), else unscored.

    Args:
        traj: The session.
        findings: Its findings (their size goes into the prompt).
        backend: ``heuristic`` never calls a model; ``gemini`` does when the log is silent.

    Returns:
        The verdict with its reason and who decided.
    """
    from_log = verdict_from_log(traj)
    if from_log is not None:
        return from_log
    if not backend.uses_model:
        return heuristic_verdict(traj)
    request = judge_request(traj, findings, backend)
    verdict, why = parse_judge_reply(backend.generate(request), backend.decided_by)
    if verdict is not None:
        return verdict
    retry = judge_request(traj, findings, backend, repair=why)
    verdict, why2 = parse_judge_reply(backend.generate(retry), backend.decided_by)
    return verdict if verdict is not None else unscored(backend.decided_by, why2 or "no reply")
