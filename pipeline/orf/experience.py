"""Read one experience file into an ``Experience`` (lenient; ``validate`` is the strict one)."""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import StoreError
from .frontmatter import load_yaml, split_frontmatter
from .records import Experience

SECTION_TITLES = (
    "1. Objective",
    "2. The Trap",
    "3. Abstracted Insight",
    "4. Validated Path",
    "5. Verification Checklist",
)
CORE_PRINCIPLE = "> **Core Principle:**"
_FENCE = re.compile(r"\s{0,3}(`{3,}|~{3,})")
_CHECK_ITEM = re.compile(r"- \[( |x|X)\] (.*\S)\s*\Z")


@dataclass(frozen=True)
class Section:
    """A ``## heading`` of the body and its text."""

    title: str
    """Heading text without the ``## ``."""
    line: int
    """1-based line number of the heading in the file."""
    text: str
    """The lines under the heading up to the next one, stripped."""


def split_sections(body: str, body_line: int) -> tuple[str, list[Section]]:
    """Cut ``body`` at level-2 headings, ignoring ``## `` lines inside code fences.

    Returns:
        The text before the first heading, and the sections in file order.
    """
    preamble: list[str] = []
    sections: list[tuple[str, int, list[str]]] = []
    fence: str | None = None
    for offset, line in enumerate(body.splitlines()):
        match = _FENCE.match(line)
        if match:
            marker = match.group(1)
            if fence is None:
                fence = marker[0] * len(marker)
            elif marker.startswith(fence):
                fence = None
        if fence is None and line.startswith("## "):
            sections.append((line[3:].strip(), body_line + offset, []))
        elif sections:
            sections[-1][2].append(line)
        else:
            preamble.append(line)
    return "\n".join(preamble).strip(), [
        Section(title, line, "\n".join(lines).strip()) for title, line, lines in sections
    ]


def split_insight(text: str) -> str:
    """The Core Principle text of section 3 (blockquote markers removed), or the raw text."""
    if not text.startswith(CORE_PRINCIPLE):
        return text
    lines = text.splitlines()
    quoted = [lines[0][len(CORE_PRINCIPLE):].strip()]
    rest_at = len(lines)
    for index, line in enumerate(lines[1:], start=1):
        if not line.startswith(">"):
            rest_at = index
            break
        quoted.append(line[2:] if line.startswith("> ") else line[1:])
    insight = "\n".join(quoted).strip()
    rest = "\n".join(lines[rest_at:]).strip()
    return f"{insight}\n\n{rest}" if rest else insight


def checklist_items(text: str) -> list[str]:
    """The ``- [ ]`` / ``- [x]`` items of section 5, without their markers."""
    items = []
    for line in text.splitlines():
        match = _CHECK_ITEM.match(line.strip())
        if match:
            items.append(match.group(2))
    return items


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()[:10]
    return str(value)


def parse_experience(path: Path, text: str | None = None) -> Experience:
    """Parse an experience file; missing fields come back empty rather than failing.

    Args:
        path: The file (read when ``text`` is not given).
        text: Its content, when already read.

    Raises:
        StoreError: When the file cannot be read or has no YAML mapping frontmatter.
    """
    if text is None:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise StoreError(f"{path}: cannot read: {exc}") from exc
    split = split_frontmatter(text)
    if split is None:
        raise StoreError(f"{path}:1: no YAML frontmatter (the file must start with '---')")
    meta = load_yaml(split.yaml_text, where=str(path), first_line=split.first_line)
    if not isinstance(meta, dict):
        raise StoreError(f"{path}:{split.first_line}: frontmatter is not a YAML mapping")
    _, sections = split_sections(split.body, split.body_line)
    by_title = {s.title: s.text for s in sections}
    keywords = meta.get("keywords")
    provenance = meta.get("provenance")
    return Experience(
        id=_text(meta.get("id")),
        path=path,
        domain=_text(meta.get("domain")),
        title=_text(meta.get("title")),
        description=_text(meta.get("description")),
        keywords=[_text(k) for k in keywords] if isinstance(keywords, list) else [],
        complexity=_text(meta.get("complexity")),
        created_at=_text(meta.get("created_at")),
        objective=by_title.get(SECTION_TITLES[0], ""),
        trap=by_title.get(SECTION_TITLES[1], ""),
        insight=split_insight(by_title.get(SECTION_TITLES[2], "")),
        validated_path=by_title.get(SECTION_TITLES[3], ""),
        checklist=checklist_items(by_title.get(SECTION_TITLES[4], "")),
        provenance=provenance if isinstance(provenance, dict) else None,
        frontmatter=meta,
        body=split.body,
    )
