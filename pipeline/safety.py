"""Text a playbook must never carry to an agent: role tags, injected instructions, hidden text.

Role tags and tool-output delimiters, instruction-like lines, HTML comments and zero-width
characters. Standard library only: the hook, search and the MCP server check every playbook
they would serve with it (one already in the store that fails is withheld), and
``llm/screen.py`` checks every draft before it is written.
"""

from __future__ import annotations

import re

INJECTION: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(pattern, re.IGNORECASE)) for label, pattern in (
        ("role tag", r"</?\s*(?:system|assistant|user|tool_output|tool_result|function_results|"
                     r"instructions?|im_start|im_end)\s*>|<\|im_(?:start|end)\|>"),
        ("injected instruction", r"\bnew (?:policy|instructions?|rules?)\s*:|\byou must now\b|"
                                 r"\bignore (?:all |any )?(?:the )?(?:previous|prior|above)\b"),
        ("hidden comment", r"<!--"),
        ("zero-width character", r"[\u200b-\u200f\u2060\ufeff]"),
    ))
"""(label, pattern): what is never served, whatever the field."""


def unsafe_reason(text: str) -> str | None:
    """Why ``text`` must not reach an agent (``role tag: '</system>'``), or None."""
    for label, pattern in INJECTION:
        m = pattern.search(text)
        if m:
            return f"{label}: {m.group(0)!r}"
    return None
