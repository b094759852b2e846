"""Edit-revert: a file returns to an earlier content, or an edit is undone, with no net progress.

An edit replaced back after a check failed in between naming what it changed is not one: the
failure showed the edit was wrong and undoing it is the fix. One trap is one finding: a
contiguous batch of edit/revert pairs on one file (seven edits made then undone one by one) is
reported once, with every edit and revert of the batch in it.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..config import DetectSettings
from ..model import Finding, Trajectory
from .actions import infos_for
from .base import register
from .build import make_finding
from .info import Info, path_ext

CHECKS = frozenset({"test", "build", "lint", "run"})
"""Classes whose failure tells the agent that an edit broke something."""

HISTORY = 32
"""Edits and contents remembered per file (bounded so the scan stays linear)."""


@dataclass(slots=True)
class _Batch:
    """Edit/revert pairs on one file with no other edit of it between them."""

    path: str
    steps: set[int] = field(default_factory=set)
    hows: list[str] = field(default_factory=list)
    pairs: int = 0
    last: int = -1


_WORD = re.compile(r"[A-Za-z_]\w{2,}")

LOOKBACK = 4
"""Failed checks between an edit and its inverse read for the edited words (bounded)."""


def _named_by_failure(traj: Trajectory, infos: list[Info], failures: list[int], j: int,
                      i: int) -> bool:
    """A check failed between edit ``j`` and its inverse ``i`` naming what ``j`` changed.

    The build said the edit broke something (`undefined: regexp` after the `regexp` import
    was removed): putting it back is the fix, not work undone for nothing.
    """
    a, b = infos[j].edit_old or "", infos[j].edit_new or ""
    changed = set(_WORD.findall(a)) ^ set(_WORD.findall(b))
    if not changed:
        return False
    lo, hi = bisect_right(failures, j), bisect_left(failures, i)
    for k in failures[max(lo, hi - LOOKBACK):hi]:
        said = set(_WORD.findall(traj.steps[k].output))
        if changed & said:
            return True
    return False


@register("edit_revert")
def detect(traj: Trajectory, settings: DetectSettings) -> Iterator[Finding]:
    """Inverse string replacements, writes back to an earlier content, undo and git restore."""
    infos = infos_for(traj)
    contents: dict[str, deque[tuple[str, int]]] = {}
    replaces: dict[str, deque[tuple[str, str, int]]] = {}
    edits: dict[str, deque[int]] = {}
    touched: dict[str, list[int]] = {}
    open_batch: dict[str, _Batch] = {}
    done: list[_Batch] = []

    def add(steps: list[int], path: str, how: str) -> None:
        batch = open_batch.get(path)
        first = min(steps)
        seen = touched.get(path, [])
        # Contiguous: the pair starts inside the batch, or no other edit of the file since.
        if batch is not None and not (
            first <= batch.last
            or bisect_left(seen, first) == bisect_right(seen, batch.last)
        ):
            done.append(batch)
            batch = None
        if batch is None:
            batch = open_batch[path] = _Batch(path)
        batch.steps.update(steps)
        batch.pairs += 1
        batch.last = max(batch.last, max(steps))
        if how not in batch.hows:
            batch.hows.append(how)

    failures = [i for i, info in enumerate(infos) if info.failed and info.cls in CHECKS]
    for i, info in enumerate(infos):
        if info.failed or info.cls == "none":
            continue
        if info.cls in ("write", "edit") and info.paths:
            path = info.paths[0]
            past = edits.setdefault(path, deque(maxlen=HISTORY))
            if info.undo and past:
                add([past[-1], i], path, "undo of the last edit")
            elif info.edit_old is not None and info.edit_new is not None:
                recent = replaces.setdefault(path, deque(maxlen=HISTORY))
                for old, new, j in reversed(recent):
                    if old == info.edit_new and new == info.edit_old and old != new:
                        if not _named_by_failure(traj, infos, failures, j, i):
                            add([j, i], path, "edit replaced back")
                        recent.remove((old, new, j))
                        break
                else:
                    recent.append((info.edit_old, info.edit_new, i))
            elif info.content is not None:
                seen = contents.setdefault(path, deque(maxlen=HISTORY))
                earlier = [j for h, j in list(seen)[:-1] if h == info.content]
                if earlier:
                    add([j for j in past if j > earlier[-1]] + [i], path,
                        "file rewritten to an earlier content")
                seen.append((info.content, i))
            past.append(i)
            touched.setdefault(path, []).append(i)
        for target in info.git_restore:
            paths = list(edits) if target == "*" else [target]
            for path in paths:
                undone = list(edits.get(path, ()))
                if undone:
                    add([*undone, i], path, "edits discarded by git")
                    edits[path].clear()
    done.extend(open_batch.values())
    done.sort(key=lambda b: min(b.steps))
    for batch in done:
        steps = sorted(batch.steps)
        how = " / ".join(batch.hows)
        pairs = f"{batch.pairs} edit/revert pairs, " if batch.pairs > 1 else ""
        yield make_finding(
            "edit_revert", traj, infos, steps, steps, settings,
            shape={"how": batch.hows[0], "ext": path_ext(batch.path)},
            summary=f"{batch.path}: {how} ({pairs}{len(steps) - 1} edit(s) undone, "
            "no net change)",
            confidence=0.7 if all("git" in h for h in batch.hows) else 0.8, resolve=False,
        )
