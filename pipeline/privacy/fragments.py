"""Where a session's known secrets, or fragments of them, occur in a text.

A fragment of ``FRAGMENT`` or more characters always holds one of the value's ``BLOCK``-character
blocks at offsets 0, 6, 12..., so each occurrence of a block is widened while it keeps matching
the value. Values shorter than ``FRAGMENT`` count only whole, between token boundaries.

Looking for each block with ``str.find`` costs a pass over the text per block: with 10 known
secrets a text cost 25x what its scan did, with 1,000 secrets 2,000x. With hyperscan (the
``fast`` extra) one pass finds every block of every value compiled so far. The values learned
since are looked for block by block until that has cost about what compiling all of them
would (``_CHARS_PER_VALUE``): never more than twice the better of the two choices, however the
secrets arrive. Without hyperscan every value is looked for block by block.
"""

from __future__ import annotations

from typing import Any

from .hints import hyperscan

FRAGMENT = 12
"""Shortest run of a known secret that is replaced wherever it appears."""
BLOCK = FRAGMENT // 2
_TOKEN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+/=.")
_CHARS_PER_VALUE = 25_000
"""Compiling one value into the database costs about what looking for one value block by block
in this many characters of text does (0.1 ms: measured with 8 to 5,000 values)."""

_HEX = [b"\\x%02x" % c for c in range(256)]
Span = tuple[str, int, int]
"""``(kind, start, end)`` of a known secret or fragment in a text."""


class FragmentSearch:
    """Finds known values and their fragments; values are only ever added."""

    def __init__(self) -> None:
        self._pending: list[tuple[str, str]] = []
        """``(value, kind)`` learned since the database was compiled."""
        self._compiled: list[tuple[str, str]] = []
        self._db: Any = None
        self._rows: list[tuple[str, int, str, int]] = []
        """Per database pattern: value, offset of its block (-1: the whole value), kind, and
        the block's length in UTF-8 bytes."""
        self._scratch: Any = None
        self._debt = 0
        """Characters searched for each pending value, summed, since the last compile."""

    def add(self, value: str, kind: str) -> None:
        """Look for ``value`` (a new one) from now on."""
        self._pending.append((value, kind))

    def spans(self, text: str) -> list[Span]:
        """Every occurrence in ``text`` of a value or of a fragment of one."""
        out: list[Span] = []
        if self._pending and hyperscan is not None:
            self._debt += len(self._pending) * len(text)
            if self._debt >= _CHARS_PER_VALUE * (len(self._compiled) + len(self._pending)):
                self._compile()
        if self._db is not None:
            self._scan(text, out)
        for value, kind in self._pending:
            _find(text, value, kind, out)
        return out

    def _compile(self) -> None:
        self._compiled += self._pending
        self._pending, self._debt = [], 0
        rows: list[tuple[str, int, str, int]] = []
        for value, kind in self._compiled:
            if len(value) < FRAGMENT:
                rows.append((value, -1, kind, len(_utf8(value))))
                continue
            for off in range(0, len(value) - BLOCK + 1, BLOCK):
                rows.append((value, off, kind, len(_utf8(value[off:off + BLOCK]))))
        # Each byte written as ``\xNN``: the literal API measures a pattern with ``strlen``,
        # which a secret holding a NUL would cut short.
        patterns = [b"".join(_HEX[c] for c in _utf8(v if off < 0 else v[off:off + BLOCK]))
                    for v, off, _, _ in rows]
        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        db.compile(expressions=patterns, ids=list(range(len(rows))), elements=len(rows),
                   flags=0)
        self._db, self._rows, self._scratch = db, rows, hyperscan.Scratch(db)

    def _scan(self, text: str, out: list[Span]) -> None:
        found: list[int] = []
        data = _utf8(text)
        self._db.scan(data, _collect, 0, found, self._scratch)
        if not found:  # most texts
            return
        pairs = range(0, len(found), 2)  # (pattern, end of its match)
        rows = [self._rows[found[k]] for k in pairs]
        starts = [found[k + 1] - self._rows[found[k]][3] for k in pairs]
        if not text.isascii():  # byte offsets to character offsets
            starts = _char_offsets(data, starts)
        seen: set[Span] = set()
        for (value, off, kind, _), i in zip(rows, starts, strict=True):
            if off < 0:
                if _whole(text, i, i + len(value)):
                    seen.add((kind, i, i + len(value)))
                continue
            a, b = _widen(text, i, value, off)
            if b - a >= FRAGMENT:
                seen.add((kind, a, b))
        out.extend(seen)


def _find(text: str, value: str, kind: str, out: list[Span]) -> None:
    """Every occurrence of ``value`` or of a fragment of it, block by block with ``str.find``."""
    size = len(value)
    if size < FRAGMENT:
        i = text.find(value)
        while i >= 0:
            j = i + size
            if _whole(text, i, j):
                out.append((kind, i, j))
            i = text.find(value, j)
        return
    for off in range(0, size - BLOCK + 1, BLOCK):
        block = value[off:off + BLOCK]
        i = text.find(block)
        while i >= 0:
            a, b = _widen(text, i, value, off)
            if b - a >= FRAGMENT:
                out.append((kind, a, b))
            i = text.find(block, max(b, i + 1) if b - a >= FRAGMENT else i + 1)


def _whole(text: str, i: int, j: int) -> bool:
    """True when ``text[i:j]`` is a whole token: no token character touches either end."""
    return (i == 0 or text[i - 1] not in _TOKEN) and (j == len(text) or text[j] not in _TOKEN)


def _widen(text: str, i: int, value: str, off: int) -> tuple[int, int]:
    """The span around ``text[i:i + BLOCK]`` (``value``'s block at ``off``) matching ``value``."""
    a, s = i, off
    while a > 0 and s > 0 and text[a - 1] == value[s - 1]:
        a -= 1
        s -= 1
    b, e, n, size = i + BLOCK, off + BLOCK, len(text), len(value)
    while b < n and e < size and text[b] == value[e]:
        b += 1
        e += 1
    return a, b


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _char_offsets(data: bytes, starts: list[int]) -> list[int]:
    """Character offsets of byte offsets of UTF-8 ``data``, each at a character's start."""
    chars: dict[int, int] = {}
    at_byte = at_char = 0
    for b in sorted(set(starts)):
        at_char += len(data[at_byte:b].decode("utf-8", "surrogatepass"))
        at_byte = b
        chars[b] = at_char
    return [chars[b] for b in starts]


def _collect(i: int, start: int, end: int, flags: int, found: list[int]) -> None:
    found += (i, end)
