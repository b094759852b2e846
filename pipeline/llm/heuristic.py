"""The offline backend: no model, no network.

Verdicts come from the log's own signals and drafts from the findings (see
``pipeline.stages.judge`` and ``pipeline.stages.heuristic_draft``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..config import Settings
from ..errors import BackendError
from ..hashing import value_hash
from .backend import Backend, LLMReply, LLMRequest
from .provider import Envelope, Provider


class HeuristicProvider(Provider):
    """The registry's entry for ``heuristic``: it sends nothing."""

    name: ClassVar[str] = "heuristic"
    model = ""

    def send(self, request: LLMRequest, timeout_s: float | None) -> Envelope:
        """Refuse: the heuristic backend makes no model calls."""
        raise BackendError("the heuristic backend makes no model calls")


class HeuristicBackend(Backend):
    """Answers no requests; judge and draft use the rule-based paths."""

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
