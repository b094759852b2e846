"""Parse + detect for one source, shaped to run in a worker process.

Everything crossing the process boundary is picklable and small: counts and issue lines for
every session, and the trajectory itself only for sessions whose waste passes the minimum
(judge and draft need their steps).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model import Finding, Trajectory


@dataclass
class SessionScan:
    """One (sub-)session after detection."""

    session_id: str
    path: str
    format: str
    findings: list[Finding]
    wasted_steps: int
    steps: int
    trajectory: Trajectory | None = None
    """Kept only when ``wasted_steps`` passes the run's minimum."""
    facts: dict[str, Any] | None = None
    """History row for ``orf trends`` (``trends.history.session_facts``)."""


@dataclass
class ScanResult:
    """One source after parse + detect."""

    path: str
    format: str
    sessions: list[SessionScan] = field(default_factory=list)
    issues: list[str] = field(default_factory=list)
    """``path:line: message`` lines."""
    fatal: bool = False
    """True when the source could not be read at all."""


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


def _flatten(traj: Trajectory) -> list[Trajectory]:
    out = [traj]
    for sub in traj.subagents:
        out.extend(_flatten(sub))
    return out


def scan_source(path: str, fmt: str, is_dir: bool, options: dict[str, Any]) -> ScanResult:
    """Parse ``path`` and run every detector; never raises for bad input.

    Args:
        path: File or session folder.
        fmt: Adapter name from discovery.
        is_dir: True for folder-shaped sessions.
        options: ``output_max_chars``, ``max_line_bytes``, ``detect`` (DetectSettings dump),
            ``min_wasted_steps`` and ``forced`` (``--format`` chose the adapter).
    """
    from ..config import DetectSettings
    from ..detect import detect_all
    from ..formats.base import ParseContext
    from ..formats.discover import SessionSource, parse_source
    from ..trends.history import session_facts

    result = ScanResult(path, fmt)
    ctx = ParseContext(output_max_chars=int(options.get("output_max_chars", 4000)),
                       max_line_bytes=int(options.get("max_line_bytes", 256_000_000)))
    detect_settings = DetectSettings.model_validate(options.get("detect") or {})
    min_wasted = int(options.get("min_wasted_steps", 1))
    try:
        src = SessionSource(Path(path), fmt, is_dir, forced=bool(options.get("forced")))
        for traj in parse_source(src, ctx):
            for t in _flatten(traj):
                findings = list(detect_all(t, detect_settings))
                wasted = sum(f.wasted_steps for f in findings)
                keep = t if findings and wasted >= min_wasted else None
                if keep is not None:
                    keep.subagents = []  # each sub-agent is its own session here
                result.sessions.append(SessionScan(t.id, path, fmt, findings, wasted,
                                                   len(t.steps), keep,
                                                   session_facts(t, findings)))
    except Exception as exc:  # noqa: BLE001 - a detector bug on one file must not stop the run
        if os.environ.get("ORF_RAISE_ERRORS"):
            raise
        result.issues.append(f"{path}: {type(exc).__name__}: {exc}")
        result.fatal = True
    for issue in ctx.issues:
        result.issues.append(str(issue))
        result.fatal = result.fatal or issue.fatal
    return result
