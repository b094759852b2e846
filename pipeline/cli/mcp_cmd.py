"""``orf mcp``: serve the store to MCP clients over stdio (read-only)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..errors import StoreError
from ..exit_codes import EXIT_ERROR
from .app import EXIT_CODES_HELP, main, store_option
from .search_cmd import open_store


@main.command("mcp", epilog=EXIT_CODES_HELP)
@store_option
def mcp(store: Path | None) -> None:
    """Run a Model Context Protocol server for the store over stdio.

    Read-only tools: list_categories, get_frontmatter(category), read_experience(id) and
    search_experiences(query, limit), answering with the text the orf verbs print, and
    learn_sessions(path); submit_drafts(drafts_json) writes the drafts the verifier accepts.
    Needs the mcp SDK: pip install 'orf-pipeline[agents]'.

    \b
    Examples:
      claude mcp add orf -- orf mcp --store "$PWD/experiences"
      orf mcp --store /srv/playbooks/experiences
    """
    from ..agents import mcp_server

    orf = open_store(store)
    if not orf.exists():
        raise StoreError(f"no ORF store at {orf.root} (INDEX.md not found); "
                         f"create one with `orf init --store {orf.root}`")
    try:
        server = mcp_server.build_server(orf)
    except ImportError:
        click.echo(f"Error: {mcp_server.SDK_MISSING}", err=True)
        sys.exit(EXIT_ERROR)
    server.run("stdio")
