"""Find sessions under the paths a user gives, and pick each one's format by content.

Files are sniffed on their first 64 KiB by every adapter (the best score wins); folders are
offered to each adapter's ``claims_dir`` before being walked, so folder-shaped sessions
(Antigravity brains, OpenHands conversations) become one source each.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import OrfError, ParseFailure, UnknownFormat
from ..model import ParseIssue, Trajectory
from . import ADAPTER_MODULES, get_adapter
from .base import Adapter, ParseContext
from .common import clean_trajectory
from .jsonio import check_head

HEAD_BYTES = 65536
"""Bytes read from each file for sniffing."""
MIN_SCORE = 20
"""Sniff scores below this mean "not mine"."""
LOG_SUFFIXES = (".json", ".jsonl", ".traj", ".ndjson", ".gz", ".zst", ".bz2", ".xz", ".zip")
"""Files with these endings are reported when unrecognised; other files are ignored quietly
(README.md, SOURCES.md, images...)."""


@dataclass(frozen=True)
class SessionSource:
    """One session to parse: a file, or a folder claimed by an adapter."""

    path: Path
    """The session's file or folder."""
    format: str
    """Adapter name."""
    is_dir: bool = False
    """True for folder-shaped sessions."""


def available_adapters() -> list[Adapter]:
    """Every adapter whose module exists (adapters under construction are left out)."""
    found: list[Adapter] = []
    for name, module in ADAPTER_MODULES.items():
        try:
            found.append(get_adapter(name))
        except ModuleNotFoundError as exc:
            # Only a missing adapter module is tolerated; a broken import inside one is a bug.
            if exc.name != f"{__package__}.{module}":
                raise
    return found


def _check_format(name: str) -> Adapter:
    if name not in ADAPTER_MODULES:
        valid = ", ".join(ADAPTER_MODULES)
        raise UnknownFormat(f"unknown format {name!r}; valid formats: {valid}")
    try:
        return get_adapter(name)
    except ModuleNotFoundError:
        raise UnknownFormat(f"format {name!r} is not available in this build") from None


def _read_head(path: Path) -> bytes:
    with path.open("rb") as fh:
        return fh.read(HEAD_BYTES)


def sniff_head(path: Path, head: bytes, adapters: list[Adapter] | None = None) -> str | None:
    """Best adapter name for a file whose first bytes are ``head`` (None below MIN_SCORE)."""
    best, best_score = None, MIN_SCORE - 1
    for adapter in adapters if adapters is not None else available_adapters():
        score = adapter.sniff(path, head)
        if score > best_score:
            best, best_score = adapter.name, score
    return best


def sniff(path: Path) -> str | None:
    """Best adapter name for ``path`` by content, or None when nothing recognises it.

    Args:
        path: A file (sniffed on its first 64 KiB) or a folder (offered to ``claims_dir``).

    Returns:
        The adapter name, or None (also for unreadable, empty or binary files).
    """
    adapters = available_adapters()
    if path.is_dir():
        for adapter in adapters:
            if adapter.claims_dir(path):
                return adapter.name
        return None
    try:
        head = _read_head(path)
        check_head(path, head)
    except (OSError, ParseFailure):
        return None
    return sniff_head(path, head, adapters)


def _is_claude_subagent(path: Path) -> bool:
    """``<session>/subagents/agent-*.jsonl`` whose parent ``<session>.jsonl`` exists."""
    parent = path.parent
    if parent.name != "subagents":
        return False
    session_dir = parent.parent
    return session_dir.with_name(session_dir.name + ".jsonl").is_file()


def _classify_file(
    path: Path,
    forced: Adapter | None,
    adapters: list[Adapter],
    issues: list[ParseIssue],
    explicit: bool,
) -> SessionSource | None:
    reportable = explicit or path.name.lower().endswith(LOG_SUFFIXES)
    try:
        head = _read_head(path)
        check_head(path, head)
    except ParseFailure as exc:
        if reportable:
            issues.append(ParseIssue(str(path), None, _reason(exc, path), fatal=True))
        return None
    except OSError as exc:
        issues.append(ParseIssue(str(path), None, f"cannot read: {exc.strerror or exc}",
                                 fatal=True))
        return None
    if forced is not None:
        return SessionSource(path, forced.name)
    name = sniff_head(path, head, adapters)
    if name is None:
        if reportable:
            issues.append(ParseIssue(str(path), None,
                                     "unknown format: no adapter recognises this file "
                                     "(use --format NAME to force one)", fatal=True))
        return None
    if name == "claude-code" and not explicit and _is_claude_subagent(path):
        # The parent session parse attaches it as a sub-trajectory.
        return None
    return SessionSource(path, name)


