"""The one interface every provider sits behind (the registry of names is ``llm.registry``).

A backend builds nothing and parses nothing: it answers ``LLMRequest`` objects with
``LLMReply`` objects (from the cache when it can) and says what a call costs. The stages hold
the judge and draft entry points (``stages.analysis``) and pick the offline rules or the
model's requests by ``Backend.calls_model``. Requests are built first and parsed later, so the
same code path serves one online call, a bounded pool of calls, and one Gemini Batch Mode job.
Each backend holds the ``Settings`` it was built with for its own calls; the stages get theirs
passed explicitly.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..run_events import Counted

Progress = Callable[["Counted"], None]
"""Progress callback: a ``run_events.Progress`` counter or a ``BatchPolled`` job state."""


@dataclass(frozen=True)
class LLMRequest:
    """One structured-output request, identified by its cache key."""

    key: str
    """Cache key: ``value_hash`` of model + system + prompt + schema."""
    purpose: str
    """``judge`` or ``draft`` (recorded in the ledger)."""
    session_id: str
    """The session the request is about."""
    system: str
    """System instruction."""
    prompt: str
    """User text (already redacted)."""
    schema: dict[str, Any]
    """JSON schema of the expected reply."""
    max_output_tokens: int = 4096
    """Output cap; a reply that hits it is a failed attempt."""
    attempt: int = 1
    """1 for the first try, 2 for the repair try."""


@dataclass
class LLMReply:
    """What came back for one request (or why nothing usable did)."""

    text: str | None
    """Reply text; None when there was none."""
    error: str | None = None
    """Why the reply is unusable (``empty``, ``max_tokens``, ``blocked: ...``, transport)."""
    tokens_in: int = 0
    """Prompt tokens billed."""
    tokens_out: int = 0
    """Output tokens billed."""
    cached: bool = False
    """True when the ledger answered and no call was made."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Backend-specific details (finish reason, latency)."""

    @property
    def ok(self) -> bool:
        """True when there is text to parse."""
        return self.error is None and self.text is not None


class Backend(ABC):
    """What answers the judge's and the drafter's requests."""

    name: str = ""
    """Registry name."""
    model: str | None = None
    """Model used, when the backend calls one."""
    calls_model: bool = True
    """False for the offline backend: the stages then judge and draft by rule, asking nothing."""

    @property
    def decided_by(self) -> str:
        """Label stored in verdicts and provenance (``heuristic``, ``gemini:<model>``)."""
        return f"{self.name}:{self.model}" if self.model else self.name

    @abstractmethod
    def cache_key(self, system: str, prompt: str, schema: dict[str, Any]) -> str:
        """Cache key of a request with this backend's model."""

    @abstractmethod
    def generate(self, request: LLMRequest) -> LLMReply:
        """Answer one request (from the cache when possible). Never raises for API errors."""

    def generate_many(
        self,
        requests: Sequence[LLMRequest],
        *,
        concurrency: int = 4,
        batch: bool = False,
        progress: Progress | None = None,
    ) -> list[LLMReply]:
        """Answer several requests, in order: a bounded pool of online calls by default."""
        if not requests:
            return []
        from ..run_events import Progress as Counter

        done = 0
        out: list[LLMReply | None] = [None] * len(requests)
        with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
            futures = {pool.submit(self.generate, r): i for i, r in enumerate(requests)}
            for future, index in futures.items():
                out[index] = future.result()
                done += 1
                if progress is not None:
                    progress(Counter("llm", done, len(requests)))
        return [r for r in out if r is not None]
