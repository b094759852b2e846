"""The SQLite ledger: migrations, WAL, sources, LLM call cache, concurrent processes."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pipeline.ledger import MIGRATIONS, Ledger, Migration


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


def _probe(db: sqlite3.Connection, scope: str) -> None:
    db.execute("CREATE TABLE probe (x INTEGER)")


def _spied(monkeypatch: pytest.MonkeyPatch, extra: list[Migration]) -> list[str]:
    """Replace ``MIGRATIONS`` by spies of the real ones plus ``extra``; return the run log."""
    ran: list[str] = []

    def spy(step: Migration) -> Migration:
        def run(db: sqlite3.Connection, scope: str) -> None:
            ran.append(step.__name__)
            step(db, scope)
        run.__name__ = step.__name__
        return run

    monkeypatch.setattr("pipeline.ledger.MIGRATIONS", [spy(m) for m in [*MIGRATIONS, *extra]])
    return ran


def test_partial_upgrade_applies_only_missing_migrations(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "ledger.db"
    Ledger(path).close()
    ran = _spied(monkeypatch, [_probe])
    with Ledger(path) as ledger:
        assert ledger.schema_version == len(MIGRATIONS) + 1
        assert ledger.applied_migrations() == [m.__name__ for m in MIGRATIONS] + ["_probe"]
    with Ledger(path) as ledger:
        assert ledger.schema_version == len(MIGRATIONS) + 1
    assert ran == ["_probe"]
    assert "probe" in tables(path)
    # user_version follows, so an orf from before named migrations migrates nothing here.
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) + 1


def test_migrations_are_recorded_by_name() -> None:
    names = [m.__name__ for m in MIGRATIONS]
    assert names == ["m001_initial", "m002_write_intents_and_reinforcements",
                     "m003_per_store_state", "m004_session_history", "m005_draft_retries",
                     "m006_finding_summary"]


OLD_LEDGER = Path(__file__).parent / "data" / "ledger-v4.sql"


def test_a_ledger_of_the_numbered_migrations_opens_unchanged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ledger written by the orf that numbered its migrations (user_version 4, no names)."""
    store = tmp_path / "experiences"
    path = tmp_path / "ledger.db"
    with sqlite3.connect(path) as db:
        db.executescript(OLD_LEDGER.read_text().replace("@STORE@", str(store.resolve())))
        db.execute("PRAGMA user_version = 4")
    assert "_migrations" not in tables(path)
    ran = _spied(monkeypatch, [_probe])
    with Ledger(path, store=store) as led:
        assert led.applied_migrations() == [m.__name__ for m in MIGRATIONS] + ["_probe"]
        record = led.source("logs/a.jsonl")
        assert record is not None and (record.size, record.content_hash, record.format) == \
            (10, "b2:aa", "codex")
        assert led.analyzed_fingerprint("sess-a") == "fp-a"
        assert led.cached_response("k1") == '{"outcome": "trap"}'
        row = led.candidate_by_signature("b2:sig")
        assert row is not None and (row["exp_id"], row["title"]) == ("EXP-20260101-0001",
                                                                     "Old title")
        assert led.reinforcement_count("EXP-20260101-0001") == (1, 2.0)
        job = led.open_batch_job("gemini-2.5-flash")
        assert job is not None and job["name"] == "batches/1"
        assert [s[0] for s in led.history_sessions()] == ["sess-a"]
        assert led.signature_evidence(["b2:sig"]) == (1, 2, 300)
    # the four numbered ones were recognised, not run again; the named ones since are run
    assert ran == ["m005_draft_retries", "m006_finding_summary", "_probe"]


def test_a_ledger_at_numbered_version_2_gets_the_later_migrations_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "ledger.db"
    _ledger_at(path, 2)
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO write_intents VALUES ('k', 'sig', 's', '{}', 'done', 'EXP-1',"
                   " 1.0, 1.0)")
    ran = _spied(monkeypatch, [])
    with Ledger(path) as led:
        assert led.schema_version == len(MIGRATIONS)
        assert led.done_intent("k") == "EXP-1"
    assert ran == ["m003_per_store_state", "m004_session_history", "m005_draft_retries",
                   "m006_finding_summary"]


def test_transaction_rolls_back_on_error_and_nests(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.db") as led:
        with pytest.raises(RuntimeError, match="boom"):
            with led.transaction():
                led.mark_analyzed("s1", "fp")
                with led.transaction():  # joins the outer one
                    led.mark_analyzed("s2", "fp")
                raise RuntimeError("boom")
        assert led.analyzed_fingerprint("s1") is None
        assert led.analyzed_fingerprint("s2") is None
        assert not led.db.in_transaction
        with led.transaction():
            led.mark_analyzed("s3", "fp")
        assert led.analyzed_fingerprint("s3") == "fp"


def test_write_intents_and_reinforcements(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.db") as led:
        led.record_intent("k1", "sig", "sess", {"draft": {"title": "T"}})
        led.record_intent("k2", "sig", None, {"n": 2})
        assert [(i.key, i.session_id, i.payload) for i in led.pending_intents()] == [
            ("k1", "sess", {"draft": {"title": "T"}}), ("k2", None, {"n": 2})]
        assert led.done_intent("k1") is None
        led.close_intent("k1", "EXP-20260101-0001")
        led.drop_intent("k2")
        assert led.pending_intents() == []
        assert led.done_intent("k1") == "EXP-20260101-0001"
        assert led.add_reinforcement("EXP-1", "s1", "sig", 3) is True
        assert led.add_reinforcement("EXP-1", "s1", "sig", 3) is False
        assert led.add_reinforcement("EXP-1", "s2", "sig", 1) is True
        count, last = led.reinforcement_count("EXP-1")
        assert count == 2 and last is not None
        assert led.reinforcement_count("EXP-2") == (0, None)
        led.record_candidate(signature="sig", status="new", exp_id="EXP-1", domain="d",
                             title="T", sessions=["s0"])
        led.count_reinforcement("EXP-1")
        led.count_reinforcement("EXP-1")
        [(total,)] = led.db.execute(
            "SELECT reinforcements FROM candidates WHERE exp_id = 'EXP-1'").fetchall()
        assert total == 2


def test_candidate_review_methods(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.db") as led:
        led.record_candidate(signature="a", status="new", exp_id="EXP-1", wasted_steps=2)
        led.record_candidate(signature="b", status="related", exp_id="EXP-2")
        led.record_candidate(signature="c", status="duplicate", related_to="EXP-1")
        assert sorted(led.uncommitted_ids()) == ["EXP-1", "EXP-2"]
        assert led.has_candidate("EXP-1") and not led.has_candidate("EXP-9")
        assert led.rejected_wasted("a") is None
        led.reject_candidate("EXP-1", "no", 1)
        assert led.rejected_wasted("a") == 2  # the most wasted steps seen is kept
        assert led.uncommitted_ids() == ["EXP-2"]
        led.record_call(cache_key="k", model="m", purpose="judge", status="cached")
        led.record_call(cache_key="k", model="m", purpose="judge", status="ok", response="r")
        assert led.cache_hits() == 1


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
    """A ledger built by an older orf: only the first ``version`` migrations applied, known by
    number (``PRAGMA user_version``), no ``_migrations`` table."""
    with sqlite3.connect(path) as db:
        for step in MIGRATIONS[:version]:
            step(db, "")
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
