"""Redact a whole log file into a copy of the same format (used by ``orf redact``)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .redact import redact, redact_value


def _dump(obj: Any, pretty: bool) -> str:
    if pretty:
        return json.dumps(obj, ensure_ascii=False, indent=2)
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _redact_json_line(line: str, counts: Counter[str]) -> str:
    body = line.rstrip("\r\n")
    ending = line[len(body):]
    if not body.strip():
        return line
    try:
        obj = json.loads(body)
    except ValueError:
        # A cut or garbled record is still redacted as text, so nothing leaks through it.
        return redact(body, counts) + ending
    found: Counter[str] = Counter()
    new = redact_value(obj, found)
    if not found:
        return line  # untouched lines keep their exact bytes
    counts.update(found)
    return _dump(new, pretty=False) + ending


def redact_file(path: Path, counts: Counter[str] | None = None) -> Iterator[str]:
    """Yield the redacted copy of ``path`` in pieces, keeping its format.

    A file that parses as one JSON document is rewritten with every string value redacted
    (indented when the original spanned several lines). JSON Lines are redacted record by
    record; records that do not parse, and any other text, are redacted as text. Plain text is
    redacted as a whole, not line by line, so a multi-line private key is caught.

    Args:
        path: The log to copy.
        counts: When given, incremented per placeholder, keyed by kind.

    Yields:
        Chunks of the redacted copy, in order.
    """
    tally: Counter[str] = Counter() if counts is None else counts
    text = path.read_bytes().decode("utf-8", "replace")
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            doc = json.loads(text)
        except ValueError:
            doc = None
        else:
            ending = "\n" if text.endswith("\n") else ""
            yield _dump(redact_value(doc, tally), pretty="\n" in text.strip()) + ending
            return
        if stripped[:1] == "{":
            for line in text.splitlines(keepends=True):
                yield _redact_json_line(line, tally)
            return
    yield redact(text, tally)
