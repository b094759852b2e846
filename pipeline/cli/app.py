"""The ``orf`` click group, shared options and the error-to-exit-code policy."""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from .. import __version__
from ..config import Settings, load_settings
from ..errors import OrfError
from ..exit_codes import EXIT_ERROR, EXIT_INTERRUPTED

MODEL_HELP = ("Model for judge and draft: Gemini's (default ORF_MODEL) with the gemini backend, "
              "the server's (default ORF_OPENAI_MODEL) with openai-compatible.")
"""``--model`` help of every command that takes it."""

EXIT_CODES_HELP = """\b
Exit codes:
  0  ok
  1  error (nothing or too little done; message on stderr)
  2  usage error (bad option or argument)
  3  partial (some inputs or calls failed, the rest was done)
  130  interrupted (Ctrl-C); nothing half-written, the next run resumes"""

F = TypeVar("F", bound=Callable[..., Any])


class OrfGroup(click.Group):
    """Turns domain, OS and ledger errors into one line and exit 1 (ORF_RAISE_ERRORS=1 to debug)."""

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; ``OrfError``, ``OSError`` and ``sqlite3.Error`` become one line."""
        from ..errors import os_error_line
        from .checks import sqlite_error_line

        try:
            return super().invoke(ctx)
        except (OrfError, OSError, sqlite3.Error) as exc:
            if os.environ.get("ORF_RAISE_ERRORS"):
                raise
            if isinstance(exc, OSError):
                line = os_error_line(exc)
            elif isinstance(exc, sqlite3.Error):
                line = sqlite_error_line(exc)
            else:
                line = str(exc)
            click.echo(f"Error: {line}", err=True)
            sys.exit(EXIT_ERROR)
        except KeyboardInterrupt:
            if os.environ.get("ORF_RAISE_ERRORS"):
                raise
            click.echo("Interrupted.", err=True)
            sys.exit(EXIT_INTERRUPTED)


@click.group(cls=OrfGroup, epilog=EXIT_CODES_HELP)
@click.version_option(__version__, prog_name="orf")
def main() -> None:
    """Turn coding-agent session logs into reviewed, reusable ORF playbooks.

    \b
    Examples:
      orf analyze ~/.claude/projects/myproj/session.jsonl
      orf analyze fixtures/ --json
      orf mine fixtures/ --store experiences
      orf validate experiences
    """


def store_option(f: F) -> F:
    """``--store DIR`` (env ORF_STORE, default ./experiences)."""
    return click.option(
        "--store",
        type=click.Path(file_okay=False, path_type=Path),
        envvar="ORF_STORE",
        default=None,
        help="ORF store folder (default ./experiences, env ORF_STORE).",
    )(f)


def ledger_option(f: F) -> F:
    """``--ledger FILE`` (env ORF_LEDGER)."""
    return click.option(
        "--ledger",
        type=click.Path(dir_okay=False, path_type=Path),
        envvar="ORF_LEDGER",
        default=None,
        help="SQLite ledger (default <store>/../.orf/ledger.db, env ORF_LEDGER).",
    )(f)


def concurrency_option(f: F) -> F:
    """``--concurrency N`` online LLM calls in flight (env ORF_CONCURRENCY)."""
    return click.option(
        "--concurrency",
        type=click.IntRange(min=1),
        envvar="ORF_CONCURRENCY",
        default=None,
        help="Online LLM calls in flight at once (default 4, env ORF_CONCURRENCY).",
    )(f)


def json_option(f: F) -> F:
    """``--json`` for machine-readable output."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")(f)


def settings_from(**overrides: Any) -> Settings:
    """Load settings with the given flag values layered on top (None = not given).

    ``model`` (``--model``) names the model of the backend in use (``Settings.with_model``).
    """
    model = overrides.pop("model", None)
    return load_settings(overrides).with_model(model)
