"""Tolerant readers of one log field: a wrong type gives None or an empty value, not a crash.

Logs hold lists where strings were expected, floats where counts were, JSON inside strings;
adapters read every field they keep through these, so one odd field loses that field only.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import orjson

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def as_str(value: Any) -> str | None:
    """``value`` when it is a string, else None (for ids, names and timestamps)."""
    return value if type(value) is str else None


def as_key(value: Any) -> str | None:
    """An id usable as a dict key: strings as they are, ints as text, anything else None.

    A list or an object where a call id is expected must neither crash a lookup
    (unhashable) nor pair unrelated records through a shared ``str()`` of it.
    """
    if type(value) is str:
        return value
    if type(value) is int:
        return str(value)
    return None


def content_text(content: Any) -> str:
    """Flatten message content (a string, or a list of text/content blocks) to text.

    Args:
        content: ``str``, a list of ``{"type": "text", "text": ...}``-like blocks, or a dict.

    Returns:
        The text parts joined by newlines; non-text blocks are skipped.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                text = block.get("text")
                if isinstance(text, str):
                    parts.append(text)
                elif isinstance(block.get("content"), (str, list)):
                    parts.append(content_text(block.get("content")))
        return "\n".join(p for p in parts if p)
    if isinstance(content, dict):
        text = content.get("text")
        if isinstance(text, str):
            return text
        return content_text(content.get("content"))
    return str(content)


def obj(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty dict (for tolerant field access)."""
    return value if isinstance(value, dict) else {}


def parse_args(value: Any) -> dict[str, Any]:
    """Tool arguments as a dict: JSON strings are decoded, other values wrapped.

    Args:
        value: The arguments as logged (dict, JSON string, plain string, None).

    Returns:
        A dict; a non-JSON string becomes ``{"input": value}``.
    """
    if isinstance(value, dict):
        return value
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        s = value.lstrip()
        if s.startswith(("{", "[")):
            try:
                decoded = orjson.loads(value)
            except orjson.JSONDecodeError:
                return {"input": value}
            return decoded if isinstance(decoded, dict) else {"input": decoded}
        return {"input": value}
    return {"input": value}


def as_int(value: Any) -> int | None:
    """``value`` as an int when it is one, a whole float or a numeric string, else None.

    Bools, NaN, infinities and fractions are not counts or exit codes: they give None, so
    callers can tell "not logged" from zero. So do values outside the signed 64-bit range
    (orjson reads ``1e20`` as a float), which JSON output and SQLite could not store.
    """
    # type() is exact, so bools (an int subclass) fall through to the None below.
    if type(value) is int:
        out = value
    elif isinstance(value, bool):
        return None
    elif isinstance(value, int):
        out = int(value)
    elif isinstance(value, float):
        if not value.is_integer():
            return None
        out = int(value)
    elif isinstance(value, str):
        s = value.strip()
        if not s.lstrip("-").isdigit() or len(s) > 20:
            return None
        out = int(s)
    else:
        return None
    return out if _INT64_MIN <= out <= _INT64_MAX else None


def as_count(value: Any) -> int:
    """A token count to add up: ``as_int(value)``, with anything unreadable counting 0."""
    # Plain ints are nearly every count (several per record): skip the call to as_int.
    if type(value) is int and _INT64_MIN <= value <= _INT64_MAX:
        return value
    return as_int(value) or 0


def epoch_to_iso(value: Any) -> str | None:
    """ISO-8601 (UTC) for an epoch in seconds, or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return datetime.fromtimestamp(float(value), tz=timezone.utc).isoformat()
    except (OverflowError, OSError, ValueError):
        return None
