"""``orf analyze``: a one-off analysis of one session or a folder, writing nothing."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import orjson

from ..exit_codes import EXIT_ERROR, EXIT_OK, EXIT_PARTIAL
from .app import EXIT_CODES_HELP, MODEL_HELP, concurrency_option, main, settings_from, store_option
from .backends import BackendChoice, backend_help
from .checks import check_format, no_sessions_line, report_skipped, require_store


@main.command(epilog=EXIT_CODES_HELP)
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--format", "fmt", default=None, help="Force a log format (see `orf formats`).")
@click.option("--json", "as_json", is_flag=True, help="One orf.analysis/1 JSON object per session.")
@click.option("--draft", is_flag=True, help="Also judge and draft playbooks (writes nothing).")
@click.option(
    "--backend",
    type=BackendChoice(),
    envvar="ORF_BACKEND",
    default=None,
    help=backend_help("LLM backend for --draft (default gemini when a key is set, else "
                      "heuristic)"),
)
@click.option("--model", default=None, help=MODEL_HELP)
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Also write an HTML timeline of the sessions to this file.")
@click.option("--output-max-chars", type=int, default=None,
              help="Truncate step outputs past this many characters (default 4000).")
@click.option("--quiet", "-q", is_flag=True, help="Do not list skipped files/lines on stderr.")
@click.option("--verbose", "-v", is_flag=True,
              help="List every file skipped as not a session log (else one summary line).")
@concurrency_option
@store_option
def analyze(
    paths: tuple[Path, ...],
    fmt: str | None,
    as_json: bool,
    draft: bool,
    backend: str | None,
    model: str | None,
    html_path: Path | None,
    output_max_chars: int | None,
    quiet: bool,
    verbose: bool,
    concurrency: int | None,
    store: Path | None,
) -> None:
    """Analyze agent session logs: steps, failures, tokens and wasted-step loops.

    PATHS are log files or folders (walked recursively; the format of each file is
    detected from its content). Nothing is written to the store; with --draft the
    verdict and candidate playbooks are printed too.

    \b
    Examples:
      orf analyze ~/.codex/sessions/2026/11/30/rollout-...jsonl
      orf analyze fixtures/ --json | jq .wasted_steps_total
      orf analyze run.traj --draft --backend heuristic
      orf analyze session.jsonl --html timeline.html
    """
    from ..analyze import analyze_paths
    from ..detect import top_signatures
    from ..formats.discover import Skipped
    from ..report.json_out import session_json
    from ..report.terminal import session_lines, totals_lines

    check_format(fmt)
    settings = settings_from(
        store=store, backend=backend, model=model, output_max_chars=output_max_chars,
        concurrency=concurrency,
    )
    if store is not None:
        # Only read (for --draft context), but a mistyped path must not pass silently.
        require_store(settings.store)
    issues: list = []  # type: ignore[type-arg]
    skipped: list[Skipped] = []
    reports = []
    # Only the JSON and HTML reports show repeated steps: the scan marks them for those.
    for report in analyze_paths(paths, settings, issues, fmt=fmt, draft=draft,
                                skipped=skipped, repeats=as_json or html_path is not None):
        reports.append(report)
        if as_json:
            sys.stdout.buffer.write(orjson.dumps(session_json(report, with_drafts=draft)) + b"\n")
            sys.stdout.flush()
        else:
            click.echo("\n".join(session_lines(report, with_drafts=draft)) + "\n")
    if not as_json and len(reports) > 1:
        pairs = [(r.trajectory.id, f) for r in reports for f in r.findings]
        click.echo("\n".join(totals_lines(reports, top_signatures(pairs))))
    if html_path is not None:
        from ..report.html import write_timeline

        write_timeline(html_path, reports)
        if not quiet:
            click.echo(f"wrote {html_path}", err=True)
    if not quiet:
        report_skipped([str(s) for s in skipped if not s.special],
                       [str(s) for s in skipped if s.special], verbose)
        for issue in issues:
            # Only a file an adapter claimed and could not read is "failed".
            click.echo(f"{'failed' if issue.fatal else 'warning'}: {issue}", err=True)
    if not reports:
        click.echo(f"Error: {no_sessions_line(paths)}", err=True)
        sys.exit(EXIT_ERROR)
    # As `orf mine`: a skipped line is reported, not a failure; a file that could not be
    # read at all makes the run partial.
    sys.exit(EXIT_PARTIAL if any(issue.fatal for issue in issues) else EXIT_OK)
