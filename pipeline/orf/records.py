"""Plain records of the ORF store: categories, INDEX entries, experiences, problems."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Category:
    """One entry of INDEX.md's ``categories`` frontmatter list."""

    id: str
    """Domain slug, also the folder name."""
    name: str
    """Display name used in the ``## Category: Name (`id`)`` heading."""
    description: str
    """One or two sentences agents use to route a task to this category."""

    def to_dict(self) -> dict[str, str]:
        """The category as ORF writes it (id, name, description)."""
        return {"id": self.id, "name": self.name, "description": self.description}


@dataclass(frozen=True)
class IndexEntry:
    """One ``* [EXP-ID](domain/EXP-ID.md): summary`` line of INDEX.md."""

    exp_id: str
    """The id in the link text."""
    domain: str
    """The category section the line sits in (empty when outside any section)."""
    rel_path: str
    """The link target, relative to the store root."""
    summary: str
    """Text after the colon."""
    line: int
    """1-based line number in INDEX.md."""


@dataclass
class Experience:
    """One parsed ``<domain>/EXP-YYYYMMDD-NNNN.md`` playbook."""

    id: str
    """``EXP-YYYYMMDD-NNNN``."""
    path: Path
    """Where the file lives."""
    domain: str
    """Category slug (the folder)."""
    title: str
    """Short imperative title."""
    description: str
    """When an agent should load this playbook (<= 1024 characters)."""
    keywords: list[str]
    """Search keywords."""
    complexity: str
    """``low``, ``medium`` or ``high``."""
    created_at: str
    """ISO date ``YYYY-MM-DD``."""
    objective: str
    """Section 1."""
    trap: str
    """Section 2."""
    insight: str
    """Section 3, the text after ``> **Core Principle:**``."""
    validated_path: str
    """Section 4."""
    checklist: list[str]
    """Section 5 items, without their ``- [ ]`` marker."""
    provenance: dict[str, Any] | None = None
    """Where the playbook came from (sessions, signature, backend...); ORF readers ignore it."""
    frontmatter: dict[str, Any] = field(default_factory=dict)
    """The whole frontmatter mapping as read."""
    body: str = ""
    """The Markdown body after the frontmatter."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready view (``path`` as a string)."""
        return {
            "id": self.id, "path": str(self.path), "domain": self.domain, "title": self.title,
            "description": self.description, "keywords": list(self.keywords),
            "complexity": self.complexity, "created_at": self.created_at,
            "objective": self.objective, "trap": self.trap, "insight": self.insight,
            "validated_path": self.validated_path, "checklist": list(self.checklist),
            "provenance": self.provenance,
        }


@dataclass(frozen=True)
class Problem:
    """One validation finding, printed as ``path:line: message``."""

    path: str
    """File the problem is in."""
    line: int | None
    """1-based line, when it points at one."""
    message: str
    """What is wrong."""

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.path}: {self.message}"
        return f"{self.path}:{self.line}: {self.message}"
