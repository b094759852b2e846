"""ATIF (Agent Trajectory Interchange Format, Harbor / Terminal-Bench), ``ATIF-v1.x``.

One JSON object ``{schema_version, session_id, agent{name, version, model_name}, steps[],
final_metrics, subagent_trajectories?}``. Each agent step may carry several ``tool_calls``
whose results come back in ``observation.results[]`` keyed by ``source_call_id``. The
``step_id`` is kept as ``source_id`` (``"<step_id>.<n>"`` for the n-th extra call of a step).
ATIF has no first-class exit code: converters put it in an ``extra`` object (of the result,
the tool call or the step) as ``exit_code``/``returncode``, or flag ``is_error``; those are
read, and nothing is guessed from the text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..model import OutcomeHints, RawRef, SourceInfo, Step, Trajectory
from . import base
from .common import bounded, most_common
from .fields import as_int, as_key, content_text, obj
from .jsonio import ReadStats
from .records import RECORD_ERRORS, load_document, opens_object, skip_record, source_info
from .steps import set_output, text_step, text_step_and_text, tool_step

_STEP_KEYS = frozenset({
    "step_id", "timestamp", "source", "message", "reasoning_content", "tool_calls",
    "observation", "metrics", "model_name",
})
_MAX_SUBAGENT_DEPTH = 8


def _exit_info(*extras: dict[str, Any]) -> tuple[int | None, bool]:
    """Exit code and error flag from the first ``extra`` object that has them."""
    code: int | None = None
    failed = False
    for ex in extras:
        if code is None:
            for key in ("exit_code", "returncode", "exitCode", "return_code"):
                code = as_int(ex.get(key))
                if code is not None:
                    break
        if ex.get("is_error") is True or ex.get("error") is True or ex.get("status") in (
            "error", "failed", "failure"
        ):
            failed = True
    return code, failed or (code is not None and code != 0)


class Adapter(base.Adapter):
    """ATIF interchange trajectories."""

    name = "atif"
    description = "ATIF-v1.x interchange trajectories (Harbor / Terminal-Bench)"
    where = "Harbor job folders: <trial>/agent/trajectory.json; any *.json with ATIF schema"

    def sniff(self, path: Path, head: bytes) -> int:
        """Score by content: a ``schema_version`` of ``ATIF-v...``."""
        if not opens_object(head):
            return 0
        if b'"schema_version"' in head and b'"ATIF-v' in head:
            return 98
        return 0

    def parse(self, path: Path, ctx: base.ParseContext) -> Iterator[Trajectory]:
        """Yield the trajectory of an ATIF file (sub-agent trajectories nested in it)."""
        first_issue = len(ctx.issues)
        stats = ReadStats()
        data = load_document(path, ctx, stats, "steps", "an ATIF trajectory")
        version = data.get("schema_version")
        if not (isinstance(version, str) and version.startswith("ATIF-")):
            ctx.warn(path, None, f"schema_version {version!r} is not ATIF-v1.x; read anyway")
        traj = self._build(data, path, ctx, source_info(self.name, path, stats), 0)
        traj.issues = list(ctx.issues[first_issue:])
        yield traj

    def _build(self, data: dict[str, Any], path: Path, ctx: base.ParseContext,
               source: SourceInfo, depth: int) -> Trajectory:
        raw = RawRef(str(path))
        agent = obj(data.get("agent"))
        steps: list[Step] = []
        models: Counter[str] = Counter()
        task: str | None = None
        final: str | None = None
        sum_in = sum_out = 0
        saw_tokens = False
        for i, st in enumerate(data["steps"]):
            if not isinstance(st, dict):
                ctx.warn(path, None, f"steps[{i}]: expected an object, got "
                         f"{type(st).__name__}; skipped")
                continue
            try:
                step_id = st.get("step_id")
                sid = str(step_id) if step_id is not None else str(i + 1)
                source_ = st.get("source")
                ts = st.get("timestamp") if isinstance(st.get("timestamp"), str) else None
                message = content_text(st.get("message"))
                extra_step = obj(st.get("extra"))
                metrics = obj(st.get("metrics"))
                p = as_int(metrics.get("prompt_tokens"))
                c = as_int(metrics.get("completion_tokens"))
                tokens = None
                if p is not None or c is not None:
                    saw_tokens = True
                    sum_in += p or 0
                    sum_out += c or 0
                    tokens = (p or 0) + (c or 0)
                if isinstance(st.get("model_name"), str):
                    models[st["model_name"]] += 1
                unknown = {k: v for k, v in st.items() if k not in _STEP_KEYS}
                if source_ == "user":
                    step, clean = text_step_and_text(len(steps), sid, "user", message, ctx,
                                                     timestamp=ts, raw_ref=raw, extra=unknown)
                    steps.append(step)
                    if task is None:
                        task = bounded(clean, redacted=True)
                    continue
                if source_ == "system":
                    steps.append(text_step(len(steps), sid, "system", message, ctx, timestamp=ts,
                                           raw_ref=raw, extra=unknown))
                    continue
                if source_ != "agent":
                    ctx.warn(path, None, f"steps[{i}]: unknown source {source_!r}; read as agent")
                raw_calls = st.get("tool_calls")
                calls: list[Any] = raw_calls if isinstance(raw_calls, list) else []
                results = obj(st.get("observation")).get("results")
                results = results if isinstance(results, list) else []
                by_call: dict[str, dict[str, Any]] = {}
                loose: list[dict[str, Any]] = []
                for r in results:
                    if not isinstance(r, dict):
                        continue
                    ref = r.get("source_call_id")
                    if isinstance(ref, str) and ref:
                        by_call[ref] = r
                    else:
                        loose.append(r)
                thought = content_text(st.get("reasoning_content"))
                text = "\n".join(t for t in (thought, message) if t)
                made = 0
                if message.strip():
                    final = message
                for k, call in enumerate(calls):
                    if not isinstance(call, dict):
                        ctx.warn(path, None, f"steps[{i}].tool_calls[{k}]: expected an object; "
                                 "skipped")
                        continue
                    name = call.get("function_name")
                    args = call.get("arguments")
                    if not isinstance(args, dict):
                        args = {"input": args} if args is not None else {}
                    call_id = call.get("tool_call_id")
                    result = by_call.pop(call_id, None) if isinstance(call_id, str) else None
                    if result is None and len(calls) == 1 and loose:
                        result = loose.pop(0)
                    res = obj(result)
                    # A step-level extra only speaks for the call when the step has one call.
                    code, failed = _exit_info(obj(res.get("extra")), obj(call.get("extra")),
                                              extra_step if len(calls) == 1 else {})
                    step = tool_step(
                        len(steps), sid if made == 0 else f"{sid}.{made}",
                        name if isinstance(name, str) else None, args, "", ctx,
                        tokens=tokens if made == 0 else None, timestamp=ts, raw_ref=raw,
                        text=text if made == 0 else "",
                        extra={"function_name": name, "tool_call_id": call_id,
                               **({"unpaired": True} if result is None else {}), **unknown},
                    )
                    set_output(step, content_text(res.get("content")), ctx, exit_code=code,
                               is_error=failed)
                    refs = res.get("subagent_trajectory_ref")
                    if isinstance(refs, list) and refs:
                        step.extra["subagent_refs"] = [obj(r).get("session_id") for r in refs]
                    steps.append(step)
                    made += 1
                if made == 0:
                    out = "\n".join(content_text(obj(r).get("content")) for r in loose)
                    steps.append(text_step(len(steps), sid, "message", message or out, ctx,
                                           timestamp=ts, raw_ref=raw, tokens=tokens, extra=unknown))
                    if thought:
                        steps[-1].extra["reasoning"] = bounded(ctx.secrets.redact(thought),
                                                               redacted=True)
            except RECORD_ERRORS as exc:
                skip_record(ctx, path, None, f"steps[{i}]", exc)
        final_metrics = obj(data.get("final_metrics"))
        t_in = as_int(final_metrics.get("total_prompt_tokens"))
        t_out = as_int(final_metrics.get("total_completion_tokens"))
        if t_in is None and t_out is None and saw_tokens:
            t_in, t_out = sum_in, sum_out
        if not t_in and not t_out:
            # Exporters that withhold usage write zeros: that is "unknown", not "free".
            t_in = t_out = None
        sid_ = as_key(data.get("session_id")) or as_key(data.get("trajectory_id")) or path.stem
        model = agent.get("model_name") if isinstance(agent.get("model_name"), str) else None
        traj = Trajectory(
            id=sid_,
            source=source,
            agent=agent.get("name") if isinstance(agent.get("name"), str) else None,
            agent_version=agent.get("version") if isinstance(agent.get("version"), str)
            else None,
            model=model or most_common(models),
            task=task,
            steps=steps,
            outcome=OutcomeHints(final_message=bounded(ctx.secrets.redact(final or ""),
                                                       redacted=True)),
            tokens_in=t_in,
            tokens_out=t_out,
            started_at=next((s.timestamp for s in steps if s.timestamp), None),
        )
        for key in ("schema_version", "trajectory_id", "notes"):
            if isinstance(data.get(key), str):
                traj.extra[key] = data[key]
        if isinstance(final_metrics.get("extra"), dict) and final_metrics["extra"]:
            traj.extra["final_metrics_extra"] = final_metrics["extra"]
        if isinstance(final_metrics.get("total_cost_usd"), (int, float)):
            traj.extra["cost_usd"] = final_metrics["total_cost_usd"]
        subs = data.get("subagent_trajectories")
        if isinstance(subs, list) and depth < _MAX_SUBAGENT_DEPTH:
            for j, sub in enumerate(subs):
                if not isinstance(sub, dict) or not isinstance(sub.get("steps"), list):
                    ctx.warn(path, None, f"subagent_trajectories[{j}]: no 'steps' list; skipped")
                    continue
                child = self._build(sub, path, ctx, source, depth + 1)
                child.parent_session_id = traj.id
                traj.subagents.append(child)
        return traj
