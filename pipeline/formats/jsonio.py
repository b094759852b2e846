"""Tolerant JSON / JSON Lines readers shared by the adapters.

They never raise on bad content: each problem becomes a ``ParseIssue`` naming the file and
line, and the rest of the file is still read. They also hash the bytes as they go, so the
ledger gets a content hash without a second pass over the file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..errors import ParseFailure
from .base import ParseContext

# Magic numbers of compressed/binary files users point us at by mistake.
_MAGIC = {
    b"\x1f\x8b": "gzip-compressed",
    b"PK\x03\x04": "a zip archive",
    b"BZh": "bzip2-compressed",
    b"\xfd7zXZ": "xz-compressed",
    b"\x28\xb5\x2f\xfd": "zstd-compressed",
    b"SQLite format 3": "an SQLite database",
}
MAX_DEPTH = 200


@dataclass
class ReadStats:
    """What a reader saw: bytes, a running content hash, and lines."""

    size: int = 0
    """Bytes read."""
    lines: int = 0
    """Lines read (JSONL) or 1 (JSON)."""
    _hasher: Any = field(default_factory=lambda: hashlib.blake2b(digest_size=16))

    def update(self, data: bytes) -> None:
        """Account for ``data``."""
        self.size += len(data)
        self._hasher.update(data)

    @property
    def content_hash(self) -> str:
        """``b2:<hex>`` of the bytes read so far."""
        return "b2:" + str(self._hasher.hexdigest())


def check_head(path: Path, head: bytes) -> None:
    """Raise ``ParseFailure`` with a clear reason for empty, compressed or binary files."""
    if not head:
        raise ParseFailure(f"{path}: empty file")
    for magic, what in _MAGIC.items():
        if head.startswith(magic):
            raise ParseFailure(f"{path}: file is {what}; decompress it first")
    if b"\x00" in head[:8192]:
        raise ParseFailure(f"{path}: binary file (NUL bytes), not a text log")


def _depth_ok(value: Any, limit: int = MAX_DEPTH, raw: bytes | None = None) -> bool:
    # A document with fewer brackets than the limit cannot be nested that deep: this C-speed
    # count spares the walk for nearly every real record.
    if raw is not None and raw.count(b"{") + raw.count(b"[") <= limit:
        return True
    # Iterative so that a hostile document cannot blow the Python stack.
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return False
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node if isinstance(v, (dict, list)))
    return True


def _loads(data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        msg = str(exc)
        if "recursion" in msg.lower() or "depth limit" in msg.lower():
            raise ValueError(f"JSON nested deeper than orjson's limit ({msg})") from None
        if b"NaN" in data or b"Infinity" in data:
            # orjson rejects NaN/Infinity literals; retry with the stdlib which accepts them.
            import json

            try:
                return json.loads(data)
            except (ValueError, RecursionError):
                pass
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as uexc:
            raise ValueError(f"invalid UTF-8 at byte {uexc.start}") from None
        raise ValueError(f"invalid JSON: {msg}") from None


def iter_jsonl(
    path: Path, ctx: ParseContext, stats: ReadStats | None = None
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, value)`` for each valid JSON line of ``path``.

    Blank lines are skipped silently; bad lines are reported via ``ctx.warn`` and skipped.
    Raises ``ParseFailure`` only when the whole file is unusable (empty, binary, compressed).
    """
    stats = stats if stats is not None else ReadStats()
    with path.open("rb") as fh:
        head = fh.read(65536)
        check_head(path, head)
        fh.seek(0)
        lineno = 0
        for raw in fh:
            lineno += 1
            stats.update(raw)
            stats.lines = lineno
            if len(raw) > ctx.max_line_bytes:
                ctx.warn(path, lineno, f"line of {len(raw)} bytes exceeds the limit; skipped")
                continue
            line = raw.strip()
            if not line:
                continue
            try:
                value = _loads(line)
            except ValueError as exc:
                ctx.warn(path, lineno, str(exc))
                continue
            # Counting brackets is C-speed; only a line with enough of them can be too deep.
            if line.count(b"[") + line.count(b"{") > MAX_DEPTH and not _depth_ok(value):
                ctx.warn(path, lineno, f"JSON nested deeper than {MAX_DEPTH} levels; skipped")
                continue
            yield lineno, value


def load_json(path: Path, ctx: ParseContext, stats: ReadStats | None = None) -> Any:
    """Read a whole-file JSON document; raise ``ParseFailure`` with the reason if unusable."""
    stats = stats if stats is not None else ReadStats()
    data = path.read_bytes()
    stats.update(data)
    stats.lines = 1
    check_head(path, data[:65536])
    try:
        value = _loads(data)
    except ValueError as exc:
        line = None
        if "line" in str(exc):
            try:
                # orjson reports "line L column C"; keep the line for the user.
                line = int(str(exc).split("line ")[1].split()[0])
            except (IndexError, ValueError):
                line = None
        where = f"{path}:{line}" if line else str(path)
        raise ParseFailure(f"{where}: {exc}") from None
    if not _depth_ok(value, raw=data):
        raise ParseFailure(f"{path}: JSON nested deeper than {MAX_DEPTH} levels")
    return value
