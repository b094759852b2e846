"""What each step does, in format-independent terms, and the state it could see.

``analyze`` runs once per trajectory and gives every step an ``Info``: a class (read, write,
edit, test, build, lint, run, search, list, inspect, install, vcs, poll, web, other), the files
it touches, a read range, a canonical form for near-repeat comparison, a masked output
fingerprint and *state tokens*. A state token names everything that could change the step's
outcome; two occurrences of one action with equal tokens had nothing in between that could
change the result, so the later one is a wasted step.

State is tracked with counters, not snapshots, so the pass is linear:
``epoch`` advances on any successful mutation (file write/edit, install, git checkout, env
change, build); ``path_version[p]`` advances on writes to ``p``; ``unknown`` advances on
mutations whose targets are unknown (installs, ``git checkout``, ``rm -rf``, scripts that
``mv``); ``memory`` advances on context compaction (after it the agent may re-read legitimately).
A failed step changes nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, cast

from ..hashing import content_hash
from ..model import Step, Trajectory
from . import shell
from .masks import NUMBERS

END = 10**9
"""Open end of a read range (``view_range [a, -1]``, a whole-file read)."""

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
_EDITOR_COMMANDS = {"view": "read", "create": "write", "str_replace": "edit", "insert": "edit",
                    "undo_edit": "edit", "write": "write", "edit": "edit"}
_PATH_KEYS = ("path", "file_path", "filepath", "absolute_path", "targetfile", "file",
              "filename", "notebook_path", "directorypath", "dir_path", "directory",
              "searchpath", "searchdirectory")
_SEARCH_DISPLAY = frozenset({"output_mode", "head_limit", "-n", "-a", "-b", "-c", "-i",
                             "context", "case_sensitive", "max_results", "limit", "offset",
                             "multiline", "ignore_case"})
_PATTERN_KEYS = ("pattern", "query", "regex", "search", "glob", "include", "includes")

_READ_PROGS = frozenset({"cat", "head", "tail", "nl", "less", "more", "bat", "view", "xxd",
                         "od", "hexdump"})
_SEARCH_PROGS = frozenset({"grep", "find", "locate", "which", "whereis", "fd", "type", "rg",
                           "ag", "ack", "egrep", "fgrep"})
_LIST_PROGS = frozenset({"ls", "tree", "du", "pwd", "dir"})
_INSPECT_PROGS = frozenset({"env", "printenv", "whoami", "uname", "id", "df", "free", "date",
                            "wc", "stat", "file", "md5sum", "sha256sum"})
_POLL_PROGS = frozenset({"sleep", "wait", "ps", "jobs", "top", "htop", "kill", "pkill",
                         "pgrep", "watch", "nvidia-smi", "fg", "bg", "netstat", "ss", "lsof"})
_WRITE_PROGS = frozenset({"touch", "mkdir", "cp", "mv", "rm", "ln", "chmod", "chown", "tee",
                          "truncate", "patch", "rmdir", "unzip", "tar"})
# Programs that merely name a test path (``rm tests/x.py``, ``cat tests/y.py``) run no tests.
_FILE_OPS = frozenset({"rm", "mv", "cp", "mkdir", "touch", "chmod", "ln", "rmdir", "tee"})
_POLL_ARGS = frozenset({"session_id", "chars", "bash_id", "shell_id"})
_NOT_TEST_PROGS = _READ_PROGS | _SEARCH_PROGS | _FILE_OPS
_TEST_WORDS = re.compile(
    r"(^|[\s/])(pytest|py\.test|tox|nox|nosetests|unittest|runtests(\.py)?|jest|vitest|mocha|"
    r"ctest|phpunit|rspec)(\s|$|\.)|\b(go|cargo|npm|yarn|pnpm|mvn|gradle|make|dotnet|mix)\s+"
    r"(run\s+)?test|\btest_\w+\.py\b|\btests?/"
)
_BUILD_WORDS = re.compile(
    r"^(make|cmake|ninja|gcc|g\+\+|clang|cc|tsc|javac|mvn|gradle|bazel|webpack|vite)\b|"
    r"\b(cargo|go|dotnet)\s+build\b|\b(npm|yarn|pnpm)\s+run\s+build\b|setup\.py\s+build"
)
_LINT_PROGS = frozenset({"ruff", "flake8", "pylint", "mypy", "eslint", "black", "isort",
                         "pyright", "prettier", "shellcheck", "clippy", "golangci-lint"})
_INSTALL = re.compile(
    r"\b(pip|pip3|uv|poetry|conda|mamba|apt|apt-get|yum|dnf|apk|brew|npm|yarn|pnpm|gem|go|"
    r"cargo)\b\s+(install|add|uninstall|remove|get|sync|ci|update|upgrade)\b|"
    r"setup\.py\s+(install|develop)"
)
_GIT_MUTATE = frozenset({"checkout", "restore", "reset", "stash", "apply", "am", "pull",
                         "merge", "rebase", "switch", "revert", "cherry-pick", "clean", "rm",
                         "mv", "commit", "init", "clone", "fetch", "add", "read-tree",
                         "update-index", "update-ref", "gc", "prune", "repack", "worktree",
                         "submodule"})
_PAGER = re.compile(r"\|\s*(head|tail)\s+(?:-n\s*|--lines[= ]?|-)\+?(\d+)\s*(?:$|[|;&)])")
_SHOWN_LINES = re.compile(r"\s*Total output lines: (\d+)")
CODEX_SHOWN = 256
"""Lines of a long output Codex shows the model (its first and last 128)."""
_MASK = NUMBERS  # the one mask of numbers and ids (``masks``)
_WS = re.compile(r"\s+")
_CLIPPED = re.compile(
    r"response clipped|too large|too long|Showing first|file is large|elided|output_head"
)
# The harness withheld the whole output (mini-swe-agent): the agent saw nothing of the file.
_WITHHELD = re.compile(r"^\s*<warning>\s*The output of your last command was too long")
# SWE-agent ACI commands sent as ``{"command": "open \"p\" 20"}`` to read/write/edit tools.
_ACI = re.compile(r"^\s*(open|create|goto|scroll_down|scroll_up|find_file|search_dir|"
                  r"search_file|edit)\b\s*(.*)$", re.S)
# A call cancelled because a parallel sibling failed, or by the user: not the agent's retry.
_CANCELLED = re.compile(r"Sibling tool call errored|interrupted by user|[Cc]ancelled by")
# Observations that report a failed action even when the log has no error flag.
_FAILED_OUTPUT = re.compile(
    r"^\s*(ERROR:|\[Your proposed edit has introduced new syntax error|\[No exact match found|"
    r"No replacement was performed|Your edit was not applied|Traceback \(most recent call last\))"
)
# Codex's apply_patch refusing a patch whose context is not in the file (as a tool, or called
# through the shell behind the exec header, exit code 0): nothing was written.
_PATCH_REFUSED = re.compile(r"^\s*(apply_patch verification failed|Failed to find expected "
                            r"lines|Invalid patch)")
# The files an apply_patch envelope changes.
_ENVELOPE = re.compile(r"\*\*\* (?:Update|Add|Delete) File: (\S+)")
# OpenHands IPython agent skills: `open_file('p', 20)`, `edit_file_by_replace('p', ...)`.
_SKILL = re.compile(r"^\s*(\w+)\(\s*(?:file_name=|path=)?['\"]([^'\"]+)['\"](?:\s*,\s*(\d+))?")
_SKILL_CLASS = {"open_file": "read", "goto_line": "read", "scroll_down": "read",
                "scroll_up": "read", "edit_file_by_replace": "edit", "insert_content_at_line":
                "edit", "append_file": "edit", "create_file": "write", "search_file": "search",
                "search_dir": "search", "find_file": "search"}


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


def _lower_args(args: dict[str, Any]) -> dict[str, Any]:
    return {str(k).lower(): v for k, v in args.items()}


def _first_str(args: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for k in keys:
        v = args.get(k)
        if isinstance(v, str) and v.strip():
            return v
    return None


def _int(v: Any) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def read_range(args: dict[str, Any]) -> tuple[int, int]:
    """Line range of a read tool call from its arguments (whole file when none is given).

    Understands ``view_range [a, b]``, ``offset``/``limit``, ``start_line``/``end_line``,
    ``start``/``end`` (OpenHands, -1 meaning the end) and ``StartLine``/``EndLine``.
    """
    a = _lower_args(args)
    vr = a.get("view_range")
    if isinstance(vr, list | tuple) and len(vr) == 2:
        lo, hi = _int(vr[0]) or 1, _int(vr[1])
        return (max(lo, 1), END if hi is None or hi < 0 else hi)
    if a.get("offset") is not None or a.get("limit") is not None:
        lo = _int(a.get("offset")) or 1
        lim = _int(a.get("limit"))
        return (max(lo, 1), END if not lim else max(lo, 1) + lim - 1)
    for lo_k, hi_k in (("start_line", "end_line"), ("startline", "endline"), ("start", "end")):
        if a.get(lo_k) is not None or a.get(hi_k) is not None:
            lo, hi = _int(a.get(lo_k)) or 1, _int(a.get(hi_k))
            return (max(lo, 1), END if hi is None or hi < 0 else hi)
    return (1, END)


def _shell_range(prog: str, argv: list[str]) -> tuple[int, int]:
    if prog == "sed":
        for a in argv[1:]:
            m = re.fullmatch(r"(\d+)(?:,(\d+|\$))?p", a)
            if m:
                hi = m.group(2)
                return (int(m.group(1)), END if hi in (None, "$") else int(hi))
    if prog in ("head", "tail"):
        n = 10
        for i, a in enumerate(argv[1:], 1):
            if a in ("-n", "--lines") and i + 1 < len(argv):
                n = _int(argv[i + 1].lstrip("+")) or n
            elif re.fullmatch(r"-n?\d+", a):
                n = int(a.lstrip("-n"))
        return (1, n) if prog == "head" else (END - n, END)
    return (1, END)


def _mask(text: str) -> str:
    return _MASK.sub("#", _WS.sub(" ", text)).strip()


def _fingerprint(text: str, masked: bool = True) -> str | None:
    # Test and script output differ run to run in timings and addresses, hence the mask; a
    # file or listing that differs in one number has really changed.
    if not text.strip():
        return None
    return content_hash(_mask(text) if masked else _WS.sub(" ", text).strip(), 8)


# Codex exec output opens with a header of its own (chunk id, wall time, exit status, token
# count, then "Output:"), different on every call: it is not what the command printed.
_CODEX_HEADER = re.compile(
    r"\A(?:Chunk ID: \w+\n)?(?:Exit code: -?\d+\n)?Wall time: [^\n]*\n"
    r"(?:Process (?:exited with code -?\d+|running with session ID \d+)\n)?"
    r"(?:Original token count: \d+\n)?(?:Total output lines: \d+\n)?Output:\n")
_REDACTED = re.compile(r"\s*\[REDACTED_\w+ len=(\d+) sha=[0-9a-f]+\]\s*$")
# Line numbers a viewer puts in front of each line (`nl -ba`, `cat -n`, Claude's Read `1→`):
# the same lines of a file shown with or without them are the same text.
_GUTTER = re.compile(r"^ *\d+(?:\t|→)", re.M)
# Older Codex cut an exec output to the model at 10 KiB or 256 lines, keeping head and tail.
_OMITTED = re.compile(r"\[\.\.\. omitted \d+ of (\d+) lines \.\.\.\]")
_ADAPTER_CUT = re.compile(r"\n\.\.\.\[\d+ chars truncated\]\.\.\.\n")
HEAD_LINES = 12
"""Whole lines of a view cut by our adapter that stand for its text in the fingerprint (few
enough to fit in the head it keeps, even numbered and long)."""
CODEX_MAX_CHARS = 10_000
"""Full output size from which older Codex showed the model only head and tail (10 KiB)."""


def body_of(output: str) -> str:
    """What the command printed: the output without the harness's exec header (Codex)."""
    m = _CODEX_HEADER.match(output)
    return output[m.end():] if m else output


