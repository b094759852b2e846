"""The text of aider's chat history: line kinds, and the edit blocks of an assistant reply.

Pure string work shared by the aider adapter (``aider.py``, which cuts a file into turns)
and its session builder (``aider_session.py``, which turns them into steps). The rules
follow aider's own parsers, so a block aider would apply is a block read here:

* SEARCH/REPLACE blocks (``diff`` / ``diff-fenced`` formats): the file name is the first
  non-fence line among the three before ``<<<<<<< SEARCH`` (``find_filename``), stripped of
  ``#``, backticks, ``*`` and a trailing ``:``; a block without one reuses the previous
  block's file. 5 to 9 marker characters are accepted, as aider does.
* whole files (``whole`` format): a fence opened right after a line naming the file; its
  content is the new file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

HEAD = re.compile(r"^\s*<{5,9} SEARCH>?\s*$")
DIVIDER = re.compile(r"^\s*={5,9}\s*$")
UPDATED = re.compile(r"^\s*>{5,9} REPLACE\s*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")
_THINK = re.compile(r"^\s*<(think|thinking)>\s*\n(.*?)\n?\s*</\1>\s*", re.DOTALL)
_THINK_PRETTY = re.compile(r"^\s*► \*\*THINKING\*\*\s*\n(.*?)\n-{6,}\s*\n► \*\*ANSWER\*\*\s*\n",
                           re.DOTALL)


def is_user(line: str) -> bool:
    """A user turn line: aider writes ``#### text`` and ends every such line with two spaces.

    A Markdown heading in a reply (``#### Install``) has no trailing spaces.
    """
    return line.startswith("#### ") and line.endswith("  ")


def is_tool(line: str) -> bool:
    """A line of aider's own output (``> text``; ``>>>>>>> REPLACE`` is not one)."""
    return line.startswith("> ") or line.rstrip() == ">"


def tool_text(line: str) -> str:
    """The text of one aider output line, without the ``> `` prefix and trailing spaces."""
    if line.startswith("> "):
        return line[2:].rstrip()
    return line.lstrip(">").rstrip() if line.rstrip() == ">" else line.rstrip()


class Fences:
    """Whether a line stream is inside a code fence or a SEARCH/REPLACE block.

    Inside either, lines that look like aider's output or a user turn are content.
    """

    __slots__ = ("fence", "in_sr")

    def __init__(self) -> None:
        self.fence: str | None = None
        self.in_sr = False

    @property
    def inside(self) -> bool:
        """True within a fence or a SEARCH/REPLACE block."""
        return self.in_sr or self.fence is not None

    def track(self, line: str) -> None:
        """Update the state with ``line``."""
        if self.in_sr:
            if UPDATED.match(line):
                self.in_sr = False
            return
        if HEAD.match(line):
            self.in_sr = True
            return
        m = _FENCE.match(line)
        if m is None:
            return
        if self.fence is None:
            self.fence = m.group(1)
        elif not m.group(2).strip() and m.group(1)[0] == self.fence[0] \
                and len(m.group(1)) >= len(self.fence):
            self.fence = None


def strip_filename(line: str) -> str | None:
    """The file a line names, as aider's ``strip_filename`` reads it (None: not a name)."""
    name = line.strip()
    if not name or name == "..." or name.startswith("```"):
        return None
    name = name.rstrip(":").lstrip("#").strip().strip("`").strip("*").replace("\\_", "_")
    return name or None


def whole_filename(line: str) -> str | None:
    """The file a line before a whole-file listing names (aider's ``whole`` coder order)."""
    name = line.strip().strip("*").rstrip(":").strip("`").lstrip("#").strip()
    return name if name and len(name) <= 250 else None


def _find_filename(before: list[str]) -> tuple[str, int] | None:
    """``(name, offset back)`` from the up to 3 lines before a SEARCH marker (aider's rule)."""
    for back, line in enumerate(reversed(before[-3:]), 1):
        name = strip_filename(line)
        if name:
            return name, back
        if not line.lstrip().startswith("```"):
            return None
    return None


@dataclass
class EditBlock:
    """One SEARCH/REPLACE block of a reply."""

    path: str
    search: str
    replace: str
    line: int
    """File line of the ``<<<<<<< SEARCH`` marker."""


@dataclass
class FileBlock:
    """One whole-file listing of a reply (``whole`` edit format)."""

    path: str
    content: str
    line: int
    """File line of the opening fence."""


@dataclass
class Reply:
    """An assistant reply, cut into the parts that become steps."""

    text: str
    """The reply without its reasoning; each SEARCH/REPLACE block is one placeholder line."""
    reasoning: str | None = None
    edits: list[EditBlock] = field(default_factory=list)
    files: list[FileBlock] = field(default_factory=list)
    malformed: list[tuple[int, str]] = field(default_factory=list)
    """``(file line, message)`` of blocks that could not be read."""


def _block_end(lines: list[str], start: int) -> tuple[int, int] | None:
    """Indices of the divider and of the REPLACE marker after a SEARCH at ``start``."""
    divider = next((j for j in range(start + 1, len(lines)) if DIVIDER.match(lines[j])), None)
    if divider is None:
        return None
    end = next((j for j in range(divider + 1, len(lines)) if UPDATED.match(lines[j])), None)
    return None if end is None else (divider, end)


def _edits(lines: list[str], first_line: int, out: Reply) -> list[str]:
    """Fill ``out.edits``; return the lines with each block replaced by a placeholder."""
    kept: list[tuple[int, str]] = []
    current: str | None = None
    i = 0
    while i < len(lines):
        if not HEAD.match(lines[i]):
            kept.append((i, lines[i]))
            i += 1
            continue
        found = _find_filename(lines[max(0, i - 3):i])
        name = found[0] if found else current
        ends = _block_end(lines, i)
        if ends is None:
            marker = ">>>>>>> REPLACE" if any(DIVIDER.match(x) for x in lines[i + 1:]) \
                else "======="
            out.malformed.append((first_line + i, f"SEARCH/REPLACE block has no {marker} "
                                  "line; its text is kept in the reply, no edit step"))
            kept.extend(enumerate(lines[i:], i))
            break
        divider, end = ends
        if name is None:
            # aider rejects a block that names no file ("Bad/missing filename"): text only.
            kept.extend(enumerate(lines[i:end + 1], i))
            i = end + 1
            continue
        current = name
        out.edits.append(EditBlock(name, "\n".join(lines[i + 1:divider]),
                                   "\n".join(lines[divider + 1:end]), first_line + i))
        # The name line and the opening fence before the block belong to it.
        start = i - found[1] if found else i
        while kept and (kept[-1][0] >= start or (
                kept[-1][0] == start - 1 and kept[-1][1].lstrip().startswith("```"))):
            start = min(start, kept.pop()[0])
        kept.append((i, f"[SEARCH/REPLACE edit of {name}]"))
        i = end + 1
        close = _FENCE.match(lines[i]) if i < len(lines) else None
        if close is not None and not close.group(2).strip():
            i += 1  # the closing fence
    return [line for _, line in kept]


def _files(lines: list[str], first_line: int) -> list[FileBlock]:
    """Whole-file listings: a fence opened right after a line naming a file (``whole``)."""
    files: list[FileBlock] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        close = next((j for j in range(i + 1, len(lines))
                      if lines[j].lstrip().startswith(m.group(1)[0] * 3)), None)
        if close is None:
            break
        name = whole_filename(lines[i - 1]) if i > 0 else None
        if name:
            files.append(FileBlock(name, "\n".join(lines[i + 1:close]), first_line + i))
        i = close + 1
    return files


def parse_reply(lines: list[str], first_line: int, *, whole: bool) -> Reply:
    """Cut an assistant reply into reasoning, text, edit blocks and file listings.

    Args:
        lines: The reply's lines (no trailing newlines).
        first_line: File line of ``lines[0]``.
        whole: True under the ``whole`` edit format: files are listings, and SEARCH/REPLACE
            markers are plain text (aider does not apply them there).
    """
    text = "\n".join(lines)
    reasoning = None
    m = _THINK.match(text) or _THINK_PRETTY.match(text)
    if m is not None:
        reasoning = m.group(m.lastindex or 1).strip() or None
        skipped = text[:m.end()].count("\n")
        lines, first_line = lines[skipped:], first_line + skipped
    out = Reply("")
    out.reasoning = reasoning
    if whole:
        out.files = _files(lines, first_line)
        kept = lines
    else:
        kept = _edits(lines, first_line, out)
    out.text = "\n".join(kept).strip()
    return out
