"""Causes the log contradicts: a claim in a draft's prose that a step shows false.

The verifier's other rules check what a draft cites; these read what it *says* about a cause
and look for a step that refutes it. Each entry of ``CONTRADICTIONS`` fires only on its own
wording, so a draft that does not make the claim is never judged by it. Add an entry when blind
readers find a wrong cause that recurs and a step can refute it; measure it on every recording
(``tests/data/learn_replies*.json``) before keeping it: one false refusal costs a good lesson.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..detect.outputs import body_of

if TYPE_CHECKING:
    from .episodes import SessionEpisodes
    from .verify import Proposal

MIN_CHANGED_LINE = 8
"""An expected line shorter than this (``}``, ``return``) says nothing about which text it is."""
_EXPECTED_LINES = re.compile(r"Failed to find expected lines in [^\n]*:\n(.+)", re.DOTALL)
_NOT_READ_REFUSAL = re.compile(r"has not been read yet|Read it first before writing")


@dataclass(frozen=True)
class Contradiction:
    """A cause a draft may claim, and how the log can refute it."""

    name: str
    claim: re.Pattern[str]
    """The wording that makes the claim (searched in the title, trap and insight)."""
    refute: Callable[[Proposal, SessionEpisodes], str | None]
    """Why a step shows the claim false, or None."""


def _stale_patch(p: Proposal, s: SessionEpisodes) -> str | None:
    """A patch said to have failed on stale text: the log must not show that text in the file.

    ``apply_patch`` prints the lines it could not find. When a read after the failure (and
    before the fix) shows the first of them, the text was there: the hunk failed on where it
    matched (its order, a missing context line), and "stale" would send an agent the wrong way.
    """
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


def _read_before_refusal(p: Proposal, s: SessionEpisodes) -> str | None:
    """An edit said to be refused because its file was never read: no read of it may come first.

    Claude Code refuses an edit with "File has not been read yet" also when the file was read
    earlier in the same context (its read state was reset, or the file changed since): "read it
    first" then names the wrong cause, and the lesson is to read it again. A read before a
    compaction does not refute it: after one, the harness forgets what was read.
    """
    steps, infos = s.traj.steps, s.infos
    for k in p.evidence.trap_steps:
        if not (0 <= k < len(steps) and k < len(infos)) or not _NOT_READ_REFUSAL.search(
                steps[k].output or ""):
            continue
        targets = set(infos[k].paths or infos[k].writes)
        for j in range(k - 1, -1, -1):
            if steps[j].kind == "compaction":
                break  # reads before a compaction do not count: the refusal is right
            info = infos[j]
            read = targets.intersection(info.paths) if info.cls == "read" and not info.failed \
                else set()
            if read:
                path = min(read)
                return (f"the draft says {path} was not read before #{k}, but #{j} read it: the "
                        "harness refused the edit though the file had been read (its read "
                        "state was lost or the file changed since)")
    return None


CONTRADICTIONS = (
    Contradiction("stale patch", re.compile(
        r"\bstale\b|no longer (?:in|match|exist|there|present)|(?:was|were) (?:missing|gone) "
        r"from the file|out of date", re.IGNORECASE), _stale_patch),
    Contradiction("file never read", re.compile(
        r"\bwithout (?:first )?reading\b|\b(?:not|never|n't) (?:been |yet |first )*read\b|"
        r"\bunread\b", re.IGNORECASE), _read_before_refusal),
)
"""Each claimed cause a step can refute, in the order they are tried."""


def cause_not_contradicted(p: Proposal, s: SessionEpisodes) -> str | None:
    """The first cause the draft claims that a step of the log shows false, or None."""
    prose = " ".join((p.draft.title, p.draft.trap, p.draft.insight))
    for c in CONTRADICTIONS:
        if c.claim.search(prose) and (why := c.refute(p, s)) is not None:
            return why
    return None
