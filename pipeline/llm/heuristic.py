"""The offline backend: no model, no network.

Verdicts come from the log's own signals and drafts from the findings (see
``pipeline.stages.judge`` and ``pipeline.stages.heuristic_draft``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..config import Settings
from ..hashing import value_hash
from .backend import Backend, LLMReply, LLMRequest, Progress

if TYPE_CHECKING:
    from ..model import Finding, Trajectory, Verdict
    from ..stages.results import DraftResult, SessionResult
    from ..stages.view import StoreContext


class HeuristicBackend(Backend):
    """Answers no requests: verdicts from the log's signals, drafts from the lessons."""

    name = "heuristic"
    model = None

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def cache_key(self, system: str, prompt: str, schema: dict[str, Any]) -> str:
        """Key of a request (never sent anywhere)."""
        return value_hash({"system": system, "prompt": prompt, "schema": schema})

    def generate(self, request: LLMRequest) -> LLMReply:
        """Refuse: the heuristic backend makes no model calls."""
        return LLMReply(text=None, error="the heuristic backend makes no model calls")

    def judge(self, traj: Trajectory, findings: Sequence[Finding]) -> Verdict:
        """The deciding signal's verdict, or ``unknown`` with the signals seen."""
        from ..stages.judge import heuristic_verdict

        return heuristic_verdict(traj)

    def draft(self, traj: Trajectory, findings: Sequence[Finding], verdict: Verdict | None,
              store: StoreContext) -> DraftResult:
        """One draft per lesson of the findings (``stages.heuristic_draft``)."""
        from ..stages.heuristic_draft import heuristic_drafts

        return heuristic_drafts(traj, findings, verdict, self, store, self.settings)

    def analyze_sessions(
        self,
        items: Sequence[tuple[Trajectory, list[Finding]]],
        store: StoreContext,
        *,
        concurrency: int = 4,
        batch: bool = False,
        progress: Progress | None = None,
    ) -> list[SessionResult]:
        """Every session judged and drafted in turn (nothing to wait for, nothing to batch)."""
        from ..stages.llm_run import offline_sessions

        return offline_sessions(items, self, store, self.settings)
