"""Judge how a run ended: ranked outcome signals first, the model only when none decides.

Signals (``judge_signals.SIGNALS``) are ranked by what they prove: an evaluation result, the
harness's exit status, the project's test suite after the last edit, the agent's claim. The
strongest signal that earned its outcome decides; when none did, the heuristic judge says
``unknown`` with the reason, and a model backend is asked with the same ranked signals and the
end of the run. A model's answer below ``Settings.judge_min_confidence`` is recorded as
``unknown`` (with the model's reason), and a reply that cannot be parsed leaves the run unscored
(``unscored_reason``), never guessed: a false success is worse than a false failure, because a
wrong lesson is copied into every later session.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..config import Settings
from ..lessons.digest import estimate_tokens
from ..llm.backend import Backend, LLMReply, LLMRequest
from ..model import Finding, Trajectory, Verdict
from ..privacy import redact
from ..prompts import load_prompt
from .judge_signals import Signal, collect_signals, deciding
from .view import quote

MIN_SUCCESS_CONFIDENCE = 0.7
"""Default of ``Settings.judge_min_confidence``: a model answer below it is recorded unknown."""

JUDGE_TOKENS = 2500
"""Budget of the judging prompt: the task, the outcome signals and the end of the run."""


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


def _evidence(signals: list[Signal]) -> list[dict[str, Any]]:
    return [s.as_dict() for s in signals]


def verdict_from_signals(signals: list[Signal]) -> Verdict | None:
    """The verdict of the strongest signal that earned its outcome, or None."""
    sig = deciding(signals)
    if sig is None:
        return None
    return Verdict(outcome=sig.outcome, reason=f"{sig.detail} ({sig.name})",
                   decided_by="log", confidence=sig.row.confidence, signal=sig.name,
                   evidence_step=sig.source_id, signals=_evidence(signals))


def verdict_from_log(traj: Trajectory) -> Verdict | None:
    """The verdict the log's signals give, or None when no signal earned one."""
    return verdict_from_signals(collect_signals(traj))


def undecided(signals: list[Signal]) -> Verdict:
    """``unknown``, saying which signals were seen and why none decides."""
    if not signals:
        reason = "the log has no outcome signal (no evaluation, exit status, test run or claim)"
    else:
        seen = "; ".join(f"{s.name} -> {s.outcome} ({s.detail})" for s in signals[:3])
        reason = f"no signal earned a verdict: {seen}"
    return Verdict(outcome="unknown", reason=reason, decided_by="heuristic", confidence=0.0,
                   signals=_evidence(signals))


def heuristic_verdict(traj: Trajectory) -> Verdict:
    """The signals' verdict, or ``unknown`` with the reason."""
    signals = collect_signals(traj)
    return verdict_from_signals(signals) or undecided(signals)


def signal_lines(signals: list[Signal]) -> list[str]:
    """The ranked signals as prompt lines: what each proves and whether it decides."""
    lines = []
    for i, s in enumerate(signals, 1):
        weight = "decisive" if s.decides else f"evidence only: {s.row.measured}"
        where = f" (step {s.step})" if s.step is not None else ""
        lines.append(f"{i}. {s.name} -> {s.outcome} [{weight}]{where}: {s.detail}")
    return lines


def judge_prompt(traj: Trajectory, findings: list[Finding]) -> str:
    """The judging prompt: task, ranked outcome signals, final message and the last steps."""
    parts = ["## Task", quote(traj.task or "(the log does not state the task)", 1500)]
    lines = signal_lines(collect_signals(traj))
    parts.append("## Outcome signals, strongest first")
    parts.append(quote("\n".join(lines), 3000) if lines else "(none)")
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


def parse_judge_reply(reply: LLMReply, decided_by: str, *,
                      threshold: float = MIN_SUCCESS_CONFIDENCE,
                      signals: list[Signal] | None = None) -> tuple[Verdict | None, str | None]:
    """A verdict from the reply, or (None, why it is unusable).

    An answer below ``threshold`` is kept as ``unknown`` with the model's reason: an unsure
    verdict is not a verdict.
    """
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
    if outcome != "unknown" and parsed.confidence < threshold:
        reason = f"unsure {outcome} ({parsed.confidence:.2f} < {threshold:.2f}): {reason}"
        outcome = "unknown"
    return Verdict(outcome=outcome, reason=reason, decided_by=decided_by,
                   confidence=parsed.confidence, signals=_evidence(signals or [])), None


def read_judge_reply(reply: LLMReply, traj: Trajectory, backend: Backend,
                     settings: Settings) -> tuple[Verdict | None, str | None]:
    """``parse_judge_reply`` with the run's threshold and ``traj``'s signals as evidence."""
    return parse_judge_reply(reply, backend.decided_by, threshold=settings.judge_min_confidence,
                             signals=collect_signals(traj))


def unscored(decided_by: str, why: str) -> Verdict:
    """The record of a run the judge could not score."""
    return Verdict(outcome="unknown", reason=f"unscored: {why}", decided_by=decided_by,
                   confidence=0.0, unscored_reason=f"grade_parse_failure: {why}")