def _reason(exc: Exception, path: Path) -> str:
    """The message of ``exc`` without the ``path: `` prefix adapters put in front."""
    msg = str(exc)
    prefix = f"{path}: "
    return msg[len(prefix):] if msg.startswith(prefix) else msg


def _failure_issue(exc: Exception, path: Path) -> ParseIssue:
    """A fatal issue from a ``ParseFailure`` message, keeping ``path:LINE:`` as the line."""
    msg = str(exc)
    m = re.match(re.escape(str(path)) + r":(\d+): (.*)", msg, re.DOTALL)
    if m:
        return ParseIssue(str(path), int(m.group(1)), m.group(2), fatal=True)
    return ParseIssue(str(path), None, _reason(exc, path), fatal=True)


def _walk(
    root: Path,
    forced: Adapter | None,
    adapters: list[Adapter],
    issues: list[ParseIssue],
    explicit: bool = False,
) -> Iterator[SessionSource]:
    for adapter in adapters if forced is None else [forced]:
        if adapter.claims_dir(root):
            # A sub-agent folder met while walking comes with its parent; named by the user,
            # it is read on its own.
            if explicit or not adapter.is_subsession(root):
                yield SessionSource(root, adapter.name, is_dir=True)
            return
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError as exc:
        issues.append(ParseIssue(str(root), None, f"cannot list folder: {exc.strerror or exc}",
                                 fatal=True))
        return
    for entry in entries:
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            # Hidden folders (.git, .venv) hold no sessions of their own; folders that do
            # (Antigravity's .system_generated) are claimed by their parent above.
            if entry.name.startswith(".") or entry.name in ("node_modules", "__pycache__"):
                continue
            yield from _walk(path, forced, adapters, issues)
        elif entry.is_file():
            src = _classify_file(path, forced, adapters, issues, explicit=False)
            if src is not None:
                yield src


def discover(
    paths: Iterable[Path],
    *,
    format: str | None = None,
    issues: list[ParseIssue],
) -> Iterator[SessionSource]:
    """Yield one ``SessionSource`` per session found under ``paths``.

    Folders are walked recursively in name order; hidden folders are skipped. Files that
    look like logs (.json, .jsonl, .traj, compressed) but cannot be used are reported into
    ``issues`` as fatal and skipped; other files (README.md...) are ignored quietly. A file
    named explicitly is always reported when it cannot be used.

    Args:
        paths: Files and folders given by the user.
        format: Adapter name forcing the format (skips sniffing).
        issues: Sink for problems met.

    Raises:
        UnknownFormat: ``format`` is not an adapter name.
    """
    forced = _check_format(format) if format is not None else None
    adapters = available_adapters()
    for path in paths:
        if path.is_dir():
            yield from _walk(path, forced, adapters, issues, explicit=True)
        elif path.exists():
            src = _classify_file(path, forced, adapters, issues, explicit=True)
            if src is not None:
                yield src
        else:
            issues.append(ParseIssue(str(path), None, "no such file or folder", fatal=True))


def parse_source(src: SessionSource, ctx: ParseContext) -> Iterator[Trajectory]:
    """Parse one source with its adapter; failures become a fatal issue, never a traceback.

    Trajectories already yielded before a failure are kept (a multi-session file may fail
    half way).

    Args:
        src: The source from ``discover``.
        ctx: Parse context; issues are appended to ``ctx.issues``.
    """
    try:
        adapter = get_adapter(src.format)
        for traj in adapter.parse(src.path, ctx):
            yield clean_trajectory(traj, ctx.secrets)
    except ParseFailure as exc:
        ctx.issues.append(_failure_issue(exc, src.path))
    except OrfError as exc:
        ctx.issues.append(ParseIssue(str(src.path), None, str(exc), fatal=True))
    except RecursionError:
        ctx.issues.append(ParseIssue(str(src.path), None, "JSON nested too deeply", fatal=True))
    except MemoryError:
        ctx.issues.append(ParseIssue(str(src.path), None, "out of memory reading this file",
                                     fatal=True))
    except Exception as exc:  # noqa: BLE001  (one bad file must not stop a batch)
        if os.environ.get("ORF_RAISE_ERRORS"):
            raise
        ctx.issues.append(ParseIssue(
            str(src.path), None,
            f"{src.format} adapter failed: {type(exc).__name__}: {exc}", fatal=True))


__all__ = ["SessionSource", "available_adapters", "discover", "parse_source", "sniff",
           "sniff_head"]
