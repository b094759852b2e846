"""``orf redact FILE``: a redacted copy of a log, in the same format, safe to share."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click

from ..errors import OrfError
from ..privacy.redact_file import redact_file
from .app import main


@main.command("redact")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", "out", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Write the redacted copy here instead of stdout.")
@click.option("-q", "--quiet", is_flag=True, help="Do not print the summary on stderr.")
def redact_command(file: Path, out: Path | None, quiet: bool) -> None:
    """Print a redacted copy of a session log, in the same format.

    JSON and JSON Lines keep their structure (every string value is redacted, so the copy
    still parses); other files are redacted line by line. Secrets become typed placeholders
    like [REDACTED:github-token]. A summary of placeholders by kind goes to stderr.

    \b
    Examples:
      orf redact ~/.claude/projects/app/session.jsonl > shareable.jsonl
      orf redact rollout.jsonl -o rollout.redacted.jsonl
      orf redact run.traj.json --quiet | less
    """
    if out is not None and out.resolve() == file.resolve():
        raise OrfError(f"{out}: refusing to overwrite the input - choose another --output")
    counts: Counter[str] = Counter()
    if out is None:
        for chunk in redact_file(file, counts):
            click.echo(chunk, nl=False)
    else:
        from ..fsutil import atomic_write

        atomic_write(out, "".join(redact_file(file, counts)))
    if not quiet:
        total = sum(counts.values())
        detail = ", ".join(f"{k}: {n}" for k, n in sorted(counts.items()))
        click.echo(f"{file}: {total} placeholder(s)" + (f" ({detail})" if detail else ""),
                   err=True)
