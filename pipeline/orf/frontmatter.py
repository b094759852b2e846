"""YAML frontmatter: split it off a Markdown file, read it safely, write it in ORF's style.

ORF files start with a ``---`` line, the YAML block, a closing ``---`` line, then the body.
Reading uses ``yaml.safe_load`` only. Writing mirrors the reference store: double-quoted
scalars, keyword lists as block lists, and extra mappings (``provenance``) at the end.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

from ..errors import StoreError

_DELIM = re.compile(r"---[ \t]*\r?\n?")
_PLAIN_SAFE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+/-]*")


@dataclass(frozen=True)
class Split:
    """A Markdown file cut at its frontmatter delimiters."""

    yaml_text: str
    """The text between the two ``---`` lines (with its trailing newline)."""
    body: str
    """Everything after the closing ``---`` line."""
    yaml_start: int
    """Offset of ``yaml_text`` in the original text."""
    yaml_end: int
    """Offset just after ``yaml_text`` (where the closing ``---`` starts)."""
    first_line: int
    """1-based line number of the first YAML line."""
    body_line: int
    """1-based line number of the first body line."""


def split_frontmatter(text: str) -> Split | None:
    """Cut ``text`` at its frontmatter; ``None`` when it has no ``---`` block at the top."""
    first = _DELIM.match(text)
    if first is None or not first.group(0).endswith("\n"):
        return None
    pos = first.end()
    line_no = 2
    while pos <= len(text):
        nl = text.find("\n", pos)
        line_end = len(text) if nl < 0 else nl + 1
        line = text[pos:line_end]
        if line.rstrip("\r\n").rstrip(" \t") == "---":
            body_line = line_no + 1
            return Split(text[first.end():pos], text[line_end:], first.end(), pos, 2, body_line)
        if nl < 0:
            return None
        pos = line_end
        line_no += 1
    return None


def load_yaml(yaml_text: str, *, where: str, first_line: int = 1) -> Any:
    """``yaml.safe_load`` with errors turned into ``StoreError("where:line: ...")``."""
    try:
        return yaml.safe_load(yaml_text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = first_line + mark.line if mark is not None else first_line
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise StoreError(f"{where}:{line}: invalid YAML frontmatter: {problem}") from None
    except (ValueError, TypeError, RecursionError) as exc:
        # PyYAML's constructors raise plain errors for values it parsed but cannot build,
        # e.g. the timestamp 2026-13-45 ("month must be in 1..12").
        raise StoreError(f"{where}:{first_line}: invalid YAML frontmatter: {exc}") from None


def key_line(split: Split, key: str) -> int:
    """1-based line of the top-level ``key:`` in the frontmatter (first line if absent)."""
    pattern = re.compile(rf"{re.escape(key)}\s*:")
    for offset, line in enumerate(split.yaml_text.splitlines()):
        if pattern.match(line):
            return split.first_line + offset
    return split.first_line


def quote(value: str) -> str:
    """A YAML double-quoted scalar on one line (escapes newlines, quotes, control chars)."""
    dumped = yaml.safe_dump(value, default_style='"', width=1 << 30, allow_unicode=True)
    return dumped.rstrip("\n").removesuffix("\n...")


def plain_or_quoted(value: str) -> str:
    """Keywords stay plain like the reference store, unless YAML would read them as non-text."""
    if _PLAIN_SAFE.fullmatch(value) and yaml.safe_load(value) == value:
        return value
    return quote(value)


class _IndentedDumper(yaml.SafeDumper):
    """Safe dumper that indents lists under their key, like the ``keywords`` block."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        """Never emit indentless sequences."""
        super().increase_indent(flow, False)


def dump_mapping_block(key: str, value: dict[str, Any]) -> str:
    """``key:`` followed by ``value`` as an indented block mapping (round-trips safe_load).

    Compact, so the lesson below is near the top of the file: a collection of scalars (a
    session, the verdict, a list of ids) is one flow-style line, and keys without a value
    are left out.
    """
    value = {k: v for k, v in value.items() if v is not None}
    inner = yaml.dump(value, Dumper=_IndentedDumper, sort_keys=False, default_flow_style=None,
                      allow_unicode=True, width=1 << 30)
    if not value:
        return f"{key}: {{}}\n"
    lines = "".join(f"  {line}\n" if line else "\n" for line in inner.splitlines())
    return f"{key}:\n{lines}"
