"""The one scan path of ``orf analyze`` and ``orf mine``: parse + detect, source by source.

``scan`` reads one source into its sessions (sub-agents are sessions of their own) with their
findings; ``scan_all`` runs it in a process pool. Everything crossing the process boundary is
picklable and small: counts and issues for every session, and (``orf mine``) the trajectory
itself only for sessions whose waste passes the minimum (judge and draft need their steps).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..config import DetectSettings, Settings
from ..model import Finding, ParseIssue, Trajectory
from ..run_events import Emit, Progress

if TYPE_CHECKING:
    from ..detect.annotate import Repeat
    from ..formats.discover import SessionSource


@dataclass
class SessionScan:
    """One (sub-)session after detection."""

    session_id: str
    path: str
    format: str
    findings: list[Finding]
    wasted_steps: int
    steps: int
    trajectory: Trajectory | None = None
    """Kept when ``wasted_steps`` passes the run's minimum (always with ``keep_all``)."""
    facts: dict[str, Any] | None = None
    """History row for ``orf trends`` (``history.session_facts``)."""
    repeats: list[Repeat] | None = None
    """Every step repeating an earlier action (``ScanOptions.repeats``), else None."""
    episodes: int = 0
    """Failures and corrections a reader can learn from (``ScanOptions.episodes``), else 0."""


@dataclass
class ScanResult:
    """One source after parse + detect."""

    path: str
    format: str
    sessions: list[SessionScan] = field(default_factory=list)
    issues: list[ParseIssue] = field(default_factory=list)
    """What could not be read (``str`` gives ``path:line: message``)."""
    fatal: bool = False
    """True when the source could not be read at all."""


def flatten(traj: Trajectory) -> list[Trajectory]:
    """``traj`` then its sub-agents, depth first: each is a session of its own."""
    out = [traj]
    for sub in traj.subagents:
        out.extend(flatten(sub))
    return out


@dataclass(frozen=True)
class ScanOptions:
    """How to read and what to keep of each session (small and picklable: it crosses the pool)."""

    output_max_chars: int = 4000
    max_line_bytes: int = 256_000_000
    detect: DetectSettings = field(default_factory=DetectSettings)
    min_wasted_steps: int = 1
    keep_all: bool = False
    """Keep every trajectory whole (``orf analyze``); else only those whose waste passes
    ``min_wasted_steps``, without their sub-agents (``orf mine``: judge and draft need them)."""
    repeats: bool = False
    """Also mark every step repeating an earlier action (the report layer shows them)."""
    facts: bool = True
    """Compute the ``orf trends`` history row of each session."""
    contain_errors: bool = True
    """A detector bug on one source becomes a fatal issue of that source instead of raising."""
    episodes: bool = False
    """Also keep every session with an episode (a failed step, a correction): a model reads
    them all, whatever the detector found."""
    parse_only: bool = False
    """Run no detector: every session without findings (``orf eval`` only needs the logs)."""

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> ScanOptions:
        """The options ``settings`` imply, with ``overrides`` (field names) applied."""
        values: dict[str, Any] = {
            "output_max_chars": settings.output_max_chars,
            "max_line_bytes": settings.max_line_bytes,
            "detect": settings.detect,
            "min_wasted_steps": settings.min_wasted_steps,
        }
        return cls(**{**values, **overrides})


def scan(src: SessionSource, options: ScanOptions) -> ScanResult:
    """Parse one source and run every detector over each of its sessions.

    Bad input never raises: it becomes ``issues`` (``fatal`` when the source could not be read
    at all); a detector bug does the same unless ``options.contain_errors`` is off.
    """
    from ..detect import detect_all
    from ..detect.annotate import annotate_repeats
    from ..formats.base import ParseContext
    from ..formats.discover import parse_source
    from ..history import session_facts
    from ..lessons.episodes import build_episodes

    path = str(src.path)
    result = ScanResult(path, src.format)
    ctx = ParseContext(output_max_chars=options.output_max_chars,
                       max_line_bytes=options.max_line_bytes)
    try:
        for traj in parse_source(src, ctx):
            for t in flatten(traj):
                findings = [] if options.parse_only else list(detect_all(t, options.detect))
                wasted = sum(f.wasted_steps for f in findings)
                episodes = len(build_episodes(t).episodes) if options.episodes else 0
                keep = t if options.keep_all or episodes or (
                    findings and wasted >= options.min_wasted_steps) else None
                if keep is not None and not options.keep_all:
                    keep.subagents = []  # each sub-agent is its own session here
                result.sessions.append(SessionScan(
                    t.id, path, src.format, findings, wasted, len(t.steps), keep,
                    session_facts(t, findings) if options.facts else None,
                    annotate_repeats(t, options.detect, findings) if options.repeats else None,
                    episodes))
    except Exception as exc:  # noqa: BLE001 - a detector bug on one file must not stop the run
        if os.environ.get("ORF_RAISE_ERRORS") or not options.contain_errors:
            raise
        result.issues.append(ParseIssue(path, None, f"{type(exc).__name__}: {exc}", fatal=True))
        result.fatal = True
    for issue in ctx.issues:
        result.issues.append(issue)
        result.fatal = result.fatal or issue.fatal
    return result


def scan_all(sources: Sequence[SessionSource], options: ScanOptions, jobs: int,
             emit: Emit) -> list[ScanResult]:
    """Scan ``sources`` in ``jobs`` worker processes; results in input order.

    A worker that crashes fails its own source only. Emits ``Progress("scanned", i, n)``.
    """
    results: list[ScanResult] = []
    jobs = max(1, min(jobs, len(sources)))
    if jobs == 1:
        for i, src in enumerate(sources, 1):
            results.append(scan(src, options))
            emit(Progress("scanned", i, len(sources)))
        return results
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_worker_init)
    try:
        futures = [pool.submit(scan, src, options) for src in sources]
        for i, (src, fut) in enumerate(zip(sources, futures, strict=True), 1):
            try:
                results.append(fut.result())
            except Exception as exc:  # noqa: BLE001 - a crashed worker fails one source only
                results.append(ScanResult(str(src.path), src.format, issues=[ParseIssue(
                    str(src.path), None, f"worker failed: {type(exc).__name__}: {exc}",
                    fatal=True)], fatal=True))
            emit(Progress("scanned", i, len(sources)))
    except BaseException:
        # Ctrl-C: stop now. Leaving the pool through `with` would wait for every queued scan.
        _stop_pool(pool)
        raise
    pool.shutdown(wait=True)
    return results


def _worker_init() -> None:
    # Ctrl-C reaches the whole process group: the parent stops the workers, so they ignore it
    # (no traceback per worker).
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel queued scans and end the workers at once (they hold nothing to save)."""
    pool.shutdown(wait=False, cancel_futures=True)
    procs = list((getattr(pool, "_processes", None) or {}).values())
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.join(timeout=1.0)
