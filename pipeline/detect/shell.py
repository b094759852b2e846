"""Canonical shell-command form, so trivially different spellings of one command compare equal.

``grep -rn foo .`` and ``grep -rn "foo" ./``, ``ls -la /workspace/x`` and ``ls -al /testbed``,
``cd /testbed && python reproduce.py`` and ``python /testbed/reproduce.py`` all map to one form.
"""

from __future__ import annotations

import re
import shlex
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache

from .programs import git_command, program

# Sandbox roots that agents use for the same checkout in different harnesses.
_ROOTS = re.compile(
    r"^(/workspace/(?![^/]*\.[A-Za-z]\w{0,5}(?:/|$))[^/]+|/workspace|/testbed|/repo|/app|/code|/src/app|/home/[^/]+/[^/]+|"
    r"/tmp/[^/]+/repo)(?=/|$)"
)
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", ";;", "\n"})
_NOISE_REDIRECTS = frozenset({"2>&1", ">&2", "1>&2", "2>/dev/null", ">/dev/null", "&>/dev/null"})
_PAGER_TAILS = frozenset({"head", "tail", "less", "more", "cat"})
_PYTHON = re.compile(r"^python(\d(\.\d+)?)?$")


@dataclass(slots=True)
class Segment:
    """One simple command of a pipeline: program, arguments and output redirections."""

    argv: list[str]
    """Program and arguments, quotes removed."""
    redirects: list[str] = field(default_factory=list)
    """Files written by ``>``/``>>`` (not /dev/null)."""
    piped: bool = False
    """True when this segment reads the previous segment's output through ``|``."""


@dataclass(slots=True)
class Parsed:
    """A shell command split into segments, with the working directory set by ``cd``."""

    segments: list[Segment]
    """Simple commands in order (cd, echo and pager tails removed)."""
    cwd: str
    """Normalized directory set by a leading ``cd`` (empty for the repo root)."""
    heredoc: str = ""
    """Body of a here-document, when the command has one."""
    env_only: bool = False
    """True when the command only changes the shell state (cd, export, source)."""


# The session's working directory (Claude Code and Codex log it): absolute paths under it are
# made relative like sandbox roots, so `Edit /Users/me/repo/a.go` and `sed -i ... a.go` name
# the same file. Set per trajectory by ``actions.analyze``.
SESSION_ROOT: ContextVar[str] = ContextVar("orf_session_root", default="")


def session_root_of(cwd: object) -> str:
    """The normalized root for a logged cwd ("" when it is missing or the filesystem root)."""
    if not isinstance(cwd, str) or not cwd.startswith("/"):
        return ""
    root = "/" + "/".join(part for part in cwd.split("/") if part and part != ".")
    return "" if root == "/" else root


def norm_path(path: str, cwd: str = "") -> str:
    """Normalize a path: sandbox root removed, ``./`` and trailing slashes dropped.

    Args:
        path: The path as written.
        cwd: Normalized directory the path is relative to (from a ``cd``).

    Returns:
        A repo-relative path ("" for the repo root), or the absolute path when it is outside
        any known sandbox root.
    """
    p = path.strip().strip("'\"")
    if not p:
        return p
    absolute = p.startswith("/")
    # The session's own folder first: relative paths are relative to it, so under
    # `/home/me/misc/repo` the sandbox pattern `/home/me/misc` would make `repo/a.md` of
    # what the agent also calls `a.md`.
    root = SESSION_ROOT.get() if absolute else ""
    rooted = bool(root) and (p == root or p.startswith(root + "/"))
    if rooted:
        p = p[len(root):]
    elif absolute and _ROOTS.match(p) is not None:
        p, rooted = _ROOTS.sub("", p), True
    parts: list[str] = []
    for part in p.split("/"):
        if part in ("", "."):
            continue
        if part == ".." and parts:
            parts.pop()
            continue
        parts.append(part)
    rel = "/".join(parts)
    if absolute and not rooted:
        return "/" + rel
    if not absolute and cwd:
        return f"{cwd}/{rel}" if rel else cwd
    return rel


def is_pathlike(token: str) -> bool:
    """True for tokens that look like file paths (a slash, a dot-extension or ``.``)."""
    if not token or token.startswith("-") or "=" in token[:1]:
        return False
    if token in (".", "..", "./"):
        return True
    return "/" in token or bool(re.search(r"\.[A-Za-z0-9_]{1,6}$", token))


_NOISE_RE = re.compile(r"(?<![\w>])(\d?>&\d|&?\d?>\s*/dev/null)")


_SIMPLE_TOKENS = re.compile(r"[;&|<>]+|[^\s;&|<>]+")


def _tokens(line: str) -> list[str]:
    line = _NOISE_RE.sub(" ", line)
    if not any(c in line for c in "'\"\\`$#("):
        # No quoting to undo: a regex split is ~10x faster than shlex and gives the same tokens.
        return _SIMPLE_TOKENS.findall(line)
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:
        # Unbalanced quotes: a whitespace split still gives a usable comparison key.
        return line.replace('"', " ").replace("'", " ").split()


