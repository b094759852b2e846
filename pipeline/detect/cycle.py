"""Cycles: a block of 2..5 actions repeated (A,B,A,B / A,B,C,A,B,C) with the same results."""

from __future__ import annotations

from collections.abc import Iterator

from ..config import DetectSettings
from ..model import Finding, Trajectory
from .actions import infos_for
from .base import register
from .build import make_finding
from .info import Info, is_action, shape
from .repeats import OUTPUT_CHECKED


def _key(info: Info) -> tuple[str, str | None]:
    # Observing actions must also see the same output: a changed output is progress.
    return (info.canon, info.out_fp if info.cls in OUTPUT_CHECKED else None)


def _primitive(block: list[int]) -> bool:
    p = len(block)
    if len(set(block)) < 2:
        return False
    return not any(p % d == 0 and block == block[:d] * (p // d) for d in range(1, p))


@register("cycle")
def detect(traj: Trajectory, settings: DetectSettings) -> Iterator[Finding]:
    """Periodic runs in the sequence of actions, shortest period first, one pass per period."""
    infos = infos_for(traj)
    ids: dict[tuple[str, str | None], int] = {}
    seq: list[int] = []
    where: list[int] = []
    for i, info in enumerate(infos):
        if is_action(info):
            seq.append(ids.setdefault(_key(info), len(ids)))
            where.append(i)
    claimed = bytearray(len(seq))
    found: list[tuple[int, int, int]] = []
    lo_p = max(2, settings.cycle_min_period)
    for p in range(lo_p, settings.cycle_max_period + 1):
        run_start = None
        for j in range(p, len(seq) + 1):
            match = j < len(seq) and seq[j] == seq[j - p]
            if match and run_start is None:
                run_start = j
            if not match and run_start is not None:
                start, end = run_start - p, j - 1
                run_start = None
                reps = (end - start + 1) // p
                if reps < settings.cycle_min_repeats or not _primitive(seq[start:start + p]):
                    continue
                if any(claimed[start:end + 1]):
                    continue
                claimed[start:end + 1] = b"\x01" * (end - start + 1)
                found.append((start, end, p))
    found.sort()
    for start, end, p in found:
        idxs = [where[k] for k in range(start, end + 1)]
        wasted = idxs[p:]
        period = [infos[where[k]] for k in range(start, start + p)]
        labels = " -> ".join(x.label[:40] for x in period)
        yield make_finding(
            "cycle", traj, infos, idxs, wasted, settings,
            shape={"period": p, "actions": [shape(x) for x in period]},
            summary=f"cycle of {p} actions repeated {(end - start + 1) / p:.1f}x: {labels}",
            confidence=0.9,
        )
