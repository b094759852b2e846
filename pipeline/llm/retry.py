"""One tenacity configuration for every provider's calls (``provider_retry_config``).

A provider says whether an error is worth another try and how long to wait
(``Provider.retry_delay``: None, 0.0 for the default backoff, or the server's wait); this module
turns that into bounded attempts with exponential backoff and jitter, every wait capped at
``MAX_RETRY_DELAY_S``. How google-genai errors are classified is ``gemini_wire``'s.
"""

from __future__ import annotations

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
