"""Command-line interface: thin click commands over the library.

Each module below registers its commands on ``main`` when imported.
"""

from __future__ import annotations

from . import (  # noqa: F401  (imported for their command registrations)
    analyze_cmd,
    config_cmd,
    consolidate_cmd,
    eval_cmd,
    formats_cmd,
    hook_cmd,
    learn_cmd,
    mcp_cmd,
    mine_cmd,
    redact_cmd,
    search_cmd,
    skill_cmd,
    store_cmds,
    trends_cmd,
)
from .app import main

__all__ = ["main"]
