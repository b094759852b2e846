"""Judge and draft sessions: one alone, a bounded pool online, or rounds of Batch Mode jobs.

Each session is a small state machine (``_Session``) that hands out the requests it still
needs and takes their replies: one request, one repair try on a reply that cannot be used,
then the reason. Online, each session runs its own rounds (``_run``, in a worker thread for
a pool); in batch mode, every pending request of every session goes into one job per round
(round 1: all judge and draft requests; round 2: the repair retries of failed attempts, if
any). Judging or drafting one session alone is the same machine asked for only the verdict
(``model_judge``) or only the drafts (``model_drafts``). These are the model row of
``stages.analysis.WAYS``; the offline backend's row is there too.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from ..config import Settings
from ..lessons.verify import Proposal
from ..llm.backend import Backend, LLMReply, LLMRequest, Progress
from ..model import Draft, Finding, Trajectory, Verdict
from ..results import DraftResult, SessionResult
from ..run_events import Progress as Counter
from .draft import draft_request, lesson_findings, parse_draft_reply
from .judge import heuristic_verdict, judge_request, read_judge_reply, unscored, verdict_from_log
from .learn import (
    REJECTED,
    checked,
    digest_of,
    learn_request,
    parse_learn_reply,
    rejection_note,
    send_back_text,
)
from .view import StoreContext

__all__ = ["SessionProgress", "model_drafts", "model_judge", "model_sessions"]

_S = TypeVar("_S", bound="_Session | _LearnSession")

SessionProgress = Progress
"""Receives the counters of a run (``Progress`` per session, ``BatchPolled`` per job poll)."""


class _Session:
    """Pending requests and partial results of one session."""

    def __init__(self, traj: Trajectory, findings: list[Finding], backend: Backend,
                 store: StoreContext, settings: Settings, *, judge: bool = True,
                 draft: bool = True, verdict: Verdict | None = None) -> None:
        """Judge (``judge``: unless the log decides) and draft (``draft``) ``traj``.

        ``verdict`` is the known verdict the drafts carry when the session is not judged.
        """
        self.traj, self.findings, self.backend, self.store = traj, findings, backend, store
        self.settings = settings
        self.chosen, self.lessons, notes = lesson_findings(
            traj, findings, settings.max_drafts_per_session) if draft else ([], [], [])
        self.verdict: Verdict | None = verdict_from_log(traj) if judge else verdict
        self.drafts: list[Draft] | None = None if self.chosen else []
        self.failures: list[str] = notes
        self.pending: list[LLMRequest] = []
        # A session without a lesson yields no playbook, so the model is not asked at all
        # (unless the verdict alone is wanted).
        if judge and self.verdict is None and (self.chosen or not draft):
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


class _LearnSession:
    """A model reads the session's episodes: one request per digest chunk, one send-back.

    The log's own deciding signal wins over the model's verdict; proposals the verifier
    rejects are sent back once with the reasons (one request for every chunk's rejections),
    then dropped with them (``rejected: rule: reason`` notes).
    """

    def __init__(self, traj: Trajectory, findings: list[Finding], backend: Backend,
                 store: StoreContext, settings: Settings) -> None:
        self.traj, self.findings, self.backend, self.store = traj, findings, backend, store
        self.settings = settings
        self.episodes, self.digest = digest_of(traj, findings, settings.digest_tokens)
        self.log_verdict = verdict_from_log(traj)
        self.verdict: Verdict | None = self.log_verdict
        self.accepted: list[Draft] = []
        self.failures: list[str] = []
        self.rejected: list[tuple[Proposal, list[tuple[str, str]]]] = []
        self.problems: list[str] = []
        self.pending: list[LLMRequest] = [
            learn_request(traj, chunk.text, n, backend, store,
                          settings.max_drafts_per_session)
            for n, chunk in enumerate(self.digest.chunks)]
        self.outstanding = len(self.pending)
        self.chunk_of = {r.key: n for n, r in enumerate(self.pending)}
        """Which digest chunk each first request carries (an unusable reply asks it again)."""
        self.sent_back = False

    def take(self) -> list[LLMRequest]:
        out, self.pending = self.pending, []
        return out

    def feed(self, request: LLMRequest, reply: LLMReply) -> None:
        self.outstanding -= 1
        parsed = parse_learn_reply(reply, self.episodes, self.backend,
                                   self.settings.judge_min_confidence)
        if parsed.error is not None:
            self.failures.append(f"attempt {request.attempt}: {parsed.error}")
            if request.attempt == 1 and not self.sent_back:
                self.sent_back = True
                chunk = self.chunk_of.get(request.key, 0)
                self.pending.append(learn_request(
                    self.traj, self.digest.chunks[chunk].text, chunk, self.backend, self.store,
                    self.settings.max_drafts_per_session,
                    send_back=f"- your reply could not be used: {parsed.error}"))
                self.outstanding += 1
            elif request.attempt > 1:
                self.failures.append(f"undrafted: {parsed.error}")
            return
        if self.log_verdict is None and parsed.verdict is not None and (
                self.verdict is None or self.verdict.outcome == "unknown"):
            self.verdict = parsed.verdict
        accepted, rejected = checked(parsed.proposals, self.episodes)
        self.accepted.extend(p.draft for p in accepted)
        if request.attempt == 1:
            self.rejected.extend(rejected)
            self.problems.extend(parsed.problems)
        else:
            self._drop(rejected, parsed.problems)
        if self.outstanding == 0 and request.attempt == 1 and (self.rejected or self.problems):
            if self.sent_back:
                self._drop(self.rejected, self.problems)
                return
            self.sent_back = True
            self.pending.append(learn_request(
                self.traj, "\n\n".join(c.text for c in self.digest.chunks), 0, self.backend,
                self.store, self.settings.max_drafts_per_session,
                send_back=send_back_text(self.rejected, self.problems)))
            self.outstanding += 1
            self.rejected, self.problems = [], []

    def _drop(self, rejected: list[tuple[Proposal, list[tuple[str, str]]]],
              problems: list[str]) -> None:
        for p, why in rejected:
            self.failures.append(rejection_note(p, why))
        self.failures.extend(f"{REJECTED} shape: {p}" for p in problems)

    def result(self) -> SessionResult:
        verdict = self.verdict or heuristic_verdict(self.traj)
        drafts = _distinct(self.accepted)[: self.settings.max_drafts_per_session]
        for d in drafts:
            d.provenance = d.provenance.judged(verdict.outcome, verdict.decided_by)
        return SessionResult(self.traj, self.findings, verdict, drafts, self.failures)


def _distinct(drafts: list[Draft]) -> list[Draft]:
    """One draft per signature (two chunks may propose the same lesson)."""
    seen: set[str] = set()
    out = []
    for d in drafts:
        key = d.provenance.signature or d.title
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def _run(session: _S) -> _S:
    """Answer ``session``'s requests one by one online until it needs none."""
    while True:
        requests = session.take()
        if not requests:
            return session
        for request in requests:
            session.feed(request, session.backend.generate(request))


def _online(session: _Session | _LearnSession) -> SessionResult:
    return _run(session).result()


def model_judge(traj: Trajectory, findings: Sequence[Finding], backend: Backend,
                settings: Settings) -> Verdict:
    """A model backend's verdict: a deciding signal, else the model (one repair try).

    Args:
        traj: The session.
        findings: Its findings (their size goes into the prompt).
        backend: Answers the judging requests.
        settings: The run settings (``judge_min_confidence``).

    Returns:
        The verdict; ``unscored`` when neither reply could be used.
    """
    session = _run(_Session(traj, list(findings), backend, StoreContext(), settings,
                            draft=False))
    return session.verdict or unscored(backend.decided_by, "no reply")


def model_drafts(traj: Trajectory, findings: Sequence[Finding], verdict: Verdict | None,
                 backend: Backend, store_context: StoreContext,
                 settings: Settings) -> DraftResult:
    """A model backend's drafts: one request, one repair try, else undrafted with the reason.

    Args:
        traj: The session.
        findings: Its findings; the most wasteful distinct ones with a lesson are drafted.
        verdict: The judge's verdict (kept in provenance).
        backend: Answers the drafting requests.
        store_context: Categories and titles of the store.
        settings: The run settings (draft limit, view budget).

    Returns:
        The drafts and the reasons for anything left undrafted.
    """
    session = _run(_Session(traj, list(findings), backend, store_context, settings,
                            judge=False, verdict=verdict))
    return DraftResult(drafts=session.drafts or [], failures=session.failures)


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
    sessions: list[_Session | _LearnSession] = [
        _LearnSession(t, f, backend, store_context, settings) if settings.reader == "episodes"
        else _Session(t, f, backend, store_context, settings) for t, f in items]
    if not batch:
        results: list[SessionResult | None] = [None] * len(sessions)
        pool = ThreadPoolExecutor(max_workers=max(1, concurrency))
        try:
            futures = {pool.submit(_online, s): i for i, s in enumerate(sessions)}
            for done, (future, index) in enumerate(futures.items(), start=1):
                results[index] = future.result()
                if progress is not None:
                    progress(Counter("sessions", done, len(sessions)))
        except BaseException:
            # Ctrl-C: start no more calls and do not wait for those in flight (leaving the
            # pool through ``with`` would wait for each up to its timeout).
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
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
