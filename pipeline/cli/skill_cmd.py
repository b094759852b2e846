"""``orf skill install`` and ``orf context``: point agents at the store."""

from __future__ import annotations

from pathlib import Path

import click

from ..agents.skill import CONTEXT_FILES, DEFAULT_TARGET, context_text, install_skill
from .app import EXIT_CODES_HELP, main


@main.group("skill", epilog=EXIT_CODES_HELP)
def skill() -> None:
    """The manage-experience agent skill (agentskills.io format, compatible with ORF's).

    \b
    Examples:
      orf skill install
      orf skill install --target .gemini/skills --store experiences
    """


@skill.command("install", epilog=EXIT_CODES_HELP)
@click.option("--target", type=click.Path(file_okay=False, path_type=Path),
              default=DEFAULT_TARGET, show_default=True,
              help="Skills folder (.claude/skills for Claude Code; e.g. .gemini/skills).")
@click.option("--store", default=None,
              help="Store path the skill's commands pass as --store (default: theirs).")
@click.option("--force", is_flag=True, help="Replace a SKILL.md that orf did not write.")
def install(target: Path, store: str | None, force: bool) -> None:
    """Write <target>/manage-experience/SKILL.md: consult at task start, record after a trap.

    \b
    Examples:
      orf skill install
      orf skill install --target .gemini/skills --store experiences
    """
    path = install_skill(target, store, force)
    click.echo(f"Wrote {path}")


@main.command("context", epilog=EXIT_CODES_HELP)
@click.option("--for", "client", type=click.Choice(sorted(CONTEXT_FILES)), required=True,
              help="claude (CLAUDE.md), gemini (GEMINI.md), codex or agents (AGENTS.md).")
@click.option("--store", default=None,
              help="Store path the commands pass as --store (default: theirs).")
def context(client: str, store: str | None) -> None:
    """Print a short block for CLAUDE.md / GEMINI.md / AGENTS.md pointing agents to the store.

    No playbook text is pasted: the block names the commands that read the store.

    \b
    Examples:
      orf context --for claude >> CLAUDE.md
      orf context --for agents --store experiences
    """
    click.echo(context_text(client, store), nl=False)
