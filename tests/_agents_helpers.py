"""Shared builders for the search, hook, MCP and skill tests: a small store with two traps."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from pipeline.orf import Experience, Store

DAY = datetime.date(2026, 5, 2)
ORF_SCRIPT = Path(sys.executable).parent / "orf"
"""The installed console script (pipeline.entry:main), as a client would run it."""

MODULE_ERROR = "ModuleNotFoundError: No module named 'requests'"
EDIT_ERROR = "String to replace not found in file."


def build_store(root: Path) -> dict[str, Experience]:
    """A store with a missing-module trap, an edit trap and a reading playbook without error."""
    store = Store(root)
    store.init()
    made = {}
    made["module"] = store.create_experience(
        domain="python-tooling", title="Install the missing module before rerunning pytest",
        description=f"Trigger when `pytest` fails with ModuleNotFoundError (`{MODULE_ERROR}`) "
                    "and the next move would be to run it again unchanged.",
        keywords=["pytest", "modulenotfounderror", "rerun"], complexity="low",
        objective="Get the test suite to collect.",
        trap=f"The agent reran `pytest -x tests/` 4 times; each failed with `{MODULE_ERROR}`.",
        insight="An import error is an environment problem; rerunning cannot fix it.",
        validated_path="1. pip install requests\n2. pytest -x tests/",
        checklist=["The module imports"], created_at=DAY,
        provenance={"sessions": [{"id": "sess-a", "path": "a.jsonl"}], "signature": "b2:aa"})
    made["edit"] = store.create_experience(
        domain="agent-loops", title="Re-read the file before retrying a failed edit",
        description=f"Trigger when an Edit fails with `{EDIT_ERROR}` because the old text "
                    "does not match the file any more.",
        keywords=["edit", "old_string", "stale"], complexity="low",
        objective="Change a file with the Edit tool.",
        trap="The agent retried the same Edit with an old_string copied from memory.",
        insight="Edit against what the file says now, not what you remember.",
        validated_path="1. Read the lines around the change.\n2. Copy old_string from them.",
        checklist=["old_string was copied from a fresh read"], created_at=DAY)
    made["reading"] = store.create_experience(
        domain="agent-loops", title="Keep notes instead of re-reading a file",
        description="Trigger when you are about to open a file you already read this session.",
        keywords=["reread", "notes"], complexity="low", objective="Understand a module.",
        trap="The agent read the same file five times.", insight="Write down what you learnt.",
        validated_path="1. Summarise the file once.", checklist=["No second read"],
        created_at=DAY)
    return made


def run_cli(*args: str | Path) -> tuple[int, str, str]:
    from pipeline.cli import main

    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def run_script(args: list[str], stdin: str = "", cwd: Path | None = None
               ) -> subprocess.CompletedProcess[str]:
    """Run the real ``orf`` console script with the test's environment."""
    return subprocess.run([str(ORF_SCRIPT), *args], input=stdin, capture_output=True,
                          text=True, cwd=cwd, env=dict(os.environ), timeout=120)
