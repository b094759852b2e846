"""The vocabulary every format shares: normalized tool names, and exit codes read from text.

A new format adds its tool names to ``_TOOL_NAMES`` and its exit-code phrasing to
``EXIT_CODE_PATTERNS``; detectors then compare its steps with every other format's.
"""

from __future__ import annotations

import re

# Raw tool names (lowercased) -> normalized names shared by every format. Unknown names map
# to "other" and keep their raw name in ``Step.extra["raw_tool"]`` and in the action key.
_TOOL_NAMES: dict[str, str] = {}
for _norm, _names in {
    "bash": (
        "bash", "shell", "sh", "cmd", "exec_command", "run_shell_command", "run_command",
        "shell_command", "local_shell", "local_shell_call", "execute_bash", "cmdrunaction",
        "terminal", "execute_command", "run", "command", "bashoutput", "write_stdin",
        "send_command_input", "exec",
    ),
    "read": (
        "read", "read_file", "view_file", "view", "readfile", "notebookread", "fileread",
        "read_many_files", "view_file_outline", "view_code_item", "open_file", "open", "cat",
        "goto", "scroll_up", "scroll_down",
    ),
    "edit": (
        "edit", "multiedit", "replace", "apply_patch", "edit_file", "str_replace",
        "str_replace_editor", "notebookedit", "replace_file_content",
        "multi_replace_file_content", "fileeditaction", "file_editor", "patch", "insert",
        "undo_edit",
    ),
    "write": (
        "write", "write_file", "writefile", "write_to_file", "create", "create_file",
        "filewriteaction",
    ),
    "grep": (
        "grep", "grep_search", "search_file_content", "search", "codebase_search", "rg",
        "ripgrep", "search_file", "search_dir", "search_code",
    ),
    # Name searches (``find``) are globs, not listings: detectors class both as searches.
    "glob": ("glob", "find_by_name", "find", "find_file", "file_search"),
    "ls": ("ls", "list_dir", "list_directory", "list_files", "tree"),
    "web": (
        "web", "webfetch", "websearch", "web_search", "web_fetch", "google_web_search",
        "search_web", "read_url_content", "browse", "browse_interactive", "browser",
        "web_search_call", "browseinteractiveaction", "fetch", "navigate", "curl_url",
    ),
    "task": ("task", "agent", "invoke_subagent", "spawn_agent", "delegate", "subagent"),
    "think": ("think", "reasoning", "thought"),
    "finish": ("finish", "submit", "task_complete", "complete", "exit", "done"),
}.items():
    for _n in _names:
        _TOOL_NAMES[_n] = _norm


def normalize_tool(name: str | None) -> str:
    """Map a raw tool name to the shared vocabulary.

    Args:
        name: The tool name as the log spells it (``Bash``, ``exec_command``, ...).

    Returns:
        One of ``bash/read/edit/write/grep/glob/ls/web/task/think/finish``, or ``other``
        for tools with no common meaning (MCP tools, plans).
    """
    if not name or type(name) is not str:
        return "other"
    key = name.strip().lower()
    found = _TOOL_NAMES.get(key)
    if found is not None:
        return found
    # OpenHands V1 splits its browser into browser_navigate, browser_click, ...
    return "web" if key.startswith("browser") else "other"


# Exit-code phrasings, one per format family; the first match wins.
EXIT_CODE_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"^(?:Error: )?Exit code:? (-?\d+)", re.MULTILINE),  # Claude Code Bash
    re.compile(r"Process exited with code (-?\d+)"),  # Codex exec_command / write_stdin
    re.compile(r"^Exit Code: (-?\d+)", re.MULTILINE),  # Gemini CLI run_shell_command
    re.compile(r"The command failed with exit code: (-?\d+)"),  # Antigravity run_command
    re.compile(r"<returncode>(-?\d+)</returncode>"),  # mini-swe-agent
    re.compile(r"\[Command finished with exit code (-?\d+)\]"),  # OpenHands
)


_ANY_EXIT = re.compile("|".join(f"(?:{p.pattern})" for p in EXIT_CODE_PATTERNS), re.MULTILINE)


def parse_exit_code(text: str | None) -> int | None:
    """Find an exit code stated in an observation text.

    Args:
        text: Observation text (may be None).

    Returns:
        The first exit code found by any known phrasing, or None.
    """
    if not text:
        return None
    # Exit statements sit near the head or the tail; scanning both bounds the cost on
    # multi-megabyte outputs.
    probe = text if len(text) <= 8192 else text[:4096] + "\n" + text[-4096:]
    # Substring checks are C-speed; the alternation below is not, and most outputs state no code.
    # (Spelled out rather than any(...) over a tuple: this runs once per observation.)
    if not ("xit code" in probe or "xit Code" in probe or "with code" in probe
            or "returncode>" in probe):
        return None
    # One pass with every phrasing; the group that matched holds the code.
    m = _ANY_EXIT.search(probe)
    if m is None:
        return None
    return int(next(g for g in m.groups() if g is not None))
