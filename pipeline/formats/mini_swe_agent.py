"""mini-swe-agent ``*.traj.json`` files.

One JSON object ``{info{exit_status, submission, model_stats, mini_version, config},
messages[], trajectory_format, instance_id?}``. The agent answers with exactly one fenced
```` ```bash ```` block per turn; the next user message is the observation,
``<returncode>N</returncode><output>...</output>`` (non-zero N = failed). A turn with zero or
several blocks gets a format-error message back: the turn becomes a ``message`` step and the
feedback an ``error`` step. The final ``echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`` turn is a
``finish`` step whose output is the submission. Newer logs with OpenAI-style ``tool_calls`` and
``role: tool`` results are read too (results paired by ``tool_call_id``); their closing
``role: exit`` message carries the submission and exit status.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..model import OutcomeHints, RawRef, Step, Trajectory
from . import base
from .common import bounded, most_common
from .fields import as_int, as_key, content_text, epoch_to_iso, obj, parse_args
from .jsonio import ReadStats
from .records import RECORD_ERRORS, load_document, opens_object, skip_record, source_info
from .steps import set_output, text_step, tool_step
from .swe_agent import extract_task, submitted_patch

_BASH_BLOCK = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)
_RETURNCODE = re.compile(r"\s*<returncode>\s*(-?\d+)\s*</returncode>\s*")
_SUBMIT_MARKERS = ("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT")
# Any spacing: a trajectory re-serialised compactly keeps its format tag.
_FORMAT_TAG = re.compile(rb'"trajectory_format"\s*:\s*"mini-swe-agent')
_MSG_KEYS = frozenset({"role", "content", "extra", "tool_calls", "tool_call_id"})


def _tail(path: Path, size: int = 4096) -> bytes:
    """The last ``size`` bytes of ``path`` (empty when it cannot be read)."""
    try:
        with path.open("rb") as fh:
            fh.seek(0, 2)
            fh.seek(max(0, fh.tell() - size))
            return fh.read(size)
    except OSError:
        return b""


def split_observation(content: str) -> tuple[int | None, str]:
    """``(returncode, output)`` of a ``<returncode>N</returncode><output>...`` message."""
    m = _RETURNCODE.match(content)
    if not m:
        return None, content
    body = content[m.end():]
    stripped = body.strip()
    if stripped.startswith("<output>") and stripped.endswith("</output>"):
        body = stripped[len("<output>"): -len("</output>")].strip("\n")
    return int(m.group(1)), body


class Adapter(base.Adapter):
    """mini-swe-agent trajectories."""

    name = "mini-swe-agent"
    description = "mini-swe-agent .traj.json trajectories"
    where = "<output dir>/<instance>/<instance>.traj.json (or last_mini_run.traj.json)"

    def sniff(self, path: Path, head: bytes) -> int:
        """Score by content: ``mini_version`` / ``trajectory_format``, or messages+returncode."""
        if not opens_object(head):
            return 0
        if b'"mini_version"' in head or _FORMAT_TAG.search(head):
            return 95
        if b'"messages"' in head and b"<returncode>" in head and b'"trajectory"' not in head:
            return 75
        if b'"messages"' in head and _FORMAT_TAG.search(_tail(path)):
            # The format tag is written after the messages: past the head of a long run.
            return 95
        return 0

    def parse(self, path: Path, ctx: base.ParseContext) -> Iterator[Trajectory]:
        """Yield the one trajectory of a ``.traj.json`` file."""
        first_issue = len(ctx.issues)
        stats = ReadStats()
        data = load_document(path, ctx, stats, "messages", "a mini-swe-agent trajectory")
        info = obj(data.get("info"))
        raw = RawRef(str(path))
        steps: list[Step] = []
        models: Counter[str] = Counter()
        tokens_in = tokens_out = 0
        saw_usage = False
        task: str | None = None
        seen_task = False  # the first user message is the task, even when it is blank
        pending: Step | None = None  # tool step waiting for its observation message
        exit_msg: str | None = None  # exit_status of a 2.x closing ``exit`` message
        by_call: dict[str, Step] = {}
        started_at: str | None = None
        for i, msg in enumerate(data["messages"]):
            if not isinstance(msg, dict):
                ctx.warn(path, None, f"messages[{i}]: expected an object, got "
                         f"{type(msg).__name__}; skipped")
                continue
            try:
                role = msg.get("role")
                content = content_text(msg.get("content"))
                extra = obj(msg.get("extra"))
                if role == "assistant":
                    tokens, ts, model = self._usage(extra)
                    if tokens is not None:
                        saw_usage = True
                        tokens_in += tokens[0]
                        tokens_out += tokens[1]
                    if model:
                        models[model] += 1
                    started_at = started_at or ts
                    step_tokens = sum(tokens) if tokens else None
                    calls = msg.get("tool_calls")
                    if isinstance(calls, list) and calls:
                        for call in self._tool_call_steps(ctx, calls, len(steps), i, content, raw,
                                                          step_tokens, ts):
                            call.index = len(steps)
                            by_call[call.source_id] = call
                            steps.append(call)
                            step_tokens = None  # the turn's tokens go to its first call only
                        pending = None
                        continue
                    blocks = _BASH_BLOCK.findall(content)
                    if len(blocks) == 1:
                        command = blocks[0].strip()
                        tool = "finish" if any(m in command for m in _SUBMIT_MARKERS) else "bash"
                        pending = tool_step(
                            len(steps), str(i), None, {"command": command}, "", ctx, tool=tool,
                            tokens=step_tokens, timestamp=ts, raw_ref=raw,
                            text=content[: content.find("```")].strip(),
                        )
                        steps.append(pending)
                    else:
                        steps.append(text_step(len(steps), str(i), "message", content, ctx,
                                               timestamp=ts, raw_ref=raw, tokens=step_tokens,
                                               extra={"actions_found": len(blocks)}))
                        pending = None
                elif role == "tool":
                    call_id = msg.get("tool_call_id")
                    key = as_key(call_id)
                    target = by_call.get(key) if key is not None else None
                    if target is None:
                        ctx.warn(path, None, f"messages[{i}]: tool result for unknown call "
                                 f"{call_id!r}; skipped")
                        continue
                    self._observe(target, content, extra, ctx)
                elif role == "user":
                    if not seen_task:
                        seen_task = True
                        task = extract_task(content, ctx.secrets)
                        steps.append(text_step(len(steps), str(i), "user", content, ctx,
                                               raw_ref=raw))
                    elif pending is not None:
                        self._observe(pending, content, extra, ctx)
                        pending = None
                    elif steps and steps[-1].kind == "message":
                        # Harness feedback on a malformed turn (no or several bash blocks).
                        steps.append(text_step(len(steps), str(i), "error", content, ctx,
                                               raw_ref=raw))
                    else:
                        steps.append(text_step(len(steps), str(i), "user", content, ctx,
                                               raw_ref=raw))
                elif role == "system":
                    steps.append(text_step(len(steps), str(i), "system", content, ctx, raw_ref=raw))
                elif role == "exit":
                    exit_msg = self._exit(steps, content, extra, ctx)
                else:
                    ctx.warn(path, None, f"messages[{i}]: unknown role {role!r}; skipped")
            except RECORD_ERRORS as exc:
                skip_record(ctx, path, None, f"messages[{i}]", exc)
        exit_status = info.get("exit_status") if isinstance(info.get("exit_status"), str) \
            else exit_msg
        model_stats = obj(info.get("model_stats"))
        config = obj(info.get("config"))
        cfg_model = obj(config.get("model"))
        model = most_common(models) or (
            cfg_model.get("model_name") if isinstance(cfg_model.get("model_name"), str) else None
        )
        final = next((s.text for s in reversed(steps) if s.kind == "tool" and s.text), None)
        instance = data.get("instance_id")
        name = path.name
        traj = Trajectory(
            id=instance if isinstance(instance, str) and instance else
            (name[: -len(".traj.json")] if name.endswith(".traj.json") else path.stem),
            source=source_info(self.name, path, stats),
            agent="mini-swe-agent",
            agent_version=info.get("mini_version") if isinstance(info.get("mini_version"), str)
            else None,
            model=model,
            task=task,
            steps=steps,
            outcome=OutcomeHints(
                exit_status=exit_status,
                task_complete=True if exit_status in ("Submitted", "submitted") else None,
                final_message=bounded(final, redacted=True),  # a step's text: redacted
                submitted_patch=submitted_patch(info, exit_status),
            ),
            tokens_in=tokens_in if saw_usage else None,
            tokens_out=tokens_out if saw_usage else None,
            started_at=started_at,
            extra={k: model_stats[k] for k in ("instance_cost", "api_calls") if k in model_stats},
        )
        if isinstance(data.get("trajectory_format"), str):
            traj.extra["trajectory_format"] = data["trajectory_format"]
        traj.issues = list(ctx.issues[first_issue:])
        yield traj

    @staticmethod
    def _usage(extra: dict[str, Any]) -> tuple[tuple[int, int] | None, str | None, str | None]:
        """Tokens (in, out), ISO timestamp and model of one assistant turn, from its response."""
        response = extra.get("response")
        if not isinstance(response, dict):
            return None, None, None
        usage = response.get("usage")
        tokens = None
        if isinstance(usage, dict):
            p, c = as_int(usage.get("prompt_tokens")), as_int(usage.get("completion_tokens"))
            if p is not None or c is not None:
                tokens = (p or 0, c or 0)
        model = response.get("model")
        return tokens, epoch_to_iso(response.get("created")), model if isinstance(model, str) \
            else None

    @staticmethod
    def _exit(steps: list[Step], content: str, extra: dict[str, Any],
              ctx: base.ParseContext) -> str | None:
        """Read a 2.x ``exit`` message: the submission is the output of the submit call."""
        # In toolcall mode the submit call gets no tool result; this message carries it.
        final = next((s for s in reversed(steps) if s.kind == "tool"), None)
        if final is not None and final.tool == "finish" and not final.output:
            set_output(final, content, ctx)
        status = extra.get("exit_status")
        return status if isinstance(status, str) else None

    @staticmethod
    def _observe(step: Step, content: str, extra: dict[str, Any], ctx: base.ParseContext) -> None:
        code, output = split_observation(content)
        if code is None:
            code = as_int(extra.get("returncode"))
        if step.tool == "finish" and code is None:
            # The submission message carries the final diff, not a command result.
            set_output(step, output, ctx)
            return
        timed_out = code is None and "timed out" in content[:500]
        set_output(step, output, ctx, exit_code=code,
                   is_error=(code is not None and code != 0) or timed_out)

    @staticmethod
    def _tool_call_steps(
        ctx: base.ParseContext, calls: list[Any], start: int, msg_index: int, text: str,
        raw: RawRef, tokens: int | None, ts: str | None,
    ) -> Iterator[Step]:
        for k, call in enumerate(calls):
            if not isinstance(call, dict):
                continue
            fn = obj(call.get("function"))
            name = fn.get("name") if isinstance(fn.get("name"), str) else None
            args = parse_args(fn.get("arguments"))
            cmd = args.get("command")
            submits = isinstance(cmd, str) and any(m in cmd for m in _SUBMIT_MARKERS)
            call_id = call.get("id")
            yield tool_step(
                start + k, as_key(call_id) or f"{msg_index}.{k}",
                name, args, "", ctx, tool="finish" if submits else None,
                tokens=tokens if k == 0 else None, timestamp=ts, raw_ref=raw, text=text,
                extra={k2: v for k2, v in call.items() if k2 not in ("function", "id")},
            )
