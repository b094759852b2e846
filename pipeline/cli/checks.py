"""What every command checks the same way: the store, ``--format``, OS errors, skipped files.

Each situation has one message and one exit code whatever the command (see ``EXIT_CODES_HELP``).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
from collections.abc import Sequence
from pathlib import Path

import click

from ..errors import StoreError


def sqlite_error_line(exc: sqlite3.Error) -> str:
    """One line for a ledger database error raised after the ledger was opened."""
    return (f"the ledger database failed: {exc} (check that the ledger and its folder are "
            "writable and the disk is not full, or point --ledger elsewhere)")


def require_store(store: Path) -> None:
    """Refuse a store that does not exist: only ``orf init`` creates one.

    Raises:
        StoreError: No ``INDEX.md`` under ``store`` (the same message the store reader uses).
    """
    if not (store / "INDEX.md").is_file():
        raise StoreError(f"no ORF store at {store} (INDEX.md not found); "
                         f"create one with `orf init --store {store}`")


def require_writable(folder: Path, create: bool = False) -> None:
    """Fail before any work when ``folder`` cannot take a new file (read-only, full, denied).

    Args:
        folder: The folder to check.
        create: Create it (and its parents) first: state folders such as ``.orf/``.

    Raises:
        OSError: With ``filename`` set to the folder that failed.
    """
    try:
        if create:
            folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".orf-write-check.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(folder)) from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def check_format(fmt: str | None) -> None:
    """A usage error (exit 2) for a ``--format`` that names no adapter."""
    from ..formats import ADAPTER_MODULES

    if fmt is not None and fmt not in ADAPTER_MODULES:
        raise click.BadParameter(
            f"unknown format {fmt!r}; choose from: {', '.join(ADAPTER_MODULES)}",
            param_hint="--format",
        )


def report_skipped(skipped: Sequence[str], special: Sequence[str], verbose: bool) -> None:
    """Skipped inputs on stderr: one line per FIFO/device/loop, one summary for non-logs.

    Args:
        skipped: ``path: reason`` of files that are not session logs.
        special: ``path: reason`` of FIFOs, sockets, devices and symlink loops.
        verbose: List every non-log file instead of the summary line.
    """
    for line in special:
        click.echo(f"skipped: {line}", err=True)
    if verbose:
        for line in skipped:
            click.echo(f"skipped: {line}", err=True)
    elif skipped:
        click.echo(f"skipped {len(skipped)} file(s): not a session log (-v lists them)",
                   err=True)


def no_sessions_line(paths: Sequence[Path]) -> str:
    """The one message for "nothing to do", the same on every command."""
    where = ", ".join(str(p) for p in paths) or "the given paths"
    return f"no agent session logs found in {where}"
