"""A secret found in a text (``SecretHit``) and how hits become typed placeholders."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from .values import PLACEHOLDER_PREFIX


def placeholder(kind: str) -> str:
    """The text a secret of ``kind`` is replaced with."""
    return f"{PLACEHOLDER_PREFIX}{kind}]"


@dataclass(frozen=True, slots=True)
class SecretHit:
    """One secret found in a text: its kind and the span to replace."""

    kind: str
    """Typed name used in the placeholder (``github-token``, ``postgres-password``, ...)."""
    start: int
    """Start offset of the secret (only the secret part, not its label)."""
    end: int
    """End offset (exclusive)."""


def _resolve(hits: list[SecretHit]) -> list[SecretHit]:
    hits.sort(key=lambda h: (h.start, -(h.end - h.start)))
    out: list[SecretHit] = []
    for h in hits:
        if out and h.start < out[-1].end:
            if h.end > out[-1].end:  # overlapping tail: widen so no piece is left behind
                prev = out[-1]
                out[-1] = SecretHit(prev.kind, prev.start, h.end)
            continue
        out.append(h)
    return out


def replace_hits(text: str, hits: list[SecretHit], counts: Counter[str] | None = None) -> str:
    """Return ``text`` with each of ``hits`` (sorted, not overlapping) replaced by its placeholder.

    Args:
        text: The text the hits were found in.
        hits: Spans to replace, in order.
        counts: When given, incremented by one per placeholder, keyed by kind.

    Returns:
        The redacted text (the same object when there is no hit).
    """
    if not hits:
        return text
    parts: list[str] = []
    pos = 0
    for h in hits:
        parts.append(text[pos:h.start])
        parts.append(placeholder(h.kind))
        pos = h.end
        if counts is not None:
            counts[h.kind] += 1
    parts.append(text[pos:])
    return "".join(parts)
