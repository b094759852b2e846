"""OpenHands logs, in four shapes.

- V0 trajectory export: a JSON list of events (``{id, timestamp, source, action|observation,
  args|extras, cause, message, tool_call_metadata, llm_metrics}``).
- V0 session folder: ``sessions/<sid>/events/<n>.json``, one event per file.
- Eval ``output.jsonl``: one run per line, ``{instance_id, instruction, history[], metrics,
  error, test_result}``; ``history`` holds V0 events (also the older flat ones without
  ids, paired by position), ``[action, observation]`` pairs, or V1 events.
- V1 (software-agent-sdk) conversation folder: ``base_state.json`` + ``events/event-*.json``
  with ``kind`` in ActionEvent / ObservationEvent (paired by ``action_id``), MessageEvent,
  AgentErrorEvent, Condensation, ...

A tool step fails when its exit code is non-zero (``extras.metadata.exit_code``,
``observation.exit_code`` or ``metadata.exit_code``; -1 means "still running / no exit" and
is not a failure), on ``error`` observations, ``AgentErrorEvent``, ``is_error: true``, and
when an editor observation starts with ``ERROR:``. An error observation with no action
(a rejected tool call) is a failed tool step of its own.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..errors import ParseFailure
from ..hashing import content_hash
from ..model import OutcomeHints, RawRef, SourceInfo, Step, Trajectory
from ..normalize import truncate
from . import base
from .common import (
    RECORD_ERRORS,
    as_int,
    as_key,
    bounded,
    content_text,
    most_common,
    normalize_tool,
    obj,
    set_output,
    skip_record,
    source_info,
    text_step,
    text_step_and_text,
    tool_step,
)
from .jsonio import ReadStats, iter_jsonl, load_json

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
_V0_EVENT_FILE = re.compile(r"^\d+\.json$")
_V1_EVENT_FILE = re.compile(r"^event-\d+.*\.json$")


@dataclass
class _Builder:
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


class Adapter(base.Adapter):
    """OpenHands event logs (V0 and V1) and eval outputs."""

    name = "openhands"
    description = "OpenHands V0 event lists/folders, eval output.jsonl, V1 conversations"
    where = ("~/.openhands/sessions/<sid>/events/, ~/.openhands/conversations/<id>/, "
             "evaluation/**/output.jsonl, trajectory exports (*.json)")

    def sniff(self, path: Path, head: bytes) -> int:
        """Score by content; folders are scored by ``claims_dir``."""
        if not head:
            return 85 if path.is_dir() and self.claims_dir(path) else 0
        start = head.lstrip()[:1]
        if start == b"[":
            if (b'"action"' in head or b'"observation"' in head) and (
                b'"source"' in head or b'"cause"' in head or b'"tool_call_metadata"' in head
            ):
                return 85
            if b'"kind": "ActionEvent"' in head or b'"kind": "MessageEvent"' in head:
                return 80
            return 0
        if start == b"{":
            first = head.split(b"\n", 1)[0]
            if b'"history"' in first and (b'"instruction"' in first or b'"instance_id"' in first):
                if b'"action"' in first or b'"observation"' in first or b'"kind"' in first:
                    return 85
                return 70
        return 0

    def claims_dir(self, path: Path) -> bool:
        """A V1 conversation (base_state.json + events/) or a V0 session (events/<n>.json)."""
        events = path / "events"
        if not events.is_dir():
            return path.name == "events" and self._event_files(path) is not None
        if (path / "base_state.json").is_file():
            return True
        return self._event_files(events) is not None

    @staticmethod
    def _event_files(folder: Path) -> list[Path] | None:
        """Event files in replay order, or None when ``folder`` holds none."""
        try:
            names = [p for p in folder.iterdir() if p.is_file()]
        except OSError:
            return None
        v0 = [p for p in names if _V0_EVENT_FILE.match(p.name)]
        if v0:
            return sorted(v0, key=lambda p: int(p.stem))
        v1 = [p for p in names if _V1_EVENT_FILE.match(p.name)]
        return sorted(v1, key=lambda p: p.name) if v1 else None

    def parse(self, path: Path, ctx: base.ParseContext) -> Iterator[Trajectory]:
        """Yield one trajectory per session (per line for eval ``output.jsonl``)."""
        if path.is_dir():
            yield self._parse_dir(path, ctx)
            return
        with path.open("rb") as fh:
            start = fh.read(4096).lstrip()[:1]
        if start == b"[":
            yield self._parse_list(path, ctx)
        else:
            yield from self._parse_jsonl(path, ctx)

    # ---- shapes ----

    def _parse_list(self, path: Path, ctx: base.ParseContext) -> Trajectory:
        first_issue = len(ctx.issues)
        stats = ReadStats()
        data = load_json(path, ctx, stats)
        if not isinstance(data, list):
            raise ParseFailure(f"{path}: not an OpenHands trajectory (expected a JSON list)")
        b = _Builder(ctx, path)
        raw = RawRef(str(path))
        for i, ev in enumerate(data):
            b.event(ev, raw, f"event[{i}]")
        traj = self._finish(b, path.stem, source_info(self.name, path, stats))
        traj.issues = list(ctx.issues[first_issue:])
        return traj

    def _parse_dir(self, path: Path, ctx: base.ParseContext) -> Trajectory:
        first_issue = len(ctx.issues)
        events_dir = path if path.name == "events" and not (path / "events").is_dir() \
            else path / "events"
        files = self._event_files(events_dir) or []
        stats = ReadStats()
        b = _Builder(ctx, path)
        sid = path.name
        base_state: dict[str, Any] = {}
        state_file = path / "base_state.json"
        if state_file.is_file():
            try:
                loaded = load_json(state_file, ctx, stats)
            except ParseFailure as exc:
                ctx.warn(state_file, None, str(exc).split(": ", 1)[-1])
                loaded = None
            if isinstance(loaded, dict):
                base_state = loaded
        if not files and not base_state:
            raise ParseFailure(f"{path}: no OpenHands event files found")
        for f in files:
            try:
                ev = load_json(f, ctx, stats)
            except ParseFailure as exc:
                ctx.warn(f, None, f"{str(exc).split(': ', 1)[-1]}; event skipped")
                continue
            b.event(ev, RawRef(str(f)), f.name)
        if isinstance(base_state.get("id"), str):
            sid = base_state["id"]
        self._apply_base_state(b, base_state)
        traj = self._finish(b, sid, source_info(self.name, path, stats))
        if isinstance(base_state.get("execution_status"), str):
            traj.outcome.exit_status = base_state["execution_status"]
        traj.issues = list(ctx.issues[first_issue:])
        return traj

    def _parse_jsonl(self, path: Path, ctx: base.ParseContext) -> Iterator[Trajectory]:
        for lineno, rec in iter_jsonl(path, ctx):
            if not isinstance(rec, dict) or not isinstance(rec.get("history"), list):
                ctx.warn(path, lineno, "not an OpenHands eval record (no 'history' list); "
                         "skipped")
                continue
            try:
                traj = self._eval_run(path, lineno, rec, ctx)
            except RECORD_ERRORS as exc:
                # Each line is a run of its own: lose that run, not the rest of the file.
                skip_record(ctx, path, lineno, "record", exc)
                continue
            yield traj

    def _eval_run(self, path: Path, lineno: int, rec: dict[str, Any],
                  ctx: base.ParseContext) -> Trajectory:
        """The trajectory of one eval ``output.jsonl`` line."""
        first_issue = len(ctx.issues)
        b = _Builder(ctx, path)
        raw = RawRef(str(path), lineno)
        for i, ev in enumerate(rec["history"]):
            b.event(ev, raw, f"history[{i}]")
        inst = rec.get("instance_id")
        sid = as_key(inst) or f"{path.stem}-{lineno}"
        # Each line is its own run, so it gets its own hash (of the parsed record: the
        # reader does not hand back the raw bytes).
        blob = orjson.dumps(rec)
        traj = self._finish(b, sid, SourceInfo(self.name, str(path), content_hash(blob),
                                               len(blob)))
        self._apply_eval(traj, rec)
        if traj.task is None and isinstance(rec.get("instruction"), str):
            traj.task = bounded(ctx.secrets.redact(rec["instruction"]), redacted=True)
        traj.issues = list(ctx.issues[first_issue:])
        traj.extra["line"] = lineno
        return traj

    # ---- outcome, tokens, model ----

    def _finish(self, b: _Builder, sid: str, source: SourceInfo) -> Trajectory:
        return Trajectory(
            id=sid,
            source=source,
            agent="openhands",
            model=most_common(b.models),
            task=b.task,
            steps=b.steps,
            outcome=b.outcome,
            tokens_in=b.tokens_in,
            tokens_out=b.tokens_out,
            started_at=b.started_at,
        )

    @staticmethod
    def _apply_base_state(b: _Builder, state: dict[str, Any]) -> None:
        agent = obj(state.get("agent"))
        llm = obj(agent.get("llm"))
        if isinstance(llm.get("model"), str):
            b.models[llm["model"]] += 1
        st = obj(state.get("stats"))
        usage_map = obj(st.get("usage_to_metrics"))
        tin = tout = 0
        seen = False
        for metrics in usage_map.values():
            usage = metrics.get("accumulated_token_usage") if isinstance(metrics, dict) else None
            if isinstance(usage, dict):
                seen = True
                tin += as_int(usage.get("prompt_tokens")) or 0
                tout += as_int(usage.get("completion_tokens")) or 0
        if seen:
            b.tokens_in, b.tokens_out = tin, tout

    @staticmethod
    def _apply_eval(traj: Trajectory, rec: dict[str, Any]) -> None:
        metrics = obj(rec.get("metrics"))
        usage = metrics.get("accumulated_token_usage")
        if isinstance(usage, dict):
            traj.tokens_in = as_int(usage.get("prompt_tokens"))
            traj.tokens_out = as_int(usage.get("completion_tokens"))
        if isinstance(metrics.get("accumulated_cost"), (int, float)):
            traj.extra["cost_usd"] = metrics["accumulated_cost"]
        meta = obj(rec.get("metadata"))
        llm = obj(meta.get("llm_config"))
        if traj.model is None and isinstance(llm.get("model"), str):
            traj.model = llm["model"]
        if isinstance(meta.get("agent_class"), str):
            traj.extra["agent_class"] = meta["agent_class"]
        resolved = rec.get("resolved")
        test_result = rec.get("test_result")
        if isinstance(test_result, dict):
            report = obj(test_result.get("report"))
            for cand in (test_result.get("resolved"), report.get("resolved")):
                if isinstance(cand, bool):
                    resolved = cand
        if isinstance(resolved, bool):
            traj.outcome.resolved = resolved
        if "success" in rec and isinstance(rec["success"], bool):
            traj.extra["success"] = rec["success"]
        error = rec.get("error")
        if isinstance(error, str) and error.strip():
            traj.outcome.exit_status = "error: " + truncate(error.strip().splitlines()[0], 300)


__all__ = ["Adapter"]
