"""The text agents read: the same YAML and Markdown the ORF verbs print, for the MCP tools.

``orf list-categories``, ``orf get-frontmatter`` and ``orf read-experience`` print these
exact strings (tests compare them), so an agent gets one shape whether it runs the command
or calls the MCP tool: small answers first (categories, then frontmatter, then one file).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ..errors import StoreError
from ..orf import Store, check_domain
from .search import Hit, SearchIndex, withheld


def dump_yaml(data: dict[str, Any]) -> str:
    """YAML as ORF's reference script prints it (key order kept, unicode, no wrapping)."""
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1 << 30)


def categories_text(store: Store) -> str:
    """What ``orf list-categories`` prints."""
    return dump_yaml({"categories": [c.to_dict() for c in store.categories()]})


def frontmatter_text(store: Store, category: str) -> str:
    """What ``orf get-frontmatter --category CATEGORY`` prints.

    Raises:
        InvalidIdentifier: When ``category`` is not a slug.
        StoreError: When the store has no such category.
    """
    return dump_yaml({"experiences": frontmatter_rows(store, category)})


def frontmatter_rows(store: Store, category: str) -> list[dict[str, Any]]:
    """The frontmatter of each playbook of ``category``, by id (``orf get-frontmatter``'s rows).

    Raises:
        InvalidIdentifier: When ``category`` is not a slug.
        StoreError: When the store has no such category.
    """
    check_domain(category)
    known = {c.id for c in store.categories()}
    if category not in known and not (store.root / category).is_dir():
        raise StoreError(f"category '{category}' not found in {store.root}; "
                         "see `orf list-categories`")
    return [
        {"id": e.id, "title": e.title, "description": e.description,
         "keywords": e.keywords, "file_path": str(e.path)}
        for e in sorted(store.experiences(), key=lambda e: e.id)
        if e.path.parent.name == category
    ]


def experience_text(store: Store, exp_id: str) -> str:
    """What ``orf read-experience --id EXP_ID`` prints: the playbook file as is."""
    exp = store.read_experience(exp_id)
    why = withheld(exp)
    if why is not None:
        raise StoreError(f"{exp_id} is not served: {why} (review {exp.path})")
    path = exp.path
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"{path}: cannot read: {exc}") from exc


NO_MATCH = "no playbook matches this query"
"""What ``orf search`` and the MCP search tool say when no playbook passes the floor."""


def search_data(root: Path, hits: list[Hit]) -> dict[str, Any]:
    """The mapping ``orf search`` prints (YAML, or JSON with ``--json``)."""
    return {"results": [hit.to_dict(root) for hit in hits]}


def search_text(store: Store, query: str, limit: int) -> str:
    """What ``orf search QUERY --limit LIMIT`` prints.

    Raises:
        StoreError: When the store has no INDEX.md.
    """
    if not store.exists():
        raise StoreError(f"no ORF store at {store.root} (INDEX.md not found); "
                         f"create one with `orf init --store {store.root}`")
    hits = SearchIndex.load(store.root).search(query, limit)
    if not hits:
        return NO_MATCH + "\n"
    return dump_yaml(search_data(store.root, hits))
