"""Find sessions under the paths a user gives, and pick each one's format by content.

Files are sniffed on their first 64 KiB by every adapter (the best score wins); folders are
offered to each adapter's ``claims_dir`` before being walked, so folder-shaped sessions
(Antigravity brains, OpenHands conversations) become one source each.
"""

from __future__ import annotations

import errno
import os
import re
import stat
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
NOT_A_LOG = "not a session log"
"""Why a file no adapter claims is skipped (a summary line, not a failure)."""

# Files that are never opened: reading a FIFO blocks, a device never ends.
_SPECIAL_KINDS = (
    (stat.S_ISFIFO, "named pipe (FIFO)"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
)


@dataclass(frozen=True)
class SessionSource:
    """One session to parse: a file, or a folder claimed by an adapter."""

    path: Path
    """The session's file or folder."""
    format: str
    """Adapter name."""
    is_dir: bool = False
    """True for folder-shaped sessions."""
    forced: bool = False
    """True when ``--format`` chose the adapter (nothing sniffed)."""


@dataclass(frozen=True)
class Skipped:
    """A path discovery left out without reading it as a session."""

    path: str
    """The file (or link)."""
    reason: str
    """Why, e.g. ``not a session log`` or ``named pipe (FIFO), not read``."""
    special: bool = False
    """FIFOs, sockets, devices and symlinks that lead nowhere: reported one line each."""

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


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
    """Best adapter name for a file whose first bytes are ``head`` (None below MIN_SCORE).

    Positive evidence only: a head that does not open like JSON (a Markdown page quoting JSON
    keys, a CSV) is offered only to the text formats (``Adapter.text``), which claim it by
    their own opening line; the JSON formats never see it, whatever its words.
    """
    json_head = looks_like_json(head)
    best, best_score = None, MIN_SCORE - 1
    for adapter in adapters if adapters is not None else available_adapters():
        if not json_head and not adapter.text:
            continue
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


def _stat(path: Path, skipped: list[Skipped] | None,
          issues: list[ParseIssue]) -> os.stat_result | None:
    """``os.stat`` of ``path`` (links followed); None, with the reason recorded, if unusable."""
    try:
        st = os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            _skip(skipped, path, "symlink loop, not followed", special=True)
        elif exc.errno == errno.ENOENT and os.path.islink(path):
            _skip(skipped, path, "broken symlink, not followed", special=True)
        else:
            issues.append(ParseIssue(str(path), None, f"cannot read: {exc.strerror or exc}",
                                     fatal=True))
        return None
    for test, kind in _SPECIAL_KINDS:
        if test(st.st_mode):
            _skip(skipped, path, f"{kind}, not read", special=True)
            return None
    return st


def _skip(skipped: list[Skipped] | None, path: Path, reason: str, special: bool = False) -> None:
    if skipped is not None:
        skipped.append(Skipped(str(path), reason, special))


def looks_like_json(head: bytes) -> bool:
    """Whether ``head`` opens a JSON document or JSON Lines (what every JSON format reads)."""
    return head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"{", b"[")


def _classify_file(
    path: Path,
    forced: Adapter | None,
    adapters: list[Adapter],
    issues: list[ParseIssue],
    explicit: bool,
    skipped: list[Skipped] | None = None,
) -> SessionSource | None:
    """The source of a regular file, or None (skipped, or reported into ``issues``)."""
    try:
        head = _read_head(path)
        check_head(path, head)
    except ParseFailure as exc:
        if forced is not None:
            issues.append(ParseIssue(str(path), None, _reason(exc, path), fatal=True))
        else:
            # Empty, compressed or binary: no adapter can claim it, so it is no failure.
            _skip(skipped, path, f"{NOT_A_LOG} ({_reason(exc, path)})")
        return None
    except OSError as exc:
        issues.append(ParseIssue(str(path), None, f"cannot read: {exc.strerror or exc}",
                                 fatal=True))
        return None
    if forced is not None:
        return SessionSource(path, forced.name, forced=True)
    name = sniff_head(path, head, adapters)
    if name is None:
        _skip(skipped, path, NOT_A_LOG)
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
    skipped: list[Skipped] | None = None,
) -> Iterator[SessionSource]:
    for adapter in adapters if forced is None else [forced]:
        if adapter.claims_dir(root):
            # A sub-agent folder met while walking comes with its parent; named by the user,
            # it is read on its own.
            if explicit or not adapter.is_subsession(root):
                yield SessionSource(root, adapter.name, is_dir=True, forced=forced is not None)
            return
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError as exc:
        issues.append(ParseIssue(str(root), None, f"cannot list folder: {exc.strerror or exc}",
                                 fatal=True))
        return
    for entry in entries:
        path = Path(entry.path)
        try:
            real_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            real_dir = False
        if real_dir:
            # Hidden folders (.git, .venv) hold no sessions of their own; folders that do
            # (Antigravity's .system_generated) are claimed by their parent above.
            if entry.name.startswith(".") or entry.name in ("node_modules", "__pycache__"):
                continue
            yield from _walk(path, forced, adapters, issues, skipped=skipped)
            continue
        # Stat before opening: FIFOs, devices and symlink loops are never read.
        st = _stat(path, skipped, issues)
        if st is None or stat.S_ISDIR(st.st_mode):
            continue  # a symlink to a folder is not followed, so no walk can loop
        src = _classify_file(path, forced, adapters, issues, explicit=False, skipped=skipped)
        if src is not None:
            yield src