def pipe_filters(command: str) -> tuple[tuple[str, ...], ...]:
    """The commands piped after the first one of the command's first line, quotes removed.

    Unlike ``parse`` it keeps pager tails (``| tail -5``) and reads ``||`` as the separator
    it is: ``grep -E "a|b" f`` has no filter, ``make || echo failed`` neither.
    """
    out: list[tuple[str, ...]] = []
    cur: list[str] = []
    piped = False
    for tok in [*_tokens(command.strip().split("\n", 1)[0]), ";"]:
        if tok in _SEPARATORS:
            if piped and cur:
                out.append(tuple(cur))
            elif out:
                break  # the pipeline ended: what follows is another command
            cur, piped = [], tok == "|"
        else:
            cur.append(tok)
    return tuple(out)


def parse(command: str) -> Parsed:
    """Split a shell command into segments (cached per command and session root)."""
    return _parse(command, SESSION_ROOT.get())


@lru_cache(maxsize=8192)
def _parse(command: str, _root: str) -> Parsed:
    """Split a shell command into segments, dropping ``cd`` prefixes and noise redirections.

    Args:
        command: The command line as the agent sent it.

    Returns:
        The parsed form; never raises.
    """
    text = command.strip()
    heredoc = ""
    match = _HEREDOC.search(text)
    if match and "\n" in text[match.end():]:
        first, _, rest = text.partition("\n")
        lines = rest.split("\n")
        # The body ends at the first line holding only the delimiter; what follows it is more
        # shell (``cat > t.py <<EOF ... EOF`` then ``python t.py``) and must not be lost.
        stop = next((i for i, line in enumerate(lines) if line.strip() == match.group(1)),
                    len(lines))
        heredoc = "\n".join(lines[:stop])
        after = [line for line in lines[stop + 1:] if line.strip()]
        text = " ; ".join([first, *after])
    else:
        text = text.replace("\\\n", " ")
    toks = _tokens(text)
    segments: list[Segment] = []
    cur = Segment([])
    cwd = ""
    env_only = True
    pending_redirect = False
    skip_next = False
    for tok in toks + [";"]:
        if skip_next:
            skip_next = False
            if tok not in _SEPARATORS:
                continue
        if pending_redirect:
            pending_redirect = False
            if tok != "/dev/null" and tok not in _SEPARATORS:
                cur.redirects.append(norm_path(tok, cwd))
            continue
        if tok in _SEPARATORS or tok in ("<", "<<", "<<<"):
            if tok in ("<", "<<", "<<<"):
                skip_next = True
                continue
            argv = cur.argv
            if argv:
                head = argv[0]
                if head == "cd":
                    cwd = norm_path(argv[1], cwd) if len(argv) > 1 else ""
                elif head in ("export", "source", ".", "set", "unset", "alias", "conda") or (
                    "=" in head and len(argv) == 1
                ):
                    segments.append(cur)
                else:
                    env_only = False
                    segments.append(cur)
            cur = Segment([], piped=tok == "|")
            continue
        if tok in (">", ">>", "&>", ">|"):
            pending_redirect = True
            continue
        if tok in _NOISE_REDIRECTS or re.fullmatch(r"\d?>&\d", tok):
            continue
        if tok.startswith(">") and len(tok) > 1:
            if tok.lstrip(">") != "/dev/null":
                cur.redirects.append(norm_path(tok.lstrip(">"), cwd))
            continue
        cur.argv.append(tok)
    segments = _drop_noise(segments)
    return Parsed(segments=segments, cwd=cwd, heredoc=heredoc, env_only=env_only and not heredoc)


def _drop_noise(segments: list[Segment]) -> list[Segment]:
    """Remove echo separators and pager tails (``| head -50``) that only trim the output."""
    out: list[Segment] = []
    for seg in segments:
        head = seg.argv[0] if seg.argv else ""
        if seg.piped and head in _PAGER_TAILS and not seg.redirects and len(seg.argv) <= 3:
            continue
        if head in ("echo", "printf", "true", ":") and not seg.redirects and not seg.piped:
            continue
        out.append(seg)
    if not out and segments:
        return segments[:1]
    return out


