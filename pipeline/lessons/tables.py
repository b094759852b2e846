"""Data tables of the lesson builder: harness boilerplate, error classes, state-changing steps.

Everything a reader would tune lives here as data; ``symptom.py``, ``classify.py`` and
``delta.py`` only walk these tables.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# ---- harness boilerplate: lines that are never the error (per harness, for the record) ----

BOILERPLATE: dict[str, tuple[str, ...]] = {
    "claude-code": (
        r"Exit code \d+",
        r"Sibling tool call errored",
        r"\[Request interrupted by user(?: for tool use)?\]",
        r"The user doesn't want to proceed with this tool use\..*",
        r"The user doesn't want to take this action right now\..*",
        r"STOP what you are doing and wait for the user to tell you how to proceed\.?",
        r"To tell you how to proceed, the user said:",
        r"Review the changes and make sure .*",
        r"Note: your current working directory is .*",
    ),
    "swe-agent": (
        r"Your proposed edit has introduced new syntax error\(s\)\..*",
        r"ERRORS:",
        r"DO NOT re-run the same failed edit command\..*",
        r"Running it again will lead to the same error\.?",
        r"Your changes have NOT been applied\..*",
        r"You either need to 1\) Specify the correct start/end line arguments.*",
        r"Please understand the fixes and retry your edit comm+and\.?",
        r"Edit the file again.*",
    ),
    "openhands": (
        r"ERROR:",
        r"\[Command finished with exit code \d+\]",
        r"\[Python Interpreter: .*\]",
        r"\[Jupyter current working directory: .*\]",
        r"\[The command completed with exit code \d+\.\]",
        r"\[Current working directory: .*\]",
    ),
    "mini-swe-agent": (
        r"</?returncode>\d*(?:</returncode>)?",
        r"</?output>",
        r"Please always provide EXACTLY ONE action in triple backticks.*",
        r"No tool calls found in the response\..*",
        r"Every response MUST include at least one tool call\.?",
    ),
    "codex": (
        r"Exit code: \d+",
        r"Wall time: [\d.]+ ?s(?:econds)?",
        r"Output:",
        r"Process exited with code \d+",
        r"Chunk ID: \w+",
        r"Original token count: \d+",
    ),
    "gemini-cli": (
        r"Command: .*",
        r"Directory: .*",
        r"Exit Code: \d+",
        r"Error: \(none\)",
        r"Signal: \(none\)|Signal: \d+",
        r"Background PIDs: .*",
        r"Process Group PGID: .*",
        r"(?:Output|Stdout|Stderr): \(empty\)",
    ),
    "any": (
        r"error:?",
        r"Traceback \(most recent call last\):",
        r"-{5,}",
        r"\(\d+ more lines (?:above|below)\)",
    ),
}
"""Lines (full-line regexes) that a harness prints around an error; stripped from symptoms."""

BOILERPLATE_RE = re.compile(
    "|".join(f"(?:{p})" for pats in BOILERPLATE.values() for p in pats), re.IGNORECASE)

LINE_PREFIX = re.compile(r"^(?:Output|Stdout|Stderr): ")
"""A harness label in front of the first line of a tool's output (Gemini CLI ``Output:``)."""

WRAPPERS = re.compile(r"</?(?:tool_use_error|error|stderr|stdout|output|returncode)>",
                      re.IGNORECASE)
"""Inline tags that wrap a tool's error text."""

CUT_AT = re.compile(
    r"^(?:This is how your edit would have looked if applied|This is the original code "
    r"before your edit|Here's the result of running `cat -n`)", re.IGNORECASE | re.MULTILINE)
"""Where an observation stops being the error (a preview of the file follows)."""

# ---- error classes ----


@dataclass(frozen=True)
class ErrorClass:
    """One kind of error with what it teaches.

    Placeholders of the templates: ``{program}``, ``{target}``, ``{how}`` (the fix in words:
    the inserted commands, the changed arguments or the edit difference) and ``{fix_cmd}``
    (the first command of the fix).
    """

    id: str
    label: str
    patterns: tuple[str, ...]
    principle: str
    """Core principle: the cause this error names, and what to do about it."""
    title: str
    """Title after the quoted symptom: the fix."""
    check: str
    """A checklist item particular to the class."""
    harness: bool = False
    """Tool-usage error of the agent harness: the same trap whatever the task."""
    alt_title: str = ""
    """Title when the fix was another command, not an inserted step (empty: ``title``)."""
    alt_principle: str = ""
    """Principle when the fix was another command (empty: ``principle``)."""


