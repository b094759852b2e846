"""The offline backend: no model, no network.

The stages see ``uses_model == False`` and build verdicts from the log's own signals and drafts
from the findings (see ``pipeline.stages.judge`` and ``pipeline.stages.draft``).
"""

from __future__ import annotations

from typing import Any

from ..config import Settings
from ..hashing import value_hash
from .backend import Backend, LLMReply, LLMRequest


class HeuristicBackend(Backend):
    """Answers no requests; the stages fall back to their rule-based paths."""

    name = "heuristic"
    model = None
    uses_model = False

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()

    def cache_key(self, system: str, prompt: str, schema: dict[str, Any]) -> str:
        """Key of a request (never sent anywhere)."""
        return value_hash({"system": system, "prompt": prompt, "schema": schema})

    def generate(self, request: LLMRequest) -> LLMReply:
        """Refuse: the heuristic backend makes no model calls."""
        return LLMReply(text=None, error="the heuristic backend makes no model calls")