def _codex_clipped(step: Step, head: str, body: str) -> bool:
    """Codex showed the model only the head and tail of this output, not its middle."""
    total = _SHOWN_LINES.match(head) or _SHOWN_LINES.match(body[:80])
    if total and int(total.group(1)) > CODEX_SHOWN:
        return True
    if _OMITTED.search(body):
        return True
    # The argv shell of older Codex: its marker may sit in the middle our adapter cut away.
    argv = isinstance(step.args, dict) and isinstance(step.args.get("command"), list)
    return argv and step.output_len >= CODEX_MAX_CHARS


def _to_end(step: Step, info: Info, body: str) -> bool:
    """A ranged read that printed fewer lines than it asked for reached the file's end."""
    if info.cls != "read" or info.rng is None or info.failed or info.clipped or (
            info.withheld or info.filtered) or step.output_len > len(step.output):
        return False
    lo, hi = info.rng
    if hi >= END or not body.strip():
        return False
    # One newline ends the last line; another before it is an empty last line of the range.
    text = body[:-1] if body.endswith("\n") else body
    return text.count("\n") + 1 < hi - lo + 1


def _classify_shell(command: str, info: Info) -> None:
    parsed = shell.parse(command)
    info.shell = True
    info.command = command
    info.canon = shell.canonical(command)
    info.label = " ".join(command.split())[:200]
    info.env_change = parsed.env_only
    segs = [s for s in parsed.segments if s.argv]
    if not segs:
        info.cls = "poll" if not command.strip() else "other"
        return
    main = segs[0]
    for s in segs:
        # Prefer the first segment that does real work over set-up (`source venv/bin/activate`)
        # and over writing an input file (`echo ... > t.py && python t.py`).
        if s.argv[0] not in ("export", "source", ".", "set", "conda", "ulimit") and not (
            s.redirects and s.argv[0] in ("echo", "printf", "cat") and s is not segs[-1]
        ) and not (s is not segs[-1] and is_cleanup(s.argv)):
            main = s
            break
    # `PYTHONPATH=. python x.py` runs python: the assignments only set its environment.
    argv = shell.split_env(main.argv)[1] or main.argv
    prog = argv[0].rsplit("/", 1)[-1] if argv[0].startswith("/") else argv[0]
    info.program = shell.canon_argv(argv, parsed.cwd)[0] if argv else prog
    cwd = parsed.cwd
    writes: list[str] = []
    for s in segs:
        writes.extend(r for r in s.redirects if r)
        head = s.argv[0]
        tail = s.argv[1:]
        if head in _WRITE_PROGS:
            targets = [shell.norm_path(a, cwd) for a in tail if not a.startswith("-")]
            if head in ("cp", "mv", "ln") and targets:
                if head == "cp" and len(targets) == 2:
                    info.extra.setdefault("copies", []).append((targets[0], targets[1]))
                targets = targets[-1:] if head == "cp" else targets
            writes.extend(targets)
            if head in ("rm", "mv", "tar", "unzip") and any("*" in t for t in targets):
                info.unknown_mutation = True
        elif head == "sed" and any(a.startswith("-i") for a in tail):
            writes.extend(shell.norm_path(a, cwd) for a in tail if shell.is_pathlike(a))
        elif head in ("perl", "ruby") and any(a.startswith("-i") or a == "-pi" for a in tail):
            writes.extend(shell.norm_path(a, cwd) for a in tail if shell.is_pathlike(a))
        if head == "git" and not s.piped:
            info.extra.setdefault("git", []).append(_git_sub(tail))
        if head == "git" and tail and tail[0] in _GIT_MUTATE:
            info.unknown_mutation = True
            if tail[0] in ("checkout", "restore"):
                files = [a for a in tail[1:] if a != "--" and not a.startswith("-")]
                if "--" in tail or tail[0] == "restore":
                    info.git_restore = tuple(shell.norm_path(f, cwd) or "*" for f in files)
                elif files == ["."]:
                    info.git_restore = ("*",)
            elif tail[0] == "reset" and "--hard" in tail:
                info.git_restore = ("*",)
    # A here-document is data written somewhere (a README that says `pip install`), not a
    # command that runs.
    low = (command.replace(parsed.heredoc, " ") if parsed.heredoc else command).lower()
    if _INSTALL.search(low):
        info.cls = "install"
        info.unknown_mutation = True
        # Only installs in the command (`uv sync`, `cd b && pip install -e .`): their output
        # alone says whether anything changed (see ``no_op_install``).
        info.extra["only_install"] = all(
            g.argv[0] == "cd" or _INSTALL.search(" ".join(g.argv).lower()) for g in segs
            if not g.piped)
    elif parsed.env_only:
        info.cls = "env"
    elif prog in _POLL_PROGS or (prog == "tail" and ("-f" in argv or "-F" in argv)):
        info.cls = "poll"
    elif prog == "git":
        info.cls = "vcs" if info.unknown_mutation else "inspect"
    elif _TEST_WORDS.search(" ".join(argv)) and prog not in _NOT_TEST_PROGS:
        info.cls = "test"
    elif _BUILD_WORDS.search(" ".join(argv)):
        info.cls = "build"
        info.unknown_mutation = True
    elif prog in _LINT_PROGS or (len(argv) > 2 and argv[1] == "-m" and argv[2] in _LINT_PROGS):
        info.cls = "lint"
    elif prog in _READ_PROGS or (prog == "sed" and "-n" in argv and not writes):
        paths = [shell.norm_path(a, cwd) for a in argv[1:]
                 if shell.is_pathlike(a) and not re.fullmatch(r"\d+(,(\d+|\$))?p", a)]
        if writes and prog in ("cat", "tee"):
            info.cls = "write"
            info.content = _whole_content(command, parsed)
        elif paths:
            info.cls = "read"
            info.paths = tuple(paths)
            info.rng = _shell_range(prog, argv)
            pager = _PAGER.search(command)
            if pager and info.rng == (1, END):
                # `cat -n f | head -100` shows lines 1-100 (the canonical form drops the pager).
                n = int(pager.group(2))
                info.rng = (1, n) if pager.group(1) == "head" else (END - n, END)
            _piped_filter(parsed, main, info)
            if info.rng != (1, END):
                info.canon += f" [{info.rng[0]}:{info.rng[1]}]"
        else:
            info.cls = "other"
    elif prog in _SEARCH_PROGS:
        info.cls = "search"
    elif prog in _LIST_PROGS:
        info.cls = "list"
        info.paths = tuple(shell.norm_path(a, cwd) or "." for a in argv[1:]
                           if not a.startswith("-")) or (cwd or ".",)
    elif prog in _INSPECT_PROGS:
        info.cls = "inspect"
    elif prog in ("curl", "wget", "http", "nc"):
        info.cls = "web"
    elif prog in _WRITE_PROGS or (writes and not (
            not main.redirects and all(is_cleanup(g.argv) for g in segs if g is not main))):
        # `rm -rf dist && bun run typecheck` runs the typecheck; clearing output is set-up.
        info.cls = "write"
        info.content = _whole_content(command, parsed)
    elif prog == "apply_patch" and parsed.heredoc:
        # Codex's patch tool called through the shell: an edit of the files its envelope names.
        info.cls = "edit"
        writes.extend(shell.norm_path(f, cwd) for f in _ENVELOPE.findall(parsed.heredoc))
    else:
        info.cls = "run"
    info.writes = tuple(dict.fromkeys(w for w in writes if w))
    if info.cls == "edit" and prog == "apply_patch":
        info.paths = info.writes  # the patch tool's own call, made through the shell
    _script_writes(command, parsed, info)


