"""Exact repeats: the identical action again, with nothing in between that could change it."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..config import DetectSettings
from ..model import Finding, Trajectory
from .actions import infos_for
from .base import register
from .build import make_finding
from .info import Info, is_action, shape
from .repeats import chains
from .rerun_unchanged import split_at_other_means

# The harness refused an edit until the file is read: the read that follows answers the
# refusal, so the same edit sent after it is the retry that works, not a repeat in vain.
_READ_FIRST = re.compile(r"has not been read yet|must read .{0,40}before|Read it first")
READ_SCAN = 50
"""Steps after a read-first refusal searched for the read that answers it (linear bound)."""


def split_after_reads(traj: Trajectory, infos: list[Info], chain: list[int]) -> list[list[int]]:
    """``chain`` cut where a read-first refusal was answered by reading the file."""
    parts: list[list[int]] = [[chain[0]]]
    for a, b in zip(chain, chain[1:], strict=False):
        path = infos[a].paths[:1]
        answered = path and _READ_FIRST.search(traj.steps[a].output[:300]) and any(
            infos[k].cls == "read" and infos[k].paths[:1] == path and not infos[k].failed
            for k in range(a + 1, min(b, a + READ_SCAN)))
        if answered:
            parts.append([b])
        else:
            parts[-1].append(b)
    return [p for p in parts if len(p) > 1]


@register("exact_repeat")
def detect(traj: Trajectory, settings: DetectSettings) -> Iterator[Finding]:
    """Identical action key repeated with an unchanged state token (and the same output)."""
    infos = infos_for(traj)
    steps = traj.steps
    found = chains(infos, is_action, lambda i, info: steps[i].action_key or info.canon)
    parts = (part for c in found for part in split_at_other_means(traj, infos, c))
    for chain in (part for c in parts for part in split_after_reads(traj, infos, c)):
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
