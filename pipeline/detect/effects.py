"""What a step changed, read from its output where the command alone cannot say.

An install that changed nothing, git bookkeeping that kept every file, a script or command the
shell or interpreter refused before running.
"""

from __future__ import annotations

import re

from ..model import Step
from .info import Info
from .programs import git_command

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


INSTALL_WRITES = re.compile("(^|/)(" + "|".join(p for p, _ in _INSTALL_FILES) + ")$")


def keeps_tree(step: Step, info: Info) -> bool:
    """The step changes no file of the working tree (``git add``/``commit``/``switch -c``).

    A new branch made from where the repository is (``git switch -c x``, ``git checkout -b
    x``) keeps every file too.
    """
    if info.cls != "vcs" or info.git_restore or info.writes or info.extra.get(
            "script_targets") or info.extra.get("script_unknown"):
        return False
    subs: list[str] = info.extra.get("git") or []
    if not subs or not all(git_command(x).keeps_tree or _new_branch(info.command, x) for x in subs):
        return False
    return not ("commit" in subs and _HOOKS.search(_COMMIT_LINE.sub("", step.output)))


def _new_branch(command: str, sub: str) -> bool:
    # `git switch -c name` / `git checkout -b name` with no start point after the name.
    if sub not in ("switch", "checkout"):
        return False
    m = re.search(r"\bgit\s+(switch|checkout)\s+-[cbB]\s+(\S+)\s*($|&&|;|\|)", command)
    return m is not None and m.group(1) == sub


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


BACKUP = re.compile(r"(\.bak\d*|\.orig|\.backup|\.old|\.save|~)$")
