"""Stage 3 of ``orf mine``: which scanned sessions go on to judge and draft, and why not the rest.

A session goes on when it kept its trajectory (its waste passed the minimum), still has
findings after the reviewer's rejections, and was not judged and drafted before with these
very findings. The most wasteful go first; past ``max_sessions_per_run`` they wait for the
next run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..hashing import value_hash
from ..ledger import Ledger
from .scan import ScanResult, SessionScan

BELOW_MINIMUM = "fewer wasted steps than the minimum"
REJECTED = "every finding rejected in review"
ANALYZED_BEFORE = "judged and drafted before with these findings"
DEFERRED = "over the per-run maximum: next run"
NO_EPISODE = "no failed step and no correction to learn from"


@dataclass(frozen=True)
class PassedOver:
    """A session that does not go on, and why."""

    session_id: str
    path: str
    reason: str


@dataclass
class Selection:
    """The scan's totals and the sessions chosen for judge and draft."""

    read: int = 0
    """Sources read (new or changed), failed ones excluded."""
    failed: int = 0
    """Sources that could not be read at all."""
    findings: int = 0
    """Findings over every session read (before the reviewer's rejections)."""
    wasted_steps: int = 0
    issues: list[str] = field(default_factory=list)
    selected: list[SessionScan] = field(default_factory=list)
    """Most wasteful first; their findings are those left after the rejections."""
    deferred: list[SessionScan] = field(default_factory=list)
    passed_over: list[PassedOver] = field(default_factory=list)
    """Every other session, with its reason (the deferred ones included)."""
    scanned: list[ScanResult] = field(default_factory=list)
    """The scan with the rejected findings removed (what the ledger records of each source)."""

    @property
    def deferred_paths(self) -> set[str]:
        """Sources with a deferred session: not recorded, so the next run reads them again."""
        return {s.path for s in self.deferred}


def findings_fingerprint(scan: SessionScan) -> str:
    """What the ledger keeps of a session's findings to know it was analysed with them."""
    return value_hash([sorted((f.signature, f.wasted_steps) for f in scan.findings),
                       scan.episodes] if scan.episodes else
                      sorted((f.signature, f.wasted_steps) for f in scan.findings))


def select_sessions(scans: Sequence[ScanResult], ledger: Ledger, *, min_wasted: int,
                    max_sessions: int, episodes: bool = False) -> Selection:
    """Count the scan and choose the sessions for judge and draft.

    Args:
        scans: The scanned sources.
        ledger: Holds the reviewer's rejections and the sessions analysed before.
        min_wasted: Sessions with fewer wasted steps (after rejections) do not go on.
        max_sessions: At most this many go on; the rest are deferred.
        episodes: A session with an episode goes on whatever its findings (a model reads it).
    """
    out = Selection()
    candidates: list[SessionScan] = []
    for res in scans:
        out.issues.extend(str(i) for i in res.issues)
        if res.fatal and not res.sessions:
            out.failed += 1
            out.scanned.append(res)
            continue
        out.read += 1
        sessions: list[SessionScan] = []
        for sess in res.sessions:
            out.findings += len(sess.findings)
            out.wasted_steps += sess.wasted_steps
            reason, kept = _screen_session(sess, ledger, min_wasted, episodes)
            sessions.append(kept)
            if reason is None:
                candidates.append(kept)
            else:
                out.passed_over.append(PassedOver(sess.session_id, sess.path, reason))
        out.scanned.append(dataclasses.replace(res, sessions=sessions))
    candidates.sort(key=lambda s: (-s.wasted_steps, -s.episodes, s.session_id))
    out.selected = candidates[:max_sessions]
    out.deferred = candidates[max_sessions:]
    out.passed_over.extend(PassedOver(s.session_id, s.path, DEFERRED) for s in out.deferred)
    return out


def _screen_session(sess: SessionScan, ledger: Ledger, min_wasted: int,
                    episodes: bool = False) -> tuple[str | None, SessionScan]:
    """Why ``sess`` does not go on (None when it does), and it without rejected findings."""
    if sess.trajectory is None:
        return (NO_EPISODE if episodes else BELOW_MINIMUM), sess
    kept = [f for f in sess.findings if _not_rejected(ledger, f.signature, f.wasted_steps)]
    sess = dataclasses.replace(sess, findings=kept,
                               wasted_steps=sum(f.wasted_steps for f in kept))
    read = episodes and sess.episodes > 0
    if not kept and not read:
        return REJECTED, sess
    if sess.wasted_steps < min_wasted and not read:
        return BELOW_MINIMUM, sess
    # A source is re-read when any of its sessions changed or was deferred; its other
    # sessions (and every session after a run killed between writing and recording its
    # sources) are not sent to the model again.
    if ledger.analyzed_fingerprint(sess.session_id) == findings_fingerprint(sess):
        return ANALYZED_BEFORE, sess
    return None, sess


def _not_rejected(ledger: Ledger, signature: str, wasted: int) -> bool:
    """A rejected signature comes back only when the evidence grew."""
    limit = ledger.rejected_wasted(signature)
    return limit is None or wasted > limit