ERROR_CLASSES: tuple[ErrorClass, ...] = (
    ErrorClass(
        "user_refused", "user refused the action",
        (r"The user doesn't want to proceed with this tool use", r"tool use was rejected",
         r"user (?:denied|rejected|declined)", r"Permission to use \w+ has been denied"),
        "A refused tool call is the user's answer, not an obstacle: stop, read what the user "
        "said, answer it and ask before acting again. Resubmitting the same change in another "
        "form, or deleting what the user wanted kept, teaches nothing.",
        "stop and answer the user before editing {target} again",
        "The user's words were answered before the next change to {target}", harness=True),
    ErrorClass(
        "edit_not_found", "edit target text not found",
        (r"String to replace not found", r"No replacement was performed",
         r"Found \d+ matches of the string to replace", r"did not appear verbatim",
         r"old_str .* (?:not found|did not)", r"Multiple occurrences of old_str",
         r"No exact match found in", r"no match(?:es)? found for"),
        "An edit that replaces text by value fails when the text is not exactly what the file "
        "holds now: {how}. Re-read the lines from the file itself and copy them exactly "
        "(indentation, line-number gutters and earlier edits included) before retrying.",
        "re-read the file before retrying an edit whose target text no longer matches",
        "The replaced text was copied from a fresh read of {target}", harness=True),
    ErrorClass(
        "not_read_first", "file not read before writing",
        (r"File has not been read yet", r"File has been modified since read",
         r"must (?:read|view) .* before (?:writing|editing)"),
        "The harness refuses to write a file it has not seen (or that changed since it was "
        "read): this error means the file exists with content you have not looked at. Read "
        "it, compare it with what you meant to write, then write or edit.",
        "read the existing file, then write",
        "{target} was read (and compared) right before it was written", harness=True),
    ErrorClass(
        "invalid_args", "invalid tool arguments",
        (r"InputValidationError", r"Invalid tool parameters", r"invalid (?:tool )?arguments?",
         r"Parameter [`'\"]?\w+[`'\"]? is required", r"missing required (?:argument|parameter)",
         r"Unexpected parameter"),
        "The harness rejected the call before running it: the arguments do not match the "
        "tool's schema. Fix the named parameter ({how}) instead of resending the call.",
        "fix the tool arguments the harness names",
        "The call passes the tool's own argument check", harness=True),
    ErrorClass(
        "lock_held", "lock held by another process",
        (r"index\.lock", r"Unable to create .*\.lock", r"Could not get lock",
         r"another (?:git )?process", r"Waiting for (?:cache|file) lock", r"database is locked",
         r"lock(?:file)? (?:is )?(?:held|exists)"),
        "A lock file means another process holds (or crashed holding) the resource. Check "
        "that no such process still runs before removing a stale lock; retrying unchanged "
        "waits on the same lock ({how}).",
        "check no other process holds the lock before removing it",
        "No other process held the lock when it was removed"),
    ErrorClass(
        "port_in_use", "port in use",
        (r"EADDRINUSE", r"address already in use", r"port \d+ is (?:already )?in use"),
        "The port is taken by a process that is still running, often an earlier run of the "
        "same server. Find and stop it, or pick another port ({how}); rerunning binds the same "
        "port again.",
        "free the port or choose another before restarting",
        "The port was free (or changed) before the server started"),
    ErrorClass(
        "missing_module", "missing module or package",
        (r"ModuleNotFoundError", r"No module named", r"Cannot find module",
         r"cannot find package", r"no required module provides package",
         r"Could not find a version that satisfies", r"Failed to resolve import",
         r"unresolved import", r"package .* is not installed"),
        "An import that fails names a dependency that is missing from the environment the "
        "command runs in. Install it with the project's own package manager or run in the "
        "environment that has it ({how}); editing the code around the import does not help.",
        "make the dependency available (install or build it) before rerunning `{program}`",
        "The import resolves in the environment the command runs in"),
    ErrorClass(
        "missing_program", "missing program",
        (r"command not found", r"not found in \$?PATH", r"executable file not found",
         r"is not recognized as an internal or external command",
         r"This is not the \w+ command you are looking for", r"No such file or directory.*bin/",
         r"shim binary not found", r"Failed to spawn: `?[\w.-]+`?\s*$",
         r"^\S+: not found$"),
        "\"Command not found\" means the program is not installed where the shell looks, not "
        "that the command is wrong. Install or locate it once ({how}), then rerun the command "
        "that failed; switching launchers only changes the error message.",
        "install the missing program instead of trying other launchers",
        "`{program}` resolves (`command -v {program}`) before the command is rerun",
        alt_title="run it with a program that is installed",
        alt_principle="\"Command not found\" (or a shim with no target) means this name does "
        "not resolve to an installed program here, not that the command is wrong: {how}. Check "
        "what is installed (`command -v`) and call that, or install the missing one, instead "
        "of rerunning the same name."),
    ErrorClass(
        "auth", "credentials or authentication",
        (r"\b401\b", r"\b403\b", r"Unauthorized", r"authentication (?:failed|required)",
         r"invalid (?:api )?(?:key|token)", r"could not read Username", r"Permission denied "
         r"\(publickey", r"not logged in", r"credentials"),
        "The service refused who you are, not what you asked: fix the credentials or the "
        "login ({how}) before resending the request.",
        "fix the credentials before retrying",
        "The credentials in use were checked before the retry"),
    ErrorClass(
        "permission", "permission denied",
        (r"Permission denied", r"EACCES", r"Operation not permitted", r"PermissionError",
         r"EPERM"),
        "Permission denied is about who may touch the file, not about the command: change "
        "the target, the owner or the mode ({how}) rather than retrying as is.",
        "fix the permission, not the command",
        "The permission of {target} was checked before the retry"),
    ErrorClass(
        "network", "network or proxy",
        (r"Could not resolve host", r"Temporary failure in name resolution",
         r"ECONNREFUSED", r"Connection refused", r"Network is unreachable", r"ENOTFOUND",
         r"getaddrinfo", r"proxy", r"SSL(?:Error| certificate)", r"ECONNRESET"),
        "A connection error says the remote end cannot be reached from here; it does not "
        "change between retries. Check the host, proxy or offline mode ({how}) first.",
        "check the connection before retrying",
        "The host was reachable before the retry"),
    ErrorClass(
        "timeout", "timeout or hang",
        (r"timed out", r"TimeoutError", r"TimeoutExpired", r"took too long",
         r"exceeded .*time ?limit", r"deadline exceeded"),
        "A command that times out has to do less or wait on something else; a longer timeout "
        "alone reruns the same wait. Find what it waits on ({how}).",
        "find what the command waits on instead of raising the timeout",
        "The command finished inside its timeout"),
    ErrorClass(
        "syntax_error", "syntax error in the agent's own edit or command",
        (r"SyntaxError", r"IndentationError", r"E999", r"syntax error", r"Unexpected token",
         r"unexpected EOF", r"unterminated", r"here-document .* delimited by end-of-file",
         r"expected .* but found"),
        "The syntax error is in the text just written, so the fix is in that text or its "
        "range: {how}. Compare the rejected result with what was intended before resubmitting "
        "the same edit.",
        "fix the text or range of the edit that broke the syntax",
        "The edited file parses before it is run"),
    ErrorClass(
        "wrong_path", "wrong path or working directory",
        (r"No such file or directory", r"can't cd to", r"File does not exist", r"FileNotFoundError",
         r"ENOENT", r"can't open file", r"not a git repository", r"pathspec .* did not match",
         r"does not exist", r"cannot access", r"Could not find .* file"),
        "The path is resolved from the working directory the command runs in; when it is "
        "missing, check where you are and what exists ({how}) instead of retrying the path.",
        "check the working directory and the path before rerunning",
        "The path exists from the directory the command runs in"),
    ErrorClass(
        "version_mismatch", "version or API mismatch",
        (r"unrecognized arguments?", r"unknown (?:option|flag|command|argument)",
         r"invalid option", r"has no attribute", r"unexpected keyword argument",
         r"requires (?:Python|node|a newer|version)", r"unsupported", r"incompatible",
         r"deprecated", r"is not a function", r"no such option", r"not supported"),
        "The tool or library in use does not have the interface the command assumes: check "
        "its version or its help and use what it offers ({how}) instead of rewording the call.",
        "check the version's interface, then fix the call",
        "The changed call matches the installed version's interface"),
    ErrorClass(
        "assertion", "failing assertion or test",
        (r"^E\s+(?:assert|AssertionError)\b", r"AssertionError", r"FAILED \S+::", r"--- FAIL",
         r"Expected .* (?:got|received)", r"\d+ failed", r"Tests? failed", r"\bassert\b"),
        "A failing assertion reports a difference between expected and actual behaviour; "
        "rerunning the test without changing the code under test returns the same "
        "difference. Change what the assertion names ({how}), then rerun.",
        "fix what the failing assertion names, then rerun the test",
        "The test that failed passes after the change"),
)
"""Error classes, first match wins (specific before general)."""

