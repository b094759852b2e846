"""The few git calls review and pr need, through the ``git`` executable (no library)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from .errors import OrfError


class GitError(OrfError):
    """A git command failed (message carries git's own stderr)."""


def git(cwd: Path, *args: str, check: bool = True) -> str:
    """Run ``git args`` in ``cwd`` and return stdout; raise ``GitError`` when it fails."""
    if shutil.which("git") is None:
        raise GitError("git is not installed; install it or run without git")
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise GitError(f"git {' '.join(args)} failed: {detail[-1] if detail else proc.returncode}")
    return proc.stdout


def repo_root(path: Path) -> Path | None:
    """The top folder of the git work tree holding ``path``, or None."""
    folder = path if path.is_dir() else path.parent
    while not folder.exists():
        folder = folder.parent
    if shutil.which("git") is None:
        return None
    proc = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=folder,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return None
    return Path(proc.stdout.strip()).resolve()


def status(root: Path, *pathspec: str) -> list[tuple[str, str]]:
    """``(code, path)`` pairs of ``git status`` (paths relative to ``root``, untracked listed)."""
    spec = ["--", *pathspec] if pathspec else []
    out = git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all", *spec)
    entries: list[tuple[str, str]] = []
    parts = out.split("\0")
    i = 0
    while i < len(parts):
        item = parts[i]
        i += 1
        if len(item) < 4:
            continue
        code, path = item[:2], item[3:]
        if code[0] in "RC":
            i += 1  # the rename's source path follows as its own field
        entries.append((code, path))
    return entries


def ignore_state_folder(store: Path) -> Path | None:
    """Add ``.orf/`` to the ``.gitignore`` beside ``store`` when it lies in a git work tree.

    The ledger and lock files live in ``<store's parent>/.orf/``: state of one machine, never
    to commit. Returns the ``.gitignore`` changed, or None (no repository, or already there).
    """
    folder = store.resolve().parent
    if repo_root(folder) is None:
        return None
    ignore = folder / ".gitignore"
    text = ignore.read_text(encoding="utf-8") if ignore.is_file() else ""
    if any(line.strip() in (".orf", ".orf/", "/.orf", "/.orf/") for line in text.splitlines()):
        return None
    from .fsutil import atomic_write

    atomic_write(ignore, text + ("" if not text or text.endswith("\n") else "\n") + ".orf/\n")
    return ignore
