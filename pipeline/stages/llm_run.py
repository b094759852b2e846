"""Judge and draft several sessions: a bounded pool online, or rounds of Batch Mode jobs.

Each session is a small state machine (``_Session``) that hands out the requests it still
needs and takes their replies. Online, each session runs its own rounds in a worker thread;
in batch mode, every pending request of every session goes into one job per round (round 1:
all judge and draft requests; round 2: the repair retries of failed attempts, if any).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from ..llm.backend import Backend, LLMReply, LLMRequest
from ..model import Draft, Finding, Trajectory, Verdict
from .draft import (
    DraftResult,
    _settings_of,
    draft_request,
    heuristic_drafts,
    lesson_findings,
    parse_draft_reply,
)
from .judge import heuristic_verdict, judge_request, read_judge_reply, unscored, verdict_from_log
from .view import StoreContext

SessionProgress = Callable[[str, int, int], None]


@dataclass
class SessionResult:
    """Judge and draft outcome of one session."""

    trajectory: Trajectory
    """The session."""
    findings: list[Finding]
    """Its findings (all of them, not only the drafted ones)."""
    verdict: Verdict
    """How the run ended, who decided, or why it is unscored."""
    drafts: list[Draft] = field(default_factory=list)
    """Validated candidate playbooks."""
    failures: list[str] = field(default_factory=list)
    """Failed attempts and undrafted findings, with reasons."""

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self.trajectory.id


class _Session:
    """Pending requests and partial results of one session."""

    def __init__(self, traj: Trajectory, findings: list[Finding], backend: Backend,
                 store: StoreContext) -> None:
        self.traj, self.findings, self.backend, self.store = traj, findings, backend, store
        self.chosen, self.lessons, notes = lesson_findings(
            traj, findings, _settings_of(backend).max_drafts_per_session)
        self.verdict: Verdict | None = verdict_from_log(traj)
        self.drafts: list[Draft] | None = None if self.chosen else []
        self.failures: list[str] = notes
        self.pending: list[LLMRequest] = []
        # A session without a lesson yields no playbook, so the model is not asked at all.
        if self.verdict is None and self.chosen:
            self.pending.append(judge_request(traj, findings, backend))
        if self.chosen:
            self.pending.append(draft_request(traj, self.chosen, backend, store,
                                              lessons=self.lessons))

    def take(self) -> list[LLMRequest]:
        out, self.pending = self.pending, []
        return out

    def feed(self, request: LLMRequest, reply: LLMReply) -> None:
        decided_by = self.backend.decided_by
        if request.purpose == "judge":
            verdict, why = read_judge_reply(reply, self.traj, self.backend)
            if verdict is not None:
                self.verdict = verdict
            elif request.attempt == 1:
                self.pending.append(judge_request(self.traj, self.findings, self.backend,
                                                  repair=why))
            else:
                self.verdict = unscored(decided_by, why or "no reply")
            return
        drafts, why = parse_draft_reply(reply, self.traj, self.chosen, self.verdict,
                                        self.backend, self.lessons)
        if drafts is not None:
            self.drafts = drafts
        elif request.attempt == 1:
            self.failures.append(f"attempt 1: {why}")
            self.pending.append(draft_request(self.traj, self.chosen, self.backend, self.store,
                                              repair=why, lessons=self.lessons))
        else:
            self.failures.append(f"undrafted: {why}")
            self.drafts = []

    def result(self) -> SessionResult:
        verdict = self.verdict or heuristic_verdict(self.traj)
        drafts = self.drafts or []
        for d in drafts:
            # The draft may have been parsed before the verdict arrived.
            d.provenance["verdict"] = verdict.outcome
            d.provenance["verdict_by"] = verdict.decided_by
        return SessionResult(self.traj, self.findings, verdict, drafts, self.failures)


def _offline(traj: Trajectory, findings: list[Finding], backend: Backend,
             store: StoreContext) -> SessionResult:
    verdict = heuristic_verdict(traj)
    result: DraftResult = heuristic_drafts(traj, findings, verdict, backend, store)
    return SessionResult(traj, findings, verdict, result.drafts, result.failures)


def _online(session: _Session) -> SessionResult:
    while True:
        requests = session.take()
        if not requests:
            return session.result()
        for request in requests:
            session.feed(request, session.backend.generate(request))


def analyze_many(
    items: list[tuple[Trajectory, list[Finding]]],
    backend: Backend,
    store_context: StoreContext,
    *,
    concurrency: int = 4,
    batch: bool = False,
    progress: SessionProgress | None = None,
) -> list[SessionResult]:
    """Judge and draft several sessions, results in input order.

    Args:
        items: (trajectory, findings) pairs.
        backend: The backend; the heuristic one makes no call at all.
        store_context: Categories and titles of the store.
        concurrency: Online calls in flight at once.
        batch: Send all requests as Gemini Batch Mode jobs (half price) instead.
        progress: Called with ``(what, done, total)``.

    Returns:
        One ``SessionResult`` per item.
    """
    if not backend.uses_model:
        return [_offline(t, f, backend, store_context) for t, f in items]
    sessions = [_Session(t, f, backend, store_context) for t, f in items]
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
