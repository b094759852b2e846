"""Judge and draft several sessions: a bounded pool online, or rounds of Batch Mode jobs.

Each session is a small state machine (``_Session``) that hands out the requests it still
needs and takes their replies. Online, each session runs its own rounds in a worker thread;
in batch mode, every pending request of every session goes into one job per round (round 1:
all judge and draft requests; round 2: the repair retries of failed attempts, if any).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from ..config import Settings
from ..llm.backend import Backend, LLMReply, LLMRequest
from ..model import Draft, Finding, Trajectory, Verdict
from .draft import draft_request, lesson_findings, parse_draft_reply
from .heuristic_draft import heuristic_drafts
from .judge import heuristic_verdict, judge_request, read_judge_reply, unscored, verdict_from_log
from .results import SessionResult
from .view import StoreContext

__all__ = ["SessionProgress", "SessionResult", "model_sessions", "offline_sessions"]

SessionProgress = Callable[[str, int, int], None]


class _Session:
    """Pending requests and partial results of one session."""

    def __init__(self, traj: Trajectory, findings: list[Finding], backend: Backend,
                 store: StoreContext, settings: Settings) -> None:
        self.traj, self.findings, self.backend, self.store = traj, findings, backend, store
        self.settings = settings
        self.chosen, self.lessons, notes = lesson_findings(
            traj, findings, settings.max_drafts_per_session)
        self.verdict: Verdict | None = verdict_from_log(traj)
        self.drafts: list[Draft] | None = None if self.chosen else []
        self.failures: list[str] = notes
        self.pending: list[LLMRequest] = []
        # A session without a lesson yields no playbook, so the model is not asked at all.
        if self.verdict is None and self.chosen:
            self.pending.append(judge_request(traj, findings, backend))
        if self.chosen:
            self.pending.append(draft_request(traj, self.chosen, backend, store,
                                              lessons=self.lessons, settings=settings))

    def take(self) -> list[LLMRequest]:
        out, self.pending = self.pending, []
        return out

    def feed(self, request: LLMRequest, reply: LLMReply) -> None:
        decided_by = self.backend.decided_by
        if request.purpose == "judge":
            verdict, why = read_judge_reply(reply, self.traj, self.backend, self.settings)
            if verdict is not None:
                self.verdict = verdict
            elif request.attempt == 1:
                self.pending.append(judge_request(self.traj, self.findings, self.backend,
                                                  repair=why))
            else:
                self.verdict = unscored(decided_by, why or "no reply")
            return
        drafts, why = parse_draft_reply(reply, self.traj, self.chosen, self.verdict,
                                        self.backend, self.lessons, settings=self.settings)
        if drafts is not None:
            self.drafts = drafts
        elif request.attempt == 1:
            self.failures.append(f"attempt 1: {why}")
            self.pending.append(draft_request(self.traj, self.chosen, self.backend, self.store,
                                              repair=why, lessons=self.lessons,
                                              settings=self.settings))
        else:
            self.failures.append(f"undrafted: {why}")
            self.drafts = []

    def result(self) -> SessionResult:
        verdict = self.verdict or heuristic_verdict(self.traj)
        drafts = self.drafts or []
        for d in drafts:
            # The draft may have been parsed before the verdict arrived.
            d.provenance = d.provenance.judged(verdict.outcome, verdict.decided_by)
        return SessionResult(self.traj, self.findings, verdict, drafts, self.failures)


def offline_sessions(items: Sequence[tuple[Trajectory, list[Finding]]], backend: Backend,
                     store_context: StoreContext, settings: Settings) -> list[SessionResult]:
    """The heuristic backend's results: verdicts from the log, drafts from the lessons."""
    out: list[SessionResult] = []
    for traj, findings in items:
        verdict = heuristic_verdict(traj)
        result = heuristic_drafts(traj, findings, verdict, backend, store_context, settings)
        out.append(SessionResult(traj, findings, verdict, result.drafts, result.failures))
    return out


def _online(session: _Session) -> SessionResult:
    while True:
        requests = session.take()
        if not requests:
            return session.result()
        for request in requests:
            session.feed(request, session.backend.generate(request))


def model_sessions(
    items: Sequence[tuple[Trajectory, list[Finding]]],
    backend: Backend,
    store_context: StoreContext,
    settings: Settings,
    *,
    concurrency: int = 4,
    batch: bool = False,
    progress: SessionProgress | None = None,
) -> list[SessionResult]:
    """A model backend's results: a bounded pool of sessions online, or Batch Mode rounds.

    Args:
        items: (trajectory, findings) pairs.
        backend: Answers the judge and draft requests.
        store_context: Categories and titles of the store.
        settings: The run settings (draft limit, view budget, judge threshold).
        concurrency: Online calls in flight at once.
        batch: Send all requests as Batch Mode jobs (half price) instead.
        progress: Called with ``(what, done, total)``.

    Returns:
        One ``SessionResult`` per item.
    """
    sessions = [_Session(t, f, backend, store_context, settings) for t, f in items]
    if not batch:
        results: list[SessionResult | None] = [None] * len(sessions)
        with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
            futures = {pool.submit(_online, s): i for i, s in enumerate(sessions)}
            for done, (future, index) in enumerate(futures.items(), start=1):
                results[index] = future.result()
                if progress is not None:
                    progress("sessions", done, len(sessions))
        return [r for r in results if r is not None]
    while True:
        round_requests = [(s, r) for s in sessions for r in s.take()]
        if not round_requests:
            break
        replies = backend.generate_many([r for _, r in round_requests], batch=True,
                                        concurrency=concurrency, progress=progress)
        for (session, request), reply in zip(round_requests, replies, strict=True):
            session.feed(request, reply)
    return [s.result() for s in sessions]
