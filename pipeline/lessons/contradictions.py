"""Causes the log contradicts: a claim in a draft's prose that a step shows false.

The verifier's other rules check what a draft cites; these read what it *says* about a cause
and look for a step that refutes it. Each check fires only on its own wording, so a draft
that does not make the claim is never judged by it. Add a check here when blind readers find
a wrong cause that recurs and a step can refute it; measure it on every recording
(``tests/data/learn_replies*.json``) before keeping it: one false refusal costs a good lesson.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..detect.outputs import body_of

if TYPE_CHECKING:
    from .episodes import SessionEpisodes
    from .verify import Proposal

MIN_CHANGED_LINE = 8
"""An expected line shorter than this (``}``, ``return``) says nothing about which text it is."""
_STALE_CLAIM = re.compile(r"\bstale\b|no longer (?:in|match|exist|there|present)|"
                          r"(?:was|were) (?:missing|gone) from the file|out of date",
                          re.IGNORECASE)
_EXPECTED_LINES = re.compile(r"Failed to find expected lines in [^\n]*:\n(.+)", re.DOTALL)


def cause_not_contradicted(p: Proposal, s: SessionEpisodes) -> str | None:
    """A patch said to have failed on stale text: the log must not show that text in the file.

    ``apply_patch`` prints the lines it could not find. When a read after the failure (and
    before the fix) shows the first of them, the text was there: the hunk failed on where it
    matched (its order, a missing context line), and "stale" would send an agent the wrong way.
    """
    draft = p.draft
    if not _STALE_CLAIM.search(" ".join((draft.title, draft.trap, draft.insight))):
        return None
    steps = s.traj.steps
    last_fix = max(p.evidence.fix_steps, default=len(steps) - 1)
    for k in p.evidence.trap_steps:
        m = _EXPECTED_LINES.search(steps[k].output or "") if 0 <= k < len(steps) else None
        first = next((ln.strip() for ln in (m.group(1).splitlines() if m else [])
                      if len(ln.strip()) >= MIN_CHANGED_LINE), "")
        if not first:
            continue
        for j in range(k + 1, min(last_fix, len(steps) - 1) + 1):
            later = steps[j]
            if later.kind == "tool" and "Failed to find expected lines" not in (
                    later.output or "") and first in body_of(later.output or ""):
                return (f"the draft calls the patch at #{k} stale, but #{j} shows its expected "
                        f"line `{first[:80]}` in the file: the hunk failed on where it matched, "
                        "not on old text")
    return None
