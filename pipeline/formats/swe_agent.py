"""SWE-agent ``*.traj`` files (0.x and 1.x).

A ``.traj`` is one JSON object ``{environment, trajectory[], history[], info, replay_config?}``;
each trajectory entry is one action with its observation. SWE-agent records no structured
exit code, so a step is marked failed only on conservative text evidence:

- the EnIGMA/SWE-ReX marker ``///PROCESS-DONE:N:PROCESS-DONE///`` with N != 0 (exit code N);
- a line starting ``Traceback (most recent call last):``;
- the observation starting with a known tool-error phrase: ``Your proposed edit has
  introduced new syntax error``, ``No replacement was performed``, ``Error:``, ``Usage:``,
  ``File ... not found``, ``No file open``, ``bash: ...: command not found`` /
  ``No such file or directory`` on the first line, or ``The command ... was cancelled
  because it took more than`` (timeout).

Anything else (including test output that merely mentions "error") counts as success.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from ..model import OutcomeHints, RawRef, Step, Trajectory
from ..privacy import SessionSecrets
from . import base
from .common import bounded
from .fields import as_int, content_text, obj
from .jsonio import ReadStats
from .records import RECORD_ERRORS, load_document, opens_object, skip_record, source_info
from .steps import reindex, text_step, tool_step
from .tools import normalize_tool

_PROCESS_DONE = re.compile(r"///PROCESS-DONE:(-?\d+):PROCESS-DONE///")
_HEAD_ERRORS = (
    "Your proposed edit has introduced new syntax error",
    "Error:",
    "ERROR:",
    "Usage:",
    "usage:",
    "No file open",
    "No replacement was performed",
    "Traceback (most recent call last):",
)
_FIRST_LINE = re.compile(
    r"^(?:File .{1,300} not found|.{0,300}: command not found|"
    r".{0,300}: No such file or directory|"
    r"The command .{0,300} was cancelled because it took more than)",
)
_TRACEBACK = "\nTraceback (most recent call last):"

# First word of an action (0.x commands, 1.x tool names) -> normalized tool.
_COMMANDS = {
    "open": "read", "goto": "read", "scroll_up": "read", "scroll_down": "read",
    "cat": "read", "head": "read", "tail": "read",
    "create": "write",
    "edit": "edit", "insert": "edit", "str_replace_editor": "edit", "append": "edit",
    "find_file": "ls", "ls": "ls", "find": "ls",
    "search_dir": "grep", "search_file": "grep", "grep": "grep", "rg": "grep",
    "submit": "finish", "exit_forfeit": "finish",
}
_STEP_KEYS = frozenset({"action", "observation", "thought", "response", "messages"})


def swe_failed(observation: str) -> tuple[bool, int | None]:
    """Apply the conservative text rule; return ``(is_error, exit_code)``."""
    exit_code = None
    tail = observation[-300:]
    if "PROCESS-DONE" in tail:
        m = _PROCESS_DONE.search(tail)
        if m:
            exit_code = int(m.group(1))
            if exit_code != 0:
                return True, exit_code
    head = observation.lstrip()[:400]
    if head.startswith(_HEAD_ERRORS):
        return True, exit_code
    first_line = head.split("\n", 1)[0]
    if _FIRST_LINE.match(first_line):
        return True, exit_code
    if _TRACEBACK in observation:
        return True, exit_code
    return False, exit_code


def extract_task(text: str, secrets: SessionSecrets) -> str | None:
    """The issue text inside SWE-agent/SWE-bench prompt templates, else the text itself.

    Cut from the raw text, then redacted as a piece by the session's memory: cut from text
    redacted whole, a placeholder could break the template phrase removed below, or a match
    before the body hide a keyword inside it, and the piece's own scan would not run.
    """
    for start, end in (("<pr_description>", "</pr_description>"), ("ISSUE:\n", "\n\nINSTRUCTIONS:"),
                       ("<issue_description>", "</issue_description>")):
        i = text.find(start)
        if i >= 0:
            j = text.find(end, i)
            body = text[i + len(start): j if j > i else None]
            body = body.replace("Consider the following PR description:", "", 1)
            return bounded(secrets.redact(body.strip()), redacted=True)
    return bounded(secrets.redact(text.strip()), redacted=True)


def _tool_for(action: str) -> str:
    words = action.split(None, 2)
    word = words[0] if words else ""
    if word == "str_replace_editor" and len(words) > 1:
        return {"view": "read", "create": "write"}.get(words[1], "edit")
    found = _COMMANDS.get(word)
    if found is not None:
        return found
    if word in ("python", "python3", "pytest", "pip", "git", "make", "bash", "sh", "cd"):
        return "bash"
    norm = normalize_tool(word)
    return norm if norm != "other" else "bash"


def _as_dict(value: Any) -> dict[str, Any]:
    """A dict from a dict, a JSON string or a Python-literal string (1.x ``state``)."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.startswith("{") and len(value) < 100_000:
        try:
            out = orjson.loads(value)
        except orjson.JSONDecodeError:
            try:
                out = ast.literal_eval(value)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                return {}
        return out if isinstance(out, dict) else {}
    return {}


class Adapter(base.Adapter):
    """SWE-agent trajectories."""

    name = "swe-agent"
    description = "SWE-agent .traj trajectories (0.x and 1.x)"
    where = "trajectories/<user>/<run>/<instance>.traj"

    def sniff(self, path: Path, head: bytes) -> int:
        """Score by content: a JSON object with a ``trajectory`` list of action/observation."""
        if not opens_object(head):
            return 0
        if b'"mini_version"' in head or b"<returncode>" in head:
            return 0
        if b'"trajectory"' in head and b'"action"' in head:
            if b'"observation"' in head or b'"environment"' in head or b'"history"' in head:
                return 90
            return 60
        if path.name.endswith(".traj") and b'"trajectory"' in head:
            return 50
        return 0

    def parse(self, path: Path, ctx: base.ParseContext) -> Iterator[Trajectory]:
        """Yield the one trajectory of a ``.traj`` file."""
        first_issue = len(ctx.issues)
        stats = ReadStats()
        data = load_document(path, ctx, stats, "trajectory", "a SWE-agent trajectory")
        info = obj(data.get("info"))
        steps: list[Step] = []
        raw = RawRef(str(path))
        for i, entry in enumerate(data["trajectory"]):
            if not isinstance(entry, dict):
                ctx.warn(path, None, f"trajectory[{i}]: expected an object, got "
                         f"{type(entry).__name__}; skipped")
                continue
            action = entry.get("action")
            if not isinstance(action, str):
                ctx.warn(path, None, f"trajectory[{i}]: 'action' is missing or not a string; "
                         "skipped")
                continue
            try:
                steps.append(self._step(entry, action, i, len(steps), raw, ctx))
            except RECORD_ERRORS as exc:
                skip_record(ctx, path, None, f"trajectory[{i}]", exc)
        task = self._task(data.get("history"), ctx)
        if task:
            steps.insert(0, text_step(0, "task", "user", task, ctx, raw_ref=raw))
            reindex(steps)
        exit_status = info.get("exit_status") if isinstance(info.get("exit_status"), str) else None
        stats_ = obj(info.get("model_stats"))
        sent, received = as_int(stats_.get("tokens_sent")), as_int(stats_.get("tokens_received"))
        if not sent and not received:
            # Replayed demonstrations log zeros: that is "no data", not "free".
            sent = received = None
        model = self._model(data.get("replay_config"))
        final = next((s.text for s in reversed(steps) if s.kind == "tool" and s.text), None)
        traj = Trajectory(
            id=path.name[: -len(".traj")] if path.name.endswith(".traj") else path.stem,
            source=source_info(self.name, path, stats),
            agent="swe-agent",
            agent_version=info.get("swe_agent_version") or info.get("sweagent_version"),
            model=model,
            task=task,
            steps=steps,
            outcome=OutcomeHints(
                exit_status=exit_status,
                task_complete=True if exit_status == "submitted" else None,
                final_message=bounded(final, redacted=True),  # a step's text: redacted
                submitted_patch=submitted_patch(info, exit_status),
            ),
            tokens_in=sent,
            tokens_out=received,
            extra={k: stats_[k] for k in ("instance_cost", "total_cost", "api_calls")
                   if k in stats_},
        )
        if isinstance(data.get("environment"), str):
            traj.extra["environment"] = data["environment"]
        traj.issues = list(ctx.issues[first_issue:])
        yield traj

    @staticmethod
    def _step(entry: dict[str, Any], action: str, i: int, index: int, raw: RawRef,
              ctx: base.ParseContext) -> Step:
        """The tool step of ``trajectory[i]``: its action with the observation."""
        observation = entry.get("observation")
        obs = content_text(observation)
        is_error, exit_code = swe_failed(obs)
        if exit_code is not None:
            obs = _PROCESS_DONE.sub("", obs)
        thought = entry.get("thought")
        if not isinstance(thought, str):
            thought = entry.get("response") if isinstance(entry.get("response"), str) else ""
        extra = {k: v for k, v in entry.items() if k not in _STEP_KEYS}
        command = action.strip()
        return tool_step(
            index, str(i), None, {"command": command}, obs, ctx,
            tool=_tool_for(command), exit_code=exit_code, is_error=is_error, raw_ref=raw,
            text=thought or "", extra=extra,
        )

    @staticmethod
    def _task(history: Any, ctx: base.ParseContext) -> str | None:
        if not isinstance(history, list):
            return None
        for msg in history:
            if not isinstance(msg, dict) or msg.get("role") != "user" or msg.get("is_demo"):
                continue
            text = content_text(msg.get("content"))
            if text.strip():
                return extract_task(text, ctx.secrets)
        return None

    @staticmethod
    def _model(replay_config: Any) -> str | None:
        cfg = _as_dict(replay_config)
        agent = obj(cfg.get("agent"))
        model = obj(agent.get("model"))
        name = model.get("name") or model.get("model_name")
        return name if isinstance(name, str) else None


def submitted_patch(info: dict[str, Any], exit_status: str | None) -> bool | None:
    """False when the harness recorded no patch (empty ``submission``, or none at a limit)."""
    submission = info.get("submission")
    if isinstance(submission, str):
        return bool(submission.strip())
    if exit_status and "submit" not in exit_status.lower():
        return False  # stopped at a limit without submitting
    return None
