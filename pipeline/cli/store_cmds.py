"""ORF-compatible store verbs (list/get/read/create) plus ``validate`` and ``init``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
import orjson
import yaml

from ..agents.search import withheld
from ..agents.views import frontmatter_rows
from ..errors import StoreError
from ..exit_codes import EXIT_ERROR
from ..gitutil import ignore_state_folder
from ..orf import Store, check_domain, validate_store
from .app import EXIT_CODES_HELP, json_option, main, settings_from, store_option
from .checks import require_store

# The reference script's default, so agents driving `create-experience` the ORF way still work.
DEFAULT_CHECKLIST_ITEM = "Verify fix in target runtime environment."


def _open_store(store: Path | None, must_exist: bool = True) -> Store:
    settings = settings_from(store=store)
    if must_exist:
        require_store(settings.store)  # only `orf init` creates a store
    return Store(settings.store, lock_timeout=settings.lock_timeout_s)


def _emit(data: dict[str, Any], as_json: bool) -> None:
    if as_json:
        click.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())
    else:
        # YAML like ORF's reference script prints it, so agents read the same shape.
        click.echo(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1 << 30),
                   nl=False)


@main.command("list-categories", epilog=EXIT_CODES_HELP)
@store_option
@json_option
def list_categories(store: Path | None, as_json: bool) -> None:
    """List the store's categories (id, name, description) from INDEX.md.

    \b
    Examples:
      orf list-categories
      orf list-categories --store ../other/experiences --json
    """
    categories = _open_store(store).categories()
    _emit({"categories": [c.to_dict() for c in categories]}, as_json)


@main.command("get-frontmatter", epilog=EXIT_CODES_HELP)
@click.option("--category", required=True, help="Category (domain) id, e.g. python-scripting.")
@store_option
@json_option
def get_frontmatter(category: str, store: Path | None, as_json: bool) -> None:
    """Show id, title, description and keywords of every playbook in one category.

    \b
    Examples:
      orf get-frontmatter --category python-scripting
      orf get-frontmatter --category agent-loops --json
    """
    check_domain(category)
    _emit({"experiences": frontmatter_rows(_open_store(store), category)}, as_json)


@main.command("read-experience", epilog=EXIT_CODES_HELP)
@click.option("--id", "exp_id", required=True, help="Experience id, e.g. EXP-20260720-0001.")
@store_option
@json_option
def read_experience(exp_id: str, store: Path | None, as_json: bool) -> None:
    """Print one playbook (the Markdown file as is, or its fields with --json).

    \b
    Examples:
      orf read-experience --id EXP-20260720-0001
      orf read-experience --id EXP-20260720-0001 --json | jq .insight
    """
    experience = _open_store(store).read_experience(exp_id)
    why = withheld(experience)
    if why is not None:
        # The verb agents call to follow a playbook: an injected line never reaches them.
        raise StoreError(f"{exp_id} is not served: {why} (review {experience.path})")
    if as_json:
        click.echo(orjson.dumps(experience.to_dict(), option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo(experience.path.read_text(encoding="utf-8"), nl=False)


@main.command("create-experience", epilog=EXIT_CODES_HELP)
@click.option("--domain", required=True, help="Category id (lowercase slug); new ones are added.")
@click.option("--title", required=True, help="Short imperative title (one line).")
@click.option("--description", required=True, help="When to load it (max 1024 characters).")
@click.option("--keywords", required=True, help="Comma-separated keywords.")
@click.option("--complexity", type=click.Choice(["low", "medium", "high"]), default="medium",
              show_default=True, help="How involved the playbook is.")
@click.option("--objective", required=True, help="Section 1: the task that led here.")
@click.option("--trap", required=True, help="Section 2: the failure mode.")
@click.option("--insight", required=True, help="Section 3: the Core Principle.")
@click.option("--validated-path", required=True, help="Section 4: what worked.")
@click.option("--checklist-item", "checklist", multiple=True,
              help="Section 5 item (repeatable; default: the ORF reference's generic item).")
@click.option("--domain-title", default=None, help="Display name when the domain is new.")
@click.option("--domain-description", default=None, help="Description when the domain is new.")
@store_option
@json_option
def create_experience(
    domain: str,
    title: str,
    description: str,
    keywords: str,
    complexity: str,
    objective: str,
    trap: str,
    insight: str,
    validated_path: str,
    checklist: tuple[str, ...],
    domain_title: str | None,
    domain_description: str | None,
    store: Path | None,
    as_json: bool,
) -> None:
    """Write a new playbook and list it in INDEX.md (safe with concurrent writers).

    The id is EXP-<today>-<NNNN>, NNNN being the highest sequence of today across the
    store plus one. The store must exist (see `orf init`).

    \b
    Examples:
      orf create-experience --domain agent-loops --title "Stop rerunning a failing test" \\
        --description "Trigger when the same test failed twice in a row." \\
        --keywords pytest,retry --complexity low --objective "..." --trap "..." \\
        --insight "..." --validated-path "..." \\
        --checklist-item "The rerun follows a code change" --checklist-item "..."
    """
    experience = _open_store(store).create_experience(
        domain=domain, title=title, description=description,
        keywords=keywords.split(","), complexity=complexity, objective=objective, trap=trap,
        insight=insight, validated_path=validated_path,
        checklist=list(checklist) or [DEFAULT_CHECKLIST_ITEM],
        domain_title=domain_title, domain_description=domain_description,
    )
    if as_json:
        data = {"id": experience.id, "domain": experience.domain, "path": str(experience.path)}
        click.echo(orjson.dumps(data).decode())
    else:
        click.echo(f"Successfully created experience record {experience.id} at {experience.path}")


@main.command("validate", epilog=EXIT_CODES_HELP)
@click.argument("store_arg", metavar="[STORE]", required=False,
                type=click.Path(file_okay=False, path_type=Path))
@click.option("--repair", is_flag=True,
              help="First remove stale temp files and list unlisted playbooks in INDEX.md.")
@store_option
def validate(store_arg: Path | None, repair: bool, store: Path | None) -> None:
    """Check a store strictly; print each problem as path:line: message and exit 1.

    Rules: the seven frontmatter keys with their types, id matching the file name, domain
    matching the folder, description <= 1024 characters, the five sections in order,
    section 3 starting with "> **Core Principle:**", at least one "- [ ]" item, every
    file listed in INDEX.md and every INDEX.md link resolving.

    \b
    Examples:
      orf validate
      orf validate ../shared/orf-reference/experiences
      orf validate --repair --store experiences
    """
    orf = _open_store(store_arg or store)
    if repair:
        for message in orf.repair():
            click.echo(f"repair: {message}", err=True)
    problems = validate_store(orf.root)
    if problems:
        for problem in problems:
            click.echo(str(problem))
        click.echo(f"Error: {len(problems)} problem(s) in {orf.root}", err=True)
        sys.exit(EXIT_ERROR)
    click.echo(f"OK: {orf.root} is valid ({len(orf.experiences())} experiences, "
               f"{len(orf.categories())} categories)")


@main.command("init", epilog=EXIT_CODES_HELP)
@click.argument("store_arg", metavar="[PATH]", required=False,
                type=click.Path(file_okay=False, path_type=Path))
@store_option
def init(store_arg: Path | None, store: Path | None) -> None:
    """Create an empty store: INDEX.md with spec_version "0.2" and no categories.

    Does nothing when the store already has an INDEX.md. This is the only command that
    creates a store; the others refuse a store path that does not exist. In a git work tree,
    `.orf/` (the ledger and locks beside the store) is added to the .gitignore there.

    \b
    Examples:
      orf init
      orf init /srv/playbooks/experiences
      orf init --store /srv/playbooks/experiences
    """
    orf = _open_store(store_arg or store, must_exist=False)
    if orf.exists():
        click.echo(f"Store already exists at {orf.root} (nothing changed)")
        return
    orf.init()
    click.echo(f"Created empty store at {orf.root}")
    ignored = ignore_state_folder(orf.root)
    if ignored is not None:
        click.echo(f"Added .orf/ (orf's ledger and locks, never to commit) to {ignored}")