# Variables that say where code is found or how output looks, not what a run tests: a script
# rerun with another PYTHONPATH is the same script again. Other variables (STRATEGY=a vs b)
# are inputs of the run and stay in its identity.
LOCATION_ENV = frozenset({
    "PYTHONPATH", "PATH", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH", "NODE_PATH", "GOPATH",
    "CLASSPATH", "PYTHONHOME", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "TERM",
    "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "PAGER", "GIT_PAGER", "LANG", "LC_ALL",
    "JAVA_HOME", "GOROOT", "VIRTUAL_ENV",
})
# Wrappers and launchers of one tool: `npx tsc`, `./node_modules/.bin/tsc` and `tsc`, or
# `./mvnw` and `mvn`, run the same binary.
_LAUNCHERS = frozenset({"npx", "bunx", "pnpx"})
_SAME_TOOL = {"mvnw": "mvn", "gradlew": "gradle"}
_ASSIGN = re.compile(r"^(?:export\s+)?([A-Za-z_]\w*)=")


def is_location_env(part: str) -> bool:
    """True for an assignment (``PYTHONPATH=a``, ``export PATH=...``) of a location variable."""
    m = _ASSIGN.match(part)
    return m is not None and m.group(1) in LOCATION_ENV


def split_env(argv: list[str]) -> tuple[list[str], list[str]]:
    """Leading ``VAR=value`` words (and an ``env`` prefix) apart from the command they set."""
    k = 1 if argv[:1] == ["env"] else 0
    start = k
    while k < len(argv) and _ASSIGN.match(argv[k]) and not argv[k].startswith("export"):
        k += 1
    if k == start:
        return [], argv
    return argv[start:k], argv[k:]


def canon_argv(argv: list[str], cwd: str) -> list[str]:
    """One simple command in canonical form (launchers, cosmetic flags and tool names)."""
    if not argv:
        return []
    env, rest_argv = split_env(argv)
    if env and rest_argv:
        kept = sorted(a for a in env if not is_location_env(a))
        return [*kept, *canon_argv(rest_argv, cwd)]
    prog = argv[0].rsplit("/", 1)[-1] if argv[0].startswith("/usr/") else argv[0]
    args = argv[1:]
    if prog in _LAUNCHERS and args and not args[0].startswith("-"):
        prog, args = args[0], args[1:]
    if "/" in prog and (prog.startswith("./") or "node_modules/.bin/" in prog):
        prog = prog.rsplit("/", 1)[-1]
    prog = _SAME_TOOL.get(prog, prog)
    if _PYTHON.match(prog):
        prog = "python"
        if len(args) >= 2 and args[0] == "-m" and args[1] in ("pytest", "unittest", "pip"):
            prog, args = args[1], args[2:]
        args = [a for a in args if a != "-u"]
    if prog in ("timeout",) and args:
        return canon_argv(args[1:], cwd)
    if prog in ("rg", "ag", "ack", "egrep", "fgrep"):
        prog = "grep"
    if prog == "git" and args[:1] == ["grep"]:
        prog, args = "grep", args[1:]
    if prog == "git" and args and (git_cosmetic := git_command(args[0]).cosmetic):
        # `git status --short` and `git status` answer the same question.
        return ["git", args[0], *(a for a in args[1:] if a not in git_cosmetic)]
    row = program(prog)
    cosmetic = row.cosmetic
    flags: list[str] = []
    rest: list[str] = []
    for a in args:
        if a.startswith("-") and len(a) > 1 and not a[1:].isdigit():
            if cosmetic is None:
                continue
            name = a.split("=", 1)[0]
            if name in cosmetic:
                continue
            if not row.getopt:
                rest.append(a)
                continue
            if not a.startswith("--") and a[1:].isalpha():
                flags.extend("-" + c for c in a[1:] if c not in cosmetic)
                continue
            flags.append(a)
        elif is_pathlike(a):
            rest.append(norm_path(a, cwd) or ".")
        else:
            rest.append(" ".join(a.split()))
    if prog in ("ls", "tree") and not rest:
        rest = [cwd or "."]
    if prog == "grep" and len(rest) == 1:
        rest.append(cwd or ".")
    return [prog, *sorted(set(flags)), *rest]


def canonical(command: str) -> str:
    """Canonical text of a shell command (cached per command and session root)."""
    return _canonical(command, SESSION_ROOT.get())


@lru_cache(maxsize=8192)
def _canonical(command: str, _root: str) -> str:
    """Canonical text of a shell command for near-repeat comparison.

    Args:
        command: The command line as the agent sent it.

    Returns:
        Quotes stripped, ``cd`` prefixes folded into relative paths, sandbox roots removed,
        flags sorted (cosmetic ones dropped), pager tails and noise redirections removed.
    """
    parsed = parse(command)
    parts = []
    for seg in parsed.segments:
        if seg.argv[:1] == ["export"] and all(is_location_env(f"export {a}")
                                              for a in seg.argv[1:]):
            continue  # `export JAVA_HOME=...` only says where the tools are
        argv = canon_argv(seg.argv, parsed.cwd)
        if argv:
            red = "".join(f" >{r}" for r in seg.redirects)
            parts.append(" ".join(argv) + red)
    body = " && ".join(parts) if parts else command.strip()
    if parsed.heredoc:
        body += " <<" + " ".join(parsed.heredoc.split())
    return body
