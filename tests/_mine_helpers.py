"""Shared builders for the mine/dedupe/review/pr tests."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.model import Draft

TRAP = ("pytest -x failed 4 times with ModuleNotFoundError: No module named 'requests' "
        "because the dependency was never installed in the virtualenv.")


def make_draft(signature: str = "b2:sig-one", **changes: Any) -> Draft:
    base: dict[str, Any] = dict(
        title="Install missing test dependencies before rerunning pytest",
        description="Use when pytest fails at import time with ModuleNotFoundError for a "
                    "third-party package.",
        domain="python-testing",
        keywords=["pytest", "modulenotfounderror", "dependencies"],
        complexity="low",
        objective="Get the test suite to run when collection fails on a missing module.",
        trap=TRAP,
        insight="An import error at collection time is an environment problem; rerunning the "
                "same command cannot fix it.",
        validated_path="pip install requests\npytest -x tests/",
        checklist=["The missing package is installed", "pytest collects without errors"],
        domain_title="Python Testing",
        domain_description="Running and fixing Python test suites.",
        provenance={"signature": signature, "sessions": ["sess-1"], "wasted_steps": 3},
    )
    base.update(changes)
    return Draft(**base)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout


def init_repo(repo: Path) -> None:
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "Dev")
    (repo / "README.md").write_text("demo\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "-m", "init")


def claude_session(sid: str, n_fail: int, cwd: str = "/home/dev/delta") -> str:
    """A Claude Code session: `pytest -x tests/` fails ``n_fail`` times, then a fix."""
    import json

    lines: list[dict[str, Any]] = []

    def rec(**kw: Any) -> None:
        n = len(lines) + 1
        lines.append({"isSidechain": False, "userType": "external", "cwd": cwd,
                      "sessionId": sid, "version": "2.0.14", "uuid": f"{sid[:8]}-u{n:03d}",
                      "timestamp": f"2026-05-09T10:{n:02d}:00.000Z", **kw})

    rec(type="user", message={"role": "user", "content": "Make the tests pass"})
    calls = [("pytest -x tests/", "ModuleNotFoundError: No module named 'requests'", True)] \
        * n_fail + [("pip install requests", "Successfully installed requests-2.32.3", False),
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


def interrupt_mine(logs: Path, store: Path, env: dict[str, str],
                   ready: Callable[[str], bool]) -> tuple[int, float, str]:
    """``orf mine`` in a subprocess, sent SIGINT at the first stderr line ``ready`` accepts.

    Returns its exit code, the seconds from the signal to its exit, and the rest of stderr.
    """
    cmd = [sys.executable, "-m", "pipeline", "mine", str(logs), "--store", str(store),
           "--backend", "heuristic", "--jobs", "2"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stderr is not None
    for line in proc.stderr:
        if ready(line):
            break
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    code = proc.wait(timeout=30)
    return code, time.monotonic() - sent, proc.stderr.read()
