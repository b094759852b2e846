"""Run a rule only where it can start: at the words its matches begin with.

A context rule such as ``(password|token|key...)[:=] value`` can only match where one of its
keywords starts. ``finditer`` over a 60 KB file view tries every position in C but still costs
more than finding the few keyword occurrences with ``str.find`` and trying the regex there.
``anchored`` gives exactly what ``pattern.finditer(source)`` gives, provided every match of
``pattern`` starts at one of ``starts``: matches are tried left to right and the next search
resumes after the previous match, as ``finditer`` does (no pattern here matches empty, and
lookbehinds see the text before ``pos``).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator


def occurrences(low: str, words: Iterable[str]) -> list[int]:
    """Sorted start offsets of every occurrence of each of ``words`` in ``low``."""
    found: set[int] = set()
    for w in words:
        i = low.find(w)
        while i >= 0:
            found.add(i)
            i = low.find(w, i + 1)
    return sorted(found)


def anchored(pattern: re.Pattern[str], source: str, starts: list[int]) -> Iterator[re.Match[str]]:
    """The matches ``pattern.finditer(source)`` would yield, tried only at ``starts``."""
    end = 0
    for a in starts:
        if a < end:
            continue
        m = pattern.match(source, a)
        if m is not None:
            yield m
            end = m.end()


def search_from(pattern: re.Pattern[str], source: str, starts: list[int],
                pos: int) -> re.Match[str] | None:
    """``pattern.search(source, pos)``, tried only at ``starts`` (sorted)."""
    for i in range(bisect_left(starts, pos), len(starts)):
        m = pattern.match(source, starts[i])
        if m is not None:
            return m
    return None
