"""Classify a call that is not a shell command.

A structured tool call (Read, Edit, Grep, an MCP tool), a SWE-agent ACI command, an OpenHands
IPython cell, or a call logged without arguments.
"""

from __future__ import annotations

import re
from typing import Any

from ..hashing import content_hash
from ..model import Step
from . import shell
from .info import END, ENVELOPE, Info, int_or_none
from .outputs import FAILED_OUTPUT, GUTTER, WS, fingerprint

_TOOL_CLASS = {
    "read": "read", "view": "read", "write": "write", "create": "write", "edit": "edit",
    "grep": "search", "glob": "search", "search": "search", "find": "search", "ls": "list",
    "web": "web", "fetch": "web", "task": "task", "think": "think", "finish": "finish",
    "todo": "think", "plan": "think",
}

# Plan, to-do and thinking tools (TodoWrite, update_plan, write_todos, think, task trackers):
# each call records the agent's plan; calling one again is never a rerun.
_PLAN_TOOL = re.compile(
    r"todo|plan|think|tracker|^task_?(create|update|list|get)$|^(mark|update)_?task|"
    # A question put to the person (AskUserQuestion, ask_followup_question): each answer is
    # new, so asking again is a new turn of the conversation, not a rerun.
    r"^ask_?(user|followup)|user_?input$"
)

EDITOR_COMMANDS = {"view": "read", "create": "write", "str_replace": "edit", "insert": "edit",
                    "undo_edit": "edit", "write": "write", "edit": "edit"}

_PATH_KEYS = ("path", "file_path", "filepath", "absolute_path", "targetfile", "file",
              "filename", "notebook_path", "directorypath", "dir_path", "directory",
              "searchpath", "searchdirectory")

_SEARCH_DISPLAY = frozenset({"output_mode", "head_limit", "-n", "-a", "-b", "-c", "-i",
                             "context", "case_sensitive", "max_results", "limit", "offset",
                             "multiline", "ignore_case"})

_PATTERN_KEYS = ("pattern", "query", "regex", "search", "glob", "include", "includes")

# SWE-agent ACI commands sent as ``{"command": "open \"p\" 20"}`` to read/write/edit tools.
_ACI = re.compile(r"^\s*(open|create|goto|scroll_down|scroll_up|find_file|search_dir|"
                  r"search_file|edit)\b\s*(.*)$", re.S)

# OpenHands IPython agent skills: `open_file('p', 20)`, `edit_file_by_replace('p', ...)`.
_SKILL = re.compile(r"^\s*(\w+)\(\s*(?:file_name=|path=)?['\"]([^'\"]+)['\"](?:\s*,\s*(\d+))?")

_SKILL_CLASS = {"open_file": "read", "goto_line": "read", "scroll_down": "read",
                "scroll_up": "read", "edit_file_by_replace": "edit", "insert_content_at_line":
                "edit", "append_file": "edit", "create_file": "write", "search_file": "search",
                "search_dir": "search", "find_file": "search"}


def _lower_args(args: dict[str, Any]) -> dict[str, Any]:
    return {str(k).lower(): v for k, v in args.items()}


