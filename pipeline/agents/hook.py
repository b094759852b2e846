"""The playbook at the moment of the error: a tool hook for Claude Code, Gemini CLI and Codex.

The client runs ``orf hook <client>`` after a tool call with the hook's JSON on stdin. When
the call failed and the failure matches a playbook's trap (most terms of an error line the
playbook records are in the error text), or the same call already failed once in this session,
the hook prints ``hookSpecificOutput.additionalContext`` with the playbook's id, title, Core
Principle and validated path; otherwise it prints nothing. It never blocks the client and
exits 0 whatever happens. Only the standard library, orjson and the cached index are on this
path (see ``pipeline.entry``), so it answers in tens of milliseconds.

What each client sends (the readers below):

- Claude Code sends a failed call as ``PostToolUseFailure`` (``error`` starts "Exit code N"
  for Bash); its ``PostToolUse`` is for successes and carries no exit code.
- Gemini CLI sends ``AfterTool`` with ``tool_response.llmContent`` (a string or a list of
  ``{text}`` parts) and ``error`` for a tool error; a shell's text holds "Exit Code: N".
- Codex sends ``PostToolUse`` for Bash, apply_patch and MCP tools with the output as a plain
  string and no exit code: whether the call failed is read from its rollout
  (``codex_rollout``). When the rollout does not say, the output is only matched against
  the playbooks' recorded errors (a repeat of the same call proves nothing about failure).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from . import codex_rollout
from .bm25 import tokenize
from .search import (
    Doc,
    SearchIndex,
    cache_dir,
    error_focus,
    replace_file,
    trap_matches,
)

CANDIDATES = 5
"""BM25 hits checked for a trap match."""
STATE_DAYS = 7
"""Days a session's record of failed calls is kept."""
_MAX_PATH = 1200
_KEPT_FAILURES = 64
_MAX_LOG_BYTES = 256 * 1024
_EXIT_TEXT = re.compile(
    r"(?im)^\W*(?:exit code|exit status|exit_code|process exited with code)\W+(-?\d+)")
_EXIT_KEYS = ("exit_code", "exitCode", "returnCode", "return_code", "exit_status", "status")


class Failure(NamedTuple):
    """A failed tool call, as read from one hook payload."""

    event: str
    """The hook event, echoed as ``hookEventName``."""
    session: str
    """The client's session id (repeat detection is per session)."""
    call_key: str
    """Hash of the tool name and its input: the same call has the same key."""
    text: str
    """The error text to match playbooks against."""
    certain: bool = True
    """False when the client did not say the call failed (Codex without its rollout): only a
    trap match answers then, never the repeat rule."""


def _call_key(payload: dict[str, Any]) -> str:
    call = orjson.dumps([payload.get("tool_name"), payload.get("tool_input")],
                        option=orjson.OPT_SORT_KEYS, default=str)
    return hashlib.blake2b(call, digest_size=12).hexdigest()


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        parts = [_text(value.get(k)) for k in ("error", "message", "stderr", "stdout",
                                                 "output", "llmContent", "content", "text")]
        return "\n".join(p for p in parts if p)
    if isinstance(value, list):
        return "\n".join(_text(v) for v in value)
    return ""


def exit_code(response: Any) -> int | None:
    """The exit code a tool response shows (a field, or an ``Exit code N`` line), if any."""
    if isinstance(response, dict):
        for key in _EXIT_KEYS:
            value = response.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    match = _EXIT_TEXT.search(_text(response))
    return int(match.group(1)) if match else None


def _failure(payload: dict[str, Any], text: str, certain: bool = True) -> Failure:
    return Failure(event=str(payload.get("hook_event_name", "")),
                   session=str(payload.get("session_id", "")), call_key=_call_key(payload),
                   text=text, certain=certain)


def _shell_failure(payload: dict[str, Any], shell_tools: tuple[str, ...]) -> Failure | None:
    if payload.get("tool_name") not in shell_tools:
        return None
    response = payload.get("tool_response")
    code = exit_code(response)
    if code is None or code == 0:
        return None
    return _failure(payload, _text(response))


def claude_code_failure(payload: dict[str, Any]) -> Failure | None:
    """Claude Code: every ``PostToolUseFailure`` but an interrupt.

    A Bash call that exits nonzero is a ``PostToolUseFailure`` (its ``error`` starts "Exit
    code N"); a ``PostToolUse`` is a success, whatever its output says.
    """
    if payload.get("hook_event_name") != "PostToolUseFailure" or payload.get("is_interrupt"):
        return None
    return _failure(payload, _text(payload.get("error")))


def gemini_failure(payload: dict[str, Any]) -> Failure | None:
    """Gemini CLI: an ``AfterTool`` whose response carries an error, or a shell nonzero exit."""
    if payload.get("hook_event_name") != "AfterTool":
        return None
    response = payload.get("tool_response")
    if isinstance(response, dict) and response.get("error"):
        return _failure(payload, _text(response))
    return _shell_failure(payload, ("run_shell_command",))


def codex_failure(payload: dict[str, Any]) -> Failure | None:
    """Codex: a ``PostToolUse`` (Bash, apply_patch, MCP tools) whose call failed.

    The response is the output with no exit code: the rollout at ``transcript_path`` says
    whether the call failed; else an exit code the response shows (an "Exit code: N" header of
    older builds); else the output is a possible failure (a trap match only).
    """
    if payload.get("hook_event_name") != "PostToolUse":
        return None
    response = payload.get("tool_response")
    failed = codex_rollout.call_failed(payload.get("transcript_path"),
                                       payload.get("tool_use_id"))
    if failed is None:
        code = exit_code(response)
        failed = None if code is None else code != 0
    if failed is False:
        return None
    return _failure(payload, _text(response), certain=failed is True)


