"""OpenHands events turned into steps, for both generations, whichever file they came from.

- V0 events name their type in a string ``action`` or ``observation`` (``args``/``extras``,
  ``cause``, ``tool_call_metadata``, ``llm_metrics``); an observation pairs with its action
  by ``cause``, or, in old flat histories without ids, with the action just before it.
- V1 (software-agent-sdk) events carry a ``kind``: ActionEvent / ObservationEvent (paired by
  ``action_id`` or ``tool_call_id``), MessageEvent, AgentErrorEvent, Condensation, ...

A tool step fails when its exit code is non-zero (``extras.metadata.exit_code``,
``observation.exit_code`` or ``metadata.exit_code``; -1 means "still running / no exit" and
is not a failure), on ``error`` observations, ``AgentErrorEvent``, ``is_error: true``, and
when an editor observation starts with ``ERROR:``. An error observation with no action
(a rejected tool call) is a failed tool step of its own.

Where the events are read from (the four file shapes) is ``openhands.py``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model import OutcomeHints, RawRef, Step
from . import base
from .common import bounded
from .fields import as_int, as_key, content_text, obj
from .records import RECORD_ERRORS, skip_record
from .steps import set_output, text_step, text_step_and_text, tool_step
from .tools import normalize_tool

_V0_ACTION_TOOLS = {
    "run": "bash", "run_ipython": "other", "read": "read", "edit": "edit", "write": "write",
    "browse": "web", "browse_interactive": "web", "think": "think", "finish": "finish",
    "delegate": "other", "mcp": "other", "call_tool_mcp": "other", "task_tracking": "other",
}
# Bookkeeping events that are neither agent actions nor conversation turns.
_V0_SKIP_ACTIONS = frozenset({"recall", "change_agent_state", "null", "pause", "resume"})
_V0_SKIP_OBS = frozenset({"recall", "agent_state_changed", "null", "success"})
_V0_COMPACTION = frozenset({"condensation", "condensation_request", "agent_condensation"})
_V0_META = frozenset({
    "id", "timestamp", "source", "message", "action", "observation", "args", "extras",
    "cause", "content", "tool_call_metadata", "llm_metrics", "thought", "timeout",
})
# Runtime flags on V0 actions: they never change what the action does, so they stay out of
# the args (and the action key) and go to ``extra``.
_V0_FLAGS = frozenset({
    "is_input", "blocking", "hidden", "confirmation_state", "impl_source", "keep_prompt",
    "translated_ipython_code", "security_risk", "is_confirmed", "action_risk", "include_extra",
})
_V1_SKIP = frozenset({"ConversationStateUpdateEvent", "PauseEvent", "TokenEvent"})
_V1_COMPACTION = frozenset({"Condensation", "CondensationRequest", "CondensationSummaryEvent"})


@dataclass
class EventBuilder:
    """Accumulates steps from events of either generation, pairing results with actions."""

    ctx: base.ParseContext
    path: Path
    steps: list[Step] = field(default_factory=list)
    pending: dict[str, Step] = field(default_factory=dict)
    last_unpaired: Step | None = None
    models: Counter[str] = field(default_factory=Counter)
    task: str | None = None
    outcome: OutcomeHints = field(default_factory=OutcomeHints)
    started_at: str | None = None
    last_accumulated: int = 0
    tokens_in: int | None = None
    tokens_out: int | None = None

    # ---- shared ----

    def _add(self, step: Step) -> Step:
        step.index = len(self.steps)
        self.steps.append(step)
        return step

    def event(self, ev: Any, raw: RawRef, where: str) -> None:
        """Dispatch one event; bad ones are reported and skipped."""
        try:
            self._dispatch(ev, raw, where)
        except RECORD_ERRORS as exc:
            skip_record(self.ctx, raw.path, raw.line, where, exc)

    def _dispatch(self, ev: Any, raw: RawRef, where: str) -> None:
        if isinstance(ev, list) and len(ev) == 2:
            # Old eval histories store [action, observation] pairs.
            self.event(ev[0], raw, where)
            self.event(ev[1], raw, where)
            return
        if not isinstance(ev, dict):
            self.ctx.warn(raw.path, raw.line, f"{where}: expected an event object, got "
                          f"{type(ev).__name__}; skipped")
            return
        ts = ev.get("timestamp")
        if isinstance(ts, str) and self.started_at is None:
            self.started_at = ts
        # V0 events name their type in a string 'action'/'observation'; V1 events carry a
        # 'kind' and nest the action/observation as objects.
        if isinstance(ev.get("action"), str):
            self._v0_action(ev, raw)
        elif isinstance(ev.get("observation"), str):
            self._v0_observation(ev, raw)
        elif isinstance(ev.get("kind"), str):
            self._v1(ev, raw, where)
        else:
            self.ctx.warn(raw.path, raw.line, f"{where}: event has neither 'action', "
                          "'observation' nor 'kind'; skipped")

    def _user_or_message(self, source: Any, text: str, sid: str, ts: Any, raw: RawRef) -> None:
        # Task and final message are bounded from the step's redacted text: one scan each.
        if source == "user":
            step, clean = text_step_and_text(0, sid, "user", text, self.ctx, timestamp=_ts(ts),
                                             raw_ref=raw)
            self._add(step)
            if self.task is None:
                self.task = bounded(clean, redacted=True)
        else:
            step, clean = text_step_and_text(0, sid, "message", text, self.ctx,
                                             timestamp=_ts(ts), raw_ref=raw)
            self._add(step)
            if clean.strip():
                self.outcome.final_message = bounded(clean, redacted=True)

    def _observe(self, step: Step, output: str, code: int | None, failed: bool) -> None:
        is_error = failed or (code is not None and code not in (0, -1))
        set_output(step, output, self.ctx, exit_code=code, is_error=is_error)

    # ---- V0 ----

    def _v0_action(self, ev: dict[str, Any], raw: RawRef) -> None:
        action = ev["action"]
        sid = as_key(ev.get("id")) or str(len(self.steps))
        args = ev.get("args")
        if not isinstance(args, dict):
            args = {k: v for k, v in ev.items() if k not in _V0_META}
        thought = content_text(args.get("thought")) or content_text(ev.get("thought"))
        ts = ev.get("timestamp")
        if action in _V0_SKIP_ACTIONS:
            return
        if action == "message":
            text = content_text(args.get("content")) or content_text(ev.get("message"))
            self._user_or_message(ev.get("source", "user" if self.task is None else "agent"),
                                  text, sid, ts, raw)
            return
        if action == "system":
            text = content_text(args.get("content"))
            self._add(text_step(0, sid, "system", text, self.ctx, timestamp=_ts(ts), raw_ref=raw))
            return
        if action in _V0_COMPACTION:
            self._add(text_step(0, sid, "compaction", content_text(args.get("summary")), self.ctx,
                                timestamp=_ts(ts), raw_ref=raw, extra={"action": action}))
            return
        meta = obj(ev.get("tool_call_metadata"))
        self._v0_model(meta)
        raw_tool = meta.get("function_name") if isinstance(meta.get("function_name"), str) \
            else action
        tool = _V0_ACTION_TOOLS.get(action) or normalize_tool(raw_tool)
        call_args = {k: v for k, v in args.items() if k != "thought" and k not in _V0_FLAGS}
        extra: dict[str, Any] = {"action": action}
        flags = {k: v for k, v in args.items() if k in _V0_FLAGS}
        if flags:
            extra["flags"] = flags
        if isinstance(meta.get("function_name"), str):
            extra["function_name"] = meta["function_name"]
        step = self._add(tool_step(
            0, sid, raw_tool, call_args, "", self.ctx, tool=tool, timestamp=_ts(ts), raw_ref=raw,
            text=thought or content_text(ev.get("message")),
            tokens=self._v0_tokens(ev.get("llm_metrics")), extra=extra,
        ))
        if action == "finish":
            self.outcome.task_complete = True
            final = args.get("final_thought") or args.get("thought") or ev.get("message")
            if isinstance(final, str) and final.strip():
                # Most often the action's thought again: the session's scan cache knows it.
                self.outcome.final_message = bounded(self.ctx.secrets.redact(final),
                                                     redacted=True)
            return
        if "id" in ev:
            self.pending[sid] = step
        else:
            self.last_unpaired = step

    def _v0_observation(self, ev: dict[str, Any], raw: RawRef) -> None:
        obs = ev["observation"]
        if obs in _V0_SKIP_OBS:
            return
        sid = as_key(ev.get("id")) or str(len(self.steps))
        content = content_text(ev.get("content"))
        extras = obj(ev.get("extras"))
        if obs in _V0_COMPACTION:
            self._add(text_step(0, sid, "compaction", content, self.ctx,
                                timestamp=_ts(ev.get("timestamp")), raw_ref=raw))
            return
        metadata = obj(extras.get("metadata"))
        code = as_int(metadata.get("exit_code"))
        if code is None:
            code = as_int(extras.get("exit_code"))
        if code is None:
            code = as_int(ev.get("exit_code"))
        failed = obs in ("error", "user_rejected") or (
            obs in ("edit", "read", "write") and content.lstrip().startswith("ERROR:")
        )
        cause = ev.get("cause")
        step = None
        if cause is not None:
            step = self.pending.pop(as_key(cause) or "", None)
        elif "id" not in ev and self.last_unpaired is not None:
            step, self.last_unpaired = self.last_unpaired, None
        if step is None:
            if obs != "error":
                return  # an environment notice with no action behind it
            # A tool call the runtime rejected before it became an action.
            meta = obj(ev.get("tool_call_metadata"))
            name = meta.get("function_name")
            step = self._add(tool_step(
                0, sid, name if isinstance(name, str) else None, {}, "", self.ctx,
                timestamp=_ts(ev.get("timestamp")), raw_ref=raw,
                extra={"observation": obs, "unpaired": True},
            ))
        self._observe(step, content, code, failed)
        step.extra["observation"] = obs

    def _v0_model(self, meta: dict[str, Any]) -> None:
        resp = meta.get("model_response")
        if isinstance(resp, dict) and isinstance(resp.get("model"), str):
            self.models[resp["model"]] += 1

    def _v0_tokens(self, metrics: Any) -> int | None:
        """Tokens of this turn: the growth of the accumulated usage since the last action."""
        if not isinstance(metrics, dict):
            return None
        usage = metrics.get("accumulated_token_usage")
        if not isinstance(usage, dict):
            return None
        p = as_int(usage.get("prompt_tokens")) or 0
        c = as_int(usage.get("completion_tokens")) or 0
        self.tokens_in, self.tokens_out = p, c
        total = p + c
        delta = max(0, total - self.last_accumulated)
        self.last_accumulated = total
        return delta

    # ---- V1 ----

    def _v1(self, ev: dict[str, Any], raw: RawRef, where: str) -> None:
        kind = ev["kind"]
        sid = as_key(ev.get("id")) or str(len(self.steps))
        ts = _ts(ev.get("timestamp"))
        if kind in _V1_SKIP:
            return
        if kind == "SystemPromptEvent":
            self._add(text_step(0, sid, "system", content_text(ev.get("system_prompt")), self.ctx,
                                timestamp=ts, raw_ref=raw))
        elif kind == "MessageEvent":
            msg = obj(ev.get("llm_message"))
            self._user_or_message(ev.get("source"), content_text(msg.get("content")), sid, ts, raw)
        elif kind == "ActionEvent":
            self._v1_action(ev, sid, ts, raw)
        elif kind in ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent"):
            self._v1_result(ev, kind, sid, ts, raw)
        elif kind in _V1_COMPACTION:
            text = content_text(ev.get("summary"))
            self._add(text_step(0, sid, "compaction", text, self.ctx, timestamp=ts, raw_ref=raw,
                                extra={"kind": kind}))
        else:
            self._add(text_step(0, sid, "system", "", self.ctx, timestamp=ts, raw_ref=raw,
                                extra={"kind": kind}))

    def _v1_action(self, ev: dict[str, Any], sid: str, ts: str | None, raw: RawRef) -> None:
        action = obj(ev.get("action"))
        name = ev.get("tool_name") if isinstance(ev.get("tool_name"), str) else None
        akind = action.get("kind") if isinstance(action.get("kind"), str) else ""
        args = {k: v for k, v in action.items() if k != "kind"}
        tool = normalize_tool(name)
        if tool == "edit" and args.get("command") == "view":
            tool = "read"
        elif tool == "edit" and args.get("command") == "create":
            tool = "write"
        elif akind == "FinishAction":
            tool = "finish"
        thought = content_text(ev.get("thought"))
        step = self._add(tool_step(
            0, sid, name, args, "", self.ctx, tool=tool, timestamp=ts, raw_ref=raw, text=thought,
            extra={"tool_name": name, "action_kind": akind,
                   "tool_call_id": ev.get("tool_call_id")},
        ))
        if tool == "finish":
            self.outcome.task_complete = True
            msg = args.get("message")
            if isinstance(msg, str) and msg.strip():
                self.outcome.final_message = bounded(self.ctx.secrets.redact(msg), redacted=True)
        self.pending[sid] = step
        if isinstance(ev.get("tool_call_id"), str):
            self.pending[ev["tool_call_id"]] = step

    def _v1_result(self, ev: dict[str, Any], kind: str, sid: str, ts: str | None,
                   raw: RawRef) -> None:
        step = None
        for key in ("action_id", "tool_call_id"):
            ref = ev.get(key)
            if isinstance(ref, str) and ref in self.pending:
                step = self.pending.pop(ref)
        if step is not None:
            # Drop the other key of the same action so a second result cannot pair with it.
            for k in [k for k, v in self.pending.items() if v is step]:
                del self.pending[k]
        obs = obj(ev.get("observation"))
        if kind == "ObservationEvent":
            output = content_text(obs.get("content"))
            if not output and isinstance(obs.get("output"), str):
                output = obs["output"]
            meta = obj(obs.get("metadata"))
            code = as_int(obs.get("exit_code"))
            if code is None:
                code = as_int(meta.get("exit_code"))
            failed = obs.get("is_error") is True or bool(obs.get("error"))
        else:
            output = content_text(ev.get("error") or ev.get("rejection_reason") or "")
            code, failed = None, True
        if step is None:
            if kind == "ObservationEvent" and not failed:
                return
            name = ev.get("tool_name") if isinstance(ev.get("tool_name"), str) else None
            step = self._add(tool_step(0, sid, name, {}, "", self.ctx,
                                       timestamp=ts, raw_ref=raw,
                                       extra={"kind": kind, "unpaired": True}))
        self._observe(step, output, code, failed)
        if kind != "ObservationEvent":
            step.extra["result_kind"] = kind


def _ts(value: Any) -> str | None:
    return value if isinstance(value, str) else None
