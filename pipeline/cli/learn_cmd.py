"""``orf learn`` (digests for your own coding agent) and ``orf submit`` (its drafts back)."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import orjson

from ..exit_codes import EXIT_OK, EXIT_USAGE
from ..learn import SubmitError, learn, read_submission, submit, write_learned
from ..model import ParseIssue
from .app import json_option, ledger_option, main, settings_from, store_option
from .checks import require_store


@main.command("learn")
@click.argument("paths", nargs=-1, required=True,
                type=click.Path(exists=True, path_type=Path))
@click.option("-o", "--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write one request file per session into this folder (default: stdout).")
@click.option("--budget", type=int, default=None,
              help="Token budget of one digest chunk (default 4000).")
def learn_command(paths: tuple[Path, ...], out: Path | None, budget: int | None) -> None:
    """Write what your own coding agent needs to draft playbooks from these sessions.

    For every session with an episode (a failed step or a person's correction): the
    instructions, the JSON schema of the drafts, the session's digest (task, how it ended,
    each episode's steps with their real errors) and how to hand the drafts back. Give the
    file to Claude Code, Codex or Gemini CLI, then run `orf submit` on what it writes. Writes
    nothing else.

    \b
    Examples:
      orf learn ~/.claude/projects/app/ -o /tmp/orf-learn
      orf learn rollout.jsonl | claude -p "follow these instructions" > drafts.json
      orf submit drafts.json
    """
    settings = settings_from(digest_tokens=budget)
    issues: list[ParseIssue] = []
    items = learn(list(paths), settings, issues)
    for issue in issues:
        click.echo(f"orf: {issue}", err=True)
    if out is None:
        for item in items:
            click.echo(item.text)
    else:
        written = write_learned(items, out)
        for item, path in zip(items, written, strict=True):
            click.echo(f"{path}  ({item.tokens} tokens, {item.chunks} chunk"
                       f"{'s' * (item.chunks != 1)})")
    click.echo(f"orf learn: {len(items)} session(s) with something to learn from", err=True)
    sys.exit(EXIT_OK)


@main.command("submit")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@store_option
@ledger_option
@json_option
def submit_command(file: Path, store: Path | None, ledger: Path | None, as_json: bool) -> None:
    """Verify drafts your coding agent wrote from `orf learn`, and write what the log proves.

    FILE holds one JSON object or a list: {"session": "<log path>", "drafts": [...]}, each
    draft with its evidence (trap_steps, fix_steps, error). Each draft is checked against its
    log by the same verifier as the model backends, then screened, deduped and written to the
    store as `orf mine` does. Prints per draft: written, reinforced, already-written, or
    rejected with the reasons. Exit 0 when every draft was decided, 2 on a malformed file.

    \b
    Examples:
      orf submit drafts.json
      orf submit drafts.json --store team/experiences --json
    """
    settings = settings_from(store=store, ledger=ledger)
    require_store(settings.store)
    try:
        entries = read_submission(file)
    except SubmitError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    report = submit(file, settings, entries)
    if as_json:
        click.echo(orjson.dumps(report.as_json(), option=orjson.OPT_INDENT_2).decode())
        return
    for line in report.problems:
        click.echo(f"orf: {line}", err=True)
    for d in report.drafts:
        where = f" {d.exp_id}" if d.exp_id else ""
        why = f": {'; '.join(d.reasons)}" if d.reasons else ""
        click.echo(f"{d.outcome}{where}: {d.title}{why}")
    counts: dict[str, int] = {}
    for d in report.drafts:
        counts[d.outcome] = counts.get(d.outcome, 0) + 1
    click.echo("orf submit: " + (", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
                                 or "no drafts"), err=True)
