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
    return orjson.dumps(value, option=_OPTS, default=str)


def content_hash(data: bytes | str, size: int = 16) -> str:
    """Return ``b2:<hex>``, a BLAKE2b digest of ``data`` (``size`` bytes)."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return "b2:" + hashlib.blake2b(data, digest_size=size).hexdigest()


def value_hash(value: Any, size: int = 16) -> str:
    """Hash of the canonical JSON of ``value``."""
    return content_hash(canonical_json(value), size)
