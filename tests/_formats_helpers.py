"""Shared helpers for the format adapter tests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pipeline.formats.base import ParseContext
from pipeline.formats.discover import Skipped, discover, parse_source
from pipeline.model import ParseIssue, Trajectory


def parse_all(*paths: Path, fmt: str | None = None,
              skipped: list[Skipped] | None = None) -> tuple[list[Trajectory], list[ParseIssue]]:
    """Discover and parse ``paths``; return trajectories and every issue met.

    Files left out as not session logs (or FIFOs, devices, loops) go to ``skipped``.
    """
    issues: list[ParseIssue] = []
    ctx = ParseContext()
    trajs = [t for src in discover(list(paths), format=fmt, issues=issues, skipped=skipped)
             for t in parse_source(src, ctx)]
    return trajs, issues + ctx.issues


def parse_one(path: Path, fmt: str | None = None) -> Trajectory:
    """The single trajectory of ``path`` (asserts there is exactly one and no fatal issue)."""
    trajs, issues = parse_all(path, fmt=fmt)
    assert not [i for i in issues if i.fatal], issues
    assert len(trajs) == 1, [t.id for t in trajs]
    return trajs[0]


def json_records(path: Path) -> Iterator[Any]:
    """Every JSON document of a JSON Lines file, in order, read with the stdlib (not orf).

    Real logs hold lines with two records run together (``{...}{...}``: a later run appended
    to a last record that lacked its newline); both are records of the log.
    """
    decoder = json.JSONDecoder()
    for line in path.read_text().splitlines():
        line, pos = line.strip(), 0
        while pos < len(line):
            value, pos = decoder.raw_decode(line, pos)
            yield value
            while pos < len(line) and line[pos].isspace():
                pos += 1


def session_files(folder: Path, *suffixes: str) -> list[Path]:
    """Real session files of a shared sample folder (SCHEMA-REF/DOC/README/SOURCES excluded)."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name.endswith(suffixes)
                  and not p.name.startswith(("SCHEMA-REF__", "DOC__"))
                  and "README" not in p.name and p.name != "SOURCES.md")


def sample_notes(folder: Path) -> dict[Path, str]:
    """Each file listed in ``folder/SOURCES.md`` mapped to its note (the table's last column)."""
    sources = folder / "SOURCES.md"
    notes: dict[Path, str] = {}
    if not sources.is_file():
        return notes
    for line in sources.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and line.startswith("| ") and cells[0] not in ("file", "---"):
            notes[folder / cells[0]] = cells[-1]
    return notes


def is_real_session(note: str) -> bool:
    """Whether a SOURCES.md note describes a real session (not metadata, report or notes)."""
    low = note.lower()
    return low.startswith("real") and "not a session" not in low
