"""``orf pr``: put the candidate playbooks on a git branch as one commit and write a PR body.

Refuses when the work tree has changes outside the store (they would either ride along or be
lost), never pushes without ``push=True``, and opens the PR with ``gh`` only when asked.
The body goes through ``redact`` because it leaves the machine.
"""

from __future__ import annotations

import datetime
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import gitutil
from .errors import OrfError
from .ledger import Ledger
from .privacy import redact
from .review import Candidate, evidence_line, list_candidates


class PrError(OrfError):
    """``orf pr`` cannot proceed (no repo, dirty tree, nothing to propose)."""


@dataclass
class PrResult:
    """What ``make_pr`` did."""

    branch: str
    commit: str
    candidates: list[Candidate]
    body: str
    files: list[str] = field(default_factory=list)
    """Paths committed, relative to the repository root."""
    pushed: bool = False
    pr_url: str | None = None
    message: str = ""
    """Next step for the user (e.g. how to open the PR without gh)."""


def pr_title(cands: list[Candidate]) -> str:
    """One-line PR/commit title."""
    if len(cands) == 1:
        return f"Add ORF playbook: {cands[0].title}"
    return f"Add {len(cands)} ORF playbooks from mined agent sessions"


def pr_body(cands: list[Candidate]) -> str:
    """Markdown PR body: per candidate title, trap, insight, sources and steps saved."""
    total = sum(c.wasted_steps for c in cands)
    lines = [
        "## New ORF playbooks",
        "",
        f"{len(cands)} candidate playbook(s) mined from agent session logs by `orf mine`; "
        f"together they would have saved {total} wasted step(s) in the sessions they came from.",
        "",
    ]
    for c in cands:
        lines += [f"### {c.title} (`{c.exp_id}`)", "", f"File: `{c.path}`", ""]
        lines += ["**Trap.** " + c.trap.strip(), "", "**Insight.** " + c.insight.strip(), ""]
        lines.append("**Evidence:**")
        for s in c.sessions:
            steps = f", steps {s['steps']}" if s.get("steps") else ""
            wasted = f", {s['wasted_steps']} wasted" if s.get("wasted_steps") is not None else ""
            lines.append(f"- session `{s.get('id')}`{steps}{wasted}")
        lines.append(f"- wasted steps it would have saved: {c.wasted_steps}")
        if c.evidence:
            lines.append(f"- evidence weight: {evidence_line(c)} in the mined history")
        if c.replaces:
            lines.append(f"- consolidates ({c.consolidation or 'overlap'}): "
                         + ", ".join(f"`{r}`" for r in c.replaces)
                         + " — delete them in this PR if this one is kept")
        if c.reinforcements:
            lines.append(f"- the same trap was seen again in {c.reinforcements} session(s)")
        if c.verdict:
            lines.append(f"- verdict: {c.verdict}")
        if c.related_to:
            lines.append(f"- related to `{c.related_to}`")
        lines.append("")
    lines.append("Review each playbook; reject one with `orf review --reject EXP-ID`.")
    return redact("\n".join(lines) + "\n")


def make_pr(
    store: Any,
    ledger: Ledger | None,
    *,
    branch: str | None = None,
    push: bool = False,
    open_pr: bool = False,
    remote: str = "origin",
    base: str | None = None,
    ignore: Sequence[Path] = (),
) -> PrResult:
    """Commit the store's uncommitted candidates on a new branch; optionally push and open a PR.

    Args:
        store: The ``pipeline.orf.Store``.
        ledger: The ledger (for reinforcement counts), or None.
        branch: Branch name (default ``orf/playbooks-YYYYMMDD-HHMMSS``).
        push: Push the branch to ``remote``.
        open_pr: Run ``gh pr create`` (needs ``gh``; implies nothing about pushing).
        remote: Remote to push to.
        base: Base branch for the PR (gh's default when None).
        ignore: Files whose changes do not count as a dirty tree (the ledger: its folder
            when it is ``.orf``, else the database and its ``-wal``/``-shm`` files).

    Raises:
        PrError: Not a git repo, dirty tree outside the store, or no candidates.
    """
    root = Path(store.root).resolve()
    repo = gitutil.repo_root(root)
    if repo is None:
        raise PrError(f"{root} is not inside a git repository; `orf pr` commits to git "
                      "(run `git init` there, or commit the files yourself)")
    store_rel = root.relative_to(repo).as_posix()
    prefix = "" if store_rel == "." else store_rel + "/"
    skip = _ignored(repo, ignore)
    dirty = [p for _, p in gitutil.status(repo)
             if prefix and not p.startswith(prefix) and not any(p.startswith(s) for s in skip)]
    if dirty:
        shown = ", ".join(dirty[:5]) + (" ..." if len(dirty) > 5 else "")
        raise PrError(f"the work tree has changes outside the store ({shown}); commit or "
                      "stash them first so the PR holds only playbooks")
    cands = list_candidates(store, ledger)
    if not cands:
        raise PrError(f"no uncommitted candidate playbooks in {root}; run `orf mine` first")
    body = pr_body(cands)
    title = pr_title(cands)
    changed = [p for _, p in gitutil.status(repo, store_rel)]
    name = branch or "orf/playbooks-" + datetime.datetime.now(
        datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    gitutil.git(repo, "checkout", "-b", name)
    gitutil.git(repo, "add", "-A", "--", store_rel)
    ident: list[str] = []
    if not gitutil.git(repo, "config", "user.email", check=False).strip():
        # CI runners often have no identity; commit as the tool rather than fail.
        ident = ["-c", "user.name=orf", "-c", "user.email=orf@localhost"]
    gitutil.git(repo, *ident, "commit", "-q", "-m", title, "-m",
                "Candidates mined by `orf mine`; see the PR body for the evidence.")
    commit = gitutil.git(repo, "rev-parse", "HEAD").strip()
    result = PrResult(name, commit, cands, body, files=changed)
    if push:
        gitutil.git(repo, "push", "-u", remote, name)
        result.pushed = True
    if open_pr:
        result.pr_url, result.message = _open(repo, name, title, body, base, pushed=push)
    elif not push:
        result.message = (f"Branch {name} created locally (not pushed). Next: "
                          f"git push -u {remote} {name} && gh pr create --head {name}")
    return result


def _ignored(repo: Path, paths: Sequence[Path]) -> list[str]:
    out: list[str] = []
    for p in paths:
        try:
            rel = p.resolve().relative_to(repo).as_posix()
        except ValueError:
            continue
        if p.parent.name == ".orf":
            out.append(p.resolve().parent.relative_to(repo).as_posix() + "/")
        out.append(rel)
    return out


def _open(repo: Path, branch: str, title: str, body: str, base: str | None,
          *, pushed: bool) -> tuple[str | None, str]:
    if shutil.which("gh") is None:
        return None, ("gh (GitHub CLI) is not installed: install it from https://cli.github.com"
                      f" or open the PR in the web UI for branch {branch}"
                      + ("" if pushed else " after `git push -u origin " + branch + "`"))
    args = ["gh", "pr", "create", "--head", branch, "--title", title, "--body", body]
    if base:
        args += ["--base", base]
    proc = subprocess.run(args, cwd=repo, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        hint = "" if pushed else " (the branch is not pushed: rerun with --push)"
        raise PrError(f"gh pr create failed: {proc.stderr.strip() or proc.returncode}{hint}")
    return proc.stdout.strip() or None, "PR opened"
