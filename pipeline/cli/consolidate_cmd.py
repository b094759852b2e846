"""Command ``orf consolidate``: merge overlapping or conflicting playbooks into one candidate."""

from __future__ import annotations

from pathlib import Path

import click
import orjson

from .app import EXIT_CODES_HELP, json_option, ledger_option, main, settings_from, store_option


@main.command("consolidate", epilog=EXIT_CODES_HELP)
@store_option
@ledger_option
@click.option("--dry-run", is_flag=True, help="Show the groups; write nothing.")
@click.option("--lock-timeout", type=float, default=None,
              help="Seconds to wait for another run's store lock.")
@json_option
def consolidate(store: Path | None, ledger: Path | None, dry_run: bool,
                lock_timeout: float | None, as_json: bool) -> None:
    """Find playbooks that overlap or conflict and propose one merged candidate per group.

    Overlap: a shared trap signature, or trap and insight that read alike. Conflict: the same
    trigger with validated paths that disagree (the merged candidate keeps every path for the
    reviewer to choose). The candidate is written uncommitted, names the playbooks it replaces
    and keeps their provenance; `orf review` shows the group, `orf pr` proposes it.

    \b
    Examples:
      orf consolidate --dry-run
      orf consolidate --store experiences && orf review
    """
    from ..consolidate import consolidate as run
    from ..errors import StoreError
    from ..ledger import Ledger
    from ..orf import Store

    settings = settings_from(store=store, ledger=ledger, lock_timeout_s=lock_timeout)
    st = Store(settings.store, lock_timeout=settings.lock_timeout_s)
    if not st.exists():
        raise StoreError(f"no ORF store at {settings.store} (INDEX.md not found); create one "
                         f"with `orf init --store {settings.store}`")
    with Ledger(settings.ledger_path, store=settings.store) as led:
        groups = run(st, led, dry_run=dry_run, lock_timeout=settings.lock_timeout_s)
    if as_json:
        click.echo(orjson.dumps({"dry_run": dry_run, "groups": [g.to_dict() for g in groups]},
                                option=orjson.OPT_INDENT_2).decode())
        return
    if not groups:
        click.echo("No overlapping or conflicting playbooks.")
        return
    for g in groups:
        head = f"{g.kind}: {' + '.join(g.ids)}"
        click.echo(head + (f" -> {g.written}" if g.written else " (dry run)"))
        click.echo(f"  merged title: {g.merged['title']}")
        for reason in g.reasons:
            click.echo(f"  {reason}")
    if not dry_run:
        click.echo(f"{len(groups)} consolidated candidate(s) written; review with `orf review`.")
