"""Re-reading: the same file, or a mostly covered range of it, read again with no write between.

Paging through a file (adjacent or barely overlapping ranges) is not a re-read: a read is
flagged only when at least ``reread_overlap`` of its range was already shown since the file's
last change (or the last context compaction).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ..config import DetectSettings
from ..model import Finding, Trajectory
from .actions import infos_for
from .base import register
from .build import make_finding
from .info import END, Info, path_ext, shown_range

MAX_INTERVALS = 256
"""Ranges remembered per file version; older ones are dropped to keep the scan linear."""


@dataclass(slots=True)
class _FileReads:
    state: tuple[object, ...]
    intervals: list[tuple[int, int]] = field(default_factory=list)
    full_seen: bool = False
    by_range: dict[tuple[int, int], str | None] = field(default_factory=dict)
    steps: list[int] = field(default_factory=list)
    wasted: list[int] = field(default_factory=list)


def _covered(intervals: list[tuple[int, int]], lo: int, hi: int) -> int:
    total = 0
    for a, b in intervals:
        x, y = max(a, lo), min(b, hi)
        if x <= y:
            total += y - x + 1
    return total


def _add(intervals: list[tuple[int, int]], lo: int, hi: int) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for a, b in sorted([*intervals, (lo, hi)]):
        if merged and a <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged[-MAX_INTERVALS:]


def _is_reread(rec: _FileReads, info: Info, overlap: float) -> bool:
    lo, hi = info.rng or (1, END)
    if (lo, hi) in rec.by_range:
        before = rec.by_range[(lo, hi)]
        # Same range, different text: the file changed outside the log's view.
        return before is None or info.out_fp is None or before == info.out_fp
    if (lo, hi) == (1, END):
        return rec.full_seen
    size = hi - lo + 1
    return _covered(rec.intervals, lo, hi) >= overlap * size


@register("reread")
def detect(traj: Trajectory, settings: DetectSettings) -> Iterator[Finding]:
    """Reads of a file whose range was already (mostly) shown and the file did not change."""
    infos = infos_for(traj)
    overlap = settings.reread_overlap
    files: dict[str, _FileReads] = {}
    done: list[tuple[str, _FileReads]] = []
    for i, info in enumerate(infos):
        if info.cls != "read" or not info.paths or info.failed:
            continue
        if info.filtered or info.withheld:
            # It showed an unknown part (or nothing) of the file: it neither covers a range
            # nor re-reads one; identical filtered reads are exact repeats.
            continue
        path = info.paths[0]
        rec = files.get(path)
        if rec is None or rec.state != info.state:
            if rec is not None and rec.wasted:
                done.append((path, rec))
            rec = files[path] = _FileReads(state=info.state)
        lo, hi = info.rng or (1, END)
        if _is_reread(rec, info, overlap):
            rec.wasted.append(i)
        rec.steps.append(i)
        rec.by_range[(lo, hi)] = info.out_fp
        if len(rec.by_range) > MAX_INTERVALS:
            rec.by_range.pop(next(iter(rec.by_range)))
        if (lo, hi) == (1, END) or shown_range(info) == (1, END):
            # A range that reached the file's end from its first line showed the whole file.
            rec.full_seen = True
            if info.clipped:
                # A clipped whole-file view showed only its head: it does not cover ranges.
                continue
        # A clipped ranged view (Codex keeps the head and tail of a long output) covers its head.
        rec.intervals = _add(rec.intervals, *shown_range(info))
    done.extend((p, r) for p, r in files.items() if r.wasted)
    done.sort(key=lambda pr: pr[1].steps[0])
    for path, rec in done:
        first_wasted = rec.wasted[0]
        anchors = [s for s in rec.steps if s < first_wasted][-2:]
        steps = anchors + rec.wasted
        yield make_finding(
            "reread", traj, infos, steps, rec.wasted, settings,
            shape={"ext": path_ext(path)},
            summary=f"{path or '.'} re-read {len(rec.wasted)}x with no change to it in between",
            confidence=0.85, resolve=False,
        )
