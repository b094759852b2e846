"""What each program asks and changes: the command-semantics table of the detector.

A command is a question about some state, and its answer depends on the kinds of change that
could alter it (``answered``): a read depends on its file, ``git log`` on history, ``ls`` on
which names exist, ``ps`` on nothing the agent controls (it is live). This module holds that
knowledge as data, one row per program, so teaching orf a program is adding a row here: the
classifier (``classify_shell``) reads the rows, and the families read the classified step,
never the command line.

Row fields (``Program``):

- ``asks``: the class of question the program asks when it runs on its own: ``read`` (a
  file's lines), ``search``, ``list`` (names in a folder), ``inspect`` (the machine or the
  environment), ``poll`` (live output: asking again is waiting, not waste), ``lint``, ``web``;
  ``write`` for a program whose purpose is to change files; "" when the rules below decide
  (a test runner, a build, an install) or the program only appears in other roles.
- ``writes_args``: its non-flag arguments are files it writes (``touch a``, ``cp a b``).
- ``writes_files``: files it writes whatever its arguments (a lock file it regenerates),
  relative to where it runs.
- ``changes``: kinds of state it changes besides files: ``process`` (stopping one changes
  what a later start meets).
- ``names_paths``: it only names the paths it is given (``rm tests/x.py``): it runs no tests.
- ``narrows``: piped after a read, it shows only part of what was read (``| grep x``).
- ``selects``: piped after any command, it only selects from that command's output
  (``| head``, ``| jq .x``): the command asked the question, not the filter.
- ``setup``: set-up before a run (``cd``, ``echo``, ``mkdir``): it is not what the command
  is run for, so it is not the run's identity.
- ``cosmetic``: flags that change only how the answer is printed, not the question (``None``:
  every flag, as for ``ls``); ``getopt``: its short flags combine (``-la`` is ``-l -a``).

Git's subcommands, the package managers, test runners and builds have tables of their own
below, in the same spirit.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice


@dataclass(frozen=True, slots=True)
class Program:
    """What one program asks and changes (see the module docstring)."""

    asks: str = ""
    writes_args: bool = False
    writes_files: tuple[str, ...] = ()
    changes: frozenset[str] = frozenset()
    names_paths: bool = False
    narrows: bool = False
    selects: bool = False
    setup: bool = False
    cosmetic: frozenset[str] | None = frozenset()
    getopt: bool = False


_PROCESS = frozenset({"process"})
_GREP_COSMETIC = frozenset({*"nrRHhs", "--color", "--colour", "--line-number", "--recursive"})
_PYTEST_COSMETIC = frozenset({*"vsqxl", "-vv", "-vvv", "-qq", "-rA", "-ra", "--no-header",
                              "--disable-warnings", "--color", "--tb"})

PROGRAMS: dict[str, Program] = {
    # reading a file's lines
    "cat": Program("read", selects=True, setup=True, getopt=True,
                   cosmetic=frozenset({"-n", "-A", "-v"})),
    "head": Program("read", selects=True), "tail": Program("read", selects=True),
    "nl": Program("read"), "less": Program("read", selects=True),
    "more": Program("read", selects=True), "bat": Program("read"),
    "view": Program("read"), "xxd": Program("read"), "od": Program("read"),
    "hexdump": Program("read"),
    # searching
    "grep": Program("search", narrows=True, selects=True, getopt=True, cosmetic=_GREP_COSMETIC),
    "egrep": Program("search", narrows=True, selects=True), "fgrep": Program("search"),
    "rg": Program("search", narrows=True, selects=True), "find": Program("search"),
    "locate": Program("search"), "which": Program("search"), "whereis": Program("search"),
    "fd": Program("search"), "type": Program("search"), "ag": Program("search"),
    "ack": Program("search"),
    # listing names
    "ls": Program("list", setup=True, getopt=True, cosmetic=None),
    "tree": Program("list", getopt=True, cosmetic=None),
    "du": Program("list"), "pwd": Program("list"), "dir": Program("list"),
    # the machine and the environment
    "env": Program("inspect"), "printenv": Program("inspect"), "whoami": Program("inspect"),
    "uname": Program("inspect"), "id": Program("inspect"), "df": Program("inspect"),
    "free": Program("inspect"), "date": Program("inspect"),
    "wc": Program("inspect", narrows=True, selects=True, getopt=True), "stat": Program("inspect"),
    "file": Program("inspect"), "md5sum": Program("inspect"), "sha256sum": Program("inspect"),
    # live: processes, ports, waiting
    "sleep": Program("poll"), "wait": Program("poll"), "ps": Program("poll"),
    "jobs": Program("poll"), "top": Program("poll"), "htop": Program("poll"),
    "kill": Program("poll", changes=_PROCESS), "pkill": Program("poll", changes=_PROCESS),
    "killall": Program(changes=_PROCESS), "fuser": Program(changes=_PROCESS),
    "pgrep": Program("poll"), "watch": Program("poll"), "nvidia-smi": Program("poll"),
    "fg": Program("poll"), "bg": Program("poll"), "netstat": Program("poll"),
    "ss": Program("poll"), "lsof": Program("poll"),
    # changing files named in the arguments
    "touch": Program("write", writes_args=True, names_paths=True, setup=True),
    "mkdir": Program("write", writes_args=True, names_paths=True, setup=True, getopt=True),
    "cp": Program("write", writes_args=True, names_paths=True, setup=True, getopt=True),
    "mv": Program("write", writes_args=True, names_paths=True, setup=True, getopt=True),
    "rm": Program("write", writes_args=True, names_paths=True, setup=True, getopt=True),
    "ln": Program("write", writes_args=True, names_paths=True),
    "chmod": Program("write", writes_args=True, names_paths=True, setup=True),
    "tee": Program("write", writes_args=True, names_paths=True, setup=True),
    "rmdir": Program("write", writes_args=True, names_paths=True),
    "chown": Program("write", writes_args=True), "truncate": Program("write", writes_args=True),
    "patch": Program("write", writes_args=True), "unzip": Program("write", writes_args=True),
    "tar": Program("write", writes_args=True),
    # linters and formatters
    **{name: Program("lint") for name in (
        "ruff", "flake8", "pylint", "mypy", "eslint", "black", "isort", "pyright", "prettier",
        "shellcheck", "clippy", "golangci-lint")},
    # the network
    "curl": Program("web"), "wget": Program("web"), "http": Program("web"), "nc": Program("web"),
    # other roles only
    "awk": Program(narrows=True, selects=True),
    "sed": Program(narrows=True, selects=True, setup=True),
    "cut": Program(narrows=True, selects=True), "sort": Program(narrows=True, selects=True),
    "uniq": Program(narrows=True, selects=True), "jq": Program(selects=True),
    "tr": Program(selects=True), "column": Program(selects=True),
    "xargs": Program(selects=True),
    "cd": Program(setup=True), "echo": Program(setup=True), "printf": Program(setup=True),
    "export": Program(setup=True), "source": Program(setup=True), "true": Program(setup=True),
    "git": Program(setup=True),
    "pytest": Program(getopt=True, cosmetic=_PYTEST_COSMETIC),
    # a program with its subcommand, when only that subcommand has a row (flags left out)
    "poetry lock": Program("write", writes_files=("poetry.lock",)),
    "kubectl rollout status": Program("poll"),
}
"""One row per program, by the name it is run as (``/usr/bin/grep`` is ``grep``), or by the
program and its subcommand (``kubectl rollout status``) when only that subcommand has a row:
``program_of`` finds the longest such key a command line starts with."""

UNKNOWN = Program()
"""The row of a program the table does not know: it asks nothing the rules can name."""


def program(name: str) -> Program:
    """The row of ``name`` (``UNKNOWN`` when the table has none)."""
    return PROGRAMS.get(name, UNKNOWN)


SUBCOMMAND_WORDS = 3
"""Words after the program a key may name (``kubectl rollout status`` uses two)."""


def program_of(argv: list[str]) -> Program:
    """The row of a command line: its program with the longest subcommand that has a row.

    ``poetry lock --no-update`` and ``poetry --no-interaction lock`` are ``poetry lock``; with
    no such row, the program's own. Flags are skipped, so a flag's separate value (``kubectl
    -n prod rollout status``) hides the subcommand: the row is then the program's.
    """
    if not argv:
        return UNKNOWN
    words = [argv[0], *islice((a for a in argv[1:] if not a.startswith("-")), SUBCOMMAND_WORDS)]
    for n in range(len(words), 1, -1):
        row = PROGRAMS.get(" ".join(words[:n]))
        if row is not None:
            return row
    return program(argv[0])


def named(role: str) -> frozenset[str]:
    """Programs whose row has ``role`` set (``selects``, ``setup``): for tests and docs."""
    return frozenset(n for n, row in PROGRAMS.items() if getattr(row, role))


@dataclass(frozen=True, slots=True)
class GitCommand:
    """What one git subcommand does to the working tree and to history."""

    mutates: bool = False
    """It may change files or the index in ways the command line does not name."""
    keeps_tree: bool = False
    """Every file of the working tree is as it was after it (it moves index, refs, remotes)."""
    shows_history: bool = False
    """It shows history or refs: only a command that moves them changes its answer."""
    moves_history: bool = False
    """It moves history or refs (a commit, a fetch, a new branch)."""
    cosmetic: frozenset[str] = frozenset()
    """Flags that change only how its answer is printed."""


GIT: dict[str, GitCommand] = {
    "add": GitCommand(mutates=True, keeps_tree=True),
    "am": GitCommand(mutates=True, moves_history=True),
    "apply": GitCommand(mutates=True),
    "branch": GitCommand(keeps_tree=True, shows_history=True, moves_history=True),
    "checkout": GitCommand(mutates=True, moves_history=True),
    "cherry-pick": GitCommand(mutates=True, moves_history=True),
    "clean": GitCommand(mutates=True),
    "clone": GitCommand(mutates=True, moves_history=True),
    "commit": GitCommand(mutates=True, keeps_tree=True, moves_history=True),
    "config": GitCommand(keeps_tree=True),
    "describe": GitCommand(shows_history=True),
    "diff": GitCommand(keeps_tree=True),
    "fetch": GitCommand(mutates=True, keeps_tree=True, moves_history=True),
    "gc": GitCommand(mutates=True, keeps_tree=True),
    "init": GitCommand(mutates=True, moves_history=True),
    "log": GitCommand(keeps_tree=True, shows_history=True, cosmetic=frozenset({
        "--oneline", "--decorate", "--no-decorate", "--color", "--no-color"})),
    "ls-remote": GitCommand(keeps_tree=True),
    "merge": GitCommand(mutates=True, moves_history=True),
    "mv": GitCommand(mutates=True),
    "prune": GitCommand(mutates=True, keeps_tree=True),
    "pull": GitCommand(mutates=True, moves_history=True),
    "push": GitCommand(keeps_tree=True, moves_history=True),
    "read-tree": GitCommand(mutates=True),
    "rebase": GitCommand(mutates=True, moves_history=True),
    "reflog": GitCommand(shows_history=True),
    "remote": GitCommand(keeps_tree=True, shows_history=True, moves_history=True),
    "repack": GitCommand(mutates=True, keeps_tree=True),
    "reset": GitCommand(mutates=True, moves_history=True),
    "restore": GitCommand(mutates=True),
    "rev-parse": GitCommand(keeps_tree=True, shows_history=True),
    "revert": GitCommand(mutates=True, moves_history=True),
    "rm": GitCommand(mutates=True),
    "shortlog": GitCommand(shows_history=True),
    "show": GitCommand(keeps_tree=True, shows_history=True),
    "stash": GitCommand(mutates=True, moves_history=True),
    "status": GitCommand(keeps_tree=True, cosmetic=frozenset({
        "-s", "--short", "-b", "--branch", "-sb", "--porcelain", "--long"})),
    "submodule": GitCommand(mutates=True),
    "switch": GitCommand(mutates=True, moves_history=True),
    "tag": GitCommand(keeps_tree=True, moves_history=True),
    "update-index": GitCommand(mutates=True),
    "update-ref": GitCommand(mutates=True, keeps_tree=True),
    "worktree": GitCommand(mutates=True),
}
"""Git subcommands by name; one the table does not know changes nothing it can name."""


def git_command(sub: str) -> GitCommand:
    """The row of git subcommand ``sub`` (an empty row when the table has none)."""
    return GIT.get(sub, _NO_GIT)


_NO_GIT = GitCommand()

PACKAGE_MANAGERS = ("pip", "pip3", "uv", "poetry", "conda", "mamba", "apt", "apt-get", "yum",
                    "dnf", "apk", "brew", "npm", "yarn", "pnpm", "gem", "go", "cargo")
"""Programs that install packages; with one of ``INSTALL_VERBS`` after them, an install."""
INSTALL_VERBS = ("install", "add", "uninstall", "remove", "get", "sync", "ci", "update",
                 "upgrade")

TEST_RUNNERS = ("pytest", r"py\.test", "tox", "nox", "nosetests", "unittest",
                r"runtests(\.py)?", "jest", "vitest", "mocha", "ctest", "phpunit", "rspec")
"""Programs that run tests (patterns: ``runtests`` with or without ``.py``)."""
TEST_SUBCOMMAND = ("go", "cargo", "npm", "yarn", "pnpm", "mvn", "gradle", "make", "dotnet",
                   "mix")
"""Programs whose ``test`` (or ``run test``) subcommand runs tests."""

BUILDERS = ("make", "cmake", "ninja", "gcc", r"g\+\+", "clang", "cc", "tsc", "javac", "mvn",
            "gradle", "bazel", "webpack", "vite")
"""Programs that build when they start the command."""
BUILD_SUBCOMMAND = ("cargo", "go", "dotnet")
"""Programs whose ``build`` subcommand builds."""
BUILD_SCRIPT = ("npm", "yarn", "pnpm")
"""Programs whose ``run build`` script builds."""
