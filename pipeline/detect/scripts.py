"""Inline scripts run again with a slightly different body (``python - <<'PY' ... PY``).

Agents without a scratch file (mini-swe-agent, Codex) re-run a reproduction or check as a new
here-document each time, editing a line or two: people call that the same reproduction,
although the body, and so the action key, differs. Two such scripts are one when they are long
enough to be a program rather than a one-liner experiment (``SCRIPT_LINES``) and share most of
their words (``SCRIPT_SIMILARITY``). A script that writes files (a patch script) repeats an
earlier one only when that one failed: after a patch that applied, the next patch script is
the next edit. The rerun is wasted when nothing changed since a run that passed: the check was
already answered.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..config import DetectSettings
from ..model import Finding, Step, Trajectory
from .actions import infos_for
from .base import register
from .build import make_finding
from .info import Info, shape

SCRIPT_LINES = 8
"""Lines a here-document script needs before its variants count as one script; shorter ones
(`print(inspect.getsource(A))` then `...(B)`) are experiments with different inputs."""

SCRIPT_SIMILARITY = 0.7
"""Word Jaccard of two script bodies from which they are the same script edited."""

SCRIPT_WINDOW = 8
"""Recent scripts compared (bounded: the pass stays linear)."""

_WORDS = re.compile(r"[A-Za-z_]\w*")
# What a check prints when it did not pass, even with exit status 0 (a script that catches
# its own exception and prints it).
_NOT_PASSED = re.compile(r"Traceback|\bError\b|\w+Error:|Exception|\bFAIL|\bfailed\b", re.I)


@dataclass(slots=True)
class Script:
    """One inline script run: its words and how it ended."""

    step: int
    words: frozenset[str]
    writes: bool
    failed: bool


def script_of(i: int, info: Info) -> Script | None:
    """The inline script a step runs, when it is long enough to compare (else None)."""
    body = info.extra.get("script_body")
    if not isinstance(body, str) or body.count("\n") + 1 < SCRIPT_LINES:
        return None
    # A script file written to be run (`cat > fix.py <<EOF`) writes what its body names.
    saved = info.extra.get("script_body_writes") or ("", ())
    writes = bool(info.extra.get("script_writes") or saved[1])
    return Script(i, frozenset(_WORDS.findall(body)), writes, info.failed)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def same_script(now: Script, recent: list[Script]) -> Script | None:
    """The latest recent script ``now`` is a variant of, or None."""
    for before in reversed(recent):
        if now.writes and before.writes and not before.failed:
            return None  # a patch applied since: this one is the next edit
        if _jaccard(now.words, before.words) >= SCRIPT_SIMILARITY and not (
                now.writes and not before.failed):
            return before
    return None


def passed(step: Step, info: Info) -> bool:
    """The run ended well and printed no failure (its answer is known)."""
    return not info.failed and not _NOT_PASSED.search(step.output)


@register("rerun_script")
def detect(traj: Trajectory, settings: DetectSettings) -> Iterator[Finding]:
    """A check script run again in another spelling after it passed, nothing changed since."""
    infos = infos_for(traj)
    recent: list[Script] = []
    chains: dict[int, list[int]] = {}
    for i, info in enumerate(infos):
        now = script_of(i, info)
        if now is None:
            continue
        before = same_script(now, recent)
        recent.append(now)
        del recent[:-SCRIPT_WINDOW]
        if before is None or now.writes:
            continue
        j = before.step
        if infos[j].state_after != info.state or not passed(traj.steps[j], infos[j]):
            continue
        chain = chains.pop(j, [j])
        chain.append(i)
        chains[i] = chain
    for chain in sorted(chains.values(), key=lambda c: c[0]):
        first = infos[chain[0]]
        yield make_finding(
            "rerun_unchanged", traj, infos, chain, chain[1:], settings,
            shape={"cls": first.cls, "action": shape(first), "script": True},
            summary=f"inline script `{first.label[:60]}` run again {len(chain) - 1}x in "
            "another spelling after it passed, with nothing changed between",
            confidence=0.75,
        )
