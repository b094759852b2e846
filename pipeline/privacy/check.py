"""The final scan: which credential shapes are still in a text about to leave."""

from __future__ import annotations

from .redact import scan


def leak_kinds(text: str) -> list[str]:
    """Kinds of the credential-shaped strings ``text`` still holds, each once, in order.

    Used by the draft screen (a draft holding one is dropped) and by the model wrapper,
    ``llm/service.py``, for every provider (a request holding one is refused). Placeholders
    are not hits, so redacted text passes.
    """
    return list(dict.fromkeys(h.kind for h in scan(text)))
