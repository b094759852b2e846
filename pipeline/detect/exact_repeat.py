"""Exact repeats: the identical action again, with nothing in between that could change it."""

from __future__ import annotations

from collections.abc import Iterator

from ..config import DetectSettings
from ..model import Finding, Trajectory
from .actions import infos_for, is_action, shape
from .base import register
from .build import make_finding
from .repeats import chains


@register("exact_repeat")
def detect(traj: Trajectory, settings: DetectSettings) -> Iterator[Finding]:
    """Identical action key repeated with an unchanged state token (and the same output)."""
    infos = infos_for(traj)
    steps = traj.steps
    for chain in chains(infos, is_action, lambda i, info: steps[i].action_key or info.canon):
        first = infos[chain[0]]
        errs = [steps[i].error_signature for i in chain if steps[i].is_error]
        sig = errs[-1] if errs and len(errs) == len(chain) else None
        what = "failed" if sig else "ran"
        yield make_finding(
            "exact_repeat", traj, infos, chain, chain[1:], settings,
            shape={"action": shape(first), "cls": first.cls, "error": sig},
            summary=f"{first.label[:90]} {what} {len(chain)}x with nothing changed between"
            + (f" ({sig[:60]})" if sig else ""),
            confidence=0.95, error_signature=sig,
        )
