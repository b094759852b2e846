"""Claude Code: ``~/.claude/projects/<proj>/<session>.jsonl`` (+ ``<session>/subagents/*.jsonl``).

One JSON record per line (``user``, ``assistant``, ``system``, ``summary``, ``progress``...).
An assistant reply is streamed as several lines sharing ``message.id`` (one per content
block, each repeating the usage), so tokens are counted once per message id. ``tool_use``
blocks are paired with the ``tool_result`` blocks of later user lines by id.

The usage Claude Code writes is the one of the stream's start: its ``output_tokens`` is often
1-3 per message whatever the reply's length, so ``tokens_out`` understates the real output.
We report what the log says rather than guess.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ParseFailure
from ..model import OutcomeHints, RawRef, Step, Trajectory
from . import base
from .base import ParseContext
from .common import TASK_MAX_CHARS, bounded, most_common
from .fields import as_count, as_key, content_text
from .jsonio import ReadStats, iter_jsonl
from .records import RECORD_ERRORS, skip_record, source_info
from .steps import StepLog, set_output, text_step, text_step_and_text, tool_step

NAME = "claude-code"
# User text that the client injects rather than the person typing (slash-command echoes,
# caveats, hook output); never taken as the task.
_INJECTED = re.compile(r"^\s*<(command-|local-command|system-reminder|user-prompt-submit)|"
                       r"^\s*Caveat: |^\s*\[Request interrupted")
_SKIP_SYSTEM = frozenset({"stop_hook_summary", "turn_duration"})
# A failed Bash call's result opens with "Exit code N"; the same words further down are the
# command's own output (``cmd; echo "Exit code: $?"``, which itself exited 0).
_EXIT_HEAD = re.compile(r"(?:Error: )?Exit code:? (-?\d+)")


@dataclass
class _Builder(StepLog):
    """Accumulates one (sub-)session's steps while lines stream by."""

    pending: dict[str, Step] = field(default_factory=dict)
    answered: set[str] = field(default_factory=set)
    usage: dict[str, tuple[int, int]] = field(default_factory=dict)
    first_step_of_msg: dict[str, int] = field(default_factory=dict)
    models: Counter[str] = field(default_factory=Counter)
    session_id: str | None = None
    agent_id: str | None = None
    version: str | None = None
    task: str | None = None
    started_at: str | None = None
    last_text: str | None = None
    text_msg: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _usage(usage: Any) -> tuple[int, int] | None:
    if not isinstance(usage, dict):
        return None
    get = usage.get
    # Prompt tokens include cache writes and reads: together they are what the turn consumed.
    tin = (as_count(get("input_tokens")) + as_count(get("cache_creation_input_tokens"))
           + as_count(get("cache_read_input_tokens")))
    return tin, as_count(get("output_tokens"))


def _assistant(b: _Builder, rec: dict[str, Any], lineno: int, ctx: ParseContext) -> None:
    msg = rec.get("message")
    if not isinstance(msg, dict):
        return
    # Ids key the usage dedupe and the call pairing: a non-string id must not merge records.
    mid = as_key(msg.get("id")) or as_key(rec.get("uuid")) or str(lineno)
    model = msg.get("model")
    if isinstance(model, str) and model and model != "<synthetic>":
        b.models[model] += 1
    u = _usage(msg.get("usage"))
    if u is not None:
        # Streamed lines repeat the usage of the same message; the last one is final.
        b.usage[mid] = u
    ts = rec.get("timestamp")
    ref = RawRef(b.where, lineno)
    content = msg.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    texts: list[str] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif btype == "tool_use":
            call_id = as_key(block.get("id"))
            if call_id and (call_id in b.pending or call_id in b.answered):
                continue  # a copied line of a resumed session, not a new call
            if not texts and b.text_msg == mid and b.steps and b.steps[-1].kind == "message":
                # Streaming wrote this message's text on an earlier line: it belongs to
                # the call, not to a separate message step.
                texts.append(b.steps.pop().output)
                b.first_step_of_msg.pop(mid, None)
            raw_args = block.get("input")
            args: dict[str, Any] = raw_args if isinstance(raw_args, dict) else {}
            extra = {k: v for k, v in block.items()
                     if k not in ("type", "id", "name", "input")}
            call_id = as_key(block.get("id"))
            step = b.add(tool_step(0, call_id or str(ref), block.get("name"), args, "",
                                   ctx, timestamp=ts, raw_ref=ref, text="\n".join(texts),
                                   extra=extra))
            texts = []
            b.first_step_of_msg.setdefault(mid, step.index)
            if call_id:
                b.pending[call_id] = step
    text = "\n".join(t for t in texts if t.strip())
    if text:
        step, clean = text_step_and_text(0, str(rec.get("uuid") or lineno), "message", text,
                                         ctx, timestamp=ts, raw_ref=ref)
        b.add(step)
        b.first_step_of_msg.setdefault(mid, step.index)
        b.last_text = clean  # redacted whole: the final message is bounded from it
        b.text_msg = mid
    else:
        b.text_msg = None


