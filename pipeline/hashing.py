"""Canonical JSON and content hashes used for every dedupe/cache key.

Changing ``canonical_json`` (key order, separators, options) changes every key the ledger and
the store hold: bump the ``b2:`` tag if you ever have to.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

_OPTS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def canonical_json(value: Any) -> bytes:
    """Encode ``value`` as JSON with sorted keys and no whitespace."""
    try:
        return orjson.dumps(value, option=_OPTS, default=str)
    except TypeError:
        # orjson refuses integers beyond 64 bits, which a log may legally hold: encode
        # those as their decimal string rather than lose the record.
        return orjson.dumps(_big_ints_as_str(value), option=_OPTS, default=str)


def _big_ints_as_str(value: Any, depth: int = 0) -> Any:
    if isinstance(value, bool) or depth > 64:
        return value
    if isinstance(value, int):
        return str(value) if not -(2**63) <= value < 2**64 else value
    if isinstance(value, dict):
        return {k: _big_ints_as_str(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_big_ints_as_str(v, depth + 1) for v in value]
    return value


def content_hash(data: bytes | str, size: int = 16) -> str:
    """Return ``b2:<hex>``, a BLAKE2b digest of ``data`` (``size`` bytes)."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return "b2:" + hashlib.blake2b(data, digest_size=size).hexdigest()


def value_hash(value: Any, size: int = 16) -> str:
    """Hash of the canonical JSON of ``value``."""
    return content_hash(canonical_json(value), size)
