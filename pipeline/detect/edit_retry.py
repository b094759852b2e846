"""Failed-edit retries: an edit of a file fails again with no successful change to it between.

A first failed edit is an ordinary mistake; each further failed attempt on the same file,
while the file stays as it was, is the agent guessing at its text instead of reading it.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..config import DetectSettings
from ..model import Finding, Trajectory
from .actions import infos_for, path_ext
from .base import register
from .build import make_finding
from .refusals import refused


@register("edit_retry")
def detect(traj: Trajectory, settings: DetectSettings) -> Iterator[Finding]:
    """Chains of failed edits of one file with an unchanged version of that file."""
    infos = infos_for(traj)
    open_chains: dict[str, tuple[tuple[object, ...], list[int]]] = {}
    done: list[tuple[str, list[int]]] = []
    for i, info in enumerate(infos):
        if info.cls not in ("edit", "write") or not info.paths or info.shell or refused(
                traj.steps[i]):
            continue  # a refused edit failed on the user's word, not on its text
        path = info.paths[0]
        current = open_chains.get(path)
        if not info.failed:
            if current is not None and len(current[1]) > 1:
                done.append((path, current[1]))
            open_chains.pop(path, None)
            continue
        if current is not None and current[0] == info.state:
            current[1].append(i)
            continue
        if current is not None and len(current[1]) > 1:
            done.append((path, current[1]))
        open_chains[path] = (info.state, [i])
    done.extend((p, c[1]) for p, c in open_chains.items() if len(c[1]) > 1)
    done.sort(key=lambda pc: pc[1][0])
    for path, chain in done:
        sig = traj.steps[chain[-1]].error_signature
        yield make_finding(
            "edit_retry", traj, infos, chain, chain[1:], settings,
            shape={"ext": path_ext(path), "error": sig},
            summary=f"{path}: edit failed {len(chain)}x with the file unchanged between",
            confidence=0.8, error_signature=sig,
        )