def _tool_result(b: _Builder, block: dict[str, Any], rec: dict[str, Any], lineno: int,
                 ctx: ParseContext) -> None:
    tid = as_key(block.get("tool_use_id")) or ""
    if tid in b.answered:
        # A resumed session (new sessionId) copies the earlier lines: the same result
        # again is not a second call.
        return
    step = b.pending.pop(tid, None)
    if tid:
        b.answered.add(tid)
    if step is None:
        # A result whose call is not in this file (a log that starts mid-session, its first
        # line answering a call of the part before): no call was made here, so no tool step.
        ctx.warn(b.path, lineno, f"tool_result for unknown tool_use id {tid!r}; skipped")
        return
    output = content_text(block.get("content"))
    head = _EXIT_HEAD.match(output)
    exit_code = int(head.group(1)) if head else None
    failed = bool(block.get("is_error")) or bool(exit_code)
    set_output(step, output, ctx, exit_code=exit_code, is_error=failed)
    step.extra["result_ref"] = f"{b.where}:{lineno}"
    interrupted = rec.get("toolUseResult")
    if isinstance(interrupted, dict) and interrupted.get("interrupted"):
        step.extra["interrupted"] = True


def _user(b: _Builder, rec: dict[str, Any], lineno: int, ctx: ParseContext) -> None:
    msg = rec.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    ts = rec.get("timestamp")
    texts: list[str] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                _tool_result(b, block, rec, lineno, ctx)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                texts.append(block["text"])
    elif isinstance(content, str):
        texts.append(content)
    text = "\n".join(texts)
    if not text.strip():
        return
    ref = RawRef(b.where, lineno)
    sid = str(rec.get("uuid") or lineno)
    if rec.get("isCompactSummary"):
        b.add(text_step(0, sid, "compaction", text, ctx, timestamp=ts, raw_ref=ref,
                        extra={"summary": True}))
        return
    extra = {"meta": True} if rec.get("isMeta") else {}
    step, clean = text_step_and_text(0, sid, "user", text, ctx, timestamp=ts, raw_ref=ref,
                                     extra=extra)
    b.add(step)
    if b.task is None and not rec.get("isMeta") and not _INJECTED.match(text):
        b.task = bounded(clean, TASK_MAX_CHARS, redacted=True)


def _system(b: _Builder, rec: dict[str, Any], lineno: int, ctx: ParseContext) -> None:
    subtype = rec.get("subtype")
    if subtype in _SKIP_SYSTEM:
        return
    ref = RawRef(b.where, lineno)
    sid = str(rec.get("uuid") or lineno)
    ts = rec.get("timestamp")
    if subtype == "compact_boundary":
        meta = rec.get("compactMetadata") if isinstance(rec.get("compactMetadata"), dict) else {}
        b.add(text_step(0, sid, "compaction", str(rec.get("content") or "compacted"), ctx,
                        timestamp=ts, raw_ref=ref, extra={"compactMetadata": meta}))
    elif subtype == "api_error":
        err = rec.get("error") or rec.get("cause")
        text = (f"api_error retry {rec.get('retryAttempt')}/{rec.get('maxRetries')}: "
                f"{content_text(err) if not isinstance(err, dict) else err}")
        keys = ("retryAttempt", "maxRetries", "retryInMs", "cause")
        keep: dict[str, Any] = {k: rec.get(k) for k in keys if k in rec}
        b.add(text_step(0, sid, "system", text, ctx, timestamp=ts, raw_ref=ref,
                        extra={"subtype": "api_error", **keep}, is_error=True))
    else:
        b.add(text_step(0, sid, "system", content_text(rec.get("content")), ctx,
                        timestamp=ts, raw_ref=ref, extra={"subtype": subtype}))


def _feed(b: _Builder, rec: dict[str, Any], lineno: int, ctx: ParseContext) -> None:
    rtype = rec.get("type")
    if b.session_id is None and isinstance(rec.get("sessionId"), str):
        b.session_id = rec["sessionId"]
    if b.agent_id is None and isinstance(rec.get("agentId"), str):
        b.agent_id = rec["agentId"]
    if b.version is None and isinstance(rec.get("version"), str):
        b.version = rec["version"]
    if b.started_at is None and isinstance(rec.get("timestamp"), str):
        b.started_at = rec["timestamp"]
    if rtype == "assistant":
        _assistant(b, rec, lineno, ctx)
    elif rtype == "user":
        _user(b, rec, lineno, ctx)
    elif rtype == "system":
        _system(b, rec, lineno, ctx)
    elif rtype == "summary" and isinstance(rec.get("summary"), str):
        b.extra.setdefault("summaries", []).append(rec["summary"])
    elif rtype in ("custom-title", "ai-title") and isinstance(rec.get("title"), str):
        b.extra["title"] = rec["title"]
    for key in ("cwd", "gitBranch", "slug"):
        if key not in b.extra and rec.get(key):
            b.extra[key] = rec[key]


