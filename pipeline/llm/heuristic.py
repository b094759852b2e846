"""The offline backend: no model, no network.

It answers no request; the stages see ``calls_model`` False and judge from the log's own
signals and draft from the findings' lessons instead (``pipeline.stages.analysis``).
"""

from __future__ import annotations

from typing import Any

from ..config import Settings
from ..hashing import value_hash
from .backend import Backend, LLMReply, LLMRequest


class HeuristicBackend(Backend):
    """Answers no requests: verdicts from the log's signals, drafts from the lessons."""

    name = "heuristic"
    model = None
    calls_model = False

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def cache_key(self, system: str, prompt: str, schema: dict[str, Any]) -> str:
        """Key of a request (never sent anywhere)."""
        return value_hash({"system": system, "prompt": prompt, "schema": schema})

    def generate(self, request: LLMRequest) -> LLMReply:
        """Refuse: the heuristic backend makes no model calls."""
        return LLMReply(text=None, error="the heuristic backend makes no model calls")
