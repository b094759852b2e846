"""Edit-revert: a file returns to an earlier content, or an edit is undone, with no net progress."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from ..config import DetectSettings
from ..model import Finding, Trajectory
from .actions import infos_for, path_ext
from .base import register
from .build import make_finding

HISTORY = 32
"""Edits and contents remembered per file (bounded so the scan stays linear)."""


@register("edit_revert")
def detect(traj: Trajectory, settings: DetectSettings) -> Iterator[Finding]:
    """Inverse string replacements, writes back to an earlier content, undo and git restore."""
    infos = infos_for(traj)
    contents: dict[str, deque[tuple[str, int]]] = {}
    replaces: dict[str, deque[tuple[str, str, int]]] = {}
    edits: dict[str, deque[int]] = {}
    for i, info in enumerate(infos):
        if info.failed or info.cls == "none":
            continue
        pairs: list[tuple[list[int], str, str]] = []
        if info.cls in ("write", "edit") and info.paths:
            path = info.paths[0]
            past = edits.setdefault(path, deque(maxlen=HISTORY))
            if info.undo and past:
                pairs.append(([past[-1], i], path, "undo of the last edit"))
            elif info.edit_old is not None and info.edit_new is not None:
                recent = replaces.setdefault(path, deque(maxlen=HISTORY))
                for old, new, j in reversed(recent):
                    if old == info.edit_new and new == info.edit_old and old != new:
                        pairs.append(([j, i], path, "edit replaced back"))
                        recent.remove((old, new, j))
                        break
                else:
                    recent.append((info.edit_old, info.edit_new, i))
            elif info.content is not None:
                seen = contents.setdefault(path, deque(maxlen=HISTORY))
                earlier = [j for h, j in list(seen)[:-1] if h == info.content]
                if earlier:
                    pairs.append(([j for j in past if j > earlier[-1]] + [i], path,
                                  "file rewritten to an earlier content"))
                seen.append((info.content, i))
            past.append(i)
        for target in info.git_restore:
            paths = list(edits) if target == "*" else [target]
            for path in paths:
                undone = list(edits.get(path, ()))
                if undone:
                    pairs.append(([*undone, i], path, "edits discarded by git"))
                    edits[path].clear()
        for steps, path, how in pairs:
            yield make_finding(
                "edit_revert", traj, infos, steps, steps, settings,
                shape={"how": how, "ext": path_ext(path)},
                summary=f"{path}: {how} ({len(steps) - 1} edit(s) undone, no net change)",
                confidence=0.7 if "git" in how else 0.8, resolve=False,
            )