def _finish(b: _Builder, path: Path, stats: ReadStats, fallback_id: str) -> Trajectory:
    for mid, idx in b.first_step_of_msg.items():
        u = b.usage.get(mid)
        if u is not None:
            b.steps[idx].tokens = u[0] + u[1]
    tin = sum(u[0] for u in b.usage.values()) if b.usage else None
    tout = sum(u[1] for u in b.usage.values()) if b.usage else None
    return Trajectory(
        id=b.session_id or fallback_id,
        source=source_info(NAME, path, stats),
        agent=NAME,
        agent_version=b.version,
        model=most_common(b.models),
        task=b.task,
        steps=b.steps,
        outcome=OutcomeHints(final_message=bounded(b.last_text, redacted=True)),
        tokens_in=tin,
        tokens_out=tout,
        started_at=b.started_at,
        extra=b.extra,
    )


def _read(path: Path, ctx: ParseContext) -> tuple[_Builder, dict[str, _Builder], ReadStats]:
    """Stream ``path``: main-thread lines into one builder, sidechain lines per agent id."""
    stats = ReadStats()
    main = _Builder(path)
    side: dict[str, _Builder] = {}
    # Progress records (hook/agent progress) carry no step: skip decoding them.
    for lineno, rec in iter_jsonl(path, ctx, stats, skip_marker=b'"type":"progress"'):
        if not isinstance(rec, dict):
            ctx.warn(path, lineno, "expected a JSON object; skipped")
            continue
        try:
            if rec.get("isSidechain") is True:
                key = as_key(rec.get("agentId")) or "sidechain"
                _feed(side.setdefault(key, _Builder(path)), rec, lineno, ctx)
            else:
                _feed(main, rec, lineno, ctx)
        except RECORD_ERRORS as exc:
            skip_record(ctx, path, lineno, "record", exc)
    return main, side, stats


class Adapter(base.Adapter):
    """Claude Code session transcripts."""

    name = NAME
    description = "Claude Code session transcripts (JSONL, with subagent files)"
    where = "~/.claude/projects/<project>/<session>.jsonl (+ <session>/subagents/*.jsonl)"

    def sniff(self, path: Path, head: bytes) -> int:
        """Score Claude Code records: sessionId + uuid + a user/assistant/summary type."""
        if b'"sessionId"' in head and b'"uuid"' in head and (
            b'"type":"user"' in head or b'"type":"assistant"' in head
            or b'"type": "user"' in head or b'"type": "assistant"' in head
        ):
            return 90
        if head.lstrip().startswith(b'{"type":"summary"') or b'"leafUuid"' in head[:2000]:
            return 60
        return 0

    def parse(self, path: Path, ctx: ParseContext) -> Iterator[Trajectory]:
        """Yield the session, with sidechains and ``<session>/subagents/*.jsonl`` attached."""
        main, side, stats = _read(path, ctx)
        if not main.steps and not main.session_id and side:
            # A sidechain/subagent file on its own: one trajectory per agent, each pointing
            # at its parent session.
            for key, sb in side.items():
                traj = _finish(sb, path, stats, path.stem)
                traj.parent_session_id = sb.session_id
                traj.id = f"{sb.session_id}:agent-{key}" if sb.session_id else path.stem
                yield traj
            return
        traj = _finish(main, path, stats, path.stem)
        for key, sb in side.items():
            sub = _finish(sb, path, stats, f"{traj.id}:agent-{key}")
            sub.id = f"{traj.id}:agent-{key}"
            sub.parent_session_id = traj.id
            traj.subagents.append(sub)
        sub_dir = path.with_suffix("") / "subagents"
        if sub_dir.is_dir():
            for sub_path in sorted(sub_dir.glob("*.jsonl")):
                try:
                    smain, sside, sstats = _read(sub_path, ctx)
                except ParseFailure as exc:
                    # A broken subagent file must not lose the parent session.
                    ctx.warn(sub_path, None, str(exc))
                    continue
                for sb in [smain, *sside.values()]:
                    if not sb.steps:
                        continue
                    sub = _finish(sb, sub_path, sstats, sub_path.stem)
                    sub.id = f"{traj.id}:{sub_path.stem}"
                    sub.parent_session_id = traj.id
                    traj.subagents.append(sub)
        yield traj
