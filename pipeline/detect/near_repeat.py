"""Near-repeats: semantically equal actions (same canonical form, different spelling)."""

from __future__ import annotations

from collections.abc import Iterator

from ..config import DetectSettings
from ..model import Finding, Trajectory
from .actions import infos_for
from .base import register
from .build import make_finding
from .info import is_action, place_key, shape
from .repeats import chains
from .rerun_unchanged import split_at_other_means


@register("near_repeat")
def detect(traj: Trajectory, settings: DetectSettings) -> Iterator[Finding]:
    """Actions whose canonical form (quotes, ./, roots, flag order, cd prefixes) repeats.

    Also the same listing at another spelling of its folder (same names shown). Findings
    sharing wasted steps with ``exact_repeat`` are joined by the merge step.
    """
    infos = infos_for(traj)
    found = chains(infos, is_action, lambda i, info: (info.cls, info.canon))
    for chain in (part for c in found for part in split_at_other_means(traj, infos, c)):
        first = infos[chain[0]]
        spellings = {traj.steps[i].action_key for i in chain}
        if len(spellings) < 2:
            continue
        yield make_finding(
            "near_repeat", traj, infos, chain, chain[1:], settings,
            shape={"cls": first.cls, "action": shape(first)},
            summary=f"{first.cls} `{first.label[:80]}` repeated {len(chain) - 1}x in other "
            "spellings with nothing changed between",
            confidence=0.85,
        )
    # The same listing at another spelling of its folder (one checkout mounted twice): the
    # names it shows are the same, so it told the agent nothing new.
    for chain in chains(infos, lambda info: place_key(info) is not None,
                        lambda i, info: place_key(info)):
        first = infos[chain[0]]
        if len({infos[i].canon for i in chain}) < 2:
            continue
        yield make_finding(
            "near_repeat", traj, infos, chain, chain[1:], settings,
            shape={"cls": first.cls, "action": shape(first), "place": True},
            summary=f"listing `{first.label[:80]}` repeated {len(chain) - 1}x at another "
            "spelling of the same folder",
            confidence=0.75,
        )
