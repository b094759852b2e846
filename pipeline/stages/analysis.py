"""Judge and draft sessions through any backend: by rule offline, else by the model's requests.

The callers never ask which kind of backend they hold: ``Backend.calls_model`` picks the row
of ``WAYS``. The offline row answers from the log's own signals (``judge.heuristic_verdict``)
and the findings' lessons (``heuristic_draft``); the model row builds requests and parses the
replies (``llm_run``). The backend only answers requests, so every row gets the run's
``Settings`` passed explicitly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..config import Settings
from ..llm.backend import Backend, Progress
from ..model import Finding, Trajectory, Verdict
from ..results import DraftResult, SessionResult
from .heuristic_draft import heuristic_drafts
from .judge import heuristic_verdict
from .llm_run import model_drafts, model_judge, model_sessions
from .view import StoreContext

Items = Sequence[tuple[Trajectory, list[Finding]]]
"""(trajectory, findings) pairs, one per session."""

JudgeOne = Callable[[Trajectory, Sequence[Finding], Backend, Settings], Verdict]
DraftOne = Callable[[Trajectory, Sequence[Finding], Verdict | None, Backend, StoreContext,
                     Settings], DraftResult]


class AnalyzeMany(Protocol):
    """The shape of ``offline_sessions`` and ``llm_run.model_sessions``."""

    def __call__(self, items: Items, backend: Backend, store_context: StoreContext,
                 settings: Settings, /, *, concurrency: int = 4, batch: bool = False,
                 progress: Progress | None = None) -> list[SessionResult]:
        """Judge and draft several sessions, results in input order."""


def offline_judge(traj: Trajectory, findings: Sequence[Finding], backend: Backend,
                  settings: Settings) -> Verdict:
    """The deciding signal's verdict, or ``unknown`` with the signals seen."""
    return heuristic_verdict(traj)


def offline_sessions(items: Items, backend: Backend, store_context: StoreContext,
                     settings: Settings, *, concurrency: int = 4, batch: bool = False,
                     progress: Progress | None = None) -> list[SessionResult]:
    """Every session judged and drafted in turn (nothing to wait for, nothing to batch)."""
    out: list[SessionResult] = []
    for traj, findings in items:
        verdict = heuristic_verdict(traj)
        result = heuristic_drafts(traj, findings, verdict, backend, store_context, settings)
        out.append(SessionResult(traj, findings, verdict, result.drafts, result.failures))
    return out


@dataclass(frozen=True)
class Way:
    """How one kind of backend judges and drafts."""

    judge: JudgeOne
    """One session's verdict."""
    draft: DraftOne
    """One session's drafts."""
    sessions: AnalyzeMany
    """Several sessions judged and drafted."""


WAYS: dict[bool, Way] = {
    # keyed by ``Backend.calls_model``
    False: Way(judge=offline_judge, draft=heuristic_drafts, sessions=offline_sessions),
    True: Way(judge=model_judge, draft=model_drafts, sessions=model_sessions),
}


def judge_session(traj: Trajectory, findings: Sequence[Finding], backend: Backend,
                  settings: Settings) -> Verdict:
    """How one run ended: a deciding log signal first, else the backend's own judgement.

    Args:
        traj: The session.
        findings: Its findings (their size goes into a model's prompt).
        backend: Answers the judging requests (the offline one is never asked).
        settings: The run settings (``judge_min_confidence``).

    Returns:
        The verdict; ``unscored`` when no model reply could be used.
    """
    return WAYS[backend.calls_model].judge(traj, findings, backend, settings)


def draft_session(traj: Trajectory, findings: Sequence[Finding], verdict: Verdict | None,
                  backend: Backend, store_context: StoreContext,
                  settings: Settings) -> DraftResult:
    """Up to ``max_drafts_per_session`` candidate playbooks for one session.

    Args:
        traj: The session.
        findings: Its findings; those with a lesson are drafted.
        verdict: The judge's verdict (kept in provenance).
        backend: Answers the drafting requests (the offline one is never asked).
        store_context: Categories and titles of the store.
        settings: The run settings (draft limit, view budget).

    Returns:
        The drafts and the reasons for anything left undrafted.
    """
    return WAYS[backend.calls_model].draft(traj, findings, verdict, backend, store_context,
                                           settings)


def analyze_sessions(items: Items, backend: Backend, store_context: StoreContext,
                     settings: Settings, *, concurrency: int = 4, batch: bool = False,
                     progress: Progress | None = None) -> list[SessionResult]:
    """Judge and draft several sessions, results in input order.

    Args:
        items: (trajectory, findings) pairs.
        backend: Answers the judge and draft requests (the offline one is never asked).
        store_context: Categories and titles of the store.
        settings: The run settings (draft limit, view budget, judge threshold, reader).
        concurrency: Online calls in flight at once.
        batch: Send all requests as Batch Mode jobs (half price) instead.
        progress: Receives the counters (the offline backend reports none).

    Returns:
        One ``SessionResult`` per item.
    """
    return WAYS[backend.calls_model].sessions(items, backend, store_context, settings,
                                              concurrency=concurrency, batch=batch,
                                              progress=progress)
