"""One playbook per lesson in the store: harness traps consolidate across sessions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _lesson_helpers import CWD, bash, claude_log, tool

from pipeline.config import load_settings
from pipeline.ledger import Ledger
from pipeline.mine import mine
from pipeline.orf import Store
from pipeline.stages.dedupe import normalized_title

FILES = ["app/settings.py", "app/urls.py", "docs/index.md", "web/vite.config.ts",
         "api/models.py"]


def _not_read_session(logs: Path, n: int, path: str) -> None:
    """Write -> "File has not been read yet" twice, Read, Write again: the Claude Code rule."""
    write = tool("Write", {"file_path": f"{CWD}/{path}", "content": f"v{n}\n"},
                 "File has not been read yet. Read it first before writing to it.", True)
    claude_log(logs / f"s{n}.jsonl", f"5e55{n:04d}-0000-4000-8000-00000000000{n}", [
        bash("git status --short", " M README.md"),
        write, write,
        tool("Read", {"file_path": f"{CWD}/{path}"}, "     1→old\n"),
        tool("Write", {"file_path": f"{CWD}/{path}", "content": f"v{n}\n"},
             f"The file {CWD}/{path} has been updated."),
    ], task=f"Update {path}")


def test_five_sessions_with_one_harness_trap_make_one_playbook(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for n, path in enumerate(FILES):
        _not_read_session(logs, n, path)
    settings = load_settings({"store": tmp_path / "experiences", "ledger": tmp_path / "l.db",
                              "jobs": 1, "backend": "heuristic", "min_wasted_steps": 1})
    out = mine([logs], settings)
    assert out.sessions_selected == len(FILES)
    assert (out.drafts["new"], out.drafts["duplicate"], out.drafts["related"]) == (1, 4, 0)
    store = Store(tmp_path / "experiences")
    [exp] = store.experiences()
    assert exp.title == "Read the existing file, then write"
    sessions = {s["id"] for s in exp.provenance["sessions"]}
    assert sessions == {r["session_id"] for r in out.reinforced} | {out.written[0]["session_id"]}
    assert len(sessions) == len(FILES) and exp.provenance["reinforcements"] == 4
    with Ledger(tmp_path / "l.db") as ledger:
        row = ledger.db.execute("SELECT reinforcements FROM candidates WHERE exp_id = ?",
                                (exp.id,)).fetchone()
    assert row[0] == 4
    # A rerun over the same logs adds nothing: the same sessions are not counted twice.
    again = mine([logs], settings)
    assert again.sessions_unchanged == len(FILES) and len(store.experiences()) == 1


def test_no_two_playbooks_in_the_store_share_a_normalized_title(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for n, path in enumerate(FILES[:2]):
        _not_read_session(logs, n, path)
    claude_log(logs / "other.jsonl", "0e0e0e0e-0000-4000-8000-000000000009", [
        *[bash("pytest -x tests/", "E   ModuleNotFoundError: No module named 'requests'",
               True)] * 3,
        bash("pip install requests", "Successfully installed requests-2.32.3"),
        bash("pytest -x tests/", "3 passed in 0.41s"),
    ])
    settings = load_settings({"store": tmp_path / "experiences", "ledger": tmp_path / "l.db",
                              "jobs": 1, "backend": "heuristic", "min_wasted_steps": 1})
    mine([logs], settings)
    titles = [normalized_title(e.title) for e in Store(tmp_path / "experiences").experiences()]
    assert len(titles) == 2 and len(set(titles)) == len(titles)


def test_a_draft_failing_the_gate_is_dropped_with_the_reason_in_summary_and_ledger(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline.stages import heuristic_draft as draft_mod

    real = draft_mod.draft_from_lesson

    def leaky(*args: Any, **kwargs: Any) -> Any:
        made = real(*args, **kwargs)
        made.trap += "\nSee toolu_01W1hgA2duBWyaDLwZAq498Z for the call."
        return made

    monkeypatch.setattr(draft_mod, "draft_from_lesson", leaky)
    logs = tmp_path / "logs"
    logs.mkdir()
    _not_read_session(logs, 0, FILES[0])
    settings = load_settings({"store": tmp_path / "experiences", "ledger": tmp_path / "l.db",
                              "jobs": 1, "backend": "heuristic", "min_wasted_steps": 1})
    out = mine([logs], settings)
    assert out.drafts["dropped"] == 1 and out.written == []
    assert dict(out.dropped) == {"raw tool-call id": 1}
    with Ledger(tmp_path / "l.db") as ledger:
        rows = ledger.db.execute("SELECT status, reason FROM candidates").fetchall()
    assert [tuple(r) for r in rows] == [("dropped", "raw tool-call id: trap")]
