"""``orf search``: ranked playbooks for a task description or an error text."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import orjson

from ..agents import views
from ..agents.search import SearchIndex
from ..errors import StoreError
from ..exit_codes import EXIT_USAGE
from ..orf import Store
from .app import EXIT_CODES_HELP, json_option, main, settings_from, store_option


def open_store(store: Path | None) -> Store:
    """The store named by ``--store`` / ORF_STORE / [tool.orf] / ./experiences."""
    settings = settings_from(store=store)
    return Store(settings.store, lock_timeout=settings.lock_timeout_s)


@main.command("search", epilog=EXIT_CODES_HELP)
@click.argument("query", nargs=-1, required=True)
@click.option("--limit", type=click.IntRange(1, 100), default=5, show_default=True,
              help="How many playbooks to print.")
@store_option
@json_option
def search(query: tuple[str, ...], limit: int, store: Path | None, as_json: bool) -> None:
    """Rank the store's playbooks for QUERY (a task description or an error message).

    BM25 over title, description, keywords, trap and the error lines a playbook records;
    no network. Prints id, title, description, domain, score and file_path, best first.
    Only playbooks that match are printed (they hold most of what the query says, or the
    query holds their recorded error): none, with "no playbook matches" on stderr, is an
    answer, not an error.

    \b
    Examples:
      orf search "ModuleNotFoundError: No module named 'requests'"
      orf search flaky test rerun --limit 3 --json
    """
    text = " ".join(query).strip()
    if not text:
        click.echo("Error: QUERY is empty", err=True)
        sys.exit(EXIT_USAGE)
    orf = open_store(store)
    if not orf.exists():
        raise StoreError(f"no ORF store at {orf.root} (INDEX.md not found); "
                         f"create one with `orf init --store {orf.root}`")
    index = SearchIndex.load(orf.root)
    hits = index.search(text, limit)
    data = views.search_data(orf.root, hits)
    for rel, (exp_id, why) in sorted(index.withheld.items()):
        click.echo(f"orf: not served: {exp_id} ({orf.root / rel}): {why}; review or remove it",
                   err=True)
    if not hits:
        click.echo(f"orf: {views.NO_MATCH}", err=True)
    if as_json:
        click.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo(views.dump_yaml(data), nl=False)