# A script that writes files (a here-document or `-c` program fed to an interpreter, or a
# script file written with such a body and run later): its run is an edit of what it names.
_WRITES_FILES = re.compile(r"write_text\(|write_bytes\(|\.write\(|open\([^)\n]*['\"][wax]b?\+?['\"]"
                           r"|shutil\.(copy|move)|os\.(remove|rename|replace)|\.unlink\(|"
                           r"json\.dump\(|sed\s+-i|\$\^I|-pi\b")
_QUOTED_PATH = re.compile(r"['\"]([\w./-]*\w\.[A-Za-z]\w{0,5})['\"]")
_INTERPRETER = re.compile(r"^(?:cd \S+\s*&&\s*)?(?:\S*/)?(python[\d.]*|perl|ruby|node)\b")


def _body_writes(body: str) -> tuple[str, ...]:
    """Files a script body writes: the paths it quotes, or ``*`` when it names none."""
    if not _WRITES_FILES.search(body):
        return ()
    named = tuple(dict.fromkeys(shell.norm_path(m) for m in _QUOTED_PATH.findall(body)))
    return named or ("*",)


def _script_writes(command: str, parsed: shell.Parsed, info: Info) -> None:
    first = command.lstrip().split("\n", 1)[0]
    # `cp a a.bak && python - <<'PY'`: the here-document feeds the last command of the line.
    fed = first.rsplit("&&", 1)[-1].strip() if "<<" in first else first
    if parsed.heredoc and _INTERPRETER.match(fed) and "<<" in fed:
        info.extra["script_writes"] = _body_writes(parsed.heredoc)
        info.extra["script_body"] = parsed.heredoc
    elif _INTERPRETER.match(first) and " -c " in first:
        info.extra["script_writes"] = _body_writes(command)
    elif parsed.heredoc and info.content is not None and info.writes:
        # `cat > fix.py <<EOF`: remembered, applied when fix.py runs (see ``_analyze``).
        info.extra["script_body_writes"] = (info.writes[0], _body_writes(parsed.heredoc))
        if info.writes[0].endswith(".py"):
            info.extra["script_body"] = parsed.heredoc  # a script re-written is re-run


