"""The ORF store: read, validate and write INDEX.md and experience playbooks."""

from __future__ import annotations

from .ids import check_domain, check_exp_id, new_experience_id
from .records import Category, Experience, IndexEntry, Problem
from .store import Store, init_store
from .validate import validate_store

__all__ = [
    "Category",
    "Experience",
    "IndexEntry",
    "Problem",
    "Store",
    "check_domain",
    "check_exp_id",
    "init_store",
    "new_experience_id",
    "validate_store",
]
