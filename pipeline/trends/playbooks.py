"""What ``orf trends`` needs of each playbook: its signatures, arrival date and programs."""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..gitutil import GitError, git, repo_root


@dataclass(frozen=True)
class PlaybookInfo:
    """One playbook as trends sees it."""

    id: str
    """``EXP-YYYYMMDD-NNNN``."""
    title: str
    """The playbook's title."""
    signatures: tuple[str, ...]
    """Trap signatures it covers (provenance plus duplicates the ledger tied to it), sorted."""
    entered_at: float | None
    """Epoch seconds of the first commit that added its file, else its ``created_at`` date."""
    programs: frozenset[str]
    """First words of the commands its validated path quotes (for the staleness check)."""


_CODE = re.compile(r"`([^`\n]+)`")
_FENCE = re.compile(r"^```.*?$(.*?)^```", re.M | re.S)
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_WORD = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


def programs_named(validated_path: str) -> frozenset[str]:
    """First words of the inline code spans and fenced lines of a validated path.

    Only words shaped like program names are kept; ``trends`` then ignores those that never
    appear as a program in the logs (``-vv``, a file name), so prose in backticks is harmless.
    """
    commands = [m.group(1) for m in _CODE.finditer(validated_path)]
    for block in _FENCE.findall(validated_path):
        commands.extend(block.splitlines())
    out: set[str] = set()
    for command in commands:
        words = [w for w in command.strip().lstrip("$ ").split() if not _ENV.match(w)]
        if words:
            word = words[0].rsplit("/", 1)[-1]
            if _WORD.match(word):
                out.add(word)
    return frozenset(out)


def entered_dates(store_root: Path) -> dict[Path, float]:
    """Epoch seconds of the first commit that added each file under ``store_root``.

    One ``git log`` for the whole store; empty when the store is not in a git work tree.
    """
    root = repo_root(store_root)
    if root is None:
        return {}
    try:
        out = git(root, "-c", "core.quotePath=false", "log", "--diff-filter=A",
                  "--format=%x00%ct", "--name-only", "--", str(store_root.resolve()))
    except GitError:
        return {}  # e.g. a repository without commits yet
    dates: dict[Path, float] = {}
    for chunk in out.split("\0")[1:]:
        lines = chunk.strip().splitlines()
        if not lines:
            continue
        when = float(lines[0])
        for name in lines[1:]:
            if name.strip():
                path = (root / name.strip()).resolve()
                # git log lists newest first: the last seen (oldest) add wins.
                dates[path] = min(when, dates.get(path, when))
    return dates


def _created(value: str) -> float | None:
    try:
        day = datetime.date.fromisoformat(str(value)[:10])
    except ValueError:
        return None
    return datetime.datetime(day.year, day.month, day.day,
                             tzinfo=datetime.timezone.utc).timestamp()


def playbook_infos(experiences: Iterable[Any], store_root: Path,
                   extra_signatures: dict[str, set[str]]) -> list[PlaybookInfo]:
    """Build ``PlaybookInfo`` for each store experience, sorted by id."""
    from ..provenance import Provenance

    dates = entered_dates(store_root)
    out = []
    for exp in experiences:
        sigs = Provenance.read(exp.provenance).all_signatures() | extra_signatures.get(exp.id,
                                                                                     set())
        entered = dates.get(Path(exp.path).resolve())
        out.append(PlaybookInfo(
            id=exp.id, title=exp.title, signatures=tuple(sorted(sigs)),
            entered_at=entered if entered is not None else _created(exp.created_at),
            programs=programs_named(exp.validated_path)))
    return sorted(out, key=lambda p: p.id)
