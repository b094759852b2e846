"""INDEX.md: parse it, and edit it line by line so everything else stays byte-identical.

Edits never re-serialize the YAML: comments, key order and quoting of the frontmatter, and
every other entry of the body, are kept as they were. Each edit is checked by re-parsing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import StoreError
from .frontmatter import Split, load_yaml, quote, split_frontmatter
from .records import Category, IndexEntry

SPEC_VERSION = "0.2"
HEADING_RE = re.compile(r"## Category: (?P<name>.*?) \(`(?P<id>[^`]*)`\)\s*\Z")
ENTRY_RE = re.compile(r"\* \[(?P<id>[^\]]*)\]\((?P<link>[^)]*)\):[ \t]*(?P<summary>.*?)\s*\Z")
_ENTRY_START = re.compile(r"[*-] ")
_TOP_KEY = re.compile(r"[^\s#-]")


@dataclass(frozen=True)
class Heading:
    """A ``## Category: Name (`id`)`` line."""

    id: str
    """Category id in the backticks."""
    name: str
    """Display name."""
    line: int
    """1-based line number."""


@dataclass
class IndexDoc:
    """INDEX.md as read: frontmatter, category headings, entry lines, odd lines."""

    text: str
    """The whole file."""
    split: Split
    """Frontmatter position."""
    meta: dict[str, Any]
    """The frontmatter mapping."""
    headings: list[Heading] = field(default_factory=list)
    """Category section headings in order."""
    entries: list[IndexEntry] = field(default_factory=list)
    """Entry lines in order."""
    malformed: list[tuple[int, str]] = field(default_factory=list)
    """(line, text) of list lines in the body that are not valid entries."""

    def categories(self) -> list[Category]:
        """The ``categories`` frontmatter list (non-mapping items skipped)."""
        raw = self.meta.get("categories") or []
        out = []
        for item in raw if isinstance(raw, list) else []:
            if isinstance(item, dict):
                out.append(Category(str(item.get("id", "")), str(item.get("name", "")),
                                    str(item.get("description", ""))))
        return out


def parse_index(text: str, where: str = "INDEX.md") -> IndexDoc:
    """Parse INDEX.md text.

    Raises:
        StoreError: When there is no frontmatter or it is not a YAML mapping.
    """
    split = split_frontmatter(text)
    if split is None:
        raise StoreError(f"{where}:1: no YAML frontmatter (the file must start with '---')")
    meta = load_yaml(split.yaml_text, where=where, first_line=split.first_line)
    if not isinstance(meta, dict):
        raise StoreError(f"{where}:{split.first_line}: frontmatter is not a YAML mapping")
    doc = IndexDoc(text=text, split=split, meta=meta)
    current = ""
    for offset, line in enumerate(split.body.splitlines()):
        number = split.body_line + offset
        heading = HEADING_RE.match(line)
        if heading:
            current = heading.group("id")
            doc.headings.append(Heading(current, heading.group("name"), number))
            continue
        if line.startswith("## "):
            current = ""
            continue
        entry = ENTRY_RE.match(line)
        if entry:
            doc.entries.append(IndexEntry(entry.group("id"), current, entry.group("link"),
                                          entry.group("summary"), number))
        elif _ENTRY_START.match(line):
            doc.malformed.append((number, line))
    return doc


def empty_index(today: str) -> str:
    """The INDEX.md of a new store: spec 0.2, no categories."""
    return (
        "---\n"
        f'spec_version: "{SPEC_VERSION}"\n'
        f'last_updated: "{today}"\n'
        "categories: []\n"
        "---\n"
        "\n"
        "# Experiences Index\n"
    )


def entry_line(exp_id: str, domain: str, summary: str) -> str:
    """One INDEX entry line (summary folded onto one line)."""
    summary = " ".join(summary.split())
    return f"* [{exp_id}]({domain}/{exp_id}.md): {summary}\n"


def _replace_yaml(text: str, split: Split, new_yaml: str) -> str:
    return text[: split.yaml_start] + new_yaml + text[split.yaml_end:]


def set_last_updated(text: str, day: str) -> str:
    """Set ``last_updated`` in place (inserted after ``spec_version`` when absent)."""
    doc = parse_index(text)
    lines = doc.split.yaml_text.splitlines(keepends=True)
    new_line = f"last_updated: {quote(day)}\n"
    for i, line in enumerate(lines):
        if re.match(r"last_updated\s*:", line):
            lines[i] = new_line
            break
    else:
        at = next((i + 1 for i, line in enumerate(lines)
                   if re.match(r"spec_version\s*:", line)), 0)
        lines.insert(at, new_line)
    return _replace_yaml(text, doc.split, "".join(lines))


def add_category(text: str, category: Category) -> str:
    """Append ``category`` to the frontmatter ``categories`` list, keeping the rest as is.

    Raises:
        StoreError: When the list is written in a form this line editor cannot extend
            (e.g. a non-empty flow list); the file is then left alone.
    """
    doc = parse_index(text)
    before = doc.categories()
    lines = doc.split.yaml_text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if re.match(r"categories\s*:", line)), None)
    if start is None:
        lines.append("categories:\n")
        start = len(lines) - 1
    elif lines[start].split(":", 1)[1].strip() in ("[]", "", "~", "null"):
        lines[start] = "categories:\n"
    end = start + 1
    while end < len(lines) and not _TOP_KEY.match(lines[end]):
        end += 1
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    item_indent = "  "
    for line in lines[start + 1:end]:
        match = re.match(r"(\s*)- ", line)
        if match:
            item_indent = match.group(1)
            break
    pad = item_indent + "  "
    item = (
        f"{item_indent}- id: {quote(category.id)}\n"
        f"{pad}name: {quote(category.name)}\n"
        f"{pad}description: {quote(category.description)}\n"
    )
    if end > 0 and not lines[end - 1].endswith("\n"):
        lines[end - 1] += "\n"
    lines.insert(end, item)
    new_text = _replace_yaml(text, doc.split, "".join(lines))
    if parse_index(new_text).categories() != [*before, category]:
        raise StoreError(
            "cannot add a category to INDEX.md: its 'categories' list is not a block list; "
            "add the category by hand or rewrite the list in block style"
        )
    return new_text


def insert_entry(text: str, domain: str, line: str, heading_name: str | None = None) -> str:
    """Insert an entry line at the end of ``domain``'s section (created at the end if missing).

    Args:
        text: INDEX.md content.
        domain: The category id.
        line: The full entry line, ending in a newline.
        heading_name: Display name for a new section heading.
    """
    doc = parse_index(text)
    lines = text.splitlines(keepends=True)
    heading = next((h for h in doc.headings if h.id == domain), None)
    if heading is None:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        if lines and lines[-1].strip():
            lines.append("\n")
        lines.append(f"## Category: {heading_name or domain} (`{domain}`)\n")
        lines.append(line)
        return "".join(lines)
    after = heading.line  # 1-based heading line == 0-based index of the next line
    for entry in doc.entries:
        if entry.domain == domain and entry.line > heading.line:
            after = max(after, entry.line)
    if after > 0 and not lines[after - 1].endswith("\n"):
        lines[after - 1] += "\n"
    lines.insert(after, line)
    return "".join(lines)


def remove_entry(text: str, exp_id: str) -> str:
    """Drop every entry line of ``exp_id``; other lines are untouched."""
    doc = parse_index(text)
    drop = {e.line for e in doc.entries if e.exp_id == exp_id}
    lines = text.splitlines(keepends=True)
    return "".join(line for number, line in enumerate(lines, start=1) if number not in drop)
