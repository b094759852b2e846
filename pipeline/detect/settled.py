"""Settled: a command sent again whose answer nothing between could change.

Three questions whose answer depends on less than "any file" (``actions`` state tokens move on
every write, so the identical command after unrelated work is not an ``exact_repeat``):

- ``refused``: a git command refused again with the same error, when the steps between only
  moved the index or history (``git add``, ``commit``, ``push``: ``effects.keeps_tree``) or
  looked. The refusal names the working tree (local changes would be overwritten), which
  bookkeeping leaves as it was (Codex writing its own session log under ``.codex/`` keeps it
  dirty). An edit, a checkout or a stash between is an attempt at the cause: not settled;
- ``install``: an install sent again that printed it changed nothing (``Audited``, ``up to
  date``: ``effects.no_op_install``), with no write of a manifest or lock file and no
  environment change since the same install last ran;
- ``repository``: whether the folder is a git repository (``git rev-parse --git-dir``,
  ``--show-toplevel``, ``--is-inside-work-tree``), asked after a git command already answered
  it: one that worked (yes), or one that failed with "not a git repository" (no; then every
  observing git command asks it again). Only ``git init``/``clone`` change the answer.

After a compaction every earlier answer left the agent's context (the labels' rule book):
asking again is a repeat, not waste.

The rules are the branches of ``detect``, one per question, in the order above; the summary
of each is ``_SUMMARY`` (the repository one is written per finding). The pass is linear (a
dict per question).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..config import DetectSettings
from ..model import Finding, Trajectory
from .actions import infos_for
from .base import register
from .build import brief, make_finding
from .effects import MANIFEST, keeps_tree, no_op_install
from .info import Info, path_from, shape

_REPO_QUESTION = frozenset({"--git-dir", "--show-toplevel", "--is-inside-work-tree"})
"""``git rev-parse`` flags that ask only whether the folder is in a repository."""
# Git commands that answer without a repository: they tell nothing about the folder.
_NO_REPO_NEEDED = frozenset({"", "help", "version", "clone", "init", "ls-remote"})
_GLOBAL_CONFIG = frozenset({"--global", "--system", "--file", "-f"})
_NOT_A_REPO = re.compile(r"not a git repository", re.I)
_MAKES_REPO = re.compile(r"\bgit\s+(init|clone)\b|\brm\s+-\w*r\w*\s+\S*\.git\b")


def _looks(info: Info) -> bool:
    return info.state_after == info.state


def repo_question(info: Info) -> tuple[str, bool] | None:
    """``(folder, asks only that)`` for a git command that needs a repository, else None.

    The folder is where git looks: the session's, a leading ``cd x &&``, or ``git -C x``
    (``--git-dir``/``--work-tree`` name another place: None). ``git --version``, ``help``,
    ``clone``, ``ls-remote`` and ``config --global`` work anywhere, so they answer nothing.
    """
    argv = next((g.argv for g in info.segments() if g.argv[0] == "git"), None)
    if argv is None:
        return None
    folder, k = info.cwd, 1
    while k < len(argv) and argv[k].startswith("-"):
        if argv[k] in ("--git-dir", "--work-tree") or argv[k].startswith(("--git-dir=",
                                                                             "--work-tree=")):
            return None
        if argv[k] in ("-C", "-c") and k + 1 < len(argv):
            if argv[k] == "-C":
                folder = path_from(argv[k + 1], folder)
            k += 1
        elif argv[k] in ("--version", "--help", "-h"):
            return None
        k += 1
    sub = argv[k] if k < len(argv) else ""
    rest = argv[k + 1:]
    if sub in _NO_REPO_NEEDED or (sub == "config" and _GLOBAL_CONFIG & set(rest)):
        return None
    asks = sub == "rev-parse" and bool(rest) and all(a in _REPO_QUESTION for a in rest)
    return folder, asks


@register("settled")
def detect(traj: Trajectory, settings: DetectSettings) -> Iterator[Finding]:
    """Commands asked again whose answer only bookkeeping or unrelated writes came between."""
    infos = infos_for(traj)
    steps = traj.steps
    # Counters of changes each question depends on; a question remembers them when asked.
    tree = 0       # a change of the working tree other than git bookkeeping
    setup = 0      # a manifest or lock written, another install, an environment change
    repo = 0       # a repository made or removed
    refused: dict[str, tuple[int, str | None, int]] = {}
    installs: dict[str, tuple[int, int]] = {}
    # Folder -> (step, is a repository, repo count): `git -C lib` asks about another folder.
    answered_repo: dict[str, tuple[int, bool, int]] = {}
    chains: dict[str, dict[int, list[int]]] = {"refused": {}, "install": {}, "repository": {}}

    def link(kind: str, j: int, i: int) -> None:
        chain = chains[kind].pop(j, [j])
        chain.append(i)
        chains[kind][i] = chain

    for i, (step, info) in enumerate(zip(steps, infos, strict=True)):
        if step.kind == "compaction":
            # The answers left the agent's context: asking again is a repeat, not waste.
            refused.clear()
            installs.clear()
            answered_repo.clear()
        if step.kind != "tool" or info.cls == "none":
            continue
        git = info.shell and info.canon.startswith("git ")
        if git and info.failed and info.cls == "vcs":
            before = refused.get(info.canon)
            if before is not None and before[1] == step.error_signature and before[2] == tree:
                link("refused", before[0], i)
            refused[info.canon] = (i, step.error_signature, tree)
        elif info.cls == "install" and info.extra.get("only_install"):
            last = installs.get(info.canon)
            if last is not None and last[1] == setup and no_op_install(step, info):
                link("install", last[0], i)
        asked = repo_question(info) if git and info.cls in ("inspect", "vcs") and (
            not _MAKES_REPO.search(info.command)) else None
        if asked is not None:
            folder, question = asked
            known = answered_repo.get(folder)
            if known is not None and known[2] == repo and (
                    question or (not known[1] and info.cls == "inspect")):
                # No repository: every observing git command asks again; a repository: only
                # the question itself.
                link("repository", known[0], i)
            no = info.failed and bool(_NOT_A_REPO.search(step.output[:300]))
            if no or not info.failed:
                answered_repo[folder] = (i, not no, repo)
        # What this step changed, for the questions after it.
        if _MAKES_REPO.search(info.command):
            repo += 1
        if info.env_change or (info.cls == "install" and (
                not info.extra.get("only_install") or not no_op_install(step, info))) or any(
                    MANIFEST.search(p) for p in (*info.writes, *info.paths)
                    if info.cls in ("write", "edit")) or info.extra.get("script_unknown"):
            setup += 1
        if info.cls == "install" and info.extra.get("only_install"):
            installs[info.canon] = (i, setup)
        if not _looks(info) and not keeps_tree(step, info) and info.cls != "install":
            tree += 1
    for kind, found in chains.items():
        for chain in sorted(found.values(), key=lambda c: c[0]):
            yield _finding(traj, infos, kind, chain, settings)


_SUMMARY = {
    "refused": "refused again with the same error: only git bookkeeping came between",
    "install": "run again with no manifest, lock or environment change: it changed nothing",
}
_KIND = {"refused": "exact_repeat", "install": "rerun_unchanged", "repository": "near_repeat"}


def _finding(traj: Trajectory, infos: list[Info], kind: str, chain: list[int],
             settings: DetectSettings) -> Finding:
    first = infos[chain[0]]
    sig = traj.steps[chain[-1]].error_signature if kind == "refused" else None
    if kind == "repository":
        # Name the step that asked again, and the one that had answered.
        summary = (f"`{brief(traj, infos[chain[1]])}` asked whether this is a git repository; "
                   f"`{brief(traj, first, 50)}` at #{chain[0]} had already shown it "
                   f"{'is not' if first.failed else 'is'}, and nothing since made or removed "
                   f"one ({len(chain) - 1}x)")
    elif kind == "install":
        # What it printed is the evidence that it changed nothing (`Audited 21 packages`).
        said = traj.steps[chain[-1]].output.strip().splitlines()[-1:] or [""]
        summary = (f"`{brief(traj, first)}` {_SUMMARY[kind]} (it printed `{said[0].strip()[:60]}`)"
                   f" ({len(chain) - 1}x)")
    else:
        summary = f"`{first.label[:80]}` {_SUMMARY[kind]} ({len(chain) - 1}x)"
    return make_finding(
        _KIND[kind], traj, infos, chain, chain[1:], settings,
        shape={"cls": first.cls, "action": shape(first), "settled": kind, "error": sig},
        summary=summary,
        confidence=0.75, error_signature=sig,
    )
