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
from contextvars import Token
from dataclasses import dataclass, field
from typing import Any, cast

from ..model import Step, Trajectory
from . import shell
from .classify import classify
from .effects import (
    BACKUP,
    INSTALL_WRITES,
    keeps_tree,
    no_op_install,
    script_rejected,
    shell_rejected,
)
from .info import Info
from .programs import git_command, program

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


def _shows_history(info: Info) -> bool:
    # Only showing history and refs (`git log -5`, `git branch --show-current`): edits of files
    # leave the answer as it was; only a command that moves history or refs changes it.
    subs: list[str] = info.extra.get("git") or []
    return info.cls == "inspect" and bool(subs) and all(git_command(x).shows_history for x in subs)


def _moves_history(info: Info) -> bool:
    # A checkout of files (`git checkout main -- f.ts`) restores a file, not history.
    subs: list[str] = info.extra.get("git") or []
    return not info.git_restore and any(git_command(x).moves_history for x in subs)


def _token(info: Info, st: _State) -> tuple[Any, ...]:
    # A file written by the shell (`cat > f <<EOF`) is known by what it writes.
    paths = info.paths or (info.writes if info.cls == "write" else ())
    if info.cls == "write":
        # ... and by its folder: a write refused for a missing folder succeeds after `mkdir`.
        paths = (*paths, *(p.rpartition("/")[0] for p in paths if "/" in p))
    if info.cls in ("read", "write", "edit") and paths:
        # An install changes lock files and environments, not the project's other files.
        installs = st.installs if any(INSTALL_WRITES.search(p) for p in paths) else 0
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


def _recopy(info: Info, path: str, st: _State,
            copies: dict[str, tuple[str, int, int]]) -> bool:
    """True when ``cp src path`` changes nothing a later step can meet.

    A backup (``cp x.py x.py.bak``) is a copy no run reads; copying an unchanged ``src``
    over the copy made before writes the same bytes again.
    """
    for src, dst in info.extra.get("copies", ()):
        if dst != path:
            continue
        if dst.startswith(src) and BACKUP.search(dst[len(src):] or "-"):
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
                    "process" in program(info.program).changes) or (shared and relative_cd(info)):
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


_current: tuple[Trajectory, list[Info], Token[str]] | None = None


def infos_for(traj: Trajectory) -> list[Info]:
    """The analysis of ``traj``, shared by all families during one ``detect_all`` call."""
    if _current is not None and _current[0] is traj:
        return _current[1]
    return analyze(traj)


def set_current(traj: Trajectory | None, infos: list[Info] | None = None) -> None:
    """Pin (or clear) the analysis reused by ``infos_for`` (``detect_all`` does this).

    While it is pinned, paths are read against the session's folder, as the classifier read
    them: a family naming a path names it as the step's ``Info`` does.
    """
    global _current
    if _current is not None:
        shell.SESSION_ROOT.reset(_current[2])
        _current = None
    if traj is not None and infos is not None:
        root = shell.SESSION_ROOT.set(shell.session_root_of(traj.extra.get("cwd")))
        _current = (traj, infos, root)
