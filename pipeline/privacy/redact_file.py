"""Redact a whole log file into a copy of the same format (used by ``orf redact``).

Two passes share one ``SessionSecrets``: the first learns every secret the file holds, the
second writes the copy, so a value recognised anywhere in the session is replaced everywhere
in it, before and after, whole or as a fragment.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .memory import SessionSecrets


def _dump(obj: Any, pretty: bool) -> str:
    if pretty:
        return json.dumps(obj, ensure_ascii=False, indent=2)
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _redact_json_line(line: str, counts: Counter[str], secrets: SessionSecrets) -> str:
    body = line.rstrip("\r\n")
    ending = line[len(body):]
    if not body.strip():
        return line
    try:
        obj = json.loads(body)
    except ValueError:
        # A cut or garbled record is still redacted as text, so nothing leaks through it.
        return secrets.redact(body, counts) + ending
    found: Counter[str] = Counter()
    new = secrets.redact_value(obj, found)
    if not found:
        return line  # untouched lines keep their exact bytes
    counts.update(found)
    return _dump(new, pretty=False) + ending


def _learn(text: str, secrets: SessionSecrets) -> None:
    """First pass: every secret of the file into ``secrets`` (from decoded JSON if it is)."""
    try:
        secrets.redact_value(json.loads(text))
    except ValueError:
        for line in text.splitlines():
            try:
                secrets.redact_value(json.loads(line))
            except ValueError:
                secrets.redact(line)
    secrets.redact(text)  # multi-line private keys, and anything JSON escapes hid


def redact_file(path: Path, counts: Counter[str] | None = None,
                secrets: SessionSecrets | None = None) -> Iterator[str]:
    """Yield the redacted copy of ``path`` in pieces, keeping its format.

    A file that parses as one JSON document is rewritten with every string value redacted
    (indented when the original spanned several lines). JSON Lines are redacted record by
    record; records that do not parse, and any other text, are redacted as text. Plain text is
    redacted as a whole, not line by line, so a multi-line private key is caught.

    Args:
        path: The log to copy.
        counts: When given, incremented per placeholder, keyed by kind.
        secrets: Memory shared with other files of the same session (its sub-agents); a
            fresh one by default.

    Yields:
        Chunks of the redacted copy, in order.
    """
    tally: Counter[str] = Counter() if counts is None else counts
    memory = SessionSecrets() if secrets is None else secrets
    text = path.read_bytes().decode("utf-8", "replace")
    _learn(text, memory)
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            doc = json.loads(text)
        except ValueError:
            doc = None
        else:
            ending = "\n" if text.endswith("\n") else ""
            yield _dump(memory.redact_value(doc, tally), pretty="\n" in text.strip()) + ending
            return
        if stripped[:1] == "{":
            for line in text.splitlines(keepends=True):
                yield _redact_json_line(line, tally, memory)
            return
    yield memory.redact(text, tally)