def discover(
    paths: Iterable[Path],
    *,
    format: str | None = None,
    issues: list[ParseIssue],
    skipped: list[Skipped] | None = None,
) -> Iterator[SessionSource]:
    """Yield one ``SessionSource`` per session found under ``paths``.

    Folders are walked recursively in name order; hidden folders and symlinked folders are
    skipped. Every path is stat'ed before it is opened: FIFOs, sockets, devices and symlink
    loops are never read. A file becomes a source only on positive evidence (an adapter
    claims it: a JSON format when it opens like JSON, a text format by its opening line);
    other files go to ``skipped`` as not session logs, which is not a failure. Only what
    cannot be read at all (permissions, a forced format on a binary file) goes to ``issues``.

    Args:
        paths: Files and folders given by the user.
        format: Adapter name forcing the format (skips sniffing).
        issues: Sink for problems met.
        skipped: Sink for the files left out (None: not collected).

    Raises:
        UnknownFormat: ``format`` is not an adapter name.
    """
    forced = _check_format(format) if format is not None else None
    adapters = available_adapters()
    for path in paths:
        if not os.path.lexists(path):
            issues.append(ParseIssue(str(path), None, "no such file or folder", fatal=True))
            continue
        st = _stat(path, skipped, issues)
        if st is None:
            continue
        if stat.S_ISDIR(st.st_mode):
            yield from _walk(path, forced, adapters, issues, explicit=True, skipped=skipped)
            continue
        src = _classify_file(path, forced, adapters, issues, explicit=True, skipped=skipped)
        if src is not None:
            yield src


def parse_source(src: SessionSource, ctx: ParseContext) -> Iterator[Trajectory]:
    """Parse one source with its adapter; failures become a fatal issue, never a traceback.

    Trajectories already yielded before a failure are kept (a multi-session file may fail
    half way).

    Args:
        src: The source from ``discover``.
        ctx: Parse context; issues are appended to ``ctx.issues``.
    """
    if src.forced:
        yield from _parse_forced(src, ctx)
        return
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


def _parse_forced(src: SessionSource, ctx: ParseContext) -> Iterator[Trajectory]:
    """Parse with a forced adapter; a mismatch is one line for the file, not one per record."""
    start = len(ctx.issues)
    trajs = list(parse_source(SessionSource(src.path, src.format, src.is_dir), ctx))
    own = ctx.issues[start:]
    warnings = [i for i in own if not i.fatal]
    if any(t.steps for t in trajs) and len(warnings) <= 1:
        yield from trajs
        return
    head = warnings[0] if warnings else None
    first = "" if head is None else \
        f" (first: {'' if head.line is None else f'line {head.line}: '}{head.message})"
    del ctx.issues[start:]
    ctx.issues.extend(i for i in own if i.fatal)
    if not any(t.steps for t in trajs):
        if not any(i.fatal for i in own):
            what = (f"{len(warnings)} of its records could not be read as {src.format}{first}"
                    if warnings else f"nothing in it reads as {src.format}")
            ctx.issues.append(ParseIssue(
                str(src.path), None,
                f"not a {src.format} log: {what}; drop --format to detect the format",
                fatal=True))
        return
    ctx.issues.append(ParseIssue(str(src.path), None,
                                 f"{len(warnings)} of its records could not be read as "
                                 f"{src.format}{first}"))
    yield from trajs


__all__ = ["NOT_A_LOG", "SessionSource", "Skipped", "available_adapters", "discover",
           "looks_like_json", "parse_source", "sniff", "sniff_head"]
