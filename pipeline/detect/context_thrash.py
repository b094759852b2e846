"""Context thrash: repeated compaction/condensation in a short span of steps."""

from __future__ import annotations

from collections.abc import Iterator

from ..config import DetectSettings
from ..model import Finding, Trajectory
from .actions import infos_for
from .base import register
from .build import make_finding


@register("context_thrash")
def detect(traj: Trajectory, settings: DetectSettings) -> Iterator[Finding]:
    """Clusters of ``thrash_compactions`` compactions within ``thrash_window`` steps.

    Adjacent compaction steps (a boundary marker followed by its summary) are one event.
    """
    infos = infos_for(traj)
    events: list[list[int]] = []
    for i, s in enumerate(traj.steps):
        if s.kind != "compaction":
            continue
        if events and events[-1][-1] == i - 1:
            events[-1].append(i)
        else:
            events.append([i])
    if len(events) < settings.thrash_compactions:
        return
    clusters: list[list[list[int]]] = [[events[0]]]
    for ev in events[1:]:
        if ev[0] - clusters[-1][-1][-1] <= settings.thrash_window:
            clusters[-1].append(ev)
        else:
            clusters.append([ev])
    for cl in clusters:
        if len(cl) < settings.thrash_compactions:
            continue
        steps = [i for ev in cl for i in ev]
        wasted = [i for ev in cl[1:] for i in ev]
        yield make_finding(
            "context_thrash", traj, infos, steps, wasted, settings,
            shape={},
            summary=f"context compacted {len(cl)}x within {steps[-1] - steps[0] + 1} steps",
            confidence=0.8, resolve=False,
        )
