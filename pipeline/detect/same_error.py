"""A reproduction re-created and run again that fails with the same error as before.

Agents debugging a reproduction often write its files again (``cat > t.py <<EOF ... && python
t.py``, a script that writes the app's files then runs it) after each failing run. The labels'
rule book settles when that is waste: a retry that answers the error it got is not wasted
(the new version fixes the import, the path, the missing setup call the last run showed, and
fails differently or passes); a retry that gets the same error again is. So the step is
wasted when it writes again the script it runs, runs the same thing, and every error line it
prints is one the last run printed too (numbers and addresses masked). The identical command
sent again is ``exact_repeat``'s.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..config import DetectSettings
from ..model import Finding, Step, Trajectory
from .actions import infos_for
from .base import register
from .build import make_finding
from .classify_shell import run_tail
from .info import Info, is_action, shape
from .masks import masked

_ERROR_LINE = re.compile(r"Error\b|Exception\b|\berror:|No such file|not found|cannot |"
                         r"Cannot |FAILED|failed", re.M)


def error_lines(output: str) -> frozenset[str]:
    """The masked lines of an output that report an error."""
    return frozenset(masked(ln) for ln in output.splitlines() if _ERROR_LINE.search(ln))


_CODE = re.compile(r"[\w.-]+\.(?:py|js|mjs|ts|sh|rb|go|rs|java|php|pl)\b")


def _recreates(info: Info, tail: str) -> bool:
    """The step writes again the script its run executes (``cat > t.py ... && python t.py``).

    A document written again (an ``index.rst`` with other links) is another input to the
    run, an experiment; a patch script writes the code under test, not the reproduction.
    """
    run = {m.rsplit("/", 1)[-1] for m in _CODE.findall(tail)}
    return any(p.rsplit("/", 1)[-1] in run for p in info.writes)


@register("same_error_retry")
def detect(traj: Trajectory, settings: DetectSettings) -> Iterator[Finding]:
    """Re-created reproductions that fail again with the errors of their last run."""
    infos = infos_for(traj)
    last: dict[str, int] = {}
    chains: dict[int, list[int]] = {}
    for i, (step, info) in enumerate(zip(traj.steps, infos, strict=True)):
        tail = run_tail(info) if step.kind == "tool" and is_action(info) else ""
        if not tail:
            continue
        j = last.get(tail)
        # Cheap tests first; the error lines are read only for a failing re-creation.
        if j is not None and info.failed and not _passed(traj.steps[j]) and (
                info.command != infos[j].command) and _recreates(info, tail) and (
                errors := error_lines(step.output)) and errors == error_lines(
                    traj.steps[j].output):
            chain = chains.pop(j, [j])
            chain.append(i)
            chains[i] = chain
        last[tail] = i
    for chain in sorted(chains.values(), key=lambda c: c[0]):
        first = infos[chain[0]]
        sig = traj.steps[chain[-1]].error_signature
        yield make_finding(
            "rerun_unchanged", traj, infos, chain, chain[1:], settings,
            shape={"cls": first.cls, "action": shape(first), "error": sig, "recreated": True},
            summary=f"`{run_tail(first)[:80]}` re-created and run {len(chain) - 1}x more, "
            "failing with the same error each time",
            confidence=0.75, error_signature=sig,
        )


def _passed(step: Step) -> bool:
    return not step.is_error and (step.exit_code or 0) == 0
