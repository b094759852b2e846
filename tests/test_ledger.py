"""The SQLite ledger: migrations, WAL, sources, LLM call cache, concurrent processes."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pipeline.ledger import MIGRATIONS, Ledger


def tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def test_migrations_are_idempotent(tmp_path: Path) -> None:
    path = tmp_path / ".orf" / "ledger.db"
    with Ledger(path) as ledger:
        assert ledger.schema_version == len(MIGRATIONS)
        ledger.record_source("a.jsonl", size=1, mtime=1.0, content_hash="b2:1", format="codex",
                             status="ok")
    first = tables(path)
    assert {"sources", "llm_calls", "candidates", "batch_jobs"} <= first
    # Reopening runs no migration again and keeps the data.
    with Ledger(path) as ledger:
        assert ledger.schema_version == len(MIGRATIONS)
        record = ledger.source("a.jsonl")
        assert record is not None and record.content_hash == "b2:1"
    assert tables(path) == first


def test_partial_upgrade_applies_only_missing_migrations(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    Ledger(path).close()
    import pipeline.ledger as ledger_module
    extra = "CREATE TABLE probe (x INTEGER)"
    original = list(ledger_module.MIGRATIONS)
    ledger_module.MIGRATIONS.append(extra)
    try:
        with Ledger(path) as ledger:
            assert ledger.schema_version == len(original) + 1
        with Ledger(path) as ledger:
            assert ledger.schema_version == len(original) + 1
        assert "probe" in tables(path)
    finally:
        ledger_module.MIGRATIONS[:] = original


def test_wal_mode(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.db") as ledger:
        assert ledger.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_record_source_replaces(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.db") as ledger:
        assert ledger.source("x") is None
        ledger.record_source("x", size=1, mtime=1.0, content_hash="b2:1", format=None,
                             status="failed", error="binary file")
        ledger.record_source("x", size=2, mtime=2.0, content_hash="b2:2", format="codex",
                             status="ok")
        record = ledger.source("x")
        assert record is not None
        assert (record.size, record.content_hash, record.status, record.error) == \
            (2, "b2:2", "ok", None)


def test_record_call_and_cached_response(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.db") as ledger:
        assert ledger.cached_response("k1") is None
        ledger.record_call(cache_key="k1", model="m", purpose="judge", status="failed",
                           error="429")
        assert ledger.cached_response("k1") is None
        ledger.record_call(cache_key="k1", model="m", purpose="judge", status="ok",
                           response='{"v": 1}', tokens_in=100, tokens_out=10, cost_usd=0.5)
        ledger.record_call(cache_key="k1", model="m", purpose="judge", status="ok",
                           response='{"v": 2}', tokens_in=50, tokens_out=5, cost_usd=0.25)
        ledger.record_call(cache_key="k1", model="m", purpose="judge", status="cached",
                           response='{"v": 2}', tokens_in=999)
        assert ledger.cached_response("k1") == '{"v": 2}'
        assert ledger.cached_response("k2") is None
        totals = ledger.call_totals()
        assert totals == {"calls": 3, "tokens_in": 150, "tokens_out": 15, "cost_usd": 0.75}


WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from pipeline.ledger import Ledger
    path, tag = Path(sys.argv[1]), sys.argv[2]
    with Ledger(path) as ledger:
        for i in range(50):
            ledger.record_call(cache_key=f"{tag}-{i}", model="m", purpose="judge",
                               status="ok", response=tag)
            ledger.record_source(f"{tag}/{i}", size=i, mtime=0.0, content_hash="b2:0",
                                 format=None, status="ok")
""")


def test_two_processes_open_and_write_the_same_fresh_ledger(tmp_path: Path) -> None:
    path = tmp_path / ".orf" / "ledger.db"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), tag],
                              stderr=subprocess.PIPE, text=True) for tag in ("a", "b")]
    errors = [p.communicate(timeout=60)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errors
    with Ledger(path) as ledger:
        assert ledger.schema_version == len(MIGRATIONS)
        count = ledger.db.execute("SELECT COUNT(*) FROM llm_calls").fetchone()[0]
        assert count == 100
        assert ledger.cached_response("a-49") == "a" and ledger.cached_response("b-0") == "b"
        assert ledger.db.execute("SELECT COUNT(*) FROM sources").fetchone()[0] == 100


def test_a_file_that_is_not_a_database_gets_a_clear_error(tmp_path: Path) -> None:
    from pipeline.errors import LedgerError

    bogus = tmp_path / "ledger.db"
    bogus.write_text("not sqlite")
    with pytest.raises(LedgerError) as err:
        Ledger(bogus)
    assert str(err.value).startswith(f"{bogus}: cannot use this file as the orf ledger")


def _ledger_at(path: Path, version: int) -> None:
    """A ledger built by an older orf: only the first ``version`` migrations applied."""
    with sqlite3.connect(path) as db:
        for script in MIGRATIONS[:version]:
            db.executescript(script)
        db.execute(f"PRAGMA user_version = {version}")


def test_two_stores_sharing_a_ledger_keep_their_own_processed_state(tmp_path: Path) -> None:
    path = tmp_path / ".orf" / "ledger.db"
    with Ledger(path, store=tmp_path / "a") as a:
        a.record_source("s.jsonl", size=1, mtime=1.0, content_hash="b2:1", format="codex",
                        status="ok")
        a.mark_analyzed("sess-1", "fp-1")
    with Ledger(path, store=tmp_path / "b") as b:
        assert b.source("s.jsonl") is None and b.analyzed_fingerprint("sess-1") is None
        b.record_source("s.jsonl", size=2, mtime=2.0, content_hash="b2:2", format="codex",
                        status="failed", error="x")
    with Ledger(path, store=tmp_path / "a") as a:
        record = a.source("s.jsonl")
        assert record is not None and (record.size, record.status) == (1, "ok")
        assert a.analyzed_fingerprint("sess-1") == "fp-1"


def test_migration_3_hands_the_old_shared_state_to_the_store_that_upgrades(
        tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    _ledger_at(path, 2)
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO sources VALUES ('old.jsonl', 5, 5.0, 'b2:5', 'codex', 'ok',"
                   " NULL, 1, 0, 0, 1.0)")
        db.execute("INSERT INTO analyzed_sessions VALUES ('sess-old', 'fp-old', 1.0)")
    with Ledger(path, store=tmp_path / "experiences") as led:
        assert led.schema_version == len(MIGRATIONS)
        record = led.source("old.jsonl")  # (migration 4 then marks it for one re-read)
        assert record is not None and (record.size, record.format) == (5, "codex")
        assert led.analyzed_fingerprint("sess-old") == "fp-old"
    with Ledger(path, store=tmp_path / "other") as other:
        assert other.source("old.jsonl") is None