def _whole_content(command: str, parsed: shell.Parsed) -> str | None:
    """Hash of a here-document written to a file in whole (None for ``>>`` appends)."""
    if not parsed.heredoc or ">>" in command.split("\n", 1)[0] or " -a " in command[:80]:
        return None
    return content_hash(parsed.heredoc, 8)


def _piped_filter(parsed: shell.Parsed, main: shell.Segment, info: Info) -> None:
    """Narrow a read by the filters piped after it (``| sed -n 'a,bp'``, ``| grep x``)."""
    after = False
    for seg in parsed.segments:
        if seg is main:
            after = True
            continue
        if not after or not seg.piped or not seg.argv:
            continue
        head = seg.argv[0]
        if head == "sed" and "-n" in seg.argv:
            info.rng = _shell_range("sed", seg.argv)
        elif head in ("grep", "egrep", "rg", "awk", "sed", "cut", "sort", "uniq", "wc"):
            info.filtered = True


def _classify_aci(command: str, step: Step, info: Info) -> bool:
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
        line = _int(argv[1]) if len(argv) > 1 else None
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


def _classify_tool(step: Step, info: Info) -> None:
    args = step.args or {}
    low = _lower_args(args)
    tool = (step.tool or "other").lower()
    sub = low.get("command") if isinstance(low.get("command"), str) else None
    if tool == "other":
        # Unmapped tools (MCP, plan tools) share "other": their logged name tells them apart.
        tool = raw_name(step) or tool
    cls = _TOOL_CLASS.get(tool, "think" if _PLAN_TOOL.search(tool) else "other")
    if sub in _EDITOR_COMMANDS and tool != "bash" and cls != "think":
        cls = _EDITOR_COMMANDS[sub]
    raw_path = _first_str(low, _PATH_KEYS)
    path = shell.norm_path(raw_path) if raw_path else ""
    info.program = tool if sub not in _EDITOR_COMMANDS else f"{tool}:{sub}"
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
        if not _GUTTER.match(out) and ("files and directories" in out or (
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
            files = _ENVELOPE.findall(low["input"])
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
    info.canon = f"{cls}:{tool}:{_WS.sub(' ', repr(canon_args))}"
    if cls == "search":
        info.canon = info.canon.lower()


# Looking at something that changes by itself or through other actions: the output file of a
# background job (`tail -30 x.output`), a log being written, a browser page after clicks.
_JOB_OUTPUT = re.compile(r"(\.output|\.log|nohup\.out)$")
_POLL_TOOLS = re.compile(r"browser_(snapshot|take_screenshot|screenshot|console_messages|"
                         r"network_requests|wait_for|tabs)|screenshot$")


def _polls(step: Step, info: Info) -> bool:
    """True for steps that watch a changing state rather than repeat an action."""
    if info.cls in ("read", "search") and info.paths and _JOB_OUTPUT.search(info.paths[0]):
        return True
    if info.cls in ("read", "search") and info.shell:
        segs = [g for g in shell.parse(info.command).segments if g.argv and not g.piped]
        if segs and any(_JOB_OUTPUT.search(a) for a in segs[-1].argv[1:]):
            return True
    return info.cls == "other" and _POLL_TOOLS.search(raw_name(step)) is not None


_ARG_TOOLS = frozenset({"bash", "shell", "run", "exec", "other", "", "exec_command"})
"""Tools that cannot act without arguments: a bare call of one is a trimmed log line."""


def raw_name(step: Step) -> str:
    """The tool name as logged, lowercased (``todowrite``, ``mcp__x__y``)."""
    raw = step.extra.get("raw_tool") or step.extra.get("function_name") or step.tool or ""
    return str(raw).lower()


def _classify_bare(tool: str, raw: str, info: Info) -> None:
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


_SHELLS = frozenset({"bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh", "/usr/bin/bash"})


def _argv_command(argv: list[str]) -> str:
    """The command line of an argv-shaped call (Codex ``["bash", "-lc", "git status"]``).

    A shell wrapper's script is the command; joining the list would make every call a run
    of ``bash``.
    """
    if len(argv) >= 3 and argv[0] in _SHELLS and argv[1] in ("-c", "-lc", "-cl", "-ic"):
        return argv[2]
    return " ".join(argv)


def classify(step: Step) -> Info:
    """Classify one step (without state tokens)."""
    if step.kind != "tool":
        return Info(cls="none", failed=step.is_error, out_fp=None)
    info = Info(cls="other", failed=bool(step.is_error or (step.exit_code or 0) != 0))
    args = step.args or {}
    command = args.get("command") if isinstance(args, dict) else None
    if isinstance(command, list):
        command = _argv_command([str(c) for c in command])
    if not isinstance(command, str):
        command = args.get("cmd") or args.get("commandline") or args.get("CommandLine")
    tool = (step.tool or "").lower()
    code = args.get("code") if isinstance(args, dict) else None
    if isinstance(code, str) and not isinstance(command, str):
        _classify_code(code, step, info)
        return info
    if tool == "bash" and not isinstance(command, str) and _POLL_ARGS & set(args):
        # Codex ``write_stdin`` / Claude ``BashOutput``: talking to (or waiting on) a process
        # that is already running. Asking again is polling, not a repeat.
        info.cls = "poll"
        info.label = "<poll running process>"
        return info
    is_editor_cmd = isinstance(command, str) and command in _EDITOR_COMMANDS and tool != "bash"
    if isinstance(command, str) and not is_editor_cmd and tool in ("bash", "shell", "run",
                                                                   "exec", "other", ""):
        if args.get("is_input") in (True, "true", "True"):
            info.cls = "poll"
            info.label = f"<input {command[:40]}>"
            return info
        _classify_shell(command, info)
    elif not args and tool not in ("think", "finish"):
        _classify_bare(tool, raw_name(step), info)
        if info.cls == "none":
            return info
    elif not (isinstance(command, str) and len(args) == 1 and tool not in ("bash", "shell")
              and _classify_aci(command, step, info)):
        _classify_tool(step, info)
    if _polls(step, info):
        info.cls = "poll"
    body = body_of(step.output)
    seen = _GUTTER.sub("", body) if info.cls == "read" else body
    if info.cls == "read" and (cut := _ADAPTER_CUT.search(seen)) is not None:
        # Our adapter kept head and tail of a long view by characters, and line numbers
        # move the cut: the same lines of the file are known by their first lines.
        seen = "\n".join(seen[:cut.start()].splitlines()[:-1][:HEAD_LINES])
    redacted = _REDACTED.match(seen)
    if redacted:
        # A log redacted to hashes (`[REDACTED_OUTPUT len=113 sha=339fb0f3]`): the hash also
        # covers the harness's exec header (a new chunk id each call), the length does not,
        # so the length is what tells a same output from another.
        seen = f"redacted output of {redacted.group(1)} chars"
    info.out_fp = _fingerprint(seen, info.cls not in ("read", "list", "search")
                               and not redacted)
    info.out_lines = body.count("\n") + 1 if body else 0
    if info.cls == "search" and step.exit_code == 1 and len(step.output.strip()) < 80:
        # grep/rg exit 1 when nothing matches: an answer ("not there"), not a failure.
        info.failed = False
    if _CANCELLED.search(step.output[:300]):
        info.cls = "none"
    if _FAILED_OUTPUT.match(step.output[:200]) or _PATCH_REFUSED.match(body[:200]):
        info.failed = True
    if info.failed and info.shell and info.cls == "edit" and info.program == "apply_patch":
        info.writes = ()  # the patch tool refused it: its files stay as they were
    # Only the agent's own view counts: our adapter's truncation is not what the agent saw.
    info.clipped = bool(_CLIPPED.search(step.output[-400:] + step.output[:400]))
    if _codex_clipped(step, step.output[:80], body):
        # Codex shows the model the head and tail of a long output, not the middle.
        info.clipped = True
    info.withheld = bool(_WITHHELD.match(step.output[:200]))
    info.to_end = _to_end(step, info, body)
    return info


def _classify_code(code: str, step: Step, info: Info) -> None:
    """OpenHands IPython cells: agent-skill calls map to read/edit/search, the rest is run."""
    m = _SKILL.match(code)
    info.label = " ".join(code.split())[:200]
    info.canon = "python-cell " + " ".join(code.split())
    info.program = m.group(1) if m else "ipython"
    info.out_fp = _fingerprint(step.output)
    if _FAILED_OUTPUT.match(step.output[:200]):
        info.failed = True
    if not m or m.group(1) not in _SKILL_CLASS:
        info.cls = "run"
        return
    info.cls = _SKILL_CLASS[m.group(1)]
    path = shell.norm_path(m.group(2))
    info.paths = (path,)
    if info.cls == "read":
        line = _int(m.group(3))
        # open_file shows a 100-line window around the line it is given.
        info.rng = (max(1, line - 50), line + 50) if line else (1, 100)
        info.canon = f"read:{path}:{info.rng}"
    elif info.cls in ("edit", "write"):
        info.writes = (path,)


_STOPS = frozenset({"kill", "pkill", "killall", "fuser"})

# What package managers print when they changed nothing (everything already satisfied): uv
# `Audited 21 packages` without `Installed`/`Uninstalled`, pip `Requirement already satisfied`
# on every line, npm `up to date`, apt `0 upgraded, 0 newly installed, 0 to remove`, poetry,
# cargo and others `Nothing to do` / `already installed`.
_NOOP_INSTALL = re.compile(
    r"^\s*Audited \d+ packages?|^\s*up to date, audited \d+ packages?|"
    r"\b0 upgraded, 0 newly installed, 0 to remove|^\s*(Nothing to (do|install|update)|"
    r"No dependencies to install or update|Already up[ -]to[ -]date)\b|"
    r"\bis already (installed|the newest version)\b", re.M | re.I)
_INSTALLED = re.compile(
    r"^\s*(Installed|Uninstalled|Updated|Prepared|Downloaded|Built|Successfully installed|"
    r"added|removed|changed|Installing|Updating|Removing|Setting up|Unpacking|"
    r"Collecting|Downloading)\b|^\s*[+-] \S|\b[1-9]\d* (newly installed|upgraded|to remove)",
    re.M)
_PIP_SATISFIED = re.compile(r"^\s*Requirement already satisfied\b")
_PIP_NOISE = re.compile(r"^\s*(Defaulting to user installation|WARNING|DEPRECATION|\[notice\]|"
                        r"Looking in indexes|Obtaining|Exit code|Wall time|Output:)")


def no_op_install(step: Step, info: Info) -> bool:
    """True for an install that printed that it changed nothing (`uv sync`: `Audited N`).

    Such a step changes no state: the same failing run after it is still a rerun of the
    failure. Only whole-install commands count (what else the command ran is unknown).
    """
    if info.cls != "install" or info.failed or not info.extra.get("only_install"):
        return False
    out = step.output
    if not out.strip() or _INSTALLED.search(out):
        return False
    if _NOOP_INSTALL.search(out):
        return True
    lines = [x for x in out.splitlines() if x.strip() and not _PIP_NOISE.match(x)]
    return bool(lines) and all(_PIP_SATISFIED.match(x) for x in lines)

# Git subcommands that move the index, history or refs and leave every file of the working
# tree as it was: a file shown or written before them is the same file after them. A commit
# whose output shows hooks may have rewritten files (formatters), so it is not one of them.
_GIT_TREE_KEPT = frozenset({"add", "commit", "fetch", "push", "tag", "remote", "gc", "prune",
                            "repack", "update-ref", "branch", "status", "log", "diff", "show",
                            "rev-parse", "ls-remote", "config"})
# What hook runners print (pre-commit, husky, lint-staged, formatters they run); matched per
# line, past the commit's own `[branch sha] subject` line, whose message may say anything.
_HOOKS = re.compile(r"^- hook id:|^- files were modified by this hook|husky\s*[->]|lint-staged|"
                    r"^\S.*\.{4,}\s*(Passed|Failed)$|^\d+ files? reformatted|^reformatted \S|"
                    r"^Fixing \S", re.I | re.M)
_COMMIT_LINE = re.compile(r"^\[[^\]\n]+ [0-9a-f]{7,}\] .*$|^ ?(create|delete) mode .*$", re.M)
# The files of an install, one row each: (pattern, an install reads it). An install may write
# every row (`npm install zod` and `uv add httpx` edit the manifest, any install a lock); it
# reads only the manifests and locks, so writing one of those can change what it does. The
# project's sources and documents are in no row.
_INSTALL_FILES: tuple[tuple[str, bool], ...] = (
    (r"pyproject\.toml|setup\.(py|cfg)|requirements[\w.-]*\.(txt|in)|Pipfile|package\.json|"
     r"Cargo\.toml|go\.mod|Gemfile|composer\.json|environment\.ya?ml|\.python-version|\.nvmrc",
     True),                                                                 # manifests
    (r"[\w.-]*\.lockb?|Pipfile\.lock|package-lock\.json|pnpm-lock\.yaml|go\.sum", True),  # locks
    (r"(node_modules|\.venv|venv|site-packages|vendor|target|__pypackages__)(/.*)?|"
     r"[^/]*\.egg-info(/.*)?", False),                                    # environments
)
MANIFEST = re.compile("(^|/)(" + "|".join(p for p, reads in _INSTALL_FILES if reads) + ")$")
"""Manifests and locks: files an install reads, whose writing can change what it does."""
_INSTALL_WRITES = re.compile("(^|/)(" + "|".join(p for p, _ in _INSTALL_FILES) + ")$")


def keeps_tree(step: Step, info: Info) -> bool:
    """The step changes no file of the working tree (``git add``/``commit``/``switch -c``).

    A new branch made from where the repository is (``git switch -c x``, ``git checkout -b
    x``) keeps every file too.
    """
    if info.cls != "vcs" or info.git_restore or info.writes or info.extra.get(
            "script_targets") or info.extra.get("script_unknown"):
        return False
    subs: list[str] = info.extra.get("git") or []
    if not subs or not all(x in _GIT_TREE_KEPT or _new_branch(info.command, x) for x in subs):
        return False
    return not ("commit" in subs and _HOOKS.search(_COMMIT_LINE.sub("", step.output)))


def _new_branch(command: str, sub: str) -> bool:
    # `git switch -c name` / `git checkout -b name` with no start point after the name.
    if sub not in ("switch", "checkout"):
        return False
    m = re.search(r"\bgit\s+(switch|checkout)\s+-[cbB]\s+(\S+)\s*($|&&|;|\|)", command)
    return m is not None and m.group(1) == sub


_NEW_CONTEXT = frozenset({"compaction"})
"""Steps after which looking again is legitimate: the context was compacted. (A person's turn
is not one: the held-out labels count a re-read after a new request as waste.)"""


@dataclass(slots=True)
class _State:
    epoch: int = 0
    unknown: int = 0
    memory: int = 0
    history: int = 0
    installs: int = 0
    names: int = 0
    path_version: dict[str, int] = field(default_factory=dict)


# Git commands that only show history and refs (`git log -5`, `git show <sha>`, `git branch
# --show-current`): edits of files leave their answer as it was; only commands that move
# history or refs change it (``_HISTORY_MOVES``).
_HISTORY_SHOWS = frozenset({"log", "show", "branch", "shortlog", "describe", "rev-parse",
                            "reflog", "remote"})
_HISTORY_MOVES = frozenset({"commit", "pull", "merge", "rebase", "reset", "fetch",
                            "cherry-pick", "revert", "am", "clone", "init", "switch",
                            "checkout", "stash", "push", "tag", "branch", "remote"})
_GIT_OPTS_WITH_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree"})


def _git_sub(tail: list[str]) -> str:
    """The subcommand of a git command line (`git -C repo log` -> ``log``)."""
    skip = False
    for a in tail:
        if skip:
            skip = False
        elif a in _GIT_OPTS_WITH_VALUE:
            skip = True
        elif not a.startswith("-"):
            return a
    return ""


def _shows_history(info: Info) -> bool:
    subs: list[str] = info.extra.get("git") or []
    return info.cls == "inspect" and bool(subs) and all(x in _HISTORY_SHOWS for x in subs)


def _moves_history(info: Info) -> bool:
    # A checkout of files (`git checkout main -- f.ts`) restores a file, not history.
    subs: list[str] = info.extra.get("git") or []
    return not info.git_restore and any(x in _HISTORY_MOVES for x in subs)


def _token(info: Info, st: _State) -> tuple[Any, ...]:
    # A file written by the shell (`cat > f <<EOF`) is known by what it writes.
    paths = info.paths or (info.writes if info.cls == "write" else ())
    if info.cls == "write":
        # ... and by its folder: a write refused for a missing folder succeeds after `mkdir`.
        paths = (*paths, *(p.rpartition("/")[0] for p in paths if "/" in p))
    if info.cls in ("read", "write", "edit") and paths:
        # An install changes lock files and environments, not the project's other files.
        installs = st.installs if any(_INSTALL_WRITES.search(p) for p in paths) else 0
        return (tuple(st.path_version.get(p, 0) for p in paths), st.unknown, st.memory,
                installs)
    if _shows_history(info):
        return ("history", st.history, st.memory)
    if _lists_names(info):
        return ("names", st.names, st.memory)
    return (st.epoch, st.memory)


# A listing of names (`ls -a`, `tree`, `rg --files`, `find -name`): an edit of a file that
# exists changes none of them; a write, a move, a removal, an install may add or drop one.
# (`rg --files-with-matches` lists the files whose contents match: not a listing of names.)
_NAMES_ONLY = re.compile(r"^(ls|tree)\b|^(rg|grep)\s+--files(\s|$)|^find\b(?!.*\s-(newer|mtime|"
                         r"mmin|size|exec|delete|empty))")
_ADDS_OR_DROPS = re.compile(r"\*\*\* (?:Add|Delete) File:|\*\*\* Move to:")


def _lists_names(info: Info) -> bool:
    # `ls -la` also shows sizes, which an edit changes: the output check of a repeat sees it.
    return info.shell and info.cls in ("list", "search") and (
        _NAMES_ONLY.match(info.canon) is not None)


def _keeps_names(step: Step, info: Info) -> bool:
    """No name came or went: files edited in place, or git bookkeeping (``keeps_tree``)."""
    if keeps_tree(step, info):
        return True
    if info.cls != "edit" or info.unknown_mutation or info.extra.get("script_unknown"):
        return False
    args = step.args if isinstance(step.args, dict) else {}
    text = info.command or str(args.get("input", ""))
    return _ADDS_OR_DROPS.search(text) is None and bool(info.paths)


def runs_tests(step: Step, info: Info) -> bool:
    """True when the step runs tests.

    Also inside a compound command (``pip install -e . && pytest``) that the classifier filed
    under its first verb.
    """
    if info.cls == "test":
        return True
    command = step.args.get("command") if isinstance(step.args, dict) else None
    return (info.cls in ("install", "build", "run", "env") and isinstance(command, str)
            and _TEST_WORDS.search(command) is not None)


def analyze(traj: Trajectory) -> list[Info]:
    """Classify every step and attach state tokens before and after it (one linear pass).

    The analysis is kept on the trajectory (``Trajectory.analysis``): the scan's detection,
    the repeat annotation, the judge's signals and the lesson builder classify its steps once,
    in the scan worker, and the analysis crosses the process pool with the trajectory. A
    session whose steps changed is analyzed again.
    """
    last_step = traj.steps[-1] if traj.steps else None
    kept = traj.analysis
    if kept is not None and kept[0] == len(traj.steps) and kept[1] is last_step:
        return cast(list[Info], kept[2])
    token = shell.SESSION_ROOT.set(shell.session_root_of(traj.extra.get("cwd")))
    try:
        infos = _analyze(traj)
    finally:
        shell.SESSION_ROOT.reset(token)
    traj.analysis = (len(traj.steps), last_step, infos)
    return infos


# The interpreter refused the script before running any of it: a syntax error reported
# without a traceback (a traceback means the script ran up to the failing line).
_SCRIPT_REJECTED = re.compile(r"^\s*(SyntaxError|IndentationError|TabError)\b", re.M)


def script_rejected(step: Step) -> bool:
    """True when an inline script failed to parse, so it ran (and wrote) nothing.

    Text after a here-document's terminator, an unclosed quote: Python reports the syntax
    error at ``File "<stdin>"`` before running a line.
    """
    out = step.output
    return (bool(_SCRIPT_REJECTED.search(out)) and 'File "<' in out
            and "Traceback (most recent call last)" not in out)


# The shell refused to parse the command (stray prose before it, an unclosed quote): every
# line of the output is the shell's own complaint, so no part of the command ran.
_SHELL_REJECTED = re.compile(
    r"^(?:/bin/)?(?:ba|z|da)?sh: (?:-c: )?line \d+: (?:syntax error|unexpected EOF)", re.M)
_SHELL_LINE = re.compile(r"^(?:/bin/)?(?:ba|z|da)?sh: (?:-c: )?line \d+: ")


def shell_rejected(step: Step) -> bool:
    """True when every line of the output is the shell refusing to parse the command."""
    lines = [ln for ln in step.output.splitlines() if ln.strip()]
    return bool(lines) and bool(_SHELL_REJECTED.search(step.output)) and all(
        _SHELL_LINE.match(ln) for ln in lines)


_BACKUP = re.compile(r"(\.bak\d*|\.orig|\.backup|\.old|\.save|~)$")


def _recopy(info: Info, path: str, st: _State,
            copies: dict[str, tuple[str, int, int]]) -> bool:
    """True when ``cp src path`` changes nothing a later step can meet.

    A backup (``cp x.py x.py.bak``) is a copy no run reads; copying an unchanged ``src``
    over the copy made before writes the same bytes again.
    """
    for src, dst in info.extra.get("copies", ()):
        if dst != path:
            continue
        if dst.startswith(src) and _BACKUP.search(dst[len(src):] or "-"):
            return True
        if copies.get(dst) == (src, st.path_version.get(src, 0), st.path_version.get(dst, 0)):
            return True
    return False


PERSISTENT_SHELLS = frozenset({"swe-agent"})
"""Agents whose commands share one shell, so a ``cd`` carries over to the next command (the
others start each command in the session's folder)."""
_RELATIVE_CD = re.compile(r"^\s*cd\s+(?![/~])\S")


def relative_cd(info: Info) -> bool:
    """The shell command starts by moving to a folder named from where the shell is."""
    return info.shell and bool(_RELATIVE_CD.match(info.command))


def _analyze(traj: Trajectory) -> list[Info]:
    # In a shared shell a relative cd moves where every later relative path points.
    shared = traj.agent in PERSISTENT_SHELLS
    st = _State()
    infos: list[Info] = []
    scripts: dict[str, tuple[str, ...]] = {}
    copies: dict[str, tuple[str, int, int]] = {}
    for step in traj.steps:
        info = classify(step)
        _apply_scripts(info, scripts)
        rejected = info.shell and shell_rejected(step)
        if rejected or (info.failed and info.shell and script_rejected(step)):
            # Nothing ran, so nothing was written; what it meant to edit is kept for retries.
            info.extra["meant_targets"] = info.extra.pop("script_targets", ())
            info.extra.pop("script_unknown", None)
        if rejected:
            info.failed = True
            info.extra["unran"] = True
            info.extra["meant_targets"] += info.writes
            info.writes = ()
        if step.kind in _NEW_CONTEXT:
            st.memory += 1
        info.state = _token(info, st)
        info.epoch = st.epoch
        # A failed tool edit changed nothing; a failed shell command may still have written its
        # redirections and here-documents (`cat > t.py <<EOF ... && python t.py` failing).
        shell_writes = info.failed and info.shell and bool(
            info.writes or info.extra.get("script_targets") or info.extra.get("script_unknown"))
        if (not info.failed or shell_writes) and step.kind == "tool" and not no_op_install(
                step, info):
            mutated = False
            for p in (*info.writes, *info.extra.get("script_targets", ())):
                if _recopy(info, p, st, copies):
                    continue  # the same backup made again: nothing changed
                st.path_version[p] = st.path_version.get(p, 0) + 1
                mutated = True
            for src, dst in info.extra.get("copies", ()):
                copies[dst] = (src, st.path_version.get(src, 0), st.path_version.get(dst, 0))
            if info.extra.get("script_unknown"):
                st.unknown += 1
                mutated = True
            # A successful edit whose file is unknown (SWE-agent ``edit`` of the open file)
            # may change anything: later reruns are not "unchanged".
            if info.cls in ("write", "edit") and not info.writes:
                info.unknown_mutation = True
            if info.cls == "install" and info.extra.get("only_install"):
                st.installs += 1
                mutated = True
            elif (info.unknown_mutation and not keeps_tree(step, info)) or info.git_restore:
                st.unknown += 1
                mutated = True
            if info.env_change or info.cls in ("install", "vcs", "build") or (
                    info.program in _STOPS) or (shared and relative_cd(info)):
                # Stopping a process changes what a later start or request meets.
                mutated = True
            if mutated:
                st.epoch += 1
                if not _keeps_names(step, info):
                    st.names += 1
            if _moves_history(info) and not _shows_history(info):
                st.history += 1
        info.state_after = _token(info, st)
        infos.append(info)
    return infos


def _apply_scripts(info: Info, scripts: dict[str, tuple[str, ...]]) -> None:
    """Turn a run of a file-writing script into writes of the files it names."""
    body = info.extra.get("script_body_writes")
    if body is not None:
        path, writes = body
        if writes:
            scripts[path.rsplit("/", 1)[-1]] = writes
        else:
            scripts.pop(path.rsplit("/", 1)[-1], None)
    if not info.shell:
        return
    # Also when the run failed: a script often writes first and fails after (a check, a
    # print), and calling the re-read after it waste would be the worse mistake.
    found = list(info.extra.get("script_writes", ()))
    if scripts and info.cls in ("run", "test", "build", "write", "other"):
        for word in info.canon.partition(" <<")[0].split(" "):
            found.extend(scripts.get(word.rsplit("/", 1)[-1], ()))
    if not found:
        return
    # Kept apart from ``writes`` (what the command itself writes, which other stages read):
    # the script's files only advance the state tokens.
    if "*" in found:
        info.extra["script_unknown"] = True
    info.extra["script_targets"] = tuple(dict.fromkeys(p for p in found if p != "*"))


_current: tuple[Trajectory, list[Info]] | None = None


def infos_for(traj: Trajectory) -> list[Info]:
    """The analysis of ``traj``, shared by all families during one ``detect_all`` call."""
    if _current is not None and _current[0] is traj:
        return _current[1]
    return analyze(traj)


def set_current(traj: Trajectory | None, infos: list[Info] | None = None) -> None:
    """Pin (or clear) the analysis reused by ``infos_for`` (``detect_all`` does this)."""
    global _current
    _current = (traj, infos) if traj is not None and infos is not None else None


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


_SETUP_PROGS = frozenset({"cd", "cat", "echo", "printf", "mkdir", "touch", "rm", "cp", "mv",
                          "ls", "export", "source", "git", "sed", "chmod", "tee", "true"})
_ENV_ASSIGN = re.compile(r"^(?:export\s+)?[A-Za-z_]\w*=")


def run_tail(info: Info) -> str:
    """The run a shell step ends with, as its identity ("" when it ends with set-up).

    ``cat > t.rst <<EOF ... && sphinx-build ...`` is set-up then the same reproduction;
    ``make clean && make`` ends with ``make``. Environment set up front is an input of the
    run (STRATEGY=a vs STRATEGY=b are two experiments) unless it only says where code is.
    """
    if not info.shell:
        return ""
    body, _, heredoc = info.canon.partition(" <<")
    parts = body.split(" && ")
    tail = parts[-1]
    prog = tail.split(" ", 1)[0]
    if tail.endswith(" -") and heredoc:
        # `python3 - <<'PY' ...`: the here-document is the script, so it is the run.
        tail += " <<" + heredoc
    single = " " not in tail and not (_BUILD_WORDS.search(tail) or _TEST_WORDS.search(tail))
    if prog in _SETUP_PROGS or single:
        return ""
    if prog == "python" and info.cls in ("run", "test"):
        # The same script from another directory (`cd /w && python x.py`, `python
        # /w/x.py`, `python x.py`): its name and arguments are the run.
        words = tail.split(" ")
        if len(words) > 1 and words[1].endswith(".py"):
            tail = " ".join([prog, words[1].rsplit("/", 1)[-1], *words[2:]])
    env = [p for p in parts[:-1] if _ENV_ASSIGN.match(p) and not shell.is_location_env(p)]
    return " && ".join([*env, tail])


BUILD_DIRS = re.compile(r"(^|/)(build\w*|dist|target|out|_build|\.pytest_cache|__pycache__|"
                         r"\.cache|cmake-build[\w-]*|\.turbo|\.next|\.mypy_cache)(/|$)")
"""Folders of build output and caches: clearing one changes no source."""


def is_cleanup(argv: list[str]) -> bool:
    """A command that only clears build output (``make clean``, ``rm -rf build``, mkdir)."""
    if not argv:
        return True
    if argv[0] in ("cd", "mkdir") or argv[:2] in (["make", "clean"], ["cargo", "clean"]):
        return True
    targets = [a for a in argv[1:] if not a.startswith("-")]
    return argv[0] == "rm" and bool(targets) and all(BUILD_DIRS.search(t) for t in targets)


def only_cleanup_before_run(info: Info) -> bool:
    """True when every segment before a shell step's final run only clears build output."""
    segs = [g for g in shell.parse(info.command).segments if g.argv and not g.piped]
    return all(is_cleanup(g.argv) for g in segs[:-1])


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
            out.append(_MASK.sub("#", tok))
        elif re.fullmatch(r"[\w.:-]+", tok) and len(out) < 2:
            out.append(_MASK.sub("#", tok))
        else:
            out.append("<arg>")
    if info.cls in ("read", "write", "edit", "search", "list") and not info.canon[:1].isalpha():
        return info.cls
    if ":" in info.canon.split(" ", 1)[0]:
        # Structured tool call: class, tool and the file type only.
        ext = path_ext(info.paths[0]) if info.paths else ""
        return f"{info.cls}:{info.program}:{ext}"
    return " ".join(out)
