"""Chains of one action repeated with an unchanged state token (shared by three families)."""

from __future__ import annotations

from collections.abc import Callable, Hashable

from .info import Info

# Classes whose output tells whether the world changed; for mutating classes a repeat that
# fails (the edit already applied) is still the same wasted action.
OUTPUT_CHECKED = frozenset(
    {"read", "search", "list", "inspect", "run", "test", "lint", "web", "other"}
)


def chains(
    infos: list[Info],
    accept: Callable[[Info], bool],
    key: Callable[[int, Info], Hashable],
) -> list[list[int]]:
    """Group steps whose key repeats with nothing in between that could change the outcome.

    A step joins the open chain of its key when its state token equals the token right after
    the chain's last step and, for observing actions, its masked output is the same (a
    different output means something outside the log changed, as when polling).

    Args:
        infos: The trajectory's analysis.
        accept: Which steps take part.
        key: Comparison key of a step.

    Returns:
        Chains of two or more step indices, in order of their first step.
    """
    # Per key only the last step (an int) is kept; a list exists only for a chain that grew:
    # most keys never repeat, and a list per key is what made large sessions slow.
    last: dict[Hashable, int] = {}
    growing: dict[Hashable, list[int]] = {}
    done: list[list[int]] = []
    for i, info in enumerate(infos):
        if not accept(info):
            continue
        k = key(i, info)
        j = last.get(k)
        if j is not None and infos[j].state_after == info.state and _same_output(infos[j], info):
            chain = growing.get(k)
            if chain is None:
                chain = growing[k] = [j]
            chain.append(i)
        else:
            chain = growing.pop(k, None)
            if chain is not None:
                done.append(chain)
        last[k] = i
    done.extend(growing.values())
    done.sort(key=lambda c: c[0])
    return done


def _same_output(a: Info, b: Info) -> bool:
    if b.cls not in OUTPUT_CHECKED or (a.out_fp is None and b.out_fp is None):
        return True
    if (a.out_fp is None) != (b.out_fp is None) and b.cls in _EMPTY_TELLS:
        # An empty listing then one that shows names (`ls` then `ls -a` of a folder holding
        # only dot-files): the second answered what the first left open.
        return False
    return a.out_fp is None or b.out_fp is None or a.out_fp == b.out_fp


_EMPTY_TELLS = frozenset({"list", "search"})
"""Classes whose empty output is an answer ("nothing there") rather than a missing log."""
