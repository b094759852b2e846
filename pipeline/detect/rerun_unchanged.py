"""Reruns without change: the same test/build/lint/script run again with no edit between."""

from __future__ import annotations

from collections.abc import Iterator

from ..config import DetectSettings
from ..model import Finding, Trajectory
from .actions import Info, infos_for, shape
from .base import register
from .build import make_finding
from .repeats import chains

RUN_CLASSES = frozenset({"test", "build", "lint", "run"})


def _accept(info: Info) -> bool:
    return info.cls in RUN_CLASSES


@register("rerun_unchanged")
def detect(traj: Trajectory, settings: DetectSettings) -> Iterator[Finding]:
    """Same canonical command of a running class, no file/env change since its last run."""
    infos = infos_for(traj)
    steps = traj.steps
    for chain in chains(infos, _accept, lambda i, info: info.canon):
        first = infos[chain[0]]
        errs = [steps[i].error_signature for i in chain if steps[i].is_error]
        sig = errs[-1] if errs else None
        outcome = "failing" if sig or first.failed else "passing" if first.cls == "test" else ""
        yield make_finding(
            "rerun_unchanged", traj, infos, chain, chain[1:], settings,
            shape={"cls": first.cls, "action": shape(first), "error": sig},
            summary=f"{first.cls} `{first.label[:80]}` rerun {len(chain) - 1}x with no change "
            f"in between{' (' + outcome + ')' if outcome else ''}",
            confidence=0.9, error_signature=sig,
        )