def _first_str(args: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for k in keys:
        v = args.get(k)
        if isinstance(v, str) and v.strip():
            return v
    return None


def read_range(args: dict[str, Any]) -> tuple[int, int]:
    """Line range of a read tool call from its arguments (whole file when none is given).

    Understands ``view_range [a, b]``, ``offset``/``limit``, ``start_line``/``end_line``,
    ``start``/``end`` (OpenHands, -1 meaning the end) and ``StartLine``/``EndLine``.
    """
    a = _lower_args(args)
    vr = a.get("view_range")
    if isinstance(vr, list | tuple) and len(vr) == 2:
        lo, hi = int_or_none(vr[0]) or 1, int_or_none(vr[1])
        return (max(lo, 1), END if hi is None or hi < 0 else hi)
    if a.get("offset") is not None or a.get("limit") is not None:
        lo = int_or_none(a.get("offset")) or 1
        lim = int_or_none(a.get("limit"))
        return (max(lo, 1), END if not lim else max(lo, 1) + lim - 1)
    for lo_k, hi_k in (("start_line", "end_line"), ("startline", "endline"), ("start", "end")):
        if a.get(lo_k) is not None or a.get(hi_k) is not None:
            lo, hi = int_or_none(a.get(lo_k)) or 1, int_or_none(a.get(hi_k))
            return (max(lo, 1), END if hi is None or hi < 0 else hi)
    return (1, END)


def classify_aci(command: str, step: Step, info: Info) -> bool:
    """SWE-agent ACI commands (``open "p" 20``, ``create p``, ``edit ...``); False if none."""
    m = _ACI.match(command)
    if not m:
        return False
    verb, rest = m.group(1), m.group(2)
    argv = shell.parse(rest).segments[0].argv if rest.strip() and verb != "edit" else []
    info.program = f"aci:{verb}"
    info.label = " ".join(command.split())[:200]
    info.canon = f"aci:{verb} " + " ".join(argv if verb != "edit" else rest.split())
    path = shell.norm_path(argv[0]) if argv and verb in ("open", "create") else ""
    if verb == "open" and path:
        line = int_or_none(argv[1]) if len(argv) > 1 else None
        info.cls, info.paths = "read", (path,)
        # ``open`` shows a 100-line window around the line it is given.
        info.rng = (max(1, line - 50), line + 50) if line else (1, 100)
        info.canon = f"read:{path}:{info.rng}"
    elif verb == "create" and path:
        info.cls, info.paths, info.writes = "write", (path,), (path,)
    elif verb == "edit":
        # Edits the file open in the window: the target is unknown here (see ``analyze``).
        info.cls = "edit"
    elif verb in ("find_file", "search_dir", "search_file"):
        info.cls = "search"
    else:
        info.cls = "poll"  # goto/scroll: paging through the open file
    return True


def classify_tool(step: Step, info: Info) -> None:
    """Fill ``info`` for a structured tool call from its name and arguments."""
    args = step.args or {}
    low = _lower_args(args)
    tool = (step.tool or "other").lower()
    sub = low.get("command") if isinstance(low.get("command"), str) else None
    if tool == "other":
        # Unmapped tools (MCP, plan tools) share "other": their logged name tells them apart.
        tool = raw_name(step) or tool
    cls = _TOOL_CLASS.get(tool, "think" if _PLAN_TOOL.search(tool) else "other")
    if sub in EDITOR_COMMANDS and tool != "bash" and cls != "think":
        cls = EDITOR_COMMANDS[sub]
    raw_path = _first_str(low, _PATH_KEYS)
    path = shell.norm_path(raw_path) if raw_path else ""
    info.program = tool if sub not in EDITOR_COMMANDS else f"{tool}:{sub}"
    if raw_path:
        info.label = f"{tool} {raw_path}"[:200]
    else:
        brief = " ".join(str(v) for k, v in low.items() if k not in ("thought", "description"))
        info.label = f"{tool} {' '.join(brief.split())}"[:120]
    if cls == "read":
        info.paths = (path,) if raw_path else ()
        info.rng = read_range(args)
        out = step.output[:300]
        # A listing says so; a file's text that mentions a directory is still a file (a
        # numbered view, Claude's `1→`, is always a file).
        if not GUTTER.match(out) and ("files and directories" in out or (
                "directory" in out.lower()[:120] and "/" in out)):
            cls = "list"
        if info.rng != (1, END):
            info.label += f" [{info.rng[0]}:{'' if info.rng[1] == END else info.rng[1]}]"
    elif cls in ("write", "edit"):
        info.paths = (path,) if raw_path else ()
        info.writes = info.paths
        old = low.get("old_str", low.get("old_string", low.get("targetcontent")))
        new = low.get("new_str", low.get("new_string", low.get("replacementcontent")))
        if isinstance(old, str) and isinstance(new, str):
            info.edit_old, info.edit_new = old.strip(), new.strip()
        body = low.get("file_text", low.get("content", low.get("codecontent")))
        if isinstance(body, str):
            info.content = content_hash(body.strip(), 8)
        if sub == "undo_edit":
            info.undo = True
        if tool == "edit" and isinstance(low.get("input"), str):
            # Codex apply_patch: the patch text names the files it touches.
            files = ENVELOPE.findall(low["input"])
            info.paths = info.writes = tuple(shell.norm_path(f) for f in files)
    elif cls == "search":
        info.paths = (path,) if raw_path else ()
    elif cls == "list":
        info.paths = (path or ".",)
    info.cls = cls
    canon_args = {k: v for k, v in sorted(low.items())
                  if k not in ("thought", "description", "timeout", "is_input")}
    for k in _PATH_KEYS:
        if isinstance(canon_args.get(k), str):
            canon_args[k] = shell.norm_path(canon_args[k]) or "."
    if cls == "read":
        canon_args = {"path": path, "range": list(info.rng or (1, END))}
    elif cls == "search":
        # How matches are shown (content or file names, context lines, a cap) and the case of
        # the pattern do not make it another search; nor does naming the session's own folder,
        # where a search without a path looks anyway.
        canon_args = {k: v for k, v in canon_args.items() if k not in _SEARCH_DISPLAY
                      and not (k in _PATH_KEYS and v == ".")}
    info.canon = f"{cls}:{tool}:{WS.sub(' ', repr(canon_args))}"
    if cls == "search":
        info.canon = info.canon.lower()


_ARG_TOOLS = frozenset({"bash", "shell", "run", "exec", "other", "", "exec_command"})

"""Tools that cannot act without arguments: a bare call of one is a trimmed log line."""


def raw_name(step: Step) -> str:
    """The tool name as logged, lowercased (``todowrite``, ``mcp__x__y``)."""
    raw = step.extra.get("raw_tool") or step.extra.get("function_name") or step.tool or ""
    return str(raw).lower()


def classify_bare(tool: str, raw: str, info: Info) -> None:
    """A call logged with no arguments (``write_patch``, ``localize``).

    A tool that needs arguments to act (a read, an edit, a shell) logged without them is a
    trimmed or redacted line with nothing to compare on. Other tools take none: the bare
    call is the whole action, and calling it again repeats it.
    """
    if tool != "other" or raw in _ARG_TOOLS:
        info.cls = "none"
        return
    info.cls = "think" if _PLAN_TOOL.search(raw) else "other"
    info.program = info.label = raw
    info.canon = f"bare:{raw}"


def classify_code(code: str, step: Step, info: Info) -> None:
    """OpenHands IPython cells: agent-skill calls map to read/edit/search, the rest is run."""
    m = _SKILL.match(code)
    info.label = " ".join(code.split())[:200]
    info.canon = "python-cell " + " ".join(code.split())
    info.program = m.group(1) if m else "ipython"
    info.out_fp = fingerprint(step.output)
    if FAILED_OUTPUT.match(step.output[:200]):
        info.failed = True
    if not m or m.group(1) not in _SKILL_CLASS:
        info.cls = "run"
        return
    info.cls = _SKILL_CLASS[m.group(1)]
    path = shell.norm_path(m.group(2))
    info.paths = (path,)
    if info.cls == "read":
        line = int_or_none(m.group(3))
        # open_file shows a 100-line window around the line it is given.
        info.rng = (max(1, line - 50), line + 50) if line else (1, 100)
        info.canon = f"read:{path}:{info.rng}"
    elif info.cls in ("edit", "write"):
        info.writes = (path,)
