"""What one model API must offer: send a request, and say what its errors and replies mean.

A provider knows nothing about the cache, retries or the ledger: the wrapper in
``pipeline.llm.service`` does those the same way for every provider. Adding a backend means one
module with a ``Provider`` subclass plus one entry in ``pipeline.llm.registry``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from .backend import LLMRequest

Envelope = dict[str, Any]
"""What a provider returns for one request: {"text": str|None, "finish": str|None,
"tokens_in": int, "tokens_out": int} (+ optional extra keys). The cached form of a reply."""


class Provider(ABC):
    """One model API. Knows how to send one request; nothing about cache, retry or ledger."""

    name: ClassVar[str]
    """Registry name, e.g. ``gemini``, ``openai-compatible``."""
    model: str
    """Model id used for cache keys, cost and ``decided_by``."""

    @abstractmethod
    def send(self, request: LLMRequest, timeout_s: float | None) -> Envelope:
        """Send one request; raise on transport / HTTP errors (the wrapper retries).

        Args:
            request: The structured-output request (prompt already redacted and screened).
            timeout_s: Per-call timeout in seconds; None leaves the client's default.

        Returns:
            The reply envelope (see ``Envelope``).
        """

    def retry_delay(self, exc: BaseException) -> float | None:
        """How to treat ``exc`` raised by ``send``.

        Returns:
            None: not retryable. 0.0: retry with the default backoff. >0: wait this long
            (a Retry-After header). Default: None.
        """
        return None

    def describe(self, exc: BaseException) -> str:
        """One line for the ledger: ``HTTP 429: ...`` or ``TimeoutError: ...``."""
        message = str(exc) or type(exc).__name__
        return f"{type(exc).__name__}: {message.splitlines()[0][:300]}"

    def finish_error(self, envelope: Envelope) -> str | None:
        """Why a reply is unusable (max tokens, blocked, empty), else None. Default: empty text."""
        text = envelope.get("text")
        if not text or not str(text).strip():
            return "empty reply"
        return None

    def price(self, tokens_in: int, tokens_out: int, *, batch: bool) -> float:
        """USD for one call; default 0.0 (self-hosted servers are free)."""
        return 0.0

    def count_tokens(self, text: str) -> int | None:
        """Tokens ``text`` costs as input, when the API can count them; default None."""
        return None
