"""Canonical forms used to compare actions and errors across steps and sessions.

These functions are pure and cheap: they run once per step during ingest.
"""

from __future__ import annotations

import re
from typing import Any

from .hashing import canonical_json
from .privacy import redact

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


def _strip_volatile(value: Any, depth: int = 0) -> Any:
    if depth > 32:
        # Arguments nested this deep are data, not options: compare them verbatim and never
        # recurse toward Python's stack limit on a hostile log.
        return canonical_json(value).decode("utf-8", "replace")
    # Exact type checks first (decoded JSON holds nothing else), and string values folded in
    # line rather than through a call each: this runs for every argument of every step.
    if type(value) is dict or isinstance(value, dict):
        out: dict[Any, Any] = {}
        fold = depth < 32  # a string one level down is still folded, not kept verbatim
        for k, v in value.items():
            if k in VOLATILE_KEYS:
                continue
            out[k] = (" ".join(v.split()) if fold and type(v) is str
                      else _strip_volatile(v, depth + 1))
        return out
    if isinstance(value, list):
        return [_strip_volatile(v, depth + 1) for v in value]
    if isinstance(value, str):
        return " ".join(value.split())
    return value


def action_key(tool: str | None, args: dict[str, Any] | None) -> str:
    """Canonical ``tool(args)`` string: sorted keys, volatile keys dropped, whitespace folded."""
    body = canonical_json(_strip_volatile(args or {})).decode("utf-8", "replace")
    return f"{tool or '?'}{body}"


_ERROR_WORDS = (
    r"error|exception|traceback|fatal|failed|failure|denied|not found|no such|cannot|"
    r"can't|unable|invalid|refused|timed out|timeout|undefined|missing|unexpected|panic"
)
# Searched once over the tail of the text, each hit widened to its line: scanning line by
# line (or with a ^...$ pattern) was the hottest spot of ingest.
# Matched against lowercased text: sre can then prefilter on the first characters of the
# alternatives, about 10x faster than re.I (kept as a fallback for length-changing case maps).
_ERROR_WORD = re.compile(_ERROR_WORDS)
_ERROR_WORD_I = re.compile(_ERROR_WORDS, re.I)
# Lines that name the error itself ("ImportError: ...", "error: ...", "E   ValueError"): they
# beat summary lines such as "1 error in 0.12s" or "FAILED tests/x.py".
_ERROR_HEAD = re.compile(
    r"^(?:E\s+)?(?:(?-i:[\w.]*(?:Error|Exception|Exit|Interrupt))\b|error(?:\[\w+\])?:|fatal:|"
    r"panic:|[\w./-]+:\d+:(?:\d+:)?\s*error)",
    re.I,
)
_SUMMARY = re.compile(r"^=*\s*\d+ (?:failed|passed|errors?)\b|^FAILED |^ERROR |^=+ ", re.I)
_TAIL_CHARS = 20_000

_TMP_PATH = re.compile(r"(/tmp|/var/folders|/private/var)/[^\s'\":()]+")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b|\b(?=[0-9]*[a-f])[0-9a-f]{7,64}\b")
_QUOTED = re.compile(r"'[^'\n]{0,200}'|\"[^\"\n]{0,200}\"|`[^`\n]{0,200}`")
_NUM = re.compile(r"\d+(\.\d+)?")
_LINE_REF = re.compile(r"line \d+")


def error_line(text: str) -> str | None:
    """Pick the most telling error line of an observation.

    A line naming the error (``KeyError: 'x'``, ``error: ...``) wins over a summary line
    (``1 failed in 0.1s``); among equals the last one wins, as tracebacks end with the cause.
    """
    if not text:
        return None
    tail = text[-_TAIL_CHARS:]
    low = tail.lower()
    pattern = _ERROR_WORD
    if len(low) != len(tail):
        low, pattern = tail, _ERROR_WORD_I
    best: str | None = None
    best_rank = -1
    pos = 0
    while True:
        match = pattern.search(low, pos)
        if match is None:
            break
        start = tail.rfind("\n", 0, match.start()) + 1
        end = tail.find("\n", match.end())
        end = len(tail) if end < 0 else end
        pos = end + 1
        line = tail[start:end].strip()
        if not line or line.startswith(('File "', "at ")):
            continue
        rank = 0 if _SUMMARY.match(line) else 2 if _ERROR_HEAD.match(line) else 1
        if rank >= best_rank:
            best, best_rank = line, rank
    return best[:300] if best else None


def error_signature(text: str, *, redacted: bool = False) -> str | None:
    """Normalize the error line of ``text`` so the same failure matches across retries.

    Args:
        text: The text to take the error line from.
        redacted: True when ``text`` was already redacted whole, as every Step string is
            at parse time: its line is not scanned again. False (raw text) redacts the line.

    Returns:
        The masked error line, or None when ``text`` has none.
    """
    line = error_line(text)
    if line is None:
        return None
    # Redacted before the masking: masking digits/hex would mangle a secret past recognition
    # (and a leak into prompts), and the same trap with a different token must keep the same
    # signature. Step texts were redacted whole before the line was cut from them.
    s = _TMP_PATH.sub("<tmp>", line if redacted else redact(line))
    s = _QUOTED.sub("<q>", s)
    s = _HEX.sub("<hex>", s)
    s = _LINE_REF.sub("line <n>", s)
    s = _NUM.sub("<n>", s)
    return _WS.sub(" ", s).strip()[:200]


HOME_DIR = re.compile(r"(?<![\w.~-])(?:/Users|/home)/[^\s/`'\"]+|(?<![\w.~-])/root(?=/|\b)")
HOME_PATH = re.compile(rf"{HOME_DIR.pattern}|[A-Z]:\\\\?Users\\\\")
"""A home folder of Unix or Windows: never in a playbook (quality screen, verifier)."""
"""A POSIX home folder (``/home/<user>``, ``/Users/<user>``, ``/root``)."""


def brief_command(command: str, limit: int = 160) -> str:
    """A command as quoted in a verdict reason: its first line, home folders as ``~``.

    The reason lands in EXP provenance, which is committed for review: a heredoc body or the
    user's name in ``/home/<name>/...`` tells a reviewer nothing.
    """
    first = command.strip().splitlines()[0] if command.strip() else ""
    return HOME_DIR.sub("~", first)[:limit]


def truncate(text: str, limit: int) -> str:
    """Keep head and tail of ``text`` within ``limit`` characters, marking the cut.

    Cuts move back to whitespace (within 64 characters) so a token is dropped whole rather
    than split: half a secret without its recognisable prefix would slip past redaction.
    """
    if limit <= 0 or len(text) <= limit:
        return text
    half = max(1, (limit - 40) // 2)
    head_end = half
    space = max(text.rfind(" ", half - 64, half), text.rfind("\n", half - 64, half))
    if space > 0:
        head_end = space
    tail_start = len(text) - half
    hits = [i for i in (text.find(" ", tail_start, tail_start + 64),
                        text.find("\n", tail_start, tail_start + 64)) if i >= 0]
    if hits:
        tail_start = min(hits) + 1
    cut = tail_start - head_end
    return f"{text[:head_end]}\n...[{cut} chars truncated]...\n{text[tail_start:]}"
