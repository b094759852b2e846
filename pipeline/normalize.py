"""Canonical forms used to compare actions and errors across steps and sessions.

These functions are pure and cheap: they run once per step during ingest.
"""

from __future__ import annotations

import re
from typing import Any

from .hashing import canonical_json

# Argument keys that never change what an action does: ids, timestamps, progress and UI hints.
VOLATILE_KEYS = frozenset(
    {
        "id", "call_id", "tool_call_id", "tool_use_id", "timestamp", "ts", "created_at",
        "description", "thought", "is_background", "progress", "timeout", "timeout_ms",
        "yield_time_ms", "max_output_tokens", "security_risk", "summary", "explanation",
        "toolAction", "toolSummary", "WaitMsBeforeAsync", "SafeToAutoRun",
    }
)

_WS = re.compile(r"\s+")


def _strip_volatile(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_volatile(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [_strip_volatile(v) for v in value]
    if isinstance(value, str):
        return _WS.sub(" ", value).strip()
    return value


def action_key(tool: str | None, args: dict[str, Any] | None) -> str:
    """Canonical ``tool(args)`` string: sorted keys, volatile keys dropped, whitespace folded."""
    body = canonical_json(_strip_volatile(args or {})).decode("utf-8", "replace")
    return f"{tool or '?'}{body}"


_ERROR_LINE = re.compile(
    r"(?i)(error|exception|traceback|fatal|failed|failure|denied|not found|no such|cannot|"
    r"can't|unable|invalid|refused|timed out|timeout|undefined|missing|unexpected|panic)"
)
_TMP_PATH = re.compile(r"(/tmp|/var/folders|/private/var)/[^\s'\":]+")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b|\b[0-9a-f]{7,64}\b")
_QUOTED = re.compile(r"'[^'\n]{0,200}'|\"[^\"\n]{0,200}\"|`[^`\n]{0,200}`")
_NUM = re.compile(r"\d+(\.\d+)?")
_LINE_REF = re.compile(r"line \d+")


def error_line(text: str) -> str | None:
    """Pick the most telling error line of an observation (last matching line wins)."""
    if not text:
        return None
    best = None
    for line in text.splitlines()[-200:]:
        s = line.strip()
        if s and _ERROR_LINE.search(s) and not s.startswith(("File \"", "at ")):
            best = s
    return best[:300] if best else None


def error_signature(text: str) -> str | None:
    """Normalize the error line of ``text`` so the same failure matches across retries."""
    line = error_line(text)
    if line is None:
        return None
    s = _TMP_PATH.sub("<tmp>", line)
    s = _QUOTED.sub("<q>", s)
    s = _HEX.sub("<hex>", s)
    s = _LINE_REF.sub("line <n>", s)
    s = _NUM.sub("<n>", s)
    return _WS.sub(" ", s).strip()[:200]


def truncate(text: str, limit: int) -> str:
    """Keep head and tail of ``text`` within ``limit`` characters, marking the cut."""
    if limit <= 0 or len(text) <= limit:
        return text
    half = max(1, (limit - 40) // 2)
    cut = len(text) - 2 * half
    return f"{text[:half]}\n...[{cut} chars truncated]...\n{text[-half:]}"
