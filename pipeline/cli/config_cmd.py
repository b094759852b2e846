"""``orf config``: every effective setting, the layer it comes from, and what it does."""

from __future__ import annotations

import os
from typing import Any

import click
import orjson

from ..config import Settings, setting_sources
from ..llm.registry import PROVIDERS
from .app import json_option, main, settings_from

# Settings whose default is computed: what to show instead of an empty value.
_COMPUTED = {
    "ledger": "<store>/../.orf/ledger.db",
    "backend": "gemini when GEMINI_API_KEY/GOOGLE_API_KEY is set, else heuristic",
}


def _effective(settings: Settings, name: str) -> Any:
    """The value a run uses (the computed one for ``ledger`` and ``backend``)."""
    if name == "ledger":
        return settings.ledger_path
    if name == "backend":
        return settings.resolved_backend()
    return getattr(settings, name)


def key_is_set(settings: Settings) -> bool:
    """Whether the variable ``openai_api_key_env`` names holds a key (its value is never shown)."""
    return bool(os.environ.get(settings.openai_api_key_env, "").strip())


def backend_rows() -> list[dict[str, Any]]:
    """One row per registered backend: name, whether it runs offline, what it is."""
    return [{"name": spec.name, "offline": spec.offline, "help": spec.help}
            for spec in PROVIDERS.values()]


def settings_rows(settings: Settings,
                  sources: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """One row per setting (detector thresholds flattened as ``detect.NAME``)."""
    sources = sources or {}
    rows: list[dict[str, Any]] = []
    for name, field in Settings.model_fields.items():
        if name == "detect":
            continue
        source = sources.get(name, "default")
        if source == "default" and name in _COMPUTED:
            source = f"default: {_COMPUTED[name]}"
        env = None if name == "prices" else f"ORF_{name.upper()}"
        rows.append({"name": name, "value": _effective(settings, name), "source": source,
                     "env": env, "description": field.description})
    for name, field in type(settings.detect).model_fields.items():
        key = f"detect.{name}"
        rows.append({"name": key, "value": getattr(settings.detect, name),
                     "source": sources.get(key, "default"), "env": None,
                     "description": field.description})
    return rows


@main.command("config")
@json_option
def config_command(as_json: bool) -> None:
    """Show each effective setting, where it comes from, and what it does.

    Settings come from, lowest first: built-in defaults, `[tool.orf]` in the nearest
    pyproject.toml (detector thresholds under `[tool.orf.detect]`), environment variables
    `ORF_<NAME>`, then command-line flags. Each line names the layer that set the value.
    The registered backends follow, with what each one needs.

    \b
    Examples:
      orf config
      ORF_MODEL=gemini-2.5-pro orf config --json
    """
    settings = settings_from()
    rows = settings_rows(settings, setting_sources())
    if as_json:
        data = {r["name"]: r["value"] for r in rows}
        data["sources"] = {r["name"]: r["source"] for r in rows}
        data["resolved_backend"] = settings.resolved_backend()
        data["ledger_path"] = str(settings.ledger_path)
        data["openai_api_key_set"] = key_is_set(settings)
        data["backends"] = backend_rows()
        click.echo(orjson.dumps(data, default=str, option=orjson.OPT_INDENT_2).decode())
        return
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        value = r["value"]
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items())
        if value is None:
            value = "not set"
        if r["name"] == "openai_api_key_env":
            value = f"{value} ({'set' if key_is_set(settings) else 'not set'})"
        click.echo(f"{r['name']:<{width}}  {value}  ({r['source']})")
        # Docstrings use RST double backticks; a terminal reader sees Markdown's single ones.
        desc = " ".join(str(r["description"] or "").split()).replace("``", "`")
        click.echo(f"{'':<{width}}  {desc}" + (f" (env {r['env']})" if r["env"] else ""))
    click.echo("")
    click.echo("backends (--backend, ORF_BACKEND):")
    names = backend_rows()
    name_width = max(len(b["name"]) for b in names)
    for b in names:
        mark = "*" if b["name"] == settings.resolved_backend() else " "
        click.echo(f"{mark} {b['name']:<{name_width}}  {b['help']}")
