"""One step of the HTML timeline as readable cells: what the agent did, not its JSON.

A shell call reads as its command, a file tool as the tool and its path, any other tool as
``tool: key=value`` kept short; the full arguments stay one click away in a ``<details>``.
All text is HTML-escaped and redacted.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from ..model import Step
from ..privacy import redact

FOLD_AT = 240
"""Arguments or outputs longer than this many characters are folded (first line shown)."""
FOLD_LINES = 8
"""... or with this many lines."""
HEAD_CHARS = 160
"""A folded text or an action shows at most this many characters of its first line."""
VALUE_CHARS = 40
"""Each ``key=value`` of a generic tool call shows at most this many characters of its value."""

_COMMAND_KEYS = ("command", "cmd", "CommandLine", "commandline", "input")
_PATH_KEYS = ("file_path", "path", "filePath", "TargetFile", "target_file", "AbsolutePath",
              "filename", "notebook_path", "DirectoryPath", "dir_path")
_FILE_TOOLS = frozenset({"read", "edit", "write", "ls"})
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+?)\s*$", re.M)


def esc(text: object) -> str:
    """Redacted and HTML-escaped."""
    return html.escape(redact(str(text)))


def fold(text: str) -> str:
    """The text, or a ``<details>`` showing its first line when it is long."""
    if len(text) <= FOLD_AT and text.count("\n") < FOLD_LINES:
        return f"<code>{esc(text)}</code>"
    head = text.split("\n", 1)[0][:120]
    return (f"<details><summary><code>{esc(head)}</code> … ({len(text):,} characters)</summary>"
            f"<code>{esc(text)}</code></details>")


def _short(text: str, limit: int) -> str:
    """The first line of ``text``, at most ``limit`` characters, ``…`` marking a cut."""
    lines = text.strip().splitlines() or [""]
    first = lines[0]
    cut = len(lines) > 1 or len(first) > limit
    return (first[:limit].rstrip() + " …") if cut else first


def _string(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def tool_name(step: Step) -> str:
    """The tool's own name when the log gave one, else the normalized one.

    ``write_stdin`` says more than the ``bash`` it maps to.
    """
    raw = step.extra.get("raw_tool") if isinstance(step.extra, dict) else None
    return str(raw or step.tool or "tool")


def _command(args: dict[str, Any]) -> str:
    for key in _COMMAND_KEYS:
        value = args.get(key)
        if isinstance(value, (str, list)) and _string(value).strip():
            return _string(value).strip()
    return ""


def _paths(args: dict[str, Any]) -> list[str]:
    for key in _PATH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return [value.strip()]
    patch = next((v for v in args.values() if isinstance(v, str) and "*** " in v), "")
    return list(dict.fromkeys(_PATCH_FILE.findall(patch)))


def headline(step: Step) -> str:
    """One readable line for a tool call (plain text, not escaped)."""
    args = step.args if isinstance(step.args, dict) else {}
    name = tool_name(step)
    if step.tool in _FILE_TOOLS:
        paths = _paths(args)
        if paths:
            more = f" (+{len(paths) - 1} more)" if len(paths) > 1 else ""
            return f"{step.tool} {_short(paths[0], HEAD_CHARS)}{more}"
    command = _command(args) if step.tool in ("bash", *_FILE_TOOLS) else ""
    if command and step.tool == "bash":
        # A shell command reads as one; code handed to a tool (Codex ``exec``) names it.
        code = isinstance(args.get("input"), str) and not _command({"cmd": args.get("cmd")})
        return (f"{name}: " if code else "$ ") + _short(command, HEAD_CHARS)
    if command:
        return _short(command, HEAD_CHARS)
    pairs = [f"{k}={_short(_string(v), VALUE_CHARS)}" for k, v in args.items()
             if v not in (None, "", [], {})]
    return _short(f"{name}: {' '.join(pairs)}" if pairs else name, HEAD_CHARS)


def _arguments(args: dict[str, Any]) -> str:
    """Every argument, one ``key: value`` per line, strings as they are (newlines kept)."""
    return "\n".join(f"{k}: {_string(v)}" for k, v in args.items())


def action_cell(step: Step) -> str:
    """The action column of a step (without its tags)."""
    if step.kind != "tool":
        return fold(step.text or step.output)
    line = headline(step)
    args = step.args if isinstance(step.args, dict) else {}
    full = _arguments(args)
    shown = f"<code class=\"act\">{esc(line)}</code>"
    # A lone argument the headline shows whole (a short command, a path): nothing to unfold.
    only = _string(next(iter(args.values()))).strip() if len(args) == 1 else None
    if not args or (only and only in line):
        return shown
    return (f'{shown}<details class="args"><summary>arguments ({len(args)})</summary>'
            f"<code>{esc(full)}</code></details>")


def output_cell(step: Step) -> str:
    """The output column: a message's text is shown once, in the action column."""
    if step.kind != "tool" and (not step.text or step.output.strip() == step.text.strip()):
        return ""
    return fold(step.output)
