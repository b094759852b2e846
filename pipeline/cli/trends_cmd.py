"""Command ``orf trends``: did each playbook make its trap rarer?"""

from __future__ import annotations

import datetime
from pathlib import Path

import click
import orjson

from .app import EXIT_CODES_HELP, json_option, ledger_option, main, settings_from, store_option
from .checks import require_store


def _epoch(value: str | None, option: str, end_of_day: bool = False) -> float | None:
    if value is None:
        return None
    try:
        moment = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date (use YYYY-MM-DD)",
                                 param_hint=option) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    if end_of_day and len(value) == 10:
        moment += datetime.timedelta(days=1, microseconds=-1)  # --until a day includes it
    return moment.timestamp()


@main.command("trends", epilog=EXIT_CODES_HELP)
@store_option
@ledger_option
@click.option("--since", help="Only sessions started on or after this date (YYYY-MM-DD).")
@click.option("--until", help="Only sessions started on or before this date (YYYY-MM-DD).")
@json_option
@click.option("--html", "html_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write a self-contained HTML page with charts to FILE.")
@click.option("--min-sessions", type=click.IntRange(min=1), default=5, show_default=True,
              help="Sessions of the playbook's agents needed on each side of its arrival.")
@click.option("--helping-ratio", type=click.FloatRange(0.0, 1.0), default=0.5,
              show_default=True, help="'helping' when the rate after is at most this share.")
@click.option("--stale-after-days", type=click.FloatRange(min=1.0), default=90.0,
              show_default=True, help="'stale' when the trap was unseen this long.")
def trends(store: Path | None, ledger: Path | None, since: str | None, until: str | None,
           as_json: bool, html_file: Path | None, min_sessions: int, helping_ratio: float,
           stale_after_days: float) -> None:
    """Measure each playbook: sessions hitting its trap before and after it entered the store.

    The ledger keeps every session `orf mine` read (start time, agent, model, trap
    signatures and their cost); a playbook's arrival is the first commit that added its
    file (else its created_at). Status: helping, still-recurring, no-data, stale, or
    too-new (fewer than --min-sessions sessions since it entered).

    \b
    Examples:
      orf trends
      orf trends --since 2026-01-01 --json
      orf trends --html trends.html
    """
    from ..trends.compute import TrendRules
    from ..trends.run import render_text, store_trends

    settings = settings_from(store=store, ledger=ledger)
    rules = TrendRules(helping_ratio=helping_ratio, min_sessions=min_sessions,
                       stale_after_days=stale_after_days)
    window = _epoch(since, "--since"), _epoch(until, "--until", end_of_day=True)
    require_store(settings.store)  # the same refusal as search and review
    report = store_trends(settings.store, settings.ledger_path, since=window[0],
                          until=window[1], rules=rules)
    if html_file is not None:
        from ..fsutil import atomic_write
        from ..report.trends_html import render_trends_html

        atomic_write(html_file, render_trends_html(report).encode("utf-8"))
        click.echo(f"wrote {html_file}", err=True)
    if as_json:
        click.echo(orjson.dumps(report.to_json(), option=orjson.OPT_INDENT_2).decode())
    elif html_file is None:
        click.echo(render_text(report))
