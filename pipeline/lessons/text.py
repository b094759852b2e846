"""Text helpers of the lesson builder: repo-relative paths, bounded text cut at a word."""

from __future__ import annotations

import re

# Sandbox and workspace roots of the benchmark harnesses: the repo root inside them. Specific
# first: ``/workspace/owner__repo__1.0`` is a root, and so is ``/workspace`` alone.
_SANDBOXES = (r"/workspace/[\w.-]+__[\w.-]+", r"/[\w.-]+__[\w.-]+", r"/tmp/[\w.-]+/repo",
              r"/workspace", r"/testbed", r"/repo", r"/app", r"/code")
_SANDBOX_RES = tuple((re.compile(r"(?<![\w.~/-])" + root + "/"),
                      re.compile(r"(?<![\w.~/-])" + root + r"(?![\w./-])"))
                     for root in _SANDBOXES)
# The author's home: a path under it that is not under the session root keeps its tail only.
_HOME_PATH = re.compile(r"(?<![\w.~/-])(?:/Users|/home|/root)/[^\s'\"`:,)]+")


def roots_of(cwd: object) -> list[str]:
    """The session's own root (its logged cwd), when the log has one."""
    if not isinstance(cwd, str) or not cwd.startswith("/") or cwd.rstrip("/") == "":
        return []
    return [cwd.rstrip("/")]


def _tail(match: re.Match[str]) -> str:
    parts = [p for p in match.group(0).split("/") if p]
    return "…/" + "/".join(parts[-2:]) if len(parts) > 3 else "~"


def relativize(text: str, roots: list[str]) -> str:
    """``text`` with the session root, sandbox roots and home paths made repo-relative."""
    if not text:
        return text
    for root in roots:
        text = text.replace(root + "/", "")
        text = re.sub(re.escape(root) + r"(?![\w./-])", ".", text)
    for under, bare in _SANDBOX_RES:
        text = bare.sub(".", under.sub("", text))
    return _HOME_PATH.sub(_tail, text)


def bound(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters at a word boundary, with ``…`` when cut.

    A backtick span is never left open: a cut inside one drops the span.
    """
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    if space > limit // 2:
        cut = cut[:space]
    if cut.count("`") % 2:
        cut = cut[: cut.rfind("`")]
    return cut.rstrip(" ,;:([{\n") + " …"


def one_line(text: str, limit: int) -> str:
    """Whitespace collapsed, bounded at a word."""
    return bound(" ".join(text.split()), limit)


def code(text: str) -> str:
    """``text`` as an inline code span (longer fence when it holds backticks)."""
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def visible(line: str) -> str:
    """One line with its leading tabs spelled out (``\\t``).

    So an indentation difference survives being quoted.
    """
    body = line.lstrip(" \t")
    lead = line[: len(line) - len(body)]
    return lead.replace("\t", "\\t") + one_line(body, 120)
