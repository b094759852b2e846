"""Stage 4 of ``orf mine``: the selected sessions judged and drafted by the backend."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..config import Settings
from ..run_events import Counted, Emit
from .analysis import analyze_sessions
from .pause import pause_point
from .scan import SessionScan
from .view import StoreContext

if TYPE_CHECKING:
    from ..llm.backend import Backend
    from ..results import SessionResult


def judge_and_draft(sessions: Sequence[SessionScan], backend: Backend, context: StoreContext,
                    settings: Settings, *, concurrency: int, batch: bool,
                    emit: Emit) -> list[SessionResult]:
    """One result per session with a trajectory, in order; emits the backend's counters.

    The counters are ``Progress`` per session or request and ``BatchPolled`` per poll of a
    Batch Mode job.

    Args:
        sessions: The selected sessions.
        backend: Judges and drafts.
        context: What the store holds (known domains and titles).
        settings: The run settings (draft limit, view budget, judge threshold, reader).
        concurrency: Online requests in flight at once.
        batch: Send every request as Batch Mode jobs instead.
        emit: Receives the progress events.
    """
    done = 0

    def on_progress(event: Counted) -> None:
        nonlocal done
        emit(event)
        if (event.done or 0) > done:  # a Batch Mode poll may not know its count (None)
            done = event.done or 0
            pause_point("drafting")

    items = [(s.trajectory, s.findings) for s in sessions if s.trajectory is not None]
    results = analyze_sessions(items, backend, context, settings, concurrency=concurrency,
                               batch=batch, progress=on_progress)
    if not done:
        pause_point("drafting")  # the offline backend reports no progress
    return results
