"""Classify a shell command.

The program it runs and what the table of programs (``programs``) says of it, the files it
reads or writes, its pipes, and the scripts it writes or runs.
"""

from __future__ import annotations

import re

from ..hashing import content_hash
from ..model import Step
from . import shell
from .info import END, ENVELOPE, Info, int_or_none
from .programs import (
    BUILD_SCRIPT,
    BUILD_SUBCOMMAND,
    BUILDERS,
    INSTALL_VERBS,
    PACKAGE_MANAGERS,
    TEST_RUNNERS,
    TEST_SUBCOMMAND,
    git_command,
    program,
    program_of,
)

# Built from the tables of ``programs``; the search runs over the whole command line, so a
# test or build run behind a wrapper (`uv run pytest`, `cd b && make`) is found too.
TEST_WORDS = re.compile(
    r"(^|[\s/])(" + "|".join(TEST_RUNNERS) + r")(\s|$|\.)|\b("
    + "|".join(TEST_SUBCOMMAND) + r")\s+(run\s+)?test|\btest_\w+\.py\b|\btests?/"
)
BUILD_WORDS = re.compile(
    r"^(" + "|".join(BUILDERS) + r")\b|\b(" + "|".join(BUILD_SUBCOMMAND) + r")\s+build\b|\b("
    + "|".join(BUILD_SCRIPT) + r")\s+run\s+build\b|setup\.py\s+build"
)
INSTALL = re.compile(
    r"\b(" + "|".join(PACKAGE_MANAGERS) + r")\b\s+(" + "|".join(INSTALL_VERBS) + r")\b|"
    r"setup\.py\s+(install|develop)"
)

_PAGER = re.compile(r"\|\s*(head|tail)\s+(?:-n\s*|--lines[= ]?|-)\+?(\d+)\s*(?:$|[|;&)])")


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
                n = int_or_none(argv[i + 1].lstrip("+")) or n
            elif re.fullmatch(r"-n?\d+", a):
                n = int(a.lstrip("-n"))
        return (1, n) if prog == "head" else (END - n, END)
    return (1, END)


def classify_shell(command: str, info: Info) -> None:
    """Fill ``info`` for a shell command: class, program, paths, writes, canonical form."""
    parsed = shell.parse(command)
    info.parsed = parsed
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
        row = program_of(s.argv)
        writes.extend(shell.norm_path(f, cwd) for f in row.writes_files)
        if row.writes_args:
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
        if head == "git" and tail and git_command(tail[0]).mutates:
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
    row = program_of([prog, *argv[1:]])
    if INSTALL.search(low):
        info.cls = "install"
        info.unknown_mutation = True
        # Only installs in the command (`uv sync`, `cd b && pip install -e .`): their output
        # alone says whether anything changed (see ``no_op_install``).
        info.extra["only_install"] = all(
            g.argv[0] == "cd" or INSTALL.search(" ".join(g.argv).lower()) for g in segs
            if not g.piped)
    elif parsed.env_only:
        info.cls = "env"
    elif row.asks == "poll" or (prog == "tail" and ("-f" in argv or "-F" in argv)):
        info.cls = "poll"
    elif prog == "git":
        info.cls = "vcs" if info.unknown_mutation else "inspect"
    elif TEST_WORDS.search(" ".join(argv)) and not (
            row.asks in ("read", "search") or row.names_paths):
        info.cls = "test"
    elif BUILD_WORDS.search(" ".join(argv)):
        info.cls = "build"
        info.unknown_mutation = True
    elif row.asks == "lint" or (len(argv) > 2 and argv[1] == "-m"
                                and program(argv[2]).asks == "lint"):
        info.cls = "lint"
    elif row.asks == "read" or (prog == "sed" and "-n" in argv and not writes):
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
    elif row.asks == "search":
        info.cls = "search"
    elif row.asks == "list":
        info.cls = "list"
        info.paths = tuple(shell.norm_path(a, cwd) or "." for a in argv[1:]
                           if not a.startswith("-")) or (cwd or ".",)
    elif row.asks == "inspect":
        info.cls = "inspect"
    elif row.asks == "web":
        info.cls = "web"
    elif row.asks == "write" or (writes and not (
            not main.redirects and all(is_cleanup(g.argv) for g in segs if g is not main))):
        # `rm -rf dist && bun run typecheck` runs the typecheck; clearing output is set-up.
        info.cls = "write"
        info.content = _whole_content(command, parsed)
    elif prog == "apply_patch" and parsed.heredoc:
        # Codex's patch tool called through the shell: an edit of the files its envelope names.
        info.cls = "edit"
        writes.extend(shell.norm_path(f, cwd) for f in ENVELOPE.findall(parsed.heredoc))
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
        elif program(head).narrows:
            info.filtered = True


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


def runs_tests(step: Step, info: Info) -> bool:
    """True when the step runs tests.

    Also inside a compound command (``pip install -e . && pytest``) that the classifier filed
    under its first verb.
    """
    if info.cls == "test":
        return True
    command = step.args.get("command") if isinstance(step.args, dict) else None
    return (info.cls in ("install", "build", "run", "env") and isinstance(command, str)
            and TEST_WORDS.search(command) is not None)


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
    single = " " not in tail and not (BUILD_WORDS.search(tail) or TEST_WORDS.search(tail))
    if program(prog).setup or single:
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
