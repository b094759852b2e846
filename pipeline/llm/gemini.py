"""The gemini backend: google-genai with structured output, retries, and the ledger cache.

The client takes its key from the environment (GEMINI_API_KEY / GOOGLE_API_KEY, or Vertex AI
through the SDK's own variables; GOOGLE_GEMINI_BASE_URL is honoured by the SDK). The model is
``Settings.model``; no model name is written anywhere else.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from typing import Any

from google import genai
from google.genai import types
from tenacity import Retrying

from ..config import Settings
from ..ledger import Ledger
from ..privacy import leak_kinds
from .backend import Backend, LLMReply, LLMRequest, Progress
from .cache import CallCache, request_key
from .cost import cost_usd
from .retry import model_retry_config

BLOCK_FINISH = frozenset({
    "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "LANGUAGE", "OTHER",
})
"""Finish reasons that mean the reply was withheld."""


def refusal(request: LLMRequest) -> str | None:
    """Why ``request`` must not be sent: a final scan still finds a credential-shaped string.

    Every prompt is built from redacted text, so a hit means a stage forgot to redact (or a
    new detector knows more than the one that ran): the request fails with this reason and
    the run goes on without it.
    """
    found = leak_kinds(request.prompt) + leak_kinds(request.system)
    if not found:
        return None
    return f"refused: credential-shaped string ({', '.join(dict.fromkeys(found))}) in request"


def has_credentials() -> bool:
    """True when the environment names a Gemini key or a Vertex AI setup."""
    if os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY"):
        return True
    return os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in ("1", "true")


def _enum_name(value: Any) -> str | None:
    if value is None:
        return None
    return str(getattr(value, "value", value))


def envelope_from_response(response: Any) -> dict[str, Any]:
    """The parts of a ``GenerateContentResponse`` that the stages and the cache need."""
    usage = getattr(response, "usage_metadata", None)
    tokens_in = int(getattr(usage, "prompt_token_count", 0) or 0)
    tokens_out = int(getattr(usage, "candidates_token_count", 0) or 0)
    tokens_out += int(getattr(usage, "thoughts_token_count", 0) or 0)
    envelope: dict[str, Any] = {
        "text": None, "finish": None, "blocked": None,
        "tokens_in": tokens_in, "tokens_out": tokens_out,
    }
    feedback = getattr(response, "prompt_feedback", None)
    if feedback is not None and getattr(feedback, "block_reason", None) is not None:
        envelope["blocked"] = _enum_name(feedback.block_reason)
    candidates = getattr(response, "candidates", None) or []
    if not candidates:
        return envelope
    candidate = candidates[0]
    envelope["finish"] = _enum_name(getattr(candidate, "finish_reason", None))
    content = getattr(candidate, "content", None)
    parts = getattr(content, "parts", None) or []
    # Thought parts are the model's scratchpad, not the answer.
    texts = [p.text for p in parts if getattr(p, "text", None) and not getattr(p, "thought", None)]
    envelope["text"] = "".join(texts) if texts else None
    return envelope


def envelope_from_dict(response: dict[str, Any]) -> dict[str, Any]:
    """Same as ``envelope_from_response`` for a REST JSON reply (batch result files)."""
    parsed = types.GenerateContentResponse._from_response(response=response, kwargs={})
    return envelope_from_response(parsed)


def reply_from_envelope(envelope: dict[str, Any], *, cached: bool = False) -> LLMReply:
    """Turn a stored answer into an ``LLMReply``, naming why it is unusable when it is."""
    text = envelope.get("text")
    finish = envelope.get("finish")
    error: str | None = None
    if envelope.get("blocked"):
        error = f"blocked: {envelope['blocked']}"
    elif finish == "MAX_TOKENS":
        error = "truncated: finish reason MAX_TOKENS"
    elif finish in BLOCK_FINISH:
        error = f"blocked: finish reason {finish}"
    elif not text or not str(text).strip():
        error = "empty reply: no candidates" if finish is None else "empty reply"
    return LLMReply(
        text=text, error=error, cached=cached,
        tokens_in=0 if cached else int(envelope.get("tokens_in", 0)),
        tokens_out=0 if cached else int(envelope.get("tokens_out", 0)),
        extra={"finish": finish},
    )


def generation_config(request: LLMRequest, timeout_s: float | None) -> types.GenerateContentConfig:
    """Structured-output config for ``request`` (temperature 0: replies should be repeatable)."""
    http = types.HttpOptions(timeout=int(timeout_s * 1000)) if timeout_s else None
    return types.GenerateContentConfig(
        system_instruction=request.system,
        temperature=0.0,
        max_output_tokens=request.max_output_tokens,
        response_mime_type="application/json",
        response_json_schema=request.schema,
        http_options=http,
    )


class GeminiBackend(Backend):
    """Judge/draft through google-genai."""

    name = "gemini"
    uses_model = True

    def __init__(self, settings: Settings, ledger: Ledger | None, *, client: Any = None) -> None:
        self.settings = settings
        self.model = settings.model
        self.ledger = ledger
        self.cache = CallCache(ledger)
        self._client = client
        self._client_lock = threading.Lock()

    @property
    def client(self) -> Any:
        """The google-genai client, created on first use."""
        # Locked: two workers racing here would build two clients, and the one dropped closes
        # its HTTP pool in __del__ while the other worker still uses it.
        with self._client_lock:
            if self._client is None:
                timeout_ms = int(self.settings.call_timeout_s * 1000)
                self._client = genai.Client(http_options=types.HttpOptions(timeout=timeout_ms))
            return self._client

    def cache_key(self, system: str, prompt: str, schema: dict[str, Any]) -> str:
        """Cache key of a request with this backend's model."""
        return request_key(str(self.model), system, prompt, schema)

    def cost(self, tokens_in: int, tokens_out: int, *, batch: bool = False) -> float:
        """USD for a call of this model."""
        return cost_usd(self.settings.prices, str(self.model), tokens_in, tokens_out, batch=batch)

    def lookup(self, request: LLMRequest) -> LLMReply | None:
        """The cached reply for ``request`` (recorded as a ``cached`` call), if any."""
        envelope = self.cache.get(request.key)
        if envelope is None:
            return None
        self.cache.record(
            key=request.key, envelope=None, model=str(self.model), purpose=request.purpose,
            session_id=request.session_id, status="cached",
        )
        return reply_from_envelope(envelope, cached=True)

    def store(self, request: LLMRequest, envelope: dict[str, Any], *, latency_ms: int = 0,
              batch: bool = False) -> LLMReply:
        """Record a fresh answer in the ledger and turn it into a reply."""
        reply = reply_from_envelope(envelope)
        self.cache.record(
            key=request.key, envelope=envelope, model=str(self.model), purpose=request.purpose,
            session_id=request.session_id, status="ok", tokens_in=reply.tokens_in,
            tokens_out=reply.tokens_out, latency_ms=latency_ms, batch=batch,
            cost_usd=self.cost(reply.tokens_in, reply.tokens_out, batch=batch),
            error=reply.error,
        )
        return reply

    def record_failure(self, request: LLMRequest, error: str, *, latency_ms: int = 0,
                       batch: bool = False) -> LLMReply:
        """Record a call that produced no answer (not cached: a rerun tries again)."""
        self.cache.record(
            key=request.key, envelope=None, model=str(self.model), purpose=request.purpose,
            session_id=request.session_id, status="failed", error=error,
            latency_ms=latency_ms, batch=batch,
        )
        return LLMReply(text=None, error=error)

    def generate(self, request: LLMRequest) -> LLMReply:
        """Answer one request: the ledger first, else the API with retries."""
        cached = self.lookup(request)
        if cached is not None:
            return cached
        refused = refusal(request)
        if refused is not None:
            return self.record_failure(request, refused)
        config = generation_config(request, self.settings.call_timeout_s)
        started = time.monotonic()
        try:
            for attempt in Retrying(**model_retry_config(self.settings.max_attempts)):
                with attempt:
                    response = self.client.models.generate_content(
                        model=self.model, contents=request.prompt, config=config
                    )
        except Exception as exc:  # noqa: BLE001 - any SDK/transport error ends as a reason
            latency = int((time.monotonic() - started) * 1000)
            return self.record_failure(request, _describe(exc), latency_ms=latency)
        latency = int((time.monotonic() - started) * 1000)
        return self.store(request, envelope_from_response(response), latency_ms=latency)

    def count_tokens(self, text: str) -> int:
        """Tokens ``text`` costs as input, by the API's own count."""
        result = self.client.models.count_tokens(model=self.model, contents=text)
        return int(result.total_tokens or 0)

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
        from .batch import run_batch

        return run_batch(self, list(requests), progress=progress)


def _describe(exc: BaseException) -> str:
    code = getattr(exc, "code", None)
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    first = str(message).splitlines()[0][:300] if message else type(exc).__name__
    return f"HTTP {code}: {first}" if isinstance(code, int) else f"{type(exc).__name__}: {first}"
