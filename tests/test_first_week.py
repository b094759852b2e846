"""A team's first week: `orf init` keeps orf's state out of git, files others can read."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from _agents_helpers import run_cli
from _mine_helpers import git, init_repo

from pipeline.fsutil import atomic_write


def test_init_in_a_repository_ignores_the_state_folder_once(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    init_repo(repo)
    (repo / ".gitignore").write_text("node_modules/")
    code, out, _ = run_cli("init", repo / "experiences")
    assert code == 0
    assert out.splitlines()[1] == (f"Added .orf/ (orf's ledger and locks, never to commit) to "
                                   f"{(repo / '.gitignore').resolve()}")
    assert (repo / ".gitignore").read_text() == "node_modules/\n.orf/\n"
    (repo / ".orf").mkdir(exist_ok=True)
    (repo / ".orf" / "ledger.db").write_text("x")
    assert ".orf" not in git(repo, "status", "--porcelain", "--untracked-files=all")
    run_cli("init", repo / "other")  # another store beside it: nothing added twice
    assert (repo / ".gitignore").read_text() == "node_modules/\n.orf/\n"


def test_init_outside_a_repository_writes_no_gitignore(tmp_path: Path) -> None:
    code, out, _ = run_cli("init", tmp_path / "experiences")
    assert code == 0 and out.count("\n") == 1 and not (tmp_path / ".gitignore").exists()


def test_written_files_get_the_mode_of_any_new_file(tmp_path: Path) -> None:
    """Not mkstemp's 0600: an HTML page or a playbook is for others to read too."""
    from pipeline import fsutil

    atomic_write(tmp_path / "page.html", "<html></html>")
    assert stat.S_IMODE((tmp_path / "page.html").stat().st_mode) == 0o666 & ~fsutil._UMASK
    os.chmod(tmp_path / "page.html", 0o640)
    atomic_write(tmp_path / "page.html", "<html>again</html>")
    assert stat.S_IMODE((tmp_path / "page.html").stat().st_mode) == 0o640  # kept


def test_config_reads_without_rst_markup(tmp_path: Path) -> None:
    code, out, _ = run_cli("config")
    assert code == 0 and "``" not in out
    assert "`gemini`, `openai-compatible` or `heuristic`" in out


def test_analyze_reports_a_bad_line_and_exits_as_mine_does(tmp_path: Path) -> None:
    """One unreadable line is reported and skipped (exit 0, as `orf mine`); a file that cannot
    be read at all makes the run partial (exit 3)."""
    from conftest import FIXTURES

    good = (FIXTURES / "claude-code" / "-home-dev-shop"
            / "5f0c3a1e-2b7d-4c1e-9a44-0d6f1b2c3e4f.jsonl")
    lines = good.read_text(encoding="utf-8").splitlines(keepends=True)
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.jsonl").write_text("".join(lines), encoding="utf-8")
    (logs / "b.jsonl").write_text("".join([*lines[:3], '{"broken json\n', *lines[3:]]),
                                  encoding="utf-8")
    code, _, err = run_cli("analyze", logs)
    assert code == 0
    assert f"warning: {logs / 'b.jsonl'}:4: invalid JSON" in err
    (logs / "c.jsonl").write_bytes(b"\x00\x01\x02 not a log")
    code, _, err = run_cli("analyze", logs, "--format", "claude-code")
    assert code == 3 and f"failed: {logs / 'c.jsonl'}" in err


def test_the_text_report_fits_columns_and_cites_steps_one_way(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from conftest import FIXTURES

    from pipeline.provenance import steps_label
    from pipeline.report.terminal import PIPE_WIDTH, report_width

    assert steps_label([32, 5, 6, 7, 9], "#") == "#5-7,#9,#32"
    log = FIXTURES / "claude-code" / "-home-dev-shop" / "5f0c3a1e-2b7d-4c1e-9a44-0d6f1b2c3e4f.jsonl"
    monkeypatch.setenv("COLUMNS", "90")
    assert report_width() == 90
    code, narrow, _ = run_cli("analyze", log)
    verdict = next(ln for ln in narrow.splitlines() if ln.startswith("  verdict:"))
    assert code == 0 and len(verdict) == 90 and verdict.endswith("…")
    assert "    rerun_unchanged  #1,#4-5 " in narrow
    assert "step #" in narrow and "toolu_" not in narrow
    monkeypatch.setenv("COLUMNS", "400")
    _, wide, _ = run_cli("analyze", log)
    verdict = next(ln for ln in wide.splitlines() if ln.startswith("  verdict:"))
    assert verdict.endswith("'pytest tests/test_prices.py -x')")  # whole, not cut
    monkeypatch.delenv("COLUMNS")
    assert report_width() == PIPE_WIDTH  # a pipe (pytest captures stdout)


def test_a_written_playbook_leads_with_its_lesson(tmp_path: Path) -> None:
    """Provenance is compact (a session per line, no null keys): the lesson starts within
    45 lines, and the file reads back to the same provenance."""
    import yaml
    from conftest import FIXTURES

    from pipeline.orf import Store

    store = tmp_path / "experiences"
    run_cli("init", store)
    code, _, err = run_cli("mine", FIXTURES, "--backend", "heuristic", "--store", store,
                           "--ledger", tmp_path / "l.db")
    assert code == 0, err
    written = sorted(store.glob("*/EXP-*.md"))
    assert written
    for path in written:
        lines = path.read_text(encoding="utf-8").splitlines()
        objective = lines.index("## 1. Objective")
        assert objective <= 45, (path.name, objective)
        front = yaml.safe_load("\n".join(lines[1:lines.index("---", 1)]))
        sessions = [ln for ln in lines[:objective] if ln.startswith("    - {id: ")]
        assert len(sessions) == len(front["provenance"]["sessions"]) >= 1
        assert None not in front["provenance"].values()
    exp = Store(store).experiences()[0]
    assert exp.provenance and exp.provenance["sessions"][0]["id"]
