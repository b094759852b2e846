"""One tenacity configuration for every Gemini call, and the classifier behind it.

408, 429 and 5xx answers and transport timeouts/connection errors are transient: retried with
exponential backoff and jitter, honouring the server's ``RetryInfo.retryDelay`` on 429. Any
other 4xx is the request's fault and is not retried. Attempts are bounded; the per-call timeout
is set on the client (``HttpOptions.timeout``), so a hung call surfaces as a timeout here.
"""

from __future__ import annotations

import re
import time
from typing import Any

from tenacity import (
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
"""HTTP codes worth another try (plus any other 5xx)."""

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


class _WaitWithHint:
    """Exponential backoff with jitter, unless the server said how long to wait."""

    def __init__(self, initial: float, maximum: float) -> None:
        self.backoff = wait_exponential_jitter(initial=initial, max=maximum, jitter=initial)

    def __call__(self, state: RetryCallState) -> float:
        outcome = state.outcome
        exc = outcome.exception() if outcome is not None else None
        hint = retry_delay_hint(exc) if exc is not None else None
        return hint if hint is not None else float(self.backoff(state))


def model_retry_config(
    max_attempts: int = 5, *, initial_wait: float = 1.0, max_wait: float = 60.0
) -> dict[str, Any]:
    """Keyword arguments for ``tenacity.Retrying`` around one model call.

    Args:
        max_attempts: Attempts in total, the first one included.
        initial_wait: First backoff in seconds (doubles each attempt, plus jitter).
        max_wait: Cap of the backoff.

    Returns:
        A dict for ``tenacity.Retrying(**config)``; the last error is re-raised.
    """
    return {
        "retry": retry_if_exception(should_retry),
        "stop": stop_after_attempt(max(1, max_attempts)),
        "wait": _WaitWithHint(initial_wait, max_wait),
        # Looked up at call time so tests can replace ``retry.sleep``.
        "sleep": lambda seconds: sleep(seconds),
        "reraise": True,
    }
