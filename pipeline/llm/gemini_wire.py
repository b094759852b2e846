"""google-genai wire shapes: request configs out, reply envelopes in (online and Batch Mode).

Kept apart from ``gemini.py`` so Batch Mode (``batch.py``) and the provider both read replies
the same way without importing each other. Also here: which google-genai errors are worth
another try. 408, 429 and 5xx answers and transport timeouts/connection errors are transient,
retried with backoff, honouring the server's ``RetryInfo.retryDelay`` on 429; any other 4xx is
the request's fault and is not retried. The per-call timeout is set on the client
(``HttpOptions.timeout``), so a hung call surfaces as a timeout here.
"""

from __future__ import annotations

import re
from typing import Any

from google.genai import types

from .backend import LLMRequest
from .provider import Envelope
from .retry import MAX_RETRY_DELAY_S, RETRY_STATUS, provider_retry_config

BLOCK_FINISH = frozenset({
    "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "LANGUAGE", "OTHER",
})
"""Finish reasons that mean the reply was withheld."""


def _enum_name(value: Any) -> str | None:
    if value is None:
        return None
    return str(getattr(value, "value", value))


def envelope_from_response(response: Any) -> Envelope:
    """The parts of a ``GenerateContentResponse`` that the stages and the cache need."""
    usage = getattr(response, "usage_metadata", None)
    tokens_in = int(getattr(usage, "prompt_token_count", 0) or 0)
    tokens_out = int(getattr(usage, "candidates_token_count", 0) or 0)
    tokens_out += int(getattr(usage, "thoughts_token_count", 0) or 0)
    envelope: Envelope = {
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


def envelope_from_dict(response: dict[str, Any]) -> Envelope:
    """Same as ``envelope_from_response`` for a REST JSON reply (batch result files)."""
    parsed = types.GenerateContentResponse._from_response(response=response, kwargs={})
    return envelope_from_response(parsed)


def finish_error(envelope: Envelope) -> str | None:
    """Why a Gemini reply is unusable (blocked, truncated, empty), else None."""
    text = envelope.get("text")
    finish = envelope.get("finish")
    if envelope.get("blocked"):
        return f"blocked: {envelope['blocked']}"
    if finish == "MAX_TOKENS":
        return "truncated: finish reason MAX_TOKENS"
    if finish in BLOCK_FINISH:
        return f"blocked: finish reason {finish}"
    if not text or not str(text).strip():
        return "empty reply: no candidates" if finish is None else "empty reply"
    return None


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


def _transient_transport_errors() -> tuple[type[BaseException], ...]:
    kinds: list[type[BaseException]] = [TimeoutError, ConnectionError]
    # The SDK talks through httpx or its fork httpx2, depending on what is installed.
    for module_name in ("httpx", "httpx2"):
        try:
            module = __import__(module_name)
        except ImportError:
            continue
        for attr in ("TimeoutException", "ConnectError", "RemoteProtocolError", "ReadError"):
            kind = getattr(module, attr, None)
            if isinstance(kind, type) and issubclass(kind, BaseException):
                kinds.append(kind)
    return tuple(kinds)


_TRANSPORT = _transient_transport_errors()


def status_code(exc: BaseException) -> int | None:
    """HTTP status of a google-genai ``APIError`` (None for other exceptions)."""
    code = getattr(exc, "code", None)
    if isinstance(code, int) and hasattr(exc, "details"):
        return code
    return None


def should_retry(exc: BaseException) -> bool:
    """True for errors another attempt may fix: 408/429/5xx and transport timeouts."""
    code = status_code(exc)
    if code is not None:
        return code in RETRY_STATUS or 500 <= code < 600
    return isinstance(exc, _TRANSPORT)


_DURATION = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)s\s*$")


def retry_delay_hint(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait (``google.rpc.RetryInfo.retryDelay``), if any."""
    details: Any = getattr(exc, "details", None)
    if isinstance(details, dict):
        inner = details.get("error", details)
        details = inner.get("details") if isinstance(inner, dict) else None
    if not isinstance(details, list):
        return None
    for item in details:
        if not isinstance(item, dict) or not str(item.get("@type", "")).endswith("RetryInfo"):
            continue
        match = _DURATION.match(str(item.get("retryDelay", "")))
        if match:
            return min(float(match.group(1)), MAX_RETRY_DELAY_S)
    return None


def gemini_retry_delay(exc: BaseException) -> float | None:
    """``Provider.retry_delay`` of google-genai errors: None, 0.0 (backoff) or the server's wait."""
    if not should_retry(exc):
        return None
    hint = retry_delay_hint(exc)
    return hint if hint is not None else 0.0


def model_retry_config(
    max_attempts: int = 5, *, initial_wait: float = 1.0, max_wait: float = 60.0
) -> dict[str, Any]:
    """``provider_retry_config`` for google-genai calls (online, and the Batch Mode API calls).

    Args:
        max_attempts: Attempts in total, the first one included.
        initial_wait: First backoff in seconds (doubles each attempt, plus jitter).
        max_wait: Cap of the backoff.

    Returns:
        A dict for ``tenacity.Retrying(**config)``; the last error is re-raised.
    """
    return provider_retry_config(gemini_retry_delay, max_attempts, initial_wait=initial_wait,
                                 max_wait=max_wait)
