"""Stage 1 of ``orf mine``: the session sources under the given paths that need reading.

Discovery, then the cheap change check against the ledger: a source whose size and mtime
(then content hash) match what the ledger recorded is unchanged and is not read again. A file
no adapter could read is reported once, not every night while it stays the same.
"""

from __future__ import annotations

import datetime
import glob
import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..ledger import Ledger
from ..model import ParseIssue
from .pause import pause_point

if TYPE_CHECKING:
    from ..formats.discover import SessionSource

DEFAULT_LOCATIONS = (
    "~/.claude/projects",
    "~/.codex/sessions",
    "~/.gemini/tmp/*/chats",
    "~/.gemini/antigravity*/brain",
)
"""Where each agent keeps its sessions (``--default-locations``)."""


def source_fingerprint(path: Path, is_dir: bool) -> tuple[int, float]:
    """Size and newest mtime of a file or a session folder (the cheap change check)."""
    if not is_dir:
        st = path.stat()
        return st.st_size, st.st_mtime
    size, mtime = 0, path.stat().st_mtime
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                st = os.stat(os.path.join(root, name))
            except OSError:
                continue
            size += st.st_size
            mtime = max(mtime, st.st_mtime)
    return size, mtime


def source_hash(path: Path, is_dir: bool) -> str:
    """``b2:`` hash of a file's bytes, or of every file of a session folder (names + bytes)."""
    h = hashlib.blake2b(digest_size=16)
    files = [path] if not is_dir else sorted(p for p in path.rglob("*") if p.is_file())
    for f in files:
        if is_dir:
            h.update(str(f.relative_to(path)).encode("utf-8", "surrogateescape") + b"\0")
        try:
            with f.open("rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):  # noqa: B023 - fh is local
                    h.update(chunk)
        except OSError:
            continue
    return "b2:" + h.hexdigest()


def default_locations(home: Path | None = None) -> list[Path]:
    """The existing default session folders of the supported agents."""
    base = str(home or Path.home())
    found: list[Path] = []
    for pattern in DEFAULT_LOCATIONS:
        expanded = pattern.replace("~", base, 1)
        found.extend(Path(p) for p in sorted(glob.glob(expanded)) if Path(p).is_dir())
    return found


@dataclass
class Source:
    """One session file or folder that is new or changed since the ledger saw it."""

    path: Path
    format: str
    is_dir: bool
    key: str
    """Resolved path: the ledger's key."""
    size: int
    mtime: float
    content_hash: str = ""
    """Known only when the change check needed it; computed when the source is recorded."""
    forced: bool = False
    """``--format`` chose the adapter."""

    def session_source(self) -> SessionSource:
        """What the scan reads."""
        from ..formats.discover import SessionSource

        return SessionSource(self.path, self.format, self.is_dir, forced=self.forced)


@dataclass
class Sources:
    """What discovery found: the sources to read and the count of the others."""

    todo: list[Source] = field(default_factory=list)
    seen: int = 0
    """Sessions discovered (files or session folders), unreadable ones included."""
    unchanged: int = 0
    failed: int = 0
    issues: list[str] = field(default_factory=list)
    """``path[:line]: message`` of sources that could not be read."""
    skipped: list[str] = field(default_factory=list)
    """Files no adapter claims (not session logs)."""
    skipped_special: list[str] = field(default_factory=list)
    """FIFOs, sockets, devices and symlink loops (never opened)."""


def since_epoch(since: datetime.date | datetime.datetime | None) -> float | None:
    """``--since`` as a timestamp (a date means its midnight UTC)."""
    if since is None:
        return None
    if isinstance(since, datetime.datetime):
        moment = since if since.tzinfo else since.replace(tzinfo=datetime.timezone.utc)
    else:
        moment = datetime.datetime(since.year, since.month, since.day,
                                   tzinfo=datetime.timezone.utc)
    return moment.timestamp()


def find_sources(paths: Sequence[Path], ledger: Ledger, *, since: float | None,
                 fmt: str | None, dry_run: bool) -> Sources:
    """Discover the sessions under ``paths`` and keep those new or changed since the ledger.

    Args:
        paths: Files and folders holding session logs.
        ledger: Where the sources of earlier runs are recorded.
        since: Only sources modified at or after this timestamp.
        fmt: Force a log format (skip sniffing).
        dry_run: Record nothing (a touched but unchanged source keeps its old row).
    """
    from ..formats.discover import Skipped, discover

    out = Sources()
    issues: list[ParseIssue] = []
    skipped: list[Skipped] = []
    for src in discover(paths, format=fmt, issues=issues, skipped=skipped):
        out.seen += 1
        key = str(src.path.resolve())
        try:
            size, mtime = source_fingerprint(src.path, src.is_dir)
        except OSError as exc:
            out.issues.append(f"{src.path}: cannot stat: {exc.strerror or exc}")
            out.failed += 1
            continue
        if since is not None and mtime < since:
            out.unchanged += 1
            continue
        known = ledger.source(key)
        if known is not None and known.size == size and known.mtime == mtime:
            out.unchanged += 1
            continue
        item = Source(src.path, src.format, src.is_dir, key, size, mtime, forced=src.forced)
        if known is not None:
            # Touched but maybe not changed (copied, synced): the hash decides.
            item.content_hash = source_hash(src.path, src.is_dir)
            if item.content_hash == known.content_hash:
                out.unchanged += 1
                if not dry_run:
                    ledger.record_source(key, size=size, mtime=mtime,
                                         content_hash=known.content_hash, format=known.format,
                                         status=known.status, error=known.error)
                continue
        out.todo.append(item)
    pause_point("sources")
    out.skipped.extend(str(s) for s in skipped if not s.special)
    out.skipped_special.extend(str(s) for s in skipped if s.special)
    for issue in issues:
        if issue.fatal and _known_failure(issue, ledger, dry_run):
            out.seen += 1
            out.unchanged += 1
            continue
        out.issues.append(str(issue))
        if issue.fatal:
            out.failed += 1
            out.seen += 1
    return out


def _known_failure(issue: ParseIssue, ledger: Ledger, dry_run: bool) -> bool:
    """True when the ledger already reported this unreadable, unchanged file; else record it.

    A file that cannot be read fails the same way every night: report it once, not forever.
    """
    path = Path(issue.path)
    try:
        st = path.stat()
    except OSError:
        return False
    key = str(path.resolve())
    known = ledger.source(key)
    if known is not None and known.status == "failed" and known.size == st.st_size \
            and known.mtime == st.st_mtime:
        return True
    if not dry_run and path.is_file():
        ledger.record_source(key, size=st.st_size, mtime=st.st_mtime,
                             content_hash=source_hash(path, False), format=None,
                             status="failed", error=issue.message[:2000])
    return False
