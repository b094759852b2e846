"""Failed-edit retries: an edit of a file fails again with no successful change to it between.

A first failed edit is an ordinary mistake; each further failed attempt at the same place of
the file, while the file stays as it was, is the agent guessing at its text instead of reading
it. The same change tried at several places in a row (one per function) is a batch, not a retry.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..config import DetectSettings
from ..model import Finding, Trajectory
from .actions import infos_for
from .base import register
from .build import make_finding
from .info import Info, path_ext
from .refusals import refused
from .shell_edits import patch_tool

_WORDS = re.compile(r"[A-Za-z_]\w*")

OPEN_TARGETS = 8
"""Places of one file with failed edits tracked at once (bounded: the scan stays linear)."""


def target(info: Info) -> frozenset[str] | None:
    """The words of the text an edit meant to replace (None for a whole-file write)."""
    return frozenset(_WORDS.findall(info.edit_old)) if info.edit_old is not None else None


def same_target(a: frozenset[str] | None, b: frozenset[str] | None) -> bool:
    """Two edits of one file aim at the same place (a retry), not at two places (a batch).

    A retry drops or adds lines of the text it looks for, or changes a word; the same
    change made at the next function (`ValidateSessionID` then `ValidateToolUseID`) swaps
    names in both directions. A whole-file write aims at the whole file.
    """
    if a is None or b is None:
        return True
    return min(len(a - b), len(b - a)) <= 1


@register("edit_retry")
def detect(traj: Trajectory, settings: DetectSettings) -> Iterator[Finding]:
    """Chains of failed edits of one place of a file with an unchanged version of the file."""
    infos = infos_for(traj)
    open_chains: dict[str, list[tuple[tuple[object, ...], frozenset[str] | None, list[int]]]]
    open_chains = {}
    done: list[tuple[str, list[int]]] = []
    for i, info in enumerate(infos):
        if info.cls not in ("edit", "write") or not info.paths or (
                info.shell and not patch_tool(info)) or refused(
                traj.steps[i]):
            continue  # a refused edit failed on the user's word, not on its text
        path = info.paths[0]
        current = open_chains.get(path, [])
        if not info.failed:
            done.extend((path, c[2]) for c in current if len(c[2]) > 1)
            open_chains.pop(path, None)
            continue
        words = target(info)
        for k, (state, before, chain) in enumerate(current):
            if same_target(words, before):
                if state == info.state:
                    chain.append(i)
                    current[k] = (info.state, words, chain)
                    break
                if len(chain) > 1:
                    done.append((path, chain))
                current[k] = (info.state, words, [i])
                break
        else:
            current.append((info.state, words, [i]))
            if len(current) > OPEN_TARGETS:
                old = current.pop(0)[2]
                if len(old) > 1:
                    done.append((path, old))
        open_chains[path] = current
    done.extend((p, c[2]) for p, cs in open_chains.items() for c in cs if len(c[2]) > 1)
    done.sort(key=lambda pc: pc[1][0])
    for path, chain in done:
        sig = traj.steps[chain[-1]].error_signature
        yield make_finding(
            "edit_retry", traj, infos, chain, chain[1:], settings,
            shape={"ext": path_ext(path), "error": sig},
            summary=f"{path}: edit failed {len(chain)}x with the file unchanged between",
            confidence=0.8, error_signature=sig,
        )
