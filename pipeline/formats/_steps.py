"""Small helpers shared by the SWE-agent, mini-swe-agent, OpenHands and ATIF adapters.

They build ``Step`` objects the same way everywhere (action key, bounded output, error
signature) and normalize tool names, so detectors can compare steps across formats.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from .. import normalize
from ..model import RawRef, Step, StepKind
from .base import ParseContext

TASK_MAX_CHARS = 2000
TEXT_MAX_CHARS = 2000

# Lower-cased tool names seen in the supported logs, mapped to the normalized vocabulary
# (bash/read/edit/write/grep/ls/web/think/finish/other).
_TOOL_NAMES: dict[str, str] = {
    **dict.fromkeys(
        ("bash", "shell", "sh", "execute_bash", "terminal", "run", "cmd", "exec_command",
         "run_shell_command", "local_shell", "execute_command", "run_command", "command"),
        "bash",
    ),
    **dict.fromkeys(
        ("read", "read_file", "view", "open", "goto", "scroll_up", "scroll_down", "cat",
         "view_file", "readfile"),
        "read",
    ),
    **dict.fromkeys(
        ("edit", "str_replace", "apply_patch", "replace", "multiedit", "insert", "edit_file",
         "str_replace_editor", "file_editor", "patch", "undo_edit"),
        "edit",
    ),
    **dict.fromkeys(("write", "write_file", "create", "create_file", "writefile"), "write"),
    **dict.fromkeys(
        ("grep", "search", "search_file", "search_dir", "rg", "ripgrep", "grep_search",
         "search_code", "find"),
        "grep",
    ),
    **dict.fromkeys(
        ("ls", "list_dir", "list_directory", "find_file", "glob", "list_files", "tree"), "ls"
    ),
    **dict.fromkeys(
        ("web", "browse", "browse_interactive", "browser", "web_fetch", "webfetch",
         "web_search", "websearch", "google_web_search", "fetch", "navigate", "curl_url"),
        "web",
    ),
    **dict.fromkeys(("think", "reasoning", "thought"), "think"),
    **dict.fromkeys(("finish", "submit", "task_complete", "complete", "exit", "done"), "finish"),
}


def normalize_tool(name: str | None) -> str:
    """Map a log's tool name to ``bash/read/edit/write/grep/ls/web/think/finish/other``."""
    if not name:
        return "other"
    key = name.strip().lower()
    found = _TOOL_NAMES.get(key)
    if found is not None:
        return found
    if key.startswith("browser"):
        return "web"
    return "other"


def as_text(value: Any) -> str:
    """Text of a message content: a string, or a list of ``{type: text, text}`` parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for part in value:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                text = part.get("text")
                if isinstance(text, str):
                    parts.append(text)
        return "\n".join(parts)
    if isinstance(value, dict):
        text = value.get("text")
        return text if isinstance(text, str) else ""
    return ""


def obj(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty dict (for tolerant field access)."""
    return value if isinstance(value, dict) else {}


def as_int(value: Any) -> int | None:
    """``value`` as an int when it is one (or a numeric string); bools are not ints here."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        s = value.strip()
        if s.lstrip("-").isdigit():
            return int(s)
    return None


def bounded(text: str, limit: int = TEXT_MAX_CHARS) -> str:
    """``text`` truncated head+tail to ``limit`` characters."""
    return normalize.truncate(text, limit)


def epoch_to_iso(value: Any) -> str | None:
    """ISO-8601 (UTC) for an epoch in seconds, or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return datetime.fromtimestamp(float(value), tz=timezone.utc).isoformat()
    except (OverflowError, OSError, ValueError):
        return None


def tool_step(
    ctx: ParseContext,
    index: int,
    source_id: str,
    tool: str,
    args: dict[str, Any],
    output: str = "",
    *,
    exit_code: int | None = None,
    is_error: bool = False,
    tokens: int | None = None,
    timestamp: str | None = None,
    raw_ref: RawRef | None = None,
    text: str = "",
    extra: dict[str, Any] | None = None,
) -> Step:
    """A ``kind="tool"`` step with its action key, bounded output and error signature."""
    step = Step(
        index=index,
        source_id=source_id,
        kind="tool",
        tool=tool,
        args=args,
        action_key=normalize.action_key(tool, args),
        tokens=tokens,
        timestamp=timestamp,
        raw_ref=raw_ref,
        text=bounded(text) if text else "",
        extra=extra or {},
    )
    set_output(step, output, ctx, exit_code=exit_code, is_error=is_error)
    return step


def set_output(
    step: Step,
    output: str,
    ctx: ParseContext,
    *,
    exit_code: int | None = None,
    is_error: bool = False,
) -> None:
    """Attach an observation to ``step`` (bounded), with its exit code and error flag."""
    step.output = normalize.truncate(output, ctx.output_max_chars)
    step.output_len = len(output)
    step.exit_code = exit_code
    step.is_error = is_error
    # The signature is only worth computing for failures: it is the costly part.
    step.error_signature = normalize.error_signature(output) if is_error else None


def text_step(
    index: int,
    source_id: str,
    kind: StepKind,
    text: str,
    ctx: ParseContext,
    *,
    timestamp: str | None = None,
    raw_ref: RawRef | None = None,
    tokens: int | None = None,
    extra: dict[str, Any] | None = None,
) -> Step:
    """A message/user/system/compaction/error step whose body is ``text``."""
    return Step(
        index=index,
        source_id=source_id,
        kind=kind,
        output=normalize.truncate(text, ctx.output_max_chars),
        output_len=len(text),
        text=bounded(text) if kind in ("message", "user") else "",
        tokens=tokens,
        timestamp=timestamp,
        raw_ref=raw_ref,
        extra=extra or {},
    )


def most_common(values: list[str]) -> str | None:
    """The most frequent value (first seen wins ties), or None."""
    if not values:
        return None
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return max(counts, key=lambda k: counts[k])
