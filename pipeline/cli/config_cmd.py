"""``orf config``: the effective settings, where each can be set, and what it does."""

from __future__ import annotations

from typing import Any

import click
import orjson

from ..config import Settings
from .app import json_option, main, settings_from


def settings_rows(settings: Settings) -> list[dict[str, Any]]:
    """One row per setting (detector thresholds flattened as ``detect.NAME``)."""
    rows: list[dict[str, Any]] = []
    for name, field in Settings.model_fields.items():
        if name == "detect":
            continue
        value = getattr(settings, name)
        env = None if name == "prices" else f"ORF_{name.upper()}"
        rows.append({"name": name, "value": value, "env": env, "description": field.description})
    for name, field in type(settings.detect).model_fields.items():
        rows.append({"name": f"detect.{name}", "value": getattr(settings.detect, name),
                     "env": None, "description": field.description})
    return rows


@main.command("config")
@json_option
def config_command(as_json: bool) -> None:
    """Show the effective settings and what each one does.

    Settings come from, lowest first: built-in defaults, `[tool.orf]` in the nearest
    pyproject.toml (detector thresholds under `[tool.orf.detect]`), environment variables
    `ORF_<NAME>`, then command-line flags.

    \b
    Examples:
      orf config
      ORF_MODEL=gemini-2.5-pro orf config --json
    """
    settings = settings_from()
    rows = settings_rows(settings)
    if as_json:
        data = {r["name"]: r["value"] for r in rows}
        data["resolved_backend"] = settings.resolved_backend()
        data["ledger_path"] = str(settings.ledger_path)
        click.echo(orjson.dumps(data, default=str, option=orjson.OPT_INDENT_2).decode())
        return
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        value = r["value"]
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items())
        click.echo(f"{r['name']:<{width}}  {value}")
        desc = " ".join(str(r["description"] or "").split())
        click.echo(f"{'':<{width}}  {desc}" + (f" (env {r['env']})" if r["env"] else ""))
    click.echo(f"\nbackend in use: {settings.resolved_backend()}; ledger: {settings.ledger_path}")