CLASS_BY_ID = {c.id: c for c in ERROR_CLASSES}
CLASS_RES = tuple((c, re.compile("|".join(c.patterns), re.IGNORECASE | re.MULTILINE))
                  for c in ERROR_CLASSES)

# ---- state-changing shell steps: what an inserted step did ----

STATE_CHANGES: tuple[tuple[str, str], ...] = (
    ("install", r"^(?:sudo )?(?:pip3?|uv|poetry|pipenv|conda|npm|pnpm|yarn|bun|cargo|go|gem|"
                r"brew|apt(?:-get)?|apk|dnf|yum|composer|bundle|mix|dotnet)\s+(?:install|add|"
                r"sync|i|get|ci|fetch|restore|update|upgrade)\b"),
    ("install", r"^(?:python\d*(?:\.\d+)? -m pip|npx|bunx) .*install"),
    ("cwd", r"^(?:cd|pushd)\s+\S+"),
    ("lock", r"^rm\s+(?:-\w+\s+)*\S*\.lock\b"),
    ("lock", r"^(?:kill|pkill|killall|fuser|lsof)\b"),
    ("config", r"^(?:export|set|source|\.|git config|npm config|uv venv|python\d* -m venv)\b"),
    ("create", r"^(?:mkdir|touch|cp|mv|ln|rm|git (?:checkout|switch|restore|stash|init|clone|"
               r"rm|add))\b"),
    ("permission", r"^(?:chmod|chown)\b"),
)
"""(kind, regex over a shell command): how an inserted step changed the state."""

