"""``orf formats``: list the log format adapters."""

from __future__ import annotations

import click
import orjson

from ..formats.discover import available_adapters
from .app import json_option, main


@main.command("formats")
@json_option
def formats_command(as_json: bool) -> None:
    """List the supported log formats: name (for --format), where the logs live, what it is.

    \b
    Examples:
      orf formats
      orf formats --json
    """
    rows = [{"name": a.name, "where": a.where, "description": a.description}
            for a in available_adapters()]
    if as_json:
        click.echo(orjson.dumps(rows, option=orjson.OPT_INDENT_2).decode())
        return
    width = max((len(r["name"]) for r in rows), default=0)
    for r in rows:
        click.echo(f"{r['name']:<{width}}  {r['description']}")
        click.echo(f"{'':<{width}}  {r['where']}")
