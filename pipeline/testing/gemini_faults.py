"""Scripted replies for the fake Gemini server: ``Fault``, its builders, and what may be queued."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Fault:
    """A scripted reply: an HTTP error, a slow reply, or an odd model answer."""

    kind: str
    """``http``, ``slow``, ``text``, ``empty``, ``max_tokens``, ``blocked``."""
    status: int = 200
    """HTTP status for ``http`` faults."""
    retry_delay: str | None = None
    """``RetryInfo.retryDelay`` (e.g. ``"2s"``) sent with a 429."""
    seconds: float = 0.0
    """Delay of a ``slow`` reply."""
    text: str = ""
    """Reply text for ``text``/``max_tokens``; block reason for ``blocked``."""


def rate_limited(retry_delay: str | None = "2s") -> Fault:
    """429 RESOURCE_EXHAUSTED, with a RetryInfo delay when given."""
    return Fault("http", status=429, retry_delay=retry_delay)


def server_error(status: int = 500) -> Fault:
    """A 5xx (or any other status) error reply."""
    return Fault("http", status=status)


def slow(seconds: float) -> Fault:
    """Wait ``seconds`` before answering normally (longer than the client timeout = timeout)."""
    return Fault("slow", seconds=seconds)


def text_reply(text: str) -> Fault:
    """A normal reply with exactly ``text``."""
    return Fault("text", text=text)


def invalid_json() -> Fault:
    """A reply whose text is not JSON."""
    return Fault("text", text="Sure! Here is the answer: {outcome: success")


def empty_candidates() -> Fault:
    """A 200 reply with no candidates at all."""
    return Fault("empty")


def max_tokens(text: str = '{"drafts": [{"title": "Trunc') -> Fault:
    """A reply cut off by the output limit (finishReason MAX_TOKENS)."""
    return Fault("max_tokens", text=text)


def blocked(reason: str = "SAFETY") -> Fault:
    """A prompt blocked by safety filters (promptFeedback.blockReason)."""
    return Fault("blocked", text=reason)


Item = Fault | str | dict[str, Any]
"""A queued reply: a fault, the text of a normal reply, or a whole response JSON object."""

Responder = Callable[[dict[str, Any]], Item | None]
"""Called with the request JSON; returns a reply item, or None for the automatic one."""
