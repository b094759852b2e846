"""Gemini CLI chat recordings: ``~/.gemini/tmp/<project>/chats/session-*.json[l]``.

Two shapes: the legacy single JSON ``ConversationRecord`` (``sessionId``, ``projectHash``,
``messages``) and the v0.40+ append-only JSONL log: a metadata first line, then message
records rewritten in full whenever they change (the last write of an id wins, at the
position of its first write), ``{"$set": {...}}`` metadata patches (``messages`` in a patch
replaces the whole list) and ``{"$rewindTo": id}`` which drops that message and all after.

Shell results state their exit code as "Exit Code: N" inside the output even when the
call's ``status`` is ``success``, so the text is what decides.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import ParseFailure
from ..model import OutcomeHints, RawRef, Step, Trajectory
from . import base
from .base import ParseContext
from .common import bounded, most_common
from .fields import as_count, as_key, content_text, parse_args
from .jsonio import ReadStats, iter_jsonl, load_json
from .records import RECORD_ERRORS, skip_record, source_info
from .steps import text_step, text_step_and_text, tool_step
from .tools import parse_exit_code

NAME = "gemini-cli"
# run_shell_command appends these fields even when empty; "Error: (none)" would otherwise be
# taken as the error line.
_SHELL_TRAILER = re.compile(
    r"^(Error|Signal|Background PIDs): \(none\)\s*$"
    r"|^(Exit Code|Process Group PGID|Command|Directory): .*$",
    re.MULTILINE)
_FAILED_STATUS = frozenset({"error", "cancelled", "canceled", "failed"})


def _result_text(call: dict[str, Any]) -> tuple[str, bool]:
    """Observation text of a tool call and whether the response carries an error."""
    parts: list[str] = []
    has_error = False
    result = call.get("result")
    for item in result if isinstance(result, list) else [result]:
        if not isinstance(item, dict):
            continue
        fr = item.get("functionResponse")
        resp = fr.get("response") if isinstance(fr, dict) else None
        if isinstance(resp, dict):
            if resp.get("error"):
                has_error = True
                parts.append(content_text(resp.get("error")))
            if "output" in resp:
                parts.append(content_text(resp.get("output")))
        elif isinstance(item.get("text"), str):
            parts.append(item["text"])
    if not parts and isinstance(call.get("resultDisplay"), str):
        parts.append(call["resultDisplay"])
    return "\n".join(p for p in parts if p), has_error


def _steps(messages: list[tuple[dict[str, Any], int | None]], path: Path,
           ctx: ParseContext) -> tuple[list[Step], dict[str, Any]]:
    steps: list[Step] = []
    info: dict[str, Any] = {"models": Counter(), "tin": 0, "tout": 0, "has_tokens": False,
                            "task": None, "final": None}
    for n, (msg, line) in enumerate(messages):
        try:
            _message(msg, line, steps, info, path, ctx)
        except RECORD_ERRORS as exc:
            skip_record(ctx, path, line, "record" if line is not None else f"messages[{n}]",
                        exc)
    return steps, info


def _message(msg: dict[str, Any], line: int | None, steps: list[Step], info: dict[str, Any],
             path: Path, ctx: ParseContext) -> None:
    """Append the steps of one message; update the session totals in ``info``."""
    mtype = msg.get("type")
    ts = msg.get("timestamp")
    ref = RawRef(str(path), line)
    mid = str(msg.get("id") or len(steps))
    text = content_text(msg.get("content"))
    tokens = msg.get("tokens") if isinstance(msg.get("tokens"), dict) else None
    total: int | None = None
    if tokens is not None:
        info["has_tokens"] = True
        tin = as_count(tokens.get("input"))
        tout = as_count(tokens.get("output")) + as_count(tokens.get("thoughts"))
        info["tin"] += tin
        info["tout"] += tout
        total = tin + tout
    if isinstance(msg.get("model"), str):
        info["models"][msg["model"]] += 1
    if mtype == "user":
        if text.strip():
            step, clean = text_step_and_text(len(steps), mid, "user", text, ctx, timestamp=ts,
                                             raw_ref=ref)
            steps.append(step)
            if info["task"] is None and not text.lstrip().startswith("/"):
                info["task"] = bounded(clean, redacted=True)
        return
    if mtype in ("info", "error", "warning"):
        steps.append(text_step(len(steps), mid, "system", text, ctx, timestamp=ts,
                               raw_ref=ref, is_error=mtype == "error",
                               extra={"type": mtype}))
        return
    raw_calls = msg.get("toolCalls")
    # A non-list here loses the calls, not the message text.
    calls = [c for c in raw_calls if isinstance(c, dict)] if isinstance(raw_calls, list) else []
    if text.strip():
        info["final"] = text, False  # raw: redacted when bounded
    if not calls:
        if text.strip():
            step, clean = text_step_and_text(len(steps), mid, "message", text, ctx,
                                             tokens=total, timestamp=ts, raw_ref=ref)
            steps.append(step)
            info["final"] = clean, True  # redacted whole: bounded without a second scan
        return
    for i, call in enumerate(calls):
        output, has_error = _result_text(call)
        exit_code = parse_exit_code(output)
        status = str(call.get("status") or "").lower()
        failed = has_error or status in _FAILED_STATUS or bool(exit_code)
        extra = {k: v for k, v in call.items()
                 if k in ("status", "displayName", "description")}
        steps.append(tool_step(
            len(steps), str(call.get("id") or f"{mid}#{i}"), call.get("name"),
            parse_args(call.get("args")), output, ctx, exit_code=exit_code,
            is_error=failed, tokens=total if i == 0 else None,
            timestamp=call.get("timestamp") or ts, raw_ref=ref,
            text=text if i == 0 else "", extra=extra,
            signature_text=_SHELL_TRAILER.sub("", output) if exit_code is not None else None))


def _final(final: tuple[str, bool] | None) -> str | None:
    """The bounded final message from ``(text, redacted)`` (None when the session has none)."""
    if final is None:
        return None
    text, redacted = final
    return bounded(text, redacted=redacted)


def _read_jsonl(path: Path, ctx: ParseContext, stats: ReadStats
                ) -> tuple[dict[str, Any], list[tuple[dict[str, Any], int | None]]]:
    meta: dict[str, Any] = {}
    # Insertion order is the position of the first write; values are the last write.
    messages: dict[str, tuple[dict[str, Any], int | None]] = {}
    for lineno, rec in iter_jsonl(path, ctx, stats):
        if not isinstance(rec, dict):
            ctx.warn(path, lineno, "expected a JSON object; skipped")
            continue
        try:
            messages = _apply_line(rec, lineno, meta, messages, path, ctx)
        except RECORD_ERRORS as exc:
            skip_record(ctx, path, lineno, "record", exc)
    return meta, list(messages.values())


def _by_id(items: list[Any], lineno: int) -> dict[str, tuple[dict[str, Any], int | None]]:
    """Messages of a full list keyed by id (position when the id is missing or not a key)."""
    return {as_key(m.get("id")) or f"\x00#{i}": (m, lineno)
            for i, m in enumerate(items) if isinstance(m, dict)}


def _apply_line(rec: dict[str, Any], lineno: int, meta: dict[str, Any],
                messages: dict[str, tuple[dict[str, Any], int | None]], path: Path,
                ctx: ParseContext) -> dict[str, tuple[dict[str, Any], int | None]]:
    """Apply one JSONL record to the metadata and messages; return the messages."""
    if "$rewindTo" in rec:
        target = as_key(rec["$rewindTo"]) or ""
        ids = list(messages)
        if target in messages:
            for mid in ids[ids.index(target):]:
                del messages[mid]
        else:
            ctx.warn(path, lineno, f"$rewindTo unknown message id {target!r}; ignored")
    elif "$set" in rec:
        patch = rec["$set"] if isinstance(rec["$set"], dict) else {}
        if isinstance(patch.get("messages"), list):
            messages = _by_id(patch["messages"], lineno)
        meta.update({k: v for k, v in patch.items() if k != "messages"})
    elif "id" in rec and "type" in rec:
        # The last write of an id wins; an id that is not a string names no earlier write.
        messages[as_key(rec["id"]) or f"\x00line {lineno}"] = (rec, lineno)
    elif lineno == 1 and isinstance(rec.get("messages"), list):
        # A legacy single-line record saved with a .jsonl name.
        meta.update({k: v for k, v in rec.items() if k != "messages"})
        messages = _by_id(rec["messages"], lineno)
    elif lineno == 1 or "sessionId" in rec:
        meta.update(rec)
    else:
        ctx.warn(path, lineno, "record is neither a message nor a metadata patch; skipped")
    return messages


class Adapter(base.Adapter):
    """Gemini CLI chat recordings (legacy JSON and v0.40+ JSONL)."""

    name = NAME
    description = "Gemini CLI chat recordings (legacy session-*.json and v0.40+ JSONL)"
    where = "~/.gemini/tmp/<project>/chats/session-*.json and session-*.jsonl"

    def sniff(self, path: Path, head: bytes) -> int:
        """Score ConversationRecord shapes: projectHash + sessionId/messages, or $set lines."""
        if b'"projectHash"' in head and (b'"sessionId"' in head or b'"messages"' in head):
            return 95
        # One search for the shared prefix first: most heads hold neither record.
        if b'{"$' in head and (b'{"$set"' in head or b'{"$rewindTo"' in head):
            return 70
        return 0

    def parse(self, path: Path, ctx: ParseContext) -> Iterator[Trajectory]:
        """Yield the one session of a chat recording."""
        stats = ReadStats()
        with path.open("rb") as fh:
            first_line = fh.readline(65536).strip()
        # A pretty-printed legacy record opens with a bare "{" line; JSONL never does.
        if path.suffix == ".json" or first_line == b"{":
            data = load_json(path, ctx, stats)
            if not isinstance(data, dict):
                raise ParseFailure(f"{path}: expected a JSON object (ConversationRecord)")
            meta = {k: v for k, v in data.items() if k != "messages"}
            msgs = data.get("messages")
            messages: list[tuple[dict[str, Any], int | None]] = [
                (m, None) for m in (msgs if isinstance(msgs, list) else [])
                if isinstance(m, dict)]
        else:
            meta, messages = _read_jsonl(path, ctx, stats)
        steps, info = _steps(messages, path, ctx)
        yield Trajectory(
            id=as_key(meta.get("sessionId")) or path.stem,
            source=source_info(NAME, path, stats),
            agent=NAME,
            model=most_common(info["models"]),
            task=info["task"],
            steps=steps,
            outcome=OutcomeHints(final_message=_final(info["final"])),
            tokens_in=info["tin"] if info["has_tokens"] else None,
            tokens_out=info["tout"] if info["has_tokens"] else None,
            started_at=meta.get("startTime"),
            extra={k: meta[k] for k in ("projectHash", "lastUpdated", "kind", "summary",
                                        "directories") if k in meta},
        )
