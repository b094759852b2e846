"""The one gate every byte leaving the machine (or written to disk) goes through.

Pass-through placeholder until the privacy issue fills it in; callers must already route all
outgoing/written text through ``redact``.
"""

from __future__ import annotations


def redact(text: str) -> str:
    """Return ``text`` with secrets replaced by typed placeholders."""
    return text
