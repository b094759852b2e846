"""The part of ``pipeline.orf.Store`` the mine stages use, as a Protocol.

The stages read categories and playbooks (store context, dedupe), create playbooks and grow
their provenance (write), and repair the store at the start of a run.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from ..orf.records import Category, Experience


class StoreLike(Protocol):
    """What the stages need of a store (``pipeline.orf.Store`` is the one implementation)."""

    root: Path
    """The store's folder (stale temp files are swept from it)."""

    def exists(self) -> bool:
        """True when INDEX.md is there."""

    def init(self) -> None:
        """Create an empty store."""

    def repair(self) -> list[str]:
        """Finish or undo half-done writes; return what was fixed."""

    def categories(self) -> Sequence[Category]:
        """The INDEX.md categories."""

    def experiences(self) -> Sequence[Experience]:
        """Every readable experience."""

    def read_experience(self, exp_id: str) -> Experience:
        """One experience by id (raises StoreError when missing)."""

    def update_provenance(self, exp_id: str, provenance: dict[str, Any]) -> None:
        """Rewrite one experience's provenance block."""

    def create_experience(self, *, domain: str, title: str, description: str,
                          keywords: list[str], complexity: str, objective: str, trap: str,
                          insight: str, validated_path: str, checklist: list[str],
                          domain_title: str | None = None,
                          domain_description: str | None = None,
                          provenance: dict[str, Any] | None = None) -> Experience:
        """Write one EXP file and its INDEX line; return the Experience."""
