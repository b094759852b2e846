"""Retry with variation: different actions that keep hitting the same error signature."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..config import DetectSettings
from ..model import Finding, Trajectory
from ..normalize import error_signature
from .actions import infos_for
from .base import register
from .build import make_finding
from .info import Info, is_action

MAX_GAP = 30
"""Steps between two attempts beyond which a streak ends (the agent moved on)."""

_GROUP = {"edit": "edit", "write": "edit"}
_LOOK = frozenset({"read", "search", "list"})
_MASK = re.compile(r"\d+|'[^']*'|\"[^\"]*\"|`[^`]*`")


def error_of(signature: str | None, output: str) -> str | None:
    """The step's error signature, or its first output line masked when the log has none."""
    if signature and len(signature) > 12:
        return signature
    for line in output.splitlines():
        line = line.strip()
        if line and len(line) > 8:
            return _MASK.sub("<x>", line)[:160]
    return signature


def _target(info: Info) -> str:
    """What a step acts on: the file of an edit; the program and inline script of a run.

    Varying flags, quoting or spelling around one target is a retry; another program or
    another here-document script is another experiment.
    """
    if info.cls in _GROUP:
        return "|".join(info.paths or info.writes)
    heredoc = info.canon.partition(" <<")[2]
    return f"{info.program}|{hash(heredoc) if heredoc else ''}"


def _files(info: Info) -> frozenset[str]:
    return info.named_files()


def _same_files(a: Info, b: Info) -> bool:
    """False when both runs name files and the names differ (``run.py`` then ``check.py``)."""
    fa, fb = _files(a), _files(b)
    return not fa or not fb or fa == fb


@register("retry_variation")
def detect(traj: Trajectory, settings: DetectSettings) -> Iterator[Finding]:
    """Streaks of failing actions with one error signature and no state change in between.

    The agent tweaks flags or quoting around one target and the error stays. A real change (an edit,
    an install, an env change) ends every streak: a retry after it is not a loop.
    """
    infos = infos_for(traj)
    steps = traj.steps
    streaks: dict[str, list[int]] = {}
    epoch = 0
    found: list[list[int]] = []
    # A line that successful steps print too (an environment warning on every command) is
    # noise, not the error the agent keeps hitting.
    ambient: set[str | None] = set()
    # Step outputs were redacted whole when parsed: their error lines need no second scan.
    for i, info in enumerate(infos):
        if info.cls != "none" and not info.failed and steps[i].output:
            ambient.add(error_of(None, steps[i].output))
            ambient.add(error_signature(steps[i].output, redacted=True))
    ambient.discard(None)

    def flush(streak: list[int]) -> None:
        if len(streak) >= settings.retry_variation_min:
            if len({infos[j].canon for j in streak}) >= 2:
                found.append(streak)

    for i, info in enumerate(infos):
        if info.epoch != epoch:
            for streak in streaks.values():
                flush(streak)
            streaks = {}
            epoch = info.epoch
        if not is_action(info) or not info.failed or info.cls in _LOOK or (
                info.edit_old is not None):
            # Looking in other places (paths, patterns) and finding nothing is exploring; a
            # failed replacement is ``edit_retry``'s, which tells a retry from a batch.
            continue
        sig = error_of(steps[i].error_signature, steps[i].output)
        if not sig or sig in ambient or steps[i].error_signature in ambient:
            continue
        # Edits and commands failing with one generic line ("ERROR:") are different traps;
        # so are runs of other programs, targets or inline scripts (experiments).
        key = f"{_GROUP.get(info.cls, 'run')}|{sig}|{_target(info)}"
        current = streaks.get(key)
        if current is not None and i - current[-1] <= MAX_GAP and _same_files(
                infos[current[-1]], info):
            current.append(i)
        else:
            if current is not None:
                flush(current)
            streaks[key] = [i]
    for streak in streaks.values():
        flush(streak)
    found.sort(key=lambda s: s[0])
    for streak in found:
        sig = error_of(steps[streak[0]].error_signature, steps[streak[0]].output) or ""
        progs = sorted({infos[j].program for j in streak})
        yield make_finding(
            "retry_variation", traj, infos, streak, streak[1:], settings,
            shape={"error": sig, "programs": progs[:3]},
            summary=f"{len(streak)} variants of `{infos[streak[0]].label[:60]}` all failed "
            f"with {sig[:80]}",
            confidence=0.8, error_signature=sig,
        )
