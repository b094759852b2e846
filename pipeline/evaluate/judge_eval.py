"""Run the judge over labelled sessions and measure it (the library behind ``orf eval judge``).

Each session under PATHS (or each log a path label names) is parsed, matched to its label,
judged with the backend, and counted per format and overall; each outcome signal is also
scored on its own (how often it fired, how often it pointed to the true outcome), which is how
the reliabilities in ``pipeline.stages.judge_signals.SIGNALS`` are measured.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from ..analyze import iter_trajectories
from ..config import Settings
from ..detect import detect_all
from ..model import Finding, ParseIssue, Trajectory, Verdict
from ..stages.analysis import judge_session
from ..stages.judge_signals import RANK
from .labels import LabelIndex
from .metrics import ROW_HEAD, Tally, confusion_lines, fmt, tally_row

if TYPE_CHECKING:
    from ..llm.backend import Backend


@dataclass(frozen=True, slots=True)
class JudgedRun:
    """One labelled session and the judge's verdict on it."""

    session_id: str
    format: str
    path: str
    truth: str
    verdict: Verdict


@dataclass
class SignalScore:
    """How one signal did: sessions it fired on, and how often it pointed to the truth."""

    fired: int = 0
    agreed: int = 0
    decided: int = 0
    decided_right: int = 0


@dataclass
class Evaluation:
    """The figures of one backend over one label set."""

    backend: str
    runs: list[JudgedRun] = field(default_factory=list)
    overall: Tally = field(default_factory=Tally)
    formats: dict[str, Tally] = field(default_factory=dict)
    signals: dict[str, SignalScore] = field(default_factory=dict)

    def add(self, run: JudgedRun) -> None:
        """Count one judged session."""
        self.runs.append(run)
        self.overall.add(run.truth, run.verdict.outcome)
        self.formats.setdefault(run.format, Tally()).add(run.truth, run.verdict.outcome)
        for sig in run.verdict.signals:
            score = self.signals.setdefault(str(sig["name"]), SignalScore())
            score.fired += 1
            score.agreed += sig["outcome"] == run.truth
        if run.verdict.signal is not None:
            score = self.signals.setdefault(run.verdict.signal, SignalScore())
            score.decided += 1
            score.decided_right += run.verdict.outcome == run.truth

    def as_dict(self) -> dict[str, Any]:
        """Everything, for ``--json``."""
        return {
            "backend": self.backend,
            "overall": self.overall.as_dict(),
            "formats": {k: t.as_dict() for k, t in sorted(self.formats.items())},
            "signals": {k: vars(s) for k, s in sorted(self.signals.items(),
                                                       key=lambda kv: RANK.get(kv[0], 99))},
            "runs": [{"session_id": r.session_id, "format": r.format, "path": r.path,
                      "truth": r.truth, "outcome": r.verdict.outcome,
                      "decided_by": r.verdict.decided_by, "signal": r.verdict.signal,
                      "reason": r.verdict.reason} for r in self.runs],
        }


class LazyFindings(Sequence[Finding]):
    """A run's findings, detected on first use.

    Only a model's judging prompt reads them (their wasted steps); the heuristic judge never
    does, so an offline evaluation skips detection entirely, as it did before the backends
    shared one judge call.
    """

    def __init__(self, traj: Trajectory, settings: Settings) -> None:
        self.traj, self.settings = traj, settings
        self._found: list[Finding] | None = None

    def _all(self) -> list[Finding]:
        if self._found is None:
            self._found = detect_all(self.traj, self.settings.detect)
        return self._found

    @overload
    def __getitem__(self, index: int) -> Finding: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Finding]: ...

    def __getitem__(self, index: int | slice) -> Finding | Sequence[Finding]:
        return self._all()[index]

    def __len__(self) -> int:
        return len(self._all())

    def __iter__(self) -> Iterator[Finding]:
        return iter(self._all())


def evaluate(paths: Iterable[Path], index: LabelIndex, backend: Backend, settings: Settings,
             issues: list[ParseIssue]) -> Evaluation:
    """Judge every labelled session under ``paths`` with ``backend``.

    Args:
        paths: Log files or folders (sessions without a label are skipped).
        index: The labels.
        backend: The judge's backend (``heuristic`` calls no model).
        settings: Run settings (parse limits, detector thresholds).
        issues: Parse problems are appended here.

    Returns:
        The evaluation; ``index.unused()`` lists the labels no session matched.
    """
    out = Evaluation(backend.decided_by)
    for traj in iter_trajectories(paths, settings, issues):
        label = index.match(traj)
        if label is None:
            continue
        verdict = judge_session(traj, LazyFindings(traj, settings), backend, settings)
        out.add(JudgedRun(traj.id, traj.source.format, traj.source.path, label.outcome,
                          verdict))
    return out


def report_lines(ev: Evaluation, *, verbose: bool = False) -> list[str]:
    """The printed report: figures per format and overall, confusion table, signals."""
    lines = [f"judge: {ev.backend}", ROW_HEAD]
    lines += [tally_row(name, t) for name, t in sorted(ev.formats.items())]
    lines.append(tally_row("overall", ev.overall))
    lines.append("")
    lines += confusion_lines([*sorted(ev.formats.items()), ("overall", ev.overall)])
    if ev.signals:
        lines.append("")
        lines.append(f"{'signal':<20} {'fired':>5} {'agrees':>6} {'decided':>7} {'right':>5}")
        for name, s in sorted(ev.signals.items(), key=lambda kv: RANK.get(kv[0], 99)):
            lines.append(f"{name:<20} {s.fired:>5} {s.agreed:>6} {s.decided:>7} "
                         f"{s.decided_right:>5}")
    if verbose:
        lines.append("")
        for r in ev.runs:
            mark = "ok" if r.verdict.outcome == r.truth else (
                "--" if r.verdict.outcome == "unknown" else "XX")
            lines.append(f"{mark} {r.truth:<7} {r.verdict.outcome:<7} {r.session_id[:48]:<48} "
                         f"{r.verdict.reason[:100]}")
    return lines


def agreement_line(a: Evaluation, b: Evaluation) -> str:
    """How often two backends gave the same verdict on the same sessions."""
    theirs = {r.session_id: r.verdict.outcome for r in b.runs}
    both = [r for r in a.runs if r.session_id in theirs]
    same = sum(1 for r in both if theirs[r.session_id] == r.verdict.outcome)
    rate = fmt(same / len(both)) if both else "-"
    return f"{a.backend} vs {b.backend}: same verdict on {same}/{len(both)} sessions ({rate})"


__all__ = ["Evaluation", "JudgedRun", "SignalScore", "agreement_line", "evaluate",
           "report_lines"]
