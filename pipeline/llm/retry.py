"""One tenacity configuration for every model call, and the Gemini classifier behind it.

408, 429 and 5xx answers and transport timeouts/connection errors are transient: retried with
exponential backoff and jitter, honouring the server's ``RetryInfo.retryDelay`` on 429. Any
other 4xx is the request's fault and is not retried. Attempts are bounded; the per-call timeout
is set on the client (``HttpOptions.timeout``), so a hung call surfaces as a timeout here.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from tenacity import (
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
"""HTTP codes worth another try (plus any other 5xx)."""

DelayOf = Callable[[BaseException], "float | None"]
"""A provider's ``retry_delay``: None (not retryable), 0.0 (backoff), >0 (wait this long)."""

MAX_RETRY_DELAY_S = 120.0
"""Never wait longer than this between attempts, whatever the server asks."""


def sleep(seconds: float) -> None:
    """Sleep between attempts; tests replace this to zero the waits."""
    time.sleep(seconds)


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


class _WaitWithHint:
    """Exponential backoff with jitter, unless the provider said how long to wait."""

    def __init__(self, delay_of: DelayOf, initial: float, maximum: float) -> None:
        self.delay_of = delay_of
        self.backoff = wait_exponential_jitter(initial=initial, max=maximum, jitter=initial)

    def __call__(self, state: RetryCallState) -> float:
        outcome = state.outcome
        exc = outcome.exception() if outcome is not None else None
        hint = self.delay_of(exc) if exc is not None else None
        if hint is not None and hint > 0:
            return min(hint, MAX_RETRY_DELAY_S)
        return float(self.backoff(state))


def provider_retry_config(
    delay_of: DelayOf, max_attempts: int = 5, *, initial_wait: float = 1.0,
    max_wait: float = 60.0,
) -> dict[str, Any]:
    """Keyword arguments for ``tenacity.Retrying`` around one call of any provider.

    Args:
        delay_of: The provider's ``retry_delay``: None (give up), 0.0 (backoff), >0 (wait).
        max_attempts: Attempts in total, the first one included.
        initial_wait: First backoff in seconds (doubles each attempt, plus jitter).
        max_wait: Cap of the backoff.

    Returns:
        A dict for ``tenacity.Retrying(**config)``; the last error is re-raised.
    """
    return {
        "retry": retry_if_exception(lambda exc: delay_of(exc) is not None),
        "stop": stop_after_attempt(max(1, max_attempts)),
        "wait": _WaitWithHint(delay_of, initial_wait, max_wait),
        # Looked up at call time so tests can replace ``retry.sleep``.
        "sleep": lambda seconds: sleep(seconds),
        "reraise": True,
    }


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
