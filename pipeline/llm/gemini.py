"""The gemini provider: google-genai with structured output; Batch Mode on top.

The client takes its key from the environment (GEMINI_API_KEY / GOOGLE_API_KEY, or Vertex AI
through the SDK's own variables; GOOGLE_GEMINI_BASE_URL is honoured by the SDK). The model is
``Settings.model``; no model name is written anywhere else. Cache, retry and ledger recording
are the shared wrapper's (``pipeline.llm.service``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any, ClassVar

from google import genai
from google.genai import types

from ..config import Settings
from ..ledger import Ledger
from .backend import LLMReply, LLMRequest, Progress
from .batch import run_batch
from .cost import cost_usd
from .gemini_wire import envelope_from_response, finish_error, gemini_retry_delay, generation_config
from .provider import Envelope, Provider
from .service import ModelBackend

__all__ = ["GeminiBackend", "GeminiProvider", "has_credentials"]


def has_credentials() -> bool:
    """True when the environment names a Gemini key or a Vertex AI setup."""
    if os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY"):
        return True
    return os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in ("1", "true")


class GeminiProvider(Provider):
    """One Gemini model through google-genai."""

    name: ClassVar[str] = "gemini"

    def __init__(self, settings: Settings, *, client: Any = None) -> None:
        self.model = settings.model
        self.prices = settings.prices
        self.timeout_s = settings.call_timeout_s
        self._client = client
        self._client_lock = threading.Lock()

    @property
    def client(self) -> Any:
        """The google-genai client, created on first use."""
        # Locked: two workers racing here would build two clients, and the one dropped closes
        # its HTTP pool in __del__ while the other worker still uses it.
        with self._client_lock:
            if self._client is None:
                timeout_ms = int(self.timeout_s * 1000)
                self._client = genai.Client(http_options=types.HttpOptions(timeout=timeout_ms))
            return self._client

    def send(self, request: LLMRequest, timeout_s: float | None) -> Envelope:
        """One ``generate_content`` call with a JSON schema."""
        response = self.client.models.generate_content(
            model=self.model, contents=request.prompt,
            config=generation_config(request, timeout_s),
        )
        return envelope_from_response(response)

    def retry_delay(self, exc: BaseException) -> float | None:
        """408/429/5xx and transport errors retry; a 429's ``RetryInfo`` says how long."""
        return gemini_retry_delay(exc)

    def describe(self, exc: BaseException) -> str:
        """``HTTP <code>: <message>`` for API errors, else ``<Type>: <message>``."""
        code = getattr(exc, "code", None)
        message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        first = str(message).splitlines()[0][:300] if message else type(exc).__name__
        if isinstance(code, int):
            return f"HTTP {code}: {first}"
        return f"{type(exc).__name__}: {first}"

    def finish_error(self, envelope: Envelope) -> str | None:
        """Blocked, truncated (MAX_TOKENS) or empty replies are unusable."""
        return finish_error(envelope)

    def price(self, tokens_in: int, tokens_out: int, *, batch: bool) -> float:
        """USD from ``Settings.prices`` (Batch Mode is half)."""
        return cost_usd(self.prices, self.model, tokens_in, tokens_out, batch=batch)

    def count_tokens(self, text: str) -> int:
        """Tokens ``text`` costs as input, by the API's own count."""
        result = self.client.models.count_tokens(model=self.model, contents=text)
        return int(result.total_tokens or 0)


class GeminiBackend(ModelBackend):
    """The shared wrapper around ``GeminiProvider``, plus Batch Mode (half price)."""

    provider: GeminiProvider

    def __init__(self, settings: Settings, ledger: Ledger | None, *, client: Any = None,
                 provider: GeminiProvider | None = None) -> None:
        super().__init__(provider or GeminiProvider(settings, client=client), settings, ledger)

    @property
    def client(self) -> Any:
        """The provider's google-genai client (Batch Mode calls it directly)."""
        return self.provider.client

    def generate_many(
        self,
        requests: Sequence[LLMRequest],
        *,
        concurrency: int = 4,
        batch: bool = False,
        progress: Progress | None = None,
    ) -> list[LLMReply]:
        """Online pool, or one Batch Mode job (half price) when ``batch`` is set."""
        if not batch:
            return super().generate_many(requests, concurrency=concurrency, progress=progress)
        return run_batch(self, list(requests), max_attempts=self.settings.max_attempts,
                         progress=progress)
