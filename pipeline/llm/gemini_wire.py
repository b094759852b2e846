"""google-genai wire shapes: request configs out, reply envelopes in (online and Batch Mode).

Kept apart from ``gemini.py`` so Batch Mode (``batch.py``) and the provider both read replies
the same way without importing each other.
"""

from __future__ import annotations

from typing import Any

from google.genai import types

from .backend import LLMRequest
from .provider import Envelope

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
