"""The call cache: identical requests are answered from the ledger; new calls are recorded.

Every model call goes through here, with tokens, cost, latency and status.

A cached entry is the model's whole answer (text, finish reason, block reason) as JSON, so a
reply that was unusable (truncated, blocked) is unusable again on rerun without a new call.
Transport failures are recorded as ``failed`` and are not cached: a rerun tries again.
"""

from __future__ import annotations

import threading
from typing import Any

import orjson

from ..hashing import value_hash
from ..ledger import Ledger


def request_key(model: str, system: str, prompt: str, schema: dict[str, Any]) -> str:
    """Cache key of a request; changing this encoding invalidates every cached reply."""
    return value_hash({"model": model, "system": system, "prompt": prompt, "schema": schema})


class CallCache:
    """Thread-safe front of the ledger's ``llm_calls`` table (or of a dict without ledger)."""

    def __init__(self, ledger: Ledger | None) -> None:
        self.ledger = ledger
        self._memory: dict[str, dict[str, Any]] = {}
        # One sqlite connection is shared by the worker threads; serialize its use.
        self._lock = threading.Lock()

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored answer envelope for ``key``, if any."""
        with self._lock:
            if key in self._memory:
                return self._memory[key]
            if self.ledger is None:
                return None
            raw = self.ledger.cached_response(key)
        if raw is None:
            return None
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None

    def record(self, *, key: str, envelope: dict[str, Any] | None, **fields: Any) -> None:
        """Record one call (``status`` ok/failed/cached) and cache ``envelope`` when ok."""
        with self._lock:
            if envelope is not None and fields.get("status") == "ok":
                self._memory[key] = envelope
            if self.ledger is not None:
                response = orjson.dumps(envelope).decode() if envelope is not None else None
                self.ledger.record_call(cache_key=key, response=response, **fields)
