"""The one wrapper around every provider: cache, pre-send refusal, retry, cost and ledger.

``ModelBackend.generate`` answers a request from the ledger when it can; otherwise it refuses
a request that still holds a credential-shaped string, sends it through the provider with
retries (the provider says which errors are retryable and how long to wait), and records the
call with its tokens, cost and latency. A provider never sees the cache or the ledger.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from tenacity import Retrying

from ..privacy import leak_kinds
from .backend import Backend, LLMReply, LLMRequest
from .cache import CallCache, request_key
from .provider import Envelope, Provider
from .retry import provider_retry_config

if TYPE_CHECKING:
    from ..config import Settings
    from ..ledger import Ledger


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


class ModelBackend(Backend):
    """A backend that answers requests through one ``Provider``."""

    def __init__(self, provider: Provider, settings: Settings, ledger: Ledger | None) -> None:
        self.provider = provider
        self.name = provider.name
        self.model = provider.model
        self.settings = settings
        self.ledger = ledger
        self.cache = CallCache(ledger)

    def cache_key(self, system: str, prompt: str, schema: dict[str, Any]) -> str:
        """Cache key of a request with this backend's model."""
        return request_key(str(self.model), system, prompt, schema)

    def cost(self, tokens_in: int, tokens_out: int, *, batch: bool = False) -> float:
        """USD for a call of this model."""
        return self.provider.price(tokens_in, tokens_out, batch=batch)

    def reply(self, envelope: Envelope, *, cached: bool = False) -> LLMReply:
        """Turn a stored answer into an ``LLMReply``, naming why it is unusable when it is."""
        return LLMReply(
            text=envelope.get("text"), error=self.provider.finish_error(envelope), cached=cached,
            tokens_in=0 if cached else int(envelope.get("tokens_in", 0)),
            tokens_out=0 if cached else int(envelope.get("tokens_out", 0)),
            extra={"finish": envelope.get("finish")},
        )

    def lookup(self, request: LLMRequest) -> LLMReply | None:
        """The cached reply for ``request`` (recorded as a ``cached`` call), if any."""
        envelope = self.cache.get(request.key)
        if envelope is None:
            return None
        self.cache.record(
            key=request.key, envelope=None, model=str(self.model), purpose=request.purpose,
            session_id=request.session_id, status="cached",
        )
        return self.reply(envelope, cached=True)

    def store(self, request: LLMRequest, envelope: Envelope, *, latency_ms: int = 0,
              batch: bool = False) -> LLMReply:
        """Record a fresh answer in the ledger and turn it into a reply."""
        reply = self.reply(envelope)
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
        """Answer one request: the ledger first, else the provider with retries."""
        cached = self.lookup(request)
        if cached is not None:
            return cached
        refused = refusal(request)
        if refused is not None:
            return self.record_failure(request, refused)
        started = time.monotonic()
        config = provider_retry_config(self.provider.retry_delay, self.settings.max_attempts)
        try:
            for attempt in Retrying(**config):
                with attempt:
                    envelope = self.provider.send(request, self.settings.call_timeout_s)
        except Exception as exc:  # noqa: BLE001 - any SDK/transport error ends as a reason
            latency = int((time.monotonic() - started) * 1000)
            return self.record_failure(request, self.provider.describe(exc), latency_ms=latency)
        latency = int((time.monotonic() - started) * 1000)
        return self.store(request, envelope, latency_ms=latency)

    def count_tokens(self, text: str) -> int | None:
        """Tokens ``text`` costs as input, when the provider can count them."""
        return self.provider.count_tokens(text)