STATE_CHANGE_RES = tuple((kind, re.compile(p)) for kind, p in STATE_CHANGES)

EDIT_TOOLS = frozenset({"edit", "write", "str_replace", "create", "insert", "multiedit",
                        "apply_patch"})
"""Normalized tool names that change a file."""

PROBE = re.compile(r"(?:^|\s)(?:--help|-h|--version|-V|help|version|--dry-run)(?:\s|$)|"
                   r"\bmake\s+(?:-\w*n\w*)(?:\s|$)")
"""A command that only asks a program about itself: a diagnosis, never the fix."""

RESOLUTION_WINDOW = 40
"""Steps after the last failure searched for the attempt that worked."""

SYMPTOM_CHARS = 600
"""Budget of the symptom text (several lines when the tool printed several)."""

SYMPTOM_LINES = 6
"""At most this many lines of the symptom."""

CAUSE_HINTS: tuple[tuple[str, str, str], ...] = (
    ("syntax_error", r"^\s*(\w+)\s*(?:&&|\|\||;)\s*.*(?:\n.*)?\^",
     "the here-document terminator is not alone on its line, so the text after it was fed to "
     "the interpreter as code"),
    ("lock_held", r"index\.lock",
     "git leaves `.git/index.lock` when a git process runs or crashed; it is stale only when "
     "no git process is running"),
    ("not_read_first", r"modified since read",
     "the file changed after it was read (a formatter, a linter or the user)"),
)
"""(class, regex over the symptom, cause in words): a known cause the symptom proves."""

CAUSE_HINT_RES = tuple((cls, re.compile(p, re.IGNORECASE | re.MULTILINE), text)
                       for cls, p, text in CAUSE_HINTS)

# ---- proof: what makes a step the fix, and what shows it did nothing ----

NOOP_OUTPUTS: tuple[str, ...] = (
    r"nothing to commit", r"nothing added to commit", r"Already up[ -]to[ -]date",
    r"No such file or directory", r"did not match any file",
    r"^0 packages? installed",
)
"""Output of a step that ran but changed nothing (so it is not an inserted fix step)."""

NOOP_OUTPUT_RE = re.compile("|".join(NOOP_OUTPUTS), re.IGNORECASE | re.MULTILINE)

FALLBACK_ECHO = re.compile(r"\|\|\s*echo\s+(['\"]?)(.+?)\1\s*$")
"""``a || echo "msg"``: when ``msg`` is in the output, the fallback ran, not ``a``."""

COMMENT_LINE = re.compile(r"^\s*(?://|#(?!include|define|if|endif|!)|/\*|\*|--|;|<!--)")
"""A line that is only a comment: an edit adding only these changes no behaviour."""

GIVE_UP: tuple[str, ...] = (
    r"\bI (?:am|was|'m) (?:unable|not able) to\b", r"\bI (?:could not|couldn't|cannot|can't) "
    r"(?:make|complete|fix|apply|finish|get)\b", r"\bunable to (?:make|complete|apply) the "
    r"(?:necessary )?changes?\b", r"\bgiving up\b",
    r"^\s*Unable to (?:make|complete|apply|fix)\b",
)
"""The agent's own last words saying the task was not done: the loop was never resolved."""

GIVE_UP_RE = re.compile("|".join(GIVE_UP), re.IGNORECASE | re.MULTILINE)

GIVE_UP_ARGS: dict[str, str] = {"task_completed": r"^(?:false|no)$"}
"""Arguments of a finish call that say the task was not done (OpenHands ``finish``)."""

LAST_WORDS_KEYS = ("final_thought", "message", "thought", "text", "summary")
"""Arguments of a finish call that carry the agent's last words."""

VERIFY_WINDOW = 12
"""Steps before a loop whose failed commands, passing after the fix, prove it worked."""

