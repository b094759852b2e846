"""Write experiences in the exact layout of the ORF reference store."""

from __future__ import annotations

from typing import Any

from .experience import CORE_PRINCIPLE, SECTION_TITLES
from .frontmatter import dump_mapping_block, plain_or_quoted, quote


def render_frontmatter(
    *,
    exp_id: str,
    title: str,
    description: str,
    domain: str,
    keywords: list[str],
    complexity: str,
    created_at: str,
    provenance: dict[str, Any] | None = None,
) -> str:
    """The ``---`` block: the seven ORF keys in ORF's order, then ``provenance`` if given."""
    lines = [
        "---",
        f"id: {quote(exp_id)}",
        f"title: {quote(title)}",
        f"description: {quote(description)}",
        f"domain: {quote(domain)}",
        "keywords:",
        *(f"  - {plain_or_quoted(k)}" for k in keywords),
        f"complexity: {quote(complexity)}",
        f"created_at: {quote(created_at)}",
    ]
    text = "\n".join(lines) + "\n"
    if provenance is not None:
        text += dump_mapping_block("provenance", provenance)
    return text + "---\n"


def render_insight(insight: str) -> str:
    """Section 3: the Core Principle blockquote (continuation lines stay quoted)."""
    first, *rest = insight.strip().splitlines() or [""]
    quoted = [f"{CORE_PRINCIPLE} {first}".rstrip()]
    quoted += [f"> {line}".rstrip() for line in rest]
    return "\n".join(quoted)


def render_body(
    *, objective: str, trap: str, insight: str, validated_path: str, checklist: list[str]
) -> str:
    """The five mandatory sections, separated by blank lines like the reference files."""
    parts = [
        objective.strip(),
        trap.strip(),
        render_insight(insight),
        validated_path.strip(),
        "\n".join(f"- [ ] {item.strip()}" for item in checklist),
    ]
    return "".join(
        f"\n## {title}\n{text}\n" for title, text in zip(SECTION_TITLES, parts, strict=True)
    )