CLIENTS: dict[str, Callable[[dict[str, Any]], Failure | None]] = {
    "claude-code": claude_code_failure,
    "gemini": gemini_failure,
    "codex": codex_failure,
}
"""Hook clients: name -> reader of its payload."""


def best_playbook(index: SearchIndex, failure: Failure,
                  repeated: bool) -> tuple[Doc, bool] | None:
    """The playbook whose trap this failure is, and whether it matched by trap.

    On a repeated call without a trap match, the closest playbook (and False); else None.
    """
    terms = tokenize(error_focus(failure.text))
    hits = index.search_terms(terms, CANDIDATES)
    wanted = set(terms)
    for hit in hits:
        if trap_matches(hit.doc, wanted):
            return hit.doc, True
    if repeated and failure.certain and hits:
        return hits[0].doc, False
    return None


def context_text(doc: Doc, root: Path, matched: bool) -> str:
    """The additionalContext: id, title, Core Principle, validated path, how to read more."""
    why = ("a playbook in the store matches this failure" if matched
           else "this call already failed once in this session; the closest playbook")
    path = doc.validated_path.strip()
    if len(path) > _MAX_PATH:
        path = path[:_MAX_PATH].rstrip() + " ..."
    return (f"orf: {why}: {doc.id} \"{doc.title}\"\n"
            f"Core Principle: {doc.insight}\n"
            f"Validated path:\n{path}\n"
            f"Full playbook: orf read-experience --id {doc.id} --store {root}")


def _state_file(session: str) -> Path:
    key = hashlib.blake2b(session.encode(), digest_size=8).hexdigest()
    return cache_dir() / "hook" / f"{key}.json"


def _prune(folder: Path) -> None:
    # A session's state is useless once the session is over: drop files a week old, once per
    # new session (a listing of small files, cheap next to the hook's budget).
    cutoff = time.time() - STATE_DAYS * 86400
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            with contextlib.suppress(OSError):
                if entry.name.endswith(".json") and entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)


def seen_before(failure: Failure) -> bool:
    """Record this failed call for its session; True when the same call had failed already."""
    path = _state_file(failure.session)
    try:
        keys = orjson.loads(path.read_bytes())
        keys = [k for k in keys if isinstance(k, str)] if isinstance(keys, list) else []
    except (OSError, orjson.JSONDecodeError):
        keys = []
        _prune(path.parent)
    repeated = failure.call_key in keys
    keys = [k for k in keys if k != failure.call_key] + [failure.call_key]
    try:
        replace_file(path, orjson.dumps(keys[-_KEPT_FAILURES:]))
    except OSError:
        pass  # no state: repeats go unnoticed, matches still work
    return repeated


def respond(client: str, payload: Any, store: Path) -> dict[str, Any] | None:
    """The hook's JSON reply to one payload, or None to stay silent."""
    if not isinstance(payload, dict):
        return None
    failure = CLIENTS[client](payload)
    if failure is None or not failure.text.strip():
        return None
    repeated = seen_before(failure) if failure.certain else False
    if not (store / "INDEX.md").is_file():
        return None
    found = best_playbook(SearchIndex.load(store), failure, repeated)
    if found is None:
        return None
    doc, matched = found
    return {"hookSpecificOutput": {"hookEventName": failure.event,
                                   "additionalContext": context_text(doc, store, matched)}}


def resolve_store(store: str | None) -> Path:
    """``--store``, else ORF_STORE, else ./experiences (the CLI's defaults, without pydantic)."""
    return Path(store or os.environ.get("ORF_STORE") or "experiences")


def main(argv: list[str], stdin: Any = None, stdout: Any = None) -> int:
    """``orf hook CLIENT [--store DIR]``: read stdin, maybe print a reply; always return 0."""
    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout if stdout is not None else sys.stdout
    try:
        client, store = argv[0], None
        rest = argv[1:]
        for position, arg in enumerate(rest):
            if arg == "--store" and position + 1 < len(rest):
                store = rest[position + 1]
            elif arg.startswith("--store="):
                store = arg.split("=", 1)[1]
        payload = orjson.loads(stdin.read() or b"null")
        reply = respond(client, payload, resolve_store(store))
        if reply is not None:
            stdout.write(orjson.dumps(reply).decode() + "\n")
            stdout.flush()
    except Exception as exc:  # noqa: BLE001 - a hook must never break the client's turn
        note_internal_error(argv[0] if argv else "", f"{type(exc).__name__}: {exc}")
    return 0


STDERR_SHOWN = frozenset({"gemini"})
"""Clients that show a hook's stderr to the user when its stdout is empty (Gemini CLI's hook
runner shows ``stdout.trim() || stderr.trim()``): orf's own errors go to a log file there."""


def note_internal_error(client: str, message: str) -> None:
    """Report an error of orf itself without costing the user anything.

    Claude Code and Codex keep a hook's stderr out of the conversation when it exits 0; for
    the clients in ``STDERR_SHOWN`` the line is appended to ``<cache>/hook/errors.log``.
    """
    line = f"orf hook: ignored internal error: {message}"
    if client not in STDERR_SHOWN:
        print(line, file=sys.stderr)
        return
    with contextlib.suppress(OSError):
        log = cache_dir() / "hook" / "errors.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        if log.is_file() and log.stat().st_size > _MAX_LOG_BYTES:
            os.replace(log, log.with_suffix(".log.1"))  # one old file kept, no growth
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line}\n")
