"""Real-shaped Claude Code logs dated on chosen days, and a git repository with a store."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import uuid
from pathlib import Path
from typing import Any

import orjson
from click.testing import CliRunner

from pipeline.cli import main

MONDAY = datetime.date(2026, 1, 5)
"""Week 1 of the trends scenarios starts here."""


def day(week: int, weekday: int = 0) -> datetime.date:
    """The ``weekday`` (0 = Monday) of scenario week ``week`` (1-based)."""
    return MONDAY + datetime.timedelta(weeks=week - 1, days=weekday)


def session_log(sid: str, when: datetime.date, fails: int, hour: int = 10,
                cwd: str = "/home/dev/shop",
                error: str = "ModuleNotFoundError: No module named 'requests'") -> str:
    """A Claude Code session on ``when``: ``pytest -x tests/`` fails ``fails`` times, then a fix.

    With ``fails`` 0 the agent installs the dependency first and the tests pass: no trap.
    """
    lines: list[dict[str, Any]] = []
    start = datetime.datetime(when.year, when.month, when.day, hour,
                              tzinfo=datetime.timezone.utc)

    def rec(**kw: Any) -> None:
        moment = start + datetime.timedelta(seconds=20 * len(lines))
        lines.append({"isSidechain": False, "userType": "external", "cwd": cwd,
                      "sessionId": sid, "version": "2.0.14",
                      "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{sid}/{len(lines)}")),
                      "timestamp": moment.strftime("%Y-%m-%dT%H:%M:%S.000Z"), **kw})

    rec(type="user", message={"role": "user", "content": "Make the tests pass"})
    calls = [("pytest -x tests/", error, True)] \
        * fails + [("pip install requests", "Successfully installed requests-2.32.3", False),
                   ("pytest -x tests/", "3 passed in 0.41s", False)]
    for i, (cmd, out, err) in enumerate(calls):
        tid = f"toolu_{sid[:6]}_{i:02d}"
        rec(type="assistant", message={
            "id": f"msg_{sid[:6]}_{i:02d}", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": tid, "name": "Bash",
                         "input": {"command": cmd}}],
            "usage": {"input_tokens": 1000, "output_tokens": 40}})
        rec(type="user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tid,
             "content": f"Exit code 1\n{out}" if err else out, "is_error": err}]})
    return "\n".join(json.dumps(x) for x in lines) + "\n"


def write_batch(folder: Path, sessions: list[tuple[datetime.date, int]], tag: str) -> None:
    """One log file per ``(day, fails)`` in ``folder``, ids derived from ``tag``."""
    folder.mkdir(parents=True, exist_ok=True)
    for n, (when, fails) in enumerate(sessions):
        sid = str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{tag}-{n}"))
        (folder / f"{tag}-{n:02d}.jsonl").write_text(session_log(sid, when, fails))


def git(repo: Path, *args: str, when: datetime.date | None = None) -> str:
    """Run git in ``repo``; ``when`` dates the commit (author and committer) at noon UTC."""
    env = dict(os.environ)
    if when is not None:
        stamp = f"{when.isoformat()}T12:00:00+00:00"
        env.update(GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True, env=env).stdout


def init_repo(repo: Path) -> None:
    """An empty repository with one first commit."""
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "Dev")
    (repo / "README.md").write_text("team repo\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "-m", "init", when=day(1))


BATCH_1 = [(day(1, d), 3 if d % 2 == 0 else 0) for d in range(5)] + \
    [(day(2, d), 3 if d < 3 else 0) for d in range(5)]
"""Weeks 1-2: ten sessions, six of them rerun a failing `pytest` three times (the trap)."""
BATCH_2 = [(day(w, d), 3 if (w, d) == (5, 2) else 0) for w in (4, 5, 6) for d in range(4)]
"""Weeks 4-6: twelve sessions, one hits the trap."""


def orf(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def scenario(tmp_path: Path, second: list[tuple[datetime.date, int]]) -> tuple[Path, Path]:
    """Mine weeks 1-2, commit the playbook in week 3, mine ``second``; return store, ledger."""
    repo = tmp_path / "repo"
    init_repo(repo)
    store, ledger = repo / "experiences", tmp_path / "ledger.db"
    orf("init", "--store", str(store))
    git(repo, "add", "experiences")
    git(repo, "commit", "-q", "-m", "empty store", when=day(1))
    write_batch(tmp_path / "logs-1", BATCH_1, "weeks-1-2")
    mined = orjson.loads(orf("mine", str(tmp_path / "logs-1"), "--store", str(store),
                              "--ledger", str(ledger), "--backend", "heuristic", "--json"))
    assert (mined["drafts"]["new"], mined["drafts"]["duplicate"]) == (1, 5)
    git(repo, "add", "experiences")
    git(repo, "commit", "-q", "-m", "playbook: install missing test dependencies", when=day(3))
    write_batch(tmp_path / "logs-2", second, "later")
    orf("mine", str(tmp_path / "logs-2"), "--store", str(store), "--ledger", str(ledger),
         "--backend", "heuristic", "--json")
    return store, ledger
