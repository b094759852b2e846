"""Codex CLI rollouts: ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``.

Each line is ``{"timestamp", "type", "payload"}``. Tool calls are ``response_item``
``function_call``/``custom_tool_call``/``local_shell_call`` records paired with their
``*_output`` records by ``call_id``. The exit code comes from the ``exec_command_end`` event
of the same call id (which may arrive before or after the output), else from the output's
JSON metadata, the tool result a code-mode script prints as JSON, or a "Process exited with
code N" line. Older rollouts (2025) have no ``payload`` wrapper; their records are read the
same way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..model import OutcomeHints, RawRef, Step, Trajectory
from . import base
from .base import ParseContext
from .common import bounded, most_common
from .fields import as_count, as_int, as_key, content_text, parse_args
from .jsonio import ReadStats, iter_jsonl
from .records import RECORD_ERRORS, skip_record, source_info
from .steps import StepLog, set_output, text_step, text_step_and_text, tool_step
from .tools import parse_exit_code

NAME = "codex"
_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
_RUNNING = "Process running with session ID"


@dataclass
class _Call:
    """A tool call waiting for its output and exit code."""

    step: Step
    output: str | None = None
    exit_code: int | None = None
    failed: bool | None = None


@dataclass
class _State(StepLog):
    calls: dict[str, _Call] = field(default_factory=dict)
    ends: dict[str, dict[str, Any]] = field(default_factory=dict)
    models: Counter[str] = field(default_factory=Counter)
    meta: dict[str, Any] = field(default_factory=dict)
    task: str | None = None
    started_at: str | None = None
    totals: dict[str, Any] | None = None
    batch_start: int = 0
    outcome: OutcomeHints = field(default_factory=OutcomeHints)
    last_text: str | None = None


def _output_text(value: Any) -> tuple[str, int | None]:
    """Output text and the exit code carried in its JSON metadata (older rollouts)."""
    if isinstance(value, str):
        if value.startswith('{"output"'):
            try:
                decoded = orjson.loads(value)
            except orjson.JSONDecodeError:
                return value, None
            if isinstance(decoded, dict):
                meta = decoded.get("metadata")
                code = meta.get("exit_code") if isinstance(meta, dict) else None
                return content_text(decoded.get("output")), code if isinstance(code, int) else None
        return value, None
    if isinstance(value, dict):
        meta = value.get("metadata")
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        text = value.get("output", value.get("content", value.get("text")))
        return content_text(text), code if isinstance(code, int) else None
    if isinstance(value, list):
        return content_text(value), _script_exit_code(value)
    return content_text(value), None


def _script_exit_code(blocks: list[Any]) -> int | None:
    """The exit code a code-mode script prints: the first tool result it dumps as JSON.

    Newer rollouts run a script (``exec``) that calls the tools and prints what it wants,
    often ``JSON.stringify(r)`` of an ``exec_command`` result (``{"exit_code": N, ...}``), one
    text block per print; no ``exec_command_end`` event is written for those commands.
    """
    for block in blocks:
        text = block.get("text") if isinstance(block, dict) else None
        if not isinstance(text, str) or '"exit_code"' not in text:
            continue
        try:
            decoded = orjson.loads(text)
        except orjson.JSONDecodeError:
            continue
        code = decoded.get("exit_code") if isinstance(decoded, dict) else None
        if type(code) is int:
            return code
    return None


def _call(st: _State, p: dict[str, Any], ts: Any, ref: RawRef, ctx: ParseContext) -> None:
    ptype = p.get("type")
    cid = as_key(p.get("call_id")) or as_key(p.get("id")) or str(ref)
    if ptype == "local_shell_call":
        action: dict[str, Any] = p["action"] if isinstance(p.get("action"), dict) else {}
        name: str | None = "local_shell"
        args = {k: v for k, v in action.items() if k != "type"}
    elif ptype == "custom_tool_call":
        name = p.get("name")
        args = parse_args(p.get("input"))
    else:
        name = p.get("name")
        args = parse_args(p.get("arguments"))
    extra = {k: v for k, v in p.items()
             if k not in ("type", "name", "arguments", "input", "call_id", "action")}
    step = st.add(tool_step(0, cid, name, args, "", ctx, timestamp=ts, raw_ref=ref,
                            text=st.last_text or "", extra=extra))
    st.last_text = None
    st.calls[cid] = _Call(step)


def _response_item(st: _State, p: dict[str, Any], ts: Any, ref: RawRef,
                   ctx: ParseContext) -> None:
    ptype = p.get("type")
    if ptype in _CALLS:
        _call(st, p, ts, ref, ctx)
    elif ptype in _OUTPUTS:
        cid = as_key(p.get("call_id")) or ""
        call = st.calls.get(cid)
        if call is None:
            ctx.warn(st.path, ref.line, f"output for unknown call_id {cid!r}")
            return
        call.output, call.exit_code = _output_text(p.get("output"))
    elif ptype == "web_search_call":
        action = p["action"] if isinstance(p.get("action"), dict) else {}
        st.add(tool_step(0, str(p.get("id") or ref), "web_search_call",
                         {k: v for k, v in action.items() if k != "queries"}, "", ctx,
                         timestamp=ts, raw_ref=ref, is_error=p.get("status") == "failed",
                         extra={"status": p.get("status")}))
    elif ptype == "message" and p.get("role") == "assistant":
        text = content_text(p.get("content"))
        if text.strip():
            step, clean = text_step_and_text(0, str(p.get("id") or ref), "message", text, ctx,
                                             timestamp=ts, raw_ref=ref)
            st.add(step)
            st.outcome.final_message = bounded(clean, redacted=True)
            st.last_text = text
    elif ptype == "message" and p.get("role") == "user" and "payload" not in st.meta:
        # Old rollouts have no user_message events: the user turn is the message itself.
        text = content_text(p.get("content"))
        if text.strip() and not text.lstrip().startswith(("<environment_context",
                                                          "<user_instructions", "# AGENTS")):
            step, clean = text_step_and_text(0, str(ref.line), "user", text, ctx, timestamp=ts,
                                             raw_ref=ref)
            st.add(step)
            st.task = st.task or bounded(clean, redacted=True)


def _event(st: _State, p: dict[str, Any], ts: Any, ref: RawRef, ctx: ParseContext) -> None:
    ptype = p.get("type")
    if ptype == "exec_command_end" or ptype == "patch_apply_end":
        st.ends[as_key(p.get("call_id")) or ""] = p
    elif ptype == "user_message":
        text = content_text(p.get("message"))
        step, clean = text_step_and_text(0, str(ref.line), "user", text, ctx, timestamp=ts,
                                         raw_ref=ref)
        st.add(step)
        st.task = st.task or bounded(clean, redacted=True)
    elif ptype == "token_count":
        info = p.get("info") if isinstance(p.get("info"), dict) else None
        if info is None:
            return
        if isinstance(info.get("total_token_usage"), dict):
            st.totals = info["total_token_usage"]
        last = info.get("last_token_usage")
        if isinstance(last, dict):
            # The usage of the model call that produced the steps since the last count.
            for step in st.steps[st.batch_start:]:
                if step.kind != "user":
                    step.tokens = as_count(last.get("input_tokens")) + as_count(
                        last.get("output_tokens"))
                    break
        st.batch_start = len(st.steps)
    elif ptype == "task_complete":
        st.outcome.task_complete = True
        msg = p.get("last_agent_message")
        if isinstance(msg, str) and msg.strip():
            # Most often the last message's text again: the session's scan cache knows it.
            st.outcome.final_message = bounded(ctx.secrets.redact(msg), redacted=True)
    elif ptype == "turn_aborted":
        st.outcome.exit_status = f"turn_aborted:{p.get('reason')}"
    elif ptype == "context_compacted":
        st.add(text_step(0, str(ref.line), "compaction", "context compacted", ctx,
                         timestamp=ts, raw_ref=ref))
    elif ptype in ("error", "stream_error"):
        st.add(text_step(0, str(ref.line), "system", content_text(p.get("message")), ctx,
                         timestamp=ts, raw_ref=ref, is_error=True, extra={"event": ptype}))


def _finish_calls(st: _State, ctx: ParseContext) -> None:
    for cid, call in st.calls.items():
        try:
            _finish_call(st, cid, call, ctx)
        except RECORD_ERRORS as exc:
            line = call.step.raw_ref.line if call.step.raw_ref else None
            skip_record(ctx, st.path, line, f"output of call {cid!r}", exc)


def _finish_call(st: _State, cid: str, call: _Call, ctx: ParseContext) -> None:
    """Attach the output and exit code gathered for one call to its step."""
    end = st.ends.get(cid)
    output = call.output if call.output is not None else ""
    exit_code = call.exit_code
    failed: bool | None = None
    extra = call.step.extra
    if end is not None and end.get("type") == "exec_command_end":
        if isinstance(end.get("exit_code"), int):
            exit_code = end["exit_code"]
        agg = end.get("aggregated_output")
        if isinstance(agg, str) and (not output or _RUNNING in output[:300]):
            output = agg
        if end.get("duration") is not None:
            extra["duration"] = end.get("duration")
    elif end is not None and end.get("type") == "patch_apply_end":
        failed = end.get("success") is False
        if not output:
            output = content_text(end.get("stdout")) + content_text(end.get("stderr"))
    if exit_code is None:
        exit_code = parse_exit_code(output)
    if call.output is None:
        extra["no_output"] = True
    set_output(call.step, output, ctx, exit_code=exit_code, is_error=failed)


class Adapter(base.Adapter):
    """Codex CLI rollout files."""

    name = NAME
    description = "OpenAI Codex CLI rollouts (JSONL: session_meta, response_item, event_msg)"
    where = "~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl"

    def sniff(self, path: Path, head: bytes) -> int:
        """Score rollout records: session_meta / response_item / event_msg wrappers."""
        first = head[:4096]
        if b'"type":"session_meta"' in first or b'"type": "session_meta"' in first:
            return 95
        if b'"payload"' in head and (b'"response_item"' in head or b'"event_msg"' in head):
            return 90
        if b'"record_type"' in head or (first.startswith(b'{"id"') and b'"instructions"'
                                        in first):
            return 60
        return 0

    def parse(self, path: Path, ctx: ParseContext) -> Iterator[Trajectory]:
        """Yield the one session of a rollout file."""
        stats = ReadStats()
        st = _State(path)
        for lineno, rec in iter_jsonl(path, ctx, stats):
            if not isinstance(rec, dict):
                ctx.warn(path, lineno, "expected a JSON object; skipped")
                continue
            try:
                self._record(st, rec, lineno, ctx)
            except RECORD_ERRORS as exc:
                skip_record(ctx, path, lineno, "record", exc)
        _finish_calls(st, ctx)
        yield self._trajectory(st, path, stats)

    @staticmethod
    def _record(st: _State, rec: dict[str, Any], lineno: int, ctx: ParseContext) -> None:
        """Turn one rollout line into steps or session state."""
        ts = rec.get("timestamp")
        if st.started_at is None and isinstance(ts, str):
            st.started_at = ts
        ref = RawRef(st.where, lineno)
        rtype = rec.get("type")
        payload = rec.get("payload")
        if isinstance(payload, dict):
            st.meta["payload"] = True
            if rtype == "response_item":
                _response_item(st, payload, ts, ref, ctx)
            elif rtype == "event_msg":
                _event(st, payload, ts, ref, ctx)
            elif rtype == "session_meta":
                st.meta.setdefault("session", payload)
            elif rtype == "turn_context" and isinstance(payload.get("model"), str):
                st.models[payload["model"]] += 1
            elif rtype == "compacted":
                st.add(text_step(0, str(lineno), "compaction",
                                 content_text(payload.get("message")) or "compacted", ctx,
                                 timestamp=ts, raw_ref=ref))
        elif lineno == 1 and "id" in rec and "instructions" in rec:
            st.meta.setdefault("session", rec)
        elif rtype is not None:
            _response_item(st, rec, ts, ref, ctx)

    @staticmethod
    def _trajectory(st: _State, path: Path, stats: ReadStats) -> Trajectory:
        """The session built from the rollout's state."""
        session = st.meta.get("session") or {}
        totals = st.totals
        model = most_common(st.models) or session.get("model")
        extra = {k: session[k] for k in ("cwd", "originator", "source", "model_provider", "git")
                 if k in session}
        return Trajectory(
            id=as_key(session.get("id")) or path.stem,
            source=source_info(NAME, path, stats),
            agent=NAME,
            agent_version=session.get("cli_version"),
            model=model if isinstance(model, str) else None,
            task=st.task,
            steps=st.steps,
            outcome=st.outcome,
            tokens_in=as_int(totals.get("input_tokens")) if totals else None,
            tokens_out=as_int(totals.get("output_tokens")) if totals else None,
            started_at=st.started_at,
            extra=extra,
        )
