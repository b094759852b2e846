"""Antigravity brain folders: ``~/.gemini/antigravity*/brain/<id>/``.

The session log is ``.system_generated/logs/transcript.jsonl`` (and ``transcript_full.jsonl``),
one step record per line: ``step_index``, ``source``, ``type``, ``status``, ``content``,
``tool_calls``, ``exit_code``, ``error``. A ``PLANNER_RESPONSE`` lists tool calls; the result
records that follow it (``RUN_COMMAND``, ``VIEW_FILE``...) answer them in order.
``transcript_full.jsonl`` holds snapshots of steps as they progress, so records are deduped by
``(step_index, type, source)`` keeping the last (final) status, at the first position.
The brain folder (``task.md``, ``implementation_plan.md``, ``walkthrough.md``,
``*.metadata.json``) is one session; its id is the folder name.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

from ..model import OutcomeHints, RawRef, Step, Trajectory
from . import base
from .base import ParseContext
from .common import bounded
from .fields import content_text
from .jsonio import ReadStats, iter_jsonl
from .records import RECORD_ERRORS, skip_record, source_info
from .steps import text_step, text_step_and_text, tool_step
from .tools import parse_exit_code

NAME = "antigravity"
_USER_REQUEST = re.compile(r"<USER_REQUEST>\s*(.*?)\s*</USER_REQUEST>", re.DOTALL)
_MODEL_CHANGE = re.compile(r"setting `Model Selection` from .*? to ([^\n]+?)\.?\s*$",
                           re.MULTILINE)
_SUBAGENT_ID = re.compile(r'"conversationId":\s*"([^"]+)"')
# The same id as it sits in the raw JSONL bytes (inside a JSON string, quotes escaped).
_SUBAGENT_ID_RAW = re.compile(rb'conversationId\\?":\s*\\?"([0-9A-Za-z_.-]+)')
_FAILED_STATUS = frozenset({"ERROR", "FAILED", "CANCELED", "CANCELLED"})
# Result record types -> the tool that produced them, for results with no planner call.
_RESULT_TOOL = {
    "RUN_COMMAND": "run_command", "VIEW_FILE": "view_file", "LIST_DIRECTORY": "list_dir",
    "GREP_SEARCH": "grep_search", "FIND": "find_by_name", "SEARCH_WEB": "search_web",
    "CODE_ACTION": "write_to_file", "READ_URL_CONTENT": "read_url_content",
    "INVOKE_SUBAGENT": "invoke_subagent", "COMMAND_STATUS": "command_status",
}
_ARTIFACTS = ("task.md", "implementation_plan.md", "walkthrough.md")


@dataclass
class _Call:
    name: str | None
    args: dict[str, Any]
    text: str
    ref: RawRef
    timestamp: str | None
    source_id: str


def _decode_args(args: Any) -> dict[str, Any]:
    """Arguments whose values are JSON-encoded strings (``"\\"/tmp\\""``) decoded."""
    if not isinstance(args, dict):
        return {}
    out: dict[str, Any] = {}
    for key, value in args.items():
        if isinstance(value, str) and value[:1] in ('"', "{", "["):
            try:
                value = orjson.loads(value)
            except orjson.JSONDecodeError:
                pass
        out[key] = value
    return out


def _unwrap_request(text: str) -> str:
    m = _USER_REQUEST.search(text)
    return m.group(1) if m else text


def _children(brain_root: Path) -> dict[str, str]:
    """Sub-agent brain id -> parent brain id, for the brain folders under ``brain_root``.

    A parent announces each sub-agent in an INVOKE_SUBAGENT result ("conversationId": ...);
    the sub-agent's transcript lives in a sibling brain folder named by that id. Cached per
    folder state, since discovery asks once per sibling.
    """
    try:
        stamp = brain_root.stat().st_mtime_ns
    except OSError:
        return {}
    return _children_cached(brain_root, stamp)


@lru_cache(maxsize=32)
def _children_cached(brain_root: Path, stamp: int) -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        brains = [p for p in brain_root.iterdir() if p.is_dir()]
    except OSError:
        return out
    for brain in brains:
        logs = _logs_dir(brain)
        if logs is None:
            continue
        for name in ("transcript_full.jsonl", "transcript.jsonl"):
            try:
                data = (logs / name).read_bytes()
            except OSError:
                continue
            if b"INVOKE_SUBAGENT" in data:
                for child in _SUBAGENT_ID_RAW.findall(data):
                    out.setdefault(child.decode("utf-8", "replace"), brain.name)
            break
    return out


def _logs_dir(path: Path) -> Path | None:
    for cand in (path / ".system_generated" / "logs", path):
        if (cand / "transcript.jsonl").is_file() or (cand / "transcript_full.jsonl").is_file():
            return cand
    return None


def _records(path: Path, ctx: ParseContext, stats: ReadStats
             ) -> list[tuple[int, dict[str, Any]]]:
    dedupe = "full" in path.name
    keyed: dict[tuple[Any, Any, Any], tuple[int, dict[str, Any]]] = {}
    plain: list[tuple[int, dict[str, Any]]] = []
    for lineno, rec in iter_jsonl(path, ctx, stats):
        if not isinstance(rec, dict):
            ctx.warn(path, lineno, "expected a JSON object; skipped")
            continue
        if dedupe:
            key = (rec.get("step_index"), rec.get("type"), rec.get("source"))
            try:
                hash(key)
            except TypeError:
                # A list or object in a key field cannot name a snapshot: keep the record
                # on its own rather than merge it with an unrelated one.
                key = ("line", lineno, None)
            if key in keyed:
                # Keep the first position, take the latest snapshot's content.
                keyed[key] = (keyed[key][0], rec)
            else:
                keyed[key] = (lineno, rec)
        else:
            plain.append((lineno, rec))
    return list(keyed.values()) if dedupe else plain


class _Parser:
    def __init__(self, path: Path, ctx: ParseContext) -> None:
        self.path = path
        self.ctx = ctx
        self.steps: list[Step] = []
        self.pending: deque[_Call] = deque()
        self.task: str | None = None
        self.model: str | None = None
        self.final: str | None = None
        self.started_at: str | None = None
        self.subagent_ids: list[str] = []

    def _flush(self) -> None:
        # Calls that never got a result record still count as calls (no output, unknown exit).
        while self.pending:
            c = self.pending.popleft()
            self.steps.append(tool_step(len(self.steps), c.source_id, c.name, c.args, "",
                                        self.ctx, timestamp=c.timestamp, raw_ref=c.ref,
                                        text=c.text, extra={"no_result": True}))

    def _result(self, rec: dict[str, Any], ref: RawRef, ts: str | None) -> None:
        rtype = str(rec.get("type"))
        output = content_text(rec.get("content"))
        if rec.get("error"):
            output = (output + "\n" + content_text(rec.get("error"))).strip()
        exit_code = rec.get("exit_code") if isinstance(rec.get("exit_code"), int) else None
        if exit_code is None:
            exit_code = parse_exit_code(output)
        failed = (bool(exit_code) or rec.get("success") is False or bool(rec.get("error"))
                  or str(rec.get("status")) in _FAILED_STATUS)
        if rtype == "INVOKE_SUBAGENT":
            self.subagent_ids.extend(_SUBAGENT_ID.findall(output))
        extra: dict[str, Any] = {"type": rtype, "status": rec.get("status")}
        if rec.get("truncated_fields"):
            extra["truncated_fields"] = rec["truncated_fields"]
        if self.pending:
            c = self.pending.popleft()
            name, args, text, sid = c.name, c.args, c.text, c.source_id
        else:
            own = rec.get("tool_calls")
            first = own[0] if isinstance(own, list) and own and isinstance(own[0], dict) else {}
            name = first.get("name") or _RESULT_TOOL.get(rtype, rtype.lower())
            args, text, sid = _decode_args(first.get("args")), "", str(rec.get("step_index"))
        self.steps.append(tool_step(len(self.steps), sid, name, args, output, self.ctx,
                                    exit_code=exit_code, is_error=failed, timestamp=ts,
                                    raw_ref=ref, text=text,
                                    extra={**extra, "result_ref": str(ref)}))

    def feed(self, lineno: int, rec: dict[str, Any]) -> None:
        ref = RawRef(str(self.path), lineno)
        ts = rec.get("created_at") if isinstance(rec.get("created_at"), str) else None
        if self.started_at is None and ts:
            self.started_at = ts
        rtype, source = rec.get("type"), rec.get("source")
        sid = str(rec.get("step_index", lineno))
        content = content_text(rec.get("content"))
        if rtype == "USER_INPUT":
            self._flush()
            text = _unwrap_request(content)
            step, clean = text_step_and_text(len(self.steps), sid, "user", text, self.ctx,
                                             timestamp=ts, raw_ref=ref)
            self.steps.append(step)
            if self.task is None:
                self.task = bounded(clean, redacted=True)
            m = _MODEL_CHANGE.search(content)
            if m:
                self.model = m.group(1).strip()
        elif rtype == "PLANNER_RESPONSE":
            self._flush()
            raw_calls = rec.get("tool_calls")
            # A non-list here loses the calls, not the planner's text.
            calls = [c for c in raw_calls if isinstance(c, dict)] \
                if isinstance(raw_calls, list) else []
            thinking = content_text(rec.get("thinking"))
            if content.strip():
                self.final = content
            if not calls:
                if content.strip():
                    self.steps.append(text_step(len(self.steps), sid, "message", content,
                                                self.ctx, timestamp=ts, raw_ref=ref,
                                                extra={"thinking": thinking} if thinking
                                                else None))
                return
            for i, call in enumerate(calls):
                self.pending.append(_Call(call.get("name"), _decode_args(call.get("args")),
                                          (content or thinking) if i == 0 else "", ref, ts,
                                          f"{sid}#{i}"))
        elif source == "MODEL" and (self.pending or rtype in _RESULT_TOOL):
            self._result(rec, ref, ts)
        elif rtype == "CHECKPOINT":
            self._flush()
            self.steps.append(text_step(len(self.steps), sid, "compaction", content, self.ctx,
                                        timestamp=ts, raw_ref=ref))
        elif rtype == "ERROR_MESSAGE":
            self.steps.append(text_step(len(self.steps), sid, "error", content, self.ctx,
                                        timestamp=ts, raw_ref=ref, is_error=True))
        elif source == "MODEL":
            if content.strip():
                self.steps.append(text_step(len(self.steps), sid, "message", content,
                                            self.ctx, timestamp=ts, raw_ref=ref,
                                            extra={"type": rtype}))
        else:
            self.steps.append(text_step(len(self.steps), sid, "system", content, self.ctx,
                                        timestamp=ts, raw_ref=ref,
                                        extra={"type": rtype, "source": source}))


class Adapter(base.Adapter):
    """Antigravity brain folders and their transcript JSONL files."""

    name = NAME
    description = "Google Antigravity brain folders (.system_generated/logs/transcript*.jsonl)"
    where = "~/.gemini/antigravity*/brain/<id>/ (transcript.jsonl, transcript_full.jsonl)"

    def sniff(self, path: Path, head: bytes) -> int:
        """Score step records: step_index + source + type."""
        if b'"step_index"' in head and b'"source"' in head and b'"type"' in head:
            return 95 if path.name.startswith("transcript") else 85
        return 0

    def claims_dir(self, path: Path) -> bool:
        """A brain folder (or its logs folder) holding a transcript."""
        return _logs_dir(path) is not None

    def is_subsession(self, path: Path) -> bool:
        """A brain folder that a sibling brain invoked as its sub-agent."""
        return path.name in _children(path.parent)

    def parse(self, path: Path, ctx: ParseContext) -> Iterator[Trajectory]:
        """Yield the session of a brain folder or a single transcript file."""
        yield from self._parse(path, ctx, frozenset())

    def _parse(self, path: Path, ctx: ParseContext, seen: frozenset[str]
               ) -> Iterator[Trajectory]:
        stats = ReadStats()
        if path.is_dir():
            logs = _logs_dir(path)
            if logs is None:
                return
            full = logs / "transcript_full.jsonl"
            log_file = full if full.is_file() else logs / "transcript.jsonl"
            brain = logs.parent.parent if logs.name == "logs" and logs != path else path
            session_id = brain.name if logs != path else logs.parent.parent.name
            artifacts = sorted(p.name for p in brain.iterdir()
                               if p.name in _ARTIFACTS or p.name.endswith(".metadata.json"))
        else:
            log_file, brain, artifacts = path, path, []
            parents = path.parts
            # <brain id>/.system_generated/logs/transcript.jsonl names its session.
            session_id = (parents[-4] if len(parents) >= 4 and parents[-2] == "logs"
                          else path.stem)
        p = _Parser(log_file, ctx)
        for lineno, rec in _records(log_file, ctx, stats):
            try:
                p.feed(lineno, rec)
            except RECORD_ERRORS as exc:
                skip_record(ctx, log_file, lineno, "record", exc)
        p._flush()
        extra: dict[str, Any] = {"log_file": str(log_file)}
        if artifacts:
            extra["artifacts"] = artifacts
        if p.subagent_ids:
            extra["subagent_ids"] = p.subagent_ids
        subagents: list[Trajectory] = []
        parent_id: str | None = None
        if path.is_dir():
            siblings = _children(brain.parent)
            parent_id = siblings.get(session_id)
            for child_id in dict.fromkeys(p.subagent_ids):
                child = brain.parent / child_id
                # `seen` stops a (corrupt) pair of brains invoking each other from recursing.
                if child_id not in seen and siblings.get(child_id) == session_id and \
                        _logs_dir(child) is not None:
                    subagents.extend(self._parse(child, ctx, seen | {session_id}))
        yield Trajectory(
            id=session_id,
            source=source_info(NAME, brain, stats),
            subagents=subagents,
            parent_session_id=parent_id,
            agent=NAME,
            model=p.model,
            task=p.task,
            steps=p.steps,
            # Most often the last message's text again: the session's scan cache knows it.
            outcome=OutcomeHints(final_message=bounded(ctx.secrets.redact(p.final or ""),
                                                       redacted=True)),
            started_at=p.started_at,
            extra=extra,
        )
