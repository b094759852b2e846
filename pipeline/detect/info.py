"""The format-independent view of one step that every family reads.

``Info`` and the small questions asked of it: is it an action, what did a read show, what
is its session-independent shape.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from . import shell
from .masks import NUMBERS
from .shell import Parsed, Segment

END = 10**9

"""Open end of a read range (``view_range [a, -1]``, a whole-file read)."""

CODEX_SHOWN = 256

"""Lines of a long output Codex shows the model (its first and last 128)."""


@dataclass(slots=True)
class Info:
    """Format-independent view of one step (see the module docstring)."""

    cls: str
    """Step class: read, write, edit, test, build, lint, run, search, list, inspect, install,
    vcs, poll, web, task, think, finish, other; ``none`` for non-tool steps."""
    program: str = ""
    """Main program or tool (``pytest``, ``grep``, ``read``)."""
    canon: str = ""
    """Canonical action for near-repeat comparison."""
    paths: tuple[str, ...] = ()
    """Normalized paths the step reads or targets."""
    rng: tuple[int, int] | None = None
    """Line range of a read (1-based, inclusive); ``(1, END)`` for a whole file."""
    writes: tuple[str, ...] = ()
    """Paths the step writes (when it succeeds)."""
    unknown_mutation: bool = False
    """True when the step may change state whose target is unknown (install, git checkout)."""
    env_change: bool = False
    """True when the step only changes the shell state (cd, export, source)."""
    failed: bool = False
    """The step ended in an error."""
    out_fp: str | None = None
    """Masked fingerprint of the output (None when the output is empty)."""
    out_lines: int = 0
    """Lines of output (how much a listing showed)."""
    clipped: bool = False
    """The observation says it was clipped/truncated (a partial read)."""
    edit_old: str | None = None
    """Replaced text of a string-replacement edit."""
    edit_new: str | None = None
    """Replacement text of a string-replacement edit."""
    content: str | None = None
    """Hash of the full new content of a file write."""
    undo: bool = False
    """An explicit undo of the last edit (``undo_edit``)."""
    git_restore: tuple[str, ...] = ()
    """Paths restored by ``git checkout -- p`` / ``git restore p`` ("*" for the whole tree)."""
    label: str = ""
    """Short human text of the action (command line or ``tool path``)."""
    shell: bool = False
    """The action is a shell command."""
    command: str = ""
    """The shell command as sent (empty for other actions)."""
    epoch: int = 0
    """Global mutation counter before the step."""
    state: tuple[Any, ...] = ()
    """State token before the step (see module docstring)."""
    state_after: tuple[Any, ...] = ()
    """State token after the step."""
    filtered: bool = False
    """A read whose output went through a filter (``| grep``): it showed an unknown part."""
    withheld: bool = False
    """The harness withheld the output (too long): the agent saw nothing of it."""
    to_end: bool = False
    """A ranged read that printed fewer lines than asked: it showed the file to its end."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Family-specific scratch values."""
    parsed: Parsed | None = None
    """A shell step's command, split once by the classifier (shared with the parse cache)."""

    # The command of a shell step in the parser's terms, so that no family parses it again.

    def segments(self) -> list[Segment]:
        """The simple commands of a shell step that name a program (none for other steps)."""
        return [g for g in self.parsed.segments if g.argv] if self.parsed else []

    def runs(self) -> list[Segment]:
        """The segments that run on their own: not the filters piped after them."""
        return [g for g in self.segments() if not g.piped]

    @property
    def cwd(self) -> str:
        """The folder a leading ``cd`` moved to ("" for the session's)."""
        return self.parsed.cwd if self.parsed else ""

    def form(self, segment: Segment) -> str:
        """Canonical text of one segment: flags sorted, cosmetic ones dropped, paths as named."""
        return " ".join(shell.canon_argv(segment.argv, self.cwd))

    def filters(self) -> tuple[tuple[str, ...], ...]:
        """The commands piped after the first one, pager tails (``| tail -5``) included."""
        return shell.pipe_filters(self.command) if self.shell else ()

    def named_files(self) -> frozenset[str]:
        """Base names of the paths the canonical command names (before a here-document)."""
        body = self.canon.partition(" <<")[0]
        return frozenset(w.rsplit("/", 1)[-1] for w in body.split(" ")[1:]
                         if shell.is_pathlike(w))


def path_from(path: str, folder: str) -> str:
    """``path`` as the classifier names paths, read from ``folder`` (``git -C x``)."""
    return shell.norm_path(path, folder)


def int_or_none(v: Any) -> int | None:
    """``int(v)``, or None when ``v`` is not a number."""
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def is_action(info: Info) -> bool:
    """True for steps that act on the world and can be repeated wastefully."""
    return info.cls not in ("none", "poll", "think", "finish", "task", "env")


PLACE_LINES = 6

"""Lines a listing must show before equal listings at two paths are taken for one folder."""


def shown_range(info: Info) -> tuple[int, int]:
    """The lines a read really showed: a clipped view covers only its head."""
    lo, hi = info.rng or (1, END)
    if info.to_end:
        return (lo, END)
    if not info.clipped:
        return (lo, hi)
    if (lo, hi) == (1, END):
        return (1, 100)
    return (lo, min(hi, lo + CODEX_SHOWN // 2 - 1))


def place_key(info: Info) -> tuple[str, str, str] | None:
    """A listing keyed by what it showed (None for other steps).

    The same folder under another spelling of its path (``/workspace/repo`` and ``/testbed``,
    one checkout mounted twice) lists the same names; another folder lists others.
    """
    # A few names (package.json, src, tsconfig.json) are shared by sibling folders of a
    # monorepo; a checkout's root listed twice shows many.
    if info.cls != "list" or info.out_fp is None or info.failed or info.out_lines < PLACE_LINES:
        return None
    flags = " ".join(w for w in info.canon.split(" ")[1:] if w.startswith("-"))
    return (info.program, flags, info.out_fp)


def path_ext(path: str) -> str:
    """File extension of ``path`` for masked signatures (``.py``), or ``<dir>``."""
    base = path.rsplit("/", 1)[-1]
    return "." + base.rsplit(".", 1)[-1] if "." in base[1:] else "<dir>"


def shape(info: Info) -> str:
    """Session-independent shape of an action: paths, numbers and literals masked."""
    parts = info.canon.split()
    out = []
    for tok in parts[:8]:
        if shell.is_pathlike(tok):
            out.append("<" + path_ext(tok) + ">")
        elif tok.startswith("-"):
            out.append(NUMBERS.sub("#", tok))
        elif re.fullmatch(r"[\w.:-]+", tok) and len(out) < 2:
            out.append(NUMBERS.sub("#", tok))
        else:
            out.append("<arg>")
    if info.cls in ("read", "write", "edit", "search", "list") and not info.canon[:1].isalpha():
        return info.cls
    if ":" in info.canon.split(" ", 1)[0]:
        # Structured tool call: class, tool and the file type only.
        ext = path_ext(info.paths[0]) if info.paths else ""
        return f"{info.cls}:{info.program}:{ext}"
    return " ".join(out)


# The files an apply_patch envelope changes.
ENVELOPE = re.compile(r"\*\*\* (?:Update|Add|Delete) File: (\S+)")
