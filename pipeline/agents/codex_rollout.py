"""Did a Codex tool call fail? Read from the session's rollout, for the PostToolUse hook.

Codex's PostToolUse payload carries no exit code: for ``Bash`` its ``tool_response`` is the
command's truncated output as a plain string (``ExecCommandToolOutput::post_tool_use_response``
in ``codex-rs/core/src/tools/context.rs``), and ``apply_patch`` likewise. The payload's
``transcript_path`` is the rollout, where Codex records the call's end by its ``call_id`` (the
payload's ``tool_use_id``): ``exec_command_end`` with ``exit_code``, ``patch_apply_end`` with
``success``, or a ``*_output`` record whose JSON metadata or text holds the exit code. Only the
end of the file is read: the call has just ended. Standard library and orjson only (hook path).
"""

from __future__ import annotations

import os
import re
from typing import Any

import orjson

TAIL_BYTES = 1 << 20
"""How much of the rollout's end is read: the records of the call that just ended."""

_EXIT_LINE = re.compile(r"(?im)^\W*(?:process exited with code|exit code:?)\s*(-?\d+)")


def call_failed(transcript_path: Any, call_id: Any) -> bool | None:
    """True when the rollout shows call ``call_id`` failed, False when it succeeded, else None.

    None when the rollout is missing, unreadable, or has no end record for the call yet.
    """
    if not isinstance(transcript_path, str) or not transcript_path:
        return None
    if not isinstance(call_id, str) or not call_id:
        return None
    try:
        with open(transcript_path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - TAIL_BYTES))
            tail = fh.read()
    except OSError:
        return None
    needle = call_id.encode()
    for line in reversed(tail.splitlines()):
        if needle not in line:
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue  # the first line of the tail is cut; a line may be half written
        status = _record_status(record, call_id)
        if status is not None:
            return status
    return None


def _record_status(record: Any, call_id: str) -> bool | None:
    payload = record.get("payload") if isinstance(record, dict) else None
    if not isinstance(payload, dict) or payload.get("call_id") != call_id:
        return None
    kind = payload.get("type")
    if kind == "exec_command_end" and isinstance(payload.get("exit_code"), int):
        return bool(payload["exit_code"] != 0)
    if kind == "patch_apply_end" and isinstance(payload.get("success"), bool):
        return not payload["success"]
    if kind in ("function_call_output", "custom_tool_call_output"):
        code = _output_exit_code(payload.get("output"))
        return None if code is None else code != 0
    return None


def _output_exit_code(output: Any) -> int | None:
    """The exit code an output record holds: JSON ``metadata.exit_code``, or an exit line."""
    if isinstance(output, str) and output.lstrip().startswith("{"):
        try:
            output = orjson.loads(output)
        except orjson.JSONDecodeError:
            pass
    if isinstance(output, dict):
        meta = output.get("metadata")
        if isinstance(meta, dict) and isinstance(meta.get("exit_code"), int):
            return int(meta["exit_code"])
        output = output.get("output")
    if isinstance(output, str):
        match = _EXIT_LINE.search(output)
        return int(match.group(1)) if match else None
    return None
