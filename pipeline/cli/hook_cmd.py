"""``orf hook CLIENT`` (the tool hook) and ``orf hook install CLIENT`` (its settings entry).

The console script serves ``orf hook CLIENT`` from ``pipeline.entry`` without loading this
CLI; these commands are the same hook for ``python -m pipeline`` and for ``--help``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..agents import hook as hook_lib
from ..agents.install import TARGETS, install_hook
from ..agents.search import SearchIndex
from .app import EXIT_CODES_HELP, main, store_option
from .search_cmd import open_store


@main.group("hook", epilog=EXIT_CODES_HELP)
def hook() -> None:
    """Show the matching playbook to an agent when a tool call fails.

    \b
    Examples:
      orf hook install claude-code
      echo '{"hook_event_name": "PostToolUseFailure", ...}' | orf hook claude-code
    """


def _client_command(client: str, help_text: str) -> None:
    @hook.command(client, help=help_text)
    @click.option("--store", default=None, help="ORF store folder (default ./experiences, "
                  "env ORF_STORE).")
    def run(store: str | None) -> None:
        argv = [client] + (["--store", store] if store else [])
        sys.exit(hook_lib.main(argv))


_HELP = {
    "claude-code": "Claude Code hook for PostToolUseFailure: reads the hook JSON on stdin, "
                   "prints hookSpecificOutput.additionalContext with the matching playbook, or "
                   "nothing. Always exits 0.",
    "gemini": "Gemini CLI AfterTool hook (same reply shape). Always exits 0.",
    "codex": "Codex PostToolUse hook for Bash, apply_patch and MCP tools (same reply shape; "
             "whether the call failed is read from its rollout). Always exits 0.",
}
for _name, _text in _HELP.items():
    _client_command(_name, _text)


@hook.command("install", epilog=EXIT_CODES_HELP)
@click.argument("client", type=click.Choice(sorted(TARGETS)))
@click.option("--project", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="Project folder holding the client's settings.")
@store_option
@click.option("--absolute", is_flag=True,
              help="Write absolute paths of orf and the store (a private, uncommitted setup).")
def install(client: str, project: Path, store: Path | None, absolute: bool) -> None:
    """Merge the orf hook into the client's project settings, leaving the rest untouched.

    claude-code: .claude/settings.json (PostToolUseFailure, every tool);
    gemini: .gemini/settings.json (AfterTool); codex: .codex/hooks.json (PostToolUse on
    Bash|apply_patch|mcp__.*; Codex loads it in a trusted project and asks you to review
    the new hook once with /hooks).
    Also builds the search cache so the first hook call is fast. The command written holds
    no path of this machine (`orf` on PATH, or paths relative to the project, which teams
    commit); --absolute writes absolute ones.

    \b
    Examples:
      orf hook install claude-code
      orf hook install gemini --project ~/src/app --store ~/src/app/experiences
    """
    orf = open_store(store)
    path, changed = install_hook(client, project, orf.root, absolute)
    if orf.exists():
        SearchIndex.load(orf.root)
    else:
        click.echo(f"warning: no ORF store at {orf.root} yet; the hook stays silent until "
                   "there is one", err=True)
    verb = "Added the orf hook to" if changed else "The orf hook is already in"
    click.echo(f"{verb} {path}")
