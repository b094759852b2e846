"""Reading a log's records: whole-file documents, and skipping one of an unexpected shape.

Also the sniffers' JSON-vs-JSONL test (``opens_object``) and the file's ``SourceInfo``.
The byte-level readers (``iter_jsonl``, ``load_json``) are in ``jsonio.py``; these build on them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import ParseFailure
from ..model import SourceInfo
from .base import ParseContext
from .jsonio import ReadStats, load_json

# What turning one record into steps raises when a field has an unexpected type: a list
# where a string was expected (unhashable in a set lookup, no ``.strip``), a missing key...
# OverflowError covers numbers too large for a float or a timestamp, RecursionError one
# record nested deeper than a recursive helper can follow.
RECORD_ERRORS: tuple[type[Exception], ...] = (
    TypeError, AttributeError, ValueError, KeyError, IndexError, OverflowError, RecursionError,
)
"""Exceptions ``skip_record`` turns into a warning for one record."""
_REASON_MAX_CHARS = 160


def skip_record(ctx: ParseContext, path: Path | str, line: int | None, what: str,
                exc: BaseException) -> None:
    """Report a record that could not be turned into steps; the caller skips it.

    Adapters wrap their per-record loop body in ``try: ... except RECORD_ERRORS as exc:
    skip_record(...)``: a try block costs nothing on CPython 3.11+ (next to nothing on 3.10)
    when nothing is raised, so the hot path keeps its speed, and one wrongly typed field loses
    one record instead of the whole session. ``ORF_RAISE_ERRORS`` re-raises, for debugging.

    Args:
        ctx: Parse context receiving the warning.
        path: The file the record is in.
        line: Its 1-based line (None for whole-file JSON documents).
        what: The record, as a user would find it (``record``, ``messages[3]``).
        exc: What was raised while reading it.
    """
    if os.environ.get("ORF_RAISE_ERRORS"):
        raise exc
    reason = f"{type(exc).__name__}: {exc}"
    if len(reason) > _REASON_MAX_CHARS:
        reason = reason[:_REASON_MAX_CHARS] + "..."
    ctx.warn(path, line, f"{what} has an unexpected shape ({reason}); skipped")


def source_info(fmt: str, path: Path, stats: ReadStats) -> SourceInfo:
    """``SourceInfo`` for a file (or folder) read with ``stats``."""
    return SourceInfo(format=fmt, path=str(path), content_hash=stats.content_hash,
                      size=stats.size)


def opens_object(head: bytes) -> bool:
    """True when a file's first bytes start a JSON object that may be the whole file.

    A first line ending an object, followed by a line opening another, is JSON Lines: one
    document cannot go on past its closing brace. Saying so here spares the sniffers of
    whole-file formats their searches through the 64 KiB heads of every JSONL log.
    """
    s = head.lstrip()
    if s[:1] != b"{":
        return False
    nl = s.find(b"\n")
    if nl < 0:
        return True
    return not (s[max(0, nl - 8):nl].rstrip().endswith(b"}") and s[nl + 1:nl + 2] == b"{")


def load_document(path: Path, ctx: ParseContext, stats: ReadStats, list_key: str,
                  what: str) -> dict[str, Any]:
    """Load a whole-file JSON object that must hold a list under ``list_key``.

    Args:
        path: The file.
        ctx: Parse context (warnings of the reader).
        stats: Receives the size and content hash.
        list_key: The key whose list holds the steps (``trajectory``, ``messages``...).
        what: The format's name for the error message (``a SWE-agent trajectory``).

    Returns:
        The decoded object.

    Raises:
        ParseFailure: The file is unreadable JSON, or not such an object.
    """
    data = load_json(path, ctx, stats)
    if not isinstance(data, dict) or not isinstance(data.get(list_key), list):
        raise ParseFailure(f"{path}: not {what} (no '{list_key}' list)")
    return data
