"""Commands ``orf mine``, ``orf review`` and ``orf pr``."""

from __future__ import annotations

import datetime
import multiprocessing
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import orjson

from ..exit_codes import EXIT_OK
from ..fsutil import lock_path
from ..run_events import (
    BatchPolled,
    DefaultLocations,
    Event,
    FindingsFound,
    LLMUsage,
    Progress,
    SourcesFound,
    Written,
)
from .app import (
    EXIT_CODES_HELP,
    MODEL_HELP,
    concurrency_option,
    json_option,
    ledger_option,
    main,
    settings_from,
    store_option,
)
from .backends import BackendChoice, backend_help
from .checks import (
    check_format,
    no_sessions_line,
    report_skipped,
    require_store,
    require_writable,
)


def _since(value: str | None) -> datetime.date | None:
    if value is None:
        return None
    try:
        return datetime.date.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date (use YYYY-MM-DD)",
                                 param_hint="--since") from None


def _print_json(data: object) -> None:
    click.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2, default=str).decode())


def _default_locations_line(e: DefaultLocations) -> str:
    if e.found:
        return "default locations: " + ", ".join(map(str, e.found))
    return "default locations: none found (looked for " + ", ".join(e.patterns) + ")"


def _elapsed(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def _counter(e: Progress | BatchPolled) -> tuple[str, str]:
    """``(what is counted, line)``: deciles are kept per counter (a job's state starts anew)."""
    if isinstance(e, BatchPolled):
        key = f"batch {e.job} {e.state}"
        # The Gemini API does not count answers while a job runs: say what is known.
        count = f"{e.total} requests" if e.done is None else f"{e.done}/{e.total}"
        return key, f"{key}: {count}, {_elapsed(e.elapsed_s)}"
    if e.stage == "scanned":
        return e.stage, f"scanned {e.done}/{e.total} sources"
    return e.stage, f"{e.stage}: {e.done}/{e.total}"


_LINES: dict[type, Callable[[Any], str]] = {
    DefaultLocations: _default_locations_line,
    SourcesFound: lambda e: f"sessions: {e.seen} seen, {e.todo} new or changed, "
                            f"{e.unchanged} unchanged",
    FindingsFound: lambda e: f"findings: {e.findings} ({e.wasted_steps} wasted steps)",
    LLMUsage: lambda e: f"llm: {e.calls} calls, {e.tokens_in} in / {e.tokens_out} out tokens, "
                        f"${e.cost_usd:.4f} so far",
    Written: lambda e: f"{e.outcome}: {e.exp_id or e.error}",
}
"""How each event of a run reads on stderr (``Progress``/``BatchPolled`` counters: ``_counter``)."""


BATCH_QUIET_S = 600
"""Off a terminal, a batch job whose answers are not counted shows once per 10 minutes."""


class _Progress:
    """Renders a run's events on stderr, one ``orf: ...`` line each.

    Counters redraw in place on a terminal; in a log file (cron, CI) they show up every 10%
    rather than once per item.
    """

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.open_line = False
        self.last_decile: dict[str, int] = {}

    def __call__(self, event: Event) -> None:
        if not isinstance(event, (Progress, BatchPolled)):
            self._end_line()
            click.echo(f"orf: {_LINES[type(event)](event)}", err=True)
            return
        key, line = _counter(event)
        total = max(1, event.total)
        if event.done is not None:
            n = event.done
            decile = n * 10 // total
        else:  # an uncounted batch job: open until it ends, a log line per BATCH_QUIET_S
            assert isinstance(event, BatchPolled)
            n = total if event.ended else 0
            decile = int(event.elapsed_s // BATCH_QUIET_S)
        if self.tty:
            click.echo(f"\rorf: {line}\x1b[K", err=True, nl=False)
            self.open_line = n < total
            if not self.open_line:
                click.echo("", err=True)
            return
        if decile > self.last_decile.get(key, -1) or n == total:
            self.last_decile[key] = decile
            click.echo(f"orf: {line}", err=True)

    def _end_line(self) -> None:
        if self.open_line:
            click.echo("", err=True)
            self.open_line = False


@main.command(epilog=EXIT_CODES_HELP)
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@store_option
@ledger_option
@click.option("--backend", type=BackendChoice(), default=None,
              help=backend_help("LLM backend (default gemini when a key is set, else "
                                "heuristic)"))
@click.option("--model", default=None, help=MODEL_HELP)
@click.option("--batch", is_flag=True, help="Send judge/draft requests as one Gemini batch job "
              "(half price, slower).")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Worker processes for parse and detect (default: number of cores).")
@click.option("--since", "since", default=None, metavar="DATE",
              help="Only logs modified on or after DATE (YYYY-MM-DD).")
@click.option("--dry-run", is_flag=True, help="Draft and dedupe, print what would be written, "
              "write nothing to the store.")
@click.option("--quiet", "-q", is_flag=True, help="No progress on stderr.")
@click.option("--verbose", "-v", is_flag=True,
              help="List every file skipped as not a session log (else one summary line).")
@json_option
@click.option("--default-locations", is_flag=True,
              help="Also read each agent's usual session folder (~/.claude/projects, "
              "~/.codex/sessions, ~/.gemini/tmp/*/chats, ~/.gemini/antigravity*/brain).")
@click.option("--lock-timeout", type=float, default=None,
              help="Seconds to wait for another run's store lock (default 60).")
@click.option("--min-wasted-steps", type=click.IntRange(min=0), default=None,
              help="Sessions with fewer wasted steps are not sent to judge/draft.")
@click.option("--max-sessions", type=click.IntRange(min=0), default=None,
              help="At most this many sessions go to judge/draft per run (most wasted first).")
@click.option("--format", "fmt", default=None, help="Force the log format (skip sniffing).")
@concurrency_option
def mine(paths: tuple[Path, ...], store: Path | None, ledger: Path | None, backend: str | None,
         model: str | None, batch: bool, jobs: int | None, since: str | None, dry_run: bool,
         quiet: bool, verbose: bool, as_json: bool, default_locations: bool,
         lock_timeout: float | None,
         min_wasted_steps: int | None, max_sessions: int | None, fmt: str | None,
         concurrency: int | None) -> None:
    """Mine session logs for wasted-step loops and write new candidate playbooks.

    Incremental: logs the ledger has seen unchanged are skipped, so a rerun over the same logs
    makes no LLM call. Nothing is committed: review with `orf review`, propose with `orf pr`.

    \b
    Examples:
      orf mine fixtures/ --store /tmp/exp --backend heuristic
      orf mine --default-locations --batch --quiet
      orf mine ~/.claude/projects --since 2026-05-01 --dry-run --json
    """
    from ..mine import mine as run_mine
    from ..report.summary import render_table

    if not paths and not default_locations:
        raise click.UsageError("give at least one PATH, or --default-locations")
    check_format(fmt)
    settings = settings_from(store=store, ledger=ledger, backend=backend, model=model,
                             jobs=jobs, lock_timeout_s=lock_timeout,
                             min_wasted_steps=min_wasted_steps,
                             max_sessions_per_run=max_sessions, concurrency=concurrency)
    require_store(settings.store)
    if not dry_run:
        # Fail in a second, not after the scan and the LLM calls, on a store we cannot write.
        require_writable(settings.store)
        require_writable(lock_path(settings.store).parent, create=True)

    progress = _Progress()

    try:
        summary = run_mine(list(paths), settings, since=_since(since), dry_run=dry_run,
                           batch=batch, default_locations=default_locations,
                           progress=None if quiet else progress, format=fmt)
    except KeyboardInterrupt:
        click.echo("Interrupted: nothing half-written; the next `orf mine` resumes the work.",
                   err=True)
        # Leave at once: a normal exit joins the worker threads, and a model call in flight
        # can take its whole timeout. Every write is atomic and every intent recorded first,
        # so this is as safe as the SIGKILL the resume tests already survive. A scan worker
        # still alive would hold our output pipes open: it goes first.
        for child in multiprocessing.active_children():
            child.kill()
            child.join(timeout=1.0)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    if as_json:
        _print_json(summary.to_json())
    else:
        click.echo(render_table(summary))
    if verbose:
        report_skipped(summary.skipped, [], verbose=True)
    if not summary.sessions_seen:
        click.echo(f"Error: {no_sessions_line(list(paths))}", err=True)
    sys.exit(summary.exit_code)


@main.command(epilog=EXIT_CODES_HELP)
@store_option
@ledger_option
@click.option("--reject", "reject_ids", multiple=True, metavar="EXP-ID",
              help="Remove this candidate and remember the rejection (repeatable).")
@click.option("--reason", default="rejected in review", help="Why (kept in the ledger).")
@click.option("--lock-timeout", type=float, default=None,
              help="Seconds to wait for another run's store lock.")
@json_option
def review(store: Path | None, ledger: Path | None, reject_ids: tuple[str, ...], reason: str,
           lock_timeout: float | None, as_json: bool) -> None:
    """List uncommitted candidate playbooks with their evidence, or reject some.

    A rejected signature is not drafted again unless later sessions show more wasted steps.

    \b
    Examples:
      orf review --store experiences
      orf review --reject EXP-20260720-0003 --reason "too project-specific"
    """
    from ..ledger import Ledger
    from ..orf import Store
    from ..review import format_candidates, list_candidates, reject

    settings = settings_from(store=store, ledger=ledger, lock_timeout_s=lock_timeout)
    require_store(settings.store)
    st = Store(settings.store, lock_timeout=settings.lock_timeout_s)
    with Ledger(settings.ledger_path, store=settings.store) as led:
        if reject_ids:
            removed = [reject(st, led, exp_id, lock_timeout=settings.lock_timeout_s,
                              reason=reason) for exp_id in reject_ids]
            if as_json:
                _print_json({"rejected": [c.to_dict() for c in removed]})
            else:
                for c in removed:
                    click.echo(f"Rejected {c.exp_id}: {c.title} (file and INDEX line removed)")
            sys.exit(EXIT_OK)
        cands = list_candidates(st, led)
        if as_json:
            _print_json({"candidates": [c.to_dict() for c in cands]})
        else:
            click.echo(format_candidates(cands))


@main.command(epilog=EXIT_CODES_HELP)
@store_option
@ledger_option
@click.option("--branch", default=None, help="Branch name (default orf/playbooks-<timestamp>).")
@click.option("--body-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the PR body here instead of stdout.")
@click.option("--push", is_flag=True, help="Push the branch to the remote (never done without).")
@click.option("--remote", default="origin", show_default=True, help="Remote for --push.")
@click.option("--open", "open_pr", is_flag=True, help="Open the PR with `gh pr create`.")
@click.option("--base", default=None, help="Base branch of the PR.")
def pr(store: Path | None, ledger: Path | None, branch: str | None, body_file: Path | None,
       push: bool, remote: str, open_pr: bool, base: str | None) -> None:
    """Commit the uncommitted candidate playbooks on a new branch and write a PR body.

    Refuses when the work tree has changes outside the store.

    \b
    Examples:
      orf pr --store experiences --body-file pr.md
      orf pr --push --open
    """
    from ..fsutil import atomic_write
    from ..ledger import Ledger
    from ..orf import Store
    from ..pr import make_pr

    settings = settings_from(store=store, ledger=ledger)
    require_store(settings.store)
    st = Store(settings.store, lock_timeout=settings.lock_timeout_s)
    led = Ledger(settings.ledger_path, store=settings.store) \
        if settings.ledger_path.exists() else None
    try:
        result = make_pr(st, led, branch=branch, push=push, open_pr=open_pr, remote=remote,
                         base=base, ignore=[settings.ledger_path])
    finally:
        if led is not None:
            led.close()
    if body_file is not None:
        atomic_write(body_file, result.body)
    else:
        click.echo(result.body)
    click.echo(f"Committed {len(result.candidates)} candidate(s) on branch {result.branch} "
               f"({result.commit[:12]})" + (", pushed" if result.pushed else ""), err=True)
    if result.pr_url:
        click.echo(result.pr_url, err=True)
    if result.message:
        click.echo(result.message, err=True)
